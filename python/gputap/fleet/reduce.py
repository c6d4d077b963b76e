"""Cross-rank answers from the per-rank results (docs/fleet.md defines every number).

Input: the tasks and the tables the workers returned (worker.analyze_batch).  Output: three pandas
tables (ranks, iterations, collectives) and a summary dict.  Everything here is per rank, per rank
and iteration, or per collective and rank in size: the traces themselves never reach the client.
All of it is column arithmetic (no loop over ranks or collectives in Python), so that 2,000 ranks
cost about what 2 do.
"""
import re

import numpy as np
import pandas as pd

RANK_COLS = ("span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "overlap_ms", "memop_ms",
             "kernel_sum_ms", "non_compute_ms")
LATE_MIN_MS = 0.1   # an arrival less than this after the others' is never "late"
LATE_NOISE = 6.0    # ... nor one within this many times the arrival noise (robust scale, below)
Z_OUTLIER = 3.5     # robust z-score (median and MAD) beyond which a rank is an outlier
REL_OUTLIER = 0.05  # ... and at least this far from the median, relatively
CAUSES = ("compute", "memory copies", "host/launch", "data loading")
LIST_MAX = 200      # entries of the summary's lists (the tables hold every row)
# one collective across ranks: NCCL numbers the collectives of a communicator per kind (its AllReduces 0,
# 1, 2, ... and its Broadcasts 0, 1, ... apart), so the kind is part of the key
KEY = ["comm", "name", "seq"]


def _robust(values):
    """median, scale (1.4826 MAD, never 0)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    med = float(np.median(v)) if len(v) else 0.0
    mad = float(np.median(np.abs(v - med))) if len(v) else 0.0
    return med, max(1.4826 * mad, 1e-3 * abs(med), 1e-6)


def _split(tasks, rk, failed_inputs):
    """Statuses: failed, skipped (no GPU work), partial (left out of the statistics), ok."""
    path = {t["index"]: t["path"] for t in tasks}
    failed = list(failed_inputs)
    st = rk["status"].to_numpy()
    for i, m in zip(rk["task"][st == "failed"], rk["message"][st == "failed"]):
        failed.append({"path": path[i], "error": m})
    skipped = [{"path": path[i], "reason": m} for i, m in zip(rk["task"][st == "skipped"], rk["message"][st == "skipped"])]
    partial = [{"path": path[i], "reason": m or "the trace is partial", "label": lab}
               for i, m, lab in zip(rk["task"][st == "partial"], rk["message"][st == "partial"],
                                    rk["label"][st == "partial"])]
    return failed, skipped, partial, rk[st == "ok"]


def _numbers(tasks, good):
    """Rank number per good task: the task's (folder rank<R>, file name, distributedInfo), else from the
    GPU label, else the next free one; a number two inputs claim goes to the second's next free one."""
    by = {t["index"]: t for t in tasks}
    used, out, clashes = set(), {}, []
    want = []
    for i, lab in zip(good["task"], good["label"]):
        r = by[i].get("rank")
        if r is None:
            m = re.match(r"rank(\d+)/", lab or "")
            r = int(m.group(1)) if m else None
        want.append((i, r))
    for i, r in want:
        if r is not None and r not in used:
            used.add(r)
            out[i] = r
    nxt = 0
    for i, r in want:
        if i in out:
            continue
        if r is not None:
            clashes.append(by[i]["path"])
        while nxt in used:
            nxt += 1
        used.add(nxt)
        out[i] = nxt
    return out, clashes


def match_collectives(colls):
    """Give every row a (comm, name, seq) key that is equal on every rank for one collective.

    Rows from NCCL's profiler plugin or the trace's arguments have it.  Rows numbered by order
    (older NCCL, traces that do not say) get the key of the collective at the same position in
    the ranks that have keys; when no rank has keys, the key is the position itself."""
    if colls.empty:
        return colls
    c = colls.copy()
    c["_t"] = np.where(c["launch_ok"], c["launch_ns"], c["start_ns"]) if "launch_ok" in c else np.where(
        c["launch_ns"] > 0, c["launch_ns"], c["start_ns"])
    c = c.sort_values(["rank", "device", "_t", "seq"], kind="stable")
    c["ordinal"] = c.groupby(["rank", "device"]).cumcount()
    known = c[c["comm"] != ""]
    unknown = c["comm"] == ""
    if unknown.any():
        if len(known):
            ref = (known.groupby(["ordinal"] + KEY).size().reset_index(name="n")
                   .sort_values(["ordinal", "n"], ascending=[True, False]).drop_duplicates("ordinal"))
            m = c.loc[unknown, ["ordinal"]].merge(ref, on="ordinal", how="left")
            c.loc[unknown, "comm"] = m["comm"].fillna("(order)").to_numpy()
            c.loc[unknown, "name"] = np.where(m["name"].isna(), c.loc[unknown, "name"], m["name"].fillna(""))
            c.loc[unknown, "seq"] = np.where(m["seq"].isna(), c.loc[unknown, "ordinal"],
                                             m["seq"].fillna(0)).astype(np.int64)
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
        # numbers, not strings: one per collective (found once) and one per clock
        gid = c.groupby(KEY, sort=False).ngroup().to_numpy()
        ccode, cnames = pd.factorize(c["clock"], use_na_sentinel=False)
        g = pd.Series(ccode).groupby(gid)
        multi = (g.transform("min") != g.transform("max")).to_numpy()  # seen by two clocks or more
        if multi.any():
            keys, dc = gid[multi], ccode[multi]
            end = c["end_ns"].to_numpy(float)[multi]
            for _ in range(3):
                aligned = end - np.array([off.get(h, np.nan) for h in cnames])[dc]
                cons = pd.Series(aligned).groupby(keys).transform("median")
                per = pd.Series(end - cons.to_numpy()).groupby(dc).median()
                base = per.get(cnames.get_loc(ref), 0.0) if ref in cnames else 0.0
                for h, v in per.items():
                    off[cnames[h]] = float(v - base)
            aligned = end - np.array([off.get(h, np.nan) for h in cnames])[dc]
            cons = pd.Series(aligned).groupby(keys).transform("median")
            res = pd.Series(np.abs(aligned - cons.to_numpy()))
            g = res.groupby(dc)
            st = pd.DataFrame({"n": g.size(), "rms": np.sqrt((res ** 2).groupby(dc).mean()),
                               "p95": g.quantile(0.95), "max": g.max()})
            st.index = [cnames[i] for i in st.index]
            for h, r in st.iterrows():
                fit[h] = {"collectives": int(r["n"]), "rms_us": float(r["rms"]) / 1e3, "p95_us": float(r["p95"]) / 1e3,
                          "max_us": float(r["max"]) / 1e3}
    anchors = {}
    if "anchor_ns" in ranks:
        a = ranks.dropna(subset=["anchor_ns"]).drop_duplicates("clock")
        anchors = dict(zip(a["clock"], a["anchor_ns"].astype(float)))
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


def _arrivals(c, off):
    """Per collective row, after aligning the clocks: arrival (kernel start), lateness against the
    others, wait, and per collective the noise of the arrivals."""
    o = c["clock"].map(off).fillna(0.0).to_numpy(float)
    c["a_start"] = c["start_ns"].to_numpy(float) - o
    c["a_end"] = c["end_ns"].to_numpy(float) - o
    c["a_launch"] = np.where(c["launch_ok"].to_numpy(), c["launch_ns"].to_numpy(float) - o, np.nan)
    c = c.sort_values(KEY + ["a_start"], ascending=[True, True, True, False], kind="stable", ignore_index=True)
    g = c.groupby(KEY, sort=False)
    c["_g"] = g.ngroup()  # the collective's number: later group-bys use it, not the three key columns
    c["n"] = g["a_start"].transform("size")
    c["pos"] = g.cumcount()  # 0: the last to arrive
    first = g["a_start"].transform("min").to_numpy()
    last = g["a_start"].transform("max").to_numpy()
    med = g["a_start"].transform("median").to_numpy()
    second = c["a_start"].where(c["pos"] == 1).groupby(c["_g"], sort=False).transform("max").to_numpy()
    n = c["n"].to_numpy()
    ref = np.where(n >= 3, med, first)  # the others' usual arrival: the median; of two ranks the first
    c["late_ms"] = np.maximum(c["a_start"].to_numpy() - ref, 0.0) / 1e6
    c["held_ms"] = np.where((c["pos"] == 0) & (n >= 2), np.nan_to_num(last - second), 0.0) / 1e6
    dur = np.maximum(c["a_end"].to_numpy() - c["a_start"].to_numpy(), 0.0)
    c["wait_ms"] = np.minimum(last - c["a_start"].to_numpy(), dur) / 1e6  # waiting happens inside the kernel
    c["arrival_ms"] = (c["a_start"].to_numpy() - first) / 1e6
    c["dev_ns"] = np.abs(c["a_start"].to_numpy() - med)
    lmed = g["a_launch"].transform("median").to_numpy()
    c["launch_lag_ms"] = (c["a_launch"].to_numpy() - lmed) / 1e6
    return c


def _noise_ms(c):
    """The arrivals' usual scatter (ms): per collective of 3 or more ranks 1.4826 x the median absolute
    deviation of the arrivals (one or a few late ranks do not move it), the median over collectives;
    with two ranks only, the same scale of the skews of the collectives in the better half."""
    big = c[c["n"] >= 3]
    if len(big):
        mad = big.groupby(KEY, sort=False)["dev_ns"].median()
        return float(1.4826 * np.median(mad.to_numpy())) / 1e6
    top = c[(c["pos"] == 0) & (c["n"] == 2)]["held_ms"].to_numpy()
    if len(top) < 2:
        return 0.0
    low = np.sort(top)[: max(2, len(top) // 2)]
    return float(1.4826 * np.median(np.abs(low - np.median(low))))


def _iteration_excess(iters):
    """Per rank and iteration, how far above the iteration's median rank it was in each phase."""
    it = iters.sort_values(["rank", "iteration"]).copy()
    # GPU idle before the iteration's work: from the previous iteration's last op (the first: from the
    # iteration range's start) to its first op
    prev_last = it.groupby("rank")["last_ns"].shift(1).fillna(it["start_ns"])
    it["lead_idle_ms"] = np.maximum((it["first_ns"] - prev_last).to_numpy(float), 0.0) / 1e6
    ph = {"compute": "compute_ms", "memory copies": "memop_ms", "host/launch": "idle_ms", "data loading": "lead_idle_ms"}
    med = it.groupby("iteration")[list(ph.values())].transform("median")
    for name, col in ph.items():
        it["x_" + name] = it[col] - med[col]
    return it


def _causes(late, ex):
    """Cause of each late arrival: the phase of its rank's iteration most above the median rank; a
    collective the host launched late (by half the lateness or more) is put down to the host (data
    loading when the GPU sat idle before the iteration's work, else host/launch)."""
    if late.empty:
        return np.array([], dtype=object)
    cols = ["x_" + n for n in CAUSES]
    m = late[["rank", "iteration"]].merge(ex[["rank", "iteration"] + cols], on=["rank", "iteration"], how="left")
    x = m[cols].to_numpy(float)
    x = np.where(np.isnan(x), -np.inf, x)
    host = (late["launch_lag_ms"].to_numpy(float) >= 0.5 * late["late_ms"].to_numpy(float))
    x[host, 0] = -np.inf
    x[host, 1] = -np.inf
    best = np.argmax(x, axis=1)
    top = x[np.arange(len(x)), best]
    names = np.array(CAUSES, dtype=object)[best]
    return np.where(top > 0.1 * late["late_ms"].to_numpy(float), names, np.where(host, "host/launch", "unclear"))


def _pattern(k, n):
    if k == 0:
        return ""
    if k == 1:
        return "one-off"
    return "consistent" if k >= max(2, 0.5 * n) else "intermittent"


def reduce(tasks, rk, iters, colls, failed_inputs):
    """(ranks, iterations, collectives, summary) from the workers' tables (pandas)."""
    failed, skipped, partial, good = _split(tasks, rk, failed_inputs)
    nums, clashes = _numbers(tasks, good)
    by = {t["index"]: t for t in tasks}
    ranks = pd.DataFrame({
        "rank": [nums[i] for i in good["task"]],
        "host": [by[i].get("host") or "" for i in good["task"]],
        "path": [by[i]["path"] for i in good["task"]],
        "anchor_ns": [by[i].get("anchor_ns") for i in good["task"]],
        "task": good["task"].to_numpy(),
    })
    ranks["clock"] = np.where(ranks["host"] != "", ranks["host"], "rank" + ranks["rank"].astype(str))
    for k in ("label", "gpus", "iterations", "first_ns", "last_ns") + RANK_COLS:
        ranks[k] = good[k].to_numpy()
    ranks = ranks.sort_values("rank", ignore_index=True)
    tmap = ranks.set_index("task")
    iters = iters[iters["task"].isin(tmap.index)].copy()
    iters["rank"] = iters["task"].map(tmap["rank"])
    colls = colls[colls["task"].isin(tmap.index)].copy()
    colls["rank"] = colls["task"].map(tmap["rank"])
    colls["clock"] = colls["task"].map(tmap["clock"])

    # times relative to the first one: a float of ns since the epoch is only good to 256 ns
    base = int(colls["start_ns"].min()) if len(colls) else 0
    for k in ("start_ns", "end_ns"):
        colls[k] = colls[k] - base
    colls["launch_ok"] = colls["launch_ns"] > 0
    colls["launch_ns"] = np.where(colls["launch_ok"], colls["launch_ns"] - base, 0)
    c = match_collectives(colls)
    off, clock = clock_offsets(c, ranks)
    warnings = []
    if clashes:
        warnings.append("%d inputs claimed a rank number another input has; renumbered: %s" % (
            len(clashes), ", ".join(clashes[:5])))
    nranks = len(ranks)
    if not c.empty:
        c = _arrivals(c, off)
        noise = _noise_ms(c)
    else:
        for k in ("late_ms", "held_ms", "wait_ms", "arrival_ms", "launch_lag_ms", "a_start", "a_end", "n", "pos"):
            c[k] = pd.Series(dtype=float)
        noise = 0.0
    thr = max(LATE_MIN_MS, LATE_NOISE * noise)
    c["late"] = (c["late_ms"] > thr) & (c["n"] >= 2)
    ex = _iteration_excess(iters) if len(iters) else pd.DataFrame(columns=["rank", "iteration"] + ["x_" + n for n in CAUSES])
    c["cause"] = ""
    lr = c[c["late"]]
    if len(lr):
        c.loc[lr.index, "cause"] = _causes(lr, ex)
    c["cost_ms"] = np.where(c["late"] & (c["pos"] == 0), c["held_ms"], 0.0)  # the job waited for it alone
    c["waited_for_ms"] = c["cost_ms"] * (c["n"] - 1)

    # ---- one row per collective
    ct = _collective_table(c)
    ct["start_ns"] = ct["start_ns"] + base

    # ---- per rank and iteration
    if len(iters):
        key = ["rank", "iteration"]
        if len(c):
            agg = c.groupby(key).agg(wait_ms=("wait_ms", "sum"), cost_ms=("cost_ms", "sum"),
                                     waited_for_ms=("waited_for_ms", "sum"))
            gl = c[c["late"]].groupby(key)
            agg["late_ms"] = gl["late_ms"].max().reindex(agg.index).fillna(0.0)
            agg["late_collectives"] = gl.size().reindex(agg.index).fillna(0).astype(int)
            iters = iters.merge(agg.reset_index(), on=key, how="left")
        for k in ("wait_ms", "late_ms", "cost_ms", "waited_for_ms"):
            iters[k] = iters[k].fillna(0.0) if k in iters else 0.0
        iters["late_collectives"] = iters["late_collectives"].fillna(0).astype(int) if "late_collectives" in iters else 0
        iters["wait_ms"] = np.minimum(iters["wait_ms"], iters["comm_ms"])
        iters["work_ms"] = np.maximum(iters["span_ms"] - iters["wait_ms"], 0.0)
        cz = c[c["late"]].sort_values("late_ms", ascending=False).drop_duplicates(key)[key + ["cause"]]
        iters = iters.merge(cz, on=key, how="left")
        iters["cause"] = iters["cause"].fillna("")
        iters["host"] = iters["rank"].map(ranks.set_index("rank")["host"])
        iters["clock_offset_ms"] = iters["rank"].map(ranks.set_index("rank")["clock"]).map(off).fillna(0.0) / 1e6
        iters["local_start_ns"] = iters["start_ns"]
        iters["start_ns"] = iters["start_ns"] - np.round(iters["clock_offset_ms"] * 1e6).astype(np.int64)
        iters = iters.sort_values(["rank", "iteration"], ignore_index=True)
    iters = iters.reindex(columns=["rank", "host", "iteration", "start_ns", "local_start_ns", *RANK_COLS, "wait_ms",
                                   "work_ms", "late_ms", "late_collectives", "cost_ms", "waited_for_ms", "cause"])

    # ---- per rank
    g = c.groupby("rank")
    ranks["collectives"] = ranks["rank"].map(g.size()).fillna(0).astype(int)
    ranks["wait_ms"] = np.minimum(ranks["rank"].map(g["wait_ms"].sum()).fillna(0.0), ranks["comm_ms"])
    ranks["work_ms"] = np.maximum(ranks["span_ms"] - ranks["wait_ms"], 0.0)
    lt = c[c["late"]]
    gl = lt.groupby("rank")
    ranks["late_count"] = ranks["rank"].map(gl.size()).fillna(0).astype(int)
    ranks["last_count"] = ranks["rank"].map(c[(c["pos"] == 0) & (c["n"] >= 2)].groupby("rank").size()).fillna(0).astype(int)
    ranks["iterations_late"] = ranks["rank"].map(lt[lt["iteration"] >= 0].groupby("rank")["iteration"].nunique()).fillna(0).astype(int)
    ranks["cost_ms"] = ranks["rank"].map(g["cost_ms"].sum()).fillna(0.0)
    ranks["waited_for_ms"] = ranks["rank"].map(g["waited_for_ms"].sum()).fillna(0.0)
    ranks["max_late_ms"] = ranks["rank"].map(gl["late_ms"].max()).fillna(0.0)
    if len(lt):
        w = lt.groupby(["rank", "cause"])["late_ms"].sum().reset_index().sort_values("late_ms", ascending=False)
        ranks["cause"] = ranks["rank"].map(w.drop_duplicates("rank").set_index("rank")["cause"]).fillna("")
    else:
        ranks["cause"] = ""
    nit = int(iters["iteration"].nunique()) if len(iters) else 0
    # by iterations when there are some (a collective outside them, at start-up say, does not count);
    # by collectives otherwise, or for a rank late only outside the iterations
    ranks["pattern"] = [_pattern(k, nit) if nit and k else _pattern(m, n)
                        for k, m, n in zip(ranks["iterations_late"], ranks["late_count"], ranks["collectives"])]
    ranks["clock_offset_ms"] = ranks["clock"].map(off).fillna(0.0) / 1e6

    stragglers = _stragglers(ranks, nit)
    it_summary = _per_iteration(iters, c)
    late = _late_list(ct)
    outliers = _outliers(ranks)

    by_match = {k: int(v) for k, v in c["match"].value_counts().items()} if len(c) else {}
    if by_match.get("order"):
        warnings.append("%d of %d collective rows matched by order (no NCCL profiler-plugin records or trace "
                        "sequence numbers): right only when every rank issued its collectives in the same order"
                        % (by_match["order"], len(c)))
    for e in clock:
        if e.get("rms_us", 0) > 1000:
            warnings.append("clock %s: its collectives' ends agree only to %.1f ms rms after alignment: skews "
                            "and waits on it are uncertain by as much" % (e["host"], e["rms_us"] / 1e3))
    if len(ct) and nranks > 1:
        short = int((ct["ranks"].map(len) < ct["ranks"].map(len).max()).sum())
        if short:
            warnings.append("%d collectives were seen on fewer ranks than the others (a rank left out, or "
                            "traces that start or end at different points)" % short)
    hosts = sorted(set(ranks["host"]) - {""})
    summary = {
        "schema_version": 2, "tool": "gputap fleet",
        "ranks": int(nranks), "hosts": hosts, "clocks": int(ranks["clock"].nunique()) if nranks else 0,
        "iterations": nit, "collectives": int(len(ct)), "collective_rows_by_match": by_match,
        "match": ("none" if not by_match else next(iter(by_match)) if len(by_match) == 1 else "mixed"),
        "late_threshold_ms": thr, "arrival_noise_ms": noise,
        "failed": failed, "skipped": skipped, "partial": partial,
        "stragglers": stragglers, "slow_ranks": stragglers,
        "late_collectives": late, "late_collectives_total": int(ct["is_late"].sum()) if len(ct) else 0,
        "outliers": outliers, "per_iteration": it_summary, "clock": clock, "warnings": warnings,
    }
    ranks = ranks.drop(columns=["anchor_ns", "task"])
    return ranks, iters, ct, summary


def _collective_table(c):
    cols = ["comm", "seq", "iteration", "name", "count", "dtype", "bytes", "algo", "proto", "match", "ranks",
            "arrival_ms", "skew_ms",
            "wait_ms", "late_rank", "first_rank", "late_ms", "held_ms", "is_late", "late_ranks", "late_by_ms", "cause",
            "duration_ms", "end_spread_ms", "start_ns"]
    if c.empty:
        return pd.DataFrame(columns=cols)
    k = "_g"  # the collective's number (_arrivals), one column: faster to group by than its key's three
    g = c.groupby(k, sort=False)
    t = g.agg(comm=("comm", "first"), name=("name", "first"), seq=("seq", "first"), count=("count", "max"),
              dtype=("dtype", "max"), bytes=("bytes", "max"), algo=("algo", "first"), proto=("proto", "first"),
              match=("match", "first"), skew_ms=("arrival_ms", "max"), wait_ms=("wait_ms", "sum"),
              a_first=("a_start", "min"), end_max=("a_end", "max"), end_min=("a_end", "min"), is_late=("late", "any"),
              n=("n", "first"))
    # the iteration most of its ranks launched it in
    im = c.groupby([k, "iteration"], sort=False).size().reset_index(name="m").sort_values("m", ascending=False)
    t["iteration"] = im.drop_duplicates(k).set_index(k)["iteration"].reindex(t.index).to_numpy()
    s = c.sort_values([k, "rank"], kind="stable")
    gs = s.groupby(k, sort=False)
    t["ranks"] = gs["rank"].agg(list).reindex(t.index)
    t["arrival_ms"] = gs["arrival_ms"].agg(list).reindex(t.index)
    top = c[c["pos"] == 0].set_index(k)
    t["late_rank"] = top["rank"].reindex(t.index).to_numpy()
    t["late_ms"] = top["late_ms"].reindex(t.index).to_numpy()
    t["held_ms"] = np.where(t["is_late"], top["held_ms"].reindex(t.index).to_numpy(), 0.0)
    t["cause"] = top["cause"].reindex(t.index).fillna("").to_numpy()
    bot = c.sort_values("a_start", kind="stable").drop_duplicates(k).set_index(k)
    t["first_rank"] = bot["rank"].reindex(t.index).to_numpy()
    lr = c[c["late"]]  # already latest first within a collective
    gl = lr.groupby(k, sort=False)
    t["late_ranks"] = gl["rank"].agg(list).reindex(t.index)
    t["late_by_ms"] = gl["late_ms"].agg(list).reindex(t.index)
    for col in ("late_ranks", "late_by_ms"):
        t[col] = [v if isinstance(v, list) else [] for v in t[col]]
    t["duration_ms"] = ((c["a_end"] - c["a_start"]) / 1e6).groupby(c[k], sort=False).median().reindex(
        t.index).to_numpy()
    t["end_spread_ms"] = (t["end_max"] - t["end_min"]) / 1e6
    t["start_ns"] = t["a_first"].astype(np.int64)
    one = t["n"] < 2
    t.loc[one, ["late_rank", "first_rank"]] = -1
    t = t.reset_index(drop=True)
    t["iteration"] = t["iteration"].fillna(-1).astype(np.int64)
    return t.sort_values(["start_ns", "comm", "seq"], ignore_index=True)[cols]


def _stragglers(ranks, nit):
    """Ranks the others waited for (late beyond the noise at one collective or more), costliest first;
    and ranks whose time not waiting is an outlier although they were never late (an asynchronous
    job).  Each with its cost, whether it is consistent or one-off, and its cause."""
    if not len(ranks):
        return []
    wmed, wscale = _robust(ranks["work_ms"])
    z = (ranks["work_ms"] - wmed) / wscale
    slow_work = (z > Z_OUTLIER) & (ranks["work_ms"] > wmed * (1 + REL_OUTLIER / 2)) if len(ranks) >= 3 else z < -np.inf
    pick = ranks[(ranks["late_count"] > 0) | slow_work].copy()
    pick = pick.sort_values(["cost_ms", "max_late_ms", "work_ms"], ascending=False).head(LIST_MAX)
    out = []
    for r in pick.itertuples(index=False):
        per = r.cost_ms / r.iterations_late if r.iterations_late else r.cost_ms
        if r.late_count:
            reason = ("%s: late at %d of %d collectives%s (by up to %.3f ms); the others waited %.3f ms for it "
                      "alone%s; cause: %s" % (
                          r.pattern, r.late_count, r.collectives,
                          (" in %d of %d iterations" % (r.iterations_late, nit)) if nit else "", r.max_late_ms,
                          r.cost_ms, (" (%.3f ms per late iteration)" % per) if r.iterations_late > 1 else "",
                          r.cause or "unclear"))
        else:
            reason = "never late beyond the noise, but %.3f ms not waiting for others vs %.3f ms median" % (
                r.work_ms, wmed)
        out.append({"rank": int(r.rank), "host": r.host, "cost_ms": float(r.cost_ms),
                    "waited_for_ms": float(r.waited_for_ms), "cost_per_late_iteration_ms": float(per),
                    "late_collectives": int(r.late_count), "collectives": int(r.collectives),
                    "iterations_late": int(r.iterations_late), "iterations": int(nit), "pattern": r.pattern,
                    "cause": r.cause, "max_late_ms": float(r.max_late_ms), "work_ms": float(r.work_ms),
                    "median_work_ms": float(wmed), "reason": reason})
    return out


def _per_iteration(iters, c):
    if not len(iters):
        return []
    it = iters.copy()
    g = it.groupby("iteration")
    slow = it.loc[g["work_ms"].idxmax()].set_index("iteration")
    fast = it.loc[g["work_ms"].idxmin()].set_index("iteration")
    med = g[["work_ms", "compute_ms", "memop_ms", "idle_ms"]].median()
    out = pd.DataFrame({"ranks": g.size(), "slowest_rank": slow["rank"], "slowest_ms": slow["work_ms"],
                        "fastest_rank": fast["rank"], "fastest_ms": fast["work_ms"], "median_ms": med["work_ms"]})
    out["spread_ms"] = out["slowest_ms"] - out["fastest_ms"]
    ph = pd.DataFrame({"compute": slow["compute_ms"] - med["compute_ms"], "memory copies": slow["memop_ms"] - med["memop_ms"],
                       "idle (GPU waiting for the CPU)": slow["idle_ms"] - med["idle_ms"]})
    out["phase"] = np.where(ph.max(axis=1) > 0, ph.idxmax(axis=1), "none")
    out["phase_excess_ms"] = np.maximum(ph.max(axis=1), 0.0)
    lt = c[c["late"]] if len(c) else c
    if len(lt):
        top = lt.sort_values(["cost_ms", "late_ms"], ascending=False).drop_duplicates("iteration").set_index("iteration")
        out["late_rank"] = top["rank"].reindex(out.index).fillna(-1).astype(int)
        out["late_ms"] = top["late_ms"].reindex(out.index).fillna(0.0)
        out["cause"] = top["cause"].reindex(out.index).fillna("")
        out["late_collectives"] = lt.drop_duplicates(KEY).groupby("iteration").size().reindex(out.index).fillna(0).astype(int)
        out["cost_ms"] = lt.groupby("iteration")["cost_ms"].sum().reindex(out.index).fillna(0.0)
    else:
        out["late_rank"], out["late_ms"], out["cause"], out["late_collectives"], out["cost_ms"] = -1, 0.0, "", 0, 0.0
    out = out.reset_index()
    return [{k: (int(v) if k in ("iteration", "ranks", "slowest_rank", "fastest_rank", "late_rank", "late_collectives")
                 else v if isinstance(v, str) else float(v)) for k, v in row.items()} for row in out.to_dict("records")]


def _late_list(ct):
    if not len(ct):
        return []
    t = ct[ct["is_late"]].sort_values(["held_ms", "late_ms"], ascending=False).head(LIST_MAX)
    return [{"iteration": int(r.iteration), "comm": r.comm, "seq": int(r.seq), "name": r.name, "count": int(r.count),
             "dtype": r.dtype, "bytes": int(r.bytes), "late_rank": int(r.late_rank), "late_ms": float(r.late_ms), "held_ms": float(r.held_ms),
             "skew_ms": float(r.skew_ms), "cause": r.cause,
             "late_ranks": [[int(a), float(b)] for a, b in list(zip(r.late_ranks, r.late_by_ms))[:8]]}
            for r in t.itertuples(index=False)]


def _outliers(ranks):
    if len(ranks) < 3:
        return []
    mets = {"work_ms": "time not waiting for other ranks", "compute_ms": "compute", "idle_ms": "GPU idle",
            "memop_ms": "memory copies", "exposed_comm_ms": "exposed communication", "wait_ms": "waiting in collectives"}
    out = []
    for m, what in mets.items():
        med, scale = _robust(ranks[m])
        v = ranks[m].to_numpy(float)
        z = (v - med) / scale
        rel = np.abs(v - med) / med if med else np.where(v != 0, np.inf, 0.0)
        for i in np.nonzero((np.abs(z) > Z_OUTLIER) & (rel > REL_OUTLIER))[0][:LIST_MAX]:
            r = ranks.iloc[i]
            out.append({"rank": int(r["rank"]), "host": r["host"], "gpu": r["label"], "metric": m, "value": float(v[i]),
                        "median": med, "z": float(z[i]),
                        "reason": "%s %s the median: %.3f vs %.3f ms" % (what, "above" if v[i] > med else "below",
                                                                         v[i], med)})
    return out[:LIST_MAX]
