#!/usr/bin/env python3
"""All-to-all exchanges (as a mixture-of-experts layer sends tokens to experts) between all-reduces,
with a slow rank (torchrun, 2-4 ranks).

Each of STEPS NVTX "train_step" steps: an all_to_all_single of 4096 floats per rank pair (NCCL runs
it as a send and a receive per rank in one kernel), then an all_reduce of 1000 floats.  From
SLOW_FROM on, rank SLOW_RANK sleeps SLEEP_MS on the GPU before its all-to-all.  Prints PLANT (as
ddp_straggler.py) and CHECKSUM rank=R (the sum of what it received: the program's own check).

    torchrun --nproc_per_node N tests/gpu/nccl_a2a.py
    env: GT_STEPS (8), GT_SLOW_FROM (2), GT_SLOW_RANK (2), GT_SLEEP_MS (10)
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchjob import init_ranks, plant_settings, planted_sleep, say, step_range  # noqa: E402

STEPS, SLOW_FROM, SLOW_RANK, SLEEP_MS = plant_settings(8, 2, 2, 10)
N = 4096


def main():
    rank, world = init_ranks()
    slow = SLOW_RANK % world
    cycles = planted_sleep(rank, slow, SLOW_FROM, STEPS - SLOW_FROM, SLEEP_MS)
    dist.barrier()
    torch.cuda.synchronize()
    got = torch.zeros((), dtype=torch.float64, device="cuda")
    for step in range(STEPS):
        with step_range(None):
            inp = torch.full((world * N,), float(100 * rank + step), device="cuda")
            out = torch.empty_like(inp)
            if rank == slow and step >= SLOW_FROM:
                torch.cuda._sleep(cycles)
            dist.all_to_all_single(out, inp)
            got += out.double().sum()
            a = torch.full((1000,), float(rank), device="cuda")
            dist.all_reduce(a)
    torch.cuda.synchronize()
    say("CHECKSUM rank=%d %.1f" % (rank, float(got)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
