#!/usr/bin/env bash
# Range metrics against Nsight Compute (see bench.py): builds tests/gpu/rm_prog and runs the three workloads.
#   make gpu-bundle; bench/rmetrics/run.sh OUTDIR [RUNS] [WORKLOADS]   (BENCH_ARGS: more bench.py options)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: run.sh OUTDIR [RUNS] [range,kernel,multipass]}
RUNS=${2:-5}
ONLY=${3:-range,kernel,multipass}
G=${GPUTAP:-$top/.carry/build/gputap}
mkdir -p "$OUT" /tmp/rmbench
nvcc -O2 -o /tmp/rmbench/rm_prog tests/gpu/rm_prog.cu -lpthread || exit 1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; } | tee "$OUT/bench-device.txt"
python3 bench/rmetrics/bench.py --gputap "$G" --prog /tmp/rmbench/rm_prog --runs "$RUNS" --only "$ONLY" \
	--out "$OUT/rmetrics-bench.json" ${BENCH_ARGS:-} 2>"$OUT/rmetrics-bench.err" | tee "$OUT/rmetrics-bench.txt"
