#!/usr/bin/env bash
# Range metrics through the library without a GPU: a stand-in CUPTI with the
# Range Profiler (tests/tap/fake_cupti.c and tests/tap/fake_rangeprof.c, one
# library loaded through GPUTAP_CUPTI_LIB), a stand-in libcuda for a current
# context (tests/fakecuda/libcuda.c), and a program that opens ranges and
# launches kernels whose counter values the stand-in knows
# (tests/tap/rm_client.c).  Ranges opened before CUDA starts, the attribution
# of a thread's launches when it has no range of its own, nesting on several
# threads, kernel records off while counters are measured (and the values
# marked not exact when the user keeps both), and the kernel counts of
# gputap_results_json().
. "$(dirname "$0")/lib.sh"
src="$GT_TEST_SRCDIR/tap"
top="$GT_TEST_SRCDIR/.."
cuda=${CUDA_HOME:-/usr/local/cuda}
if ! command -v cc >/dev/null || [ ! -f "$cuda/include/cupti_range_profiler.h" ] || ! command -v python3 >/dev/null; then
	notok build "needs cc, python3 and $cuda/include/cupti_range_profiler.h"
	exit 0
fi
# fake_cupti.c with the five functions fake_rangeprof.c wraps renamed
wrap=""
for f in cuptiSubscribe cuptiActivityEnable cuptiActivityDisable cuptiActivityRegisterCallbacks cuptiActivityFlushAll; do
	wrap="$wrap -D$f=fake_base_$f"
done
if cc -O1 -fPIC -c -I"$cuda/include" $wrap -o "$T/fc.o" "$src/fake_cupti.c" 2>"$T/cc.err" &&
	cc -O1 -fPIC -c -I"$cuda/include" -I"$top/src/compat/cxx" -o "$T/frp.o" "$src/fake_rangeprof.c" 2>>"$T/cc.err" &&
	cc -shared -o "$T/libfakerp.so" "$T/fc.o" "$T/frp.o" -lpthread 2>>"$T/cc.err" &&
	cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -I"$cuda/include" -o "$T/libcuda.so.1" \
		"$GT_TEST_SRCDIR/fakecuda/libcuda.c" -lpthread 2>>"$T/cc.err" &&
	cc -O1 -rdynamic -I"$cuda/include" -o "$T/client" "$src/rm_client.c" -ldl -lpthread 2>>"$T/cc.err"; then
	ok build
else
	notok build "$(cat "$T/cc.err")"
	exit 0
fi
# what the trace holds (tests/tap/trace_stat.c; the trace reader's codec and file opening, wherever they are)
# shellcheck disable=SC2046
cc -O1 -D_GNU_SOURCE -I"$top/include" -I"$top/src" -o "$T/stat" "$src/trace_stat.c" "$top/src/trace/trace_io.c" \
	$(ls "$top"/src/*/blockz.c "$top"/src/*/csvio.c 2>/dev/null) -lz 2>"$T/cc.err" && ok build-trace-stat ||
	notok build-trace-stat "$(cat "$T/cc.err")"

# run NAME SCENARIO ENV...: the client under the tap (at most 15 s: exit status 124 when it hangs); its
# folder, stand-in log, results and output under $T/NAME*
run() {
	local n=$1 sc=$2
	shift 2
	timeout -k 3 15 env LD_PRELOAD="$LIBGPUTAP" NVTX_INJECTION64_PATH="$LIBGPUTAP" GPUTAP_OUT="$T/$n" GPUTAP_CUPTI_LIB="$T/libfakerp.so" \
		GPUTAP_METRICS=smsp__inst_executed.sum,gpu__time_duration.sum GPUTAP_METRICS_CACHE=0 \
		RM_LIBCUDA="$T/libcuda.so.1" FAKE_RP_LOG="$T/$n.log" RM_RESULTS="$T/$n.json" "$@" \
		"$T/client" "$sc" >"$T/$n.out" 2>&1
	local rc=$?
	python3 - "$T/$n" >"$T/$n.rows" 2>>"$T/$n.out" <<'EOF'
import csv, glob, sys
# range_metrics.csv, one line per row: path|occurrence|metric|level=|kernels=|sum=|max=|mean=|min=|exact=yes/no
for f in glob.glob(sys.argv[1] + "/pid*/range_metrics.csv"):
    for r in csv.DictReader(open(f, newline="")):
        ex = r.get("exact", "?")
        ex = "yes" if ex == "yes" else "no" if ex.startswith("no: ") else ex
        print("|".join([r["path"], r["occurrence"], r["metric"], "mode=" + r["mode"], "level=" + r["level"],
                        "kernels=" + r["kernels"], "sum=" + r["sum"], "max=" + r["max"], "mean=" + r["mean"],
                        "min=" + r["min"], "exact=" + ex]))
EOF
	[ $rc -eq 0 ] || { echo "exit status $rc" >>"$T/$n.out"; echo "$n: exit status $rc" >>"$T/exits"; }
	return $rc
}
# row NAME PATH OCC METRIC FIELD...: the row exists and has every FIELD (e.g. kernels=5 sum=320 max=)
row() {
	local f="$T/$1.rows" line fld
	line=$(awk -F'|' -v p="$2" -v o="$3" -v m="$4" '$1 == p && $2 == o && $3 == m' "$f")
	shift 4
	[ -n "$line" ] || return 1
	for fld in "$@"; do
		case "|$line|" in *"|$fld|"*) ;; *) return 1 ;; esac
	done
}
# results NAME PYTHON-EXPRESSION: true when the expression holds on gputap_results_json()'s document `d`
# (r: its per-range results by path, m: its range metrics' occurrences by path)
results() {
	python3 - "$T/$1.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["path"]: x for x in d.get("ranges", [])}
m = {x["path"]: x for x in (d.get("metrics") or {}).get("ranges", [])}
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
EOF
}
trace_of() { ls "$T/$1"/pid*/trace.gtr "$T/$1"/pid*/trace.gtr.partial 2>/dev/null | head -1; }
why() { printf '%s\n' "$(cat "$T/$1.rows" "$T/$1.out" 2>/dev/null | head -c 3000)"; }
# the per-range results of a results document, in short
ranges() { python3 -c 'import json,sys; print([(x["path"], x["kernels"], x["gpu_ns"]) for x in json.load(open(sys.argv[1]))["ranges"]])' "$T/$1.json" 2>&1; }
I=smsp__inst_executed.sum
D=gpu__time_duration.sum

# 1. a range opened before CUDA starts (the tap's first call is NVTX's, or gputap_range_push) is
# kept: "outer" at level 0 and outer/inner at level 1, per kernel and per range
for c in "ek kernel nvtx" "er range nvtx" "eg kernel gputap"; do
	set -- $c
	run "$1" early GPUTAP_METRICS_MODE="$2" RM_API="$3"
	if [ "$2" = kernel ]; then
		row "$1" outer all $I mode=per-kernel level=0 kernels=5 sum=320 max=100 mean=64 min=10 exact=yes &&
			row "$1" outer/inner all $I level=1 kernels=3 sum=300 max=100 mean=100 min=100 &&
			row "$1" outer/inner 1 $D level=1 kernels=3 sum=3000 max=1000 min=1000 &&
			row "$1" outer all $D kernels=5 sum=3100 max=1000 min=50 &&
			! grep -q '^inner|' "$T/$1.rows"
	else
		row "$1" outer all $I mode=per-range level=0 kernels=5 sum=320 &&
			row "$1" outer 1 $I level=0 kernels=5 sum=320 max= mean= min= &&
			row "$1" outer/inner 1 $I level=1 kernels=3 sum=300 &&
			row "$1" outer/inner 1 $D level=1 kernels=3 sum=3000 &&
			! grep -q '^inner|' "$T/$1.rows"
	fi && ok "early-range-kept-$2-$3" || notok "early-range-kept-$2-$3" "$(why "$1")"
done
# no cap: a counter data image of one CUPTI range (decoded and restarted at every launch, or stretch)
# gives the same values
for m in kernel range; do
	run "ec$m" early GPUTAP_METRICS_MODE=$m GPUTAP_METRICS_CHUNK=1
	row "ec$m" outer all $I level=0 kernels=5 sum=320 && row "ec$m" outer/inner all $I level=1 kernels=3 sum=300 &&
		row "ec$m" outer/inner all $D sum=3000 && [ "$(grep -c '^decode' "$T/ec$m.log")" -ge 3 ] &&
		ok "early-chunk-1-$m" || notok "early-chunk-1-$m" "$(why "ec$m")"
done
# per kernel, each launch's row names its range
k=$(cat "$T"/ek/pid*/kernel_metrics.csv 2>/dev/null)
[ "$(printf '%s\n' "$k" | grep -c ',k1,outer/inner,')" -eq 3 ] && [ "$(printf '%s\n' "$k" | grep -c ',k2,outer,')" -eq 2 ] &&
	ok early-kernel-rows || notok early-kernel-rows "$k"
results eg 'r["outer"]["kernels"] == 5 and r["outer/inner"]["kernels"] == 3 and r["outer"]["gpu_ns"] == 3100' &&
	ok early-results-json || notok early-results-json "$(head -c 1500 "$T/eg.json")"

# 2. one attribution rule: the main thread in step/backward launches k0 (5 inst); a thread with no range
# launches kb 4 x 1000 inst: they count in step/backward and step; a thread in its own range "worker"
# keeps its kc 2 x 7; while it is in "worker2", the range-less thread's kd 2 x 50 count in
# step/backward and in worker2, once each; kz after step is in (none)
run ak autograd GPUTAP_METRICS_MODE=kernel RM_API=gputap
row ak step/backward all $I level=1 kernels=7 sum=4105 max=1000 min=5 &&
	row ak step all $I level=0 kernels=7 sum=4105 max=1000 min=5 &&
	row ak step/backward all $D kernels=7 sum=445 &&
	row ak worker all $I kernels=2 sum=14 max=7 min=7 &&
	row ak worker2 all $I kernels=2 sum=100 &&
	row ak '(none)' all $I kernels=1 sum=1 &&
	ok autograd-per-kernel || notok autograd-per-kernel "$(why ak)"
# per range: the same kernel counts; the profiled thread's stretch in backward measures everything the
# GPU ran meanwhile (the worker's kernels included); ranges of other threads have no values, never 0
run ar autograd GPUTAP_METRICS_MODE=range RM_API=gputap
row ar step/backward all $I level=1 kernels=7 sum=4119 &&
	row ar step all $I level=0 kernels=7 sum=4119 &&
	row ar worker all $I kernels=2 sum= max= mean= min= &&
	row ar worker2 all $I kernels=2 sum= &&
	row ar '(none)' all $I kernels=1 sum=1 &&
	ok autograd-per-range || notok autograd-per-range "$(why ar)"
# gputap_results_json: the range metrics' kernel counts and the per-range results' follow the same rule
for n in ak ar; do
	results $n 'm["step"]["kernels"] == 7 and m["step/backward"]["kernels"] == 7 and m["worker"]["kernels"] == 2 and
m["worker2"]["kernels"] == 2 and m["(none)"]["kernels"] == 1' &&
		ok "autograd-results-metrics-kernels-$n" || notok "autograd-results-metrics-kernels-$n" "$(head -c 1500 "$T/$n.json")"
	# k0 and kb (one other thread had a range open) in step/backward and step; kc in worker
	results $n 'r["step/backward"]["kernels"] - r["worker2"]["kernels"] == 5 and r["step"]["kernels"] ==
r["step/backward"]["kernels"] and r["worker"]["kernels"] == 2' &&
		ok "autograd-results-range-kernels-$n" || notok "autograd-results-range-kernels-$n" "ranges: $(ranges $n)"
	# kd (two other threads had ranges open): in step/backward, step and worker2
	results $n 'r["step"]["kernels"] == 7 and r["step/backward"]["kernels"] == 7 and r["worker2"]["kernels"] == 2' &&
		ok "autograd-results-range-kernels-two-threads-$n" ||
		notok "autograd-results-range-kernels-two-threads-$n" "ranges: $(ranges $n)"
done
# per kernel each kernel's time is its gpu__time_duration.sum (k0 5 + kb 4 x 100 ns; kd 2 x 20 ns)
results ak 'r["worker"]["gpu_ns"] == 6 and r["worker"]["timed_kernels"] == 2 and
r["step/backward"]["gpu_ns"] - (r["worker2"]["gpu_ns"] or 0) == 405' &&
	ok autograd-results-gpu-time-per-kernel || notok autograd-results-gpu-time-per-kernel "ranges: $(ranges ak)"
results ak 'r["step/backward"]["gpu_ns"] == 445 and r["step/backward"]["timed_kernels"] == 7 and r["worker2"]["gpu_ns"] == 40' &&
	ok autograd-results-gpu-time-per-kernel-two-threads ||
	notok autograd-results-gpu-time-per-kernel-two-threads "ranges: $(ranges ak)"

# 3. nesting on two threads at the same time, twice: A step/a1 (ka 2 x 1 inst) then step (ka 1 x 2);
# B b/b1/b2 (kb 3 x 10); the main thread's first launch (k0, 1 inst) outside every range
run tk threads GPUTAP_METRICS_MODE=kernel
row tk step all $I level=0 kernels=6 sum=8 max=2 min=1 &&
	row tk step 1 $I kernels=3 sum=4 max=2 min=1 &&
	row tk step 2 $I kernels=3 sum=4 &&
	row tk step/a1 all $I level=1 kernels=4 sum=4 max=1 mean=1 min=1 &&
	row tk b all $I level=0 kernels=6 sum=60 &&
	row tk b/b1 2 $I level=1 kernels=3 sum=30 &&
	row tk b/b1/b2 all $I level=2 kernels=6 sum=60 max=10 mean=10 min=10 &&
	row tk '(none)' all $I kernels=1 sum=1 &&
	ok threads-nesting-per-kernel || notok threads-nesting-per-kernel "$(why tk)"
k=$(cat "$T"/tk/pid*/kernel_metrics.csv 2>/dev/null)
[ "$(printf '%s\n' "$k" | grep -c ',ka,step/a1,')" -eq 4 ] && [ "$(printf '%s\n' "$k" | grep -c ',ka,step,')" -eq 2 ] &&
	[ "$(printf '%s\n' "$k" | grep -c ',kb,b/b1/b2,')" -eq 6 ] && ok threads-kernel-rows || notok threads-kernel-rows "$k"
# per range the main thread (the first to launch) is profiled: its one stretch, outside every range,
# holds every value; the other threads' ranges get their kernel counts and no values
run tr threads GPUTAP_METRICS_MODE=range
row tr step all $I kernels=6 sum= &&
	row tr step/a1 1 $I kernels=2 sum= &&
	row tr b/b1/b2 all $I level=2 kernels=6 sum= &&
	row tr '(none)' all $I kernels=1 sum=69 &&
	ok threads-per-range || notok threads-per-range "$(why tr)"

# 4. kernel records: auto picks per range for this list and stops kernel records while counters are
# measured (exact); per kernel too; per range asked for with the kernel trace kept
# (GPUTAP_METRICS_KERNEL_TRACE=1, as gputap run sets) keeps them and marks every value not exact
kinds() { grep -E '^(enable|disable) 10$' "$T/$1.log" 2>/dev/null | tr '\n' ' '; }
# kernel records: "given N" (what the stand-in handed over), "trace N" (what the trace holds)
krecs() {
	local st n
	st=$("$T/stat" "$(trace_of "$1")" 2>/dev/null) || st="type 3 ?" # (no trace, or no trace_stat: never 0)
	n=$(printf '%s\n' "$st" | sed -n 's/^type 3 //p')
	echo "given $(awk '$1 == "records" { n += $2 } END { print n + 0 }' "$T/$1.log" 2>/dev/null) trace ${n:-0}"
}
for c in "pa auto" "pk kernel"; do
	set -- $c
	run "$1" plain GPUTAP_METRICS_MODE="$2" RM_API=gputap
	m=$([ "$2" = auto ] && echo per-range || echo per-kernel)
	[ "$(kinds "$1")" = "enable 10 disable 10 " ] && [ "$(krecs "$1")" = "given 0 trace 0" ] &&
		row "$1" r all $I mode=$m kernels=5 sum=500 exact=yes && ! grep -q 'exact=no' "$T/$1.rows" &&
		grep -q '"exact":true' "$T"/$1/pid*/range_metrics.json && ! grep -q 'not exact' "$T/$1.out" &&
		ok "records-off-exact-$2" ||
		notok "records-off-exact-$2" "kernel activity: $(kinds "$1"); kernel records: $(krecs "$1")" "$(why "$1")"
done
run pr plain GPUTAP_METRICS_MODE=range GPUTAP_METRICS_KERNEL_TRACE=1 RM_API=gputap
[ "$(kinds pr)" = "enable 10 " ] && [ "$(krecs pr)" = "given 5 trace 5" ] && row pr r all $I mode=per-range kernels=5 sum=500 exact=no &&
	! grep -q 'exact=yes' "$T/pr.rows" && grep -q '"exact":false' "$T"/pr/pid*/range_metrics.json &&
	[ "$(grep -c 'values are not exact' "$T/pr.out")" -eq 1 ] &&
	ok records-kept-not-exact || notok records-kept-not-exact "kernel activity: $(kinds pr); kernel records: $(krecs pr)" "$(why pr)"
results pr 'd["metrics"]["exact"] is False and d["metrics"]["inexact"]' &&
	ok records-kept-results-not-exact || notok records-kept-results-not-exact "$(head -c 1500 "$T/pr.json")"
# NCCL's own NVTX ranges (domain "NCCL") are not ranges: its kernels count in the program's range around them
for m in kernel range; do
	run "nc$m" nccl GPUTAP_METRICS_MODE=$m
	row "nc$m" step all $I kernels=3 sum=210 && ! grep -q ncclAllReduce "$T/nc$m.rows" &&
		ok "nccl-domain-not-a-range-$m" || notok "nccl-domain-not-a-range-$m" "$(cat "$T/nc$m.rows")" "$(tail -5 "$T/nc$m.out")"
done

# no kernel trace: per range is exact, and CUPTI's kernel activity is never touched
run pn plain GPUTAP_METRICS_MODE=range GPUTAP_TRACE=api,nvtx RM_API=gputap
[ -z "$(kinds pn)" ] && row pn r all $I mode=per-range kernels=5 sum=500 exact=yes &&
	ok no-kernel-trace-exact || notok no-kernel-trace-exact "kernel activity: $(kinds pn)" "$(why pn)"

# 5. gputap_results_json's kernel counts per range equal the launches whichever way they are known:
# from the launches (per range, records off), the counters (per kernel) or the kernel records
results pa 'r["r"]["kernels"] == 5 and r["r"]["timed_kernels"] == 0 and r["r"]["gpu_ns"] is None' &&
	ok results-kernels-per-range || notok results-kernels-per-range "$(head -c 1500 "$T/pa.json")"
results pk 'r["r"]["kernels"] == 5 and r["r"]["timed_kernels"] == 5 and r["r"]["gpu_ns"] == 5000' &&
	ok results-kernels-per-kernel || notok results-kernels-per-kernel "$(head -c 1500 "$T/pk.json")"
results pr 'r["r"]["kernels"] == 5 and r["r"]["timed_kernels"] == 5 and r["r"]["gpu_ns"] == 5000' &&
	ok results-kernels-records || notok results-kernels-records "$(head -c 1500 "$T/pr.json")"
results pn 'r["r"]["kernels"] == 5 and m["r"]["kernels"] == 5' &&
	ok results-kernels-no-kernel-trace || notok results-kernels-no-kernel-trace "$(head -c 1500 "$T/pn.json")"
# the results asked for inside a range: what was measured so far is decoded, profiling starts again and
# the range's later work still counts in it
for m in kernel range; do
	run "mid$m" plain GPUTAP_METRICS_MODE=$m RM_MID=1 RM_API=gputap
	row "mid$m" r all $I kernels=5 sum=500 && row "mid$m" r 1 $D kernels=5 sum=5000 &&
		[ "$(grep -c '^decode' "$T/mid$m.log")" -ge 2 ] && results "mid$m" 'r["r"]["kernels"] == 5 and m["r"]["kernels"] == 5' &&
		ok "results-inside-range-$m" || notok "results-inside-range-$m" "$(why "mid$m")"
done

# 6. CUDA graphs: per kernel a graph launch of 3 kernels (100 inst, 20 ns each) between two launches of k
# (10 inst, 10 ns) is one kernel_metrics.csv row with its nodes' sums, and the range counts its 3 kernels,
# in range_metrics.csv and in gputap_results_json alike; per range a graph launch counts as one launch
run gk graph GPUTAP_METRICS_MODE=kernel RM_API=gputap
k=$(cat "$T"/gk/pid*/kernel_metrics.csv 2>/dev/null)
row gk g all $I kernels=5 sum=320 max=300 min=10 && row gk g all $D kernels=5 sum=80 &&
	printf '%s\n' "$k" | grep -q '^2,"(CUDA graph, 3 kernels)",g,.*,300,60$' &&
	ok graph-per-kernel || notok graph-per-kernel "$k" "$(why gk)"
results gk 'm["g"]["kernels"] == 5 and r["g"]["gpu_ns"] == 80' && ok graph-results-metrics ||
	notok graph-results-metrics "ranges: $(ranges gk)" "$(head -c 1500 "$T/gk.json")"
results gk 'r["g"]["kernels"] == 5' && ok graph-results-range-kernels-per-kernel ||
	notok graph-results-range-kernels-per-kernel "ranges: $(ranges gk)"
run gr graph GPUTAP_METRICS_MODE=range RM_API=gputap
row gr g all $I kernels=3 sum=320 && row gr g all $D sum=80 && ok graph-per-range || notok graph-per-range "$(why gr)"

# 7. the context destroyed and made again inside a range: what was measured before is decoded, the new
# context is profiled from its first launch, the range gets both
for m in kernel auto; do
	run "d$m" destroy GPUTAP_METRICS_MODE=$m RM_API=gputap
	row "d$m" r all $I kernels=5 sum=320 && row "d$m" r all $D sum=3100 && [ "$(grep -c '^config' "$T/d$m.log")" -ge 2 ] &&
		results "d$m" 'r["r"]["kernels"] == 5 and m["r"]["kernels"] == 5' &&
		ok "context-destroyed-$m" || notok "context-destroyed-$m" "$(why "d$m")"
done

# 8. counters restricted to administrators, found by CUPTI at the counter availability, at the range
# profiler's enable or at its start: one message naming the fix, range metrics off, the program and the
# recording go on and end normally (no hang, the trace complete)
for e in availability enable start; do
	for m in kernel range; do
		n="x$e$m"
		run "$n" plain GPUTAP_METRICS_MODE=$m FAKE_RP_EPERM=$e RM_API=gputap
		rc=$?
		[ $rc -eq 0 ] && [ "$(grep -c 'restricted to administrators' "$T/$n.out")" -eq 1 ] &&
			case "$(trace_of "$n")" in *.gtr) true ;; *) false ;; esac &&
			ok "restricted-counters-$e-$m" ||
			notok "restricted-counters-$e-$m" "exit status $rc (124: hung, killed after 15 s), trace $(trace_of "$n")" "$(why "$n")"
		# nothing says a launch ran on another device: there is one
		! grep -q 'other devices' "$T/$n.out" && ok "restricted-counters-no-device-warning-$e-$m" ||
			notok "restricted-counters-no-device-warning-$e-$m" "$(cat "$T/$n.out")"
	done
done

# 9. the mode auto picks: per kernel with kernel replay for a list of two passes, per kernel (one pass, no
# replay) for a metric that does not add up, gpu__time_duration.sum added to a per-kernel list for the
# kernels' times; per range refused for two passes and an unknown metric refused, each with one message,
# the program going on
run m2 early FAKE_RP_PASSES=2
row m2 outer/inner all $I mode=per-kernel kernels=3 sum=300 && [ "$(grep -c '^config auto kernel$' "$T/m2.log")" -ge 1 ] &&
	! grep -q '^config auto user' "$T/m2.log" && ok auto-two-passes-kernel-replay || notok auto-two-passes-kernel-replay "$(why m2)"
P=sm__throughput.avg.pct_of_peak_sustained_elapsed
run mp early GPUTAP_METRICS=$P,$I
row mp outer/inner all $P mode=per-kernel kernels=3 max=50 mean=50 min=50 && row mp outer all $D kernels=5 sum=3100 &&
	[ "$(grep -c '^config auto user$' "$T/mp.log")" -ge 1 ] && ok auto-ratio-per-kernel || notok auto-ratio-per-kernel "$(why mp)"
run mr early GPUTAP_METRICS_MODE=range FAKE_RP_PASSES=2
[ "$(grep -c 'per-range mode measures in one pass and this list needs 2' "$T/mr.out")" -eq 1 ] && [ ! -s "$T/mr.rows" ] &&
	ok range-two-passes-refused || notok range-two-passes-refused "$(why mr)"
run mu early GPUTAP_METRICS=smsp__no_such_metric.sum
[ "$(grep -c "unknown metric 'smsp__no_such_metric.sum' for this GPU" "$T/mu.out")" -eq 1 ] && [ ! -s "$T/mu.rows" ] &&
	ok unknown-metric-refused || notok unknown-metric-refused "$(why mu)"

# every run of the program ended normally (the library is a guest: no crash, no change of exit status)
[ ! -s "$T/exits" ] && ok client-exit-status || notok client-exit-status "$(cat "$T/exits")"
# the stand-in saw no misuse of the Range Profiler API (push without start, stop with a range pushed, ...)
bad=$(cat "$T"/*.log 2>/dev/null | grep '^error' | sort -u)
[ -z "$bad" ] && ok range-profiler-api-use || notok range-profiler-api-use "$bad"
finish
