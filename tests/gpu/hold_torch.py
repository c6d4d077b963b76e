#!/usr/bin/env python3
"""A PyTorch training loop whose printed losses must be bitwise identical
with and without launch hold (tests/gpu/hold.sh).

    hold_torch.py [--steps N] [--witness]

A small convolutional network (strided convolutions, batch norm) and an MLP
head (layer norm, GELU), Adam, deterministic algorithms, fixed seeds.  The losses stay on the GPU until the end (no sync
per step, so launches can pile up in the queue) and are printed as exact
hexadecimal floats, with a hash of the final weights.  --witness counts the
CUDA kernels of the same run with torch.profiler (run it without gputap:
only one CUPTI client per process).
"""
import argparse
import hashlib
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--witness", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    prof = None
    if a.witness:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        prof.__enter__()
    dev = "cuda"
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(), torch.nn.BatchNorm2d(16),
        torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 128), torch.nn.GELU(), torch.nn.LayerNorm(128),
        torch.nn.Linear(128, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator(device=dev)
    g.manual_seed(1)
    x = torch.randn(32, 3, 32, 32, device=dev, generator=g)
    y = torch.randint(0, 10, (32,), device=dev, generator=g)
    losses = torch.zeros(a.steps, device=dev)
    for step in range(a.steps):
        out = model(x + 0.01 * step)
        loss = torch.nn.functional.cross_entropy(out, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses[step] = loss.detach()
    torch.cuda.synchronize()
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().numpy().tobytes())
    for i, v in enumerate(losses.cpu().tolist()):
        print("step %d loss %s" % (i, float(v).hex()))
    print("weights sha256 %s" % h.hexdigest())
    if prof is not None:
        prof.__exit__(None, None, None)
        gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        kernels = [e for e in gpu if not e.name.startswith(("Memcpy", "Memset"))]
        print("witness kernels %d (GPU activities %d)" % (len(kernels), len(gpu)))


if __name__ == "__main__":
    main()
