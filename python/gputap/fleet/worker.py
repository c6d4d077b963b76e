"""The task: one batch of ranks analysed where their files are, by the C command.

`gputap fleet --task` reads the batch's tasks (JSON, from `gputap fleet --plan`) and runs
`gputap analyze --format columns --collectives` over them as a child process (its memory bounded by
the largest rank of the batch: it streams the trace and sorts externally), takes out an input the
analyzer refuses and runs the rest again, and writes the batch's rows (docs/fleet.md "rows"): per
rank its status and numbers, per iteration, per collective.  The worker returns those bytes as they
are; the client hands every batch's rows to `gputap fleet --reduce`.  Nothing here parses or
computes: one implementation, in C, for this machine and for a cluster.
"""
import contextlib
import json
import os
import shutil
import subprocess
import time


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



ROWS_MAGIC = b"gputap-fleet-rows 1\n"


def _statuses(rows):
    """(ranks, failed) of a rows block list (the ranks table's second column: 1 = failed)."""
    import array

    n = failed = pos = 0
    while pos < len(rows):
        if not rows.startswith(ROWS_MAGIC, pos):
            break
        nl = rows.index(b"\n", pos + len(ROWS_MAGIC))
        hdr = json.loads(rows[pos + len(ROWS_MAGIC):nl])
        t = hdr["tables"]
        k = int(t["ranks"]["rows"])
        st = array.array("q")
        st.frombytes(rows[nl + 1 + 8 * k:nl + 1 + 16 * k])
        n += k
        failed += sum(1 for x in st if x == 1)
        pos = nl + 1 + 8 * sum(int(t[x]["rows"]) * len(t[x]["columns"]) for x in ("ranks", "iterations", "collectives"))
    return n, failed


def analyze_batch(tasks, gputap=None, opts=(), timeout=3600, gate=None):
    """Analyse one batch of ranks (task dicts of `gputap fleet --plan`, with their "index").  Returns
    {"rows": the batch's rows (bytes), "ranks", "failed", "seconds", "pid"}; never raises: what went
    wrong is a failed rank in the rows, or "error" when the command itself could not run."""
    t0 = time.time()
    exe = find_gputap(gputap)
    out = {"rows": b"", "ranks": len(tasks), "failed": len(tasks), "seconds": 0.0, "pid": os.getpid(), "error": None}
    if not exe:
        out["error"] = ("the gputap command was not found on this worker (set GPUTAP, put gputap on PATH, or pip "
                        "install the gputap package there)")
        return out
    plan = json.dumps({"tasks": list(tasks), "failed": []}).encode()
    try:
        with gate or contextlib.nullcontext():
            cp = subprocess.run([exe, "fleet", "--task", *opts], input=plan, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        out["error"] = "gputap fleet --task could not run: %s" % e
        return out
    if cp.returncode != 0 or not cp.stdout.startswith(ROWS_MAGIC):
        msg = cp.stderr.decode("utf-8", "replace").strip().splitlines()
        out["error"] = ("; ".join(msg[-3:]) or "gputap fleet --task failed with status %d" % cp.returncode)
        if cp.returncode == 2:
            out["error"] = "%s does not run fleet tasks: a gputap older than this package (%s)" % (exe, out["error"])
        return out
    out["rows"] = cp.stdout
    out["ranks"], out["failed"] = _statuses(cp.stdout)
    out["seconds"] = time.time() - t0
    return out
