"""A small PyTorch training loop for PC sampling runs and their cost (tests/gpu/pcsamp.sh).

A convolutional net and an MLP head on random data, AdamW, fp32 and bf16 autocast mixed, each
step inside an NVTX range "step".  Prints one line: the median and mean step time of the timed
steps (after the warm-up ones) and the wall time of the loop.
usage: pcsamp_torch.py [--steps N] [--warmup N]
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn


def model(dev):
    """The loop's net, optimizer and batch (random, from the caller's RNG state)."""
    net = nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4),
        nn.Flatten(), nn.Linear(128 * 16, 1024), nn.GELU(), nn.LayerNorm(1024), nn.Linear(1024, 10),
    ).to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    x = torch.randn(64, 3, 64, 64, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    return net, opt, x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    net, opt, x, y = model(dev)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    t_loop = time.perf_counter()
    for i in range(a.warmup + a.steps):
        torch.cuda.nvtx.range_push("step")
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(i % 2 == 1)):
            loss = loss_fn(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
        torch.cuda.nvtx.range_pop()
    loop = time.perf_counter() - t_loop
    print("pcsamp_torch steps %d median_ms %.3f mean_ms %.3f loop_s %.3f loss %.4f"
          % (a.steps, 1e3 * statistics.median(times), 1e3 * statistics.mean(times), loop, loss.item()), flush=True)


if __name__ == "__main__":
    main()
