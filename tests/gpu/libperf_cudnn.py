#!/usr/bin/env python3
"""`gputap libperf` on the cuDNN convolutions of a ResNet-18 training step.

    libperf_cudnn.py run PROFILE.json [--half]     (under `gputap run --tools cudnn_trace`)
        ResNet-18 (torchvision's, or the same network written here when torchvision is
        missing), batch 16 at 224x224, forward + backward; 3 untimed steps, then 5 steps
        under torch.profiler.  Writes, per convolution shape, the GPU work of every
        aten::cudnn_convolution (forward) and aten::convolution_backward (backward data +
        backward filter, or backward filter alone for the first layer) the profiler saw:
        the kernels, memsets and copies launched under the op (its own and its child ops'),
        by name and duration.  What is compared with the replay is cuDNN's share: every
        one of them except PyTorch's own kernels (names with "at::native", the copies and
        fills of child ops such as aten::contiguous), summed per op, and their number.
        --half: FP16 autocast, channels-last tensors.
    libperf_cudnn.py cudnn-lib
        Prints the libcudnn.so.9 beside the cuDNN libraries PyTorch loads.
    libperf_cudnn.py check LIBRARY_PERF.csv PROFILE.json [LIBPERF_OUTPUT]
        Prints "ok NAME" / "not ok NAME: why" lines: every convolution row replayed and timed
        by kernel activity, best never slower than recorded, and the recorded engine's time
        and GPU operations per execution against the profiler's.  LIBPERF_OUTPUT (what
        `gputap libperf` printed) adds the recorded engine's time between CUDA events to the
        "#" lines.
"""
import csv
import json
import statistics
import sys

# A replayed time agrees with the traced run when it lies within this factor of the
# profiler's median for the same convolution, widened by the profiler's own spread.
TOL = 0.25


def build_model(torch):
    try:
        import torchvision

        return torchvision.models.resnet18(weights=None), "torchvision resnet18"
    except Exception:  # torchvision missing: the same network, written out
        pass
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return torch.relu(y + (self.down(x) if self.down is not None else x))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers), "ResNet-18 written out (no torchvision)"


def run(out, half):
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.backends.cudnn.benchmark = False
    model, what = build_model(torch)
    model = model.cuda()
    x = torch.randn(16, 3, 224, 224, device="cuda")
    target = torch.randint(0, 1000, (16,), device="cuda")
    if half:
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    print("model", what, "torch", torch.__version__, "cudnn", torch.backends.cudnn.version(),
          "half" if half else "fp32", "allow_tf32", torch.backends.cudnn.allow_tf32, flush=True)

    def step():
        with torch.autocast("cuda", dtype=torch.float16, enabled=half):
            loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        model.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    times, alltimes, ops, names = {}, {}, {}, {}

    def gpu_work(e):  # (name, us) of every GPU record under the op, its child ops' included
        out = [(k.name, k.duration) for k in e.kernels]
        for c in e.cpu_children:
            out += gpu_work(c)
        return out

    for e in prof.events():
        if e.name not in ("aten::cudnn_convolution", "aten::convolution_backward"):
            continue
        shapes = e.input_shapes
        if e.name == "aten::cudnn_convolution":
            kind, xs, ws = "fwd", shapes[0], shapes[1]
        else:  # (grad_output, input, weight, ...)
            kind, xs, ws = "bwd", shapes[1], shapes[2]
        key = "%s %s %s" % (kind, "x".join(map(str, xs)), "x".join(map(str, ws)))
        work = gpu_work(e)
        mine = [(n, us) for n, us in work if "at::native" not in n]
        times.setdefault(key, []).append(sum(us for _, us in mine))
        alltimes.setdefault(key, []).append(sum(us for _, us in work))
        ops.setdefault(key, []).append(len(mine))
        names.setdefault(key, ["%s %.1f" % (n[:100], us) for n, us in work])
    json.dump({"model": what, "half": half, "times": times, "all_times": alltimes, "ops": ops, "names": names},
              open(out, "w"), indent=1)
    print("profiled", sum(len(v) for v in times.values()), "convolution ops in", len(times), "shapes", flush=True)


def words(config):
    return dict(w.split("=", 1) for w in config.split() if "=" in w)


def direction(cfg):
    op = cfg.get("operation", "")
    if "DATA" in op or "DGRAD" in op:
        return "bwd_data"
    if "FILTER" in op or "WGRAD" in op:
        return "bwd_filter"
    return "fwd"


def event_times(log_path):
    """Row index -> the recorded engine's time between CUDA events, from libperf's progress lines."""
    out, cur = {}, None
    for line in open(log_path, errors="replace"):
        if line.startswith("libperf: [") and "/" in line:
            cur = int(line[len("libperf: ["):line.index("/")]) - 1
        elif line.startswith("libperf:   recorded: ") and cur is not None and "between CUDA events" in line:
            out[cur] = float(line.split("; ")[-1].split()[0])
    return out


def check(perf_path, prof_path, log_path=None):
    profile = json.load(open(prof_path))
    prof, prof_ops = profile["times"], profile.get("ops", {})
    prof_all, prof_names = profile.get("all_times", {}), profile.get("names", {})
    allrows = list(csv.DictReader(open(perf_path)))
    evs = event_times(log_path) if log_path else {}
    for i, r in enumerate(allrows):
        r["event_us"] = evs.get(i)
    rows = [r for r in allrows if r["library"] == "cudnn"]
    res = []

    def say(name, cond, why=""):
        res.append(cond)
        print(("ok " if cond else "not ok ") + "libperf-cudnn/" + name + ("" if cond else ": " + why))

    conv = [r for r in rows if "operation=CONV" in r["config"] or "DGRAD" in r["config"] or "WGRAD" in r["config"]]
    other = [r for r in rows if r not in conv]
    say("conv-rows", len(conv) >= 3, "%d convolution rows" % len(conv))
    dirs = {direction(words(r["config"])) for r in conv}
    say("three-directions", dirs == {"fwd", "bwd_data", "bwd_filter"}, str(sorted(dirs)))
    for r in other:
        say("other-row-says-why", r["status"].startswith("skipped: ") and len(r["status"]) > 20,
            r["status"] + " | " + r["config"][:120])
    # per (x, w) shape: the replayed times of each direction
    rep = {}
    for r in conv:
        c = words(r["config"])
        x = c.get("xDesc.dimA") or c.get("dxDesc.dimA")
        w = c.get("wDesc.dimA") or c.get("dwDesc.dimA")
        d = direction(c)
        name = "%s-%s-%s" % (d, x, w)
        ok = r["status"].startswith("ok")
        say("timed/" + name, ok and float(r["recorded_us"] or -1) > 0, r["status"])
        if not ok:
            continue
        rec, best = float(r["recorded_us"]), float(r["best_us"])
        say("best-not-slower/" + name, best <= rec, "best %s > recorded %s" % (best, rec))
        say("recorded-engine-timed/" + name, r["timed_as"] == "recorded_engine", r["timed_as"] + " " + r["status"])
        say("kernel-activity/" + name, r.get("timing") == "kernel_activity" and int(r.get("gpu_ops") or 0) > 0,
            "timing %r, gpu_ops %r" % (r.get("timing"), r.get("gpu_ops")))
        print("# %s calls=%s recorded %s %.1f us (%s TFLOP/s, %s GPU ops, events %s us), best %s %.1f us, gain %s%%, "
              "%s tried, timing %s" % (
                  name, r["calls"], r["recorded_algo"], rec, r["recorded_tflops"], r.get("gpu_ops"), r["event_us"],
                  r["best_algo"], best, r["gain_pct"], r["algos_tried"], r.get("timing")))
        rep.setdefault((x, w), {})[d] = (rec, int(r.get("gpu_ops") or 0), r["event_us"])
    # against torch.profiler: forward alone; backward = data + filter of the same shape
    for (x, w), d in sorted(rep.items()):
        for kind, parts in (("fwd", ["fwd"]), ("bwd", ["bwd_data", "bwd_filter"])):
            samples = prof.get("%s %s %s" % (kind, x, w))
            have = [p for p in parts if p in d]
            if not samples or not have:
                continue
            # the first layer's input needs no gradient: its backward is the filter's alone
            replay = sum(d[p][0] for p in have)
            med = statistics.median(samples)
            lo, hi = min(samples) * (1 - TOL), max(samples) * (1 + TOL)
            within = lo <= replay <= hi and abs(replay / med - 1) <= TOL + (max(samples) - min(samples)) / med
            say("vs-profiler/%s-%s-%s" % (kind, x, w), within,
                "replayed %.1f us, profiler median %.1f us (min %.1f max %.1f over %d)" % (
                    replay, med, min(samples), max(samples), len(samples)))
            key = "%s %s %s" % (kind, x, w)
            ops = sum(d[p][1] for p in have)
            pops = prof_ops.get(key)
            if pops:
                pmed = int(statistics.median(pops))
                say("same-gpu-ops/%s-%s-%s" % (kind, x, w), ops == pmed,
                    "replay %d GPU operations per execution, profiler %d (%s)" % (
                        ops, pmed, "; ".join(prof_names.get(key, []))))
            evs = [d[p][2] for p in have]
            ev = sum(evs) if all(v is not None for v in evs) else None
            allmed = statistics.median(prof_all[key]) if prof_all.get(key) else None
            print("# vs-profiler %s x=%s w=%s replay %.1f us profiler median %.1f [%.1f..%.1f] n=%d ratio %.3f; "
                  "GPU ops replay %d profiler %s; events %s (ratio %s); profiler with PyTorch's kernels %s" % (
                      kind, x, w, replay, med, min(samples), max(samples), len(samples), replay / med, ops,
                      pops[0] if pops else "?", "%.1f" % ev if ev is not None else "?",
                      "%.3f" % (ev / med) if ev is not None else "?",
                      "%.1f" % allmed if allmed is not None else "?"))
    return all(res)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], "--half" in sys.argv)
    elif len(sys.argv) == 2 and sys.argv[1] == "cudnn-lib":
        import os

        import torch

        torch.backends.cudnn.version()
        libs = [l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l]
        print(os.path.join(os.path.dirname(libs[0]), "libcudnn.so.9") if libs else "")
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "check":
        sys.exit(0 if check(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) == 5 else None) else 1)
    else:
        sys.exit(__doc__)
