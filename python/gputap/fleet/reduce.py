"""Cross-rank answers from the per-rank results (docs/fleet.md defines every number).

Input: the dicts worker.analyze_rank() returned.  Output: three pandas tables (ranks, iterations,
collectives) and a summary dict.  Everything here is per rank or per collective in size: the
traces themselves never reach the client.
"""
import re

import numpy as np
import pandas as pd

RANK_COLS = ("span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "overlap_ms", "memop_ms",
             "kernel_sum_ms", "non_compute_ms")
LATE_MIN_MS = 0.05  # a collective whose arrival skew is below this is not "late"
Z_OUTLIER = 3.5     # robust z-score (median and MAD) beyond which a rank is an outlier
REL_OUTLIER = 0.05  # ... and at least this far from the median, relatively


def _rank_number(res, index):
    if res.get("rank") is not None:
        return int(res["rank"])
    for g in res.get("gpus") or []:
        m = re.match(r"rank(\d+)/", g["label"])
        if m:
            return int(m.group(1))
    return None


def _robust(values):
    """median, scale (1.4826 MAD, never 0)."""
    v = np.asarray(values, dtype=float)
    med = float(np.median(v)) if len(v) else 0.0
    mad = float(np.median(np.abs(v - med))) if len(v) else 0.0
    return med, max(1.4826 * mad, 1e-3 * abs(med), 1e-6)


def per_rank_tables(results):
    """ranks and iterations tables (analyzer numbers), collectives rows; ranks that clash are renumbered."""
    rows, irows, crows = [], [], []
    used = set()
    for i, res in enumerate(results):
        r = _rank_number(res, i)
        if r is None or r in used:
            r = max(used | {-1}) + 1 if r is None else r
            while r in used:
                r += 1
        used.add(r)
        res["rank"] = r
        gpus = res["gpus"]
        tot = {k: float(sum(g["total"][k] for g in gpus)) for k in RANK_COLS}
        nit = max((len(g["iterations"]) for g in gpus), default=0)
        dom = res.get("host") or "rank%d" % r  # clock domain: the machine, else the rank itself
        rows.append(dict(rank=r, host=res.get("host") or "", clock=dom, path=res["path"],
                         label=",".join(g["label"] for g in gpus), gpus=len(gpus), iterations=nit,
                         first_ns=min(g["first_ns"] for g in gpus), last_ns=max(g["last_ns"] for g in gpus), **tot))
        for j in range(nit):
            ws = [g["iterations"][j] for g in gpus if j < len(g["iterations"])]
            irows.append(dict(rank=r, iteration=j, start_ns=min(w["start_ns"] for w in ws),
                              **{k: float(sum(w[k] for w in ws)) for k in RANK_COLS}))
        c = res["collectives"]
        n = len(c["seq"])
        if n:
            crows.append(pd.DataFrame({
                "rank": np.full(n, r, dtype=np.int64), "host": dom,
                "comm": c["comm"], "seq": np.asarray(c["seq"], dtype=np.uint64).astype(np.int64),
                "name": c["name"], "algo": c["algo"], "proto": c["proto"],
                "iteration": pd.array([(-1 if x is None else x) for x in c["iteration"]], dtype="int64"),
                "start_ns": np.asarray(c["start_ns"], dtype=np.int64), "end_ns": np.asarray(c["end_ns"], dtype=np.int64),
                "launch_ns": np.asarray(c["launch_ns"], dtype=np.int64), "match": c["match"],
            }))
    ranks = pd.DataFrame(rows, columns=["rank", "host", "clock", "path", "label", "gpus", "iterations", "first_ns", "last_ns",
                                        *RANK_COLS])
    iters = pd.DataFrame(irows, columns=["rank", "iteration", "start_ns", *RANK_COLS])
    colls = pd.concat(crows, ignore_index=True) if crows else pd.DataFrame(
        columns=["rank", "host", "comm", "seq", "name", "algo", "proto", "iteration", "start_ns", "end_ns",
                 "launch_ns", "match"])
    return ranks.sort_values("rank", ignore_index=True), iters.sort_values(["rank", "iteration"], ignore_index=True), colls


def match_collectives(colls):
    """Give every row a (comm, seq) key that is equal on every rank for one collective.

    Rows from NCCL's profiler plugin or the trace's arguments have it.  Rows numbered by order
    (older NCCL, traces that do not say) get the key of the collective at the same position in
    the ranks that have keys; when no rank has keys, the key is the position itself."""
    if colls.empty:
        return colls
    c = colls.copy()
    c["_t"] = np.where(c["launch_ns"] > 0, c["launch_ns"], c["start_ns"])
    c = c.sort_values(["rank", "_t", "seq"], kind="stable")
    c["ordinal"] = c.groupby("rank").cumcount()
    known = c[c["comm"] != ""]
    unknown = c["comm"] == ""
    if unknown.any():
        if len(known):
            ref = (known.groupby(["ordinal", "comm", "seq"]).size().reset_index(name="n")
                   .sort_values(["ordinal", "n"], ascending=[True, False]).drop_duplicates("ordinal"))
            m = c.loc[unknown, ["ordinal"]].merge(ref, on="ordinal", how="left")
            c.loc[unknown, "comm"] = m["comm"].fillna("(order)").to_numpy()
            c.loc[unknown, "seq"] = np.where(m["seq"].isna(), c.loc[unknown, "ordinal"], m["seq"].fillna(0)).astype(np.int64)
        else:
            c.loc[unknown, "comm"] = "(order)"
            c.loc[unknown, "seq"] = c.loc[unknown, "ordinal"]
    return c.drop(columns=["_t"]).reset_index(drop=True)


def clock_offsets(c, ranks):
    """Offset of each clock (a host; a rank when its host is unknown) from the reference clock (that of
    the lowest rank), in ns.

    Every rank of a collective completes it at (nearly) the same true time, so per collective the
    consensus end is the median of the aligned ends, and a host's offset the median of its ranks'
    ends minus the consensus.  Fit: residuals of the aligned ends.  Hosts without shared
    collectives fall back to the run.json clock anchors (start of `gputap run` on that host)."""
    hosts = list(dict.fromkeys(ranks.sort_values("rank")["clock"]))
    ref = hosts[0] if hosts else ""
    off = {h: 0.0 for h in hosts}
    fit = {}
    if not c.empty and len(hosts) > 1:
        multi = c.groupby(["comm", "seq"])["host"].transform("nunique") > 1
        d = c[multi]
        if not d.empty:
            for _ in range(3):
                aligned = d["end_ns"].to_numpy(float) - d["host"].map(off).to_numpy(float)
                cons = pd.Series(aligned).groupby([d["comm"].to_numpy(), d["seq"].to_numpy()]).transform("median")
                resid = d["end_ns"].to_numpy(float) - cons.to_numpy()
                per = pd.Series(resid).groupby(d["host"].to_numpy()).median()
                base = per.get(ref, 0.0)
                for h, v in per.items():
                    off[h] = float(v - base)
            aligned = d["end_ns"].to_numpy(float) - d["host"].map(off).to_numpy(float)
            cons = pd.Series(aligned).groupby([d["comm"].to_numpy(), d["seq"].to_numpy()]).transform("median")
            res = pd.Series(aligned - cons.to_numpy())
            for h, g in res.groupby(d["host"].to_numpy()):
                a = np.abs(g.to_numpy())
                fit[h] = {"collectives": int(len(a)), "rms_us": float(np.sqrt(np.mean(a ** 2)) / 1e3),
                          "p95_us": float(np.percentile(a, 95) / 1e3), "max_us": float(a.max() / 1e3)}
    anchors = {}
    if "anchor_ns" in ranks:
        for h, g in ranks.groupby("clock"):
            v = g["anchor_ns"].dropna()
            if len(v):
                anchors[h] = float(v.iloc[0])
    out = []
    for h in hosts:
        e = {"host": h, "offset_ms": off[h] / 1e6}
        if h == ref:
            e["source"] = "reference"
        elif h in fit:
            e["source"] = "collectives"
        elif h in anchors and ref in anchors:
            off[h] = anchors[h] - anchors[ref]
            e.update(offset_ms=off[h] / 1e6, source="run.json")
        else:
            e["source"] = "none"
        if h in anchors and ref in anchors:
            e["anchor_offset_ms"] = (anchors[h] - anchors[ref]) / 1e6
        e.update(fit.get(h, {}))
        out.append(e)
    return off, out


def collective_table(c, off):
    """One row per collective (comm, seq): per-rank arrival after alignment, skew, wait, late rank."""
    if c.empty:
        return pd.DataFrame(columns=["comm", "seq", "iteration", "name", "algo", "proto", "match", "ranks", "arrival_ms",
                                     "skew_ms", "wait_ms", "late_rank", "first_rank", "duration_ms", "end_spread_ms",
                                     "start_ns"]), c
    c = c.copy()
    o = c["host"].map(off).fillna(0.0).to_numpy(float)
    c["a_start"] = c["start_ns"].to_numpy(float) - o
    c["a_end"] = c["end_ns"].to_numpy(float) - o
    g = c.groupby(["comm", "seq"], sort=False)
    first = g["a_start"].transform("min")
    last = g["a_start"].transform("max")
    c["wait_ms"] = (last - c["a_start"]) / 1e6
    c["arrival_ms"] = (c["a_start"] - first) / 1e6
    c = c.sort_values(["comm", "seq", "rank"], kind="stable")
    g = c.groupby(["comm", "seq"], sort=False)
    idx_late = g["a_start"].idxmax()
    idx_first = g["a_start"].idxmin()
    t = g.agg(iteration=("iteration", lambda s: int(s.mode().iloc[0]) if len(s) else -1), name=("name", "first"),
              algo=("algo", "first"), proto=("proto", "first"), match=("match", "first"),
              ranks=("rank", list), arrival_ms=("arrival_ms", list), skew_ms=("arrival_ms", "max"),
              wait_ms=("wait_ms", "sum"), a_first=("a_start", "min"), end_max=("a_end", "max"),
              end_min=("a_end", "min"))
    t["late_rank"] = c.loc[idx_late.to_numpy(), "rank"].to_numpy()
    t["first_rank"] = c.loc[idx_first.to_numpy(), "rank"].to_numpy()
    dur = (c["a_end"] - c["a_start"]) / 1e6
    t["duration_ms"] = dur.groupby([c["comm"], c["seq"]], sort=False).median().reindex(t.index).to_numpy()
    t["end_spread_ms"] = (t["end_max"] - t["end_min"]) / 1e6
    t["start_ns"] = t["a_first"].astype(np.int64)
    t = t.drop(columns=["a_first", "end_max", "end_min"]).reset_index()
    t.loc[t["ranks"].map(len) < 2, ["late_rank", "first_rank"]] = -1
    return t.sort_values(["start_ns", "comm", "seq"], ignore_index=True), c


def _phase_excess(row, med):
    """The phase in which a rank spent more than the median rank, largest first."""
    parts = {"compute": row["compute_ms"] - med["compute_ms"], "memory copies": row["memop_ms"] - med["memop_ms"],
             "idle (GPU waiting for the CPU)": row["idle_ms"] - med["idle_ms"],
             "communication (not waiting)": (row["comm_ms"] - row["wait_ms"]) - (med["comm_ms"] - med["wait_ms"])}
    return sorted(parts.items(), key=lambda kv: -kv[1])


def reduce(results, failed):
    """(ranks, iterations, collectives, summary) from the per-rank results."""
    good = [r for r in results if "error" not in r and not r.get("skipped")]
    skipped = [{"path": r["path"], "reason": r["skipped"]} for r in results if r.get("skipped") and "error" not in r]
    failed = list(failed) + [{"path": r["path"], "error": r["error"]} for r in results if "error" in r]
    ranks, iters, rowc = per_rank_tables(good)
    ranks["anchor_ns"] = [r.get("anchor_ns") for r in sorted(good, key=lambda x: x["rank"])] if good else []
    c = match_collectives(rowc)
    off, clock = clock_offsets(c, ranks)
    ct, c = collective_table(c, off)
    # waits and lateness per rank and per iteration
    if not c.empty:
        w_rank = c.groupby("rank")["wait_ms"].sum()
        w_it = c.groupby(["rank", "iteration"])["wait_ms"].sum()
        ncoll = c.groupby("rank").size()
    else:
        w_rank, w_it, ncoll = pd.Series(dtype=float), pd.Series(dtype=float), pd.Series(dtype=int)
    ranks["wait_ms"] = ranks["rank"].map(w_rank).fillna(0.0)
    ranks["collectives"] = ranks["rank"].map(ncoll).fillna(0).astype(int)
    late_min = LATE_MIN_MS
    late_counts = ct[(ct["skew_ms"] > late_min) & (ct["late_rank"] >= 0)].groupby("late_rank").size()
    ranks["late_count"] = ranks["rank"].map(late_counts).fillna(0).astype(int)
    ranks["work_ms"] = ranks["span_ms"] - ranks["wait_ms"]
    ranks["clock_offset_ms"] = ranks["clock"].map(off).fillna(0.0) / 1e6
    if len(iters):
        key = pd.MultiIndex.from_frame(iters[["rank", "iteration"]])
        iters["wait_ms"] = w_it.reindex(key).fillna(0.0).to_numpy() if len(w_it) else 0.0
    else:
        iters["wait_ms"] = []
    iters["work_ms"] = iters["span_ms"] - iters["wait_ms"]

    # per iteration: slowest / fastest rank by the time not spent waiting for others
    it_summary = []
    for it, g in iters.groupby("iteration"):
        if g.empty:
            continue
        slow = g.loc[g["work_ms"].idxmax()]
        fast = g.loc[g["work_ms"].idxmin()]
        med = g[["compute_ms", "memop_ms", "idle_ms", "comm_ms", "wait_ms", "work_ms"]].median()
        phase, excess = _phase_excess(slow, med)[0]
        it_summary.append({"iteration": int(it), "ranks": int(len(g)), "slowest_rank": int(slow["rank"]),
                           "slowest_ms": float(slow["work_ms"]), "fastest_rank": int(fast["rank"]),
                           "fastest_ms": float(fast["work_ms"]), "spread_ms": float(slow["work_ms"] - fast["work_ms"]),
                           "median_ms": float(med["work_ms"]), "phase": phase if excess > 0 else "none",
                           "phase_excess_ms": float(max(excess, 0.0))})

    # late collectives: skew well above the usual skew of the same collective in other iterations
    # (training loops repeat their collectives: position k of iteration i is compared with position k
    # of every iteration), or of all collectives when there are too few iterations
    late = []
    if len(ct):
        t = ct.sort_values(["comm", "iteration", "seq"]).copy()
        t["pos"] = t.groupby(["comm", "iteration"]).cumcount()
        gmed, gscale = _robust(t["skew_ms"])
        stats = t.groupby(["comm", "pos"])["skew_ms"].agg(["median", "size", lambda v: _robust(v)[1]])
        stats.columns = ["median", "size", "scale"]
        k = pd.MultiIndex.from_frame(t[["comm", "pos"]])
        st = stats.reindex(k)
        few = st["size"].to_numpy() < 3
        typ = np.where(few, gmed, st["median"].to_numpy())
        scl = np.where(few, gscale, st["scale"].to_numpy())
        t["typical_skew_ms"] = typ
        thr = np.maximum.reduce([np.full(len(t), late_min), typ, 2 * Z_OUTLIER * scl])
        lt = t[((t["skew_ms"] - typ) > thr) & (t["late_rank"] >= 0)].sort_values("skew_ms", ascending=False).head(100)
        for _, r in lt.iterrows():
            late.append({"iteration": int(r["iteration"]), "comm": r["comm"], "seq": int(r["seq"]), "name": r["name"],
                         "late_rank": int(r["late_rank"]), "skew_ms": float(r["skew_ms"]),
                         "typical_skew_ms": float(r["typical_skew_ms"])})

    # outliers and slow ranks
    outliers, slow_ranks = [], []
    if len(ranks) >= 3:
        mets = {"work_ms": "time not waiting for other ranks", "compute_ms": "compute",
                "idle_ms": "GPU idle", "memop_ms": "memory copies", "exposed_comm_ms": "exposed communication",
                "wait_ms": "waiting in collectives", "late_count": "collectives it arrived last at"}
        for m, what in mets.items():
            med, scale = _robust(ranks[m])
            for _, r in ranks.iterrows():
                v = float(r[m])
                z = (v - med) / scale
                rel = (v - med) / med if med else (np.inf if v else 0.0)
                if m == "late_count":
                    hit = v >= max(3, 0.5 * max(r["collectives"], 1))
                else:
                    hit = abs(z) > Z_OUTLIER and abs(rel) > REL_OUTLIER
                if hit:
                    outliers.append({"rank": int(r["rank"]), "host": r["host"], "gpu": r["label"], "metric": m,
                                     "value": v, "median": med, "z": float(z) if np.isfinite(z) else None,
                                     "reason": ("%s %s the median: %.3f vs %.3f ms" % (
                                         what, "above" if v > med else "below", v, med)) if m != "late_count" else
                                     "arrived last at %d of its %d collectives" % (v, r["collectives"])})
        wmed, wscale = _robust(ranks["work_ms"])
        medrow = ranks[["compute_ms", "memop_ms", "idle_ms", "comm_ms", "wait_ms"]].median()
        for _, r in ranks.sort_values("work_ms", ascending=False).iterrows():
            z = (r["work_ms"] - wmed) / wscale
            is_late = r["late_count"] >= max(3, 0.5 * max(r["collectives"], 1))
            if not ((z > Z_OUTLIER and r["work_ms"] > wmed * (1 + REL_OUTLIER / 2)) or is_late):
                continue
            reasons = []
            for ph, ex in _phase_excess(r, medrow)[:2]:
                if ex > 0.01 * max(wmed, 1e-9):
                    reasons.append("%s %.3f ms above the median rank" % (ph, ex))
            if r["collectives"]:
                reasons.append("arrived last at %d of %d collectives" % (r["late_count"], r["collectives"]))
            reasons.append("%.3f ms not waiting for others vs %.3f ms median (%+.1f %%)" % (
                r["work_ms"], wmed, 100.0 * (r["work_ms"] - wmed) / wmed if wmed else 0.0))
            slow_ranks.append({"rank": int(r["rank"]), "host": r["host"], "work_ms": float(r["work_ms"]),
                               "median_work_ms": wmed, "reason": "; ".join(reasons)})

    match_counts = {k: int(v) for k, v in c["match"].value_counts().items()} if not c.empty else {}
    summary = {
        "schema_version": 1, "tool": "gputap fleet",
        "ranks": int(len(ranks)), "hosts": sorted(set(ranks["host"]) - {""}) if len(ranks) else [],
        "iterations": int(iters["iteration"].nunique()) if len(iters) else 0,
        "collectives": int(len(ct)), "collective_rows_by_match": match_counts,
        "failed": failed, "skipped": skipped,
        "slow_ranks": slow_ranks, "late_collectives": late, "outliers": outliers,
        "per_iteration": it_summary, "clock": clock,
    }
    ranks = ranks.drop(columns=["anchor_ns"])
    return ranks, iters, ct, summary
