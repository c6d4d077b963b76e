#!/usr/bin/env bash
# Everything that needs a GPU, in one command (for a lent GPU machine):
#   make gpu-bundle   (here: static gputap + libgputap.so into .carry/build)
#   tests/gpu/validate-all.sh OUTDIR [PARTS]
# PARTS (default "1 2 3 4 5 6") picks the parts below, so that the whole can run as a few calls
# of a time-limited machine (about 10 minutes each: "1 2 3", "4", "5 6").
# 1. tests/gpu/run.sh: the tap and a whole `gputap run` against the programs' own account
# 2. a PyTorch run with power,vram,cublaslt_trace,cudnn_trace,nccl_trace,kernel_trace stacked,
#    its report, and `gputap libperf` on its library trace
# 3. the sampler's cost and period (bench/sampler/gpu_run.sh)
# 4. range metrics against ncu (tests/gpu/rmetrics.sh)
# 5. launch hold: the programs' results unchanged under --hold N (tests/gpu/hold.sh)
# 6. libperf on the cuDNN convolutions of a ResNet-18 training step (tests/gpu/libperf-cudnn.sh)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: validate-all.sh OUTDIR [PARTS]}
PARTS=" ${2:-1 2 3 4 5 6} "
part() { case "$PARTS" in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
export GT_GPU_BUILD=${GT_GPU_BUILD:-$top/.carry/build} GPUTAP=${GPUTAP:-$top/.carry/build/gputap}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/device.txt" 2>&1

if part 1; then
echo "== 1. tests/gpu/run.sh"
timeout 300 tests/gpu/run.sh /tmp/gt-gpu 2>&1 | tee "$OUT/gpu-tests.txt" | grep -E '^not ok|passed'
tar czf "$OUT/gpu-tests.tgz" -C /tmp --exclude='*.gtr' --exclude='*.gtr.partial' gt-gpu 2>/dev/null
fi

if part 2; then
echo "== 2. PyTorch runs with the library tools stacked"
W=/tmp/gt-libs
rm -rf "$W" /tmp/gt-train
timeout 180 "$GPUTAP" run -o "$W" --tools power,vram,cublaslt_trace,cublas_trace,cudnn_trace,nccl_trace,kernel_trace \
	-- python3 tests/fixtures/liblogs/record_liblogs.py >/tmp/libs-run.out 2>/tmp/libs-run.err
echo "gputap run exit status $?"
python3 tests/gpu/check_run.py libs "$W" /tmp/libs-run.out 2>&1 | tee "$OUT/libs-checks.txt"
timeout 120 "$GPUTAP" libperf "$W/library_trace.csv" -o "$W/library_perf.csv" --iters 20 --warmup 5 >/tmp/libperf.txt 2>&1
echo "libperf exit status $?"
cat /tmp/libperf.txt >>"$OUT/libs-checks.txt"
timeout 180 "$GPUTAP" run -o /tmp/gt-train --tools power,vram,cublaslt_trace,nccl_trace,kernel_trace \
	-- python3 tests/fixtures/liblogs/record_liblogs.py --train >/tmp/train.out 2>/tmp/train.err
echo "gputap run (train) exit status $?"
"$GPUTAP" analyze /tmp/gt-train >/tmp/train-analyze.txt 2>&1
echo "analyze exit status $?"
tail -n 12 /tmp/train-analyze.txt
cp /tmp/libs-run.* /tmp/libperf.txt /tmp/train.* /tmp/train-analyze.txt "$W"/ 2>/dev/null
tar czf "$OUT/libs-runs.tgz" -C /tmp --exclude='*.gtr' gt-libs gt-train 2>/dev/null
fi

if part 3; then
echo "== 3. sampler cost and period"
mkdir -p "$OUT/sampler"
timeout 150 bash bench/sampler/gpu_run.sh "$GT_GPU_BUILD" "$top/.carry/bench/nvml_bench" "$OUT/sampler" >"$OUT/sampler/sampler.txt" 2>&1
grep -h -E '"(label|gap_mean_ms|gap_sd_ms|missed_deadlines|thread_cpu_pct|samples)"' "$OUT"/sampler/run_*.json
tar czf "$OUT/sampler.tgz" -C "$OUT" sampler 2>/dev/null && rm -rf "$OUT/sampler"
fi

if part 4; then
echo "== 4. range metrics against Nsight Compute (RM_SECTIONS picks the sections)"
mkdir -p "$OUT/rmetrics"
timeout 480 tests/gpu/rmetrics.sh "$OUT/rmetrics" "${RM_SECTIONS:-kernel range threads multipass big torch info}" 2>&1 |
	grep -E '^not ok|passed'
fi

if part 5; then
echo "== 5. launch hold (tests/gpu/hold.sh)"
timeout 300 tests/gpu/hold.sh /tmp/gt-hold 2>&1 | tee "$OUT/hold-tests.txt" | grep -E '^not ok|passed'
fi

if part 6; then
echo "== 6. libperf on cuDNN convolutions (ResNet-18)"
timeout 450 tests/gpu/libperf-cudnn.sh "$OUT/libperf-cudnn" 2>&1 | tail -n 1
tar czf "$OUT/libperf-cudnn.tgz" -C "$OUT" libperf-cudnn 2>/dev/null && rm -rf "$OUT/libperf-cudnn"
fi
