"""Cost of an empty range from Python (enter + exit), side by side in one process:
a bare loop, `with gputap.range("x")` before init (library loaded, not recording),
after gputap.init() (recording, in-process), torch.cuda.nvtx.range and
torch.profiler.record_function (no profiler running) for comparison.
Interleaved rounds, median per mode; prints ns per enter+exit above the bare loop."""
import json
import statistics
import sys
import time

import torch

import gputap

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 9


def bare():
    for _ in range(N):
        pass


def rng():
    r = gputap.range
    for _ in range(N):
        with r("x"):
            pass


def nvtx():
    r = torch.cuda.nvtx.range
    for _ in range(N):
        with r("x"):
            pass


def recfn():
    r = torch.profiler.record_function
    for _ in range(N):
        with r("x"):
            pass


def timed(fn):
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / N


torch.zeros(1, device="cuda")
res = {"bare": [], "gputap_off": [], "nvtx": [], "record_function": []}
for _ in range(ROUNDS):
    res["bare"].append(timed(bare))
    res["gputap_off"].append(timed(rng))
    res["nvtx"].append(timed(nvtx))
    res["record_function"].append(timed(recfn))
gputap.init()
res["gputap_on"] = []
res["bare_after"] = []
for _ in range(ROUNDS):
    res["bare_after"].append(timed(bare))
    res["gputap_on"].append(timed(rng))
calls = {x["path"]: x["calls"] for x in gputap.results()["ranges"]}
base = statistics.median(res["bare"] + res["bare_after"])
out = {k: {"median_ns": statistics.median(v), "min_ns": min(v), "max_ns": max(v)} for k, v in res.items()}
print("N=%d rounds=%d; ns per iteration (median), and above the bare loop:" % (N, ROUNDS))
for k in ("bare", "bare_after", "gputap_off", "gputap_on", "nvtx", "record_function"):
    m = out[k]["median_ns"]
    print("  %-16s %8.1f ns  (+%6.1f ns)  spread %.1f..%.1f" % (k, m, m - base, out[k]["min_ns"], out[k]["max_ns"]))
print("recorded calls of 'x': %s (expected %d)" % (calls.get("x"), N * ROUNDS))
print(json.dumps(out))
