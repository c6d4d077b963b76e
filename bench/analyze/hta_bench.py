#!/usr/bin/env python3
"""Run HTA (Holistic Trace Analysis) on a folder of Kineto traces and print its numbers as JSON.

usage: hta_bench.py TRACE_DIR OUT.json
Times the whole job (parse + get_temporal_breakdown + get_comm_comp_overlap) and reports the
process's peak RSS, so that bench/analyze/run.sh can set them beside gputap's.
"""
import json, resource, sys, time

t0 = time.time()
from hta.trace_analysis import TraceAnalysis  # noqa: E402

t_import = time.time() - t0
t1 = time.time()
ta = TraceAnalysis(trace_dir=sys.argv[1])
t_parse = time.time() - t1
errors = []
try:  # HTA 0.5 asserts on some PyTorch 2.x traces (non_compute_time < 0): record it, keep timing
    tb = ta.get_temporal_breakdown(visualize=False)
except AssertionError as e:
    import pandas as pd
    tb, errors = pd.DataFrame(columns=["rank"]), errors + ["get_temporal_breakdown: assertion failed %s" % e]
ov = ta.get_comm_comp_overlap(visualize=False)
t_all = time.time() - t1
kt, _ = ta.get_gpu_kernel_breakdown(visualize=False)  # not timed: it also builds per-kernel tables
res = {"errors": errors, "seconds_total": t_all, "seconds_parse": t_parse, "seconds_import": t_import,
       "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "ranks": {}}
# HTA 0.2 reports these in ns, HTA 0.5 in µs: take whichever the installed one has
unit, scale = ("us", 1e3) if "idle_time(us)" in tb.columns else ("ns", 1e6)
for _, row in tb.iterrows():
    res["ranks"][str(int(row["rank"]))] = {
        "idle_ms": row["idle_time(%s)" % unit] / scale, "compute_ms": row["compute_time(%s)" % unit] / scale,
        "non_compute_ms": row["non_compute_time(%s)" % unit] / scale, "span_ms": row["kernel_time(%s)" % unit] / scale}
for _, row in ov.iterrows():
    res["ranks"].setdefault(str(int(row["rank"])), {})["overlap_pct"] = float(row["comp_comm_overlap_pctg"])
# kernel-type breakdown over all ranks: time only compute, only communication, and both at once
res["kernel_types_ms"] = {str(r["kernel_type"]): float(r["sum"]) / scale for _, r in kt.iterrows()}
json.dump(res, open(sys.argv[2], "w"), indent=1)
