#!/usr/bin/env bash
# Launch hold end to end without a GPU: a stand-in libcuda.so.1
# (tests/fakecuda/libcuda.c) logs what the "GPU" receives, and a program
# (tests/fakecuda/hold_prog.c) takes its entry points from cuGetProcAddress as
# the CUDA runtime does.  Under GPUTAP_HOLD=1, 4, 64 the driver must receive
# the same launches with the same arguments in the same order as without
# gputap (arguments overwritten on the stack at once, an event record through
# a stub, a copy and a sync through hooks, a per-thread-stream launch and a
# bad launch never held, a launch only the timer can release), and
# `gputap report` must say what was held and what released it.
. "$(dirname "$0")/lib.sh"
if ! command -v cc >/dev/null; then
	notok build-fake-driver "no C compiler"
	exit 0
fi
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
mkdir -p "$T/lib"
# -Bsymbolic: the driver hands out its own functions, never the preloaded library's same-named ones
cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -I"$CUDA_INC" -o "$T/lib/libcuda.so.1" \
	"$GT_TEST_SRCDIR/fakecuda/libcuda.c" -lpthread 2>"$T/cc.err" &&
	cc -O1 -I"$CUDA_INC" -o "$T/hold_prog" "$GT_TEST_SRCDIR/fakecuda/hold_prog.c" -ldl 2>>"$T/cc.err" &&
	ok build-fake-driver || { notok build-fake-driver "$(cat "$T/cc.err")"; exit 0; }
export LD_LIBRARY_PATH="$T/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

"$T/hold_prog" >"$T/base.out" 2>"$T/base.err"
rc=$?
want='L0 L1 L2 L3 L4 L5 L6 L7 L8 L9 E L10 L11 L12 L13 L14 C L15 L16 P100 L17 L18 L19 L99 S'
[ $rc -eq 0 ] && grep -qxF "$want" "$T/base.out" && ok baseline || notok baseline "exit $rc" "$(cat "$T/base.out" "$T/base.err")"

for n in 0 1 4 64; do
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/o$n" GPUTAP_HOLD=$n "$T/hold_prog" >"$T/h$n.out" 2>"$T/h$n.err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$T/base.out" "$T/h$n.out"; then
		ok "hold-$n-driver-saw-the-same"
	else
		notok "hold-$n-driver-saw-the-same" "exit $rc" "$(cat "$T/h$n.out" "$T/h$n.err")"
	fi
	if grep -q '^gputap: warning' "$T/h$n.err"; then notok "hold-$n-quiet" "$(cat "$T/h$n.err")"; else ok "hold-$n-quiet"; fi
	"$GPUTAP" report "$T/o$n" >"$T/r$n.txt" 2>&1
done
if grep -q 'Launch hold' "$T/r0.txt"; then notok no-hold-no-section "$(cat "$T/r0.txt")"; else ok no-hold-no-section; fi
for n in 1 4 64; do
	contains "hold-$n-held" "$T/r$n.txt" "launches held 21, not held 2: per-thread stream 1, launch check 1"
	contains "hold-$n-setting" "$T/r$n.txt" "Launch hold (batches of $n, released after 1000 us at most)"
done
# with batches of 4 and 64 the event record (a stub) and the copy (a hook) release the queue
for n in 4 64; do
	contains "hold-$n-event-releases" "$T/r$n.txt" "cuEventRecord 1"
	contains "hold-$n-copy-releases" "$T/r$n.txt" "cuMemcpyDtoH 1"
done
# nothing after the 21st launch fills a batch of 64: the timer releases the launch the host waits for
contains hold-64-timer "$T/r64.txt" "timer 1"
# the settings' limits: a malformed value warns once and holds nothing
env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/ob" GPUTAP_HOLD=lots "$T/hold_prog" >"$T/hb.out" 2>"$T/hb.err"
cmp -s "$T/base.out" "$T/hb.out" && [ "$(grep -c '^gputap: warning' "$T/hb.err")" -eq 1 ] &&
	grep -q 'GPUTAP_HOLD=lots is not valid' "$T/hb.err" && ok bad-setting-warns-once ||
	notok bad-setting-warns-once "$(cat "$T/hb.err")"
# without a recording tap, hold is off and says so once
env LD_PRELOAD="$LIBGPUTAP" GPUTAP_HOLD=4 "$T/hold_prog" >"$T/hn.out" 2>"$T/hn.err"
cmp -s "$T/base.out" "$T/hn.out" && grep -q 'GPUTAP_HOLD needs the tap recording' "$T/hn.err" && ok no-out-warns ||
	notok no-out-warns "$(cat "$T/hn.err")"
finish
