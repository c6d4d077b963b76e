#!/usr/bin/env bash
# The tap's own cost per launch inside one process (bench/overhead/inproc.cu), for each mode, REPS
# processes each (interleaved): hooked vs libcuda's own cuLaunchKernel in alternating blocks.
#   make gpu-bundle; GT_GPU_BUILD=dir bench/overhead/inproc.sh [REPS]    (needs a GPU and nvcc)
# Modes: none (no tap: both entries are libcuda's, the method's own noise), inert (the tap loaded with
# no output asked: the hook's entry alone), metrics (counters only), metrics-clock (the same timed with
# clock_gettime instead of the time-stamp counter, GPUTAP_TSC=off),
# closed (a capture window that never opens), kernel (CUPTI kernel activity), full (the whole trace).
# In the CUPTI modes CUPTI's own cost hits both paths alike: the ratio is what the tap adds to it.
# MODE@base runs MODE with BASE_LIB (an earlier libgputap.so) for a before/after in one call.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
REPS=${1:-5}
B=${GT_GPU_BUILD:-$top/.carry/build}
LIB=$B/libgputap.so
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cc -O2 -D_GNU_SOURCE -Isrc -c -o "$W/dlsym_find.o" src/tap/dlsym_find.c &&
	nvcc -O2 -o "$W/inproc" bench/overhead/inproc.cu "$W/dlsym_find.o" -lcuda -ldl || exit 1
tap=(env LD_PRELOAD="$LIB" CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB")
json() { sed -n "s/.*\"$2\":\([-0-9.]*\).*/\1/p" "$1"; }
med() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print NR ? ((NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2) : "nan"}'; }
modes=${MODES:-none metrics closed kernel full}
declare -A ratio=() extra=() realns=() bad=()
for r in $(seq "$REPS"); do
	for m in $modes; do
		o=$W/o$r$m
		l=$LIB mm=${m%@base}
		[ "$mm" != "$m" ] && l=${BASE_LIB:?MODE@base needs BASE_LIB=an earlier libgputap.so}
		tap=(env LD_PRELOAD="$l" CUDA_INJECTION64_PATH="$l" NVTX_INJECTION64_PATH="$l")
		case $mm in
		none) c=("$W/inproc") ;;
		inert) c=("${tap[@]}" "$W/inproc") ;;
		metrics-clock) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=metrics GPUTAP_TSC=off "$W/inproc") ;;
		metrics) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=metrics "$W/inproc") ;;
		closed) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_CAPTURE=time:3600 "$W/inproc") ;;
		kernel) c=("${tap[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=kernel "$W/inproc") ;;
		full) c=("${tap[@]}" GPUTAP_OUT="$o" "$W/inproc") ;;
		esac
		"${c[@]}" >"$W/out" 2>"$W/err" || { bad[$m]="${bad[$m]:-} exit$?"; continue; }
		ratio[$m]="${ratio[$m]:-} $(json "$W/out" paired_ratio)"
		extra[$m]="${extra[$m]:-} $(json "$W/out" paired_extra_ns)"
		realns[$m]="${realns[$m]:-} $(json "$W/out" real_ns)"
		if [ "$mm" != none ] && [ "$mm" != inert ]; then # every hooked launch counted, none of libcuda's own
			want=$(json "$W/out" hooked_launches)
			got=$(sed -n 's/^name:cuLaunchKernel,count:\([0-9]*\).*/\1/p' "$o"/*/metrics.log 2>/dev/null | head -1)
			[ "$got" = "$want" ] || bad[$m]="${bad[$m]:-} counted:${got:-none}/$want"
		fi
		rm -rf "$o"
	done
done
echo "| mode | libcuda's own launch, ns (median of runs) | tap's extra per launch, ns | hooked/own, median of per-pair ratios | runs (ratios) | problems |"
echo "|---|---|---|---|---|---|"
for m in $modes; do
	echo "| $m | $(echo ${realns[$m]:-} | med) | $(echo ${extra[$m]:-} | med) | $(echo ${ratio[$m]:-} | med) | ${ratio[$m]:-} | ${bad[$m]:-none} |"
done
