#!/usr/bin/env python3
"""Two process groups over the same two ranks, their collectives issued in a different order on each
rank (torchrun, 2 ranks; under `gputap run --tools kernel_trace,nccl_trace` or, with GT_KINETO_DIR,
torch.profiler).

Round r: rank 0 all-reduces 1000+r floats on the default group, then 2000+r floats on a second group
(dist.new_group over the same ranks: its own NCCL communicator and stream); rank 1 issues the second
group's first.  NCCL needs one order per communicator only, so this is a correct program, and a
collective is only identified by its communicator: matching the ranks' NCCL kernels by their order
alone would pair rank 0's default-group all-reduce with rank 1's second-group one.  Each rank prints
    ISSUED rank=R AllReduce:1000 AllReduce:2000 ...   (in its own order)
and checks its results.  tests/gpu/check_nccl_groups.py checks what gputap makes of it.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchjob import init_ranks, profiled, say  # noqa: E402

ROUNDS = int(os.environ.get("GT_ROUNDS", "6"))


def main():
    rank, world = init_ranks()
    second = dist.new_group(list(range(world)))
    x = torch.ones(1, device="cuda")
    dist.all_reduce(x)
    dist.all_reduce(x, group=second)  # both communicators made before the trace starts
    torch.cuda.synchronize()
    issued, wrong = [], 0
    with profiled(rank):
        for r in range(ROUNDS):
            a = torch.full((1000 + r,), float(rank + 1), device="cuda")
            b = torch.full((2000 + r,), float(rank + 2), device="cuda")
            order = [(a, None, 1000 + r), (b, second, 2000 + r)]
            if rank == 1:
                order.reverse()
            works = []
            for t, g, n in order:
                works.append(dist.all_reduce(t, group=g, async_op=True))
                issued.append("AllReduce:%d" % n)
            for w in works:
                w.wait()
            torch.cuda.synchronize()
            wrong += float(a[0]) != sum(k + 1 for k in range(world)) or float(b[0]) != sum(k + 2 for k in range(world))
    if wrong:
        say("WRONG rank=%d rounds=%d" % (rank, wrong))
    say("ISSUED rank=%d %s" % (rank, " ".join(issued)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
