#!/usr/bin/env python3
"""A small PyTorch training loop with NVTX ranges per step (gputap example).

    python3 torch_train.py [--steps N] [--profiler]

Prints one JSON line: steps run, NVTX ranges opened, final loss (and, with
--profiler, how many events torch.profiler recorded: a second CUPTI client
inside the program).
"""
import argparse
import json

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--profiler", action="store_true", help="run the steps under torch.profiler")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    nvtx = torch.cuda.nvtx
    ranges = 0
    prof = None
    if a.profiler:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    loss = None
    for step in range(a.steps):
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
        ranges += 4
    torch.cuda.synchronize()
    out = {"steps": a.steps, "nvtx_ranges": ranges, "step_ranges": a.steps, "loss": float(loss.item())}
    if prof is not None:
        prof.__exit__(None, None, None)
        out["profiler_events"] = len(prof.events())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
