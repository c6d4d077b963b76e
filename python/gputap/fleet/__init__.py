"""gputap.fleet — analyse the ranks of a large job on a Dask cluster, reduce them to one answer.

    from gputap import fleet
    res = fleet.analyze(["job/host0", "job/host1"], out="fleet-out", workers=4)
    res.ranks, res.iterations, res.collectives   # pandas DataFrames
    res.summary                                  # dict, as summary.json

One task per few ranks runs the C analyzer where the ranks' files can be read: on this machine,
`workers` analyzer processes at a time, by default; on a Dask cluster given by scheduler address,
scheduler file or client, on the worker of the ranks' machine.  The tasks return small tables of numpy
columns; the client concatenates them and reduces them with numpy column arithmetic (pandas is imported only
when a result's `ranks`, `iterations` or `collectives` DataFrame is asked for); see docs/fleet.md.  Needs the
`fleet` extra: `pip install 'gputap[fleet]'` (dask.distributed, pyarrow, pandas).
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
    as dicts of numpy columns; `summary`: the dict of summary.json; `out`: the folder written."""

    def __init__(self, tables, summary, out=None):
        self.tables, self.summary, self.out = tables, summary, out
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

    from gputap.fleet.worker import failed_batch

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
            for f in done:
                if f.status != "finished":
                    why = (str(f.exception()).strip().splitlines() or [""])[0]
                    got.append(failed_batch(futs[f], "task failed: %s" % why))
            for r in got:
                st = r["ranks"]["status"].tolist()
                ndone += len(st)
                nfail += st.count("failed")
                parts.append(r)
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


def _start_local(batches, n, exe, opts):
    """Start the batches on this machine, `n` analyzer processes at a time: they run while the caller
    imports numpy (and pyarrow's Parquet writer).  n + 1 threads wait for them, the processes bounded by a semaphore, so
    that one thread reads a finished batch's output while the next batch's analyzer runs."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from gputap.fleet.worker import analyze_batch

    gate = threading.BoundedSemaphore(n)
    ex = ThreadPoolExecutor(max_workers=n + 1)
    return ex, {ex.submit(analyze_batch, b, exe, opts, gate=gate): b for b in batches}


def _local(ex, futs, total, progress, t0):
    """The started batches' results, as they finish."""
    from concurrent.futures import as_completed

    from gputap.fleet.worker import failed_batch

    parts, ndone, nfail = [], 0, 0
    _progress(progress, 0, total, 0, t0)
    try:
        for f in as_completed(futs):
            try:
                r = f.result()
            except Exception as e:  # noqa: BLE001 - one batch's failure is its ranks' failure
                r = failed_batch(futs[f], "task failed: %s" % e)
            st = r["ranks"]["status"].tolist()
            ndone += len(st)
            nfail += st.count("failed")
            parts.append(r)
            _progress(progress, ndone, total, nfail, t0)
    finally:
        ex.shutdown(wait=True)
    _progress(progress, ndone, total, nfail, t0, final=True)
    return parts


def analyze(inputs, out=None, scheduler=None, scheduler_file=None, workers=None, gputap=None, progress=sys.stderr,
            client=None, nvtx=None, lost_after=None):
    """Analyse many ranks.  Returns a FleetResult; writes ranks.parquet, iterations.parquet,
    collectives.parquet, summary.json, summary.txt and report.html into `out` when given.  Raises
    FleetError when the cluster is lost before every rank was analysed."""
    local = client is None and not scheduler and not scheduler_file
    _require(dask=not local, load=False, files=bool(out))
    from gputap.fleet import inputs as inp
    from gputap.fleet.worker import analyze_batch, failed_batch, find_gputap

    if lost_after is None:
        lost_after = float(os.environ.get("GPUTAP_FLEET_LOST_AFTER") or 60)
    t0 = time.time()
    tasks, failed = inp.expand(list(inputs))
    exe = find_gputap(gputap)
    opts = ("--nvtx", nvtx) if nvtx else ()
    parts = []
    cluster = {"kind": "none"}
    started = None
    if tasks and local:
        # one machine: a Dask scheduler would add a second of start-up and nothing else; threads wait for
        # `workers` analyzer processes at a time, started before numpy and pyarrow are imported (time that
        # the analyzer then spends working)
        n = workers or min(4, os.cpu_count() or 1)
        started = _start_local(inp.batches(tasks, n, by_host=False), n, exe, opts)
        cluster = {"kind": "local", "workers": n}
    try:
        _load(files=bool(out))
    except ImportError:
        if started:
            started[0].shutdown(wait=True)
        raise
    from gputap.fleet import columns, output, reduce, worker

    if started:
        parts = _local(*started, len(tasks), progress, t0)
    elif tasks:
        from dask.distributed import Client

        made = client is None
        if scheduler and scheduler_file:
            raise ValueError("give a scheduler address or a scheduler file, not both")
        if client is not None:
            cluster = {"kind": "client", "address": getattr(client.scheduler, "address", "")}
        elif scheduler:
            client = Client(scheduler, timeout=30)
            cluster = {"kind": "scheduler", "address": scheduler}
        else:
            client = Client(scheduler_file=scheduler_file, timeout=30)
            cluster = {"kind": "scheduler", "address": client.scheduler.address}
        try:
            batches = inp.batches(tasks, max(1, _nworkers(client)))
            futs = {}
            for b, w in zip(batches, _locality(client, batches)):
                kw = {"workers": w, "allow_other_workers": True} if w else {}
                f = client.submit(analyze_batch, [dict(t) for t in b], exe, opts, pure=False,
                                  key="gputap-ranks-%s" % os.urandom(6).hex(), **kw)
                futs[f] = b
            parts = _gather(client, futs, len(tasks), progress, t0, lost_after)
        finally:
            if made:
                _close(client, None)
    if not parts:
        parts = [failed_batch([], "")]

    rk, it, co = (columns.concat([p[k] for p in parts], names, strs) for k, names, strs in (
        ("ranks", worker.RANK_FIELDS, ()), ("iterations", worker.ITER_FIELDS, ()),
        ("collectives", worker.COLL_FIELDS, worker.COLL_STR)))
    ranks, iters, colls, summary = reduce.reduce(tasks, rk, it, co, failed)
    summary["inputs"] = [os.path.abspath(p) for p in inputs]
    summary["cluster"] = cluster
    summary["tasks"] = len(parts) if tasks else 0
    summary["seconds"] = time.time() - t0
    import resource

    summary["memory"] = {"client_peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}
    res = FleetResult({"ranks": ranks, "iterations": iters, "collectives": colls}, summary, out)
    if out:
        output.write_all(res, out)
    return res
