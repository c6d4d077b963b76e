#!/usr/bin/env bash
# The tap's cost on the launch-bound PyTorch loop, measured inside each process: bench/overhead/step.py
# --ab times 2,000 steps in blocks of 10 with the tap counting and recording (A) and with its hooks
# calling straight through (B, gputap_bench_pass(1), as the `inert` mode), A B B A repeated, so the
# machines' drift (up to 25 % within a run, ±30 % between runs) hits both alike.  Modes, interleaved,
# REPS processes each:
#   null     the tap on in A and B (--ab-null): the method's own noise
#   metrics  counters only (GPUTAP_TRACE=metrics): the `metrics` cost over the hooks' pass-through
#   closed   a capture window that never opens (GPUTAP_CAPTURE=time:3600): the cost outside windows
#   full     the whole trace: what the tap's hooks and records add on top of CUPTI (CUPTI kernel
#            activity runs in A and B alike; its launch callbacks return at once in B)
#   kact     the whole trace against CUPTI kernel activity alone: as `full`, with B also turning
#            the launch callbacks off (gputap_bench_pass(2)) — CUPTI kernel activity and nothing else
#   kmode    the whole trace against the `kernel` mode of bench/overhead/run.sh (GPUTAP_TRACE=kernel:
#            kernel activity with the tap's counters): B turns the callbacks off and counts without
#            records (gputap_bench_pass(3))
# MODE@base runs MODE with BASE_LIB (an earlier libgputap.so), side by side, for a before/after.
# Prints per mode the median over processes of the A/B ratio (total A over total B) and of the
# paired ratio (median of each A B B A group's), with their range.
#   make gpu-bundle; GT_GPU_BUILD=dir bench/overhead/ab.sh [REPS] [OUT]   (needs a GPU, torch)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. bench/overhead/lib.sh
gt_bench_setup "$@"
PY=${PYTHON:-python3}
[ -f "$LIB" ] || { echo "ab.sh: no $LIB (make gpu-bundle, GT_GPU_BUILD=its build folder)" >&2; exit 1; }
steps=(bench/overhead/step.py launch --steps "${STEPS:-2000}" --ab "${BLOCK:-10}")
modes=${MODES:-null metrics closed full}
: >"$OUT/ab.txt"
for r in $(seq "$REPS"); do
	for m in $modes; do
		o=$W/o$r$m l=$LIB mm=${m%@base}
		[ "$mm" != "$m" ] && l=${BASE_LIB:?MODE@base needs BASE_LIB=an earlier libgputap.so}
		tap=(env LD_PRELOAD="$l" CUDA_INJECTION64_PATH="$l" NVTX_INJECTION64_PATH="$l" GPUTAP_BENCH_AB=1)
		case $mm in
		null) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=metrics "$PY" "${steps[@]}" --ab-null) ;;
		metrics) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=metrics "$PY" "${steps[@]}") ;;
		closed) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_CAPTURE=time:3600 "$PY" "${steps[@]}") ;;
		full) c=("${tap[@]}" GPUTAP_OUT="$o" "$PY" "${steps[@]}") ;;
		kact) c=("${tap[@]}" GPUTAP_OUT="$o" "$PY" "${steps[@]}" --ab-kact) ;;
		kmode) c=("${tap[@]}" GPUTAP_OUT="$o" "$PY" "${steps[@]}" --ab-kmode) ;;
		*) echo "ab.sh: unknown mode $m" >&2; exit 2 ;;
		esac
		gt_bench_one "$OUT/ab.txt" "$r" "$m" "$o" "${c[@]}"
	done
done
python3 - "$OUT/ab.txt" <<'EOP'
import statistics as st, sys
sys.path.insert(0, "bench/overhead")
from runs import load
runs = load(sys.argv[1])
print("| mode | runs | A/B ratio, median (range) | paired, median (range) | us/step A | us/step B |")
print("|---|---|---|---|---|---|")
for mode, ds in runs.items():
    r = [d["ab_ratio"] for d in ds]
    p = [d["ab_paired"] for d in ds]
    print("| %s | %d | %.4f (%.4f-%.4f) | %.4f (%.4f-%.4f) | %.1f | %.1f |" % (
        mode, len(ds), st.median(r), min(r), max(r), st.median(p), min(p), max(p),
        st.median(d["us_per_step_tap"] for d in ds), st.median(d["us_per_step_pass"] for d in ds)))
EOP
