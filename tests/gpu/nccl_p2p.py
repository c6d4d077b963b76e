#!/usr/bin/env python3
"""Point-to-point transfers between collectives, with a slow sender (torchrun, 2 ranks or more).

Each of STEPS NVTX "train_step" steps: an all_reduce of 1000 floats; a pipeline hop — rank r receives
a 4 MiB tensor from r-1 (r > 0), adds 1 and sends it to r+1 (r < W-1), as the stages of a pipeline
pass activations on —; an all_reduce of 2000 floats.  From SLOW_FROM on, rank SLOW_RANK (default 0,
the first stage) sleeps SLEEP_MS on the GPU before its send, so the next stage waits in its receive.
Prints PLANT (as ddp_straggler.py) and CHECKSUM rank=R (the sum of what it received over the steps:
the program's own check of its results).

    torchrun --nproc_per_node N tests/gpu/nccl_p2p.py
    env: GT_KINETO_DIR (the steps under torch.profiler, its traces written there as rank<R>.json),
         GT_STEPS (10), GT_SLOW_FROM (3), GT_SLOW_RANK (0), GT_SLEEP_MS (10)
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchjob import init_ranks, plant_settings, planted_sleep, profiled, say, step_range  # noqa: E402

STEPS, SLOW_FROM, SLOW_RANK, SLEEP_MS = plant_settings(10, 3, 0, 10)
N = 1 << 20  # floats: 4 MiB a hop


def main():
    rank, world = init_ranks()
    cycles = planted_sleep(rank, SLOW_RANK, SLOW_FROM, STEPS - SLOW_FROM, SLEEP_MS)
    dist.barrier()
    torch.cuda.synchronize()
    got = torch.zeros((), dtype=torch.float64, device="cuda")
    with profiled(rank) as prof:
        for step in range(STEPS):
            with step_range(prof):
                a = torch.full((1000,), float(rank), device="cuda")
                dist.all_reduce(a)
                x = torch.full((N,), float(step), device="cuda")
                if rank > 0:
                    dist.recv(x, src=rank - 1)
                    got += x.double().sum()
                    x += 1
                if rank < world - 1:
                    if rank == SLOW_RANK and step >= SLOW_FROM:
                        torch.cuda._sleep(cycles)
                    dist.send(x, dst=rank + 1)
                b = torch.full((2000,), float(rank), device="cuda")
                dist.all_reduce(b)
        torch.cuda.synchronize()
    say("CHECKSUM rank=%d %.1f" % (rank, float(got)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
