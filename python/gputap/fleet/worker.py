"""The per-rank task: run the C analyzer on one rank's files, on the worker that can read them.

The analyzer (`gputap analyze --format json --collectives FILE`) runs as a child process: its memory
is bounded by one rank (it streams the trace and sorts externally), and the numbers are the
single-machine analyzer's own.  The task returns a small dict of plain lists, never raises: a rank
whose files are missing or broken comes back as {"error": ...}.
"""
import json
import os
import shutil
import subprocess
import time

WINDOW_KEYS = ("span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms", "overlap_ms", "exposed_comm_ms",
               "memop_ms", "kernel_sum_ms", "non_compute_ms")
COLL_KEYS = ("comm", "seq", "name", "algo", "proto", "count", "iteration", "start_ns", "end_ns", "launch_ns",
             "match", "device")


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


def analyze_rank(task, gputap=None, timeout=3600):
    """Analyse one rank.  task: a dict from inputs.expand()."""
    t0 = time.time()
    out = {"path": task["path"], "label": task["label"], "rank": task.get("rank"), "host": task.get("host"),
           "anchor_ns": task.get("anchor_ns")}
    exe = find_gputap(gputap)
    if not exe:
        out["error"] = ("the gputap command was not found on this worker (set GPUTAP, put gputap on PATH, "
                        "or pip install the gputap package there)")
        return out
    p = task["path"]
    if os.path.isdir(p):
        out["error"] = "no trace.gtr in this rank folder"
        return out
    if not os.path.exists(p):
        out["error"] = "no such file"
        return out
    try:
        cp = subprocess.run([exe, "analyze", "--format", "json", "--collectives", p], capture_output=True,
                            timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        out["error"] = "the analyzer could not run: %s" % e
        return out
    if cp.returncode != 0:
        msg = cp.stderr.decode("utf-8", "replace").strip().splitlines()
        msg = [m[len("gputap: error: "):] if m.startswith("gputap: error: ") else m for m in msg]
        out["error"] = "; ".join(msg[-3:]) or "the analyzer failed with status %d" % cp.returncode
        return out
    try:
        doc = json.loads(cp.stdout)
        res = doc["results"][0]
    except (ValueError, KeyError, IndexError) as e:
        out["error"] = "unreadable analyzer output: %s" % e
        return out
    tl = res.get("timeline") or {}
    gpus = []
    for g in tl.get("gpus") or []:
        gpus.append({
            "label": g["label"], "device": g["device"],
            "total": {k: g["total"][k] for k in WINDOW_KEYS},
            "first_ns": g["total"]["first_ns"], "last_ns": g["total"]["last_ns"],
            "iterations": [dict({k: w[k] for k in WINDOW_KEYS}, start_ns=w["start_ns"], first_ns=w["first_ns"],
                                last_ns=w["last_ns"]) for w in g.get("iterations") or []],
        })
    colls = res.get("collectives") or []
    out["gpus"] = gpus
    out["iteration_source"] = res.get("iteration_source")
    out["collectives"] = {k: [c[k] for c in colls] for k in COLL_KEYS}
    out["notes"] = res.get("notes") or []
    out["seconds"] = time.time() - t0
    out["worker_pid"] = os.getpid()
    if not gpus:
        out["skipped"] = "no GPU work in this process (e.g. a launcher)"
    return out
