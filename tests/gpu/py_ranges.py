"""A PyTorch script in the GMP profiler's style, run two ways, for tests/gpu/python.sh:

  py_ranges.py torch  OUT.json   the ranges are torch.profiler record_function ranges;
                                 OUT.json: kernels per range path, counted from the
                                 profiler's own trace (launch inside the range, same thread)
  py_ranges.py gputap OUT.json [--late]
                                 the ranges are the GMP profiler's API (gmp_python) on
                                 gputap; OUT.json: gputap's results, and around every
                                 range what PyTorch's caching allocator says it took from
                                 and gave back to the driver (memory_stats deltas)

The work is the same in both: matmuls, activations, a conv net forward pass, a
training step (forward/backward/optimizer), reductions, a large allocation freed
with empty_cache().  Everything runs once untimed first (warm-up: library handles,
autotuning), then the measured pass; empty_cache() before it, so both passes start
from an empty cache.  --late: gputap starts after PyTorch created its context.
"""
import json
import os
import sys
import time

MODE = sys.argv[1]
OUT = sys.argv[2]
LATE = "--late" in sys.argv

if MODE == "gputap" and not LATE:
    import gmp_python  # noqa: E402  (before torch: gputap starts before any CUDA use)

    profiler = gmp_python.create_profiler(output_dir=os.path.dirname(OUT) or ".")
    profiler.init()

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

torch.backends.cudnn.benchmark = False
dev = "cuda"

STATS = ("segment.all.allocated", "segment.all.freed", "reserved_bytes.all.allocated", "reserved_bytes.all.freed")
witness = {}


def snap():
    s = torch.cuda.memory_stats()
    return [s.get(k, 0) for k in STATS] + [torch.cuda.memory_reserved()]


class Rng:
    """One named range in the current mode, with the allocator's account around it (gputap mode)."""

    stack = []
    names = set()

    def __init__(self, name, memory=False):
        self.name, self.memory = name, memory
        Rng.names.add(name)

    def __enter__(self):
        Rng.stack.append(self.name)
        self.path = "/".join(Rng.stack)
        self.before = snap() if measure and MODE == "gputap" else None
        if not measure:
            self.cm = None
        elif MODE == "torch":
            self.cm = torch.profiler.record_function(self.name)
        elif self.memory:
            self.cm = profiler.profile_memory(self.name)
        else:
            self.cm = profiler.profile_range(self.name)
        if self.cm is not None:
            self.cm.__enter__()
        return self

    def __exit__(self, *a):
        if self.cm is not None:
            self.cm.__exit__(*a)
        if self.before is not None:
            after = snap()
            w = witness.setdefault(self.path, [0, 0, 0, 0, 0])
            for i in range(5):
                w[i] += after[i] - self.before[i]
        Rng.stack.pop()
        return False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(64 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(x.flatten(1))


def work(net, opt, imgs, labels):
    with Rng("matrix_operations"):
        x = torch.randn(1000, 1000, device=dev)
        y = torch.randn(1000, 1000, device=dev)
        z = torch.matmul(x, y)
        z2 = z @ x.t()
    with Rng("activations"):
        a = torch.relu(z2) + torch.sigmoid(z2) + torch.tanh(z2)
        a = torch.nn.functional.gelu(a)
    with Rng("conv_net"):
        with Rng("forward"):
            with torch.no_grad():
                out = net(imgs)
    with Rng("train_step"):
        with Rng("forward"):
            loss = nn.functional.cross_entropy(net(imgs), labels)
        with Rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with Rng("optimizer"):
            opt.step()
    with Rng("reductions"):
        r = a.sum() + a.mean() + a.max() + torch.softmax(out, dim=1).sum()
    with Rng("memory_ops", memory=True):
        big = torch.randn(5000, 5000, device=dev)  # 100 MB
        r = r + big[0, 0]
        del big
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return float(r)


torch.manual_seed(0)
net = Net().to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
imgs = torch.randn(64, 3, 32, 32, device=dev)
labels = torch.randint(0, 10, (64,), device=dev)

measure = False
work(net, opt, imgs, labels)  # warm-up
torch.cuda.synchronize()
torch.cuda.empty_cache()

if MODE == "gputap" and LATE:
    import gmp_python  # noqa: E402  (PyTorch's context exists by now)

    profiler = gmp_python.create_profiler(output_dir=os.path.dirname(OUT) or ".")
    profiler.init()

measure = True
doc = {"mode": MODE, "late": LATE, "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}
if MODE == "torch":
    trace = OUT + ".trace.json"
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        value = work(net, opt, imgs, labels)
        torch.cuda.synchronize()
    prof.export_chrome_trace(trace)
    with open(trace) as f:
        ev = json.load(f)["traceEvents"]
    launches = {}
    kernels = {}
    ann = []
    for e in ev:
        cat, args = e.get("cat", ""), e.get("args", {}) or {}
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launches[args["correlation"]] = (e["ts"], e.get("tid"))
        elif cat == "kernel":
            kernels[args.get("correlation")] = kernels.get(args.get("correlation"), 0) + 1
        elif cat == "user_annotation" and e.get("name") in Rng.names:
            ann.append(e)  # ours only: PyTorch adds its own (Optimizer.step#SGD.step, ...)
    ann.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    paths = []
    for i, e in enumerate(ann):
        parents = [p for p in ann[:i] if p.get("tid") == e.get("tid") and p["ts"] <= e["ts"] and
                   p["ts"] + p.get("dur", 0) >= e["ts"] + e.get("dur", 0)]
        chain = [p["name"] for p in parents] + [e["name"]]
        paths.append("/".join(chain))
    counts = {}
    for e, path in zip(ann, paths):
        t0, t1 = e["ts"], e["ts"] + e.get("dur", 0)
        n = sum(k for c, k in kernels.items() if c in launches and t0 <= launches[c][0] <= t1 and
                launches[c][1] == e.get("tid"))
        counts[path] = counts.get(path, 0) + n
    doc["kernels"] = counts
    doc["kernels_total"] = sum(kernels.values())
else:
    import gputap  # noqa: E402

    value = work(net, opt, imgs, labels)
    torch.cuda.synchronize()
    res = gputap.results()
    doc["results"] = res
    doc["library"] = gputap.library()
    doc["witness"] = {p: dict(zip(STATS + ("reserved_delta",), w)) for p, w in witness.items()}
    with open(OUT + ".gmp.txt", "w") as f:
        profiler.print_profiler_ranges("SUM", file=f)
        profiler.print_profiler_ranges("MAX", file=f)
        profiler.print_memory_activity(file=f)
doc["value"] = value
with open(OUT, "w") as f:
    json.dump(doc, f, indent=1)
print("%s done value=%.4f" % (MODE, value))
