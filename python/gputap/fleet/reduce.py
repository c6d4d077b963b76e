"""Cross-rank answers from the per-rank results (docs/fleet.md defines every number).

Input: the tasks and the tables the workers returned (worker.analyze_batch), as columns (see
columns.py).  Output: three tables (ranks, iterations, collectives) as columns and a summary dict.
Everything here is per rank, per rank and iteration, or per collective and rank in size: the traces
themselves never reach the client.  All of it is numpy column arithmetic (no loop over collectives
in Python, no pandas: its import alone took longer than the analyzer's run over a thousand ranks),
so that 2,000 ranks cost about what 2 do.
"""
import bisect
import re

import numpy as np

from gputap.fleet.columns import Groups, factorize, first_seen_ids, group_ids, lookup, nrows, strings, take

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
KEY = ("comm", "name", "seq")
STR_COLS = ("comm", "name", "algo", "proto", "match", "dtype")  # numbers into the collectives' _strings

RANKS_OUT = ("rank", "host", "path", "clock", "label", "gpus", "iterations", "first_ns", "last_ns") + RANK_COLS + (
    "collectives", "wait_ms", "work_ms", "late_count", "last_count", "iterations_late", "cost_ms", "waited_for_ms",
    "max_late_ms", "cause", "pattern", "clock_offset_ms")
ITERS_OUT = ("rank", "host", "iteration", "start_ns", "local_start_ns") + RANK_COLS + (
    "wait_ms", "work_ms", "late_ms", "late_collectives", "cost_ms", "waited_for_ms", "cause")
COLLS_OUT = ("comm", "seq", "iteration", "name", "count", "dtype", "bytes", "algo", "proto", "match", "ranks",
             "arrival_ms", "skew_ms", "wait_ms", "late_rank", "first_rank", "late_ms", "held_ms", "is_late", "late_ranks",
             "late_by_ms", "cause", "duration_ms", "end_spread_ms", "start_ns")
_INT = {"rank", "gpus", "iterations", "first_ns", "last_ns", "collectives", "late_count", "last_count", "iterations_late",
        "iteration", "start_ns", "local_start_ns", "late_collectives", "seq", "count", "bytes", "late_rank", "first_rank"}
_STR = {"host", "path", "clock", "label", "cause", "pattern", "comm", "name", "dtype", "algo", "proto", "match"}
_LIST = {"ranks", "arrival_ms", "late_ranks", "late_by_ms"}


def empty(names):
    """A table of these columns without rows, each of its type."""
    return {k: (np.zeros(0, np.int64) if k in _INT else strings([]) if k in _STR else [] if k in _LIST
                else np.zeros(0, bool) if k == "is_late" else np.zeros(0)) for k in names}


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
    st, task, msg, lab = (rk[k].tolist() for k in ("status", "task", "message", "label"))
    failed += [{"path": path[i], "error": m} for s, i, m in zip(st, task, msg) if s == "failed"]
    skipped = [{"path": path[i], "reason": m} for s, i, m in zip(st, task, msg) if s == "skipped"]
    partial = [{"path": path[i], "reason": m or "the trace is partial", "label": b}
               for s, i, m, b in zip(st, task, msg, lab) if s == "partial"]
    return failed, skipped, partial, take(rk, rk["status"] == "ok")


def _numbers(tasks, good):
    """Rank number per good task: the task's (folder rank<R>, file name, distributedInfo), else from the
    GPU label, else the next free one; a number two inputs claim goes to the second's next free one."""
    by = {t["index"]: t for t in tasks}
    used, out, clashes = set(), {}, []
    want = []
    for i, lab in zip(good["task"].tolist(), good["label"].tolist()):
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


def match_collectives(c, empty=0, order=None):
    """Give every row a (comm, name, seq) key that is equal on every rank for one collective.
    comm and name are numbers into a sorted table of strings (_strings): `empty` that of "",
    `order` that of "(order)".

    Rows from NCCL's profiler plugin or the trace's arguments have it.  Rows numbered by order
    (older NCCL, traces that do not say) get the key of the collective of their kind at the same
    position in the ranks that have keys (of several, the one most ranks have there; of equally
    many, the first in sorted order); else, or when no rank has keys, the key is the position
    among the rank's collectives of that kind.  Returns the
    rows sorted by rank, device and launch (or start), with their "ordinal" there and "_k", the
    collective's number in the keys' sorted order."""
    if not nrows(c):
        return dict(c, ordinal=np.zeros(0, np.int64), _k=np.zeros(0, np.int64))
    t = np.where(c["launch_ok"], c["launch_ns"], c["start_ns"])
    c = take(c, np.lexsort((c["seq"], t, c["device"], c["rank"])))
    c["ordinal"] = Groups(group_ids(c["rank"], c["device"])[0]).cumcount()
    unknown = c["comm"] == empty
    if unknown.any():
        # the position among the rank's collectives of that kind: its k-th send/receive is the other
        # side's k-th whatever the collectives between them
        by_kind = Groups(group_ids(c["rank"], c["device"], c["name"])[0]).cumcount()
        comm, name, seq = c["comm"].copy(), c["name"].copy(), c["seq"].copy()
        known = ~unknown
        if known.any():
            gk, _ = group_ids(c["ordinal"][known], c["comm"][known], c["name"][known], c["seq"][known])
            n = np.bincount(gk)
            rows = np.nonzero(known)[0]
            first = np.full(len(n), len(rows), np.int64)
            np.minimum.at(first, gk, np.arange(len(rows)))
            ref = rows[first]  # one row per (ordinal, key), in sorted key order
            # per ordinal and kind the key most ranks have there, of equally many the first in that
            # order: a row takes only the key of its own kind (a send/receive without a record never
            # becomes the all-reduce another rank launched at that position)
            o = np.lexsort((np.arange(len(ref)), -n, c["name"][ref], c["ordinal"][ref]))
            span = int(c["name"].max()) + 1
            ok = c["ordinal"][ref][o] * span + c["name"][ref][o]
            keep = np.ones(len(o), bool)
            keep[1:] = ok[1:] != ok[:-1]
            best = ref[o[keep]]
            j = lookup(c["ordinal"][unknown] * span + c["name"][unknown], c["ordinal"][best] * span + c["name"][best],
                       np.arange(len(best)), -1)
            hit = j >= 0
            u = np.nonzero(unknown)[0]
            comm[u] = np.where(hit, c["comm"][best][np.maximum(j, 0)], order)
            seq[u] = np.where(hit, c["seq"][best][np.maximum(j, 0)], by_kind[u])
        else:
            comm[unknown] = order
            seq[unknown] = by_kind[unknown]
        c["comm"], c["name"], c["seq"] = comm, name, seq
    # one number per collective, in the (comm, name, seq) order
    c["_k"] = group_ids(c["comm"], c["name"], c["seq"])[0]
    return c


def _once_per_gpu(c):
    """One row per collective and GPU: a second row of a GPU with the same key (two kernels given one
    key: a trace that numbers its collectives wrongly) would count that GPU twice in the collective's
    arrivals and their noise.  Rows are in launch order per GPU (match_collectives): the first is kept.
    Returns the rows and how many were left out."""
    if not nrows(c):
        return c, 0
    gid, n = group_ids(c["_k"], c["rank"], c["device"])
    if n == nrows(c):
        return c, 0
    keep = Groups(gid, n).first_row()
    return take(c, np.sort(keep)), nrows(c) - n


def clock_offsets(c, ranks):
    """Offset of each clock (a host; a rank when its host is unknown) from the reference clock (that of
    the lowest rank), in ns.

    Every rank of a collective completes it at (nearly) the same true time, so per collective the
    consensus end is the median of the aligned ends, and a host's offset the median of its ranks'
    ends minus the consensus.  Fit: residuals of the aligned ends.  Hosts without shared
    collectives fall back to the run.json clock anchors (start of `gputap run` on that host)."""
    hosts = list(dict.fromkeys(ranks["clock"].tolist()))  # ranks are in rank order
    ref = hosts[0] if hosts else ""
    off = {h: 0.0 for h in hosts}
    fit = {}
    if nrows(c) and len(hosts) > 1:
        gid, ccode, cnames = c["_k"], c["_clock"], hosts
        g = Groups(gid)
        lo, hi = g.min(ccode), g.max(ccode)
        multi = (lo != hi)[gid]  # seen by two clocks or more
        if multi.any():
            keys, dc = first_seen_ids(gid[multi]), ccode[multi]
            gk, gc = Groups(keys), Groups(dc, len(cnames))
            end = c["end_ns"].astype(float)[multi]
            for _ in range(3):
                aligned = end - np.array([off.get(h, np.nan) for h in cnames])[dc]
                cons = gk.median(aligned)[keys]
                per = gc.median(end - cons)
                base = per[cnames.index(ref)] if ref in cnames and gc.size[cnames.index(ref)] else 0.0
                for h in np.nonzero(gc.size)[0]:
                    off[cnames[h]] = float(per[h] - base)
            aligned = end - np.array([off.get(h, np.nan) for h in cnames])[dc]
            res = np.abs(aligned - gk.median(aligned)[keys])
            rms = np.sqrt(gc.sum(res ** 2) / np.maximum(gc.size, 1))
            p95, mx = gc.quantile(res, 0.95), gc.max(res)
            for h in np.nonzero(gc.size)[0]:
                fit[cnames[h]] = {"collectives": int(gc.size[h]), "rms_us": float(rms[h]) / 1e3,
                                  "p95_us": float(p95[h]) / 1e3, "max_us": float(mx[h]) / 1e3}
    anchors = {}
    for h, a in zip(ranks["clock"].tolist(), ranks["anchor_ns"]):
        if a is not None and a == a and h not in anchors:
            anchors[h] = float(a)
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


def _arrivals(c, off, ranks_clock):
    """Per collective row, after aligning the clocks: arrival (kernel start), lateness against the
    others, wait, and per collective the noise of the arrivals.  Rows sorted by collective, the
    latest arrival first; "_g" numbers the collectives in that order."""
    o = np.array([off.get(h, 0.0) for h in dict.fromkeys(ranks_clock)], dtype=float)[c["_clock"]] if nrows(c) \
        else np.zeros(0)
    a_start = c["start_ns"].astype(float) - o
    c = dict(c, a_start=a_start, a_end=c["end_ns"].astype(float) - o,
             a_launch=np.where(c["launch_ok"], c["launch_ns"].astype(float) - o, np.nan))
    c = take(c, np.lexsort((-c["a_start"], c["_k"])))
    gid = c["_k"]  # numbered in the keys' order: the collectives' order here
    g = Groups(gid)
    c["_g"] = gid
    n = g.size[gid]
    c["n"] = n
    pos = g.cumcount()  # 0: the last to arrive
    c["pos"] = pos
    s = c["a_start"]
    first, last, med = g.min(s)[gid], g.max(s)[gid], g.median(s)[gid]
    second = g.max(np.where(pos == 1, s, np.nan))[gid]
    ref = np.where(n >= 3, med, first)  # the others' usual arrival: the median; of two ranks the first
    c["late_ms"] = np.maximum(s - ref, 0.0) / 1e6
    c["held_ms"] = np.where((pos == 0) & (n >= 2), np.nan_to_num(last - second), 0.0) / 1e6
    dur = np.maximum(c["a_end"] - s, 0.0)
    c["wait_ms"] = np.minimum(last - s, dur) / 1e6  # waiting happens inside the kernel
    c["arrival_ms"] = (s - first) / 1e6
    c["dev_ns"] = np.abs(s - med)
    c["launch_lag_ms"] = (c["a_launch"] - g.median(c["a_launch"])[gid]) / 1e6
    return c, g


def _noise_ms(c, g):
    """The arrivals' usual scatter (ms): per collective of 3 or more ranks 1.4826 x the median absolute
    deviation of the arrivals (one or a few late ranks do not move it), the median over collectives;
    with two ranks only, the same scale of the skews of the collectives in the better half."""
    big = g.size >= 3
    if big.any():
        mad = g.median(c["dev_ns"])[big]
        return float(1.4826 * np.median(mad)) / 1e6
    top = c["held_ms"][(c["pos"] == 0) & (c["n"] == 2)]
    if len(top) < 2:
        return 0.0
    low = np.sort(top)[: max(2, len(top) // 2)]
    return float(1.4826 * np.median(np.abs(low - np.median(low))))


def _ri_key(rank, iteration, span):
    """One int per (rank, iteration); iteration -1 (outside the iterations) included."""
    return np.asarray(rank, np.int64) * span + (np.asarray(iteration, np.int64) + 1)


def _iteration_excess(it):
    """Per rank and iteration (rows sorted by rank, iteration), how far above the iteration's median
    rank it was in each phase."""
    # GPU idle before the iteration's work: from the previous iteration's last op (the first: from the
    # iteration range's start) to its first op
    r = it["rank"]
    prev_last = np.empty(len(r), np.int64)
    if len(r):
        prev_last[1:] = it["last_ns"][:-1]
        newr = np.ones(len(r), bool)
        newr[1:] = r[1:] != r[:-1]
        prev_last[newr] = it["start_ns"][newr]
    lead = np.maximum((it["first_ns"] - prev_last).astype(float), 0.0) / 1e6
    ph = {"compute": it["compute_ms"], "memory copies": it["memop_ms"], "host/launch": it["idle_ms"],
          "data loading": lead}
    gi = Groups(group_ids(it["iteration"])[0])
    return {name: v - gi.median(v)[gi.gid] for name, v in ph.items()}


def _causes(c, late, it, ex, span):
    """Cause of each late arrival: the phase of its rank's iteration most above the median rank; a
    collective the host launched late (by half the lateness or more) is put down to the host (data
    loading when the GPU sat idle before the iteration's work, else host/launch) — unless the GPU was
    not idle longer than the median rank's: then the host was waiting for its own GPU's work (a
    synchronization, FSDP's limit on all-gathers in flight) and that work's phase is the cause."""
    idx = np.nonzero(late)[0]
    if not len(idx):
        return strings([])
    j = lookup(_ri_key(c["rank"][idx], c["iteration"][idx], span), _ri_key(it["rank"], it["iteration"], span),
               np.arange(nrows(it)), -1)
    x = np.full((len(idx), len(CAUSES)), -np.inf)
    hit = j >= 0
    for k, name in enumerate(CAUSES):
        v = ex[name][j[hit]] if len(ex[name]) else np.zeros(0)
        x[hit, k] = np.where(np.isnan(v), -np.inf, v)
    lm = c["late_ms"][idx]
    lag = c["launch_lag_ms"][idx]
    host = np.where(np.isnan(lag), False, lag >= 0.5 * lm)
    # the host launched late while its GPU sat idle (beyond the median rank): the host's own delay
    idle = np.maximum(x[:, 2], x[:, 3]) > 0.1 * lm
    host &= idle | ~(np.maximum(x[:, 0], x[:, 1]) > 0.1 * lm)
    x[host, 0] = -np.inf
    x[host, 1] = -np.inf
    best = np.argmax(x, axis=1)
    top = x[np.arange(len(x)), best]
    names = np.array(CAUSES, dtype=object)[best]
    return np.where(top > 0.1 * lm, names, np.where(host, "host/launch", "unclear")).astype(object)


def _waiting_upstream(c, g):
    """Late arrivals that pass on another rank's lateness.  Since the rank's previous operation among
    the same ranks as this one (on that GPU), it waited in operations among other ranks at least half
    as long as it is late here: a pipeline stage that waited for its input sends it on late; a rank
    that waited for its tensor-parallel partner arrives late at its data-parallel all-reduce (both
    seen on real jobs).  Per such row the rank it waited for longest there, followed to the start of
    the chain (if that one was itself passing lateness on, whom it waited for); -1 for the other rows.
    Where every collective has the same ranks (DDP, FSDP) there are none: those who waited with it
    left with it.  Rows are as _arrivals() left them (each collective's latest arrival first)."""
    n = nrows(c)
    up = np.full(n, -1, np.int64)
    late = c["late"]
    if not late.any():
        return up
    # each row's ranks, as one number (a sum of the ranks' hashes over the collective's rows)
    h = (c["rank"].astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    acc = np.zeros(g.n, np.uint64)
    with np.errstate(over="ignore"):
        np.add.at(acc, c["_g"], h)
    chan = acc[c["_g"]]
    # per rank and GPU, its rows in GPU time; only ranks whose collectives have different ranks
    o = np.lexsort((c["a_start"], c["device"], c["rank"]))
    key = c["rank"][o] * (int(c["device"].max()) + 1) + c["device"][o]
    bounds = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True])
    last = g.first_row()  # per collective its latest arrival's row
    todo = []
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        rows = o[a:b]
        comms = chan[rows]
        if not late[rows].any() or (comms == comms[0]).all():
            continue
        t_start, t_end, wait = c["a_start"][rows], c["a_end"][rows], c["wait_ms"][rows]
        prev_same = {}  # ranks -> position of the latest row among them so far
        for k in range(len(rows)):
            i = rows[k]
            if late[i]:
                p = prev_same.get(comms[k], -1)
                # the rows in between that ended by this one's start, among other ranks
                between = [m for m in range(p + 1, k) if comms[m] != comms[k] and t_end[m] <= t_start[k] and
                           (p < 0 or t_start[m] >= t_end[p])]
                waited = sum(wait[m] for m in between)
                if between and waited >= 0.5 * c["late_ms"][i]:
                    todo.append((t_start[k], i, rows[max(between, key=lambda m: wait[m])]))
            prev_same[comms[k]] = k
    for _, i, j in sorted(todo):
        q = last[c["_g"][j]]
        if c["rank"][q] != c["rank"][i]:  # it was not the last there itself
            up[i] = up[q] if up[q] >= 0 else c["rank"][q]
    return up


def _pattern(k, n):
    if k == 0:
        return ""
    if k == 1:
        return "one-off"
    return "consistent" if k >= max(2, 0.5 * n) else "intermittent"


def _vocab(co):
    """The collectives' table of strings (taken out of `co`), with "" and "(order)" in it and still
    sorted; the numbers of those two."""
    v = co.pop("_strings", strings([""])).tolist()
    for x in ("", "(order)"):
        if x not in v:
            pos = bisect.bisect_left(v, x)
            v.insert(pos, x)
            for k in STR_COLS:
                if k in co:
                    co[k] = co[k] + (co[k] >= pos)
    return strings(v), v.index(""), v.index("(order)")


def _prepare(tasks, good, it, co):
    """The ranks table (rank order) and the iterations and collective rows of its ranks, with rank
    numbers, clocks, and times relative to the first collective."""
    nums, clashes = _numbers(tasks, good)
    by = {t["index"]: t for t in tasks}
    task = good["task"]
    rank = np.array([nums[i] for i in task.tolist()], dtype=np.int64)
    o = np.argsort(rank, kind="stable")
    host = strings([by[i].get("host") or "" for i in task.tolist()])
    ranks = {"rank": rank, "host": host, "path": strings([by[i]["path"] for i in task.tolist()]),
             "clock": strings([h if h else "rank%d" % r for h, r in zip(host.tolist(), rank.tolist())]),
             "anchor_ns": [by[i].get("anchor_ns") for i in task.tolist()], "task": task}
    for k in ("label", "gpus", "iterations", "first_ns", "last_ns") + RANK_COLS:
        ranks[k] = good[k]
    ranks = take(ranks, o)
    rt = ranks["task"]
    it = take(it, np.isin(it["task"], rt))
    it["rank"] = lookup(it["task"], rt, ranks["rank"], -1)
    co = take(co, np.isin(co["task"], rt))
    co["rank"] = lookup(co["task"], rt, ranks["rank"], -1)
    # each rank's clock as a number: the clocks in order of their first rank (clock_offsets' order)
    names = list(dict.fromkeys(ranks["clock"].tolist()))
    at = {h: i for i, h in enumerate(names)}
    ranks["_clock"] = np.array([at[h] for h in ranks["clock"].tolist()], dtype=np.int64)
    j = lookup(co["task"], rt, np.arange(len(rt)), 0)
    co["_clock"] = ranks["_clock"][j] if len(j) else np.zeros(0, np.int64)
    # times relative to the first one: a float of ns since the epoch is only good to 256 ns
    base = int(co["start_ns"].min()) if nrows(co) else 0
    co["start_ns"] = co["start_ns"] - base
    co["end_ns"] = co["end_ns"] - base
    co["launch_ok"] = co["launch_ns"] > 0
    co["launch_ns"] = np.where(co["launch_ok"], co["launch_ns"] - base, 0)
    return ranks, it, co, base, clashes


def reduce(tasks, rk, iters, colls, failed_inputs):
    """(ranks, iterations, collectives, summary) from the workers' tables: tables as columns."""
    failed, skipped, partial, good = _split(tasks, rk, failed_inputs)
    colls = dict(colls)
    vocab, empty, order = _vocab(colls)
    ranks, iters, colls, base, clashes = _prepare(tasks, good, iters, colls)
    c = match_collectives(colls, empty, order)
    c, twice = _once_per_gpu(c)
    off, clock = clock_offsets(c, ranks)
    warnings = []
    if clashes:
        warnings.append("%d inputs claimed a rank number another input has; renumbered: %s" % (
            len(clashes), ", ".join(clashes[:5])))
    if twice:
        warnings.append("%d collective rows left out: their GPU had that collective (communicator, kind, sequence "
                        "number) already; the first launched is kept" % twice)
    nranks = nrows(ranks)
    if nrows(c):
        c, g = _arrivals(c, off, ranks["clock"].tolist())
        noise = _noise_ms(c, g)
    else:
        c = dict(c, **{k: np.zeros(0) for k in ("late_ms", "held_ms", "wait_ms", "arrival_ms", "launch_lag_ms",
                                                 "a_start", "a_end")})
        c.update(n=np.zeros(0, np.int64), pos=np.zeros(0, np.int64), _g=np.zeros(0, np.int64))
        g = Groups(c["_g"], 0)
        noise = 0.0
    thr = max(LATE_MIN_MS, LATE_NOISE * noise)
    late = (c["late_ms"] > thr) & (c["n"] >= 2)
    c["late"] = late
    # iterations in rank, iteration order: the phases' excess per rank and iteration
    iters = take(iters, np.lexsort((iters["iteration"], iters["rank"])))
    span = int(max(iters["iteration"].max() if nrows(iters) else 0, c["iteration"].max() if nrows(c) else 0)) + 2
    cause = np.full(nrows(c), "", dtype=object)
    if late.any():
        cause[late] = _causes(c, late, iters, _iteration_excess(iters) if nrows(iters) else
                              {k: np.zeros(0) for k in CAUSES}, span)
    up = _waiting_upstream(c, g)
    passed_on = up >= 0
    if passed_on.any():
        cause[passed_on] = np.array(["waiting for rank %d" % u for u in up[passed_on].tolist()], dtype=object)
    c["cause"] = cause
    # the job waited for it alone; not for a rank that only passed on another's lateness
    c["cost_ms"] = np.where(late & (c["pos"] == 0) & ~passed_on, c["held_ms"], 0.0)
    c["waited_for_ms"] = c["cost_ms"] * (c["n"] - 1)

    ct = _collective_table(c, g, vocab)
    ct["start_ns"] = ct["start_ns"] + base
    iters, nit = _iteration_table(iters, c, ranks, off, span)
    ranks = _rank_table(ranks, c, off, nit)

    stragglers = _stragglers(ranks, nit, _cost_in_iterations(ranks, iters))
    it_summary = _per_iteration(iters, c)
    late_list = _late_list(ct)
    outliers = _outliers(ranks)

    by_match = {}
    for m in vocab[c["match"]].tolist() if nrows(c) else []:
        by_match[m] = by_match.get(m, 0) + 1
    by_match = dict(sorted(by_match.items(), key=lambda kv: -kv[1]))
    if by_match.get("order"):
        warnings.append("%d of %d collective rows matched by order (no NCCL profiler-plugin records or trace "
                        "sequence numbers): right only when every rank issued its collectives in the same order"
                        % (by_match["order"], nrows(c)))
    for e in clock:
        # the 95th percentile, not the rms: a rooted collective whose root does not wait (a Broadcast's
        # ends 18 ms apart in a real DDP job) is one far residual among well-fitted ones
        if e.get("p95_us", 0) > 1000:
            warnings.append("clock %s: 5 %% of its collectives' ends are more than %.1f ms off the others' after "
                            "alignment: skews and waits on it are uncertain by as much" % (e["host"],
                                                                                          e["p95_us"] / 1e3))
    if nrows(ct) and nranks > 1:
        # against the other collectives of the communicator (process groups differ in size), kind
        # by kind (a send/receive is the operation of two ranks)
        seen = np.array([len(x) for x in ct["ranks"]])
        g = Groups(group_ids(factorize(ct["comm"])[0], factorize(ct["name"])[0])[0])
        short = int((seen < g.max(seen)[g.gid]).sum())
        if short:
            warnings.append("%d collectives were seen on fewer ranks than the others (a rank left out, or "
                            "traces that start or end at different points)" % short)
    hosts = sorted(set(ranks["host"].tolist()) - {""})
    summary = {
        "schema_version": 2, "tool": "gputap fleet",
        "ranks": int(nranks), "hosts": hosts, "clocks": len(set(ranks["clock"].tolist())) if nranks else 0,
        "iterations": nit, "collectives": int(nrows(ct)), "collective_rows_by_match": by_match,
        "match": ("none" if not by_match else next(iter(by_match)) if len(by_match) == 1 else "mixed"),
        "late_threshold_ms": thr, "arrival_noise_ms": noise,
        "failed": failed, "skipped": skipped, "partial": partial,
        "stragglers": stragglers, "slow_ranks": stragglers,
        "late_collectives": late_list, "late_collectives_total": int(ct["is_late"].sum()) if nrows(ct) else 0,
        "outliers": outliers, "per_iteration": it_summary, "clock": clock, "warnings": warnings,
    }
    return {k: ranks[k] for k in RANKS_OUT}, iters, ct, summary


_PAIR = re.compile(r"SendRecv ([01])>([01])$")


def _pair_names(names, ranks):
    """A send/receive of a two-rank communicator — PyTorch makes one for each pair that sends and
    receives, its ranks 0 and 1 the pair's lower and higher global rank — named in the job's ranks:
    "SendRecv 0>1" of ranks [2, 3] is "SendRecv 2>3".  Other names are kept."""
    out = names.copy()
    for i, (name, rk) in enumerate(zip(names.tolist(), ranks)):
        m = _PAIR.match(name) if name.startswith("SendRecv ") else None
        if m and len(rk) == 2 and m.group(1) != m.group(2):
            lo, hi = sorted(rk)
            out[i] = "SendRecv %d>%d" % ((lo, hi) if m.group(1) == "0" else (hi, lo))
    return out


def _collective_table(c, g, vocab):
    if not nrows(c):
        return empty(COLLS_OUT)
    gid = c["_g"]
    first = g.first_row()  # the latest arrival of each collective (rows are latest first)
    t = {k: (vocab[c[k][first]] if k in STR_COLS else c[k][first]) for k in ("comm", "name", "seq", "algo", "proto",
                                                                             "match")}
    t["count"] = g.max(c["count"])[:].astype(np.int64)
    t["bytes"] = g.max(c["bytes"]).astype(np.int64)
    t["dtype"] = vocab[g.max(c["dtype"]).astype(np.int64)]  # the numbers sort as the strings
    t["skew_ms"] = g.max(c["arrival_ms"])
    t["wait_ms"] = g.sum(c["wait_ms"])
    a_first, end_max, end_min = g.min(c["a_start"]), g.max(c["a_end"]), g.min(c["a_end"])
    late = c["late"]
    is_late = g.count(late) > 0
    t["is_late"] = is_late
    n = g.size
    # the iteration most of its ranks launched it in (of equally many, the lowest)
    gi, _ = group_ids(gid, c["iteration"])
    cnt = np.bincount(gi)
    rows = Groups(gi).first_row()
    o = np.lexsort((c["iteration"][rows], -cnt, gid[rows]))
    keep = np.ones(len(o), bool)
    keep[1:] = gid[rows][o][1:] != gid[rows][o][:-1]
    iteration = np.full(g.n, -1, np.int64)
    iteration[gid[rows][o][keep]] = c["iteration"][rows][o][keep]
    t["iteration"] = iteration
    by_rank = np.lexsort((c["rank"], gid))
    t["ranks"] = g.lists(c["rank"], by_rank)
    t["arrival_ms"] = g.lists(c["arrival_ms"], by_rank)
    t["late_rank"] = c["rank"][first]
    t["late_ms"] = c["late_ms"][first]
    t["held_ms"] = np.where(is_late, c["held_ms"][first], 0.0)
    t["cause"] = c["cause"][first]
    # the earliest arrival; of equal ones the first row
    t["first_rank"] = c["rank"][g.first_row(c["a_start"] == a_first[gid])]
    lr = np.nonzero(late)[0]  # already latest first within a collective
    gl = Groups(gid[lr], g.n)
    t["late_ranks"] = gl.lists(c["rank"][lr])
    t["late_by_ms"] = gl.lists(c["late_ms"][lr])
    t["duration_ms"] = g.median((c["a_end"] - c["a_start"]) / 1e6)
    t["end_spread_ms"] = (end_max - end_min) / 1e6
    t["start_ns"] = a_first.astype(np.int64)
    one = n < 2
    t["late_rank"] = np.where(one, -1, t["late_rank"])
    t["first_rank"] = np.where(one, -1, t["first_rank"])
    t["name"] = _pair_names(t["name"], t["ranks"])
    kc = factorize(t["comm"])[0]
    return take({k: t[k] for k in COLLS_OUT}, np.lexsort((t["seq"], kc, t["start_ns"])))


def _iteration_table(it, c, ranks, off, span):
    """Per rank and iteration: waits, lateness, cost and cause, with the clock offset applied."""
    if not nrows(it):
        return empty(ITERS_OUT), 0
    nit = len(np.unique(it["iteration"]))
    key = _ri_key(it["rank"], it["iteration"], span)
    z = np.zeros(nrows(it))
    wait, cost, waited, late_ms, nlate, cause = z, z, z, z, np.zeros(nrows(it), np.int64), strings([""] * nrows(it))
    if nrows(c):
        ck = _ri_key(c["rank"], c["iteration"], span)
        gid, ng = group_ids(ck)
        g = Groups(gid, ng)
        uk = ck[g.first_row()]
        j = lookup(key, uk, np.arange(ng), -1)
        hit = j >= 0
        jj = np.maximum(j, 0)

        def per(v):
            return np.where(hit, v[jj], 0.0) if ng else z

        wait, cost, waited = per(g.sum(c["wait_ms"])), per(g.sum(c["cost_ms"])), per(g.sum(c["waited_for_ms"]))
        lt = c["late"]
        late_ms = np.nan_to_num(per(g.max(np.where(lt, c["late_ms"], np.nan))))
        nlate = per(g.count(lt).astype(float)).astype(np.int64)
        # the cause of the latest late arrival of the rank in the iteration
        li = np.nonzero(lt)[0]
        if len(li):
            o = li[np.lexsort((np.arange(len(li)), -c["late_ms"][li], ck[li]))]
            ko = ck[o]
            keep = np.ones(len(o), bool)
            keep[1:] = ko[1:] != ko[:-1]
            m = lookup(key, ko[keep], c["cause"][o[keep]], "")
            cause = strings(m.tolist())
    out = {"rank": it["rank"]}
    rj = lookup(it["rank"], ranks["rank"], np.arange(nrows(ranks)), 0)
    out["host"] = ranks["host"][rj]
    clock_off = np.array([off.get(h, 0.0) for h in ranks["clock"].tolist()], dtype=float)[rj] / 1e6
    out["iteration"] = it["iteration"]
    out["start_ns"] = it["start_ns"] - np.round(clock_off * 1e6).astype(np.int64)
    out["local_start_ns"] = it["start_ns"]
    for k in RANK_COLS:
        out[k] = it[k]
    out["wait_ms"] = np.minimum(wait, it["comm_ms"])
    out["work_ms"] = np.maximum(it["span_ms"] - out["wait_ms"], 0.0)
    out["late_ms"] = late_ms
    out["late_collectives"] = nlate
    out["cost_ms"] = cost
    out["waited_for_ms"] = waited
    out["cause"] = cause
    return out, nit


def _rank_table(ranks, c, off, nit):
    """Per rank: collectives, waits, lateness, cost, pattern and cause, clock offset."""
    r = ranks["rank"]
    nr = len(r)
    j = lookup(c["rank"], r, np.arange(nr), 0) if nrows(c) else np.zeros(0, np.int64)
    g = Groups(j, nr)
    late = c["late"]
    gl_max = g.max(np.where(late, c["late_ms"], np.nan))
    ranks["collectives"] = g.size.astype(np.int64)
    ranks["wait_ms"] = np.minimum(g.sum(c["wait_ms"]), ranks["comm_ms"])
    ranks["work_ms"] = np.maximum(ranks["span_ms"] - ranks["wait_ms"], 0.0)
    ranks["late_count"] = g.count(late).astype(np.int64)
    ranks["last_count"] = g.count((c["pos"] == 0) & (c["n"] >= 2)).astype(np.int64)
    li = late & (c["iteration"] >= 0)
    if li.any():
        pairs = np.unique(j[li] * (int(c["iteration"][li].max()) + 1) + c["iteration"][li])  # (rank, iteration)
        ranks["iterations_late"] = np.bincount(pairs // (int(c["iteration"][li].max()) + 1),
                                               minlength=nr).astype(np.int64)
    else:
        ranks["iterations_late"] = np.zeros(nr, np.int64)
    ranks["cost_ms"] = g.sum(c["cost_ms"])
    ranks["waited_for_ms"] = g.sum(c["waited_for_ms"])
    ranks["max_late_ms"] = np.nan_to_num(gl_max)
    cause = np.full(nr, "", dtype=object)
    lt = np.nonzero(late)[0]
    if len(lt):
        # the cause of most of the rank's lateness (of equal sums, the first in sorted order)
        cc, cn = factorize(c["cause"][lt])
        gid, ng = group_ids(j[lt], cc)
        sums = np.bincount(gid, weights=c["late_ms"][lt])
        rows = Groups(gid).first_row()
        rr, ca = j[lt][rows], cc[rows]
        o = np.lexsort((ca, -sums, rr))
        keep = np.ones(len(o), bool)
        keep[1:] = rr[o][1:] != rr[o][:-1]
        cause[rr[o][keep]] = cn[ca[o][keep]]
    ranks["cause"] = cause
    # the iterations in which the rank has collectives: with gradient accumulation (DDP's no_sync) only
    # every Nth step all-reduces, and a rank late at each of those is consistent, not intermittent
    ic = c["iteration"] >= 0
    if ic.any():
        span = int(c["iteration"][ic].max()) + 1
        ranks["iterations_with_collectives"] = np.bincount(np.unique(j[ic] * span + c["iteration"][ic]) // span,
                                                           minlength=nr).astype(np.int64)
    else:
        ranks["iterations_with_collectives"] = np.zeros(nr, np.int64)
    # by those iterations when there are some (a collective outside them, at start-up say, does not
    # count); by collectives otherwise, or for a rank late only outside the iterations
    ranks["pattern"] = strings([_pattern(k, w) if nit and k and w else _pattern(m, n) for k, w, m, n in
                                zip(ranks["iterations_late"].tolist(), ranks["iterations_with_collectives"].tolist(),
                                    ranks["late_count"].tolist(), ranks["collectives"].tolist())])
    ranks["clock_offset_ms"] = np.array([off.get(h, 0.0) for h in ranks["clock"].tolist()], dtype=float) / 1e6
    return ranks


def _in_iterations(late, with_colls, nit):
    if not nit:
        return ""
    if with_colls and with_colls < nit:
        return " in %d of the %d iterations with collectives (of %d)" % (late, with_colls, nit)
    return " in %d of %d iterations" % (late, nit)


def _cost_in_iterations(ranks, it):
    """Per rank (the ranks table's order): the part of its cost in the iterations (collectives outside
    them, a barrier before the first step say, are left out), and that part without its costliest
    iteration."""
    if not nrows(it):
        return np.zeros(nrows(ranks)), np.zeros(nrows(ranks))
    j = lookup(it["rank"], ranks["rank"], np.arange(nrows(ranks)), 0)
    inside = np.bincount(j, weights=it["cost_ms"], minlength=nrows(ranks))[:nrows(ranks)]
    top = np.zeros(nrows(ranks))
    np.maximum.at(top, j, it["cost_ms"])
    return inside, np.maximum(inside - top, 0.0)


def _stragglers(ranks, nit, costs):
    """Ranks the others waited for (late beyond the noise at one collective or more), costliest first,
    and ranks whose time not waiting is an outlier although they were never late (an asynchronous
    job).  Each with its cost, whether it is consistent or one-off, and its cause.

    When the job has iterations, "costliest" is what a rank costs steadily: its cost in the
    iterations without its costliest one, then its cost in the iterations, then its whole cost.  A
    rank that every step waits for comes before one that made the others wait once, however long —
    at a barrier before the first step, or in the first step while NCCL connected the ranks for
    their first send and receive (both seen on real jobs).  Without iterations: the whole cost."""
    in_its, steady = costs
    if not nrows(ranks):
        return []
    work = ranks["work_ms"]
    wmed, wscale = _robust(work)
    z = (work - wmed) / wscale
    slow_work = (z > Z_OUTLIER) & (work > wmed * (1 + REL_OUTLIER / 2)) if nrows(ranks) >= 3 else z < -np.inf
    pick = np.nonzero((ranks["late_count"] > 0) | slow_work)[0]
    keys = (-work[pick], -ranks["max_late_ms"][pick], -ranks["cost_ms"][pick]) + (
        (-in_its[pick], -steady[pick]) if nit else ())
    pick = pick[np.lexsort(keys)][:LIST_MAX]
    out = []
    for i in pick.tolist():
        r = {k: ranks[k][i] for k in ("rank", "host", "cost_ms", "waited_for_ms", "late_count", "collectives",
                                       "iterations_late", "pattern", "cause", "max_late_ms", "work_ms",
                                       "iterations_with_collectives")}
        inside = float(in_its[i]) if nit else 0.0
        steady_i = float(steady[i]) if nit else 0.0
        per = inside / r["iterations_late"] if r["iterations_late"] else r["cost_ms"]
        if r["late_count"]:
            reason = ("%s: late at %d of %d collectives%s (by up to %.3f ms); the others waited %.3f ms for it "
                      "alone%s%s; cause: %s" % (
                          r["pattern"], r["late_count"], r["collectives"],
                          _in_iterations(r["iterations_late"], r["iterations_with_collectives"], nit), r["max_late_ms"],
                          r["cost_ms"], (", %.3f ms of it in the iterations" % inside) if nit else "",
                          (" (%.3f ms per late iteration)" % per) if r["iterations_late"] > 1 else "",
                          r["cause"] or "unclear"))
        else:
            reason = "never late beyond the noise, but %.3f ms not waiting for others vs %.3f ms median" % (
                r["work_ms"], wmed)
        out.append({"rank": int(r["rank"]), "host": r["host"], "cost_ms": float(r["cost_ms"]),
                    "cost_in_iterations_ms": inside, "steady_cost_ms": steady_i,
                    "waited_for_ms": float(r["waited_for_ms"]), "cost_per_late_iteration_ms": float(per),
                    "late_collectives": int(r["late_count"]), "collectives": int(r["collectives"]),
                    "iterations_late": int(r["iterations_late"]), "iterations": int(nit),
                    "iterations_with_collectives": int(r["iterations_with_collectives"]), "pattern": r["pattern"],
                    "cause": r["cause"], "max_late_ms": float(r["max_late_ms"]), "work_ms": float(r["work_ms"]),
                    "median_work_ms": float(wmed), "reason": reason})
    return out


def _per_iteration(it, c):
    if not nrows(it):
        return []
    gid, ng = group_ids(it["iteration"])
    g = Groups(gid, ng)
    iters = it["iteration"][g.first_row()]
    work = it["work_ms"]
    # the slowest and the fastest rank of each iteration: of equal ones the first row (the lowest rank)
    slow = g.first_row(work == g.max(work)[gid])
    fast = g.first_row(work == g.min(work)[gid])
    med = {k: g.median(it[k]) for k in ("work_ms", "compute_ms", "memop_ms", "idle_ms")}
    ph = np.stack([it["compute_ms"][slow] - med["compute_ms"], it["memop_ms"][slow] - med["memop_ms"],
                   it["idle_ms"][slow] - med["idle_ms"]], axis=1)
    names = np.array(["compute", "memory copies", "idle (GPU waiting for the CPU)"], dtype=object)
    top = ph.max(axis=1)
    out = {"iteration": iters, "ranks": g.size, "slowest_rank": it["rank"][slow], "slowest_ms": work[slow],
           "fastest_rank": it["rank"][fast], "fastest_ms": work[fast], "median_ms": med["work_ms"]}
    out["spread_ms"] = out["slowest_ms"] - out["fastest_ms"]
    out["phase"] = np.where(top > 0, names[np.argmax(ph, axis=1)], "none")
    out["phase_excess_ms"] = np.maximum(top, 0.0)
    lt = np.nonzero(c["late"])[0] if nrows(c) else np.zeros(0, np.int64)
    if len(lt):
        # per iteration, the late arrival that cost most (of equal costs the latest; of equal ones the first)
        o = lt[np.lexsort((np.arange(len(lt)), -c["late_ms"][lt], -c["cost_ms"][lt]))]
        lit = c["iteration"][o]
        _, fi = np.unique(lit, return_index=True)
        top_rows = o[fi]
        j = lookup(iters, c["iteration"][top_rows], np.arange(len(top_rows)), -1)
        hit = j >= 0
        jj = np.maximum(j, 0)
        out["late_rank"] = np.where(hit, c["rank"][top_rows][jj], -1)
        out["late_ms"] = np.where(hit, c["late_ms"][top_rows][jj], 0.0)
        out["cause"] = np.where(hit, c["cause"][top_rows][jj], "")
        # per collective its first late row (the latest arrival), counted in that row's iteration
        kg = c["_g"][lt]
        firsts = lt[np.unique(kg, return_index=True)[1]]
        itv, nv = np.unique(c["iteration"][firsts], return_counts=True)
        out["late_collectives"] = lookup(iters, itv, nv, 0)
        gli, nli = group_ids(c["iteration"][lt])
        sums = np.bincount(gli, weights=c["cost_ms"][lt], minlength=nli)
        out["cost_ms"] = lookup(iters, c["iteration"][lt][Groups(gli, nli).first_row()], sums, 0.0)
    else:
        n = len(iters)
        out["late_rank"], out["late_ms"], out["cause"] = np.full(n, -1), np.zeros(n), np.full(n, "", dtype=object)
        out["late_collectives"], out["cost_ms"] = np.zeros(n, np.int64), np.zeros(n)
    ints = ("iteration", "ranks", "slowest_rank", "fastest_rank", "late_rank", "late_collectives")
    cols = {k: v.tolist() for k, v in out.items()}
    return [{k: (int(cols[k][i]) if k in ints else cols[k][i] if isinstance(cols[k][i], str) else float(cols[k][i]))
             for k in cols} for i in range(len(iters))]


def _late_list(ct):
    if not nrows(ct):
        return []
    idx = np.nonzero(ct["is_late"])[0]
    idx = idx[np.lexsort((-ct["late_ms"][idx], -ct["held_ms"][idx]))][:LIST_MAX]
    t = take(ct, idx)
    return [{"iteration": int(t["iteration"][i]), "comm": t["comm"][i], "seq": int(t["seq"][i]), "name": t["name"][i],
             "count": int(t["count"][i]), "dtype": t["dtype"][i], "bytes": int(t["bytes"][i]),
             "late_rank": int(t["late_rank"][i]), "late_ms": float(t["late_ms"][i]),
             "held_ms": float(t["held_ms"][i]), "skew_ms": float(t["skew_ms"][i]), "cause": t["cause"][i],
             "late_ranks": [[int(a), float(b)] for a, b in list(zip(t["late_ranks"][i], t["late_by_ms"][i]))[:8]]}
            for i in range(len(idx))]


def _outliers(ranks):
    if nrows(ranks) < 3:
        return []
    mets = {"work_ms": "time not waiting for other ranks", "compute_ms": "compute", "idle_ms": "GPU idle",
            "memop_ms": "memory copies", "exposed_comm_ms": "exposed communication", "wait_ms": "waiting in collectives"}
    out = []
    for m, what in mets.items():
        med, scale = _robust(ranks[m])
        v = ranks[m].astype(float)
        z = (v - med) / scale
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(v - med) / med if med else np.where(v != 0, np.inf, 0.0)
        for i in np.nonzero((np.abs(z) > Z_OUTLIER) & (rel > REL_OUTLIER))[0][:LIST_MAX].tolist():
            out.append({"rank": int(ranks["rank"][i]), "host": ranks["host"][i], "gpu": ranks["label"][i], "metric": m,
                        "value": float(v[i]), "median": med, "z": float(z[i]),
                        "reason": "%s %s the median: %.3f vs %.3f ms" % (what, "above" if v[i] > med else "below",
                                                                         v[i], med)})
    return out[:LIST_MAX]


__all__ = ["reduce", "match_collectives", "clock_offsets", "RANKS_OUT", "ITERS_OUT", "COLLS_OUT"]
