#!/usr/bin/env bash
# Everything that needs a GPU, in one command (for a lent GPU machine):
#   make gpu-bundle   (here: static gputap + libgputap.so into .carry/build)
#   tests/gpu/validate-all.sh OUTDIR
# 1. tests/gpu/run.sh: the tap and a whole `gputap run` against the programs' own account
# 2. a PyTorch run with power,vram,cublaslt_trace,cudnn_trace,nccl_trace,kernel_trace stacked,
#    its report, and `gputap libperf` on its library trace
# 3. the sampler's cost and period (bench/sampler/gpu_run.sh)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: validate-all.sh OUTDIR}
mkdir -p "$OUT"
export GT_GPU_BUILD=${GT_GPU_BUILD:-$top/.carry/build} GPUTAP=${GPUTAP:-$top/.carry/build/gputap}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/device.txt" 2>&1

echo "== 1. tests/gpu/run.sh"
timeout 300 tests/gpu/run.sh /tmp/gt-gpu 2>&1 | tee "$OUT/gpu-tests.txt" | grep -E '^not ok|passed'

echo "== 2. PyTorch run with the library tools stacked"
W=/tmp/gt-libs
rm -rf "$W"
timeout 180 "$GPUTAP" run -o "$W" --tools power,vram,cublaslt_trace,cudnn_trace,nccl_trace,kernel_trace \
	-- python3 tests/fixtures/liblogs/record_liblogs.py --train >"$OUT/libs-run.out" 2>"$OUT/libs-run.err"
echo "gputap run exit status $?"
python3 tests/gpu/check_run.py libs "$W" "$OUT/libs-run.out" 2>&1 | tee "$OUT/libs-checks.txt"
timeout 120 "$GPUTAP" libperf "$W/library_trace.csv" -o "$W/library_perf.csv" --iters 20 --warmup 5 >"$OUT/libperf.txt" 2>&1
echo "libperf exit status $?"
"$GPUTAP" report "$W" >"$OUT/report.txt" 2>&1
tail -n 25 "$OUT/libs-run.err"
head -n 20 "$W/library_trace.csv"
tar czf "$OUT/libs-run.tgz" -C /tmp --exclude='*.gtr' gt-libs 2>/dev/null

echo "== 3. sampler cost and period"
timeout 150 bash bench/sampler/gpu_run.sh "$GT_GPU_BUILD" "$top/.carry/bench/nvml_bench" "$OUT/sampler" >"$OUT/sampler.txt" 2>&1
tail -n 12 "$OUT/sampler.txt"
tar czf "$OUT/gpu-tests.tgz" -C /tmp --exclude='*.gtr' --exclude='*.gtr.partial' gt-gpu 2>/dev/null
tar czf "$OUT/sampler.tgz" -C "$OUT" sampler 2>/dev/null && rm -rf "$OUT/sampler"
