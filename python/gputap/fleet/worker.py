"""The task: run the C analyzer on a few ranks' files, on the worker that can read them.

`gputap analyze --format columns --collectives FILE...` runs as a child process over the ranks of one
task (inputs.batches() groups small ranks of one machine so that a process start does not cost more
than the analysis; a large rank is a task of its own): the child's memory is bounded by the largest
rank of the task (it streams the trace and sorts externally), and the numbers are the
single-machine analyzer's own, read as binary columns (no number printed and parsed).  numpy is
imported when the first output is read, not with this module: on this machine the analyzers start
first.  The task returns three small tables as numpy columns (one row per rank, per
rank and iteration, per collective and rank) and never raises: a rank whose files are missing or
broken comes back with status "failed", a process with no GPU work (a launcher) "skipped", a
trace the analyzer calls partial "partial".
"""
import contextlib
import json
import os
import shutil
import subprocess
import time

WINDOW_KEYS = ("span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms", "overlap_ms", "exposed_comm_ms",
               "memop_ms", "kernel_sum_ms", "non_compute_ms")
COLL_STR = ("comm", "name", "algo", "proto", "match", "dtype")
COLL_INT = ("device", "seq", "count", "bytes", "iteration", "start_ns", "end_ns", "launch_ns")
NO_GPU = "no GPU activity"
SKIP_REASON = "no GPU work in this process (e.g. a launcher)"


def find_gputap(hint=None):
    """The gputap command: `hint`, $GPUTAP, `gputap` on PATH, or the one next to this package."""
    for c in (hint, os.environ.get("GPUTAP")):
        if c and os.access(c, os.X_OK):
            return c
    w = shutil.which("gputap")
    if w:
        return w
    here = os.path.dirname(os.path.abspath(__file__))
    for rel in ("../_bin/gputap", "../../../build/gputap"):
        p = os.path.normpath(os.path.join(here, rel))
        if os.access(p, os.X_OK):
            return p
    return None


def _run(exe, paths, opts, timeout, gate=None):
    """((header, tables), None) or (None, message).  `gate`, when given, is held while the analyzer runs
    (not while its output is read): a semaphore that bounds the analyzer processes, not the threads."""
    try:
        with gate or contextlib.nullcontext():
            cp = subprocess.run([exe, "analyze", "--format", "columns", "--collectives", *opts, *paths],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "the analyzer could not run: %s" % e
    if cp.returncode != 0:
        if cp.returncode < 0:
            return None, "the analyzer was killed (signal %d)" % -cp.returncode
        msg = cp.stderr.decode("utf-8", "replace").strip().splitlines()
        msg = [m[len("gputap: error: "):] if m.startswith("gputap: error: ") else m for m in msg
               if not m.startswith("gputap: warning: ")]
        if cp.returncode == 2 and any("--format is" in m for m in msg):
            return None, ("%s does not write --format columns: a gputap older than this package; install the "
                          "same gputap on every worker" % exe)
        return None, "; ".join(msg[-3:]) or "the analyzer failed with status %d" % cp.returncode
    try:
        return parse_columns(cp.stdout), None
    except (ValueError, KeyError, IndexError, TypeError) as e:
        return None, "unreadable analyzer output: %s" % e


COLUMNS_MAGIC = b"gputap-columns 1\n"


def parse_columns(out):
    """(header, {"iterations": {column: array}, "collectives": {...}}) of `gputap analyze --format
    columns` (docs/analyze.md): a JSON header line, then each table's columns of 8-byte numbers, read
    in place (no number is parsed)."""
    import numpy as np

    if not out.startswith(COLUMNS_MAGIC):
        raise ValueError("not the analyzer's columns (first bytes %r)" % bytes(out[:20]))
    nl = out.index(b"\n", len(COLUMNS_MAGIC))
    hdr = json.loads(out[len(COLUMNS_MAGIC):nl])
    order = {"little": "<", "big": ">"}[hdr["byteorder"]]
    pos, tables = nl + 1, {}
    for t in ("iterations", "collectives"):
        spec, cols = hdr["tables"][t], {}
        n = int(spec["rows"])
        for name, typ in spec["columns"]:
            if typ not in ("i8", "f8") or pos + 8 * n > len(out):
                raise ValueError("column %s.%s: %s" % (t, name, "cut short" if typ in ("i8", "f8") else
                                                       "unknown type %r" % typ))
            cols[name] = np.frombuffer(out, dtype=order + typ, count=n, offset=pos)
            pos += 8 * n
        tables[t] = cols
    if pos != len(out):
        raise ValueError("%d bytes after the columns" % (len(out) - pos))
    return hdr, tables


class _Rows:
    """Columns of one output table, filled row by row or by whole columns; `strings`: the table of
    strings its string-number columns (the collectives') point into."""

    def __init__(self, names):
        self.cols = {n: [] for n in names}
        self.strings = {"": 0}

    def add(self, **kw):
        for k, v in self.cols.items():
            v.append([kw[k]])

    def extend(self, n, **kw):
        for k, v in self.cols.items():
            x = kw[k]
            v.append(x if isinstance(x, (list, tuple)) or hasattr(x, "dtype") and x.ndim else [x] * n)


RANK_FIELDS = ("task", "status", "message", "label", "gpus", "iterations", "first_ns", "last_ns",
               "iteration_source") + WINDOW_KEYS
ITER_FIELDS = ("task", "iteration", "start_ns", "first_ns", "last_ns") + WINDOW_KEYS
COLL_FIELDS = ("task",) + COLL_STR + COLL_INT


def _collect(parsed, idx, rows, iters, colls):
    """Split one analyzer result over several inputs into per-task rows.  idx: task per source."""
    import numpy as np

    hdr, tab = parsed
    gpus = hdr.get("gpus") or []
    by_src = {}
    for i, g in enumerate(gpus):
        by_src.setdefault(g.get("source", 0), []).append(i)
    notes = hdr.get("notes") or []
    it = tab["iterations"]
    nrow = np.array([g["iterations"] for g in gpus], dtype=np.int64)
    start = np.zeros(len(gpus) + 1, np.int64)
    np.cumsum(nrow, out=start[1:])
    srcs = np.array([g.get("source", 0) for g in gpus], dtype=np.int64)
    one_each = all(len(v) == 1 for v in by_src.values())
    if one_each and len(it["gpu"]):  # one GPU per rank, the usual case: the whole table at once
        gsrc = srcs[it["gpu"]]
        ok = (gsrc >= 0) & (gsrc < len(idx))
        g = it["gpu"][ok]
        tasks = np.array([t["index"] for t in idx], dtype=np.int64)
        iters.extend(int(ok.sum()), task=tasks[gsrc[ok]], iteration=np.arange(len(it["gpu"]))[ok] - start[g],
                     **{k: np.array(it[k][ok]) for k in ("start_ns", "first_ns", "last_ns")},
                     **{k: np.round(it[k][ok], 6) for k in WINDOW_KEYS})
    for s, task in enumerate(idx):
        mine = by_src.get(s, [])
        status, msg = "ok", ""
        path = task["path"]
        part = [n for n in notes if n.startswith(path + ":") and "partial" in n]
        if part or path.endswith(".partial"):
            status, msg = "partial", (part[0][len(path) + 2:] if part else "the trace is partial")
        if not mine:
            rows.add(task=task["index"], status="skipped" if status == "ok" else status,
                     message=msg or SKIP_REASON, label="", gpus=0, iterations=0, first_ns=0, last_ns=0,
                     iteration_source="", **{k: 0.0 for k in WINDOW_KEYS})
            continue
        tot = [gpus[i]["total"] for i in mine]
        nit = int(max(nrow[i] for i in mine))
        rows.add(task=task["index"], status=status, message=msg, label=",".join(gpus[i]["label"] for i in mine),
                 gpus=len(mine), iterations=nit, first_ns=min(t["first_ns"] for t in tot),
                 last_ns=max(t["last_ns"] for t in tot), iteration_source=hdr.get("iteration_source") or "",
                 **{k: float(sum(t[k] or 0.0 for t in tot)) for k in WINDOW_KEYS})
        if nit == 0 or one_each:
            continue
        # the rank's iterations: of one GPU its rows; of several, per iteration the first start, the last
        # end and the sums of the GPUs that have it
        sl = [slice(start[i], start[i + 1]) for i in mine]
        j = np.concatenate([np.arange(nrow[i]) for i in mine])
        pick = np.concatenate([np.arange(x.start, x.stop) for x in sl])
        iters.extend(nit, task=task["index"], iteration=np.arange(nit),
                     start_ns=_per_iter(it["start_ns"][pick], j, nit, np.minimum),
                     first_ns=_per_iter(it["first_ns"][pick], j, nit, np.minimum),
                     last_ns=_per_iter(it["last_ns"][pick], j, nit, np.maximum),
                     **{k: np.round(_per_iter(it[k][pick], j, nit, np.add), 6) for k in WINDOW_KEYS})
    co = tab["collectives"]
    src = co["source"]
    keep = (src >= 0) & (src < len(idx))
    tasks = np.array([t["index"] for t in idx], dtype=np.int64)
    # string columns stay numbers: the analyzer's into the batch's table of strings (colls.strings)
    remap = np.array([colls.strings.setdefault(x, len(colls.strings))
                      for x in hdr["tables"]["collectives"].get("strings") or []] + [0], dtype=np.int64)
    colls.extend(int(keep.sum()), task=tasks[src[keep]],
                 **{k: remap[co[k][keep]] for k in COLL_STR}, **{k: np.array(co[k][keep]) for k in COLL_INT})


def _per_iter(v, j, n, ufunc):
    """Per iteration 0..n-1 the reduction of the values v (iteration j each): the values themselves
    when each iteration has one."""
    import numpy as np

    if len(v) == n:
        return np.array(v)
    out = np.zeros(n, dtype=v.dtype) if ufunc is np.add else np.full(n, v.max() if ufunc is np.minimum else v.min())
    ufunc.at(out, j, v)
    return out


def _named(msg, tasks):
    """The task whose path an analyzer error names, else None."""
    for t in tasks:
        if msg.startswith(t["path"] + ":") or (" %s:" % t["path"]) in msg:
            return t
    return None


def analyze_batch(tasks, gputap=None, opts=(), timeout=3600, gate=None):
    """Analyse the ranks of one task list (dicts from inputs.expand() with an "index").  Returns
    {"ranks", "iterations", "collectives": tables as numpy columns (columns.py), "seconds", "pid"}.  `gate`: see
    _run (this machine's threads)."""
    t0 = time.time()
    rows, iters, colls = _Rows(RANK_FIELDS), _Rows(ITER_FIELDS), _Rows(COLL_FIELDS)

    def fail(t, status, msg):
        rows.add(task=t["index"], status=status, message=msg, label="", gpus=0, iterations=0, first_ns=0,
                 last_ns=0, iteration_source="", **{k: 0.0 for k in WINDOW_KEYS})

    exe = find_gputap(gputap)
    todo = []
    for t in tasks:
        p = t["path"]
        if not exe:
            fail(t, "failed", "the gputap command was not found on this worker (set GPUTAP, put gputap on PATH, "
                              "or pip install the gputap package there)")
        elif os.path.isdir(p):
            fail(t, "failed", "no trace.gtr in this rank folder")
        elif not os.path.exists(p):
            fail(t, "failed", "no such file")
        else:
            todo.append(t)
    # one analyzer run over the batch; an input it refuses is taken out (named, or found alone) and the
    # rest run again
    queue = [todo] if todo else []
    while queue:
        part = queue.pop()
        got, err = _run(exe, [t["path"] for t in part], opts, timeout, gate)
        if got is not None:
            _collect(got, part, rows, iters, colls)
            continue
        bad = _named(err, part) if len(part) > 1 else part[0]
        if bad is None:
            queue += [[t] for t in part]
            continue
        m = err[len(bad["path"]) + 2:] if err.startswith(bad["path"] + ":") else err
        if NO_GPU in m:
            fail(bad, "skipped", SKIP_REASON)
        else:
            fail(bad, "failed", m)
        rest = [t for t in part if t is not bad]
        if rest:
            queue.append(rest)

    return {"ranks": _table(rows), "iterations": _table(iters), "collectives": _table(colls),
            "seconds": time.time() - t0, "pid": os.getpid()}


def _table(r):
    """The rows as columns: numpy arrays (strings as objects), small to send and cheap to join."""
    import numpy as np

    from gputap.fleet.columns import strings

    def col(name, parts):
        if name in ("status", "message", "label", "iteration_source"):
            return strings([x for p in parts for x in (p.tolist() if hasattr(p, "tolist") else p)])
        dt = np.float64 if name in WINDOW_KEYS else np.int64
        return np.concatenate([np.asarray(p, dtype=dt) for p in parts]) if parts else np.zeros(0, dt)

    t = {k: col(k, v) for k, v in r.cols.items()}
    if any(k in t for k in COLL_STR):
        t["_strings"] = strings(list(r.strings))  # string number i is t["_strings"][i]
    return t


def failed_batch(tasks, message):
    """What a task that did not come back stands for: each of its ranks failed with `message`."""
    rows = _Rows(RANK_FIELDS)
    for t in tasks:
        rows.add(task=t["index"], status="failed", message=message, label="", gpus=0, iterations=0, first_ns=0,
                 last_ns=0, iteration_source="", **{k: 0.0 for k in WINDOW_KEYS})
    return {"ranks": _table(rows), "iterations": _table(_Rows(ITER_FIELDS)), "collectives": _table(_Rows(COLL_FIELDS)),
            "seconds": 0.0, "pid": 0}


def analyze_rank(task, gputap=None, timeout=3600):
    """One rank as a batch of one (kept for callers of the per-rank task)."""
    return analyze_batch([dict(task, index=task.get("index", 0))], gputap, timeout=timeout)

