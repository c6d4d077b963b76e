"""The findings corpus on two GPUs (docs/findings.md, docs/gpu-validation.md): exposed communication and
a straggler rank, each planted and a twin without it that computes the same result.

    torchrun --standalone --nproc_per_node 2 findings_ddp.py [--steps N] [--profile DIR] [--only MODE]

comm       planted: the all-reduce of a 128 MiB buffer launched after the step's GEMMs (nothing left to
           hide it behind); twin: the same all-reduce launched first (async), the GEMMs meanwhile.
straggler  planted: rank 1 runs 10 more GEMMs (their result unused) before the step's small all-reduce,
           so rank 0 waits in it; twin: both ranks run the same work.
Every step of MODE/VARIANT is an NVTX range "MODE.VARIANT" (gputap advise --nvtx MODE.VARIANT RUN);
with --profile DIR each rank's torch.profiler trace goes to DIR/MODE.VARIANT.rankR.json.  One JSON
line per rank and MODE/VARIANT: the time per step (ms, the loop's host wall clock, synchronized at its
end) and a checksum equal for both variants.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist

from findings_torch import kineto_profiler  # the same profiler window as the one-GPU corpus

MODES = ["comm", "straggler"]


def setup(mode, rank, dev):
    torch.manual_seed(0)  # the same matrices on every rank
    st = {"a": (torch.randn(4096, 4096, device=dev) / 64).bfloat16(),
          "b": (torch.randn(4096, 4096, device=dev) / 64).bfloat16(), "acc": torch.zeros((), device=dev)}
    st["z"] = torch.empty(4096, 4096, device=dev, dtype=torch.bfloat16)
    st["scratch"] = torch.empty_like(st["z"])
    n = (128 << 20) // 4 if mode == "comm" else (4 << 20) // 4
    st["g"] = torch.full((n,), float(rank + 1), device=dev)  # "gradients": the sum over 2 ranks, halved, is 1.5
    return st


def step(mode, v, st, rank):
    work = None
    if mode == "comm" and v == "twin":
        work = dist.all_reduce(st["g"], async_op=True)  # independent of this step's GEMMs: overlapped
    for _ in range(16):
        torch.mm(st["a"], st["b"], out=st["z"])
    if mode == "straggler" and v == "planted" and rank == 1:
        for _ in range(10):  # extra work on one rank, its result unused
            torch.mm(st["a"], st["b"], out=st["scratch"])
    if work is not None:
        work.wait()
    else:
        dist.all_reduce(st["g"])
    st["g"].mul_(0.5)
    st["acc"] += st["z"][0, 0].float() + st["g"][0]


def run(mode, v, steps, prof_dir, rank, dev):
    st = setup(mode, rank, dev)
    for _ in range(2):  # warm-up outside the measured steps (NCCL's first collective sets up its channels)
        step(mode, v, st, rank)
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    prof = None
    if prof_dir:
        path = f"{prof_dir}/{mode}.{v}.rank{rank}.json"
        prof = kineto_profiler(path, steps)
    t0 = time.perf_counter()
    for _ in range(steps):
        torch.cuda.nvtx.range_push(f"{mode}.{v}")
        step(mode, v, st, rank)
        torch.cuda.nvtx.range_pop()
        if prof:
            prof.step()
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / steps
    if prof:
        prof.stop()
    print(json.dumps({"mode": mode, "variant": v, "rank": rank, "step_ms": round(ms, 4), "steps": steps,
                      "checksum": float(st["acc"]), "profiled": bool(prof_dir)}), flush=True)
    dist.barrier()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--profile")
    ap.add_argument("--only")
    a = ap.parse_args()
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", device_id=dev)
    for m in MODES:
        if a.only and m not in a.only.split(","):
            continue
        for v in ("planted", "twin"):
            run(m, v, a.steps, a.profile, rank, dev)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
