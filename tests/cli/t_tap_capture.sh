#!/usr/bin/env bash
# Capture windows without a GPU: NVTX occurrences open and close the window, records
# outside it are not written, the window is in the trace, the summary and trace.json;
# `gputap trigger` starts a window in a running process through its private control folder.
. "$(dirname "$0")/lib.sh"
cuda=${CUDA_HOME:-/usr/local/cuda}
if ! command -v cc >/dev/null || [ ! -f "$cuda/include/nvtx3/nvToolsExt.h" ]; then
	notok capture-headers "no C compiler or no $cuda/include/nvtx3"
	finish
fi
cat >"$T/steps.c" <<'EOC'
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 6;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
	for (int i = 1; i <= n; i++) {
		char mark[32];
		snprintf(mark, sizeof mark, "m%d", i);
		nvtxRangePushA("step");
		nvtxRangePushA("inner");
		nvtxMarkA(mark);
		nanosleep(&d, NULL);
		nvtxRangePop();
		nvtxRangePop();
	}
	puts("done");
	return 0;
}
EOC
if ! cc -I"$cuda/include" -o "$T/steps" "$T/steps.c" -ldl 2>"$T/cc.err"; then
	notok capture-compile "$(cat "$T/cc.err")"
	finish
fi
lib() { env LD_PRELOAD="$LIBGPUTAP" NVTX_INJECTION64_PATH="$LIBGPUTAP" "$@"; }

# occurrences 3..4 of "step": exactly those ranges and marks are recorded
expect_status capture-nvtx 0 lib GPUTAP_OUT="$T/o" GPUTAP_CAPTURE='nvtx:step@3-4' "$T/steps" 6
f=$(ls "$T"/o/pid*/trace.gtr 2>/dev/null | head -1)
[ -n "$f" ] || { notok capture-trace "no trace in $(ls -R "$T/o")"; finish; }
python3 - "$f" <<'EOP' >"$T/r.txt" 2>&1 && ok capture-nvtx-window || notok capture-nvtx-window "$(cat "$T/r.txt")"
import sys
sys.path.insert(0, "tests/gpu")
import gtr
rs = [r for r in gtr.read(sys.argv[1])["records"] if r["type"] == "range"]
names = sorted(r["name"] for r in rs)
print(names)
assert names.count("step") == 2 and names.count("inner") == 2, "two whole steps"
assert sorted(n for n in names if n.startswith("m")) == ["m3", "m4"], "marks of steps 3 and 4 only"
win = [r for r in rs if r["kind"] == 5]
assert len(win) == 1 and win[0]["name"] == "nvtx:step@3-4", win
steps = sorted((r for r in rs if r["name"] == "step"), key=lambda r: r["start"])
assert win[0]["start"] <= steps[0]["start"] and steps[1]["end"] <= win[0]["end"], "the window spans the steps"
EOP
expect_status capture-summary 0 "$GPUTAP" convert "$f" -o "$T/c" --format all
if python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
w=[e for e in d["traceEvents"] if e.get("cat")=="capture"]
assert len(w)==1 and w[0]["name"]=="nvtx:step@3-4", w' "$T/c/trace.json" 2>"$T/.err"; then
	ok capture-json-window
else
	notok capture-json-window "$(cat "$T/.err")"
fi
if grep -q ':step$' "$T/c/trace_nvtx_sum.csv" && ! grep -q 'nvtx:step@3-4' "$T/c/trace_nvtx_sum.csv"; then
	ok capture-window-not-an-nvtx-range
else
	notok capture-window-not-an-nvtx-range "$(cat "$T/c/trace_nvtx_sum.csv")"
fi

# a window never reached: no range written, no window
expect_status capture-never 0 lib GPUTAP_OUT="$T/o2" GPUTAP_CAPTURE='nvtx:step@50' "$T/steps" 3
f2=$(ls "$T"/o2/pid*/trace.gtr | head -1)
python3 -c 'import sys; sys.path.insert(0,"tests/gpu"); import gtr
rs=[r for r in gtr.read(sys.argv[1])["records"] if r["type"]=="range"]
assert rs==[], rs' "$f2" 2>"$T/.err" && ok capture-never-opened || notok capture-never-opened "$(cat "$T/.err")"

# a bad SPEC: one warning with the accepted forms, the whole run traced
expect_status capture-bad-spec 0 lib GPUTAP_OUT="$T/o3" GPUTAP_CAPTURE='nvtx:step@0' "$T/steps" 2
contains capture-bad-spec-warns "$T/.out" "FIRST must be an occurrence number"
expect_status capture-cli-bad-spec 2 "$GPUTAP" run -o "$T/o4" --capture 'window:3' -- "$T/steps" 1
contains capture-cli-bad-spec-message "$T/.out" "'window:3' is not valid"

# gputap trigger: a running process with --capture trigger records nothing until asked,
# then the next 2 whole steps
mkdir -p "$T/r"
"$GPUTAP" run -o "$T/r/run" --trace nvtx,api --capture trigger -- "$T/steps" 40 50 >"$T/run.out" 2>&1 &
rp=$!
for _ in $(seq 100); do ls "$T"/r/run/pid*/control/pid >/dev/null 2>&1 && break; sleep 0.05; done
sleep 0.3
expect_status trigger-iterations 0 "$GPUTAP" trigger "$T/r/run" --iterations 2
contains trigger-answer "$T/.out" "window armed"
expect_status trigger-bad-option 2 "$GPUTAP" trigger "$T/r/run" --iterations 0
wait $rp
ctl=$(ls -d "$T"/r/run/pid*/control | head -1)
if [ "$(stat -c %a "$ctl")" = 700 ]; then ok trigger-control-private; else notok trigger-control-private "$(stat -c %a "$ctl")"; fi
f3=$(ls "$T"/r/run/pid*/trace.gtr | head -1)
python3 - "$f3" <<'EOP' >"$T/r.txt" 2>&1 && ok trigger-two-steps || notok trigger-two-steps "$(cat "$T/r.txt")"
import sys
sys.path.insert(0, "tests/gpu")
import gtr
rs = [r for r in gtr.read(sys.argv[1])["records"] if r["type"] == "range"]
names = [r["name"] for r in rs]
print(names)
assert names.count("step") == 2 and names.count("inner") == 2, "the next two whole steps"
marks = sorted(int(n[1:]) for n in names if n.startswith("m") and n[1:].isdigit())
assert len(marks) == 2 and marks[1] == marks[0] + 1, marks
assert any(r["kind"] == 5 and r["name"].startswith("trigger") for r in rs)
EOP
contains trigger-summary "$T/run.out" "Capture windows: 1"
# a process that does not take triggers, and one that has ended
expect_status trigger-ended 1 "$GPUTAP" trigger "$T/r/run"
contains trigger-ended-message "$T/.out" "no running process"
expect_status trigger-no-gputap 1 "$GPUTAP" trigger $$
contains trigger-no-gputap-message "$T/.out" "does not run under gputap"
chmod 755 "$ctl"
expect_status trigger-refuses-open-folder 1 "$GPUTAP" trigger "$(dirname "$ctl")"
contains trigger-refuses-open-folder-message "$T/.out" "not a private folder"
finish
