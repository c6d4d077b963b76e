#!/usr/bin/env python3
"""HTA (Holistic Trace Analysis) in-process on a folder of Kineto traces: the trace is parsed once,
then every analysis gputap analyze computes is timed on the parsed trace — temporal breakdown,
communication/computation overlap, idle time by cause, kernel launch statistics, queue length,
memory bandwidth, kernel breakdown.  Prints JSON: seconds per analysis, their sum, the parse, the
import and the peak RSS.  An analysis that fails on a trace (HTA 0.5 asserts on some PyTorch 2.x
traces) is timed up to the failure and named in "errors".

usage: hta_all.py TRACE_DIR OUT.json
"""
import json
import resource
import sys
import time

t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis  # noqa: E402

t_import = time.perf_counter() - t0
t1 = time.perf_counter()
ta = TraceAnalysis(trace_dir=sys.argv[1])
t_parse = time.perf_counter() - t1
ANALYSES = [
    ("temporal_breakdown", lambda: ta.get_temporal_breakdown(visualize=False)),
    ("comm_comp_overlap", lambda: ta.get_comm_comp_overlap(visualize=False)),
    ("idle_time_breakdown", lambda: ta.get_idle_time_breakdown(visualize=False)),
    ("cuda_kernel_launch_stats", lambda: ta.get_cuda_kernel_launch_stats(visualize=False)),
    ("queue_length_summary", lambda: ta.get_queue_length_summary()),
    ("memory_bw_summary", lambda: ta.get_memory_bw_summary()),
    ("gpu_kernel_breakdown", lambda: ta.get_gpu_kernel_breakdown(visualize=False)),
]
res = {"seconds": {}, "errors": [], "seconds_parse": t_parse, "seconds_import": t_import}
for name, fn in ANALYSES:
    t = time.perf_counter()
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - record and keep timing the others
        res["errors"].append("%s: %s %s" % (name, type(e).__name__, str(e)[:120]))
    res["seconds"][name] = time.perf_counter() - t
res["seconds_analyses"] = sum(res["seconds"].values())
res["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
json.dump(res, open(sys.argv[2], "w"), indent=1)
