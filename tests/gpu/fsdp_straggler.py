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
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.fsdp import fully_shard  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_straggler import BATCH, LAYERS, SLEEP_MS, SLOW_FROM, SLOW_RANK, STEPS, WIDTH, fixed, say, sleep_cycles  # noqa: E402


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.use_deterministic_algorithms(True, warn_only=True)
    layers = []
    for i in range(LAYERS):
        lin = torch.nn.Linear(WIDTH, WIDTH)
        with torch.no_grad():
            lin.weight.copy_(fixed((WIDTH, WIDTH), i))
            lin.bias.copy_(fixed((WIDTH,), 100 + i))
        layers += [lin, torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers).cuda()
    params = sum(p.numel() for p in model.parameters())
    for m in model:
        if isinstance(m, torch.nn.Linear):
            fully_shard(m)
    fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = fixed((BATCH, WIDTH), 200 + rank).cuda()
    y = fixed((BATCH, WIDTH), 300 + rank).cuda()
    cycles = sleep_cycles(SLEEP_MS)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(cycles)
    b.record()
    torch.cuda.synchronize()
    slow = rank == SLOW_RANK
    if slow:
        say("PLANT rank=%d from_step=%d steps=%d sleep_ms=%.3f cycles=%d" % (rank, SLOW_FROM, STEPS - SLOW_FROM,
                                                                            a.elapsed_time(b), cycles))
    if rank == 0:
        say("MODEL fsdp params=%d world=%d" % (params, world))
    dist.barrier()
    torch.cuda.synchronize()
    t0 = time.time()
    for step in range(STEPS):
        torch.cuda.nvtx.range_push("train_step")
        opt.zero_grad(set_to_none=True)
        if slow and step >= SLOW_FROM:
            torch.cuda._sleep(cycles)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    wall = time.time() - t0
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
