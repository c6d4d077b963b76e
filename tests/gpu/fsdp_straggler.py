#!/usr/bin/env python3
"""A fully-sharded (FSDP2, fully_shard) job with a planted slow rank, for gputap fleet's GPU check (torchrun).

The model of tests/gpu/ddp_straggler.py (LAYERS x Linear(WIDTH, WIDTH) + Tanh, fixed weights and data),
each Linear and the whole model sharded with fully_shard: every step all-gathers each layer's
parameters before use and reduce-scatters its gradients, so the element counts of one step's
ReduceScatters add up to the parameters / world size (each rank receives its shard).  Each of STEPS
steps is one NVTX range "train_step"; from step SLOW_FROM on, rank SLOW_RANK runs a GPU sleep of
SLEEP_MS before forward, so the others wait for it at the step's first all-gather.  Prints the same
PLANT / STEPS / CHECKSUM lines as ddp_straggler.py and "MODEL fsdp params=N world=W" (rank 0), for
tests/gpu/check_fleet_ddp.py.

    torchrun --nproc_per_node N tests/gpu/fsdp_straggler.py
    env: GT_STEPS (12), GT_SLOW_FROM (4), GT_SLOW_RANK (1), GT_SLEEP_MS (20)
"""
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.fsdp import fully_shard  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_straggler import plant, setup, train  # noqa: E402
from torchjob import BATCH, WIDTH, fixed, model as fixed_model, say  # noqa: E402


def main():
    rank, world, _ = setup()
    model = fixed_model()
    params = sum(p.numel() for p in model.parameters())
    for m in model:
        if isinstance(m, torch.nn.Linear):
            fully_shard(m)
    fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = fixed((BATCH, WIDTH), 200 + rank).cuda()
    y = fixed((BATCH, WIDTH), 300 + rank).cuda()
    stall = plant(rank)
    if rank == 0:
        say("MODEL fsdp params=%d world=%d" % (params, world))
    wall = train(rank, model, opt, x, y, stall, "forward")
    s = torch.zeros((), dtype=torch.float64, device="cuda")
    with torch.no_grad():
        for p in model.parameters():
            s += p.to_local().double().sum()  # this rank's shard
    dist.all_reduce(s)
    say("STEPS rank=%d wall_ms=%.3f" % (rank, wall * 1e3))
    if rank == 0:
        say("CHECKSUM %.12e" % float(s))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
