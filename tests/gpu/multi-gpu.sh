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
c=$(grep -o "result ok" "$W.out" | wc -l) # rank outputs may interleave mid-line
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
"$G" analyze "$W" --format json >"$W.analyze.json" 2>/dev/null
python3 - "$W.analyze.json" "$n" >"$W.iter" 2>&1 <<'EOP' && say "ok multi/iterations-by-launch" || say "not ok multi/iterations-by-launch: $(tail -5 "$W.iter")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
n = int(sys.argv[2])
gpus = r["timeline"]["gpus"]
labels = sorted(g["label"] for g in gpus)
print(labels, r["iteration_assignment"], r["nvtx"])
assert labels == ["rank%d/gpu%d" % (i, i) for i in range(n)], labels
for g in gpus:
    its = g["iterations"]
    assert len(its) == 10, (g["label"], len(its))
    # every step launched one all-reduce: each iteration holds communication
    assert all(w["comm_ms"] > 0 for w in its), [w["comm_ms"] for w in its]
assert r["iteration_assignment"]["by_launch"] > 0
assert r["nvtx"]["estimated_non_hidden_ms"] >= 0
EOP
cp "$W.out" "$W.err" "$W.analyze" "$W.analyze.json" "$W.iter" "$W"/ 2>/dev/null
tail -n 14 "$W.analyze"
tar czf "$OUT/multi-gpu.tgz" -C /tmp --exclude='*.gtr' gt-multi 2>/dev/null
passed=$(grep -c '^ok ' "$log"); failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed" | tee -a "$log"
