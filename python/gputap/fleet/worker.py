"""The task: run the C analyzer on a few ranks' files, on the worker that can read them.

`gputap analyze --format json --collectives FILE...` runs as a child process over the ranks of one
task (inputs.batches() groups small ranks of one machine so that a process start does not cost more
than the analysis; a large rank is a task of its own): the child's memory is bounded by the largest
rank of the task (it streams the trace and sorts externally), and the numbers are the
single-machine analyzer's own.  The task returns three small Arrow tables (one row per rank, per
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
    """(doc, None) or (None, message).  `gate`, when given, is held while the analyzer runs (not while
    its output is read): a semaphore that bounds the analyzer processes, not the threads."""
    try:
        with gate or contextlib.nullcontext():
            cp = subprocess.run([exe, "analyze", "--format", "json", "--collectives", *opts, *paths],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "the analyzer could not run: %s" % e
    if cp.returncode != 0:
        if cp.returncode < 0:
            return None, "the analyzer was killed (signal %d)" % -cp.returncode
        msg = cp.stderr.decode("utf-8", "replace").strip().splitlines()
        msg = [m[len("gputap: error: "):] if m.startswith("gputap: error: ") else m for m in msg
               if not m.startswith("gputap: warning: ")]
        return None, "; ".join(msg[-3:]) or "the analyzer failed with status %d" % cp.returncode
    try:
        return parse_result(cp.stdout), None
    except (ValueError, KeyError, IndexError) as e:
        return None, "unreadable analyzer output: %s" % e


# What _collect reads of a result.  The analyzer writes more (streams, kernels per rank, memory
# bandwidth, buckets): half of the time json.loads took over a batch of 64 generated ranks.
RESULT_KEYS = ("timeline", "collectives", "notes", "iteration_source")
_KEY = b'\n      "'  # a key of results[0], as `gputap analyze --format json` indents it
_HEAD = b'\n  "results": [\n    {\n      "'
_RESULT_END = b"\n    }"


def parse_result(out):
    """The first result of `gputap analyze --format json`, with RESULT_KEYS only.  The analyzer
    writes a result's keys each on a line of its own, indented by 6 spaces, and a JSON string
    cannot hold a line break: so a value runs from its key to the next such line (or the result's
    closing brace), and only those bytes are decoded.  Another layout: the whole document."""
    b = bytes(out)
    stop = b.find(_RESULT_END) if b.startswith(b"{") and _HEAD in b[:200] else -1
    if stop < 0:
        return json.loads(b)["results"][0]
    doc = {}
    for k in RESULT_KEYS:
        pat = _KEY + k.encode() + b'": '
        i = b.find(pat, 0, stop)
        if i < 0:
            continue
        i += len(pat)
        j = b.find(_KEY, i, stop)
        doc[k] = json.loads(b[i:j if j >= 0 else stop].rstrip().rstrip(b","))
    return doc


class _Rows:
    """Columns of one output table, filled row by row."""

    def __init__(self, names):
        self.cols = {n: [] for n in names}

    def add(self, **kw):
        for k, v in self.cols.items():
            v.append(kw[k])

    def extend(self, n, **kw):
        for k, v in self.cols.items():
            x = kw[k]
            v.extend(x if isinstance(x, list) else [x] * n)


RANK_FIELDS = ("task", "status", "message", "label", "gpus", "iterations", "first_ns", "last_ns",
               "iteration_source") + WINDOW_KEYS
ITER_FIELDS = ("task", "iteration", "start_ns", "first_ns", "last_ns") + WINDOW_KEYS
COLL_FIELDS = ("task",) + COLL_STR + COLL_INT


def _collect(doc, idx, rows, iters, colls):
    """Split one analyzer result over several inputs into per-task rows.  idx: task number per source."""
    by_src = {}
    for g in (doc.get("timeline") or {}).get("gpus") or []:
        by_src.setdefault(g.get("source", 0), []).append(g)
    label_src = {}
    for s, gs in by_src.items():
        for g in gs:
            label_src[g["label"].rsplit("/gpu", 1)[0]] = s
    notes = doc.get("notes") or []
    for s, task in enumerate(idx):
        gpus = by_src.get(s, [])
        status, msg = "ok", ""
        path = task["path"]
        part = [n for n in notes if n.startswith(path + ":") and "partial" in n]
        if part or path.endswith(".partial"):
            status, msg = "partial", (part[0][len(path) + 2:] if part else "the trace is partial")
        if not gpus:
            rows.add(task=task["index"], status="skipped" if status == "ok" else status,
                     message=msg or SKIP_REASON, label="", gpus=0, iterations=0, first_ns=0, last_ns=0,
                     iteration_source="", **{k: 0.0 for k in WINDOW_KEYS})
            continue
        nit = max(len(g.get("iterations") or []) for g in gpus)
        rows.add(task=task["index"], status=status, message=msg, label=",".join(g["label"] for g in gpus),
                 gpus=len(gpus), iterations=nit, first_ns=min(g["total"]["first_ns"] for g in gpus),
                 last_ns=max(g["total"]["last_ns"] for g in gpus), iteration_source=doc.get("iteration_source") or "",
                 **{k: float(sum(g["total"][k] for g in gpus)) for k in WINDOW_KEYS})
        if len(gpus) == 1:  # one GPU per rank, the usual case: whole columns at once
            its = gpus[0].get("iterations") or []
            iters.extend(len(its), task=task["index"], iteration=list(range(len(its))),
                         **{k: [w[k] for w in its] for k in ITER_FIELDS[2:]})
            continue
        for j in range(nit):
            ws = [g["iterations"][j] for g in gpus if j < len(g.get("iterations") or [])]
            iters.add(task=task["index"], iteration=j, start_ns=min(w["start_ns"] for w in ws),
                      first_ns=min(w["first_ns"] for w in ws), last_ns=max(w["last_ns"] for w in ws),
                      **{k: float(sum(w[k] for w in ws)) for k in WINDOW_KEYS})
    cl = doc.get("collectives") or []
    if cl and "source" not in cl[0]:  # an analyzer older than the "source" field: by the label
        for c in cl:
            c["source"] = label_src.get(c.get("rank"), -1)
    cl = [c for c in cl if 0 <= c["source"] < len(idx)]
    colls.extend(len(cl), task=[idx[c["source"]]["index"] for c in cl],
                 iteration=[-1 if c["iteration"] is None else c["iteration"] for c in cl],
                 **{k: [c.get(k, d) for c in cl] for ks, d in ((COLL_STR, ""), (COLL_INT, 0)) for k in ks
                    if k != "iteration"})


def _named(msg, tasks):
    """The task whose path an analyzer error names, else None."""
    for t in tasks:
        if msg.startswith(t["path"] + ":") or (" %s:" % t["path"]) in msg:
            return t
    return None


def analyze_batch(tasks, gputap=None, opts=(), timeout=3600, gate=None):
    """Analyse the ranks of one task list (dicts from inputs.expand() with an "index").  Returns
    {"ranks", "iterations", "collectives": pyarrow Tables, "seconds", "pid", "rss_kib"}.  `gate`: see
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
        doc, err = _run(exe, [t["path"] for t in part], opts, timeout, gate)
        if doc is not None:
            _collect(doc, part, rows, iters, colls)
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


def _type(name):
    import pyarrow as pa

    if name in ("status", "message", "label", "iteration_source") + COLL_STR:
        return pa.string()
    if name in WINDOW_KEYS:
        return pa.float64()
    return pa.int64()


def _table(r):
    import pyarrow as pa

    return pa.table({k: pa.array(v, type=_type(k)) for k, v in r.cols.items()})


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

