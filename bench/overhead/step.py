#!/usr/bin/env python3
"""One timing of a PyTorch step, for bench/overhead/run.sh.

    step.py launch|compute [--profiler] [--steps N] [--nvtx] [--phases K] [--ab BLOCK] [--step-times A-B]
launch:  50 relu(y*a+b) on 256x256 per step (150 tiny kernels), 200 timed steps after 20 warm-ups
compute: 4 bf16 matmuls 8192x8192 per step, 20 timed steps after 5 warm-ups
--steps N: N timed steps instead; --nvtx: each timed step inside an NVTX range "step" (warm-ups
in "warm"), so that `--capture nvtx:step@A-B` picks timed steps A..B.
--phases K: also the mean time per step of each K-th of the timed loop ("phases"), to see a capture
window's cost inside the process (bench/overhead/phases.sh).
--step-times A-B: also the host time of each timed step A..B (1-based, no synchronize inside:
what the program's thread spends, so a pause when a capture window opens shows), and
"excess_ms", their sum over the median step's time.
--ab BLOCK: under libgputap.so with GPUTAP_BENCH_AB=1, the timed steps run in blocks of BLOCK steps
with the tap counting and recording (A) and with its hooks calling straight through
(gputap_bench_pass(1), B), in the order A B B A repeated, each block ended by a synchronize; prints
both per-step times, "ab_ratio" (A's total over B's) and "ab_paired" (the median of each A B B A
group's ratio), so the tap's cost is measured inside one process (bench/overhead/ab.sh).
--ab-null: the same blocks with the tap on in both (the method's own noise).
--ab-kact: B also turns CUPTI's launch callbacks off (gputap_bench_pass(2)): B is CUPTI kernel
activity alone, so A/B is the full trace over kernel activity alone.
--ab-kmode: B turns the callbacks off and keeps the tap counting without records
(gputap_bench_pass(3)): B costs what GPUTAP_TRACE=kernel costs (bench/overhead/run.sh's `kernel`).
Prints the mean per-step time in microseconds as JSON.
"""
import ctypes
import json
import statistics
import sys
import time

import torch


def main():
    which = sys.argv[1]
    prof = "--profiler" in sys.argv
    nvtx = "--nvtx" in sys.argv
    def opt(name):
        return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else 0
    steps, nphases, block = opt("--steps"), opt("--phases"), opt("--ab")
    dev = "cuda"
    if which == "launch":
        y = torch.randn(256, 256, device=dev)
        a = torch.randn(256, 256, device=dev)
        b = torch.randn(256, 256, device=dev)

        def step():
            z = y
            for _ in range(50):
                z = torch.relu(z * a + b)
            return z
        warm, n = 20, 200
    else:
        x = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        w = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)

        def step():
            z = x
            for _ in range(4):
                z = z @ w
            return z
        warm, n = 5, 20
    if steps > 0:
        n = steps
    mark = torch.cuda.nvtx if nvtx else None
    for _ in range(warm):
        marked(step, mark, "warm")
    torch.cuda.synchronize()
    p = None
    if prof:
        p = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                               torch.profiler.ProfilerActivity.CUDA])
        p.__enter__()
    if block > 0:
        print(json.dumps(ab(step, n, block, mark, "--ab-null" in sys.argv, 2 if "--ab-kact" in sys.argv else 3 if "--ab-kmode" in sys.argv else 1)))
        return
    first, last = 0, -1
    if "--step-times" in sys.argv:
        first, last = (int(v) for v in sys.argv[sys.argv.index("--step-times") + 1].split("-"))
    host = []
    t0 = time.perf_counter()
    marks = [t0]
    for i in range(n):
        if first <= i + 1 <= last:
            h = time.perf_counter()
            marked(step, mark, "step")
            host.append((time.perf_counter() - h) * 1e6)
        else:
            marked(step, mark, "step")
        if nphases and (i + 1) * nphases // n != i * nphases // n:
            torch.cuda.synchronize()
            marks.append(time.perf_counter())
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    if p is not None:
        p.__exit__(None, None, None)
    out = {"bench": which, "us_per_step": (t1 - t0) / n * 1e6}
    if nphases:
        bounds = [i * n // nphases for i in range(nphases + 1)]
        out["phases"] = [(marks[k + 1] - marks[k]) / (bounds[k + 1] - bounds[k]) * 1e6 for k in range(nphases)]
    if host:
        med = statistics.median(host)
        out["step_us"] = [round(v, 1) for v in host]
        out["excess_ms"] = sum(v - med for v in host) / 1e3
        out["max_step_ms"] = max(host) / 1e3
    print(json.dumps(out))


def marked(step, mark, name):
    """One step, inside an NVTX range `name` when marking."""
    if mark:
        mark.range_push(name)
    step()
    if mark:
        mark.range_pop()


def ab(step, n, block, mark, null, bpass):
    """The timed steps in blocks, tap on (A) and passing (B), A B B A; per-step times and ratios."""
    fn = getattr(ctypes.CDLL(None), "gputap_bench_pass", None)
    if fn is None:
        sys.exit("step.py --ab: no gputap_bench_pass here (run it under libgputap.so)")
    fn.argtypes = [ctypes.c_int]
    if fn(0) != 0:
        sys.exit("step.py --ab: gputap_bench_pass refused (GPUTAP_BENCH_AB=1 not set, or the tap is not live)")
    tot = {0: 0.0, 1: 0.0}
    cnt = {0: 0, 1: 0}
    groups = []
    order = (0, 1, 1, 0)
    nblocks = max(4, n // block // 4 * 4)
    for g in range(nblocks // 4):
        t = {0: 0.0, 1: 0.0}
        for passing in order:
            arg = 0 if null or not passing else bpass
            if fn(arg) != 0:
                sys.exit("step.py --ab: gputap_bench_pass(%d) refused" % arg)
            t0 = time.perf_counter()
            for _ in range(block):
                marked(step, mark, "step")
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            t[passing] += dt
            tot[passing] += dt
            cnt[passing] += block
        groups.append(t[0] / t[1])
    fn(0)
    a, b = tot[0] / cnt[0] * 1e6, tot[1] / cnt[1] * 1e6
    return {"bench": "ab", "us_per_step_tap": a, "us_per_step_pass": b, "ab_ratio": a / b,
            "ab_paired": statistics.median(groups), "groups": len(groups), "block": block}


if __name__ == "__main__":
    main()
