"""A training step with ranges, for bench/python/run.sh.

  step.py none     no gputap at all (not imported)
  step.py off      gputap imported, ranges in the step, no init(): the cost of the
                   ranges when nothing records
  step.py on       gputap.init() (in-process) and the ranges
  (under `gputap run`, `on` attaches to the run's library: the preload mode)
Prints one JSON line: mean ms per step over the timed steps.

  step.py MODE STEPS --serve   after the warm-up, one timed block of STEPS steps per
                               line "go" read from stdin (one JSON line each), until
                               "end" or end of input: step_rounds.py interleaves the
                               modes' processes block by block this way."""
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


def block():
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(STEPS):
        loss = step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / STEPS * 1e3, loss


def report(dt, loss):
    extra = {}
    if MODE != "none":
        r = gputap.results()
        extra = {"gputap_mode": r["mode"], "binding": gputap.library()["binding"],
                 "step_calls": {x["path"]: x["calls"] for x in r["ranges"]}.get("step"),
                 "step_kernels": {x["path"]: x["kernels"] for x in r["ranges"]}.get("step")}
    print(json.dumps({"mode": MODE, "ms_per_step": dt, "loss": float(loss), **extra}), flush=True)


for _ in range(30):
    step()
if "--serve" in sys.argv[3:]:
    print(json.dumps({"mode": MODE, "ready": True}), flush=True)
    for line in sys.stdin:
        if line.strip() != "go":
            break
        report(*block())
else:
    report(*block())
