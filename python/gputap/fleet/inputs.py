"""What `gputap fleet` is given, turned into one task per rank.

INPUT may be:
  * a gputap run folder (run.json and one <proc>/trace.gtr per process): one task per <proc>;
    the host and the clock anchor come from run.json;
  * a rank folder (<proc>/ with trace.gtr or trace.gtr.partial), or a trace.gtr file: one task;
  * a PyTorch-profiler / Kineto trace (.json, .json.gz), an nsys SQLite export (.sqlite), an
    .nsys-rep: one task each;
  * a folder holding any of these (a folder of rank<R>.json.gz, a folder of run folders): each.
A folder that looks like a rank folder but has no trace is still a task, so that the analysis
names it as failed instead of skipping it silently.  Paths are made absolute here: the workers
run in other folders, or on other machines with the same shared file system.
"""
import json
import os
import re

TRACE_SUFFIXES = (".json", ".json.gz", ".sqlite", ".nsys-rep", ".gtr", ".gtr.partial")


class Task(dict):
    """One rank: path (what the analyzer reads), label, rank (int or None), host, run_dir, anchor_ns."""


def _looks_like_kineto(p):
    """A .json[.gz] found inside a folder counts only when it is a trace (not, say, a config)."""
    import gzip
    try:
        op = gzip.open if p.endswith(".gz") else open
        with op(p, "rb") as f:
            head = f.read(65536)
    except (OSError, EOFError):
        return True  # let the analyzer say what is wrong with it
    return any(k in head for k in (b'"traceEvents"', b'"schemaVersion"', b'"distributedInfo"'))


def _rank_of(name):
    m = re.search(r"rank(\d+)", name)
    return int(m.group(1)) if m else None


def _read_run_json(d):
    p = os.path.join(d, "run.json")
    try:
        with open(p) as f:
            j = json.load(f)
        return j if isinstance(j, dict) else {}
    except (OSError, ValueError):
        return {}


def _trace_stat(d):
    """(path, os.stat_result) of the folder's trace, or None: one stat, kept for the task."""
    for n in ("trace.gtr", "trace.gtr.partial"):
        p = os.path.join(d, n)
        try:
            return p, os.stat(p)
        except OSError:
            pass
    return None


def _trace_in(d):
    t = _trace_stat(d)
    return t[0] if t else None


def _proc_task(pdir, run, trace=None):
    name = os.path.basename(os.path.normpath(pdir))
    host = run.get("host") if run else None
    return Task(path=trace or _trace_in(pdir) or pdir, label=name, rank=_rank_of(name), host=host,
                run_dir=os.path.dirname(os.path.normpath(pdir)) if run else None,
                anchor_ns=run.get("start_ns") if run else None)


def _looks_like_proc(d):
    name = os.path.basename(os.path.normpath(d))
    return _trace_in(d) is not None or re.fullmatch(r"(rank\d+|pid\d+)", name) is not None


def expand(inputs):
    """Tasks for the inputs, in a stable order, and [{path, error}] for inputs that are not there."""
    tasks, failed = [], []
    seen = set()

    def add(t, st=None):
        try:  # the same file named twice (a link, a path with ..): one task; a stat, not a walk of the path
            st = st or os.stat(t["path"])
            key = (st.st_dev, st.st_ino)
            t["size"] = st.st_size  # for batches(): no second stat
        except OSError:
            key = os.path.realpath(t["path"])
        if key not in seen:
            seen.add(key)
            tasks.append(t)

    def walk(p, depth):
        if os.path.isfile(p):
            base = os.path.basename(p)
            if base.endswith(TRACE_SUFFIXES):
                host = None
                run = _read_run_json(os.path.dirname(os.path.dirname(os.path.abspath(p))))
                if base.startswith("trace.gtr") and run:
                    host = run.get("host")
                label = os.path.basename(os.path.dirname(os.path.abspath(p))) if base.startswith("trace.gtr") else base
                for suf in (".json.gz", ".json", ".sqlite", ".nsys-rep"):
                    if label.endswith(suf):
                        label = label[: -len(suf)]
                add(Task(path=p, label=label, rank=_rank_of(label), host=host, run_dir=None,
                         anchor_ns=run.get("start_ns") if run else None))
            elif depth == 0:
                add(Task(path=p, label=base, rank=_rank_of(base), host=None, run_dir=None, anchor_ns=None))
            return
        if not os.path.isdir(p):
            failed.append({"path": p, "error": "no such file or folder"})
            return
        run = _read_run_json(p)
        names = _listdir(p)
        found = {e: _trace_stat(os.path.join(p, e)) for e in names}  # each folder's trace, looked for once
        if run or any(found.values()):
            for e in names:
                sub = os.path.join(p, e)
                if e != "samplers" and (found[e] or re.fullmatch(r"(rank\d+|pid\d+)", e) and os.path.isdir(sub)):
                    add(_proc_task(sub, run, found[e] and found[e][0]), found[e] and found[e][1])
            return
        if _looks_like_proc(p):
            add(_proc_task(p, _read_run_json(os.path.dirname(os.path.normpath(p)))))
            return
        if depth < 2:
            for e in _listdir(p):
                sub = os.path.join(p, e)
                if os.path.isdir(sub) or (e.endswith(TRACE_SUFFIXES) and not (
                        e.endswith((".json", ".json.gz")) and not _looks_like_kineto(sub))):
                    walk(sub, depth + 1)

    for p in inputs:
        n = len(tasks) + len(failed)
        walk(os.path.abspath(p), 0)  # the workers may run elsewhere, in another folder
        if len(tasks) + len(failed) == n:
            failed.append({"path": p, "error": "no trace found (run folders, rank folders, trace.gtr, "
                                               "Kineto .json[.gz], nsys .sqlite/.nsys-rep)"})
    return tasks, failed


def _listdir(p):
    try:
        return sorted(os.listdir(p), key=lambda s: (len(s), s))
    except OSError:
        return []


def batches(tasks, workers=1, max_ranks=256, max_bytes=32 << 20, by_host=True):
    """Tasks grouped for one analyzer run each: ranks of one machine (by_host; without it, any: on one
    machine every file is at hand) and one format, at most
    `max_ranks` of them and `max_bytes` of input together (a larger rank is a batch of its own), and
    at least about four batches per worker so that the workers stay busy to the end."""
    n = len(tasks)
    per = max(1, min(max_ranks, -(-n // max(1, 4 * workers))))
    groups = {}
    for i, t in enumerate(tasks):
        t["index"] = i
        kind = "gtr" if ".gtr" in os.path.basename(t["path"]) else os.path.splitext(t["path"])[1]
        groups.setdefault((t.get("host") or "" if by_host else "", kind), []).append(t)
    out = []
    for g in groups.values():
        cur, size = [], 0
        for t in g:
            try:
                b = t["size"] if "size" in t else os.path.getsize(t["path"])
            except OSError:
                b = 0
            if cur and (len(cur) >= per or size + b > max_bytes):
                out.append(cur)
                cur, size = [], 0
            cur.append(t)
            size += b
        if cur:
            out.append(cur)
    return out
