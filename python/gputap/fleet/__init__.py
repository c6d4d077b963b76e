"""gputap.fleet — analyse the ranks of a large job on a Dask cluster, reduce them to one answer.

    from gputap import fleet
    res = fleet.analyze(["job/host0", "job/host1"], out="fleet-out", workers=4)
    res.ranks, res.iterations, res.collectives   # pandas DataFrames
    res.summary                                  # dict, as summary.json

One Dask task per rank runs the C analyzer on the worker that can read the rank's files (a
`LocalCluster` of `workers` processes by default, or an existing scheduler by address or scheduler
file).  The client reduces the per-rank results; see docs/fleet.md.  Needs the `fleet` extra:
`pip install 'gputap[fleet]'` (dask.distributed, pyarrow, pandas).
"""
import os
import socket
import sys
import time

MISSING_EXTRA = ("gputap fleet needs dask.distributed, pandas and pyarrow: pip install './python[fleet]' "
                 "(or pip install 'dask[distributed]' pandas pyarrow)")


def _require():
    try:
        import dask.distributed  # noqa: F401
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as e:
        raise ImportError("%s (%s)" % (MISSING_EXTRA, e)) from e


class FleetResult:
    def __init__(self, ranks, iterations, collectives, summary, out=None):
        self.ranks, self.iterations, self.collectives, self.summary, self.out = (ranks, iterations, collectives,
                                                                                 summary, out)


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


def _locality(client, tasks):
    """For each task, the workers on the machine named by its run.json (None: any worker)."""
    try:
        workers = client.scheduler_info(n_workers=-1)["workers"]
    except TypeError:
        workers = client.scheduler_info()["workers"]
    except Exception:  # noqa: BLE001 - locality is a hint only
        return [None] * len(tasks)
    by_host = {}
    for addr, w in workers.items():
        by_host.setdefault(w.get("host", ""), []).append(addr)
    cache, out = {}, []
    for t in tasks:
        h = t.get("host")
        if not h:
            out.append(None)
            continue
        if h not in cache:
            ips = _host_ips(h)
            cache[h] = [a for ip in ips for a in by_host.get(ip, [])] or None
        out.append(cache[h])
    return out


def analyze(inputs, out=None, scheduler=None, scheduler_file=None, workers=None, gputap=None, progress=sys.stderr,
            client=None):
    """Analyse many ranks.  Returns a FleetResult; writes ranks.parquet, iterations.parquet,
    collectives.parquet, summary.json, summary.txt and report.html into `out` when given."""
    _require()
    from dask.distributed import Client, LocalCluster, as_completed

    from gputap.fleet import inputs as inp
    from gputap.fleet import output, reduce
    from gputap.fleet.worker import analyze_rank, find_gputap

    tasks, failed = inp.expand(list(inputs))
    exe = find_gputap(gputap)
    t0 = time.time()
    own_cluster = None
    results = []
    if tasks:
        if client is None:
            if scheduler and scheduler_file:
                raise ValueError("give a scheduler address or a scheduler file, not both")
            if scheduler:
                client = Client(scheduler)
            elif scheduler_file:
                client = Client(scheduler_file=scheduler_file)
            else:
                n = workers or min(4, os.cpu_count() or 1)
                own_cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
                client = Client(own_cluster)
        try:
            where = _locality(client, tasks)
            futs = []
            for t, w in zip(tasks, where):
                kw = {"workers": w, "allow_other_workers": True} if w else {}
                futs.append(client.submit(analyze_rank, dict(t), exe, pure=False,
                                          key="gputap-rank-%s" % os.urandom(6).hex(), **kw))
            nfail = 0
            _progress(progress, 0, len(tasks), 0, t0)
            for fut in as_completed(futs):
                try:
                    r = fut.result()
                except Exception as e:  # noqa: BLE001 - a lost worker must not end the analysis
                    i = futs.index(fut)
                    r = {"path": tasks[i]["path"], "label": tasks[i]["label"], "error": "task failed: %s" % e}
                if "error" in r:
                    nfail += 1
                results.append(r)
                _progress(progress, len(results), len(tasks), nfail, t0)
            _progress(progress, len(results), len(tasks), nfail, t0, final=True)
        finally:
            if own_cluster is not None:
                client.close()
                own_cluster.close()
    order = {t["path"]: i for i, t in enumerate(tasks)}
    results.sort(key=lambda r: order.get(r["path"], 0))
    ranks, iters, colls, summary = reduce.reduce(results, failed)
    summary["inputs"] = list(inputs)
    summary["seconds"] = time.time() - t0
    res = FleetResult(ranks, iters, colls, summary, out)
    if out:
        output.write_all(res, out)
    return res
