"""The findings corpus in PyTorch (docs/findings.md, docs/gpu-validation.md): for each finding an
anti-pattern planted in a training-like step and a twin without it that computes the same result.

    python3 findings_torch.py [--steps N] [--profile DIR] [--only MODE]

Every step of MODE/VARIANT is an NVTX range "MODE.VARIANT" (gputap advise --nvtx MODE.VARIANT picks
it).  With --profile DIR, each MODE/VARIANT is recorded by torch.profiler into
DIR/MODE.VARIANT.json (ProfilerStep#N per step) instead.  One JSON line per MODE/VARIANT: the time per
step (ms, host wall clock of the whole loop over the steps, synchronized at its end) and a checksum
equal for both variants.
"""
import argparse
import json
import threading
import time

import numpy as np
import torch

dev = torch.device("cuda")


def step_launch(v, st):
    """launch-bound: 400 tiny elementwise ops, or the same ops replayed from a CUDA graph"""
    x = st["x"]
    if v == "planted":
        for _ in range(400):
            x.mul_(0.5).add_(1.0)
    else:
        st["graph"].replay()


def setup_launch(v):
    st = {"x": torch.zeros(256, device=dev)}
    if v == "twin":
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # warm-up before capture, as the docs ask
            y = torch.zeros(256, device=dev)
            y.mul_(0.5).add_(1.0)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(400):
                st["x"].mul_(0.5).add_(1.0)
        st["graph"] = g
    return st


def setup_item(v):
    torch.manual_seed(0)
    # bf16: the step's GEMMs are not FP32 (that would be another finding)
    return {"w": [(torch.randn(2048, 2048, device=dev) / 45).bfloat16() for _ in range(12)],
            "x": torch.randn(512, 2048, device=dev).bfloat16(), "acc": torch.zeros((), device=dev), "log": 0.0}


def step_item(v, st):
    """host-sync: a loss value read with .item() after every layer, or accumulated on the GPU"""
    h = st["x"]
    for w in st["w"]:
        h = torch.tanh(h @ w)
        if v == "planted":
            st["log"] += h.float().norm().item()
        else:
            st["acc"] += h.float().norm()


def setup_pageable(v):
    g = torch.Generator().manual_seed(0)
    cpu = torch.rand(64 << 20 >> 2, generator=g)  # 64 MiB
    return {"cpu": cpu.pin_memory() if v == "twin" else cpu, "acc": torch.zeros((), device=dev)}


def step_pageable(v, st):
    """pageable-copy: a 64 MiB batch copied from pageable memory, or from pinned memory"""
    x = st["cpu"].to(dev, non_blocking=(v == "twin"))
    st["acc"] += x.sum()


def setup_fp32(v):
    torch.set_float32_matmul_precision("high" if v == "twin" else "highest")  # TF32 allowed or not
    torch.manual_seed(0)
    return {"a": torch.randn(4096, 4096, device=dev), "b": torch.randn(4096, 4096, device=dev),
            "acc": torch.zeros((), device=dev)}


def step_fp32(v, st):
    """fp32-gemm: 4 FP32 GEMMs of 4096^3, or the same with TF32 allowed"""
    for _ in range(4):
        st["acc"] += (st["a"] @ st["b"]).mean()


def setup_zero(v):
    return {"acc": torch.zeros((), device=dev), "x": torch.full((256 << 20,), 2.0, device=dev)}


def step_zero(v, st):
    """memset: a 1 GiB buffer zeroed and then added to, or a copy made without zeroing first"""
    if v == "planted":
        buf = torch.zeros(256 << 20, device=dev)
        buf += st["x"]
    else:
        buf = st["x"].clone()
    st["acc"] += buf[:1024].sum()


def setup_datapre(v):
    st = {"w": (torch.randn(2048, 2048, device=dev) / 45).bfloat16(), "acc": torch.zeros((), device=dev), "next": None,
          "i": 0, "thread": None}
    return st


def make_batch(i):
    """host-side data preparation: about 3 ms of numpy work"""
    rng = np.random.default_rng(i)
    a = rng.standard_normal((512, 2048), dtype=np.float32)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.003:
        a = a * 0.999 + 0.001
    return torch.from_numpy(a).pin_memory()


def step_datapre(v, st):
    """step-gap: the batch prepared at the start of each step, or prepared by a thread during the step before"""
    i = st["i"]
    if v == "planted":
        b = make_batch(i)
    else:
        if st["thread"] is None:
            st["next"] = make_batch(i)
        else:
            st["thread"].join()
        b = st["next"]
        box = {}

        def work(j=i + 1):
            box["b"] = make_batch(j)
            st["next"] = box["b"]

        st["thread"] = threading.Thread(target=work)
    h = b.to(dev, non_blocking=True).bfloat16()
    for _ in range(6):
        h = torch.tanh(h @ st["w"])
    torch.cuda._sleep(SLEEP_8MS)  # the rest of an 8 ms step on the GPU
    st["acc"] += h.float().mean()
    if v == "twin":
        st["thread"].start()
    st["log"] = st.get("log", 0.0) + float(h[0, 0].float().item())  # the loss read back: the step ends synchronized
    st["i"] = i + 1


SLEEP_8MS = 14_000_000  # GPU clock cycles: about 8 ms at 1.75 GHz

MODES = ["launch", "item", "pageable", "fp32", "zero", "datapre"]


def run(mode, v, steps, prof_dir):
    st = globals()["setup_" + mode](v)
    fn = globals()["step_" + mode]
    for _ in range(2):  # warm-up outside the measured steps
        fn(v, st)
    torch.cuda.synchronize()
    if mode == "datapre":  # the steps start from batch 0, no batch prepared
        if st["thread"] is not None:
            st["thread"].join()
        st.update(i=0, thread=None, next=None, log=0.0)
        st["acc"].zero_()
    times = []
    prof = None
    if prof_dir:
        path = f"{prof_dir}/{mode}.{v}.json"
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                  torch.profiler.ProfilerActivity.CUDA],
                                      schedule=torch.profiler.schedule(wait=0, warmup=1, active=steps - 1, repeat=1),
                                      on_trace_ready=lambda p: p.export_chrome_trace(path))
        prof.start()
    # no synchronization between steps (a training loop has none; the host runs ahead), but for the
    # step that reads its loss back (datapre): the time per step is the whole loop's over the steps
    t0 = time.perf_counter()
    for _ in range(steps):
        torch.cuda.nvtx.range_push(f"{mode}.{v}")
        fn(v, st)
        torch.cuda.nvtx.range_pop()
        if prof:
            prof.step()
    torch.cuda.synchronize()
    times.append((time.perf_counter() - t0) * 1e3 / steps)
    if prof:
        prof.stop()
    if st.get("thread") is not None and st["thread"].is_alive():
        st["thread"].join()
    torch.set_float32_matmul_precision("highest")
    acc = st.get("acc")
    cs = (float(acc) if acc is not None else float(st["x"].sum())) + st.get("log", 0.0)
    if mode == "launch":
        cs = float(st["x"].sum())
    times.sort()
    print(json.dumps({"mode": mode, "variant": v, "step_ms": round(times[len(times) // 2], 4), "steps": steps,
                      "checksum": cs, "profiled": bool(prof_dir)}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--profile")
    ap.add_argument("--only")
    a = ap.parse_args()
    for m in MODES:
        if a.only and m != a.only:
            continue
        for v in ("planted", "twin"):
            run(m, v, a.steps, a.profile)


if __name__ == "__main__":
    main()
