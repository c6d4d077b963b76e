"""gputap fleet against HTA's multi-rank load, on generated jobs of 8, 64 and 512 ranks.

    python3 bench/fleet/run.py [--ranks 8,64,512] [--workers 2] [--iterations 6]

Per size: the job is written once as PyTorch-profiler traces (rank<R>.json.gz, what both read);
then, each in a fresh process, `gputap fleet` (a LocalCluster of --workers processes, one task
per rank) and HTA's TraceAnalysis(trace_dir=...) followed by get_temporal_breakdown().  Printed:
wall time, peak memory of the largest process (per worker for gputap fleet: the worker process
and the largest analyzer it ran; for HTA: the main process and its pool), and the ratios.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))

FLEET = r'''
import json, resource, sys, time
from dask.distributed import Client, LocalCluster
from gputap import fleet
d, workers, exe = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
client = Client(cluster)
t0 = time.time()
res = fleet.analyze([d], client=client, gputap=exe, progress=None)
t = time.time() - t0
def rss():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
w = client.run(rss)
import os, subprocess
def hwm(path):  # the analyzer's own peak (VmHWM), polled while it runs
    p = subprocess.Popen([exe, "analyze", "--format", "json", "--collectives", path], stdout=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        try:
            for line in open("/proc/%d/status" % p.pid):
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.001)
    return peak
big = max((os.path.join(d, f) for f in os.listdir(d)), key=os.path.getsize)
an = max(hwm(big) for _ in range(3))
client.close(); cluster.close()
print(json.dumps({"seconds": t, "ranks": res.summary["ranks"], "worker_rss_kib": max(v[0] for v in w.values()),
                  "analyzer_rss_kib": an,
                  "client_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "slow": res.summary["slow_ranks"][0]["rank"] if res.summary["slow_ranks"] else None}))
'''

HTA = r'''
import json, resource, sys, time, logging
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
d = sys.argv[1]
t0 = time.time()
a = TraceAnalysis(trace_dir=d)
tb = a.get_temporal_breakdown(visualize=False)
t = time.time() - t0
print(json.dumps({"seconds": t, "ranks": int(len(tb)),
                  "main_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "pool_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
'''


def run(code, args, env):
    cp = subprocess.run([sys.executable, "-c", code] + args, capture_output=True, text=True, env=env, timeout=3600)
    if cp.returncode:
        return {"error": cp.stderr.strip().splitlines()[-1] if cp.stderr.strip() else "exit %d" % cp.returncode}
    return json.loads(cp.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="8,64,512")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=6)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sys.path.insert(0, os.path.join(REPO, "python"))
    from gputap.fleet import generate
    exe = os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap")
    print("%6s %10s %10s %12s %12s %12s %12s %8s %8s" % ("ranks", "MB traces", "fleet s", "worker MiB", "analyzer MiB",
                                                        "HTA s", "HTA MiB", "time x", "mem x"))
    for n in [int(x) for x in a.ranks.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            generate.write_kineto(d, ranks=n, gpus_per_host=8, iterations=a.iterations, write_truth=False)
            size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) / 1e6
            f = run(FLEET, [d, str(a.workers), exe], env)
            h = run(HTA, [d], env)
            fm = (f.get("worker_rss_kib", 0) + f.get("analyzer_rss_kib", 0)) / 1024  # a worker and its analyzer
            hm = max(h.get("main_rss_kib", 0), h.get("pool_rss_kib", 0)) / 1024
            print("%6d %10.1f %10.2f %12.1f %12.1f %12s %12s %8s %8s   %s" % (
                n, size, f.get("seconds", float("nan")), f.get("worker_rss_kib", 0) / 1024,
                f.get("analyzer_rss_kib", 0) / 1024, "%.2f" % h["seconds"] if "seconds" in h else "failed",
                "%.1f" % hm if "seconds" in h else "-",
                "%.2f" % (h["seconds"] / f["seconds"]) if "seconds" in h and "seconds" in f else "-",
                "%.2f" % (hm / fm) if "seconds" in h and fm else "-",
                json.dumps({"fleet": f, "hta": h})), flush=True)


if __name__ == "__main__":
    main()
