#!/usr/bin/env bash
# libgputap.so loaded into programs that never touch CUDA: exit status and
# output unchanged, no folder and no file (outputs come with the first CUDA
# call: a stand-in libcuda shows that such a program gets them), one warning
# for an unwritable directory, process names by rank, exact record-loss
# accounting with a tiny buffer (through the public API).
. "$(dirname "$0")/lib.sh"
tap() { env LD_PRELOAD="$LIBGPUTAP" "$@"; }

expect_status true-unchanged 0 tap GPUTAP_OUT="$T/o1" /bin/true
expect_status exit7-unchanged 7 tap GPUTAP_OUT="$T/o2" sh -c 'echo hello; exit 7'
contains exit7-output "$T/.out" "hello"
if grep -q gputap "$T/.out"; then notok exit7-quiet "$(cat "$T/.out")"; else ok exit7-quiet; fi
expect_status off-unchanged 3 tap sh -c 'exit 3'
# a process that never touches CUDA leaves no folder, no file
empty() { [ ! -e "$1" ] || [ -z "$(ls -A "$1")" ]; }
empty "$T/o1" && ok true-no-folder || notok true-no-folder "$(ls -R "$T/o1")"
empty "$T/o2" && ok sh-no-folder || notok sh-no-folder "$(ls -R "$T/o2")"
tap GPUTAP_OUT="$T/o0" bash -c 'true; /bin/true'
empty "$T/o0" && ok bash-one-liner-no-folder || notok bash-one-liner-no-folder "$(ls -R "$T/o0")"
tap PFLOG="$T/pf0" /bin/true
empty "$T/pf0" && ok pflog-no-cuda-no-files || notok pflog-no-cuda-no-files "$(ls -R "$T/pf0")"
tap GPUTAP_OUT=/proc/gputap-no/such sh -c 'echo fine' >"$T/u0.out" 2>"$T/u0.err"
[ ! -s "$T/u0.err" ] && ok no-cuda-no-warning || notok no-cuda-no-warning "$(cat "$T/u0.err")"

# a process that touches CUDA (a stand-in libcuda, tests/fakecuda) gets its folder and files
if cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -I"${CUDA_HOME:-/usr/local/cuda}/include" \
	-o "$T/libcuda.so.1" "$GT_TEST_SRCDIR/fakecuda/libcuda.c" -lpthread 2>"$T/cc.err" &&
	cc -O1 -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$T/cudaprog" "$GT_TEST_SRCDIR/fakecuda/threads_prog.c" \
		-ldl -lpthread 2>>"$T/cc.err"; then
	ok build-fake-cuda
else
	notok build-fake-cuda "$(cat "$T/cc.err")"
fi
cudatap() { env LD_LIBRARY_PATH="$T${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$LIBGPUTAP" "$@"; }
cudatap GPUTAP_OUT="$T/o1c" "$T/cudaprog" 1 1 1 >/dev/null
d=$(ls -d "$T"/o1c/pid* 2>/dev/null | head -1)
[ -n "$d" ] && [ "$(ls "$T/o1c" | wc -l)" -eq 1 ] && ok cuda-folder || notok cuda-folder "$(ls -R "$T/o1c")"
[ -n "$d" ] && [ -f "$d/trace.gtr" ] && [ -f "$d/metrics.log" ] && ok files-written || notok files-written "$(ls -R "$T/o1c")"
[ -n "$d" ] && head -1 "$d/metrics.log" | grep -qx 'name:mem_used,count:0' && ok metrics-memline || notok metrics-memline
[ -n "$d" ] && sed -n 2p "$d/metrics.log" | grep -qx 'name:cuInit,count:0,burst:0' && ok metrics-name-order || notok metrics-name-order
# the CUDA program run from a shell one-liner: one folder, the program's
cudatap GPUTAP_OUT="$T/o1s" bash -c "true; '$T/cudaprog' 1 1 1 >/dev/null; /bin/true"
n=$(ls "$T/o1s" 2>/dev/null | wc -l)
[ "$n" -eq 1 ] && [ -f "$T/o1s/$(ls "$T/o1s")/trace.gtr" ] && ok one-liner-one-folder || notok one-liner-one-folder "$(ls -R "$T/o1s")"

# the same through gputap run: no <proc> folder and an empty process list for a shell one-liner,
# one folder (listed in run.json) for a CUDA program started from one
GPUTAP_LIB="$LIBGPUTAP" "$GPUTAP" run -o "$T/run0" -- bash -c 'true; /bin/true' >"$T/run0.out" 2>&1
rc=$?
n=$(find "$T/run0" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ $rc -eq 0 ] && [ "$n" -eq 0 ] && python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['processes'] == []" \
	"$T/run0/run.json" 2>>"$T/run0.out" && ok run-one-liner-no-folder || notok run-one-liner-no-folder "exit $rc, $n folders" "$(cat "$T/run0.out")"
env LD_LIBRARY_PATH="$T${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GPUTAP_LIB="$LIBGPUTAP" "$GPUTAP" run -o "$T/run1" -- \
	bash -c "true; '$T/cudaprog' 1 1 1; /bin/true" >"$T/run1.out" 2>&1
rc=$?
n=$(find "$T/run1" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ $rc -eq 0 ] && [ "$n" -eq 1 ] && python3 -c "import json,sys; assert len(json.load(open(sys.argv[1]))['processes']) == 1" \
	"$T/run1/run.json" 2>>"$T/run1.out" && ok run-cuda-one-folder || notok run-cuda-one-folder "exit $rc, $n folders" "$(cat "$T/run1.out")"
# --trace-json: the timeline as trace.json (default, above), gzip-compressed, or not at all
p1=$(find "$T/run1" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$p1" ] && [ -f "$p1/trace.json" ] && [ ! -e "$p1/trace.json.gz" ] && ok trace-json-default || notok trace-json-default "$(ls "$p1")"
env LD_LIBRARY_PATH="$T${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GPUTAP_LIB="$LIBGPUTAP" "$GPUTAP" run -o "$T/rungz" \
	--trace-json gz -- "$T/cudaprog" 1 1 1 >"$T/rungz.out" 2>&1
p2=$(find "$T/rungz" -mindepth 1 -maxdepth 1 -type d | head -n 1)
if [ -n "$p2" ] && [ ! -e "$p2/trace.json" ] && ! ls "$p2"/*.partial >/dev/null 2>&1 &&
	python3 -c 'import gzip,json,sys; d=json.load(gzip.open(sys.argv[1])); assert d["traceEvents"] and "ts_zero_epoch_ns" in d["otherData"]' \
		"$p2/trace.json.gz" 2>>"$T/rungz.out"; then
	ok trace-json-gz
else
	notok trace-json-gz "$(ls "$p2")" "$(cat "$T/rungz.out")"
fi
contains trace-json-gz-in-summary "$T/rungz.out" "Open trace.json.gz in"
# the same trace converted to plain JSON gives what the .gz holds
"$GPUTAP" convert "$p2/trace.gtr" -o "$T/rungz-plain" --format json >/dev/null 2>&1
if gzip -dc "$p2/trace.json.gz" | cmp -s - "$T/rungz-plain/trace.json"; then ok trace-json-gz-same; else notok trace-json-gz-same; fi
env LD_LIBRARY_PATH="$T${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" GPUTAP_LIB="$LIBGPUTAP" "$GPUTAP" run -o "$T/runnone" \
	--trace-json none -- "$T/cudaprog" 1 1 1 >"$T/runnone.out" 2>&1
p3=$(find "$T/runnone" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$p3" ] && [ -f "$p3/trace.gtr" ] && [ -f "$p3/trace_cuda_gpu_kern_sum.csv" ] && [ ! -e "$p3/trace.json" ] &&
	[ ! -e "$p3/trace.json.gz" ] && ok trace-json-none || notok trace-json-none "$(ls "$p3")"
expect_status trace-json-bad 2 "$GPUTAP" run -o "$T/runbad" --trace-json xml -- true
contains trace-json-bad-message "$T/.out" "--trace-json 'xml': expected json, gz or none"

# unwritable output directory: exactly one warning, program unaffected
cudatap GPUTAP_OUT=/proc/gputap-no/such sh -c "'$T/cudaprog' 1 1 1 && echo fine" >"$T/u.out" 2>"$T/u.err"
rc=$?
[ $rc -eq 0 ] && grep -qx fine "$T/u.out" && ok unwritable-runs || notok unwritable-runs "rc $rc"
n=$(grep -c '^gputap: warning' "$T/u.err")
[ "$n" -eq 1 ] && ok unwritable-one-warning || notok unwritable-one-warning "$n warnings" "$(cat "$T/u.err")"

# a bad setting: one message naming the accepted values, program unaffected
expect_status bad-trace-runs 0 tap GPUTAP_OUT="$T/o3" GPUTAP_TRACE=bogus /bin/true
contains bad-trace-message "$T/.out" "accepted: a comma list of api,kernel"

# RANK names the directory
cudatap GPUTAP_OUT="$T/o4" RANK=3 "$T/cudaprog" 1 1 1 >/dev/null
[ -d "$T/o4/rank3" ] && ok rank-dir || notok rank-dir "$(ls "$T/o4")"
# a wrapper with the rank that never touches CUDA leaves the name to the CUDA program it runs
cudatap GPUTAP_OUT="$T/o5" RANK=1 sh -c "'$T/cudaprog' 1 1 1 >/dev/null; exit 0"
[ "$(ls "$T/o5")" = rank1 ] && ok wrapper-leaves-rank-name || notok wrapper-leaves-rank-name "$(ls "$T/o5")"
# two CUDA processes of one rank: the second adds its pid
cudatap GPUTAP_OUT="$T/o5b" RANK=1 sh -c "'$T/cudaprog' 1 1 1 >/dev/null; '$T/cudaprog' 1 1 1 >/dev/null"
n=$(ls "$T/o5b" | wc -l)
[ -d "$T/o5b/rank1" ] && [ "$n" -eq 2 ] && ls -d "$T"/o5b/rank1-pid* >/dev/null 2>&1 && ok second-of-rank-own-dir ||
	notok second-of-rank-own-dir "$(ls "$T/o5b")"

# PFLOG alone: the interposer's files directly in the folder
cudatap PFLOG="$T/pf" "$T/cudaprog" 1 1 1 >/dev/null
[ -f "$T/pf/metrics.log" ] && [ -f "$T/pf/timeline.log" ] && ok pflog-files || notok pflog-files "$(ls -R "$T/pf" 2>&1)"

# public API and exact loss accounting, no GPU needed
if command -v cc >/dev/null; then
	cat >"$T/marks.c" <<'EOC'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	void (*mark)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "gputap_mark");
	int (*push)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "gputap_range_push");
	int (*pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gputap_range_pop");
	if (!mark || !push || !pop)
		return 9;
	int n = atoi(argv[1]);
	if (push("outer") != 0 || push("inner") != 1)
		return 8;
	for (int i = 0; i < n; i++)
		mark("m");
	if (pop() != 1 || pop() != 0 || pop() != -1)
		return 7;
	printf("%d\n", n + 2);
	return 0;
}
EOC
	if cc -o "$T/marks" "$T/marks.c" -ldl 2>"$T/cc.err"; then
		expect_status api-works 0 tap GPUTAP_OUT="$T/o6" GPUTAP_TRACE=nvtx "$T/marks" 10
		f=$(ls "$T"/o6/pid*/trace.gtr 2>/dev/null | head -1)
		if [ -n "$f" ] && command -v python3 >/dev/null; then
			s=$(python3 tests/gpu/gtr.py "$f")
			echo "$s" | grep -q '"range": 12' && ok api-records || notok api-records "$s"
		else
			notok api-records "no trace"
		fi
		expect_status lost-runs 0 tap GPUTAP_OUT="$T/o7" GPUTAP_TRACE=nvtx GPUTAP_BUFFER_MB=1 "$T/marks" 300000
		f=$(ls "$T"/o7/pid*/trace.gtr 2>/dev/null | head -1)
		if [ -n "$f" ]; then
			python3 - "$f" <<'EOP' >"$T/lost.txt" 2>&1 && ok lost-exact || notok lost-exact "$(cat "$T/lost.txt")"
import sys
sys.path.insert(0, "tests/gpu")
import gtr
t = gtr.read(sys.argv[1])
h = t["header"]
n = sum(1 for r in t["records"] if r["type"] == "range")
d = sum(r["count"] for r in t["records"] if r["type"] == "dropped")
print(n, h["lost_records"], d)
assert h["lost_records"] > 0 and n + h["lost_records"] == 300002 and d == h["lost_records"] and h["flags"] & 2
EOP
		else
			notok lost-exact "no trace"
		fi
	else
		notok compile-marks "$(cat "$T/cc.err")"
	fi
fi
finish
