"""A PyTorch training step with forward/backward/optimizer ranges, for range metrics' modes.

  python3 rm_torch_modes.py --out FILE [--steps N] [--init kernel|range|auto] [--profiler]

Ranges: "train" (opened before the model goes to the GPU, i.e. before the first CUDA
call), inside it "step" per iteration holding "forward", "backward" (PyTorch runs the
backward pass on its autograd thread, which opens no range) and "optim".  Seeded; prints
the final loss.  --init MODE: gputap.init(metrics=..., mode=MODE) in this process (else the
process is expected to run under `gputap run --metrics ...`) and the per-range results
(kernels, smsp__inst_executed.sum) go to FILE as JSON.  --profiler: no gputap; torch.profiler
counts the kernels of the same steps into FILE.
"""
import json
import sys

import torch

a = sys.argv[1:]


def opt(name, default=None):
    return a[a.index(name) + 1] if name in a else default


steps = int(opt("--steps", 6))
out = opt("--out")
init = opt("--init")
use_prof = "--profiler" in a
METRIC = "smsp__inst_executed.sum"

if not use_prof:
    import gputap

    if init:
        gputap.init(metrics=METRIC, mode=init)
    rng = gputap.range
else:
    import contextlib

    rng = lambda name: contextlib.nullcontext()  # noqa: E731

torch.manual_seed(0)
with rng("train"):
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)
    ).to("cuda")
    optim = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 512, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    prof = None
    if use_prof:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    for s in range(steps):
        with rng("step"):
            with rng("forward"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            with rng("backward"):
                optim.zero_grad()
                loss.backward()
            with rng("optim"):
                optim.step()
    torch.cuda.synchronize()
    if prof is not None:
        prof.__exit__(None, None, None)
print("loss %.6f" % loss.item())
if out and use_prof:
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    names = [e.name for e in kernels if not e.name.startswith("Memcpy") and not e.name.startswith("Memset")]
    json.dump({"kernels": len(names), "steps": steps}, open(out, "w"))
elif out:
    doc = gputap.results()
    res = {}
    for r in doc["ranges"]:
        m = (r.get("metrics") or {}).get(METRIC) or {}
        res[r["path"]] = {"kernels": r["kernels"], "inst": m.get("sum"), "gpu_ns": r.get("gpu_ns")}
    json.dump({"ranges": res, "mode": (doc.get("metrics") or {}).get("mode"), "steps": steps}, open(out, "w"))
