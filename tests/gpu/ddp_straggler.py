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
    env: GT_STEPS (12), GT_SLOW_FROM (4), GT_SLOW_RANK (1), GT_SLEEP_MS (20), GT_PLANT (gpu, cpu or
         copy: the stall's kind, see plant()), GT_ACCUM (1: gradient accumulation over N micro-steps,
         DDP's no_sync() in all but every Nth, which all-reduces and steps the optimizer),
         GT_KINETO_DIR (the steps under torch.profiler, each also a record_function "train_step"; each
         rank's trace written there as rank<R>.json: what PyTorch users hand to gputap fleet),
         GT_INPROC (a folder: each rank records itself with the Python API, gputap.init(out_dir=it)
         before the process group and gputap.finish() at the end, no `gputap run`; with
         GT_INPROC_AFTER_PG=1 init() comes after the process group was made)
"""
import contextlib
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS, before CUDA starts

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchjob import BATCH, fixed, init_ranks, plant_settings, profiled, say, say_plant, WIDTH  # noqa: E402
from torchjob import sleep_cycles, sleep_ms, step_range  # noqa: E402
from torchjob import model as fixed_model  # noqa: E402

STEPS, SLOW_FROM, SLOW_RANK, SLEEP_MS = plant_settings(12, 4, 1, 20)


def setup():
    """The process group, this rank's GPU, deterministic math; (rank, world, local GPU)."""
    rank, world = init_ranks()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.use_deterministic_algorithms(True, warn_only=True)
    return rank, world, local


PLANT = os.environ.get("GT_PLANT", "gpu")
ACCUM = int(os.environ.get("GT_ACCUM", "1"))  # micro-steps a gradient all-reduce (DDP's no_sync between)


def copy_bytes_ms(nbytes):
    """(source, destination, ms) of a pinned host-to-GPU copy of nbytes (CUDA events, the median of 3)."""
    src = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    dst = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    ts = []
    for _ in range(3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src, non_blocking=True)
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return src, dst, sorted(ts)[1]


def plant(rank):
    """The slow rank's stall, a function (None on the other ranks), and its kind (GT_PLANT):
      gpu   a GPU sleep (torch.cuda._sleep) of SLEEP_MS, where the job puts it ("compute");
      cpu   the host sleeps SLEEP_MS between two steps, as a data loader that falls behind: the GPU
            idles before the step's work ("data loading");
      copy  a pinned host-to-GPU copy of about SLEEP_MS where the job puts it ("memory copies").
    The slow rank announces the stall's measured length."""
    if PLANT == "gpu":
        cycles = sleep_cycles(SLEEP_MS)
        measured = sleep_ms(cycles)
        stall = (lambda: torch.cuda._sleep(cycles)) if rank == SLOW_RANK else None
        extra = "cycles=%d" % cycles
    elif PLANT == "cpu":
        measured = SLEEP_MS
        stall = (lambda: time.sleep(SLEEP_MS / 1e3)) if rank == SLOW_RANK else None
        extra = ""
    elif PLANT == "copy":
        n = 64 << 20
        _, _, ms = copy_bytes_ms(n)
        n = int(n * SLEEP_MS / ms) // 4096 * 4096
        src, dst, measured = copy_bytes_ms(n)
        stall = (lambda: dst.copy_(src, non_blocking=True)) if rank == SLOW_RANK else None
        extra = "bytes=%d" % n
    else:
        raise SystemExit("GT_PLANT=%s: expected gpu, cpu or copy" % PLANT)
    if rank == SLOW_RANK:
        say_plant(rank, SLOW_FROM, STEPS - SLOW_FROM, measured, PLANT, extra)
    return stall


def train(rank, net, opt, x, y, stall, before):
    """STEPS steps, the slow rank stalling from SLOW_FROM on before `before` ("backward" or "forward"),
    or, for a host stall (GT_PLANT=cpu), between steps; the steps' wall time in s."""
    dist.barrier()
    torch.cuda.synchronize()
    at = "between" if PLANT == "cpu" else before
    with profiled(rank) as prof:
        t0 = time.time()
        for step in range(STEPS):
            late = stall is not None and step >= SLOW_FROM
            sync = (step + 1) % ACCUM == 0  # with GT_ACCUM > 1 the other micro-steps accumulate locally
            if late and at == "between":
                stall()
            with step_range(prof), (contextlib.nullcontext() if sync else net.no_sync()):
                if step % ACCUM == 0:
                    opt.zero_grad(set_to_none=True)
                if late and at == "forward":
                    stall()
                loss = torch.nn.functional.mse_loss(net(x), y)
                if late and at == "backward":
                    stall()
                loss.backward()
                if sync:
                    opt.step()
        torch.cuda.synchronize()
        return time.time() - t0


def main():
    inproc = os.environ.get("GT_INPROC")
    late = os.environ.get("GT_INPROC_AFTER_PG") == "1"  # init() after the process group: no plugin
    if inproc:
        import gputap

        if not late:
            gputap.init(out_dir=inproc)
    rank, world, local = setup()
    if inproc and late:
        gputap.init(out_dir=inproc)
    model = fixed_model()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local], bucket_cap_mb=16)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = fixed((BATCH, WIDTH), 200 + rank).cuda()
    y = fixed((BATCH, WIDTH), 300 + rank).cuda()
    if rank == 0 and ACCUM > 1:
        say("ACCUM %d" % ACCUM)
    wall = train(rank, ddp, opt, x, y, plant(rank), "backward")
    with torch.no_grad():
        s = sum(float(p.double().sum()) for p in model.parameters())
    say("STEPS rank=%d wall_ms=%.3f" % (rank, wall * 1e3))
    if rank == 0:
        say("CHECKSUM %.12e" % s)
    dist.destroy_process_group()
    if inproc:
        gputap.finish()


if __name__ == "__main__":
    main()
