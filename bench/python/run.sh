#!/usr/bin/env bash
# Python package benchmarks (needs a GPU and PyTorch): the empty range's cost and a
# training step with ranges against no package, side by side, interleaved runs.
#   bench/python/run.sh OUTDIR [RUNS]
# GPUTAP: the gputap program (for the `gputap run` mode); the package is imported
# from python/ with GPUTAP_LIB unless it is installed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: run.sh OUTDIR [RUNS]}
RUNS=${2:-7}
GPUTAP=${GPUTAP:-$top/build/gputap}
mkdir -p "$OUT"
export PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}"
python3 "$top/bench/python/range_cost.py" 200000 9 >"$OUT/range_cost.txt" 2>&1
cat "$OUT/range_cost.txt"
: >"$OUT/step.jsonl"
for i in $(seq 1 "$RUNS"); do
	for m in none off on run; do
		if [ "$m" = run ]; then
			"$GPUTAP" run -o "/tmp/gt-bench-step-$i" -- python3 "$top/bench/python/step.py" on 150 2>/dev/null |
				sed 's/"mode": "on"/"mode": "gputap-run"/' >>"$OUT/step.jsonl"
			rm -rf "/tmp/gt-bench-step-$i"
		else
			python3 "$top/bench/python/step.py" "$m" 150 >>"$OUT/step.jsonl" 2>/dev/null
		fi
	done
done
python3 - "$OUT/step.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {}
for r in rows:
    by.setdefault(r["mode"], []).append(r["ms_per_step"])
base = statistics.median(by.get("none", [float("nan")]))
print("training step (ms per step; median of %d runs each, interleaved):" % len(by.get("none", [])))
for m in ("none", "off", "on", "gputap-run"):
    v = by.get(m, [])
    if v:
        print("  %-11s %7.3f ms  x%.3f  (runs %.3f..%.3f)" % (m, statistics.median(v), statistics.median(v) / base, min(v), max(v)))
PY
