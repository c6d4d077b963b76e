#!/usr/bin/env python3
"""An all-reduce captured in a CUDA graph and replayed once a step, with a planted slow rank (torchrun,
2 ranks or more; under `gputap run`).

The graph (captured once, outside the steps) holds y = 2x, all_reduce(y), z = y + 1.  Each of STEPS
NVTX "train_step" steps replays it; from step SLOW_FROM on, rank SLOW_RANK first runs a GPU sleep of
SLEEP_MS, so the others wait for it at the replayed all-reduce.  NCCL's profiler plugin sees the
collective when it is captured, not at each replay: the replayed NCCL kernels have no record of their
own and must be matched by order.  Each rank prints PLANT (the slow one), STEPS and a CHECKSUM of z.
tests/gpu/check_nccl_graph.py checks what gputap makes of it.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchjob import init_ranks, plant_settings, planted_sleep, say, step_range  # noqa: E402

STEPS, SLOW_FROM, SLOW_RANK, SLEEP_MS = plant_settings(8, 3, 1, 10)


def main():
    rank, _ = init_ranks()
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up before capture, on a side stream
        for _ in range(2):
            w = x * 2
            dist.all_reduce(w)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
        dist.all_reduce(y)
        z = y + 1
    torch.cuda.synchronize()
    cycles = planted_sleep(rank, SLOW_RANK, SLOW_FROM, STEPS - SLOW_FROM, SLEEP_MS)
    dist.barrier()
    torch.cuda.synchronize()
    total = 0.0
    for step in range(STEPS):
        with step_range(None):
            if rank == SLOW_RANK and step >= SLOW_FROM:
                torch.cuda._sleep(cycles)
            g.replay()
            torch.cuda.synchronize()
            total += float(z[0])
    say("STEPS rank=%d replays=%d" % (rank, STEPS))
    say("CHECKSUM rank=%d %.6e" % (rank, total))
    if os.environ.get("GT_FREE_GRAPH", "1") == "1":
        del g  # the graph holds the captured collective: freed before its communicator
        torch.cuda.synchronize()
    dist.destroy_process_group()
    say("EXIT rank=%d" % rank)


if __name__ == "__main__":
    main()
