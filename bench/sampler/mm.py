"""Load for the sampler runs: fp16 8192^3 matmuls for SECONDS (default 10) on every GPU in turn."""
import os
import sys
import time

import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
devs = [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
mats = [(torch.randn(8192, 8192, device=d, dtype=torch.float16), torch.randn(8192, 8192, device=d, dtype=torch.float16)) for d in devs]
torch.cuda.synchronize()
t0 = time.time()
n = 0
while time.time() - t0 < secs:
    for a, b in mats:
        for _ in range(20):
            a @ b
    for d in devs:
        torch.cuda.synchronize(d)
    n += 20
dt = time.time() - t0
print("mm: %d matmuls per GPU in %.1f s, %.0f TFLOP/s per GPU" % (n, dt, 2 * 8192**3 * n / dt / 1e12), flush=True)
