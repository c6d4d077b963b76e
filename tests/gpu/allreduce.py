#!/usr/bin/env python3
"""Multi-GPU NCCL all-reduce for gputap's GPU tests (run with torchrun).

Each rank all-reduces a 4 Mi-float tensor STEPS times inside one NVTX range
per step, overlapping a matmul on another stream, and rank 0 prints one
EXPECT line for the library trace (op, count, nranks, calls per rank).
"""
import os
import sys

import torch
import torch.distributed as dist

STEPS = 10
N = 4 << 20


def say(line):
    # one write per line: the ranks share one pipe, and print() may write the
    # text and the newline separately, letting other ranks' lines in between
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    x = torch.ones(N, device="cuda") * (rank + 1)
    a = torch.randn(2048, 2048, device="cuda")
    side = torch.cuda.Stream()
    for step in range(STEPS):
        torch.cuda.nvtx.range_push("ProfilerStep#%d" % step)
        with torch.cuda.stream(side):
            b = a @ a
        dist.all_reduce(x)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    want = float(sum(range(1, world + 1))) * world ** (STEPS - 1)
    ok = abs(x[0].item() - want) <= 1e-3 * want
    if rank == 0:
        say("EXPECT nccl op=allreduce count=%d dtype=float32 nranks=%d calls=%d" % (N, world, STEPS))
    say("rank %d result %s" % (rank, "ok" if ok else "WRONG %r vs %r" % (x[0].item(), want)))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
