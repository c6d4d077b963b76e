#!/usr/bin/env bash
# PC sampling without a GPU: the stand-in CUPTI's PC Sampling API (tests/tap/fake_cupti.c) driven
# by tests/tap/cupti_client.c, and a stand-in nvdisasm (tests/tap/fake_nvdisasm.sh).  The tap's
# decoding and sums (samples, not-issued part, dropped samples, PCs handed over in several calls),
# source lines, the module kept, nothing enabled when sampling is off, a refusal, a context
# destroyed early; then `gputap run --pc-sampling`: SASS, pc_kernels.csv, pc_sampling.json, the
# summary table and the report section.
. "$(dirname "$0")/lib.sh"
src="$GT_TEST_SRCDIR/tap"
cuda=${CUDA_HOME:-/usr/local/cuda}
if ! command -v cc >/dev/null || [ ! -f "$cuda/include/cupti_pcsampling.h" ]; then
	notok build "needs cc and $cuda/include/cupti_pcsampling.h"
	exit 0
fi
if cc -O1 -shared -fPIC -I"$cuda/include" -o "$T/libfakecupti.so" "$src/fake_cupti.c" -lpthread 2>"$T/cc.err" &&
	cc -O1 -rdynamic -I"$cuda/include" -o "$T/client" "$src/cupti_client.c" -ldl 2>>"$T/cc.err"; then
	ok build
else
	notok build "$(cat "$T/cc.err")"
	exit 0
fi
tap() { # DIR ARGS...: the client under the tap with the stand-in CUPTI
	local d=$1
	shift
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$d" GPUTAP_CUPTI_LIB="$T/libfakecupti.so" "$@"
}
col_sum() { awk -F, -v c="$2" 'NR > 1 { s += $c } END { print s + 0 }' "$1"; }
total() { sed -n "s/^$2,//p" "$1"; }

# 3 rounds of samples, at most 3 PCs a GetData, 7 dropped a round: every sample decoded once
tap "$T/a" env GPUTAP_PCSAMP=on FAKE_CUPTI_LOG="$T/a.log" FAKE_CUPTI_PCS_MAXPCS=3 FAKE_CUPTI_PCS_DROP=7 \
	"$T/client" pcsamp 3 >"$T/a.out" 2>&1
rc=$?
csv=$(ls "$T"/a/pid*/pc_samples.csv 2>/dev/null)
tot=$(ls "$T"/a/pid*/pc_sampling_totals.csv 2>/dev/null)
if [ $rc -eq 0 ] && [ -n "$csv" ] && [ -n "$tot" ]; then ok tap-files; else notok tap-files "exit $rc" "$(cat "$T/a.out")"; fi
# 9 PCs; per round 44 samples of _Z6kernelv (16 of them not issued) and 15 of _Z5otherv... 49 in all
[ "$(($(wc -l <"$csv") - 1))" = 9 ] && [ "$(col_sum "$csv" 5)" = 147 ] && [ "$(col_sum "$csv" 6)" = 48 ] &&
	ok tap-samples-summed || notok tap-samples-summed "$(cat "$csv")"
[ "$(total "$tot" samples)" = 147 ] && [ "$(total "$tot" dropped_samples)" = 21 ] &&
	[ "$(total "$tot" non_user_kernel_samples)" = 6 ] && [ "$(total "$tot" cupti_total_samples)" = 153 ] &&
	[ "$(total "$tot" lost_samples)" = 0 ] && ok tap-totals-dropped || notok tap-totals-dropped "$(cat "$tot")"
grep -q "21 samples dropped by the hardware" "$T/a.out" && ok tap-dropped-said || notok tap-dropped-said "$(cat "$T/a.out")"
# the writer drained while the program ran, in several calls a drain (3 PCs each)
n=$(grep -c '^pcs-getdata' "$T/a.log")
[ "$n" -ge 6 ] && [ "$(total "$tot" getdata_calls)" -ge 6 ] && ok tap-drained-in-calls || notok tap-drained-in-calls "$(cat "$T/a.log")"
# columns: the reasons by CUPTI's names, rows hottest first, source lines from the kept module
head -1 "$csv" | grep -q ',sass,smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued,' &&
	sed -n 2p "$csv" | grep -qx '_Z6kernelv,0,0x000000000000abcd,0x80,27,12,/src/k.cu,18,,24,12,0,3' &&
	grep -q '^_Z5otherv,1,0x000000000000abcd,0x40,15,0,,,,0,0,15,0$' "$csv" &&
	[ "$(total "$tot" pcs_with_line)" = 8 ] && [ "$(total "$tot" pcs_without_line)" = 1 ] &&
	ok tap-rows-and-lines || notok tap-rows-and-lines "$(cat "$csv" "$tot")"
c=$(ls "$T"/a/pid*/pcsamp/000000000000abcd.cubin 2>/dev/null | head -1)
[ -n "$c" ] && head -c 4 "$c" | grep -q ELF && grep -aq FAKECUBIN "$c" && ok tap-module-kept ||
	notok tap-module-kept "$(ls -R "$T/a")"
grep -qx 'resource-callback 1' "$T/a.log" && grep -qx 'resource-callback 6' "$T/a.log" && grep -qx 'pcs-config 17' "$T/a.log" &&
	ok tap-resource-callbacks || notok tap-resource-callbacks "$(cat "$T/a.log")"

# off (no GPUTAP_PCSAMP): no PC sampling call, no resource callback, no file
tap "$T/o" env FAKE_CUPTI_LOG="$T/o.log" "$T/client" pcsamp 2 >"$T/o.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ! grep -q 'pcs-\|resource-callback' "$T/o.log" && ! ls "$T"/o/pid*/pc_samples.csv >/dev/null 2>&1 &&
	ok off-untouched || notok off-untouched "exit $rc" "$(cat "$T/o.log" "$T/o.out")"

# a period: taken; a bad one: one warning naming it, the default used
tap "$T/p" env GPUTAP_PCSAMP=12 FAKE_CUPTI_LOG="$T/p.log" "$T/client" pcsamp 1 >/dev/null 2>&1
grep -qx 'pcs-config 12' "$T/p.log" && ok period-taken || notok period-taken "$(cat "$T/p.log")"
tap "$T/q" env GPUTAP_PCSAMP=3 FAKE_CUPTI_LOG="$T/q.log" "$T/client" pcsamp 1 >"$T/q.out" 2>&1
grep -q "GPUTAP_PCSAMP='3'" "$T/q.out" && grep -qx 'pcs-config 17' "$T/q.log" && ok period-bad-default ||
	notok period-bad-default "$(cat "$T/q.out" "$T/q.log")"

# CUPTI refuses: one warning, the program and its trace go on
tap "$T/r" env GPUTAP_PCSAMP=on FAKE_CUPTI_PCS_REFUSE=1 "$T/client" pcsamp 2 >"$T/r.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c 'cuptiPCSamplingEnable failed' "$T/r.out")" = 1 ] && ls "$T"/r/pid*/trace.gtr >/dev/null 2>&1 &&
	ok refused-warned || notok refused-warned "exit $rc" "$(cat "$T/r.out")"

# the context destroyed before the end: drained and disabled then, nothing lost
tap "$T/d" env GPUTAP_PCSAMP=on FAKE_CUPTI_LOG="$T/d.log" "$T/client" pcsamp-destroy 3 >"$T/d.out" 2>&1
rc=$?
[ $rc -eq 0 ] && [ "$(col_sum "$(ls "$T"/d/pid*/pc_samples.csv)" 5)" = 147 ] && [ "$(grep -c '^pcs-disable' "$T/d.log")" = 1 ] &&
	ok destroyed-context-drained || notok destroyed-context-drained "exit $rc" "$(cat "$T/d.log" "$T/d.out")"

# windows (gputap_pcsamp_start/stop) with GPUTAP_PCSAMP_WINDOW=1: enabled with start/stop control,
# sampling only in the even rounds' windows (2 of 4: 98 samples), drained at each window's end
tap "$T/w" env GPUTAP_PCSAMP=on GPUTAP_PCSAMP_WINDOW=1 FAKE_CUPTI_LOG="$T/w.log" "$T/client" pcsamp-window 4 >"$T/w.out" 2>&1
rc=$?
wtot=$(ls "$T"/w/pid*/pc_sampling_totals.csv 2>/dev/null)
[ $rc -eq 0 ] && [ -n "$wtot" ] && [ "$(total "$wtot" samples)" = 98 ] && [ "$(total "$wtot" windows)" = 2 ] &&
	[ "$(total "$wtot" window_mode)" = 1 ] && [ "$(total "$wtot" samples_before_windows)" = 0 ] &&
	[ "$(col_sum "$(ls "$T"/w/pid*/pc_samples.csv)" 5)" = 98 ] && ok window-samples-only-inside ||
	notok window-samples-only-inside "exit $rc" "$(cat "$T/w.out" "$wtot" 2>&1)"
[ "$(grep -c '^window start=1 stop=1$' "$T/w.out")" = 2 ] && grep -qx 'pcs-startstop 1' "$T/w.log" &&
	[ "$(grep -c '^pcs-enable' "$T/w.log")" = 1 ] && [ "$(grep -c '^pcs-start$' "$T/w.log")" = 2 ] &&
	[ "$(grep -c '^pcs-stop$' "$T/w.log")" = 2 ] &&
	[ "$(grep -A1 '^pcs-stop$' "$T/w.log" | grep -c '^pcs-getdata 9$')" = 2 ] && ok window-start-stop-calls ||
	notok window-start-stop-calls "$(cat "$T/w.out" "$T/w.log")"
# without GPUTAP_PCSAMP_WINDOW: whole-run sampling until the first window call, whose samples
# (round 1: 49) are dropped; the context disabled and enabled again with start/stop control
tap "$T/s" env GPUTAP_PCSAMP=on FAKE_CUPTI_LOG="$T/s.log" "$T/client" pcsamp-window 4 >"$T/s.out" 2>&1
rc=$?
stot=$(ls "$T"/s/pid*/pc_sampling_totals.csv 2>/dev/null)
[ $rc -eq 0 ] && [ -n "$stot" ] && [ "$(total "$stot" samples)" = 98 ] && [ "$(total "$stot" samples_before_windows)" = 49 ] &&
	[ "$(grep -c '^pcs-enable' "$T/s.log")" = 2 ] && [ "$(grep '^pcs-startstop' "$T/s.log" | tr '\n' ' ')" = "pcs-startstop 0 pcs-startstop 1 " ] &&
	[ "$(grep -c '^window start=1 stop=1$' "$T/s.out")" = 2 ] && ok window-switch-drops-before ||
	notok window-switch-drops-before "exit $rc" "$(cat "$T/s.out" "$T/s.log" "$stot" 2>&1)"
# a context made before the tap (CUPTI never reports it created): found at the first window call as
# the current and primary context, enabled there and sampled in the windows; no module kept
tap "$T/l" env GPUTAP_PCSAMP=on GPUTAP_PCSAMP_WINDOW=1 GPUTAP_CUDA_LIB="$T/libfakecupti.so" FAKE_CUDA_CTX=1 \
	FAKE_CUPTI_LOG="$T/l.log" "$T/client" pcsamp-late 4 >"$T/l.out" 2>&1
rc=$?
ltot=$(ls "$T"/l/pid*/pc_sampling_totals.csv 2>/dev/null)
[ $rc -eq 0 ] && [ -n "$ltot" ] && [ "$(total "$ltot" samples)" = 98 ] && [ "$(total "$ltot" contexts_found_at_window)" = 1 ] &&
	[ "$(total "$ltot" pcs_without_module)" = 9 ] && [ "$(total "$ltot" modules_without_cubin)" = 1 ] &&
	[ "$(grep -c '^pcs-enable' "$T/l.log")" = 1 ] && grep -qx cuda-retain "$T/l.log" &&
	grep -q 'PC sampling: 1 sampled modules have no cubin (loaded before gputap started' "$T/l.out" &&
	ok window-context-made-before ||
	notok window-context-made-before "exit $rc" "$(cat "$T/l.out" "$T/l.log" "$ltot" 2>&1)"
# CUPTI calling back on the window call's own thread (it holds the PC sampling lock): the callback
# returns at once instead of waiting for that lock forever
tap "$T/re" env GPUTAP_PCSAMP=on GPUTAP_PCSAMP_WINDOW=1 FAKE_CUPTI_PCS_REENTER=1 FAKE_CUPTI_LOG="$T/re.log" \
	timeout 20 "$T/client" pcsamp-window 2 >"$T/re.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -qx 'pcs-reentered' "$T/re.log" && grep -qx 'window start=1 stop=1' "$T/re.out" && ok window-callback-inside-no-deadlock ||
	notok window-callback-inside-no-deadlock "exit $rc (124: deadlocked)" "$(cat "$T/re.out" "$T/re.log")"
# PC sampling off: the calls say so (GPUTAP_EINVAL), nothing is enabled
tap "$T/n" env FAKE_CUPTI_LOG="$T/n.log" "$T/client" pcsamp-window 2 >"$T/n.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -qx 'window start=-4 stop=-4' "$T/n.out" && ! grep -q '^pcs-' "$T/n.log" && ok window-off-einval ||
	notok window-off-einval "exit $rc" "$(cat "$T/n.out" "$T/n.log")"

# the Python package: Profiler(pc_sampling=True) under the tap (CUPTI started as at cuInit), a round
# of samples per step; the
# window is steps 2-3 (2 rounds: 98 samples), the round before the Profiler (49) is dropped
cat >"$T/prof.py" <<'PY'
import ctypes, os, gputap
assert ctypes.CDLL(None).InitializeInjection() == 1  # as the driver calls it at cuInit
f = ctypes.CDLL(os.environ["GPUTAP_CUPTI_LIB"])
f.fake_cupti_pcs_context(0)
f.fake_cupti_pcs_module()
f.fake_cupti_pcs_samples()
with gputap.Profiler(schedule=gputap.schedule(wait=1, warmup=1, active=2, repeat=1), pc_sampling=True) as p:
    for i in range(6):
        f.fake_cupti_pcs_samples()
        p.step()
print("steps", p.step_num, "windows", p.windows)
PY
if command -v python3 >/dev/null; then
	tap "$T/py" env GPUTAP_PCSAMP=on FAKE_CUPTI_LOG="$T/py.log" PYTHONPATH="$GT_TEST_SRCDIR/../python" GPUTAP_NO_EXTENSION=1 \
		python3 "$T/prof.py" >"$T/py.out" 2>&1
	rc=$?
	ptot=$(ls "$T"/py/pid*/pc_sampling_totals.csv 2>/dev/null)
	[ $rc -eq 0 ] && [ -n "$ptot" ] && grep -qx 'steps 6 windows 1' "$T/py.out" && [ "$(total "$ptot" samples)" = 98 ] &&
		[ "$(total "$ptot" samples_before_windows)" = 49 ] && [ "$(total "$ptot" windows)" = 1 ] &&
		[ "$(grep -c '^pcs-start$' "$T/py.log")" = 1 ] && [ "$(grep -c '^pcs-stop$' "$T/py.log")" = 1 ] &&
		ok python-profiler-window || notok python-profiler-window "exit $rc" "$(cat "$T/py.out" "$T/py.log" "$ptot" 2>&1)"
else
	notok python-profiler-window "needs python3"
fi

# gputap run --pc-sampling: SASS from nvdisasm (only the sampled functions), per-kernel files, summary, report
export GPUTAP_CUPTI_LIB="$T/libfakecupti.so"
GPUTAP_NVDISASM="$src/fake_nvdisasm.sh" FAKE_NVDISASM_LOG="$T/nv.log" "$GPUTAP" run -o "$T/run" --pc-sampling \
	-- "$T/client" pcsamp 3 >"$T/run.out" 2>"$T/run.err"
rc=$?
p=$(ls -d "$T"/run/pid* 2>/dev/null | head -1)
[ $rc -eq 0 ] && [ -n "$p" ] && ok run-exit || notok run-exit "exit $rc" "$(cat "$T/run.err")"
grep -q '^_Z6kernelv,0,0x000000000000abcd,0x80,27,12,/src/k.cu,18,EXIT,' "$p/pc_samples.csv" &&
	grep -q '^_Z6kernelv,0,0x000000000000abcd,0x20,.*,"LDG.E.128 R4, desc\[UR4\]\[R2.64\]",' "$p/pc_samples.csv" &&
	grep -q '^_Z5otherv,1,0x000000000000abcd,0x40,15,0,,,BAR.SYNC.DEFER_BLOCKING 0x0,' "$p/pc_samples.csv" &&
	grep -qx -- '-c -fun 2,3 .*000000000000abcd.cubin' "$T/nv.log" && [ "$(wc -l <"$T/nv.log")" = 1 ] &&
	ok run-sass || notok run-sass "$(cat "$p/pc_samples.csv" "$T/nv.log" 2>&1)"
# kernel(): 132 samples of 147, Long Scoreboard 108 (81.8 %), Selected 24, hottest line k.cu:18
grep -q '^kernel(),_Z6kernelv,132,0.8980,48,Long Scoreboard,0.8182,0x80,EXIT,/src/k.cu,18,' "$p/pc_kernels.csv" &&
	grep -q '^other(),_Z5otherv,15,0.1020,0,Barrier,1.0000,0x40,BAR.SYNC.DEFER_BLOCKING 0x0,,,' "$p/pc_kernels.csv" &&
	ok run-kernels-csv || notok run-kernels-csv "$(cat "$p/pc_kernels.csv")"
python3 - "$p/pc_sampling.json" >"$T/js.out" 2>&1 <<'PY' && ok run-json || notok run-json "$(cat "$T/js.out")"
import json, sys
d = json.load(open(sys.argv[1]))
k = d["kernels"][0]
assert d["samples"] == 147 and d["totals"]["dropped_samples"] == 0, d["totals"]
assert k["name"] == "kernel()" and k["samples"] == 132 and k["not_issued"] == 48
assert k["groups"] == {"Long Scoreboard": 108, "Selected": 24}, k["groups"]
assert k["stall_reasons"]["smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued"] == 48
assert k["top_pcs"][0] == {"pc_offset": 128, "samples": 27, "sass": "EXIT", "file": "/src/k.cu", "line": 18}
assert k["top_lines"][0] == {"file": "/src/k.cu", "line": 18, "samples": 27}
assert [r["group"] for r in d["stall_reasons"]][:2] == ["Long Scoreboard", None]
PY
grep -q 'PC sampling of pid[0-9]*: 147 samples (one per SM every 2^17 cycles), 0 dropped' "$T/run.err" &&
	grep -q '  kernel() .* 132  89.8%  Long Scoreboard 82%  *Selected 18%' "$T/run.err" &&
	grep -q 'hottest line k.cu:18 (20%); PC +0x80 EXIT (20%)' "$T/run.err" &&
	ok run-summary-table || notok run-summary-table "$(cat "$T/run.err")"
grep -q '<h2 id="pc-sampling">PC sampling</h2>' "$T/run/report.html" && grep -q 'title="Long Scoreboard 81.8%"' "$T/run/report.html" &&
	ok run-report-section || notok run-report-section "$(grep -i -A3 'pc sampling' "$T/run/report.html" | head -20)"
# `gputap report` of the run shows the table too
"$GPUTAP" report "$T/run" >"$T/rep.out" 2>&1
grep -q 'PC sampling of pid' "$T/rep.out" && ok report-table || notok report-table "$(cat "$T/rep.out")"

# an nvdisasm that refuses -fun: the whole module is disassembled instead
GPUTAP_NVDISASM="$src/fake_nvdisasm.sh" FAKE_NVDISASM_NOFUN=1 FAKE_NVDISASM_LOG="$T/nv5.log" "$GPUTAP" run -o "$T/run5" \
	--pc-sampling -- "$T/client" pcsamp 1 >/dev/null 2>&1
grep -q ',0x80,.*,EXIT,' "$T"/run5/pid*/pc_samples.csv && [ "$(wc -l <"$T/nv5.log")" = 2 ] &&
	grep -qx -- '-c .*abcd.cubin' "$T/nv5.log" && ok run-sass-without-fun || notok run-sass-without-fun "$(cat "$T/nv5.log")"

# the SASS step's budget (GPUTAP_PCSAMP_SASS_S): a slow nvdisasm stopped at it, with one warning
# saying so and how to have more; 0: nvdisasm not run at all, no warning
t0=$(date +%s)
GPUTAP_NVDISASM="$src/fake_nvdisasm.sh" FAKE_NVDISASM_SLEEP=20 GPUTAP_PCSAMP_SASS_S=1 "$GPUTAP" run -o "$T/run6" \
	--pc-sampling -- "$T/client" pcsamp 1 >/dev/null 2>"$T/run6.err"
t1=$(date +%s)
grep -q 'nvdisasm stopped after 1 s (its time budget): 9 PCs of pid[0-9]* have no SASS (GPUTAP_PCSAMP_SASS_S=N: up to N s, for all)' \
	"$T/run6.err" && [ $((t1 - t0)) -lt 15 ] && grep -q '^_Z6kernelv,0,0x000000000000abcd,0x80,[0-9]*,[0-9]*,/src/k.cu,18,,' \
	"$T"/run6/pid*/pc_samples.csv && ls "$T"/run6/pid*/pc_kernels.csv >/dev/null 2>&1 &&
	ok run-sass-budget || notok run-sass-budget "$((t1 - t0)) s" "$(cat "$T/run6.err")"
GPUTAP_NVDISASM="$src/fake_nvdisasm.sh" FAKE_NVDISASM_LOG="$T/nv7.log" GPUTAP_PCSAMP_SASS_S=0 "$GPUTAP" run -o "$T/run7" \
	--pc-sampling -- "$T/client" pcsamp 1 >/dev/null 2>"$T/run7.err"
[ ! -e "$T/nv7.log" ] && ! grep -q nvdisasm "$T/run7.err" && ls "$T"/run7/pid*/pc_kernels.csv >/dev/null 2>&1 &&
	ok run-sass-off || notok run-sass-off "$(cat "$T/nv7.log" "$T/run7.err" 2>&1)"

# no nvdisasm: one warning, the per-kernel files all the same
GPUTAP_NVDISASM=/nonexistent "$GPUTAP" run -o "$T/run2" --pc-sampling -- "$T/client" pcsamp 1 >/dev/null 2>"$T/run2.err"
grep -q 'nvdisasm not found' "$T/run2.err" && ls "$T"/run2/pid*/pc_kernels.csv >/dev/null 2>&1 && ok run-no-nvdisasm ||
	notok run-no-nvdisasm "$(cat "$T/run2.err")"

# gputap run --pc-sampling of a program with windows: the summary and the report say so
GPUTAP_PCSAMP_WINDOW=1 GPUTAP_NVDISASM="$src/fake_nvdisasm.sh" "$GPUTAP" run -o "$T/run8" --pc-sampling \
	-- "$T/client" pcsamp-window 4 >/dev/null 2>"$T/run8.err"
grep -q 'PC sampling of pid[0-9]*: 98 samples' "$T/run8.err" &&
	grep -q '  sampled only in windows (gputap_pcsamp_start ... stop): 2; 0 samples before the first dropped' "$T/run8.err" &&
	grep -q 'dropped by the hardware; sampled only in windows\.' "$T/run8/report.html" &&
	! grep -q 'sampled only in windows' "$T/run.err" && ok run-windows-said || notok run-windows-said "$(cat "$T/run8.err")"

# the tool: the full trace and PC sampling at the default period
FAKE_CUPTI_LOG="$T/t.log" GPUTAP_NVDISASM="$src/fake_nvdisasm.sh" "$GPUTAP" run -o "$T/run3" --tools pc_sampling \
	-- "$T/client" pcsamp 1 >/dev/null 2>&1
grep -qx 'pcs-config 17' "$T/t.log" && grep -q '"GPUTAP_PCSAMP"' "$T/run3/run.json" && ok tool-pc-sampling ||
	notok tool-pc-sampling "$(cat "$T/t.log")"

# a period out of range is a usage error before anything runs
expect_status bad-period 2 "$GPUTAP" run -o "$T/run4" --pc-sampling=40 -- true
[ ! -e "$T/run4" ] && ok bad-period-nothing-made || notok bad-period-nothing-made "$(ls -la "$T/run4")"
finish
