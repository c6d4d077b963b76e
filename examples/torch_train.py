#!/usr/bin/env python3
"""A small PyTorch training loop that marks its steps (gputap example).

    python3 torch_train.py [--steps N] [--layers N] [--profiler] [--kineto DIR]

Each step is an NVTX range named "ProfilerStep#<n>" (the name PyTorch's profiler gives a step, which
`gputap analyze` takes as the iteration without --nvtx), holding the ranges "step", "forward",
"backward" and "optimizer".  --profiler runs the steps under torch.profiler (a second CUPTI client
inside the program); --kineto DIR does the same and writes the profiler's trace, with one
ProfilerStep#<n> range (torch.profiler.record_function) per step, to DIR/rank0.json.gz (a Kineto
trace for `gputap analyze` and HTA).

Prints one JSON line: steps run, NVTX ranges opened, final loss (and, under the profiler, how many
events torch.profiler recorded).
"""
import argparse
import gzip
import json
import os
import shutil

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--layers", type=int, default=1, help="hidden layers of the model (more: more kernels per step)")
    ap.add_argument("--profiler", action="store_true", help="run the steps under torch.profiler")
    ap.add_argument("--kineto", metavar="DIR", help="run under torch.profiler and write DIR/rank0.json.gz")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    layers = [torch.nn.Linear(256, 512), torch.nn.ReLU()]
    for _ in range(a.layers - 1):
        layers += [torch.nn.Linear(512, 512), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    nvtx = torch.cuda.nvtx
    ranges = 0
    prof = None
    if a.profiler or a.kineto:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    loss = None
    for step in range(a.steps):
        nvtx.range_push("ProfilerStep#%d" % step)
        mark = torch.profiler.record_function("ProfilerStep#%d" % step) if prof is not None else None
        if mark is not None:
            mark.__enter__()
        nvtx.range_push("step")
        nvtx.range_push("forward")
        loss = torch.nn.functional.cross_entropy(model(x), y)
        nvtx.range_pop()
        nvtx.range_push("backward")
        opt.zero_grad()
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        nvtx.range_pop()
        nvtx.range_pop()
        if mark is not None:
            mark.__exit__(None, None, None)
        nvtx.range_pop()
        ranges += 5
        if prof is not None:
            prof.step()
    torch.cuda.synchronize()
    out = {"steps": a.steps, "nvtx_ranges": ranges, "step_ranges": a.steps, "loss": float(loss.item())}
    if prof is not None:
        prof.__exit__(None, None, None)
        out["profiler_events"] = len(prof.events())
        if a.kineto:
            os.makedirs(a.kineto, exist_ok=True)
            plain = os.path.join(a.kineto, "rank0.json")
            prof.export_chrome_trace(plain)
            with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb") as g:
                shutil.copyfileobj(f, g)
            os.unlink(plain)
            out["kineto_trace"] = plain + ".gz"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
