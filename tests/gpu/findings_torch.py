"""The findings corpus in PyTorch (docs/findings.md, docs/gpu-validation.md): for each finding an
anti-pattern planted in a training-like step and a twin without it that computes the same result.

    python3 findings_torch.py [--steps N] [--profile DIR] [--only MODE[,MODE...]]

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
    # bf16 (the GEMMs are not FP32: that would be another finding), and layers large enough that the GPU,
    # not the launching host, bounds the step: the synchronizations are the planted cost
    return {"w": [(torch.randn(4096, 4096, device=dev) / 64).bfloat16() for _ in range(12)],
            "x": torch.randn(4096, 4096, device=dev).bfloat16(), "acc": torch.zeros((), device=dev), "log": 0.0}


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
    torch.manual_seed(0)
    st = {"w": (torch.randn(2048, 2048, device=dev) / 45).bfloat16(), "acc": torch.zeros((), device=dev),
          "a": (torch.randn(4096, 4096, device=dev) / 64).bfloat16(), "b": (torch.randn(4096, 4096, device=dev) / 64).bfloat16(),
          "pinned": [torch.empty(512, 2048, pin_memory=True) for _ in range(2)], "i": 0, "thread": None}
    st["z"] = torch.empty(4096, 4096, device=dev).bfloat16()
    return st


PREP_ROUNDS = 6


def make_batch(i, out):
    """host-side data preparation into the pinned buffer `out`: a fixed amount of numpy work (a few ms,
    the same data in both variants; numpy releases the GIL in its loops, so a thread can do it while
    the main thread launches)"""
    a = np.arange(512 * 2048, dtype=np.float32).reshape(512, 2048)
    a *= 1e-6
    a += 0.01 * (i % 7)
    for _ in range(PREP_ROUNDS):
        np.multiply(a, 0.999, out=a)
        np.add(a, 0.001, out=a)
    np.copyto(out.numpy(), a)


def step_datapre(v, st):
    """step-gap: the batch prepared at the start of each step, or prepared by a thread during the step before
    (two pinned buffers: the thread fills the one the step after next copies from)"""
    i = st["i"]
    cur = st["pinned"][i % 2]
    if v == "planted":
        make_batch(i, cur)
    elif st["thread"] is None:
        make_batch(i, cur)
    else:
        st["thread"].join()
    h = cur.to(dev, non_blocking=True).bfloat16()
    for _ in range(6):
        h = torch.tanh(h @ st["w"])
    for _ in range(48):  # the rest of the step on the GPU: 8-11 ms of GEMMs that fill it (the batch hides behind)
        torch.mm(st["a"], st["b"], out=st["z"])
    st["acc"] += h.float().mean()
    if v == "twin":
        st["thread"] = threading.Thread(target=make_batch, args=(i + 1, st["pinned"][(i + 1) % 2]))
        st["thread"].start()
    st["log"] = st.get("log", 0.0) + float(h[0, 0].float().item())  # the loss read back: the step ends synchronized
    st["i"] = i + 1


def setup_cache(v):
    torch.manual_seed(0)
    return {"w": [(torch.randn(4096, 4096, device=dev) / 64).bfloat16() for _ in range(8)],
            "x": torch.randn(4096, 4096, device=dev).bfloat16(), "acc": torch.zeros((), device=dev)}


def step_cache(v, st):
    """alloc-churn: 32 MiB temporaries per layer with PyTorch's cache emptied in the middle of the step
    (torch.cuda.empty_cache(): cudaFree of the cached blocks, cudaMalloc again after), or the caching
    allocator left alone (a healthy loop: its blocks are reused, no cudaMalloc in steady state)"""
    h = st["x"]
    for k, w in enumerate(st["w"]):
        h = torch.tanh(h @ w)
        if v == "planted" and k == 3:
            torch.cuda.empty_cache()
    st["acc"] += h.float().mean()


MODES = ["launch", "item", "pageable", "fp32", "zero", "datapre", "cache"]


def kineto_profiler(path, steps):
    """torch.profiler over `steps` steps (the first a warm-up), started, its trace exported to path."""
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                              torch.profiler.ProfilerActivity.CUDA],
                                  schedule=torch.profiler.schedule(wait=0, warmup=1, active=steps - 1, repeat=1),
                                  on_trace_ready=lambda p: p.export_chrome_trace(path))
    prof.start()
    return prof


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
        prof = kineto_profiler(path, steps)
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
        if a.only and m not in a.only.split(","):
            continue
        for v in ("planted", "twin"):
            run(m, v, a.steps, a.profile)


if __name__ == "__main__":
    main()
