#!/usr/bin/env bash
# What launch hold costs, side by side in one run: median of REPS interleaved
# runs per mode, on the launch-bound PyTorch loop and the CUDA example, then
# launch-to-start latency and GPU idle time from one traced run per mode.
#   bench/hold/run.sh [REPS]      (needs a CUDA GPU, python3 with torch, nvcc)
# Modes: none (no gputap), full (the full trace, no hold), hold1, hold16, hold64.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
REPS=${1:-7}
B=${GT_GPU_BUILD:-$top/.carry/build}
PY=${PYTHON:-python3}
W=$(mktemp -d)
LIB=$B/libgputap.so
[ -f "$LIB" ] || make --no-print-directory O="$B" "$LIB" >/dev/null || exit 1
make --no-print-directory -C examples O="$W" "$W/cuda_example" >/dev/null || exit 1
MODES=${MODES:-none full hold1 hold16 hold64}

one() { # MODE BENCH [OUTDIR] -> us per step
	local mode=$1 bench=$2 out=${3:-$W/o$RANDOM} cmd
	if [ "$bench" = cuda ]; then
		cmd=("$W/cuda_example" --iters 20000 --timing)
	else
		cmd=("$PY" bench/overhead/step.py "$bench")
	fi
	local tap=(env LD_PRELOAD="$LIB" CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" GPUTAP_OUT="$out")
	case $mode in
	none) ;;
	full) cmd=("${tap[@]}" "${cmd[@]}") ;;
	hold*) cmd=("${tap[@]}" GPUTAP_HOLD="${mode#hold}" "${cmd[@]}") ;;
	esac
	if [ "$bench" = cuda ]; then
		"${cmd[@]}" 2>>"$W/err" | sed -n 's/.*"us_per_round":\([0-9.]*\).*/\1/p'
	else
		"${cmd[@]}" 2>>"$W/err" | sed -n 's/.*"us_per_step": \([0-9.]*\).*/\1/p'
	fi
	[ "$mode" = none ] || [ -n "${3:-}" ] || rm -rf "$out"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
spread() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else printf "%.1f%%", 100*(a[NR]-a[1])/a[int((NR+1)/2)]}'; }

echo "| workload | mode | median us/step | vs none | vs full | spread (max-min)/median | runs |"
echo "|---|---|---|---|---|---|---|"
for bench in ${BENCHES:-launch cuda}; do
	declare -A vals=()
	for r in $(seq "$REPS"); do
		for m in $MODES; do # interleaved, so drift hits every mode alike
			v=$(one "$m" "$bench")
			vals[$m]="${vals[$m]:-} $v"
		done
	done
	base=$(echo ${vals[none]} | tr ' ' '\n' | median)
	full=$(echo ${vals[full]} | tr ' ' '\n' | median)
	for m in $MODES; do
		med=$(echo ${vals[$m]} | tr ' ' '\n' | median)
		sp=$(echo ${vals[$m]} | tr ' ' '\n' | spread)
		r0=$(awk -v a="$med" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
		r1=$(awk -v a="$med" -v b="$full" 'BEGIN {printf "%.3f", a / b}')
		echo "| $bench | $m | $med | $r0 | $r1 | $sp | ${vals[$m]} |"
	done
	unset vals
done
echo
echo "Launch-to-start latency and GPU idle time over the timed part (one traced run per mode; us = microseconds):"
for bench in ${BENCHES:-launch cuda}; do
	for m in $MODES; do
		[ "$m" = none ] && continue
		one "$m" "$bench" "$W/lat-$bench-$m" >/dev/null
		win=40000
		[ "$bench" = launch ] && win=30000 # the 200 timed steps
		echo "$bench $m $("$PY" tests/gpu/check_hold.py latency --window $win "$W/lat-$bench-$m")"
	done
done
echo
echo "(launch: bench/overhead/step.py launch, 50 relu(y*a+b) on 256x256 per step, 150 tiny kernels, 200 steps;"
echo " cuda: examples/cuda_example --iters 20000 --timing, wall time per round of its compute loop;"
echo " full: the whole trace, no hold; holdN: the same with GPUTAP_HOLD=N)"
if [ -s "$W/err" ]; then
	echo "stderr of the runs (last lines):"
	grep -v '^gputap: info' "$W/err" | tail -n 5
fi
rm -rf "$W"
