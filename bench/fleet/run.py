"""gputap fleet against one `gputap analyze` of the same inputs, on generated jobs.

    python3 bench/fleet/run.py [--ranks 16,128,512,1024] [--workers 1,2] [--iterations 6]
                               [--extra 256x300x0,64x6x2000] [--repeat 7] [--before PYDIR]

Per job: written once as gputap run folders (8 ranks a machine, no plants); then REPEAT rounds,
each measurement in a fresh process and the modes interleaved within a round: one `gputap analyze`
of every rank's trace (the user's command, text output), one `gputap analyze --format json
--collectives` (what fleet once read of each rank), and `gputap fleet --workers W` for each W, without
and with `-o DIR` (the C command: Python's start, the analyzer runs, the reduction, the summary; with
-o the Parquet files and report too).  Printed per job and mode: the median wall time, min-max, the
ratio of medians to the text analyze, the peak RSS of the largest process of the mode's tree and,
for fleet with -o, of its client process (summary.json); then one fleet task's analyzer run alone
(the largest batch of ranks, what bounds a worker's memory); "floor" is a Python start that imports numpy (what fleet's client pays before any work).
--extra RxIxK adds jobs of R ranks, I iterations, K more small kernels per iteration (long and heavy
ranks).  --before PYDIR: also `python -m gputap.fleet -o` with the Python package found in PYDIR
(an older python/ folder, same gputap binary), interleaved (not through the C command, which puts
this tree's package first on the path).  The interpreter is this one (GPUTAP_PYTHON), as
the `gputap` command pip installs sets it, not a `python3` wrapper found on PATH.
"""
import argparse
import json
import os
import statistics
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
    ap.add_argument("--extra", default="256x300x0,64x6x2000",
                    help="RxIxK,...: jobs of R ranks, I iterations, K extra kernels per iteration")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--before", metavar="PYDIR", help="an older python/ folder to run fleet with too")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GPUTAP_PYTHON=sys.executable)
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    env_before = dict(env, PYTHONPATH=os.path.abspath(a.before) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                      GPUTAP=os.path.abspath(os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap"))) \
        if a.before else None
    sys.path.insert(0, os.path.join(REPO, "python"))
    from gputap.fleet import generate
    exe = os.path.abspath(os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap"))
    jobs = [(int(n), a.iterations, 0) for n in a.ranks.split(",") if n]
    jobs += [tuple(int(x) for x in e.split("x")) for e in a.extra.split(",") if e]
    workers = [int(w) for w in a.workers.split(",")]
    floor_cmd = [sys.executable, "-c", "import numpy"]
    t_all = time.time()
    print("%-22s %-14s %9s %17s %8s %10s %10s" % ("job (ranks x iters +k)", "mode", "median s", "min-max s",
                                                     "/analyze", "peak MiB", "client MiB"))
    for n, iters, kern in jobs:
        with tempfile.TemporaryDirectory() as d:
            job = os.path.join(d, "job")
            generate.write_gtr(job, ranks=n, gpus_per_host=8, iterations=iters, plants=False, kernels=kern)
            traces = sorted(os.path.join(dp, "trace.gtr") for dp, _, fs in os.walk(job) if "trace.gtr" in fs)
            modes = [("analyze", [exe, "analyze"] + traces, env),
                     ("analyze json", [exe, "analyze", "--format", "json", "--collectives"] + traces, env)]
            for w in workers:
                modes.append(("fleet w%d" % w, [exe, "fleet", "--workers", str(w), "--quiet", job], env))
                modes.append(("fleet -o w%d" % w, [exe, "fleet", "--workers", str(w), "--quiet", "-o", "OUT", job],
                              env))
                if env_before:  # through -m: the C command puts the build tree's package first on the path
                    modes.append(("before -o w%d" % w, [sys.executable, "-m", "gputap.fleet", "--workers", str(w),
                                                        "--quiet", "-o", "OUT", job], env_before))
            modes.append(("floor (numpy)", floor_cmd, env))
            got = {m[0]: [] for m in modes}
            for k in range(a.repeat):
                for name, cmd, e in modes:
                    out = os.path.join(d, "out-%s-%d" % (name.replace(" ", "_"), k))
                    r = run_one([out if x == "OUT" else x for x in cmd], e)
                    if "OUT" in cmd:
                        s = json.load(open(os.path.join(out, "summary.json")))
                        assert s["ranks"] == n, s["ranks"]
                        r["client"] = s["memory"]["client_peak_kib"]
                    got[name].append(r)
            base = statistics.median(x["wall"] for x in got["analyze"])
            label = "%d x %d%s" % (n, iters, " +%d" % kern if kern else "")
            for name, _, _ in modes:
                w = [x["wall"] for x in got[name]]
                med = statistics.median(w)
                cl = [x["client"] for x in got[name] if "client" in x]
                print("%-22s %-14s %9.3f %8.3f-%-8.3f %8.2f %10.1f %10s" % (
                    label, name, med, min(w), max(w), med / base, max(x["rss"] for x in got[name]) / 1024,
                    "%.1f" % (max(cl) / 1024) if cl else "-"), flush=True)
            # one fleet task's analyzer alone: the largest batch of 2 workers' split (what bounds a worker)
            plan = json.loads(subprocess.run([exe, "fleet", "--plan", "--workers", "2", job], capture_output=True,
                                             check=True).stdout)
            tasks = plan["tasks"]
            big = max(([tasks[i] for i in b] for b in plan["batches"]),
                      key=lambda b: sum(os.path.getsize(t["path"]) for t in b))
            r = run_one([exe, "analyze", "--format", "columns", "--collectives"] + [t["path"] for t in big], env)
            print("%-22s %-14s %9.3f %17s %8s %10.1f %10s" % (label, "task (%d ranks)" % len(big), r["wall"], "", "",
                                                                r["rss"] / 1024, "-"), flush=True)
    print("total bench time %.1f s" % (time.time() - t_all))


if __name__ == "__main__":
    main()
