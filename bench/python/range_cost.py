"""Cost of an empty range from Python (enter + exit), side by side in one process:
a bare loop; `with gputap.range("x")` through the C extension (gputap._speedups, the
default) and through the pure-ctypes path (gputap._core._PyRange, the fallback);
before init() (library loaded, not recording) and after gputap.init() (recording,
in-process); torch.cuda.nvtx.range and torch.profiler.record_function (no profiler
running) for comparison.  Interleaved rounds, median per mode; prints ns per
iteration and ns above the bare loop.

  range_cost.py [N [ROUNDS]]

Without PyTorch or a GPU (a CPU machine) it measures the two bindings in the state
the process is in: not recording, or recording when started with GPUTAP_OUT set
(the library then records in-process from its load, as under `gputap run`)."""
import json
import statistics
import sys
import time

import gputap
from gputap import _core

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 9
try:
    import torch

    CUDA = torch.cuda.is_available()
except ImportError:
    torch, CUDA = None, False


def bare():
    for _ in range(N):
        pass


def loop(r):
    def fn():
        for _ in range(N):
            with r("x"):
                pass

    return fn


def timed(fn):
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / N


def measure(modes, res):
    for _ in range(ROUNDS):
        for name, fn in modes:
            res.setdefault(name, []).append(timed(fn))


if _core._ext is None:
    sys.exit("range_cost.py: the C extension gputap._speedups is not built (make builds it)")
ext, pyr = gputap.range, _core._PyRange
if CUDA:
    torch.zeros(1, device="cuda")
state = "on" if gputap.active() else "off"
res = {}
modes = [("bare", bare), ("ext_" + state, loop(ext)), ("ctypes_" + state, loop(pyr))]
if CUDA:
    modes += [("nvtx", loop(torch.cuda.nvtx.range)), ("record_function", loop(torch.profiler.record_function))]
measure(modes, res)
expected = 2 * N * ROUNDS if state == "on" else 0
if CUDA and state == "off":
    gputap.init()
    measure([("bare_after", bare), ("ext_on", loop(ext)), ("ctypes_on", loop(pyr))], res)
    expected = 2 * N * ROUNDS
calls = {x["path"]: x["calls"] for x in gputap.results()["ranges"]}
base = statistics.median(res["bare"] + res.get("bare_after", []))
out = {k: {"median_ns": statistics.median(v), "min_ns": min(v), "max_ns": max(v)} for k, v in res.items()}
print("N=%d rounds=%d binding=%s; ns per iteration (median), above the bare loop, fastest..slowest round:"
      % (N, ROUNDS, gputap.library()["binding"]))
for k in ("bare", "bare_after", "ext_off", "ctypes_off", "ext_on", "ctypes_on", "nvtx", "record_function"):
    if k in out:
        m = out[k]["median_ns"]
        print("  %-16s %8.1f ns  (+%6.1f ns)  spread %.1f..%.1f" % (k, m, m - base, out[k]["min_ns"], out[k]["max_ns"]))
for s in ("off", "on"):
    if "ext_" + s in out:
        print("  ctypes/extension (%s): x%.2f" % (s, out["ctypes_" + s]["median_ns"] / out["ext_" + s]["median_ns"]))
print("recorded calls of 'x': %s (expected %d)" % (calls.get("x", 0), expected))
print(json.dumps(out))
