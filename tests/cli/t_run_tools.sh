#!/usr/bin/env bash
# gputap run: --tools / --context / --context-file, errors naming the bad part, stacking.
. "$(dirname "$0")/lib.sh"
PY=${PYTHON:-python3}
jget() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

expect_status tools-help 0 "$GPUTAP" run --tools help
for t in kernel_trace api_trace metrics power vram cublas_trace cublaslt_trace cudnn_trace nccl_trace gpu_info_power_profiler; do
	contains "tools-help-$t" "$T/.out" "$t"
done
expect_status unknown-tool 2 "$GPUTAP" run --tools power,rocprof -- true
contains unknown-tool-message "$T/.out" "--tools: unknown tool 'rocprof'"
expect_status ctx-bad-type 2 "$GPUTAP" run -o "$T/x1" --context '{"tools":[{"name":"power"},{"name":"vram"},{"name":"power","env_vars":{"DEVICE":0}}]}' -- true
contains ctx-bad-type-message "$T/.out" "--context: tools[2].env_vars.DEVICE: expected a string"
[ ! -e "$T/x1" ] && ok ctx-error-no-dir || notok ctx-error-no-dir
expect_status ctx-missing-name 2 "$GPUTAP" run --context '{"tools":[{"cmd":"x"}]}' -- true
contains ctx-missing-name-message "$T/.out" "tools[0]: missing \"name\""
expect_status ctx-bad-json 2 "$GPUTAP" run --context '{"tools":' -- true
contains ctx-bad-json-message "$T/.out" "--context: not valid JSON"
printf '{"tools": [{"name": "power", "env_vars": {"SAMPLING_RATE": "soon"}}]}' >"$T/cfg.json"
expect_status ctx-file-bad-rate 2 "$GPUTAP" run --context-file "$T/cfg.json" -- true
contains ctx-file-bad-rate-message "$T/.out" "tools[0] (power).env_vars.SAMPLING_RATE 'soon': expected seconds"
printf '{"tools": [{"name": "x"' >"$T/cfg2.json"
expect_status ctx-file-named 2 "$GPUTAP" run --context-file "$T/cfg2.json" -- true
contains ctx-file-named-message "$T/.out" "$T/cfg2.json: not valid JSON"
expect_status ctx-file-missing 2 "$GPUTAP" run --context-file "$T/nope.json" -- true

# Stacking: wrappers nest (first tool innermost), later env wins, a repeated wrapper runs once.
ctx='{"gpu_vendor":"NVIDIA","tools":[
 {"name":"metrics","cmd":"env WRAP=inner","env_vars":{"V":"first"}},
 {"name":"cublas_trace","cmd":"env WRAP=outer","env_vars":{"V":"second"}},
 {"name":"nccl_trace","cmd":"env WRAP=inner"}]}'
"$GPUTAP" run -o "$T/s1" --context "$ctx" -- sh -c 'echo "$WRAP $V $NCCL_DEBUG $CUBLAS_LOGINFO_DBG"' >"$T/o1" 2>/dev/null
[ "$(cat "$T/o1")" = "inner second INFO 1" ] && ok stack-env-and-wrappers || notok stack-env-and-wrappers "$(cat "$T/o1")"
[ "$(jget "$T/s1/run.json" 'j["exec_argv"][:4]')" = "['env', 'WRAP=outer', 'env', 'WRAP=inner']" ] &&
	ok stack-exec-argv || notok stack-exec-argv "$(jget "$T/s1/run.json" 'j["exec_argv"]')"
[ "$(jget "$T/s1/run.json" 'j["exec_argv"].count("env")')" = 2 ] && ok stack-dedup || notok stack-dedup
[ "$(jget "$T/s1/run.json" 'j["actions"]')" = "['setup nccl_trace', 'setup cublas_trace', 'setup metrics', 'teardown metrics', 'teardown cublas_trace', 'teardown nccl_trace']" ] &&
	ok stack-action-order || notok stack-action-order "$(jget "$T/s1/run.json" 'j["actions"]')"
[ -d "$T/s1/libs" ] && ok libs-dir || notok libs-dir
[ "$(jget "$T/s1/run.json" 'j["environment"]["NCCL_DEBUG_FILE"].endswith("/libs/nccl.%h.%p.log")')" = True ] &&
	ok nccl-file-pattern || notok nccl-file-pattern
finish
