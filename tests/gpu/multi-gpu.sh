#!/usr/bin/env bash
# Multi-GPU checks (a machine with >= 2 GPUs): a torchrun NCCL all-reduce under
# `gputap run --tools nccl_trace,kernel_trace,power`; both ranks get their own
# directory, the NCCL rows of library_trace.csv show every rank, analyze gives
# a table per rank, results unchanged.   tests/gpu/multi-gpu.sh OUTDIR
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: multi-gpu.sh OUTDIR}
mkdir -p "$OUT"
G=${GPUTAP:-$top/.carry/build/gputap}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
n=$(nvidia-smi -L | wc -l)
log=$OUT/multi-gpu.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }
W=/tmp/gt-multi
rm -rf "$W"
DEVICE=all timeout 240 "$G" run -o "$W" --tools power,nccl_trace,kernel_trace -- \
	torchrun --standalone --nproc_per_node "$n" tests/gpu/allreduce.py >"$W.out" 2>"$W.err"
rc=$?
[ $rc -eq 0 ] && say "ok multi/exit-status" || say "not ok multi/exit-status: $rc $(tail -5 "$W.err")"
c=$(grep -c "result ok" "$W.out")
[ "$c" -eq "$n" ] && say "ok multi/results-unchanged" || say "not ok multi/results-unchanged: $(grep result "$W.out")"
ranks=$(ls -d "$W"/rank* 2>/dev/null | wc -l)
[ "$ranks" -eq "$n" ] && say "ok multi/rank-dirs" || say "not ok multi/rank-dirs: $(ls "$W")"
row=$(grep -i ',nccl,' "$W/library_trace.csv" | grep 'op=allreduce' | grep "count=$((4 << 20))" | grep "nranks=$n")
calls=${row##*,}
[ -n "$row" ] && [ "$calls" = "$((10 * n))" ] && say "ok multi/nccl-rows-all-ranks" || say "not ok multi/nccl-rows-all-ranks: $(grep -i nccl "$W/library_trace.csv" | head -5)"
pw=$(head -1 "$W/gpu_info_power_profiler_output.csv" | tr ',' '\n' | grep -c 'Power(Watt) GPU')
[ "$pw" -eq "$n" ] && say "ok multi/power-all-gpus" || say "not ok multi/power-all-gpus: $(head -1 "$W/gpu_info_power_profiler_output.csv")"
"$G" analyze "$W" >"$W.analyze" 2>&1
ar=$(grep -c '^rank[0-9]*/gpu' "$W.analyze")
[ "$ar" -ge "$n" ] && say "ok multi/analyze-per-rank" || say "not ok multi/analyze-per-rank: $(tail -12 "$W.analyze")"
cp "$W.out" "$W.err" "$W.analyze" "$W"/ 2>/dev/null
tail -n 14 "$W.analyze"
tar czf "$OUT/multi-gpu.tgz" -C /tmp --exclude='*.gtr' gt-multi 2>/dev/null
passed=$(grep -c '^ok ' "$log"); failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed" | tee -a "$log"
