#!/usr/bin/env python3
"""Range metrics on a PyTorch step (rm_torch_modes.py's JSON files): the modes agree per range.

  rm_torch_check.py KERNEL.json RANGE.json PROFILER.json [AUTO.json ...]
Per range (train, step, forward, backward, optim): kernel counts equal in every file;
smsp__inst_executed.sum of the per-range files within TOL (1 %) of the per-kernel one
(per range measures everything on the context between range boundaries, per kernel each
kernel alone: the same kernels, so the same instructions); backward holds the backward
pass (at least 20 % of forward's instructions); the step's kernels equal torch.profiler's.
"""
import json
import sys

TOL = 0.01
fails = 0


def say(ok, name, why=""):
    global fails
    fails += not ok
    print(("ok rmetrics/torch-%s" % name) if ok else ("not ok rmetrics/torch-%s: %s" % (name, why)))


k = json.load(open(sys.argv[1]))
prof = json.load(open(sys.argv[3]))
others = [dict(json.load(open(p)), label=p.rsplit("/", 1)[-1].split(".")[0]) for p in [sys.argv[2]] + sys.argv[4:]]
names = {"train": "train", "step": "train/step", "forward": "train/step/forward",
         "backward": "train/step/backward", "optim": "train/step/optim"}
kr = k["ranges"]
print("# per-kernel (%s): %s" % (k.get("mode"), {n: kr.get(p) for n, p in names.items()}))
for o in others:
    print("# %s: %s" % (o.get("mode"), {n: o["ranges"].get(p) for n, p in names.items()}))
say(all(p in kr for p in names.values()), "kernel-mode-has-every-range", sorted(kr))
fw, bw = (kr.get(names["forward"]) or {}).get("inst") or 0, (kr.get(names["backward"]) or {}).get("inst") or 0
say(fw > 0 and bw >= 0.2 * fw, "kernel-mode-backward-holds-the-backward-pass", "forward %s backward %s" % (fw, bw))
say((kr.get(names["step"]) or {}).get("kernels") == prof["kernels"], "step-kernels-equal-torch-profiler",
    "gputap %s, torch.profiler %s" % ((kr.get(names["step"]) or {}).get("kernels"), prof["kernels"]))
say(all((kr.get(p) or {}).get("gpu_ns") not in (None, 0) for p in names.values()), "kernel-mode-gpu-time-kept",
    {n: (kr.get(p) or {}).get("gpu_ns") for n, p in names.items()})
for o in others:
    m = o.get("mode")
    bad = []
    for n, p in names.items():
        a, b = kr.get(p) or {}, o["ranges"].get(p) or {}
        if a.get("kernels") != b.get("kernels"):
            bad.append((n, "kernels", a.get("kernels"), b.get("kernels")))
        ia, ib = a.get("inst"), b.get("inst")
        if not ia or not ib or abs(ib - ia) > TOL * ia:
            bad.append((n, "inst", ia, ib))
    say(not bad, "%s-%s-agrees-with-per-kernel" % (o.get("label"), m), bad)
print("# torch checks: %d failed" % fails)
sys.exit(1 if fails else 0)
