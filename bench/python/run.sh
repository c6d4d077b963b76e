#!/usr/bin/env bash
# Python package benchmarks (needs a GPU and PyTorch): the empty range's cost (C extension
# and ctypes paths) and a training step with ranges against no package, side by side,
# interleaved.
#   bench/python/run.sh OUTDIR [ROUNDS [STEPS [N]]]
# ROUNDS (7): rounds of the empty range and timed blocks per training-step mode; STEPS
# (150): steps per block; N (200000): empty ranges per round.
# GPUTAP: the gputap program (for the `gputap run` mode); the package is imported
# from python/ (set GPUTAP_LIB to the library to use) unless it is installed.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: run.sh OUTDIR [ROUNDS [STEPS [N]]]}
ROUNDS=${2:-7}
STEPS=${3:-150}
N=${4:-200000}
GPUTAP=${GPUTAP:-$top/build/gputap}
mkdir -p "$OUT"
export PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}"
python3 "$top/bench/python/range_cost.py" "$N" "$ROUNDS" >"$OUT/range_cost.txt" 2>&1
cat "$OUT/range_cost.txt"
python3 "$top/bench/python/step_rounds.py" "$OUT/step.jsonl" "$ROUNDS" "$STEPS" "$GPUTAP" 2>&1 | tee "$OUT/step.txt"
