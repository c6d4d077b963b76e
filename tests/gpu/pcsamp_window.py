"""PC sampling in a window of steps (docs/pc-sampling.md "Windows"; tests/gpu/pcsamp_window.sh).

The training loop of pcsamp_torch.py (deterministic: cuDNN deterministic, no benchmark), one
step per prof.step().  Outside the steps [W0, W1) every step also sorts a separate tensor (a
marker: its kernels must have no samples when only the window is sampled).  Prints the loss and a
checksum of the parameters (the program's results) and, with --window, the Profiler's windows.
usage: pcsamp_window.py [--steps N] [--window W0 W1] [--pcs] [--inprocess DIR]
  --window W0 W1  a gputap.Profiler over the loop, active steps W0..W1-1 (wait W0, one window)
  --pcs           the Profiler's pc_sampling=True
  --inprocess DIR gputap.init(DIR) after PyTorch made its CUDA context (no gputap run); implies
                  the Profiler writes DIR; gputap.finish() at the end
"""
import argparse
import os
import time

import torch
import torch.nn as nn

from pcsamp_torch import model  # the same net and batch as the whole-loop runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--window", type=int, nargs=2, default=None)
    ap.add_argument("--marker", type=int, nargs=2, default=(20, 30), help="no marker sort in [M0, M1)")
    ap.add_argument("--pcs", action="store_true")
    ap.add_argument("--inprocess", default=None)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    dev = "cuda"
    net, opt, x, y = model(dev)
    m = torch.randn(1 << 22, device=dev)
    loss_fn = nn.CrossEntropyLoss()
    torch.cuda.synchronize()
    prof = None
    if a.window or a.inprocess:
        import gputap
        w0, w1 = a.window if a.window else (0, a.steps)
        prof = gputap.Profiler(schedule=gputap.schedule(wait=w0, warmup=0, active=w1 - w0, repeat=1),
                               pc_sampling=a.pcs, out_dir=a.inprocess)
        prof.start()
    t0 = time.perf_counter()
    for i in range(a.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(i % 2 == 1)):
            loss = loss_fn(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if not (a.marker[0] <= i < a.marker[1]):
            torch.sort(m)
        torch.cuda.synchronize()
        if prof is not None:
            prof.step()
    loop = time.perf_counter() - t0
    if prof is not None:
        prof.stop()
    csum = sum(float(p.detach().double().abs().sum()) for p in net.parameters())
    print("pcsamp_window steps %d loss %.8f params %.8f loop_s %.3f windows %s"
          % (a.steps, loss.item(), csum, loop, prof.windows if prof else "-"), flush=True)
    if a.inprocess:
        import gputap
        gputap.finish(report=False)


if __name__ == "__main__":
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    main()
