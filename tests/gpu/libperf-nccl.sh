#!/usr/bin/env bash
# `gputap libperf` replays NCCL collectives (a machine with >= 2 GPUs): a
# torchrun all-reduce / all-gather / reduce-scatter over every GPU is recorded
# with `gputap run --tools nccl_trace`, its library_trace.csv is replayed, and
# the rows must say ok with positive times and bandwidths (busbw = algbw x the
# nccl-tests factor of the collective).
#   make gpu-bundle            (builds .carry/build/gputap)
#   tests/gpu/libperf-nccl.sh OUTDIR       ends with "N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
OUT=${1:?usage: libperf-nccl.sh OUTDIR}
mkdir -p "$OUT"
G=${GPUTAP:-$top/.carry/build/gputap}
PY=${PYTHON:-python3}
# NVLink multicast stays off on shared machines (libperf sets it too)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
log=$OUT/libperf-nccl.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }
summary() {
	passed=$(grep -c '^ok ' "$log")
	failed=$(grep -c '^not ok ' "$log")
	echo "$passed passed, $failed failed" | tee -a "$log"
	[ "$failed" -eq 0 ]
}
n=$(nvidia-smi -L 2>/dev/null | wc -l)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/device.txt" 2>&1
if [ "$n" -lt 2 ]; then
	say "not ok libperf-nccl/gpus: needs at least 2 GPUs, found $n"
	summary
	exit 1
fi
[ -x "$G" ] || { say "not ok libperf-nccl/binary: $G missing (make gpu-bundle)"; summary; exit 1; }

W=/tmp/gt-libperf-nccl
rm -rf "$W" "$W".*
timeout 300 "$G" run -o "$W" --tools nccl_trace -- \
	torchrun --standalone --nproc_per_node "$n" tests/gpu/libperf_nccl.py >"$W.out" 2>"$W.err"
rc=$?
[ $rc -eq 0 ] && say "ok libperf-nccl/run-exit-status" || say "not ok libperf-nccl/run-exit-status: $rc $(tail -5 "$W.err")"
c=$(grep -o "result ok" "$W.out" | wc -l)
[ "$c" -eq "$n" ] && say "ok libperf-nccl/results-unchanged" || say "not ok libperf-nccl/results-unchanged: $(grep result "$W.out")"
[ -s "$W/library_trace.csv" ] && say "ok libperf-nccl/library-trace" || say "not ok libperf-nccl/library-trace: $(ls "$W")"

replay() { # extra env for gputap libperf
	env "$@" timeout 300 "$G" libperf "$W/library_trace.csv" -o "$W/library_perf.csv" --iters 20 --warmup 5 \
		>"$W.libperf" 2>&1
}
replay
rc=$?
if grep -q 'NCCL (libnccl.so.2) not found' "$W/library_perf.csv" 2>/dev/null; then
	# no NCCL on the loader's path or in the usual places: take the one PyTorch loads,
	# as GPUTAP_NCCL_LIB (which is what the message tells the user to do)
	lib=$("$PY" -c 'import torch; torch.cuda.nccl.version()
print(next((l.split()[-1] for l in open("/proc/self/maps") if "libnccl" in l), ""))' 2>/dev/null)
	echo "# libnccl.so.2 not found by libperf's search; PyTorch's: ${lib:-none}" | tee -a "$log"
	if [ -n "$lib" ]; then
		replay GPUTAP_NCCL_LIB="$lib"
		rc=$?
	fi
fi
[ $rc -eq 0 ] && say "ok libperf-nccl/libperf-exit-status" || say "not ok libperf-nccl/libperf-exit-status: $rc $(tail -5 "$W.libperf")"
grep 'NCCL [0-9]' "$W.libperf" | head -3 | sed 's/^/# /' | tee -a "$log"
if [ -s "$W/library_perf.csv" ]; then
	"$PY" tests/gpu/libperf_nccl.py check "$W/library_perf.csv" "$W.out" "$n" 2>&1 | tee -a "$log"
else
	say "not ok libperf-nccl/library-perf: no $W/library_perf.csv: $(tail -5 "$W.libperf")"
fi
cp "$W.out" "$W.err" "$W.libperf" "$W/library_trace.csv" "$OUT"/ 2>/dev/null
cp "$W/library_perf.csv" "$OUT"/ 2>/dev/null
summary
