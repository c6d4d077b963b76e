#!/usr/bin/env bash
# libgputap.so loaded into programs that never touch CUDA: exit status and
# output unchanged, files written, one warning for an unwritable directory,
# exact record-loss accounting with a tiny buffer (through the public API).
. "$(dirname "$0")/lib.sh"
tap() { env LD_PRELOAD="$LIBGPUTAP" "$@"; }

expect_status true-unchanged 0 tap GPUTAP_OUT="$T/o1" /bin/true
expect_status exit7-unchanged 7 tap GPUTAP_OUT="$T/o2" sh -c 'echo hello; exit 7'
contains exit7-output "$T/.out" "hello"
if grep -q gputap "$T/.out"; then notok exit7-quiet "$(cat "$T/.out")"; else ok exit7-quiet; fi
expect_status off-unchanged 3 tap sh -c 'exit 3'
[ ! -e "$T/o1" ] || ls "$T/o1"/pid* >/dev/null 2>&1 && ok true-dir || notok true-dir
d=$(ls -d "$T"/o1/pid* 2>/dev/null | head -1)
[ -n "$d" ] && [ -f "$d/trace.gtr" ] && [ -f "$d/metrics.log" ] && ok files-written || notok files-written "$(ls -R "$T/o1")"
[ -n "$d" ] && head -1 "$d/metrics.log" | grep -qx 'name:mem_used,count:0' && ok metrics-memline || notok metrics-memline
[ -n "$d" ] && sed -n 2p "$d/metrics.log" | grep -qx 'name:cuInit,count:0,burst:0' && ok metrics-name-order || notok metrics-name-order

# unwritable output directory: exactly one warning, program unaffected
tap GPUTAP_OUT=/proc/gputap-no/such sh -c 'echo fine' >"$T/u.out" 2>"$T/u.err"
rc=$?
[ $rc -eq 0 ] && grep -qx fine "$T/u.out" && ok unwritable-runs || notok unwritable-runs "rc $rc"
n=$(grep -c '^gputap: warning' "$T/u.err")
[ "$n" -eq 1 ] && ok unwritable-one-warning || notok unwritable-one-warning "$n warnings" "$(cat "$T/u.err")"

# a bad setting: one message naming the accepted values, program unaffected
expect_status bad-trace-runs 0 tap GPUTAP_OUT="$T/o3" GPUTAP_TRACE=bogus /bin/true
contains bad-trace-message "$T/.out" "accepted: a comma list of api,kernel"

# RANK names the directory
tap GPUTAP_OUT="$T/o4" RANK=3 /bin/true
[ -d "$T/o4/rank3" ] && ok rank-dir || notok rank-dir "$(ls "$T/o4")"
# an exec'd child inheriting RANK gets its own directory
tap GPUTAP_OUT="$T/o5" RANK=1 sh -c '/bin/true; exit 0'
n=$(ls "$T/o5" | wc -l)
[ -d "$T/o5/rank1" ] && [ "$n" -eq 2 ] && ok exec-child-own-dir || notok exec-child-own-dir "$(ls "$T/o5")"

# PFLOG alone: the interposer's files directly in the folder
tap PFLOG="$T/pf" /bin/true
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
