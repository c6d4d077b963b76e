#!/usr/bin/env python3
"""Small Kineto traces, each planting one HTA-parity defect that gputap once had; the answers are
worked out by hand in tests/cli/t_analyze_parity.sh.

usage: make_parity_inputs.py OUTDIR
"""
import json
import os
import re
import sys

EPOCH_US = 1764000000000000  # a PyTorch trace's ts: µs since the epoch (1.764e18 ns: doubles 256 ns apart)


def launch(ev, corr, ts, dur=1, name="cudaLaunchKernel"):
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
               "args": {"correlation": corr}})


def kernel(ev, name, corr, ts, dur, stream=7):
    ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
               "args": {"device": 0, "stream": stream, "correlation": corr}})


def step(ev, n, ts, dur, name=None):
    ev.append({"ph": "X", "cat": "user_annotation", "name": name or "ProfilerStep#%d" % n, "pid": 1, "tid": 1,
               "ts": ts, "dur": dur})


def write(out, name, ev):
    with open(os.path.join(out, name), "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    # epoch-ns gaps: on one stream, gaps of exactly 30 µs (not under the 30 µs threshold: other) and
    # of 29.999 µs (kernel wait), all launched long before (no host wait).  Times in integer ns,
    # written as Kineto writes them: µs with three decimals (a Python float would round them)
    ev, t, corr = [], EPOCH_US * 1000 + 1, 1
    for i in range(40):
        launch(ev, corr, EPOCH_US - 1000 + i)
        kernel(ev, "k", corr, "@%d@" % t, 10)
        t += 10000 + (30000 if i % 2 == 0 else 29999)
        corr += 1
    text = json.dumps({"schemaVersion": 1, "traceEvents": ev})
    text = re.sub(r'"@(\d+)@"', lambda m: "%d.%03d" % divmod(int(m.group(1)), 1000), text)
    with open(os.path.join(out, "epoch.json"), "w") as f:
        f.write(text)

    # two kernels whose 1,100-byte names differ only after byte 1,050 (A) / one of them changed (B)
    base = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_" + "x" * 1040
    ev = []
    launch(ev, 1, 0)
    kernel(ev, base + "_variant_one<128>(Params)", 1, 10, 5)
    launch(ev, 2, 1)
    kernel(ev, base + "_variant_two<128>(Params)", 2, 20, 5)
    write(out, "longnames-a.json", ev)
    ev = []
    launch(ev, 1, 0)
    kernel(ev, base + "_variant_one<128>(Params)", 1, 10, 5)
    launch(ev, 2, 1)
    kernel(ev, base + "_variant_six<128>(Params)", 2, 20, 5)
    write(out, "longnames-b.json", ev)

    # 120-byte names that differ only in the middle, after byte 70: text rows must stay apart
    ev = []
    for i, mid in enumerate(("alpha", "omega")):
        launch(ev, i + 1, i)
        kernel(ev, "void at::native::elementwise_kernel_with_index_" + "y" * 30 + "_" + mid + "_" + "z" * 20 +
               "<int, 128>()",
               i + 1, 10 + 10 * i, 5)
    write(out, "midnames.json", ev)

    # one cudaGraphLaunch of 80 µs that runs 3,000 kernels on one stream, then one plain launch
    ev = []
    launch(ev, 1, 0, 80, "cudaGraphLaunch")
    for i in range(3000):
        kernel(ev, "graph_k", 1, 100 + 2 * i, 1)
    launch(ev, 2, 7000, 2)
    kernel(ev, "plain_k", 2, 7010, 1)
    write(out, "graph.json", ev)

    # launch delays 1..10 ms of one kernel (exact percentiles: p50 5.5 ms, p90 9.1 ms); and a
    # trace with no launch call at all (delays unknown) and no NCCL (overlap unknown)
    ev = []
    for i in range(10):
        launch(ev, i + 1, 100000 * i, 1)
        kernel(ev, "delayed_k", i + 1, 100000 * i + 1 + 1000 * (i + 1), 5)
    write(out, "delays.json", ev)
    ev = []
    kernel(ev, "orphan_k", 0, 10, 5)
    kernel(ev, "orphan_k", 0, 30, 5)
    write(out, "nolaunch.json", ev)

    # a short copy: Kineto wrote dur 1 µs, its own bandwidth (from 1.8 µs) says 1e6 / 1800 = 555.6 GB/s
    ev = []
    launch(ev, 1, 0, 1, "cudaMemcpyAsync")
    ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7,
               "ts": 10, "dur": 1, "args": {"device": 0, "stream": 7, "correlation": 1, "bytes": 1000000,
                                            "memory bandwidth (GB/s)": 1000000 / 1800}})
    write(out, "shortcopy.json", ev)

    # two ProfilerSteps, with kernels launched before the first (outside every iteration); B = A
    # with 5 more of the outside kernel: diff must call every kernel the same
    for side, extra in (("a", 0), ("b", 5)):
        ev = []
        corr = 1
        for i in range(2 + extra):
            launch(ev, corr, i)
            kernel(ev, "setup_k", corr, 10 + i * 10, 5)
            corr += 1
        for s in range(2):
            step(ev, s, 1000 + s * 1000, 1000)
            for i in range(3):
                launch(ev, corr, 1000 + s * 1000 + i)
                kernel(ev, "train_k", corr, 1100 + s * 1000 + i * 10, 5)
                corr += 1
        write(out, "outside-%s.json" % side, ev)

    # no ProfilerStep: a long "warmup" range (twice) and a shorter "step" range (4 times); and an
    # NVTX-style range with no ProfilerStep, for the last-step note
    ev = []
    corr = 1
    t = 0
    for w in range(2):
        step(ev, 0, t, 50000, "warmup")
        launch(ev, corr, t + 1)
        kernel(ev, "warm_k", corr, t + 10, 40000)
        corr += 1
        t += 50000
    for s in range(4):
        step(ev, 0, t, 1000, "step")
        launch(ev, corr, t + 1)
        kernel(ev, "step_k", corr, t + 10, 500)
        corr += 1
        t += 1000
    write(out, "warmup.json", ev)

    # ProfilerStep#0 is a warm-up of 286.5 s, steps 1..5 take 10 ms each: the report's iteration plot
    # must not flatten them (and writes 286500 ms, not 2.865e+05)
    ev = []
    corr, t = 1, 0
    for s in range(6):
        d = 286500000 if s == 0 else 10000
        step(ev, s, t, d + 100)
        launch(ev, corr, t + 1)
        kernel(ev, "step_k", corr, t + 50, d)
        corr += 1
        t += d + 100
    write(out, "warmstep.json", ev)


if __name__ == "__main__":
    main()
