"""gputap.fleet — analyse the ranks of a large job on a Dask cluster, reduce them to one answer.

    from gputap import fleet
    res = fleet.analyze(["job/host0", "job/host1"], out="fleet-out", workers=4)
    res.ranks, res.iterations, res.collectives   # pandas DataFrames
    res.summary                                  # dict, as summary.json

The analysis is the gputap command's, in C (docs/fleet.md): on this machine one `gputap fleet --result`
(`workers` analyzer processes at a time); on a Dask cluster given by scheduler address, scheduler file or
client, `gputap fleet --plan` here, one `gputap fleet --task` per few ranks on the worker of the ranks'
machine, and `gputap fleet --reduce` here over the rows they return.  This package holds the cluster,
the tables as numpy columns and pandas DataFrames (pandas imported only when a DataFrame is asked for),
the Parquet files and report.html.  Needs the `fleet` extra: `pip install 'gputap[fleet]'`
(dask.distributed, pyarrow, pandas).
"""
import os
import socket
import sys
import time

MISSING_EXTRA = ("gputap fleet needs numpy, pyarrow (for -o) and dask.distributed (for a cluster): pip install "
                 "'./python[fleet]' (or pip install numpy pyarrow 'dask[distributed]')")


def _require(dask=True, load=True, files=True):
    """The modules this analysis needs are there (found, not imported: importing dask alone takes half a
    second): numpy always, pyarrow when files are written, dask.distributed for a cluster; with `load`,
    imported too (analyze() imports them itself, once the analyzer processes run)."""
    import importlib.util

    for m in ("numpy",) + (("pyarrow",) if files else ()) + (("dask", "distributed") if dask else ()):
        try:
            found = importlib.util.find_spec(m) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ImportError("%s (No module named '%s')" % (MISSING_EXTRA, m))
    if load:
        _load(files)


def _load(files=False):
    """Import numpy, and pyarrow's Parquet writer when files are written (a tenth of a second each;
    pandas, half a second, only when a DataFrame is asked for)."""
    try:
        import numpy  # noqa: F401
        if files:
            import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        raise ImportError("%s (%s)" % (MISSING_EXTRA, e)) from e


class FleetError(RuntimeError):
    """The analysis could not finish: the cluster was lost, or it has no workers left."""


class FleetResult:
    """`ranks`, `iterations`, `collectives`: pandas DataFrames (made on first use); `tables`: the same
    as dicts of numpy columns; `summary`: the dict of summary.json; `text`: the text summary that
    `gputap fleet` prints, `headline` its first line; `out`: the folder written."""

    def __init__(self, tables, summary, out=None, text="", headline=""):
        self.tables, self.summary, self.out = tables, summary, out
        self.text, self.headline = text, headline
        self._frames = {}

    def _frame(self, name):
        if name not in self._frames:
            from gputap.fleet.columns import frame

            self._frames[name] = frame(self.tables[name])
        return self._frames[name]

    ranks = property(lambda self: self._frame("ranks"), doc="one row per rank (pandas DataFrame)")
    iterations = property(lambda self: self._frame("iterations"), doc="one row per rank and iteration")
    collectives = property(lambda self: self._frame("collectives"), doc="one row per collective")


def _progress(stream, done, total, failed, t0, final=False):
    if stream is None:
        return
    msg = "gputap fleet: %d/%d ranks analysed" % (done, total)
    if failed:
        msg += ", %d failed" % failed
    msg += " (%.1f s)" % (time.time() - t0)
    if getattr(stream, "isatty", lambda: False)():
        stream.write("\r" + msg + ("\n" if final else ""))
    elif final or (done < total and done % max(1, total // 10) == 0):
        stream.write(msg + "\n")
    stream.flush()


def _host_ips(name):
    try:
        return {ai[4][0] for ai in socket.getaddrinfo(name, None)}
    except (OSError, UnicodeError):
        return set()


def _locality(client, batches, timeout=5.0):
    """For each batch, the workers on the machine its run.json names (None: any worker).  Host names
    are looked up all at once, in threads, for at most `timeout` seconds together: a name that does
    not resolve in time only loses its locality hint."""
    from concurrent.futures import ThreadPoolExecutor, wait as fwait

    try:
        workers = client.scheduler_info(n_workers=-1)["workers"]
    except TypeError:
        workers = client.scheduler_info()["workers"]
    except Exception:  # noqa: BLE001 - locality is a hint only
        return [None] * len(batches)
    by_host = {}
    for addr, w in workers.items():
        by_host.setdefault(w.get("host", ""), []).append(addr)
    names = sorted({b[0].get("host") for b in batches if b[0].get("host")} - set(by_host))
    ips = {}
    if names:
        ex = ThreadPoolExecutor(max_workers=min(32, len(names)))
        futs = {ex.submit(_host_ips, n): n for n in names}
        done, _ = fwait(futs, timeout=timeout)
        ex.shutdown(wait=False)
        ips = {futs[f]: f.result() for f in done}
    out = []
    for b in batches:
        h = b[0].get("host")
        if not h:
            out.append(None)
        elif h in by_host:
            out.append(by_host[h])
        else:
            out.append([a for ip in ips.get(h, ()) for a in by_host.get(ip, [])] or None)
    return out


def _nworkers(client):
    try:
        return len(client.scheduler_info(n_workers=-1)["workers"])
    except TypeError:
        return len(client.scheduler_info()["workers"])


def _gather(client, futs, total, progress, t0, lost_after):
    """The tasks' results as they finish, fetched together; each future released once fetched.  Ends
    with FleetError when the scheduler is lost or no worker is left for `lost_after` seconds."""
    from dask.distributed import wait

    parts, ndone, nfail = [], 0, 0
    pending = set(futs)
    alone_since = None
    _progress(progress, 0, total, 0, t0)
    while pending:
        try:
            done = wait(list(pending), timeout=1.0, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            done = set()
        except Exception as e:  # noqa: BLE001 - the scheduler went away
            why = [x for x in str(e).splitlines() if x.startswith("Message:")] or str(e).splitlines()[:1] or [""]
            raise FleetError("lost the Dask scheduler (%d of %d ranks analysed): %s" % (
                ndone, total, why[0].replace("Message: ", ""))) from e
        if done:
            ok = [f for f in done if f.status == "finished"]
            try:
                got = client.gather(ok) if ok else []
            except Exception as e:  # noqa: BLE001
                raise FleetError("lost the Dask scheduler while fetching results: %s" % e) from e
            got = list(zip(ok, got))
            for f in done:
                if f.status != "finished":
                    why = (str(f.exception()).strip().splitlines() or [""])[0]
                    got.append((f, {"rows": b"", "ranks": len(futs[f]), "failed": len(futs[f]),
                                    "error": "task failed: %s" % why}))
            for f, r in got:
                ndone += r["ranks"]
                nfail += r["failed"]
                parts.append((futs[f], r))
            for f in done:
                pending.discard(f)
                del futs[f]
                f.release()
            _progress(progress, ndone, total, nfail, t0)
            alone_since = None
            continue
        if client.status not in ("running", "connecting"):
            raise FleetError("lost the Dask scheduler (client %s); %d of %d ranks analysed" % (
                client.status, ndone, total))
        if _nworkers(client) == 0:
            alone_since = alone_since or time.time()
            if time.time() - alone_since > lost_after:
                raise FleetError("the Dask cluster has had no worker for %.0f s; %d of %d ranks analysed, %d "
                                 "waiting" % (lost_after, ndone, total, total - ndone))
        else:
            alone_since = None
    _progress(progress, ndone, total, nfail, t0, final=True)
    return parts


def _close(client, cluster):
    """Close what analyze() opened; a lost scheduler makes the client log tracebacks while closing."""
    import logging

    lg = logging.getLogger("distributed")
    was = lg.level
    if client.status != "running":
        lg.setLevel(logging.CRITICAL + 1)
    try:
        client.close(timeout=10)
        if cluster is not None:
            cluster.close()
    except Exception:  # noqa: BLE001 - closing what is already gone
        pass
    finally:
        lg.setLevel(was)


def _command(exe, args, stdin=None, progress=None):
    """Run `gputap fleet ARGS`; its stdout.  Its progress lines go to `progress`: the process's own
    stderr as they are, another stream line by line as they come; None asks it to be quiet."""
    import subprocess
    import threading

    cmd = [exe, "fleet"] + (["--quiet"] if progress is None else []) + args
    inherit = progress is sys.stderr
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=None if inherit else subprocess.PIPE)
    except OSError as e:
        raise FleetError("%s fleet %s could not run: %s" % (exe, args[0], e)) from e
    got = {}

    def feed():  # stdin and stdout in a thread: the progress is read here as it comes
        try:
            got["out"] = p.communicate(stdin)[0] if inherit else _out_only(p, stdin)
        except (OSError, ValueError) as e:
            got["error"] = e

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    err = []
    if not inherit:
        for raw in iter(p.stderr.readline, b""):
            line = raw.decode("utf-8", "replace")
            err.append(line.rstrip("\n"))
            if progress is not None and line.startswith("gputap fleet: ") and "ranks analysed" in line:
                progress.write(line)
                progress.flush()
        p.stderr.close()
    t.join()
    rc = p.wait()
    out = got.get("out") or b""
    if rc != 0 or not out:
        msg = [e for e in err if "ranks analysed" not in e]
        raise FleetError("%s fleet %s failed (status %d)%s" % (exe, args[0], rc,
                                                               (": " + "; ".join(msg[-3:])) if msg else ""))
    return out


def _out_only(p, stdin):
    """Write stdin and read all of stdout (stderr is read by the caller)."""
    if stdin:
        try:
            p.stdin.write(stdin)
        except BrokenPipeError:
            pass
    p.stdin.close()
    out = p.stdout.read()
    p.stdout.close()
    return out


def analyze(inputs, out=None, scheduler=None, scheduler_file=None, workers=None, gputap=None, progress=sys.stderr,
            client=None, nvtx=None, lost_after=None):
    """Analyse many ranks.  Returns a FleetResult; writes ranks.parquet, iterations.parquet,
    collectives.parquet, summary.json, summary.txt and report.html into `out` when given.  Raises
    FleetError when the cluster is lost before every rank was analysed."""
    import json
    import tempfile

    local = client is None and not scheduler and not scheduler_file
    _require(dask=not local, load=False, files=bool(out))
    from gputap.fleet.worker import analyze_batch, find_gputap

    if lost_after is None:
        lost_after = float(os.environ.get("GPUTAP_FLEET_LOST_AFTER") or 60)
    t0 = time.time()
    exe = find_gputap(gputap)
    if not exe:
        raise FleetError("the gputap command was not found (set GPUTAP, put gputap on PATH, or pip install gputap)")
    opts = ["--nvtx", nvtx] if nvtx else []
    paths = [str(p) for p in inputs]  # as given: the command names an input that is not there as given
    if local:
        # one machine: the command does it all; a Dask scheduler would add a second of start-up and nothing else
        n = workers or min(4, os.cpu_count() or 1)
        raw = _command(exe, ["--result", "--workers", str(n), "--gputap", exe] + opts + ["--"] + paths,
                       progress=progress)
    else:
        from dask.distributed import Client

        if scheduler and scheduler_file:
            raise ValueError("give a scheduler address or a scheduler file, not both")
        made = client is None
        if client is not None:
            cluster = {"kind": "client", "address": getattr(client.scheduler, "address", "")}
        elif scheduler:
            client = Client(scheduler, timeout=30)
            cluster = {"kind": "scheduler", "address": scheduler}
        else:
            client = Client(scheduler_file=scheduler_file, timeout=30)
            cluster = {"kind": "scheduler", "address": client.scheduler.address}
        try:
            plan = json.loads(_command(exe, ["--plan", "--by-host", "--workers", str(max(1, _nworkers(client))),
                                             "--"] + paths))
            tasks = plan["tasks"]
            batches = [[tasks[i] for i in b] for b in plan.pop("batches")]
            futs = {}
            for b, w in zip(batches, _locality(client, batches)):
                kw = {"workers": w, "allow_other_workers": True} if w else {}
                f = client.submit(analyze_batch, b, exe, opts, pure=False,
                                  key="gputap-ranks-%s" % os.urandom(6).hex(), **kw)
                futs[f] = b
            parts = _gather(client, futs, len(tasks), progress, t0, lost_after) if tasks else []
        finally:
            if made:
                _close(client, None)
        for b, r in parts:
            if r.get("error"):
                for t in b:
                    tasks[t["index"]]["lost"] = r["error"]
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="gputap-fleet-plan-") as pf:
            json.dump(plan, pf)
            pf.flush()
            raw = _command(exe, ["--reduce", pf.name], stdin=b"".join(r["rows"] for _, r in parts))
    _load(files=bool(out))
    from gputap.fleet import output
    from gputap.fleet.columns import parse_result

    tables, summary, headline, text = parse_result(raw)
    if not local:
        summary["inputs"] = [os.path.abspath(p) for p in paths]
        summary["cluster"] = cluster
        summary["tasks"] = len(parts)
    summary["seconds"] = time.time() - t0
    import resource

    summary["memory"] = {"client_peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}
    res = FleetResult(tables, summary, out, text=text, headline=headline)
    if out:
        output.write_all(res, out)
    return res
