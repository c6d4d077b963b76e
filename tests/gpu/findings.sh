#!/usr/bin/env bash
# The findings corpus on a GPU (docs/findings.md; results in docs/gpu-validation.md):
#   tests/gpu/findings.sh OUTDIR [FINDINGS_BIN]
# runs tests/gpu/findings.cu (built beforehand: FINDINGS_BIN) and tests/gpu/findings_torch.py plain
# (the step times), under `gputap run` (the traces advise reads) and, for PyTorch, under torch.profiler
# (Kineto traces), then tars what was recorded into OUTDIR/findings.tgz.  Every MODE.VARIANT is an
# NVTX range: `gputap advise --nvtx MODE.VARIANT RUN` looks at one of them.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: findings.sh OUTDIR [FINDINGS_BIN]}
BIN=${2:-$top/.carry/findings/findings}
GPUTAP=${GPUTAP:-$top/.carry/build/gputap}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
W=/tmp/gt-findings
rm -rf "$W"
mkdir -p "$W/kineto" "$OUT"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$W/device.txt" 2>&1
t() { echo "== $* $(date -u +%T)" >>"$W/log.txt"; }
t cuda-plain
timeout 60 "$BIN" --steps 12 >"$W/cuda-plain.jsonl" 2>>"$W/log.txt"
t cuda-run
timeout 60 "$GPUTAP" run -o "$W/cuda-run" -- "$BIN" --steps 12 >"$W/cuda-run.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
t torch-plain
timeout 60 python3 tests/gpu/findings_torch.py --steps 10 >"$W/torch-plain.jsonl" 2>>"$W/log.txt"
t torch-profiler
timeout 60 python3 tests/gpu/findings_torch.py --steps 8 --profile "$W/kineto" >"$W/torch-prof.jsonl" 2>>"$W/log.txt"
t torch-run
timeout 60 "$GPUTAP" run -o "$W/torch-run" -- python3 tests/gpu/findings_torch.py --steps 10 >"$W/torch-run.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
t advise
for r in cuda-run torch-run; do
	for m in $(sed -n 's/.*"mode": "\([a-z0-9]*\)".*"variant": "\([a-z]*\)".*/\1.\2/p' "$W/${r%-run}-plain.jsonl"); do
		echo "### $r $m"
		timeout 20 "$GPUTAP" advise --nvtx "$m" "$W/$r" 2>&1 | head -12
	done
done >"$W/advise.txt" 2>&1
t done
# the traces and what was measured; the derived files (trace.json, CSVs, report) are made again here
tar czf "$OUT/findings.tgz" -C /tmp --exclude='trace.json' --exclude='*_sum.csv' --exclude='*_trace.csv' \
	--exclude='report.html' gt-findings
ls -la "$OUT"
