#!/usr/bin/env python3
"""A DistributedDataParallel job with a planted slow rank, for gputap fleet's GPU check (torchrun).

Each of STEPS steps is one NVTX range "train_step": forward, loss, backward (DDP all-reduces the
gradients in several buckets while backward runs), optimizer step.  From step SLOW_FROM on, rank
SLOW_RANK runs a GPU sleep (torch.cuda._sleep, a spinning kernel) of SLEEP_MS before backward, so
the other ranks wait for it at the step's first gradient all-reduce.  The sleep's length is
measured once with CUDA events before the steps.  No random numbers: the weights and the data are
fixed functions of their index, so the job's result (printed as a CHECKSUM of the parameters) must
be the same with and without gputap.

    torchrun --nproc_per_node N tests/gpu/ddp_straggler.py
    env: GT_STEPS (12), GT_SLOW_FROM (4), GT_SLOW_RANK (1), GT_SLEEP_MS (20),
         GT_KINETO_DIR (the steps under torch.profiler, each also a record_function "train_step"; each
         rank's trace written there as rank<R>.json: what PyTorch users hand to gputap fleet)
"""
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS, before CUDA starts

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

STEPS = int(os.environ.get("GT_STEPS", "12"))
KINETO_DIR = os.environ.get("GT_KINETO_DIR") or None
SLOW_FROM = int(os.environ.get("GT_SLOW_FROM", "4"))
SLOW_RANK = int(os.environ.get("GT_SLOW_RANK", "1"))
SLEEP_MS = float(os.environ.get("GT_SLEEP_MS", "20"))
WIDTH, LAYERS, BATCH = 2048, 6, 256


def say(line):
    sys.stdout.write(line + "\n")  # one write per line: the ranks share one pipe
    sys.stdout.flush()


def fixed(shape, k):
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * (0.37 + 0.01 * k)) * 0.02).reshape(shape).float()


def sleep_cycles(ms):
    """Cycles of torch.cuda._sleep for `ms` on this GPU, measured with CUDA events."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    n = 1_000_000
    for _ in range(3):
        a.record()
        torch.cuda._sleep(n)
        b.record()
        torch.cuda.synchronize()
        per_ms = n / a.elapsed_time(b)
    return int(per_ms * ms)


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
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local], bucket_cap_mb=16)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = fixed((BATCH, WIDTH), 200 + rank).cuda()
    y = fixed((BATCH, WIDTH), 300 + rank).cuda()
    cycles = sleep_cycles(SLEEP_MS)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(cycles)
    b.record()
    torch.cuda.synchronize()
    measured = a.elapsed_time(b)
    slow = rank == SLOW_RANK
    if slow:
        say("PLANT rank=%d from_step=%d steps=%d sleep_ms=%.3f cycles=%d" % (rank, SLOW_FROM, STEPS - SLOW_FROM,
                                                                            measured, cycles))
    dist.barrier()
    torch.cuda.synchronize()
    prof = None
    if KINETO_DIR:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    t0 = time.time()
    for step in range(STEPS):
        torch.cuda.nvtx.range_push("train_step")
        ann = torch.profiler.record_function("train_step") if prof else None
        if ann:
            ann.__enter__()
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        if slow and step >= SLOW_FROM:
            torch.cuda._sleep(cycles)
        loss.backward()
        opt.step()
        if ann:
            ann.__exit__(None, None, None)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    wall = time.time() - t0
    if prof:
        prof.__exit__(None, None, None)
        os.makedirs(KINETO_DIR, exist_ok=True)
        prof.export_chrome_trace(os.path.join(KINETO_DIR, "rank%d.json" % rank))
    with torch.no_grad():
        s = sum(float(p.double().sum()) for p in model.parameters())
    say("STEPS rank=%d wall_ms=%.3f" % (rank, wall * 1e3))
    if rank == 0:
        say("CHECKSUM %.12e" % s)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
