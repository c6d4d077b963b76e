#!/usr/bin/env bash
# What a new user tries first: the bundled recorded runs analysed and reported with the defaults,
# the help's examples, a run into a nested folder, the demo's output folder.
. "$(dirname "$0")/lib.sh"
E="$GT_TEST_SRCDIR/../examples/recorded"
B="$GT_TEST_SRCDIR/bad-input"

# analyze and report give the same kernel classes for the same run (one default map)
cp -r "$E/torch-train" "$T/tt"
"$GPUTAP" analyze "$T/tt" >"$T/a.txt" 2>/dev/null
"$GPUTAP" report "$T/tt" >"$T/r.txt" 2>/dev/null
acls=$(awk '/^Kernel Statistic:/{f=1;next} f&&/^Class/{next} f&&NF==0{exit} f{print $NF, $1}' "$T/a.txt" | sort -rn | head -1 | cut -d' ' -f2)
rcls=$(sed -n 's/^  kernel time .*: \([a-z/]*\) .*/\1/p' "$T/r.txt")
if [ -n "$acls" ] && [ "$acls" = "$rcls" ] && [ "$acls" != others ]; then ok default-map-agree; else notok default-map-agree "analyze: $acls, report: $rcls"; fi

# iterations are found by default in both bundled examples: the PyTorch loop marks ProfilerStep#n,
# the CUDA C example only its own ranges ("round"), which a note names
for ex in cuda-example:nvtx:20 torch-train:profiler-step:10; do
	n=${ex%%:*} rest=${ex#*:}
	src=${rest%%:*} cnt=${rest#*:}
	"$GPUTAP" analyze --format json "$E/$n" >"$T/$n.json" 2>"$T/$n.err"
	if python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; assert r["iteration_source"] == sys.argv[2], r["iteration_source"]; assert r["iterations"] == int(sys.argv[3]), r["iterations"]' "$T/$n.json" "$src" "$cnt" 2>"$T/py.err"; then
		ok "default-iterations-$n"
	else
		notok "default-iterations-$n" "$(cat "$T/py.err")"
	fi
done
contains default-iterations-note "$T/cuda-example.err" 'iterations are the NVTX range "round" (20 ranges)'
# nothing repeats: a note says there are no iterations and why
expect_status no-iterations 0 "$GPUTAP" analyze "$B/gtr/nvtx-nomatch.gtr"
contains no-iterations-why "$T/.out" "no iterations: no ProfilerStep#N range and no NVTX range that repeats"

# the help's --nvtx example names a range the bundled example has
"$GPUTAP" help analyze >"$T/help.txt"
contains help-nvtx-example "$T/help.txt" "--nvtx step myrun/"
expect_status help-nvtx-example-works 0 "$GPUTAP" analyze --nvtx step "$E/torch-train"
if grep -q 'no NVTX range named' "$T/.out"; then notok help-nvtx-example-matches "$(grep 'no NVTX' "$T/.out")"; else ok help-nvtx-example-matches; fi

# run -o creates the folder with its parents, as the help says
expect_status run-nested-dir 0 "$GPUTAP" run -o "$T/a/b/c" -- true
if [ -f "$T/a/b/c/run.json" ]; then ok run-nested-dir-written; else notok run-nested-dir-written "$(ls -R "$T/a" 2>&1)"; fi

# make demo's output folder is not left as an untracked file
if git -C "$GT_TEST_SRCDIR/.." rev-parse --git-dir >/dev/null 2>&1; then
	if git -C "$GT_TEST_SRCDIR/.." check-ignore -q demo-run/; then ok demo-run-ignored; else notok demo-run-ignored; fi
elif grep -qx '/demo-run/' "$GT_TEST_SRCDIR/../.gitignore"; then
	ok demo-run-ignored
else
	notok demo-run-ignored ".gitignore lacks /demo-run/"
fi
finish
