#!/usr/bin/env bash
# Where a capture window's cost goes, inside each process: tests/gpu/capture_steps.cu runs 2,000 NVTX
# "step" ranges of 250 launches of ~4 µs and, with --phases 20, reports the time per kernel of each
# twentieth of its loop.  Modes, interleaved, REPS processes each:
#   none_s / none_d       no tool, CUDA runtime linked statically (_s, nvcc's default) or shared (_d)
#   metrics_s / metrics_d counters only (GPUTAP_TRACE=metrics)
#   cap5_s                a 5 % window, steps 951-1050 (twentieths 9 and 10 hold it)
#   kernel_s / full_s     CUPTI kernel activity alone / the whole trace
#   none_t metrics_t cap5_t kernel_t full_t   the same on the launch-bound PyTorch loop instead
#                         (bench/overhead/step.py launch --steps 2000 --nvtx --phases 20: 150 launches
#                         per step; the times are per step)
#   MODE@base             MODE with BASE_LIB (an earlier libgputap.so), for a before/after in one call
# Prints, per mode, the median time per kernel and its ratio to no tool of the same linkage, and for
# cap5 the window's own cost as a fraction of the run: the extra time of twentieths 9 and 10 over the
# median of the others (the first one, warm-up, left out), which no drift between processes affects.
#   make gpu-bundle; GT_GPU_BUILD=dir bench/overhead/phases.sh [REPS] [OUT]   (needs a GPU and nvcc)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. bench/overhead/lib.sh
gt_bench_setup "$@"
nvcc -O2 -arch=sm_90 -o "$W/steps_s" tests/gpu/capture_steps.cu -lcuda &&
	nvcc -O2 -arch=sm_90 -cudart shared -o "$W/steps_d" tests/gpu/capture_steps.cu -lcuda || exit 1
modes=${MODES:-none_s metrics_s none_d metrics_d cap5_s kernel_s full_s}
: >"$OUT/phases.txt"
for r in $(seq "$REPS"); do
	for m in $modes; do
		mm=${m%@base} l=$LIB
		[ "$mm" != "$m" ] && l=${BASE_LIB:?MODE@base needs BASE_LIB=an earlier libgputap.so}
		tap=(env LD_PRELOAD="$l" CUDA_INJECTION64_PATH="$l" NVTX_INJECTION64_PATH="$l")
		bin=$W/steps_${mm##*_} o=$W/o$r${m/@/-} args=(2000 250 --phases 20)
		[ "${mm##*_}" = t ] && bin=${PYTHON:-python3} args=(bench/overhead/step.py launch --steps 2000 --nvtx --phases 20)
		case ${mm%_*} in
		none) c=("$bin") ;;
		metrics) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=metrics "$bin") ;;
		cap5) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_CAPTURE='nvtx:step@951-1050' "$bin") ;;
		kernel) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=kernel "$bin") ;;
		full) c=("${tap[@]}" GPUTAP_OUT="$o" "$bin") ;;
		*) echo "unknown mode $m" >&2; exit 2 ;;
		esac
		gt_bench_one "$OUT/phases.txt" "$r" "$m" "$o" "${c[@]}" "${args[@]}"
	done
done
python3 - "$OUT/phases.txt" <<'EOP'
import sys
sys.path.insert(0, "bench/overhead")
import statistics as st
from runs import load
runs = load(sys.argv[1])
for ds in runs.values():
    for d in ds:
        d.setdefault("us_per_kernel", d.get("us_per_step"))  # the PyTorch loop's unit is a step
base = {k: st.median(d["us_per_kernel"] for d in runs["none" + k]) for k in ("_s", "_d", "_t") if "none" + k in runs}
print("| mode | runs | median us/kernel (_t: us/step) | vs none, same program | spread | median within-run spread (slowest/fastest twentieth) |")
print("|---|---|---|---|---|---|")
for mode, ds in runs.items():
    tot = [d["us_per_kernel"] for d in ds]
    b = base.get(mode.split("@")[0][-2:])
    sp = st.median(max(d["phases"][1:]) / min(d["phases"][1:]) for d in ds)
    print("| %s | %d | %.3f | %s | %.3f-%.3f | %.3f |" % (mode, len(ds), st.median(tot), "%.3f" % (st.median(tot) / b) if b else "-",
                                                         min(tot), max(tot), sp))
for mode, ds in runs.items():
    if mode.startswith("cap5"):
        r = []
        for d in ds:
            ph = d["phases"]
            rest = st.median(p for i, p in enumerate(ph) if i not in (9, 10) and i > 0)
            r.append(sum(ph[i] - rest for i in (9, 10)) / len(ph) / rest)
        print("%s: the window's own cost, fraction of the run, per run: %s; median %.3f" %
              (mode, " ".join("%.3f" % x for x in r), st.median(r)))
EOP
