#!/usr/bin/env python3
"""One timing of a PyTorch step, for bench/overhead/run.sh.

    step.py launch|compute [--profiler] [--steps N] [--nvtx]
launch:  50 relu(y*a+b) on 256x256 per step (150 tiny kernels), 200 timed steps after 20 warm-ups
compute: 4 bf16 matmuls 8192x8192 per step, 20 timed steps after 5 warm-ups
--steps N: N timed steps instead; --nvtx: each timed step inside an NVTX range "step" (warm-ups
in "warm"), so that `--capture nvtx:step@A-B` picks timed steps A..B.
Prints the median-free mean per-step time in microseconds as JSON.
"""
import json
import sys
import time

import torch


def main():
    which = sys.argv[1]
    prof = "--profiler" in sys.argv
    nvtx = "--nvtx" in sys.argv
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 0
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
        if mark:
            mark.range_push("warm")
        step()
        if mark:
            mark.range_pop()
    torch.cuda.synchronize()
    p = None
    if prof:
        p = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                               torch.profiler.ProfilerActivity.CUDA])
        p.__enter__()
    t0 = time.perf_counter()
    for _ in range(n):
        if mark:
            mark.range_push("step")
        step()
        if mark:
            mark.range_pop()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    if p is not None:
        p.__exit__(None, None, None)
    print(json.dumps({"bench": which, "us_per_step": (t1 - t0) / n * 1e6}))


if __name__ == "__main__":
    main()
