#!/usr/bin/env python3
"""Collectives of four kinds and known sizes, for checking which collective each NCCL kernel ran
(torchrun; under `gputap run --tools kernel_trace,nccl_trace` or, with GT_KINETO_DIR, torch.profiler).

Each of ROUNDS rounds issues, on the default process group, an all_reduce of 1000+r floats, a
broadcast of 2000+r floats from rank 0, an all_gather_into_tensor of 3000+r floats per rank and a
reduce_scatter_tensor giving 4000+r floats per rank, then synchronizes (so that every collective is
its own NCCL kernel).  Every rank prints the list it issued as NCCL counts them (AllGather: the
count each rank sends; ReduceScatter: the count each rank receives):
    ISSUED rank=R AllReduce:1000 Broadcast:2000 AllGather:3000 ReduceScatter:4000 AllReduce:1001 ...
tests/gpu/check_nccl_kinds.py looks for that list, in that order, among the collectives gputap
analyze finds in each rank's trace.
"""
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchjob import init_ranks, profiled, say  # noqa: E402

ROUNDS = int(os.environ.get("GT_ROUNDS", "5"))


def main():
    rank, world = init_ranks()
    dist.barrier()
    torch.cuda.synchronize()
    with profiled(rank):
        issued = []
        for r in range(ROUNDS):
            x = torch.full((1000 + r,), float(rank + 1), device="cuda")
            dist.all_reduce(x)
            issued.append("AllReduce:%d" % (1000 + r))
            b = torch.full((2000 + r,), float(rank), device="cuda")
            dist.broadcast(b, src=0)
            issued.append("Broadcast:%d" % (2000 + r))
            g_in = torch.full((3000 + r,), float(rank), device="cuda")
            g_out = torch.empty((world * (3000 + r),), device="cuda")
            dist.all_gather_into_tensor(g_out, g_in)
            issued.append("AllGather:%d" % (3000 + r))
            s_in = torch.ones((world * (4000 + r),), device="cuda")
            s_out = torch.empty((4000 + r,), device="cuda")
            dist.reduce_scatter_tensor(s_out, s_in)
            issued.append("ReduceScatter:%d" % (4000 + r))
            torch.cuda.synchronize()
            # the program's own check of the results (gputap must not change them)
            ok = (float(x[0]) == sum(range(1, world + 1)) and float(b[0]) == 0.0 and
                  float(g_out[-1]) == world - 1 and float(s_out[0]) == world)
            if not ok:
                say("WRONG rank=%d round=%d" % (rank, r))
    say("ISSUED rank=%d %s" % (rank, " ".join(issued)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
