#!/usr/bin/env bash
# Launch hold on a GPU: the programs print exactly what they print without
# gputap, with gputap and no hold, and with --hold 1, 2, 8 and 64; the traces
# say launches were held (counters > 0, so no test passes by holding nothing)
# and count as many kernels and launch calls as without hold.
#   tests/gpu/hold.sh [WORKDIR]      ends with "N passed, N failed"
# Needs nvcc, a CUDA GPU, python3 (with torch for the PyTorch loop), and the
# gputap CLI and library (GT_GPU_BUILD, default .carry/build from make gpu-bundle).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
B=${GT_GPU_BUILD:-$top/.carry/build}
G=${GPUTAP:-$B/gputap}
LIB=$B/libgputap.so
W=${1:-$(mktemp -d)}
PY=${PYTHON:-python3}
ARCH=${ARCH:-sm_90}
mkdir -p "$W"
log=$W/hold-results.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }
export GPUTAP_LIB=$LIB

if [ ! -x "$G" ] || [ ! -f "$LIB" ]; then
	make --no-print-directory O="$B" "$B/gputap" "$LIB" >"$W/build.log" 2>&1 || say "not ok build/gputap"
fi
nvcc -O2 -arch="$ARCH" -o "$W/hold_check" tests/gpu/hold_check.cu -lpthread >>"$W/build.log" 2>&1 ||
	say "not ok build/hold_check: $(tail -5 "$W/build.log")"

# run_mode NAME CMD... [-- KEY ... [+ KEY ...]]: counters > 0 in every hold run, then (after +)
# in the runs with batches of 2 or more
run_mode() {
	local name=$1
	shift
	local cmd=() expect=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		cmd+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift && expect=("$@")
	timeout 120 "${cmd[@]}" >"$W/$name.base" 2>"$W/$name.base.err" || say "not ok $name/baseline-exit: $?"
	rm -rf "$W/$name-h0"
	timeout 180 "$G" run -o "$W/$name-h0" -- "${cmd[@]}" >"$W/$name.h0" 2>"$W/$name.h0.err" ||
		say "not ok $name/no-hold-exit: $(tail -3 "$W/$name.h0.err")"
	local specs=()
	for n in ${HOLDS:-1 2 8 64}; do
		rm -rf "$W/$name-h$n"
		timeout 180 "$G" run -o "$W/$name-h$n" --hold "$n" -- "${cmd[@]}" >"$W/$name.h$n" 2>"$W/$name.h$n.err" ||
			say "not ok $name/hold-$n-exit: $(tail -3 "$W/$name.h$n.err")"
		specs+=("$n:$W/$name-h$n:$W/$name.h$n")
		if grep -q '^gputap: warning' "$W/$name.h$n.err"; then
			say "not ok $name/hold-$n-quiet: $(grep '^gputap: warning' "$W/$name.h$n.err" | head -3)"
		else
			say "ok $name/hold-$n-quiet"
		fi
	done
	local ex=() flag=--expect
	for e in "${expect[@]}"; do
		if [ "$e" = + ]; then flag=--expect-batched; else ex+=("$flag" "$e"); fi
	done
	"$PY" tests/gpu/check_hold.py "$name" "$W/$name.base" "$W/$name-h0" "$W/$name.h0" "${specs[@]}" "${ex[@]}" 2>&1 |
		tee -a "$log"
}

run_mode mixed "$W/hold_check" mixed -- not_held.per_thread not_held.check + release.copy release.event
run_mode threads "$W/hold_check" threads
run_mode graph "$W/hold_check" graph -- not_held.capture + release.capture
run_mode spin "$W/hold_check" spin -- not_held.host_memory + release.timer
grep -h 'longest wait' "$W"/spin.h*.err | sed 's/^/  /' | tee -a "$log"

# The run summary and gputap report show what the hold did.
if grep -q '^Launch hold' "$W/mixed.h8.err"; then say "ok summary/hold-section"; else say "not ok summary/hold-section"; fi
"$G" report "$W/mixed-h8" >"$W/report.txt" 2>&1
if grep -q 'Launch hold' "$W/report.txt" && grep -q 'Launch hold' "$W/mixed-h8/report.html"; then
	say "ok report/hold-section"
else
	say "not ok report/hold-section"
fi

# PyTorch: losses bitwise identical for 20 steps with --hold 16, counts equal.
if "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	HOLDS=16 run_mode torch "$PY" tests/gpu/hold_torch.py --steps 20
	# which launches are not held, and why (the first few of each reason)
	GPUTAP_LOG=debug timeout 180 "$G" run -o "$W/torch-dbg" --hold 16 -- "$PY" tests/gpu/hold_torch.py --steps 20 \
		>/dev/null 2>"$W/torch-dbg.err"
	grep 'launch hold:' "$W/torch-dbg.err" | sort | uniq -c | sort -rn | head -20 | sed 's/^/# /' | tee -a "$log"
	timeout 120 "$PY" tests/gpu/hold_torch.py --steps 20 --witness >"$W/torch.witness" 2>"$W/torch.witness.err"
	wk=$(sed -n 's/^witness kernels \([0-9]*\).*/\1/p' "$W/torch.witness")
	gk=$("$PY" -c "import sys; sys.path.insert(0,'tests/gpu'); import check_hold as c; print(c.facts('$W/torch-h16')['kernels'])")
	if [ -n "$wk" ] && [ "$wk" = "$gk" ]; then
		say "ok torch/kernels-match-torch-profiler ($wk)"
	else
		say "not ok torch/kernels-match-torch-profiler: torch.profiler $wk, gputap --hold 16 $gk"
	fi
else
	say "not ok torch/available: no torch with CUDA"
fi

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed" | tee -a "$log"
[ "$failed" -eq 0 ]
