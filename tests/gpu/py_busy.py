"""gputap and another CUPTI client (torch.profiler) in one process, both orders.

  py_busy.py profiler-first   torch.profiler runs when gputap.init() is called
  py_busy.py gputap-first     gputap.init(), then a torch.profiler window
Prints what each side saw; tests/gpu/python.sh checks the lines."""
import sys
import warnings

import torch

import gputap

order = sys.argv[1]
x = torch.randn(512, 512, device="cuda")
acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]


def torch_kernels(prof):
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    if order == "profiler-first":
        with torch.profiler.profile(activities=acts) as prof:
            gputap.init()
            with gputap.range("inside"):
                for _ in range(5):
                    y = x @ x
            torch.cuda.synchronize()
        tk = torch_kernels(prof)
    else:
        gputap.init()
        with gputap.range("before"):
            for _ in range(5):
                y = x @ x
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=acts) as prof:
            with gputap.range("inside"):
                for _ in range(5):
                    y = x @ x
            torch.cuda.synchronize()
        tk = torch_kernels(prof)
r = gputap.results()
ranges = {x["path"]: x["kernels"] for x in r["ranges"]}
print("order=%s warnings=%s" % (order, [w.category.__name__ + ": " + str(w.message)[:160] for w in caught]))
print("order=%s torch_profiler_kernels=%d gputap_kernels=%s gpu_activity=%s" % (order, tk, ranges, r["gpu_activity"]))
