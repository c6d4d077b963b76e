#!/usr/bin/env bash
# The tap's CUPTI side without a GPU: a stand-in CUPTI (tests/tap/fake_cupti.c,
# loaded through GPUTAP_CUPTI_LIB) and a program that starts the tap as the
# driver does (tests/tap/cupti_client.c).  Periodic flush (a killed process
# keeps its GPU records), CUPTI's buffers inside GPUTAP_BUFFER_MB, refused
# activity kinds and a hand-over marked in the trace, the signal path making no
# CUPTI call, API durations immune to wall-clock steps, metrics.log never torn.
. "$(dirname "$0")/lib.sh"
src="$GT_TEST_SRCDIR/tap"
top="$GT_TEST_SRCDIR/.."
cuda=${CUDA_HOME:-/usr/local/cuda}
if ! command -v cc >/dev/null || [ ! -f "$cuda/include/cupti.h" ]; then
	notok build "needs cc and $cuda/include/cupti.h"
	exit 0
fi
if cc -O1 -shared -fPIC -I"$cuda/include" -o "$T/libfakecupti.so" "$src/fake_cupti.c" -lpthread 2>"$T/cc.err" &&
	cc -O1 -rdynamic -I"$cuda/include" -o "$T/client" "$src/cupti_client.c" -ldl 2>>"$T/cc.err" &&
	cc -O1 -D_GNU_SOURCE -I"$top/include" -I"$top/src" -o "$T/stat" "$src/trace_stat.c" "$top/src/trace/trace_io.c" \
		"$top/src/trace/blockz.c" "$top/src/core/csvio.c" -lz 2>>"$T/cc.err" &&
	cc -O1 -o "$T/fsize" "$src/fsize_exec.c" 2>>"$T/cc.err"; then
	ok build
else
	notok build "$(cat "$T/cc.err")"
	exit 0
fi
run() { # DIR ARGS...: the client under the tap with the fake CUPTI
	local d=$1
	shift
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$d" GPUTAP_CUPTI_LIB="$T/libfakecupti.so" "$@"
}
trace_of() { ls "$1"/pid*/trace.gtr "$1"/pid*/trace.gtr.partial 2>/dev/null | head -1; }

# killed 400 ms after 50 kernels ran: the periodic flush has put them in the trace
run "$T/k" "$T/client" kill 50 >"$T/k.out" 2>&1
rc=$?
t=$(trace_of "$T/k")
[ $rc -eq 137 ] && [ -n "$t" ] && "$T/stat" "$t" >"$T/k.stat" 2>&1 && grep -qx "type 3 50" "$T/k.stat" &&
	ok killed-keeps-gpu-records || notok killed-keeps-gpu-records "exit $rc, $t" "$(cat "$T/k.stat" "$T/k.out" 2>&1)"

# SIGTERM: the handler's final drain makes no CUPTI call, the trace is complete and says so
run "$T/t" env FAKE_CUPTI_LOG="$T/t.log" "$T/client" term 20 >"$T/t.out" 2>&1
rc=$?
t=$(trace_of "$T/t")
"$T/stat" "$t" >"$T/t.stat" 2>&1
[ $rc -eq 143 ] && [ "${t##*.}" = gtr ] && grep -qx "partial 0" "$T/t.stat" && grep -qx "type 3 20" "$T/t.stat" &&
	ok sigterm-trace-complete || notok sigterm-trace-complete "exit $rc, $t" "$(cat "$T/t.stat" "$T/t.out" 2>&1)"
grep -qx "flush 0" "$T/t.log" 2>/dev/null && ! grep -qx "flush 1" "$T/t.log" && grep -qx "note 5" "$T/t.stat" &&
	ok sigterm-no-cupti-call || notok sigterm-no-cupti-call "$(cat "$T/t.log" "$T/t.stat" 2>&1)"

# CUPTI refuses kernel activity: one warning, a note in the trace, the header flag
run "$T/r" env FAKE_CUPTI_REFUSE=10 "$T/client" plain >"$T/r.out" 2>&1
rc=$?
"$T/stat" "$(trace_of "$T/r")" >"$T/r.stat" 2>&1
[ $rc -eq 0 ] && grep -q "CUPTI refused to record kernels (CUPTI_ERROR_NOT_COMPATIBLE)" "$T/r.out" &&
	grep -qx "note 2" "$T/r.stat" && [ $(( $(sed -n 's/^flags //p' "$T/r.stat") & 16 )) -ne 0 ] &&
	ok refused-kind-marked || notok refused-kind-marked "exit $rc" "$(cat "$T/r.out" "$T/r.stat")"

# the program's own profiler takes CUPTI over: the trace says from when
run "$T/h" "$T/client" handover >"$T/h.out" 2>&1
rc=$?
"$T/stat" "$(trace_of "$T/h")" >"$T/h.stat" 2>&1
[ $rc -eq 0 ] && grep -q "hands CUPTI over" "$T/h.out" && grep -qx "note 1" "$T/h.stat" &&
	[ $(( $(sed -n 's/^flags //p' "$T/h.stat") & 16 )) -ne 0 ] &&
	ok handover-marked || notok handover-marked "exit $rc" "$(cat "$T/h.out" "$T/h.stat")"
"$GPUTAP" convert "$T/h" >"$T/hc.out" 2>&1
grep -q "handed over to another client" "$T/hc.out" && grep -q "handed over to another client" "$T"/h/pid*/trace.json &&
	ok handover-in-outputs || notok handover-in-outputs "$(cat "$T/hc.out")"

# CUPTI hoarding buffers gets at most its share of GPUTAP_BUFFER_MB (8 MiB: 2 MiB); the refusals are counted
run "$T/b" env GPUTAP_BUFFER_MB=8 "$T/client" hoard 100 >"$T/b.out" 2>&1
got=$(sed -n 's/^hoarded //p' "$T/b.out")
"$T/stat" "$(trace_of "$T/b")" >"$T/b.stat" 2>&1
[ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" -le $((2 << 20)) ] && grep -q "^dropped 3 " "$T/b.stat" &&
	ok cupti-buffers-bounded || notok cupti-buffers-bounded "hoarded ${got:-?}" "$(cat "$T/b.out" "$T/b.stat")"

# a cudaMemcpy during which the wall clock steps back 10 s: its time is not 1.8e19 ns
run "$T/c" "$T/client" clockstep >"$T/c.out" 2>&1
line=$(grep '^name:cudaMemcpy,' "$T"/c/pid*/metrics.log 2>/dev/null)
burst=${line##*burst:}
[ -n "$line" ] && [ "${line#*count:1,}" != "$line" ] && [ ${#burst} -le 6 ] &&
	ok clock-step-duration || notok clock-step-duration "${line:-no cudaMemcpy line}" "$(cat "$T/c.out")"

# a statically linked runtime (no libcudart loaded): counters only leave CUPTI's runtime callbacks
# off (they cost every launch) and say so in the trace; asked for, or with API records, they are on
run "$T/s0" env GPUTAP_TRACE=metrics FAKE_CUPTI_LOG="$T/s0.log" "$T/client" plain >"$T/s0.out" 2>&1
"$T/stat" "$(trace_of "$T/s0")" >"$T/s0.stat" 2>&1
! grep -q "^runtime-callback" "$T/s0.log" 2>/dev/null && grep -qx "note 6" "$T/s0.stat" &&
	[ $(( $(sed -n 's/^flags //p' "$T/s0.stat") & 16 )) -eq 0 ] &&
	ok static-runtime-counters-no-callbacks || notok static-runtime-counters-no-callbacks "$(cat "$T/s0.log" "$T/s0.stat" 2>&1)"
"$GPUTAP" convert "$T/s0" >"$T/s0c.out" 2>&1
! grep -q "statically linked" "$T/s0c.out" && ok static-runtime-note-no-warning || notok static-runtime-note-no-warning "$(cat "$T/s0c.out")"
run "$T/s1" env GPUTAP_TRACE=metrics GPUTAP_RUNTIME_CALLBACKS=on FAKE_CUPTI_LOG="$T/s1.log" "$T/client" plain >"$T/s1.out" 2>&1
"$T/stat" "$(trace_of "$T/s1")" >"$T/s1.stat" 2>&1
grep -qx "runtime-callback 31" "$T/s1.log" 2>/dev/null && ! grep -qx "note 6" "$T/s1.stat" &&
	ok static-runtime-callbacks-on || notok static-runtime-callbacks-on "$(cat "$T/s1.log" "$T/s1.stat" 2>&1)"
run "$T/s2" env FAKE_CUPTI_LOG="$T/s2.log" "$T/client" plain >"$T/s2.out" 2>&1
"$T/stat" "$(trace_of "$T/s2")" >"$T/s2.stat" 2>&1
grep -qx "runtime-callback 31" "$T/s2.log" 2>/dev/null && ! grep -qx "note 6" "$T/s2.stat" &&
	ok static-runtime-full-trace-callbacks || notok static-runtime-full-trace-callbacks "$(cat "$T/s2.log" "$T/s2.stat" 2>&1)"
# the callbacks CUPTI's clients ask for (tap/cupti.h): with API records the range feed's launches
# (cuLaunchKernel 307, cuGraphLaunch 514), not its memory calls (cuMemAlloc_v2 243: the hooks count
# those when preloaded); with counters only and no GPU trace, no driver callback at all
grep -qx "driver-callback 307" "$T/s2.log" && grep -qx "driver-callback 514" "$T/s2.log" &&
	! grep -qx "driver-callback 243" "$T/s2.log" && ! grep -q "^driver-callback" "$T/s0.log" 2>/dev/null &&
	ok cupti-clients-callbacks || notok cupti-clients-callbacks "$(cat "$T/s2.log" "$T/s0.log")"
run "$T/s3" env GPUTAP_TRACE=metrics GPUTAP_RUNTIME_CALLBACKS=sometimes "$T/client" plain >"$T/s3.out" 2>&1
[ "$(grep -c "GPUTAP_RUNTIME_CALLBACKS=sometimes is not valid (accepted: auto, on, off)" "$T/s3.out")" -eq 1 ] &&
	ok runtime-callbacks-bad-value || notok runtime-callbacks-bad-value "$(cat "$T/s3.out")"

# capture windows: nothing of CUPTI before a window opens (set up and idle, CUPTI makes every launch
# 1-5 % dearer), a window's start subscribes on the thread that opened it, its end finalizes; a
# window that never comes leaves CUPTI untouched; the window holds exactly the kernels of its steps
nv() { local d=$1; shift; run "$d" env NVTX_INJECTION64_PATH="$LIBGPUTAP" GPUTAP_LOG=info "$@"; }
for c in "w nvtx:step@3-4 6 20" "wn nvtx:step@8-9 7 0" "w2 nvtx:step@2-2;nvtx:step@6-6 8 20"; do
	set -- $c
	nv "$T/$1" env GPUTAP_CAPTURE="$2" FAKE_CUPTI_LOG="$T/$1.log" "$T/client" steps "$3" >"$T/$1.out" 2>&1
	rc=$?
	"$T/stat" "$(trace_of "$T/$1")" >"$T/$1.stat" 2>&1
	k=$(sed -n 's/^type 3 //p' "$T/$1.stat")
	seq=$(grep -E '^(subscribe|unsubscribe|finalize)' "$T/$1.log" 2>/dev/null | tr '\n' ' ')
	case $1 in
	w) want="subscribe main=1 finalize " ;;
	wn) want="" ;;
	w2) want="subscribe main=1 finalize subscribe main=1 finalize " ;;
	esac
	[ $rc -eq 0 ] && [ "${k:-0}" -eq "$4" ] && [ "$seq" = "$want" ] &&
		ok "capture-cupti-only-in-windows-$1" ||
		notok "capture-cupti-only-in-windows-$1" "exit $rc, ${k:-0} kernels (want $4), CUPTI calls: $seq (want $want)" "$(cat "$T/$1.out")"
done
# the program's own profiler subscribing between capture windows gets CUPTI without a hand-over:
# gputap holds none then (a window opening meanwhile records host-side calls only, saying why)
nv "$T/hw" env GPUTAP_CAPTURE=nvtx:step@3-4 "$T/client" handover >"$T/hw.out" 2>&1
rc=$?
"$T/stat" "$(trace_of "$T/hw")" >"$T/hw.stat" 2>&1
[ $rc -eq 0 ] && ! grep -q "hands CUPTI over" "$T/hw.out" && ! grep -qx "note 1" "$T/hw.stat" &&
	ok capture-no-handover-between-windows || notok capture-no-handover-between-windows "exit $rc" "$(cat "$T/hw.out" "$T/hw.stat")"
# another client holds CUPTI throughout: two windows record host-side calls only, each named so,
# the program's stderr gets one message, and the conversion no second one (a "no GPU activity" note
# would be wrong where another window recorded in full)
nv "$T/bw" env FAKE_CUPTI_BUSY=1 GPUTAP_CAPTURE='nvtx:step@2-2;nvtx:step@4-4' "$T/client" steps 5 >"$T/bw.out" 2>&1
rc=$?
"$GPUTAP" convert "$T/bw" -o "$T/bwc" >"$T/bwc.out" 2>&1
[ $rc -eq 0 ] && [ "$(grep -c "another CUPTI client" "$T/bw.out")" -eq 1 ] &&
	[ "$(grep -o "host only: another CUPTI client" "$T"/bwc/*/trace.json 2>/dev/null | wc -l)" -ge 2 ] &&
	! grep -q "attached first" "$T/bwc.out" &&
	ok capture-busy-one-message || notok capture-busy-one-message "exit $rc" "$(cat "$T/bw.out" "$T/bwc.out")"
run "$T/p" env FAKE_CUPTI_LOG="$T/p.log" "$T/client" plain >"$T/p.out" 2>&1
[ "$(grep -E '^(subscribe|unsubscribe)' "$T/p.log" | tr '\n' ' ')" = "subscribe main=1 " ] &&
	ok no-capture-one-subscription || notok no-capture-one-subscription "$(cat "$T/p.log")"

# files limited to 100 bytes: metrics.log is whole or absent, never torn, no temporary left
"$T/fsize" 100 env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/f" /bin/true >"$T/f.out" 2>&1
m=$(ls "$T"/f/pid*/metrics.log 2>/dev/null)
if [ -z "$m" ] || { [ "$(tail -c1 "$m" | od -An -c | tr -d ' ')" = '\n' ] && [ "$(wc -l <"$m")" -ge 11 ]; }; then
	ok metrics-never-torn
else
	notok metrics-never-torn "$(wc -c <"$m") bytes" "$(cat "$m")"
fi
ls -a "$T"/f/pid*/ 2>/dev/null | grep -q '\.tmp$' && notok metrics-no-temporary "$(ls -a "$T"/f/pid*/)" || ok metrics-no-temporary
finish
