"""The vram sampler's memory reads follow the program's allocations (docs/samplers.md, "Memory above
10 Hz"): after a second of steady memory (the sampler down to its 10 Hz reads), five 1 GiB
allocations 300 ms apart, then everything freed back to the driver.  Prints one JSON line: each
event's name, the time just before it and just after it (ns, CLOCK_REALTIME), PyTorch's reserved
bytes after it, and a checksum of the data (the same with and without gputap).

    SAMPLING_RATE=0.01 gputap run -o DIR --tools kernel_trace,vram -- python3 tests/gpu/vram_follow.py
    python3 tests/gpu/check_vram_follow.py DIR...
"""
import json
import time

import torch

dev = torch.device("cuda", 0)
torch.manual_seed(0)
x = torch.randn(1024, 1024, device=dev)
torch.cuda.synchronize()
time.sleep(1.0)
events, keep = [], []
for k in range(5):
    t0 = time.time_ns()
    t = torch.empty(256 * 2**20, dtype=torch.float32, device=dev)  # 1 GiB: a cudaMalloc of its own
    t.fill_(k + 1)
    torch.cuda.synchronize()
    events.append({"name": "alloc%d" % k, "t0": t0, "t1": time.time_ns(), "reserved": torch.cuda.memory_reserved(dev)})
    keep.append(t)
    time.sleep(0.3)
checksum = sum(float(t[::4096].sum()) for t in keep) + float(x.sum())
del t
keep.clear()
t0 = time.time_ns()
torch.cuda.empty_cache()
torch.cuda.synchronize()
events.append({"name": "free", "t0": t0, "t1": time.time_ns(), "reserved": torch.cuda.memory_reserved(dev)})
time.sleep(0.5)
print(json.dumps({"events": events, "checksum": checksum}))
