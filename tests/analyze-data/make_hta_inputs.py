#!/usr/bin/env python3
"""Small Kineto traces in every category spelling PyTorch has written, with planted launch delays,
idle gaps and queue depths whose answers are worked out by hand in tests/cli/t_analyze_hta.sh.

usage: make_hta_inputs.py OUTDIR
"""
import json
import os
import sys

# (kernel name, launch call start µs, GPU start µs, GPU duration µs); every launch call lasts 1 µs
KERNELS = [
    ("k_a", 0, 10, 5),      # queue 1; delay 10 - 1 = 9
    ("k_b", 1, 20, 5),      # queue 2; gap 20 - 15 = 5 µs, launched before k_a ended: kernel wait
    ("k_c", 2, 150, 5),     # queue 3; gap 150 - 25 = 125 µs: other; delay 147 µs: an outlier
    ("k_d", 200, 210, 0.5),  # launched after k_c ended (155): host wait 210 - 155 = 55 µs; shorter than its call
]


def events(spelling):
    kernel, runtime, memcpy, cpu = spelling
    ev = [{"ph": "X", "cat": cpu, "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
          {"ph": "X", "cat": cpu, "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 400}]
    for i, (name, lts, ts, dur) in enumerate(KERNELS):
        corr = 100 + i
        ev.append({"ph": "X", "cat": runtime, "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": lts, "dur": 1,
                   "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": kernel, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                   "args": {"device": 0, "stream": 7, "correlation": corr}})
    # a 1 MB copy in 10 µs on stream 8: 100 GB/s
    ev.append({"ph": "X", "cat": runtime, "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 300, "dur": 2,
               "args": {"correlation": 200}})
    ev.append({"ph": "X", "cat": memcpy, "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 8, "ts": 400,
               "dur": 10, "args": {"device": 0, "stream": 8, "correlation": 200, "bytes": 1000000}})
    # launched before the trace began: no runtime event
    ev.append({"ph": "X", "cat": kernel, "name": "k_early", "pid": 0, "tid": 9, "ts": 5, "dur": 3,
               "args": {"device": 0, "stream": 9, "correlation": 7}})
    # what HTA would count as GPU work: a cuda_sync event and a CPU op with a stream
    ev.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 400, "dur": 1,
               "args": {"device": 0, "stream": 7}})
    return ev


SPELLINGS = {
    "kineto": ("kernel", "cuda_runtime", "gpu_memcpy", "user_annotation"),
    "capitals": ("Kernel", "Runtime", "Memcpy", "Operator"),
    "driver": ("kernel", "cuda_driver", "gpu_memcpy", "cpu_op"),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, sp in SPELLINGS.items():
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump({"schemaVersion": 1, "traceEvents": events(sp)}, f)
    # the same with one more kernel name (for gputap diff)
    ev = events(SPELLINGS["kineto"])
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 350, "dur": 1,
               "args": {"correlation": 300}})
    ev.append({"ph": "X", "cat": "kernel", "name": "k_new", "pid": 0, "tid": 7, "ts": 420, "dur": 7,
               "args": {"device": 0, "stream": 7, "correlation": 300}})
    with open(os.path.join(out, "added.json"), "w") as f:
        json.dump({"traceEvents": ev}, f)
    # no GPU activity: CPU ops only
    with open(os.path.join(out, "cpu-only.json"), "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 0,
                                    "dur": 5}]}, f)


if __name__ == "__main__":
    main()
