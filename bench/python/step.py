"""A training step with ranges, for bench/python/run.sh.

  step.py none     no gputap at all (not imported)
  step.py off      gputap imported, ranges in the step, no init(): the cost of the
                   ranges when nothing records
  step.py on       gputap.init() (in-process) and the ranges
  (under `gputap run`, `on` attaches to the run's library: the preload mode)
Prints one JSON line: mean ms per step over the timed steps."""
import json
import sys
import time

import torch
import torch.nn as nn

MODE = sys.argv[1]
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
if MODE != "none":
    import gputap

    rng = gputap.range
    if MODE == "on":
        gputap.init()
else:
    import contextlib

    def rng(name):
        return contextlib.nullcontext()


torch.manual_seed(0)
dev = "cuda"
model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(256, 512, device=dev)
y = torch.randint(0, 10, (256,), device=dev)


def step():
    with rng("step"):
        with rng("forward"):
            loss = nn.functional.cross_entropy(model(x), y)
        with rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with rng("optimizer"):
            opt.step()
    return loss


for _ in range(30):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(STEPS):
    loss = step()
torch.cuda.synchronize()
dt = (time.perf_counter() - t0) / STEPS * 1e3
extra = {}
if MODE != "none":
    r = gputap.results()
    extra = {"gputap_mode": r["mode"], "step_calls": {x["path"]: x["calls"] for x in r["ranges"]}.get("step"),
             "step_kernels": {x["path"]: x["kernels"] for x in r["ranges"]}.get("step")}
print(json.dumps({"mode": MODE, "ms_per_step": dt, "loss": float(loss), **extra}))
