#!/usr/bin/env bash
# HTA-parity defects gputap once had, one planted trace each (tests/analyze-data/make_parity_inputs.py):
# idle gaps of epoch-ns traces, kernel names over 1 KiB, a cudaGraphLaunch, exact launch-delay
# percentiles, unknown values as null and "-", Kineto's own copy bandwidth, diff's kernel table over
# the iterations only and its JSON numbers, long names in text rows, a warm-up range never picked as
# the iterations, and no "last ProfilerStep" without ProfilerSteps.
. "$(dirname "$0")/lib.sh"
D="$T/p"
python3 "$GT_TEST_SRCDIR/analyze-data/make_parity_inputs.py" "$D" || notok generate "make_parity_inputs.py failed"

# jcheck NAME FILE PYTHON-EXPR: passes when the expression over r (the first result) is true
jcheck() {
	local n=$1 f=$2 e=$3 got
	got=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); r = d["results"][0] if "results" in d else d
ok = eval(sys.argv[2]); print("yes" if ok else "no")' "$f" "$e" 2>&1)
	if [ "$got" = yes ]; then ok "$n"; else notok "$n" "$e" "$got" "$(head -c 1500 "$f")"; fi
}
an() { # NAME FILE ARGS...: gputap analyze --format json into $T/NAME.json
	local n=$1
	shift
	"$GPUTAP" analyze --format json "$@" >"$T/$n.json" 2>"$T/$n.err" || notok "$n-runs" "$(cat "$T/$n.err")"
}

# idle gaps in integer ns: 20 gaps of exactly 30 us are "other", 19 of 29.999 us kernel wait
an epoch "$D/epoch.json"
jcheck epoch-gap-30us-is-other "$T/epoch.json" 'r["streams"][0]["idle_other_gaps"] == 20 and r["streams"][0]["idle_other_ms"] == 0.6'
jcheck epoch-gap-29.999us-is-kernel-wait "$T/epoch.json" 'r["streams"][0]["idle_kernel_wait_gaps"] == 19 and abs(r["streams"][0]["idle_kernel_wait_ms"] - 0.569981) < 1e-9'

# names of 1,100 bytes kept whole: two rows, and diff tells a changed one apart
an longnames "$D/longnames-a.json"
jcheck long-names-two-rows "$T/longnames.json" 'len(r["kernels_per_rank"]["rows"]) == 2 and all(len(x["name"]) > 1100 for x in r["kernels_per_rank"]["rows"])'
"$GPUTAP" diff --format json "$D/longnames-a.json" "$D/longnames-b.json" >"$T/ldiff.json" 2>&1
jcheck long-names-diff-sees-the-change "$T/ldiff.json" 'sorted(k["status"] for k in r["kernels"]) == ["added", "removed", "same"]'

# long names in text rows: start, end and a hash, so that two rows never look alike
"$GPUTAP" analyze "$D/midnames.json" >"$T/mid.txt" 2>&1
n=$(grep -c 'elementwise_kernel_with_index' "$T/mid.txt")
u=$(grep 'elementwise_kernel_with_index' "$T/mid.txt" | awk '{print $NF}' | sort -u | wc -l)
if [ "$n" = 2 ] && [ "$u" = 2 ]; then ok text-long-names-distinct; else notok text-long-names-distinct "$(cat "$T/mid.txt")"; fi

# one cudaGraphLaunch of 3,000 kernels: one launch in the statistics, one in the queue
an graph "$D/graph.json"
jcheck graph-launch-counted-once "$T/graph.json" 'sum(x["launched"] for x in r["kernels_per_rank"]["rows"]) == 2 and sum(x["runtime_outliers"] for x in r["kernels_per_rank"]["rows"]) == 1'
jcheck graph-launch-queue-bounded "$T/graph.json" 'r["streams"][0]["queue_max"] == 1'

# exact percentiles of the delays 1..10 ms (numpy's linear interpolation)
an delays "$D/delays.json"
jcheck delay-percentiles-exact "$T/delays.json" '[(x["delay_p50_us"], x["delay_p90_us"], x["delay_p99_us"]) for x in r["kernels_per_rank"]["rows"]] == [(5500, 9100, 9910)]'

# what cannot be known: null in JSON, "-" in text, never 0
an nolaunch "$D/nolaunch.json"
jcheck unknown-delay-is-null "$T/nolaunch.json" 'r["kernels_per_rank"]["rows"][0]["delay_p50_us"] is None and r["kernels_per_rank"]["rows"][0]["delay_max_us"] is None'
jcheck unknown-queue-is-null "$T/nolaunch.json" 'r["streams"][0]["queue_max"] is None and r["streams"][0]["queue_mean"] is None'
jcheck unknown-overlap-is-null "$T/nolaunch.json" 'r["timeline"]["total"]["overlap_pct"] is None and r["timeline"]["gpus"][0]["total"]["overlap_pct"] is None'
"$GPUTAP" analyze "$D/nolaunch.json" >"$T/nolaunch.txt" 2>&1
if grep -qE 'orphan_k' "$T/nolaunch.txt" && grep -E '^nolaunch.json +compute' "$T/nolaunch.txt" | grep -qE ' - +- +- ' &&
	grep -q -- '-: no launch call' "$T/nolaunch.txt" && grep -q -- 'Overlap(%) -: no communication' "$T/nolaunch.txt"; then
	ok unknown-is-dash-with-note
else
	notok unknown-is-dash-with-note "$(cat "$T/nolaunch.txt")"
fi

# a 1 us copy whose own bandwidth (Kineto's, from 1.8 us) is 555.6 GB/s, not 1000
an shortcopy "$D/shortcopy.json"
jcheck copy-bandwidth-from-kineto-ns "$T/shortcopy.json" 'abs(r["memory_bandwidth"][0]["peak_gbps"] - 555.556) < 0.001 and abs(r["memory_bandwidth"][0]["avg_gbps"] - 555.556) < 0.001'

# diff: ops launched outside every iteration are not in the kernel table; no float noise in JSON
"$GPUTAP" diff --format json "$D/outside-a.json" "$D/outside-b.json" >"$T/odiff.json" 2>&1
jcheck diff-kernels-inside-iterations "$T/odiff.json" '[(k["name"], k["status"], k["count_a"], k["count_b"]) for k in r["kernels"]] == [("train_k", "same", 6, 6)]'
if grep -qE '[0-9]\.[0-9]{7,}' "$T/odiff.json" "$T/ldiff.json"; then
	notok diff-json-no-float-noise "$(grep -E '[0-9]\.[0-9]{7,}' "$T/odiff.json" "$T/ldiff.json" | head -3)"
else
	ok diff-json-no-float-noise
fi

# no ProfilerStep: the repeating "step" range, not the longer "warmup"; no last-ProfilerStep count
an warmup "$D/warmup.json"
jcheck warmup-not-picked "$T/warmup.json" 'r["iterations"] == 4 and r["nvtx"]["tag"] == "step"'
jcheck no-last-step-without-profilersteps "$T/warmup.json" 'r["hta_view"]["last_step_ops"] == 0'
"$GPUTAP" analyze "$D/warmup.json" >"$T/warmup.txt" 2>&1
if grep -q 'last ProfilerStep' "$T/warmup.txt"; then notok no-last-step-note "$(cat "$T/warmup.txt")"; else ok no-last-step-note; fi
finish
