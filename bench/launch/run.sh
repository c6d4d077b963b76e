#!/usr/bin/env bash
# The tap's own cost per kernel launch, on a CPU: a loop of launches through the pointers
# cuGetProcAddress hands out, on a stand-in libcuda.so.1 whose launches do nothing
# (bench/launch/nulldrv.c), so what is timed is the call path alone.  Modes, interleaved, REPS
# processes each, medians:
#   none      no tap
#   metrics   GPUTAP_TRACE=metrics (counters only)
#   closed    a capture window that never opens in the run (GPUTAP_CAPTURE=time:3600)
#   full      the whole trace (API records; no GPU activity here)
# With BASE_LIB=path/to/an/earlier/libgputap.so the tap modes run with it too ("metrics@base" ...).
# Each tap run's metrics.log must count every launch, or the run is reported as wrong.
#
#   bench/launch/run.sh [REPS]        (N=launches per round ROUNDS=rounds ENTRY=kernel|ex|ptsz
#                                      LIB=libgputap.so to time, default build/libgputap.so)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
REPS=${1:-7}
N=${N:-200000}
ROUNDS=${ROUNDS:-11}
ENTRY=${ENTRY:-kernel}
LIB=${LIB:-$top/build/libgputap.so}
BASE_LIB=${BASE_LIB:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
[ -f "$LIB" ] || { echo "no $LIB (make build/libgputap.so)" >&2; exit 1; }
mkdir -p "$W/lib"
cc -O2 -shared -fPIC -Wl,-soname,libcuda.so.1 -I"$CUDA_INC" -o "$W/lib/libcuda.so.1" "$top/bench/launch/nulldrv.c" &&
	cc -O2 -I"$CUDA_INC" -o "$W/loop" "$top/bench/launch/loop.c" -ldl || exit 1
export LD_LIBRARY_PATH="$W/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

modes="none metrics closed full"
[ -n "$BASE_LIB" ] && modes="$modes metrics@base closed@base full@base"
one() { # MODE -> ns per launch (or "wrong")
	local m=${1%@base} lib=$LIB o="$W/o$RANDOM" out
	[ "$1" != "$m" ] && lib=$BASE_LIB
	case $m in
	none) out=$("$W/loop" "$N" "$ROUNDS" "$ENTRY") ;;
	metrics) out=$(env LD_PRELOAD="$lib" GPUTAP_OUT="$o" GPUTAP_TRACE=metrics "$W/loop" "$N" "$ROUNDS" "$ENTRY") ;;
	closed) out=$(env LD_PRELOAD="$lib" GPUTAP_OUT="$o" GPUTAP_CAPTURE=time:3600 "$W/loop" "$N" "$ROUNDS" "$ENTRY") ;;
	full) out=$(env LD_PRELOAD="$lib" GPUTAP_OUT="$o" GPUTAP_LOG=error "$W/loop" "$N" "$ROUNDS" "$ENTRY") ;;
	esac
	local ns clk
	ns=$(echo "$out" | sed -n 's/.*"ns_per_launch":\([0-9.]*\).*/\1/p')
	clk=$(echo "$out" | sed -n 's/.*"clock_ns":\([0-9.]*\).*/\1/p')
	echo "$clk" >>"$W/clock"
	if [ "$m" != none ]; then
		local name=cuLaunchKernel
		[ "$ENTRY" = ex ] && name=cuLaunchKernelEx
		grep -q "^name:$name,count:$((N * ROUNDS))," "$o"/*/metrics.log 2>/dev/null || ns=wrong
	fi
	rm -rf "$o"
	echo "${ns:-wrong}"
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {if (!NR) print "nan"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A v=()
for r in $(seq "$REPS"); do
	for m in $modes; do
		v[$m]="${v[$m]:-} $(one "$m")"
	done
done
base=$(echo ${v[none]} | median)
met=$(echo ${v[metrics]} | median)
echo "== $(uname -m), $(nproc) cores, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?); $ENTRY, $N launches x $ROUNDS rounds, medians of $REPS runs"
echo "== one clock_gettime(CLOCK_MONOTONIC): $(median <"$W/clock") ns"
echo "| mode | median ns/launch | tap cost ns | vs none | spread (min-max) |"
echo "|---|---|---|---|---|"
for m in $modes; do
	md=$(echo ${v[$m]} | median)
	mn=$(echo ${v[$m]} | tr ' ' '\n' | sed '/^$/d' | sort -g | head -1)
	mx=$(echo ${v[$m]} | tr ' ' '\n' | sed '/^$/d' | sort -g | tail -1)
	awk -v m="$m" -v a="$md" -v b="$base" -v lo="$mn" -v hi="$mx" \
		'BEGIN {printf "| %s | %.2f | %.2f | %.2f | %s-%s |\n", m, a, a - b, a / b, lo, hi}'
done
case " ${v[*]} " in *wrong*) echo "WRONG: a tap run's metrics.log did not count every launch: ${v[*]}"; exit 1 ;; esac
