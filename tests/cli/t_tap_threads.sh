#!/usr/bin/env bash
# The tap's counters are per thread and summed by the writer: calls from many
# threads, and from threads that take over the slots of finished ones, are all
# counted, in metrics.log and in the trace's closing counters, with and without
# API records; a fork child only resets the tap.  Runs on a stand-in libcuda
# (tests/fakecuda/libcuda.c).
. "$(dirname "$0")/lib.sh"
if ! command -v cc >/dev/null; then
	notok build "no C compiler"
	exit 0
fi
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
mkdir -p "$T/lib"
cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -I"$CUDA_INC" -o "$T/lib/libcuda.so.1" \
	"$GT_TEST_SRCDIR/fakecuda/libcuda.c" -lpthread 2>"$T/cc.err" &&
	cc -O1 -I"$CUDA_INC" -o "$T/threads_prog" "$GT_TEST_SRCDIR/fakecuda/threads_prog.c" -ldl -lpthread 2>>"$T/cc.err" &&
	ok build || { notok build "$(cat "$T/cc.err")"; exit 0; }
export LD_LIBRARY_PATH="$T/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

for mode in metrics full; do
	tr=; [ $mode = metrics ] && tr=metrics
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/o$mode" ${tr:+GPUTAP_TRACE=$tr} "$T/threads_prog" 8 3 2000 \
		>"$T/$mode.out" 2>"$T/$mode.err"
	rc=$?
	[ $rc -eq 0 ] && grep -qx "48000 48000" "$T/$mode.out" && ok "$mode-runs" ||
		notok "$mode-runs" "exit $rc" "$(cat "$T/$mode.out" "$T/$mode.err")"
	m=$(ls "$T/o$mode"/*/metrics.log 2>/dev/null | head -1)
	grep -q '^name:cuStreamSynchronize,count:48000,' "$m" 2>/dev/null && grep -q '^name:cuMemcpyD2H,count:48000,' "$m" &&
		ok "$mode-metrics-every-call" || notok "$mode-metrics-every-call" "$(cat "$m" 2>&1)"
	python3 - "$(ls "$T/o$mode"/*/trace.gtr | head -1)" >"$T/$mode.stat" 2>&1 <<'EOP'
import sys
sys.path.insert(0, "tests/gpu")
import gtr
t = gtr.read(sys.argv[1])
for r in t["records"]:
    if r["type"] == "counter":
        print("counter", r["name"], int(r["value"]))
print("api", sum(1 for r in t["records"] if r["type"] == "api"))
EOP
	grep -qx 'counter calls:cuStreamSynchronize 48000' "$T/$mode.stat" && grep -qx 'counter calls:cuMemcpyD2H 48000' "$T/$mode.stat" &&
		ok "$mode-trace-counters" || notok "$mode-trace-counters" "$(cat "$T/$mode.stat")"
done
# with API records: one record per call (and the 2 cuGetProcAddress)
grep -qx 'api 96002' "$T/full.stat" && ok full-api-records || notok full-api-records "$(cat "$T/full.stat")"

# launches that are only counted (no API records) save no errno: the program's errno stays as it
# was across them, also on a thread's first call (its slot is claimed then), in every mode
for m in metrics closed full; do
	case $m in
	metrics) extra=(GPUTAP_TRACE=metrics) ;;
	closed) extra=(GPUTAP_CAPTURE=time:3600) ;;
	full) extra=() ;;
	esac
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/e$m" LAUNCHES=1 "${extra[@]}" "$T/threads_prog" 4 2 500 \
		>"$T/e$m.out" 2>"$T/e$m.err"
	rc=$?
	[ $rc -eq 0 ] && grep -q '^name:cuLaunchKernel,count:4000,' "$T/e$m"/*/metrics.log 2>/dev/null &&
		ok "errno-kept-$m" || notok "errno-kept-$m" "exit $rc" "$(cat "$T/e$m.err" "$T/e$m"/*/metrics.log 2>&1 | head -20)"
done

# metrics.log's burst of calls that are only counted (metrics, a capture window not open: timed
# with the CPU's time-stamp counter where it is fit, GPUTAP_TSC=auto) and of recorded ones: 50
# synchronisations of 2 ms each take 100 ms, and every way of timing them says so
for how in metrics:auto metrics:off closed:auto full:auto; do
	m=${how%%:*} tsc=${how#*:}
	case $m in
	metrics) extra=(GPUTAP_TRACE=metrics) ;;
	closed) extra=(GPUTAP_CAPTURE=time:3600) ;;
	full) extra=() ;;
	esac
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/b$m$tsc" GPUTAP_TSC=$tsc FAKE_SYNC_US=2000 "${extra[@]}" \
		"$T/threads_prog" 1 1 50 >"$T/b.out" 2>"$T/b.err"
	b=$(cat "$T/b$m$tsc"/*/metrics.log 2>/dev/null | sed -n 's/^name:cuStreamSynchronize,count:50,burst:\([0-9]*\)$/\1/p')
	[ -n "$b" ] && [ "$b" -ge 100000 ] && [ "$b" -lt 200000 ] && ok "burst-$m-tsc-$tsc" ||
		notok "burst-$m-tsc-$tsc" "burst '$b' us for 50 x 2 ms" "$(cat "$T/b$m$tsc"/*/metrics.log "$T/b.err" 2>&1)"
done

# API records of a full trace: timed with the counter (GPUTAP_TSC=auto; the writer turns ticks into
# epoch ns and API indices into names) or with clock_gettime (off), the same: 50 synchronisations of
# 2 ms, each named, inside the run's wall-clock span, 2-50 ms long, one after another
for tsc in auto off; do
	t0=$(date +%s%N)
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/r$tsc" GPUTAP_TSC=$tsc FAKE_SYNC_US=2000 \
		"$T/threads_prog" 1 1 50 >"$T/r.out" 2>"$T/r.err"
	t1=$(date +%s%N)
	v=$(python3 - "$(ls "$T/r$tsc"/*/trace.gtr 2>/dev/null | head -1)" "$t0" "$t1" 2>&1 <<'EOP'
import sys
sys.path.insert(0, "tests/gpu")
import gtr
t0, t1 = int(sys.argv[2]), int(sys.argv[3])
s = [r for r in gtr.read(sys.argv[1])["records"] if r["type"] == "api" and r["name"] == "cuStreamSynchronize"]
bad = [r for r in s if not (t0 <= r["start"] <= r["end"] <= t1 and 1900000 <= r["end"] - r["start"] <= 50000000)]
order = all(a["end"] <= b["start"] for a, b in zip(s, s[1:]))
print(len(s), len(bad), order, bad[:1])
EOP
)
	[ "$v" = "50 0 True []" ] && ok "api-times-tsc-$tsc" || notok "api-times-tsc-$tsc" "$v" "$(cat "$T/r.err")"
	# timeline.log's lines come from the same records, converted first: names, epoch starts, bursts
	tl=$(awk -v t0="$t0" -v t1="$t1" -F', ' '$1 == "name:cuStreamSynchronize" {
		s = substr($2, 7); b = substr($3, 7) + 0; n++
		if (s + 0 < t0 + 0 || s + 0 > t1 + 0 || b < 1900 || b > 50000) bad++ }
		END {print n + 0, bad + 0}' "$T/r$tsc"/*/timeline.log 2>/dev/null)
	[ "$tl" = "50 0" ] && ok "timeline-times-tsc-$tsc" || notok "timeline-times-tsc-$tsc" "'$tl' (lines, bad)" \
		"$(head -3 "$T/r$tsc"/*/timeline.log 2>&1)"
done

# bench/overhead/ab.sh's switch: with GPUTAP_BENCH_AB=1, calls made while gputap_bench_pass(1) holds
# are neither counted nor recorded (waves 1 and 3 of 4 here); without it the switch does nothing
for ab in 1 0; do
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/p$ab" GPUTAP_BENCH_AB=$ab BENCH_PASS=1 "$T/threads_prog" 2 4 100 \
		>"$T/p$ab.out" 2>"$T/p$ab.err"
	rc=$?
	want="pass 0" n=401
	[ $ab = 0 ] && want="pass -1" n=801
	c=$(sed -n 's/^name:cuStreamSynchronize,count:\([0-9]*\),.*/\1/p' "$T/p$ab"/*/metrics.log 2>/dev/null)
	a=$(python3 - "$(ls "$T/p$ab"/*/trace.gtr 2>/dev/null | head -1)" 2>&1 <<'EOP'
import sys
sys.path.insert(0, "tests/gpu")
import gtr
print(sum(1 for r in gtr.read(sys.argv[1])["records"] if r["type"] == "api" and r["name"] == "cuStreamSynchronize"))
EOP
)
	[ $rc -eq 0 ] && grep -qx "$want" "$T/p$ab.out" && [ "$c" = $n ] && [ "$a" = $n ] && ok "bench-pass-ab-$ab" ||
		notok "bench-pass-ab-$ab" "exit $rc; counted '$c', records '$a', want $n" "$(cat "$T/p$ab.out" "$T/p$ab.err")"
done

# gputap_bench_pass(3) (ab.sh's kmode): calls in the odd waves are counted but not recorded
env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/p3" GPUTAP_BENCH_AB=1 BENCH_PASS=3 "$T/threads_prog" 2 4 100 >"$T/p3.out" 2>"$T/p3.err"
rc=$?
c=$(sed -n 's/^name:cuStreamSynchronize,count:\([0-9]*\),.*/\1/p' "$T/p3"/*/metrics.log 2>/dev/null)
a=$(python3 - "$(ls "$T/p3"/*/trace.gtr 2>/dev/null | head -1)" 2>&1 <<'EOP'
import sys
sys.path.insert(0, "tests/gpu")
import gtr
print(sum(1 for r in gtr.read(sys.argv[1])["records"] if r["type"] == "api" and r["name"] == "cuStreamSynchronize"))
EOP
)
[ $rc -eq 0 ] && grep -qx "pass 0" "$T/p3.out" && [ "$c" = 801 ] && [ "$a" = 401 ] && ok bench-pass-counts-only ||
	notok bench-pass-counts-only "exit $rc; counted '$c' (want 801), records '$a' (want 401)" "$(cat "$T/p3.out" "$T/p3.err")"

# a fork child only resets the tap: without a CUDA call of its own it leaves no folder (and the
# parent's trace is complete); with one, it gets a folder of its own that counts only its call
for fk in idle cuda; do
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$T/f$fk" FORK=$fk "$T/threads_prog" 2 1 10 >"$T/f$fk.out" 2>"$T/f$fk.err"
	rc=$?
	[ $rc -eq 0 ] && ok "fork-$fk-runs" || notok "fork-$fk-runs" "exit $rc" "$(cat "$T/f$fk.err")"
done
n=$(ls "$T/fidle" | wc -l)
[ "$n" -eq 1 ] && [ -f "$T/fidle/$(ls "$T/fidle")/trace.gtr" ] && ok fork-idle-child-no-folder ||
	notok fork-idle-child-no-folder "$(ls -R "$T/fidle")"
n=$(ls "$T/fcuda" | wc -l)
counts=$(cat "$T"/fcuda/*/metrics.log 2>/dev/null | sed -n 's/^name:cuStreamSynchronize,count:\([0-9]*\),.*/\1/p' | sort -n | tr '\n' ' ')
[ "$n" -eq 2 ] && [ "$counts" = "1 20 " ] && ok fork-cuda-child-own-folder ||
	notok fork-cuda-child-own-folder "$(ls "$T/fcuda")" "counts: $counts"
finish
