"""gputap fleet against one `gputap analyze` of the same inputs, on generated jobs.

    python3 bench/fleet/run.py [--ranks 16,128,512,1024] [--workers 1,2] [--iterations 6]
                               [--extra 64x300x0,64x6x2000] [--repeat 2] [--before PYDIR]

Per job: written once as gputap run folders (8 ranks a machine, no plants); then, each in a fresh
process and REPEAT times (the best wall time kept): one `gputap analyze --format json
--collectives` of every rank's trace (what fleet needs of each rank), and `gputap fleet --workers
W -o DIR` (the C command: Python's start, the analyzer runs, the reduction, the files written).
Printed: wall times, the peak RSS of the single analyzer, of fleet's client process (the
client, where the worker threads wait for their analyzer processes) and of one fleet task's
analyzer (the largest batch of ranks fleet gives one analyzer run, measured alone); "start s" is
the start of a Python that imports numpy, pandas and pyarrow, measured beside each fleet run: the
fixed cost in fleet's time on a loaded machine.  --extra
RxIxK adds jobs of R ranks, I iterations, K more small kernels per iteration (long and heavy ranks).
--before PYDIR: also `gputap fleet` with the Python package found in PYDIR (an older version's
python/ folder, same gputap binary), interleaved with the current one: "before s" and its ratio.
The interpreter is this one (GPUTAP_PYTHON), as the `gputap` command pip installs sets it, not a
`python3` wrapper found on PATH.
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


def run_one(cmd, env):
    """Each measurement in a fresh wrapper process, so that RUSAGE_CHILDREN is this command's only."""
    code = ("import json, subprocess, sys, time, resource; t = time.time(); "
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
            "print(json.dumps({'rc': p.returncode, 'wall': time.time() - t, "
            "'rss': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, 'err': p.stderr.decode()[-300:]}))")
    cp = subprocess.run([sys.executable, "-c", code] + cmd, capture_output=True, text=True, env=env)
    r = json.loads(cp.stdout)
    if r["rc"]:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd[:2]), r["rc"], r["err"]))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="16,128,512,1024")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--extra", default="64x300x0,64x6x2000",
                    help="RxIxK,...: jobs of R ranks, I iterations, K extra kernels per iteration")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--before", metavar="PYDIR", help="an older python/ folder to run fleet with too")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GPUTAP_PYTHON=sys.executable)
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    env_before = dict(env, PYTHONPATH=os.path.abspath(a.before) + os.pathsep + os.environ.get("PYTHONPATH", "")) \
        if a.before else None
    sys.path.insert(0, os.path.join(REPO, "python"))
    from gputap.fleet import generate, inputs
    exe = os.path.abspath(os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap"))
    jobs = [(int(n), a.iterations, 0) for n in a.ranks.split(",") if n]
    jobs += [tuple(int(x) for x in e.split("x")) for e in a.extra.split(",") if e]
    workers = [int(w) for w in a.workers.split(",")]
    print("%6s %6s %6s %10s | %10s %10s | %8s %10s %8s %10s %10s %8s%s" % (
        "ranks", "iters", "kern", "MB traces", "analyze s", "MiB", "workers", "fleet s", "start s", "client MiB",
        "task MiB", "fleet/an", " | %9s %9s" % ("before s", "before/an") if env_before else ""))
    floor_cmd = [sys.executable, "-c", "import numpy, pandas, pyarrow, pyarrow.parquet"]
    t_all = time.time()
    for n, iters, kern in jobs:
        with tempfile.TemporaryDirectory() as d:
            job = os.path.join(d, "job")
            generate.write_gtr(job, ranks=n, gpus_per_host=8, iterations=iters, plants=False, kernels=kern)
            traces = sorted(os.path.join(dp, "trace.gtr") for dp, _, fs in os.walk(job) if "trace.gtr" in fs)
            size = sum(os.path.getsize(t) for t in traces) / 1e6
            an = [run_one([exe, "analyze", "--format", "json", "--collectives"] + traces, env) for _ in range(a.repeat)]
            best_an = min(x["wall"] for x in an)
            tasks, _ = inputs.expand([job])
            for w in workers:
                big = max(inputs.batches(tasks, w, by_host=False),
                          key=lambda b: sum(os.path.getsize(t["path"]) for t in b))
                task = run_one([exe, "analyze", "--format", "json", "--collectives"] + [t["path"] for t in big], env)
                fl, fb = [], []
                for k in range(a.repeat):
                    for e, acc in ((env, fl), (env_before, fb)):
                        if e is None:
                            continue
                        out = os.path.join(d, "out%d-%d-%d" % (w, k, len(acc)))
                        r = run_one([exe, "fleet", "--workers", str(w), "--quiet", "-o", out, job], e)
                        s = json.load(open(os.path.join(out, "summary.json")))
                        assert s["ranks"] == n, s["ranks"]
                        r.update(client=s["memory"]["client_peak_kib"])
                        acc.append(r)
                best = min(fl, key=lambda x: x["wall"])
                before = " | %9.3f %9.2f" % (min(x["wall"] for x in fb), min(x["wall"] for x in fb) / best_an) \
                    if fb else ""
                # what any Python command that reads with pandas and writes Parquet pays first, measured now
                floor = min(run_one(floor_cmd, env)["wall"] for _ in range(a.repeat))
                print("%6d %6d %6d %10.1f | %10.3f %10.1f | %8d %10.3f %8.3f %10.1f %10.1f %8.2f%s" % (
                    n, iters, kern, size, best_an, max(x["rss"] for x in an) / 1024, w, best["wall"], floor,
                    max(x["client"] for x in fl) / 1024, task["rss"] / 1024, best["wall"] / best_an, before),
                    flush=True)
    print("total bench time %.1f s" % (time.time() - t_all))


if __name__ == "__main__":
    main()
