#!/usr/bin/env python3
"""Tensor and data parallel at once (torchrun, 4 ranks): a slow rank seen through two kinds of groups.

Ranks 0-3 form tensor-parallel pairs {0, 1} and {2, 3} and data-parallel pairs {0, 2} and {1, 3}
(dist.new_group: a communicator each).  Each of STEPS NVTX "train_step" steps: work on the GPU, an
all-reduce in the tensor-parallel pair, more work, another tensor-parallel all-reduce, then an
all-reduce of the "gradients" in the data-parallel pair.  From SLOW_FROM on, rank SLOW_RANK (3) sleeps
SLEEP_MS on the GPU before its first tensor-parallel all-reduce: its partner 2 waits there and, late
itself, makes its data-parallel partner 0 wait in turn.  Prints PLANT (as ddp_straggler.py), and
CHECKSUM rank=R (sums the program computes: its own check of its results).

    torchrun --nproc_per_node 4 tests/gpu/nccl_2d.py
    env: GT_KINETO_DIR (the steps under torch.profiler, its traces written there as rank<R>.json),
         GT_STEPS (10), GT_SLOW_FROM (3), GT_SLOW_RANK (3), GT_SLEEP_MS (10)
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchjob import init_ranks, plant_settings, planted_sleep, profiled, say, step_range  # noqa: E402

STEPS, SLOW_FROM, SLOW_RANK, SLEEP_MS = plant_settings(10, 3, 3, 10)


def main():
    rank, world = init_ranks()
    assert world == 4, "four ranks"
    tp = [dist.new_group([0, 1]), dist.new_group([2, 3])][rank // 2]  # every rank makes every group
    dp_groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    dp = dp_groups[rank % 2]
    cycles = planted_sleep(rank, SLOW_RANK, SLOW_FROM, STEPS - SLOW_FROM, SLEEP_MS)
    a = torch.full((1024, 1024), 0.001 * (rank + 1), device="cuda")
    total = torch.zeros((), dtype=torch.float64, device="cuda")
    dist.barrier()
    torch.cuda.synchronize()
    with profiled(rank) as prof:
        for step in range(STEPS):
            with step_range(prof):
                x = torch.full((4096,), float(rank + step), device="cuda")
                for _ in range(2):
                    a = torch.tanh(a @ a)  # work
                    if rank == SLOW_RANK and step >= SLOW_FROM and _ == 0:
                        torch.cuda._sleep(cycles)
                    dist.all_reduce(x, group=tp)
                g = torch.full((1 << 20,), float(rank), device="cuda")
                dist.all_reduce(g, group=dp)
                total += x.double().sum() + g.double()[0]
        torch.cuda.synchronize()
    say("CHECKSUM rank=%d %.1f" % (rank, float(total)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
