#!/usr/bin/env bash
# gputap analyze on real PyTorch traces (two ranks of an NCCL job) against the numbers HTA 0.5.0
# computes on them, small real-format traces in every category spelling with planted launch delays,
# idle gaps and queue depths, the no-GPU-activity error, HTA's default view, and gputap diff.
. "$(dirname "$0")/lib.sh"
K="$FIX/kineto-2rank-nccl"
D="$T/hi"
python3 "$GT_TEST_SRCDIR/analyze-data/make_hta_inputs.py" "$D" || notok generate "make_hta_inputs.py failed"

# --- the real traces: every number HTA computes the same way (HTA 0.5.0, include_last_profiler_step) ---
"$GPUTAP" analyze --format json "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/k.json" 2>"$T/k.err"
python3 - "$T/k.json" >"$T/k.chk" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
bad = []
def near(name, got, want, rel=1e-3, ab=1e-3):
    if abs(got - want) > max(ab, rel * abs(want)):
        bad.append("%s: %r, HTA %r" % (name, got, want))
# temporal breakdown and overlap (the fixture's README)
for g, span, idle, comp, pct in (("rank0/gpu0", 1222.847, 675.191, 210.320, 14.95), ("rank1/gpu1", 1231.186, 651.136, 271.973, 19.93)):
    w = [x for x in r["timeline"]["gpus"] if x["label"] == g][0]["total"]
    near(g + " span", w["span_ms"], span); near(g + " idle", w["idle_ms"], idle)
    near(g + " compute", w["compute_ms"], comp); near(g + " overlap%", w["overlap_pct"], pct, ab=0.01)
# idle time breakdown per stream (HTA µs, rounded timestamps: totals agree within 0.1 %)
hta_idle = {("rank0/gpu0", 7): (397917, 3765, 598335), ("rank0/gpu0", 23): (1214793, 160, 34),
            ("rank1/gpu1", 7): (407794, 3475, 524657), ("rank1/gpu1", 25): (556447, 17, 91823)}
for s in r["streams"]:
    h = hta_idle.get((s["gpu"], s["stream"]))
    if h:
        near("%s/%d idle" % (s["gpu"], s["stream"]), s["idle_host_wait_ms"] + s["idle_kernel_wait_ms"] + s["idle_other_ms"], sum(h) / 1e3)
        near("%s/%d host wait" % (s["gpu"], s["stream"]), s["idle_host_wait_ms"], h[0] / 1e3)
        # each cause to the µs: gaps in integer ns (as doubles, epoch-ns times are 256 ns apart and
        # gaps of exactly 30 µs used to flip between kernel wait and other)
        for i, c in enumerate(("host_wait", "kernel_wait", "other")):
            near("%s/%d %s exact" % (s["gpu"], s["stream"], c), s["idle_%s_ms" % c], h[i] / 1e3, rel=0, ab=0.0011)
# memory bandwidth peak: Kineto's own "memory bandwidth (GB/s)" (from ns), as HTA reads it
bw = {(m["gpu"], m["kind"]): m["peak_gbps"] for m in r["memory_bandwidth"]}
near("rank0 DtoD peak", bw[("rank0/gpu0", "Memcpy DtoD")], 960.2, rel=0, ab=0.05)
# queue length summary (max and mean over the changes: exact)
hta_q = {("rank0/gpu0", 7): (80, 25.458175), ("rank0/gpu0", 23): (4, 0.626984), ("rank1/gpu1", 7): (91, 27.818363),
         ("rank1/gpu1", 25): (8, 4.0)}
for s in r["streams"]:
    h = hta_q.get((s["gpu"], s["stream"]))
    if h:
        near("%s/%d queue max" % (s["gpu"], s["stream"]), s["queue_max"], h[0], ab=0)
        near("%s/%d queue mean" % (s["gpu"], s["stream"]), s["queue_mean"], h[1], rel=1e-5)
# kernel launch statistics per rank
hta_l = {"rank0": (1204, 20539.698, 280, 937, 2), "rank1": (1154, 20270.258, 278, 880, 0)}
rows = r["kernels_per_rank"]["rows"]
for rank, (n, dsum_ms, short, dout, rout) in hta_l.items():
    k = [x for x in rows if x["rank"] == rank]
    near(rank + " launched", sum(x["launched"] for x in k), n, ab=0)
    near(rank + " delay sum", sum(x["delay_sum_us"] for x in k) / 1e3, dsum_ms)
    near(rank + " short", sum(x["short"] for x in k), short, ab=0)
    near(rank + " delay outliers", sum(x["delay_outliers"] for x in k), dout, ab=0)
    near(rank + " runtime outliers", sum(x["runtime_outliers"] for x in k), rout, ab=0)
# top kernels per kind and rank (HTA's get_gpu_kernel_breakdown, µs)
top = {("rank0", "compute"): [23469, 15167, 9309, 9201, 8837], ("rank1", "compute"): [57240, 37873, 29190, 11777, 8823],
       ("rank0", "communication"): [396199], ("rank1", "communication"): [379053]}
for (rank, kind), want in top.items():
    got = [x["time_ms"] for x in rows if x["rank"] == rank and x["kind"] == kind][:len(want)]
    for i, (a, b) in enumerate(zip(got, want)):
        near("%s %s #%d" % (rank, kind, i), a, b / 1e3, rel=0)
print("\n".join(bad) if bad else "all agree")
PY
contains real-traces-agree-with-hta "$T/k.chk" "all agree"
"$GPUTAP" analyze "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/k.txt" 2>&1
contains real-hta-left-out-line "$T/k.txt" "1179 GPU ops launched in the last ProfilerStep"
contains real-by-launch-split "$T/k.txt" "2358 (2358 by their launch event, 0 without one in the trace"
# HTA's default view: overlap 11.81 % (rank 0), 20.05 % (rank 1) with the last step left out
"$GPUTAP" analyze --hta-view --format json "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/kv.json" 2>&1
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
p = {g["label"]: round(g["total"]["overlap_pct"], 2) for g in r["timeline"]["gpus"]}
print("ok" if p == {"rank0/gpu0": 11.81, "rank1/gpu1": 20.05} and r["hta_view"]["left_out_ops"] == 1179 else p)
' "$T/kv.json" >"$T/kv.chk" 2>&1
contains hta-view-reproduces-hta-default "$T/kv.chk" "ok"

# --- every category spelling gives the same numbers ---
for s in kineto capitals driver; do
	"$GPUTAP" analyze --format json "$D/$s.json" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
t = r["timeline"]["total"]
print(t["kernels"], t["memops"], t["busy_ms"], r["iterations"], r["hta_view"]["no_launch_event_ops"])' >"$T/sp-$s" 2>&1
done
contains spelling-kineto "$T/sp-kineto" "5 1 0.0285 2 1"
if cmp -s "$T/sp-kineto" "$T/sp-capitals" && cmp -s "$T/sp-kineto" "$T/sp-driver"; then ok spellings-same; else
	notok spellings-same "$(cat "$T/sp-kineto" "$T/sp-capitals" "$T/sp-driver")"; fi

# --- planted delays, gaps and queue depths (worked out in make_hta_inputs.py) ---
"$GPUTAP" analyze --format json "$D/capitals.json" >"$T/p.json" 2>&1
python3 - "$T/p.json" >"$T/p.chk" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
s7 = [s for s in r["streams"] if s["stream"] == 7][0]
k = {x["name"]: x for x in r["kernels_per_rank"]["rows"]}
m = r["memory_bandwidth"][0]
want = {"host wait": (s7["idle_host_wait_ms"], 0.055), "kernel wait": (s7["idle_kernel_wait_ms"], 0.005),
        "other": (s7["idle_other_ms"], 0.125), "queue max": (s7["queue_max"], 3), "queue mean": (s7["queue_mean"], 1.25),
        "delay k_a": (k["k_a"]["delay_max_us"], 9), "delay k_c": (k["k_c"]["delay_max_us"], 147),
        "k_c outlier": (k["k_c"]["delay_outliers"], 1), "k_d short": (k["k_d"]["short"], 1),
        "k_early launched": (k["k_early"]["launched"], 0), "bw peak": (m["peak_gbps"], 100), "bw kind": (m["kind"], "Memcpy HtoD"),
        "sync": (r["hta_view"]["cuda_sync_events"], 1), "last step": (r["hta_view"]["last_step_ops"], 2)}
bad = ["%s: %r, wanted %r" % (n, g, w) for n, (g, w) in want.items() if (abs(g - w) > 1e-9 if isinstance(w, (int, float)) else g != w)]
print("\n".join(bad) if bad else "all planted")
PY
contains planted-delays-gaps-queues "$T/p.chk" "all planted"
"$GPUTAP" analyze --format csv "$D/capitals.json" >"$T/p.csv" 2>&1
contains csv-idle-by-cause "$T/p.csv" "stream,capitals.json/gpu0,,stream 7,idle_host_wait_ms,0.055000"
contains csv-queue-series "$T/p.csv" ",queue_series,capitals.json/gpu0,"
contains csv-membw "$T/p.csv" ",membw,capitals.json/gpu0,,Memcpy HtoD,peak_gbps,100.000000"
"$GPUTAP" analyze --launched-only "$D/kineto.json" >"$T/lo.txt" 2>&1
contains launched-only-leaves-out "$T/lo.txt" "Left out here (--launched-only): 1 GPU ops, 0.003 ms"

# --- no GPU activity: an error naming the file, exit 1, no table ---
expect_status no-gpu-activity-exit 1 "$GPUTAP" analyze "$D/cpu-only.json"
contains no-gpu-activity-names-file "$T/.out" "cpu-only.json: no GPU activity"
if grep -q "Measured GPU time" "$T/.out"; then notok no-gpu-activity-no-table "$(cat "$T/.out")"; else ok no-gpu-activity-no-table; fi

# --- gputap diff ---
"$GPUTAP" diff "$D/kineto.json" "$D/capitals.json" >"$T/d0.txt" 2>&1
# (k_early, launched before the trace and so outside every iteration, is not in the kernel table)
contains diff-same "$T/d0.txt" "Kernels: 0 added, 0 removed, 0 changed, 5 the same"
"$GPUTAP" diff "$D/kineto.json" "$D/added.json" >"$T/d1.txt" 2>&1
contains diff-added "$T/d1.txt" "Kernels: 1 added, 0 removed, 0 changed, 5 the same"
contains diff-added-row "$T/d1.txt" "k_new"
"$GPUTAP" diff --format json "$D/added.json" "$D/kineto.json" >"$T/d2.json" 2>&1
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
k = {x["name"]: x for x in d["kernels"]}
it = {x["iteration"]: x for x in d["iterations"]}
print("ok" if k["k_new"]["status"] == "removed" and it[1]["ops_a"] == 3 and it[1]["ops_b"] == 2 and it[0]["ops_a"] == 3 else (k["k_new"], it))
' "$T/d2.json" >"$T/d2.chk" 2>&1
contains diff-json-removed-per-iteration "$T/d2.chk" "ok"
expect_status diff-one-input 2 "$GPUTAP" diff "$D/kineto.json"
finish
