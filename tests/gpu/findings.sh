#!/usr/bin/env bash
# The findings corpus on a GPU (docs/findings.md; results in docs/gpu-validation.md):
#   tests/gpu/findings.sh OUTDIR [FINDINGS_BIN]
# runs tests/gpu/findings.cu (built beforehand: FINDINGS_BIN) and tests/gpu/findings_torch.py plain
# (the step times), under `gputap run` (the traces advise reads) and, for PyTorch, under torch.profiler
# (Kineto traces); the counter modes of findings.cu (coal, occ) once more under `gputap run` with
# per-kernel counters; on a machine of two GPUs or more, tests/gpu/findings_ddp.py (exposed-comm,
# straggler) under torchrun the same three ways.  Every MODE.VARIANT is an NVTX range: `gputap advise
# --nvtx MODE.VARIANT RUN` looks at one of them.  What was recorded is tarred into OUTDIR/findings.tgz
# after each stage, so that a stage cut short by the time limit still leaves the others.
# TORCH_ONLY=MODE,... limits the PyTorch programs to those modes.
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
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } >"$W/device.txt" 2>&1
save() { # the derived files (trace.json, CSVs, report) are made again from the traces
	tar czf "$OUT/findings.tgz.part" -C /tmp --exclude='trace.json' --exclude='*_sum.csv' --exclude='*_trace.csv' \
		--exclude='report.html' gt-findings && mv "$OUT/findings.tgz.part" "$OUT/findings.tgz"
}
stage() { echo "== $1 $(date -u +%T)" >>"$W/log.txt"; }
stage cuda-plain
timeout 25 "$BIN" --steps 12 >"$W/cuda-plain.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
stage cuda-run
timeout 35 "$GPUTAP" run -o "$W/cuda-run" -- "$BIN" --steps 12 >"$W/cuda-run.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
save
stage cuda-metrics
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum
timeout 40 "$GPUTAP" run -o "$W/cuda-metrics" --metrics-mode kernel --metrics "$M" -- "$BIN" --steps 6 --only coal,occ \
	>"$W/cuda-metrics.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
save
if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then
	TR="torchrun --standalone --nproc_per_node 2 tests/gpu/findings_ddp.py --steps 10"
	stage ddp-plain
	timeout 60 $TR >"$W/ddp-plain.jsonl" 2>>"$W/log.txt"
	echo "status $?" >>"$W/log.txt"
	stage ddp-profiler
	mkdir -p "$W/ddp-kineto"
	timeout 60 $TR --profile "$W/ddp-kineto" >"$W/ddp-prof.jsonl" 2>>"$W/log.txt"
	echo "status $?" >>"$W/log.txt"
	gzip -q "$W"/ddp-kineto/*.json 2>/dev/null
	save
	stage ddp-run
	timeout 75 "$GPUTAP" run -o "$W/ddp-run" -- $TR >"$W/ddp-run.jsonl" 2>>"$W/log.txt"
	echo "status $?" >>"$W/log.txt"
	save
fi
TO=()
[ -n "${TORCH_ONLY:-}" ] && TO=(--only "$TORCH_ONLY")
stage torch-plain
timeout 40 python3 tests/gpu/findings_torch.py --steps 10 "${TO[@]}" >"$W/torch-plain.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
save
stage torch-profiler
timeout 45 python3 tests/gpu/findings_torch.py --steps 8 "${TO[@]}" --profile "$W/kineto" >"$W/torch-prof.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
gzip -q "$W"/kineto/*.json 2>/dev/null
save
stage torch-run
timeout 45 "$GPUTAP" run -o "$W/torch-run" -- python3 tests/gpu/findings_torch.py --steps 10 "${TO[@]}" >"$W/torch-run.jsonl" 2>>"$W/log.txt"
echo "status $?" >>"$W/log.txt"
stage done
save
ls -la "$OUT"
