#!/usr/bin/env python3
"""Range metrics against Nsight Compute: wall time of the whole process, side by side.

  bench.py --gputap PATH --prog PATH [--runs 5] [--out FILE]

Three workloads of tests/gpu/rm_prog (--flat: every range holds per x 3
kernels on two streams, 1M floats each, 20 NVTX ranges "iter"):
  per range   20 x 150 = 3,000 kernels, the pair gpu__time_duration.sum,smsp__inst_executed.sum:
              no tool | gputap per-range | ncu --replay-mode app-range | ncu --replay-mode range
  per kernel  20 x 150 = 3,000 kernels (--kernel-per), the pair: no tool | gputap per-kernel | ncu (kernel replay)
  multi-pass  20 x 3 = 60 kernels, five metrics (8 passes on an H100): no tool | gputap | ncu
ncu runs with its defaults (clocks locked to base, caches flushed between passes), as users
run it.  Modes are interleaved round by round; each cell is the median of --runs runs, with
the spread (min-max).  Per-kernel cost = (median wall - median wall without a tool) / kernels.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

PAIR = "gpu__time_duration.sum,smsp__inst_executed.sum"
FIVE = PAIR + ",dram__bytes_read.sum,dram__bytes_write.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed"


def run(cmd, tmp):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp)
    t = time.perf_counter() - t0
    if p.returncode != 0:
        sys.stderr.write("FAILED (%d): %s\n%s\n" % (p.returncode, " ".join(cmd), p.stderr.decode()[-2000:]))
        return None
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gputap", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="range,kernel,multipass")
    ap.add_argument("--kernel-per", type=int, default=50,
                    help="kernels per range / 3 of the per-kernel workload (50: 3,000 kernels in 20 ranges)")
    ap.add_argument("--kernel-runs", type=int, default=0, help="runs of the per-kernel workload (default --runs)")
    ap.add_argument("--multipass-per", type=int, default=1,
                    help="kernels per range / 3 of the five-metric workload (1: 61 kernels; 5: 301)")
    ap.add_argument("--extra", action="store_true",
                    help="also: gputap without range metrics, per range without the config image cache, "
                         "per kernel with user replay (GPUTAP_METRICS_REPLAY=user)")
    a = ap.parse_args()
    G, P = a.gputap, a.prog
    nvtx = ["--nvtx", "--nvtx-include", "iter/"]
    work = {
        "range": (["--flat", "--iters", "20", "--per", "50"], 3001, [
            ("no tool", []),
            ("gputap per-range", [G, "run", "-o", "{o}", "--tools", "range_metrics", "--metrics", PAIR,
                                  "--metrics-mode", "range", "--"]),
            ("ncu app-range", ["ncu", "--replay-mode", "app-range"] + nvtx + ["--metrics", PAIR]),
            ("ncu range", ["ncu", "--replay-mode", "range"] + nvtx + ["--metrics", PAIR]),
        ]),
        "kernel": (["--flat", "--iters", "20", "--per", str(a.kernel_per)], 20 * 3 * a.kernel_per + 1, [
            ("no tool", []),
            ("gputap per-kernel", [G, "run", "-o", "{o}", "--tools", "range_metrics", "--metrics", PAIR,
                                   "--metrics-mode", "kernel", "--"]),
            ("ncu kernel replay", ["ncu", "--metrics", PAIR]),
        ]),
        "multipass": (["--flat", "--iters", "20", "--per", str(a.multipass_per)], 20 * 3 * a.multipass_per + 1, [
            ("no tool", []),
            ("gputap per-kernel", [G, "run", "-o", "{o}", "--tools", "range_metrics", "--metrics", FIVE,
                                   "--metrics-mode", "kernel", "--"]),
            ("ncu kernel replay", ["ncu", "--metrics", FIVE]),
        ]),
    }
    if a.extra:
        work["range"][2].append(("gputap, no metrics", [G, "run", "-o", "{o}", "--tools", "api_trace", "--"]))
        work["range"][2].append(("gputap range, no cache", ["env", "GPUTAP_METRICS_CACHE=0", G, "run", "-o", "{o}",
                                                            "--tools", "range_metrics", "--metrics", PAIR,
                                                            "--metrics-mode", "range", "--"]))
        work["kernel"][2].append(("gputap user replay", ["env", "GPUTAP_METRICS_REPLAY=user", G, "run", "-o", "{o}",
                                                         "--tools", "range_metrics", "--metrics", PAIR,
                                                         "--metrics-mode", "kernel", "--"]))
    results = {}
    for name in a.only.split(","):
        args, kernels, modes = work[name]
        times = {m: [] for m, _ in modes}
        runs = a.kernel_runs if name == "kernel" and a.kernel_runs else a.runs
        for r in range(runs):
            for m, pre in modes:
                with tempfile.TemporaryDirectory() as tmp:
                    cmd = [c.replace("{o}", tmp + "/run") for c in pre] + [P] + args
                    t = run(cmd, tmp)
                if t is not None:
                    times[m].append(t)
                print("# %s round %d: %-24s %s" % (name, r + 1, m, "%.3f s" % t if t is not None else "failed"),
                      flush=True)
        base = statistics.median(times["no tool"]) if times["no tool"] else 0
        rows = []
        for m, _ in modes:
            v = times[m]
            if not v:
                rows.append({"mode": m, "runs": 0})
                continue
            med = statistics.median(v)
            rows.append({"mode": m, "runs": len(v), "median_s": med, "min_s": min(v), "max_s": max(v),
                         "per_kernel_ms": (med - base) / kernels * 1e3 if m != "no tool" else 0.0})
        ours = next(r for r in rows if r["mode"].startswith("gputap"))
        print("\n== %s: %d kernels in 20 ranges, %d runs each (medians, whole process)" % (name, kernels, runs))
        print("%-22s %9s %17s %14s %12s" % ("mode", "median s", "spread s", "ms per kernel", "vs gputap"))
        for r in rows:
            if not r["runs"]:
                print("%-22s  failed" % r["mode"])
                continue
            ratio = r["median_s"] / ours["median_s"] if ours.get("runs") else float("nan")
            r["vs_gputap"] = ratio
            print("%-22s %9.2f %8.2f-%-8.2f %14.3f %11.2fx" % (r["mode"], r["median_s"], r["min_s"], r["max_s"],
                                                             r["per_kernel_ms"], ratio))
        results[name] = {"kernels": kernels, "rows": rows}
    if a.out:
        json.dump(results, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
