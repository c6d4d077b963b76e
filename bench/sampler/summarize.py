"""Summarise one `gputap run --tools power,vram` directory: timing, CPU, what was read.

usage: summarize.py DIR [LABEL]
"""
import csv
import json
import statistics
import sys

d = sys.argv[1]
label = sys.argv[2] if len(sys.argv) > 2 else d
j = json.load(open(d + "/run.json"))
t = [x for x in j["tools"] if x.get("samples") is not None][0]
rows = list(csv.DictReader(open(d + "/gpu_samples.csv")))
out = {"label": label, "exit": j.get("exit_status", j.get("status")), "samples": t["samples"],
       "missed_deadlines": t["missed_deadlines"], "period_s": t["period_s"],
       "measured_period_s": t.get("measured_period_s"), "thread_cpu_s": t["thread_cpu_s"],
       "thread_cpu_pct": t.get("thread_cpu_pct"), "devices": t["devices"],
       # both threads above; then each (sampler with the energy reader thread)
       "tick_thread_cpu_s": t.get("tick_thread_cpu_s"), "energy_thread_cpu_s": t.get("energy_thread_cpu_s"),
       "energy_thread_cpu_pct": t.get("energy_thread_cpu_pct"), "energy_reads": t.get("energy_reads")}
for dev in sorted({r["device"] for r in rows}):
    rs = [r for r in rows if r["device"] == dev]
    ts = [int(r["time_ns"]) for r in rs]
    gaps = [(b - a) / 1e6 for a, b in zip(ts, ts[1:])]
    pw = sorted(float(r["power_W"]) for r in rs if r["power_W"])
    o = {"rows": len(rs), "gap_mean_ms": statistics.mean(gaps), "gap_sd_ms": statistics.pstdev(gaps),
         "gap_min_ms": min(gaps), "gap_max_ms": max(gaps),
         "power_first_W": pw and float(rs[0]["power_W"] or 0), "power_median_W": pw and pw[len(pw) // 2],
         "power_max_W": pw and pw[-1], "energy_last_J": rs[-1]["energy_J"],
         "rows_with_util": sum(1 for r in rs if r["sm_util_pct"]),
         "rows_with_mem": sum(1 for r in rs if r["mem_used_MiB"]),
         "rows_with_energy": sum(1 for r in rs if r["energy_J"]),
         "distinct_power_values": len(set(pw))}
    out["gpu" + dev] = o
print(json.dumps(out, indent=1))
