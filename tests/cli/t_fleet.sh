#!/usr/bin/env bash
# gputap fleet on this machine: the C path without Python (the default, no -o), its answers on a real
# two-rank DDP run, bad inputs and usage, and the parts the Python package calls (--plan, --task,
# --reduce, --result) with their wire formats.
. "$(dirname "$0")/lib.sh"
J=$FIX/fleet-ddp-2xh200

# the README's path: no -o, no cluster: nothing but gputap (no Python to be found on PATH)
expect_status no-python 0 env -i PATH=/nonexistent HOME="$T" "$GPUTAP" fleet --quiet "$J"
cp "$T/.out" "$T/text"
contains no-python-headline "$T/text" "gputap fleet: 2 ranks on 1 host, 12 iterations, 73 collectives matched across ranks (by NCCL's profiler plugin 146 rows)"
contains no-python-launcher-skipped "$T/text" "Skipped, no GPU work (a launcher) (1): $J/pid793/trace.gtr"
# the planted rank (rank 1, a GPU sleep before backward on every step): first, consistent, compute
if awk '/^Stragglers/ {s = 1; next} s && $1 ~ /^[0-9]+$/ {print; exit}' "$T/text" | grep -qE '^ +1 vm .* 12/12 consistent +compute'; then
	ok straggler-is-rank-1
else
	notok straggler-is-rank-1 "$(sed -n '/^Stragglers/,/^$/p' "$T/text")"
fi
contains late-collectives "$T/text" "Late collectives, longest hold first"
contains per-rank "$T/text" "Per rank (ms)       median        min        max"

# the same answer with one analyzer or several at a time
"$GPUTAP" fleet --quiet --workers 1 "$J" >"$T/w1" 2>&1
"$GPUTAP" fleet --quiet --workers 3 "$J" >"$T/w3" 2>&1
if cmp -s "$T/w1" "$T/text" && cmp -s "$T/w3" "$T/text"; then ok workers-same-text; else notok workers-same-text "$(diff "$T/w1" "$T/w3")"; fi

# progress on stderr unless --quiet; nothing of it on stdout
"$GPUTAP" fleet "$J" >"$T/p.out" 2>"$T/p.err"
contains progress "$T/p.err" "gputap fleet: 3/3 ranks analysed"
if cmp -s "$T/p.out" "$T/text"; then ok progress-not-on-stdout; else notok progress-not-on-stdout; fi

# a rank folder with a broken trace beside good ones: named and left out; a missing input named as given
mkdir -p "$T/job"
cp -r "$J/rank0" "$J/rank1" "$J/run.json" "$T/job/"
mkdir -p "$T/job/rank2" && printf 'not a trace' >"$T/job/rank2/trace.gtr"
expect_status broken-rank 0 "$GPUTAP" fleet --quiet "$T/job" "$T/nope"
contains broken-rank-named "$T/.out" "$T/job/rank2/trace.gtr: "
contains missing-named "$T/.out" "$T/nope: no such file or folder"
contains broken-rank-others-kept "$T/.out" "gputap fleet: 2 ranks on 1 host"

# nothing analysable: the text says why, exit 1
expect_status nothing 1 "$GPUTAP" fleet --quiet "$T/nope"
contains nothing-says-so "$T/.out" "no rank could be analysed"

# usage
expect_status usage-workers 2 "$GPUTAP" fleet --workers 0 "$J"
contains usage-workers-says "$T/.out" "--workers wants a positive integer"
expect_status usage-no-input 2 "$GPUTAP" fleet --quiet
expect_status usage-two-schedulers 2 "$GPUTAP" fleet --scheduler tcp://x:1 --scheduler-file f "$J"
expect_status usage-unknown 2 "$GPUTAP" fleet --bogus "$J"
contains usage-unknown-names "$T/.out" "--bogus"
expect_status help 0 "$GPUTAP" fleet --help
contains help-synopsis "$T/.out" "gputap fleet [-o DIR]"
# the scheduler variable with --workers: this machine, and it says so
DASK_SCHEDULER_ADDRESS=tcp://127.0.0.1:9 "$GPUTAP" fleet --quiet --workers 2 "$J" >"$T/d.out" 2>"$T/d.err"
contains workers-over-scheduler "$T/d.err" "DASK_SCHEDULER_ADDRESS (tcp://127.0.0.1:9) is not used"

# the parts: plan, one task per batch, reduce == result (the same tables and text)
"$GPUTAP" fleet --plan --workers 2 "$J" >"$T/plan.json"
if python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert [t["index"] for t in p["tasks"]] == list(range(3)), p["tasks"]
assert sorted(i for b in p["batches"] for i in b) == [0, 1, 2], p["batches"]
assert p["failed"] == []
json.dump({"tasks": p["tasks"], "failed": []}, open(sys.argv[2], "w"))
' "$T/plan.json" "$T/tasks.json" 2>"$T/.err"; then ok plan; else notok plan "$(cat "$T/.err")"; fi
"$GPUTAP" fleet --task <"$T/tasks.json" >"$T/rows.bin" 2>"$T/.err"
if [ "$(head -c 20 "$T/rows.bin")" = "gputap-fleet-rows 1" ]; then ok task-rows; else notok task-rows "$(cat "$T/.err")"; fi
"$GPUTAP" fleet --reduce "$T/plan.json" <"$T/rows.bin" >"$T/red.bin" 2>"$T/.err"
"$GPUTAP" fleet --quiet --result "$J" >"$T/res.bin" 2>>"$T/.err"
if python3 -c '
import json, sys
def head(p):
    b = open(p, "rb").read()
    assert b.startswith(b"gputap-fleet-result 1\n"), b[:40]
    return json.loads(b[22:b.index(b"\n", 22)]), b[b.index(b"\n", 22):]
a, ab = head(sys.argv[1])
b, bb = head(sys.argv[2])
assert a["text"] == b["text"] == open(sys.argv[3]).read()
assert ab == bb  # the same tables, byte for byte
for k in ("inputs", "cluster", "tasks"):
    b["summary"].pop(k)
assert a["summary"] == b["summary"]
assert [c[0] for c in a["tables"]["ranks"]["columns"]][:3] == ["rank", "host", "path"]
' "$T/red.bin" "$T/res.bin" "$T/text" 2>>"$T/.err"; then ok reduce-equals-result; else notok reduce-equals-result "$(cat "$T/.err")"; fi
# a task whose batch never came back: failed, with the client's reason when the plan carries one
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["tasks"][2]["lost"] = "task failed: worker died"
json.dump(p, open(sys.argv[2], "w"))
' "$T/plan.json" "$T/plan2.json"
head -c 0 </dev/null | "$GPUTAP" fleet --reduce "$T/plan2.json" >"$T/lost.bin" 2>"$T/.err"
if python3 -c '
import json, sys
b = open(sys.argv[1], "rb").read()
s = json.loads(b[22:b.index(b"\n", 22)])["summary"]
assert s["ranks"] == 0 and len(s["failed"]) == 3, s["failed"]
assert s["failed"][2]["error"] == "task failed: worker died", s["failed"]
assert s["failed"][0]["error"] == "no result came back for this rank", s["failed"]
' "$T/lost.bin" 2>>"$T/.err"; then ok reduce-lost-tasks; else notok reduce-lost-tasks "$(cat "$T/.err")"; fi
# bad rows on stdin: named, exit 1
printf 'gputap-fleet-rows 1\n{' | "$GPUTAP" fleet --reduce "$T/plan.json" >/dev/null 2>"$T/bad.err"
if [ $? -eq 1 ] && grep -q "the rows on stdin" "$T/bad.err"; then ok reduce-bad-rows; else notok reduce-bad-rows "$(cat "$T/bad.err")"; fi
finish
