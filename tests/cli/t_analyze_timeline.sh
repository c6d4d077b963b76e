#!/usr/bin/env bash
# gputap analyze on timelines (Kineto JSON, nsys SQLite) built by tests/analyze-data/make_inputs.py,
# whose answers are known by construction (expected.json is computed independently in Python).
. "$(dirname "$0")/lib.sh"
D="$GT_TEST_SRCDIR/analyze-data"
PY=${PYTHON:-python3}
if ! "$PY" "$D/make_inputs.py" "$T/in" >"$T/.mk" 2>&1; then notok make-inputs "$(cat "$T/.mk")"; finish; fi
ok make-inputs

# compare NAME JSON_OUT KEY_IN_EXPECTED GPU_INDEX|total
compare() {
	local n=$1 out=$2 key=$3 which=$4
	if "$PY" - "$out" "$T/in/expected.json" "$key" "$which" >"$T/.cmp" 2>&1 <<'PYEOF'
import json, sys
out = json.load(open(sys.argv[1])); exp = json.load(open(sys.argv[2]))[sys.argv[3]]
assert out["schema_version"] == 2
tl = out["results"][0]["timeline"]
w = tl["total"] if sys.argv[4] == "total" else tl["gpus"][int(sys.argv[4])]["total"]
bad = [k for k in exp if abs(w[k] - exp[k]) > 1e-9]
if bad:
    sys.exit("mismatch: " + ", ".join("%s %r != %r" % (k, w[k], exp[k]) for k in bad))
PYEOF
	then ok "$n"; else notok "$n" "$(cat "$T/.cmp")"; fi
}

# Two ranks' Kineto files (one plain, one gzip), out of time order: per-rank and total numbers.
expect_status kineto-two-ranks 0 "$GPUTAP" analyze --format json --map "$D/map.json" "$T/in/rank0.json" "$T/in/rank1.json.gz"
cp "$T/.out" "$T/k.json"
compare kineto-rank0 "$T/k.json" rank0 0
compare kineto-rank1 "$T/k.json" rank1 1
compare kineto-total "$T/k.json" total total
contains kineto-iterations "$T/k.json" '"iteration_source": "profiler-step"'
# rows are named by distributedInfo.rank; no runtime events in these files: ops placed by GPU time
contains kineto-rank-labels "$T/k.json" '"label": "rank1/gpu0"'
contains kineto-by-time "$T/k.json" '"by_time": 14'
contains kineto-nvtx-cpu "$T/k.json" '"time_source": "cpu-range"'
contains kineto-class "$T/k.json" '"name": "gemm"'

# The nsys SQLite export holds both timelines as devices 0 and 1.
"$GPUTAP" analyze --format json --nvtx train_step "$T/in/scenario.sqlite" >"$T/s.json" 2>"$T/s.err"
compare sqlite-gpu0 "$T/s.json" rank0 0
compare sqlite-gpu1 "$T/s.json" rank1 1
compare sqlite-total "$T/s.json" total total
contains sqlite-nvtx "$T/s.json" '"iteration_source": "nvtx"'

# Text keeps the GPU Performance Analyzer's sections and adds the measured tables; CSV is long format.
expect_status text 0 "$GPUTAP" analyze --nvtx train_step "$T/in/scenario.sqlite"
contains text-analyzer-section "$T/.out" "NCCL Statistic:"
contains text-measured "$T/.out" "scenario.sqlite/gpu0          1.400       1.000       0.400       0.600       0.500       0.150       0.350       30.00"
contains text-iteration "$T/.out" "1 scenario.sqlite/gpu0        0.400       0.300       0.100       0.150       0.200       0.050       0.150       25.00"
expect_status csv 0 "$GPUTAP" analyze --format csv --nvtx train_step "$T/in/scenario.sqlite"
contains csv-header "$T/.out" "title,section,gpu,iteration,name,metric,value"
contains csv-overlap "$T/.out" "scenario.sqlite,gpu,scenario.sqlite/gpu0,,,overlap_ms,0.150000"

# --iters without ranges: even split in time, and the divisor.
expect_status iters-split 0 "$GPUTAP" analyze --format json --iters 4 --nvtx no-such-range "$T/in/scenario.sqlite"
contains iters-source "$T/.out" '"iteration_source": "--iters"'
contains iters-tag-unmatched "$T/.out" 'no NVTX range named "no-such-range" in scenario.sqlite (ranges seen: train_step'
"$GPUTAP" analyze --format json --iters 4 --nvtx no-such-range "$T/in/scenario.sqlite" >"$T/iters.json" 2>/dev/null
if "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); g=d["results"][0]["timeline"]["gpus"][0]; assert len(g["iterations"]) == 4; assert abs(sum(i["busy_ms"] for i in g["iterations"]) - g["total"]["busy_ms"]) < 1e-9' "$T/iters.json" 2>"$T/.e"; then ok iters-windows-add-up; else notok iters-windows-add-up "$(cat "$T/.e")"; fi

# Broken inputs: status 1, the file (and row/line) named.
expect_status truncated-json 1 "$GPUTAP" analyze "$T/in/truncated.json"
contains truncated-json-msg "$T/.out" "truncated.json:"
expect_status truncated-sqlite 1 "$GPUTAP" analyze "$T/in/truncated.sqlite"
contains truncated-sqlite-msg "$T/.out" "truncated.sqlite"
expect_status bad-row 1 "$GPUTAP" analyze "$T/in/badrow.sqlite"
contains bad-row-msg "$T/.out" "badrow.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL row 2: start is not an integer"
expect_status unknown-table 1 "$GPUTAP" analyze "$T/in/unknown.sqlite"
contains unknown-table-msg "$T/.out" "no CUPTI_ACTIVITY_KIND_KERNEL"
touch "$T/x.nsys-rep"
PATH=/nonexistent expect_status nsys-rep-without-nsys 1 "$GPUTAP" analyze "$T/x.nsys-rep"
contains nsys-rep-message "$T/.out" "needs Nsight Systems' 'nsys' on PATH"
finish
