"""finish(): stop recording and complete the run directory init(out_dir=...) started.

The tap writes DIR/<proc>/trace.gtr, metrics.log and timeline.log while the
program runs; finish() closes them, converts the trace (the nsys-compatible
CSVs and trace.json, with the bundled `gputap convert`), writes DIR/run.json
(the fields `gputap run` writes that an in-process start can know) and, unless
report=False, DIR/report.html (`gputap report`), so that `gputap analyze DIR`
and `gputap report DIR` read it as any run.
"""
import datetime
import fcntl
import getpass
import json
import os
import shlex
import socket
import subprocess
import sys
import time
import warnings

from . import _cli
from . import _core
from . import _lib

_t0 = {"ns": time.time_ns()}  # import time: the start when init() was not called


def _iso(ns):
    return datetime.datetime.fromtimestamp(ns / 1e9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _cli_path():
    exe = _cli.binary()
    if os.access(exe, os.X_OK):
        return exe
    lib = _lib.info().get("path")
    if lib:
        cand = os.path.join(os.path.dirname(lib), "gputap")
        if os.access(cand, os.X_OK):
            return cand
    return None


def _run_cli(args, warnings_out):
    exe = _cli_path()
    if exe is None:
        warnings_out.append("the gputap program was not found: %s not done" % " ".join(args[:1]))
        return False
    p = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if p.returncode != 0:
        msg = p.stderr.decode("utf-8", "replace").strip().splitlines()
        warnings_out.append("gputap %s: %s" % (args[0], msg[-1] if msg else "exit status %d" % p.returncode))
        return False
    return True


def run_json(out_dir, proc, start_ns, end_ns, warnings_list):
    """The run.json document of an in-process recording."""
    argv = list(sys.argv)
    procs = []
    for name in sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []:
        d = os.path.join(out_dir, name)
        if not os.path.isdir(d):
            continue
        if os.path.exists(os.path.join(d, "trace.gtr")):
            procs.append({"proc": name, "trace": name + "/trace.gtr", "partial": False})
        elif os.path.exists(os.path.join(d, "trace.gtr.partial")):
            procs.append({"proc": name, "trace": name + "/trace.gtr.partial", "partial": True})
    try:
        user = getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name is not an error
        user = None
    return {
        "gputap_version": "0.1.0",
        "run_json_version": 1,
        "recorded_by": "python",
        "command": " ".join(shlex.quote(a) for a in [sys.executable] + argv),
        "argv": [sys.executable] + argv,
        "exec_argv": [sys.executable] + argv,
        "cwd": os.getcwd(),
        "output_dir": out_dir,
        "host": socket.gethostname(),
        "user": user,
        "start": _iso(start_ns),
        "start_ns": start_ns,
        "end": _iso(end_ns),
        "end_ns": end_ns,
        "wall_s": round((end_ns - start_ns) / 1e9, 6),
        "finished": True,
        "exit_status": None,
        "signal": None,
        "gpus": [],
        "tap_library": _lib.info().get("path"),
        "tools": [{"name": "tap", "kind": "tap"}],
        "wrappers": [],
        "actions": [],
        "environment": {},
        "processes": procs,
        "warnings": list(warnings_list),
    }


def _merge(doc, path):
    """Several processes of one job finishing into one folder (each rank's init(out_dir=D)): the
    run.json another already wrote there spans them all: the earliest start, the latest end."""
    try:
        with open(path) as f:
            old = json.load(f)
    except (OSError, ValueError):
        return doc
    if not isinstance(old, dict) or old.get("recorded_by") != "python":
        return doc
    try:
        s, e = min(int(old["start_ns"]), doc["start_ns"]), max(int(old["end_ns"]), doc["end_ns"])
    except (KeyError, TypeError, ValueError):
        return doc
    doc.update(start=_iso(s), start_ns=s, end=_iso(e), end_ns=e, wall_s=round((e - s) / 1e9, 6))
    return doc


def _write_json(out_dir, doc):
    tmp = os.path.join(out_dir, ".run.json.%d.tmp" % os.getpid())
    try:
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        os.replace(tmp, os.path.join(out_dir, "run.json"))
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        warnings.warn("gputap.finish: %s/run.json not written: %s" % (out_dir, e), RuntimeWarning, stacklevel=3)


def _locked(out_dir):
    """An exclusive lock on the run folder itself (flock on its descriptor: no file added), so that
    the processes of a job finishing into one folder write its run.json and report.html one at a
    time; None where the file system refuses it (then each still writes whole files)."""
    try:
        fd = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd


def finish(report=True):
    """Stop recording; complete the run directory of init(out_dir=...) if any.

    Returns the run directory (None when init() was given none).  Ranges and
    results() stay usable; nothing more is recorded after this.  The processes
    of one job may share the folder (each rank's init(out_dir=D)): each adds its
    own process, and run.json then spans them all.
    """
    st = _core.state()
    lib = _lib.load()
    out_dir = st.get("out_dir")
    start_ns = st.get("start_ns") or _t0["ns"]
    if lib is not None and hasattr(lib, "gputap_stop"):
        lib.gputap_stop()
    if not out_dir:
        return None
    warns = []
    proc = None
    try:
        proc = json.loads(_core.results_json(flush_first=False)).get("proc")
    except (ValueError, _core.GputapError):
        pass
    target = os.path.join(out_dir, proc) if proc and os.path.isdir(os.path.join(out_dir, proc)) else out_dir
    _run_cli(["convert", target], warns)
    end_ns = time.time_ns()
    lock = _locked(out_dir)
    try:
        doc = _merge(run_json(out_dir, proc, start_ns, end_ns, warns), os.path.join(out_dir, "run.json"))
        _write_json(out_dir, doc)
        if report:
            _run_cli(["report", out_dir], warns)
        if warns:
            doc["warnings"] = warns
            _write_json(out_dir, doc)
    finally:
        if lock is not None:
            os.close(lock)
    return out_dir
