#!/usr/bin/env bash
# gputap run: the child process, exit status, signals, run.json, the run directory.
. "$(dirname "$0")/lib.sh"
PY=${PYTHON:-python3}
# jq-like field check: jget FILE EXPR (python expression on `j`)
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# jis NAME FILE EXPR WANT
jis() {
	local got
	got=$(jget "$2" "$3" 2>&1)
	if [ "$got" = "$4" ]; then ok "$1"; else notok "$1" "$3: got '$got', wanted '$4'"; fi
}

# A program that never touches CUDA: its output and status are its own.
cd "$T" || exit 1
"$GPUTAP" run -o "$T/r1" -- sh -c 'echo hi; echo err >&2; exit 3' >"$T/o1" 2>"$T/e1"
rc=$?
[ $rc -eq 3 ] && ok status-is-childs || notok status-is-childs "exit $rc"
[ "$(cat "$T/o1")" = "hi" ] && ok stdout-unchanged || notok stdout-unchanged "$(cat "$T/o1")"
contains stderr-passes "$T/e1" "err"
contains summary-line "$T/e1" "gputap: run written to"
check run-json-valid "$PY" -m json.tool "$T/r1/run.json"
jis json-exit "$T/r1/run.json" 'j["exit_status"]' 3
jis json-argv "$T/r1/run.json" 'j["argv"]' "['sh', '-c', 'echo hi; echo err >&2; exit 3']"
jis json-command "$T/r1/run.json" 'j["command"]' "sh -c 'echo hi; echo err >&2; exit 3'"
jis json-cwd "$T/r1/run.json" 'j["cwd"]' "$(pwd -P)"
jis json-signal-null "$T/r1/run.json" 'j["signal"]' None
jis json-finished "$T/r1/run.json" 'j["finished"]' True
jis json-times "$T/r1/run.json" 'j["start_ns"] < j["end_ns"] and j["start"].endswith("Z") and abs(j["wall_s"] - (j["end_ns"]-j["start_ns"])/1e9) < 1e-5' True
jis json-host "$T/r1/run.json" 'j["host"]' "$(hostname)"
jis json-version "$T/r1/run.json" 'j["gputap_version"] != ""' True
jis json-default-tool "$T/r1/run.json" '[t["name"] for t in j["tools"]]' "['kernel_trace']"
jis json-env-out "$T/r1/run.json" 'j["environment"]["GPUTAP_OUT"]' "$(cd "$T/r1" && pwd -P)"
jis json-gpus-list "$T/r1/run.json" 'type(j["gpus"]).__name__' list
[ ! -e "$T/r1/run.json.tmp" ] && ok no-temp-left || notok no-temp-left

# Command not found / not executable, as env(1).
expect_status not-found-127 127 "$GPUTAP" run -o "$T/r2" -- gputap-no-such-command-xyz
contains not-found-message "$T/.out" "gputap-no-such-command-xyz: command not found"
jis not-found-json "$T/r2/run.json" 'j["exit_status"], j["exec_error"] is not None' "(127, True)"
printf 'echo no\n' >"$T/noexec.sh"
chmod 0644 "$T/noexec.sh"
expect_status not-executable-126 126 "$GPUTAP" run -o "$T/r3" -- "$T/noexec.sh"

# Exit by signal: 128+N, and run.json names the signal.
expect_status killed-by-signal 137 "$GPUTAP" run -o "$T/r4" -- sh -c 'kill -9 $$'
jis signal-json "$T/r4/run.json" 'j["signal"], j["exit_status"]' "('SIGKILL', 137)"

# A signal sent to gputap reaches the command.
"$GPUTAP" run -o "$T/r5" -- sh -c "trap 'echo got-usr1; exit 7' USR1; touch '$T/ready5'; while :; do sleep 0.05; done" >"$T/o5" 2>&1 &
gp=$!
for _ in $(seq 100); do [ -e "$T/ready5" ] && break; sleep 0.05; done
kill -USR1 $gp
wait $gp
rc=$?
[ $rc -eq 7 ] && ok usr1-forwarded || notok usr1-forwarded "exit $rc" "$(cat "$T/o5")"
contains usr1-handled "$T/o5" "got-usr1"

"$GPUTAP" run -o "$T/r6" -- sh -c "touch '$T/ready6'; exec sleep 30" >"$T/o6" 2>&1 &
gp=$!
for _ in $(seq 100); do [ -e "$T/ready6" ] && break; sleep 0.05; done
sleep 0.1
kill -TERM $gp
wait $gp
rc=$?
[ $rc -eq 143 ] && ok term-forwarded-143 || notok term-forwarded-143 "exit $rc" "$(cat "$T/o6")"
jis term-json "$T/r6/run.json" 'j["signal"], j["last_forwarded_signal"]' "('SIGTERM', 'SIGTERM')"

# -o: an existing run is never overwritten; an empty existing directory is used.
expect_status o-existing-run-refused 2 "$GPUTAP" run -o "$T/r1" -- true
contains o-existing-run-message "$T/.out" "already holds a run"
jis o-existing-untouched "$T/r1/run.json" 'j["exit_status"]' 3
mkdir -p "$T/empty"
expect_status o-empty-dir-used 0 "$GPUTAP" run -o "$T/empty" -- true
[ -f "$T/empty/run.json" ] && ok o-empty-has-json || notok o-empty-has-json
: >"$T/afile"
expect_status o-file-refused 2 "$GPUTAP" run -o "$T/afile" -- true

# Default directory: gputap-YYYYmmdd-HHMMSS, a suffix rather than overwrite.
mkdir -p "$T/cwd" && cd "$T/cwd" || exit 1
"$GPUTAP" run -- true 2>/dev/null
"$GPUTAP" run -- true 2>/dev/null
"$GPUTAP" run -- true 2>/dev/null
n=$(ls -d gputap-2*-* 2>/dev/null | wc -l)
[ "$n" -eq 3 ] && ok default-dirs-distinct || notok default-dirs-distinct "$(ls)"
ls -d gputap-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9] >/dev/null 2>&1 &&
	ok default-dir-name || notok default-dir-name "$(ls)"
# ... and runs started at once (each rank's `gputap run` under torchrun): each its own folder and run.json
mkdir -p "$T/cwd4" && cd "$T/cwd4" || exit 1
for i in 0 1 2 3 4 5; do RANK=$i "$GPUTAP" run -- sh -c 'echo $RANK >rank.txt; sleep 0.3' 2>/dev/null & done
wait
n=$(ls -d gputap-2*/run.json 2>/dev/null | wc -l)
[ "$n" -eq 6 ] && ok default-dirs-at-once || notok default-dirs-at-once "$n run.json" "$(ls -R)"
ranks=$(for d in gputap-2*/; do jget "$d/run.json" 'j["exit_status"]'; done | sort | uniq -c | tr -s ' ')
[ "$ranks" = " 6 0" ] && ok default-dirs-at-once-finished || notok default-dirs-at-once-finished "$ranks"
cd "$T" || exit 1

# -o given to several runs at once: one gets it, the others are refused and say how to split it
for i in 0 1 2 3; do RANK=$i "$GPUTAP" run -o "$T/shared" -- sleep 0.3 >"$T/sh$i.out" 2>&1 & done
wait
n=$(grep -l "already holds a run" "$T"/sh?.out | wc -l)
[ "$n" -eq 3 ] && ok o-shared-one-wins || notok o-shared-one-wins "$n refused" "$(cat "$T"/sh?.out)"
n=$(grep -l -F "rank%q{RANK}" "$T"/sh?.out | wc -l)
[ "$n" -eq 3 ] && ok o-shared-says-how || notok o-shared-says-how "$(cat "$T"/sh?.out)"
check o-shared-json-whole "$PY" -m json.tool "$T/shared/run.json"
# -o's placeholders: one folder per rank
for i in 0 1 2 3; do RANK=$i "$GPUTAP" run -o "$T/job/rank%q{RANK}" -- sleep 0.2 2>/dev/null & done
wait
n=$(ls "$T"/job/rank[0-3]/run.json 2>/dev/null | wc -l)
[ "$n" -eq 4 ] && ok o-placeholder-rank || notok o-placeholder-rank "$(ls -R "$T/job")"
expect_status o-placeholder-unset 2 env -u GT_UNSET_X "$GPUTAP" run -o "$T/x%q{GT_UNSET_X}" -- true
contains o-placeholder-unset-message "$T/.out" "GT_UNSET_X is not set in the environment"
[ ! -e "$T/x" ] && ok o-placeholder-unset-nothing-made || notok o-placeholder-unset-nothing-made "$(ls "$T")"
expect_status o-placeholder-unknown 2 "$GPUTAP" run -o "$T/y%z" -- true
contains o-placeholder-unknown-message "$T/.out" "unknown placeholder '%z'"
"$GPUTAP" run -o "$T/pid%p-%h-%%" -- true 2>/dev/null
ls -d "$T"/pid[0-9]*-"$(hostname)"-% >/dev/null 2>&1 && ok o-placeholder-pid-host || notok o-placeholder-pid-host "$(ls "$T")"

# The environment the command gets.
echo 'int gt_fake_preload;' >"$T/fake.c"
if ${CC:-cc} -shared -fPIC -o "$T/libold.so" "$T/fake.c" 2>/dev/null; then
	LD_PRELOAD="$T/libold.so" GPUTAP_LIB="$T/libold.so" "$GPUTAP" run -o "$T/r7" --tools metrics -- \
		sh -c 'echo "$LD_PRELOAD|$CUDA_INJECTION64_PATH|$NVTX_INJECTION64_PATH|$GPUTAP_OUT|$GPUTAP_TRACE"' >"$T/o7" 2>/dev/null
	lib=$(jget "$T/r7/run.json" 'j["tap_library"]')
	if [ "$lib" = "$T/libold.so" ] || [ "$lib" = "$(cd "$T" && pwd -P)/libold.so" ]; then
		want="$lib|$lib|$lib|$(cd "$T/r7" && pwd -P)|metrics"
	else
		want="$lib:$T/libold.so|$lib|$lib|$(cd "$T/r7" && pwd -P)|metrics"
	fi
	[ "$(cat "$T/o7")" = "$want" ] && ok child-env || notok child-env "got  $(cat "$T/o7")" "want $want"
else
	notok child-env "no C compiler to build a test library"
fi
"$GPUTAP" run -o "$T/r8" --trace api --buffer-mb 64 --hold 8 --tools api_trace -- \
	sh -c 'echo "$GPUTAP_TRACE $GPUTAP_BUFFER_MB $GPUTAP_HOLD"' >"$T/o8" 2>/dev/null
[ "$(cat "$T/o8")" = "api 64 8" ] && ok options-to-env || notok options-to-env "$(cat "$T/o8")"
expect_status tools-none 5 "$GPUTAP" run -o "$T/r9" --tools none -- sh -c 'exit 5'
jis tools-none-json "$T/r9/run.json" 'len(j["tools"]), "LD_PRELOAD" in j["environment"]' "(0, False)"

# Usage errors.
expect_status no-command 2 "$GPUTAP" run -o "$T/u1"
expect_status unknown-option 2 "$GPUTAP" run --frob -- true
contains unknown-option-message "$T/.out" "unknown option '--frob'"
expect_status bad-hold 2 "$GPUTAP" run --hold x -- true
expect_status tools-and-context 2 "$GPUTAP" run --tools power --context '{}' -- true
expect_status help 0 "$GPUTAP" run --help
contains help-exit-status "$T/.out" "EXIT STATUS"
contains help-files "$T/.out" "gpu_info_power_profiler_output.csv"
expect_status help-cmd 0 "$GPUTAP" help run
contains help-examples "$T/.out" "EXAMPLES"
# options after the command belong to the command
"$GPUTAP" run -o "$T/r10" --tools none sh -c 'echo "$0 $1"' --help x >"$T/o10" 2>/dev/null
[ "$(cat "$T/o10")" = "--help x" ] && ok args-after-command || notok args-after-command "$(cat "$T/o10")"
finish
