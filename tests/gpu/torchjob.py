"""What the torchrun jobs of tests/gpu share: one-write lines, fixed weights and data, a GPU sleep of
a measured length, the DDP/FSDP test model, and torch.profiler around the part a job traces."""
import contextlib
import os
import sys

import torch

WIDTH, LAYERS, BATCH = 2048, 6, 256  # check_fleet_ddp.py reads the model's size from this line


def say(line):
    sys.stdout.write(line + "\n")  # one write per line: the ranks share one pipe
    sys.stdout.flush()


def fixed(shape, k):
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * (0.37 + 0.01 * k)) * 0.02).reshape(shape).float()


def plant_settings(steps, slow_from, slow_rank, sleep_ms):
    """A job's STEPS, SLOW_FROM, SLOW_RANK, SLEEP_MS: GT_STEPS, GT_SLOW_FROM, GT_SLOW_RANK, GT_SLEEP_MS,
    else the job's own defaults."""
    e = os.environ.get
    return (int(e("GT_STEPS", steps)), int(e("GT_SLOW_FROM", slow_from)), int(e("GT_SLOW_RANK", slow_rank)),
            float(e("GT_SLEEP_MS", sleep_ms)))


def sleep_cycles(ms):
    """Cycles of torch.cuda._sleep for `ms` on this GPU, measured with CUDA events."""
    n = 1_000_000
    for _ in range(3):
        per_ms = n / sleep_ms(n)
    return int(per_ms * ms)


def sleep_ms(cycles):
    """How long torch.cuda._sleep(cycles) takes on this GPU, in ms (CUDA events)."""
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(cycles)
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b)


def model():
    """LAYERS x (Linear(WIDTH, WIDTH), Tanh) with fixed weights, on the GPU."""
    layers = []
    for i in range(LAYERS):
        lin = torch.nn.Linear(WIDTH, WIDTH)
        with torch.no_grad():
            lin.weight.copy_(fixed((WIDTH, WIDTH), i))
            lin.bias.copy_(fixed((WIDTH,), 100 + i))
        layers += [lin, torch.nn.Tanh()]
    return torch.nn.Sequential(*layers).cuda()


@contextlib.contextmanager
def profiled(rank):
    """With GT_KINETO_DIR set, torch.profiler (CPU and CUDA) around the block, its trace written as
    GT_KINETO_DIR/rank<R>.json; without it, nothing.  Yields the profiler or None."""
    out = os.environ.get("GT_KINETO_DIR")
    if not out:
        yield None
        return
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        yield prof
    os.makedirs(out, exist_ok=True)
    prof.export_chrome_trace(os.path.join(out, "rank%d.json" % rank))


def step_range(prof, name="train_step"):
    """An NVTX range, and with the profiler a record_function of the same name (Kineto's iteration)."""
    stack = contextlib.ExitStack()
    torch.cuda.nvtx.range_push(name)
    stack.callback(torch.cuda.nvtx.range_pop)
    if prof is not None:
        stack.enter_context(torch.profiler.record_function(name))
    return stack


def init_ranks():
    """NCCL's process group, and this rank's GPU (LOCAL_RANK): (rank, world size)."""
    import torch.distributed as dist

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    return rank, world


def say_plant(rank, first, steps, ms, kind="gpu", extra=""):
    """The slow rank's PLANT line, as the checks read it (checks.job_output, check_fleet_ddp.py)."""
    say(("PLANT rank=%d from_step=%d steps=%d sleep_ms=%.3f kind=%s %s" % (rank, first, steps, ms, kind, extra)).rstrip())


def planted_sleep(rank, slow, first, steps, ms):
    """The cycles of a GPU sleep of `ms` on this GPU (torch.cuda._sleep, measured); rank `slow`, which
    sleeps them in steps first..first+steps-1, says its PLANT line."""
    cycles = sleep_cycles(ms)
    if rank == slow:
        say_plant(rank, first, steps, sleep_ms(cycles), extra="cycles=%d" % cycles)
    return cycles
