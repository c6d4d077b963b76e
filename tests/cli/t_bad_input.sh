#!/usr/bin/env bash
# Bad input never crashes, hangs or reports success on nothing.  Every file of the malformed
# corpus (tests/bad-input, made by tests/bad-input/make.py) goes through each command that reads
# it, with a time and memory limit; then each named case checks its exit status and message.
. "$(dirname "$0")/lib.sh"
B="$GT_TEST_SRCDIR/bad-input"
LIMIT_S=${GT_BAD_INPUT_TIMEOUT:-20}
LIMIT_KB=400000 # address space: a reader's memory stays proportional to its input
# GT_BAD_INPUT_SAN=1: GPUTAP is built with ASan and UBSan; only the sweep runs (the named cases
# are the normal build's), without the address-space limit ASan's shadow memory cannot live with
SAN=${GT_BAD_INPUT_SAN:-0}
[ "$SAN" = 1 ] && LIMIT_S=$((LIMIT_S * 3))

# run_limited OUT ERR CMD...: status of CMD under the limits (124: timed out)
run_limited() {
	local o=$1 e=$2
	shift 2
	if [ "$SAN" = 1 ]; then
		(ulimit -f 50000 2>/dev/null; exec timeout -k 2 "$LIMIT_S" "$@") >"$o" 2>"$e"
	else
		(ulimit -v "$LIMIT_KB" -f 50000 2>/dev/null; exec timeout -k 2 "$LIMIT_S" "$@") >"$o" 2>"$e"
	fi
}

# sweep NAME CMD...: no crash, no hang, no bug message; exit 0 only with something on stdout
sweep() {
	local n=$1 rc
	shift
	run_limited "$T/sw.out" "$T/sw.err" "$@"
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		notok "sweep/$n" "exit $rc: $*" "$(tail -n 5 "$T/sw.err")"
	elif grep -q 'BUG\|runtime error\|Sanitizer' "$T/sw.err"; then
		notok "sweep/$n" "$(tail -n 5 "$T/sw.err")"
	elif [ "$rc" -eq 0 ] && [ ! -s "$T/sw.out" ]; then
		notok "sweep/$n" "exit 0 with nothing on stdout: $*"
	elif [ "$rc" -eq 1 ] && ! grep -q 'gputap: error: ' "$T/sw.err"; then
		notok "sweep/$n" "exit 1 without an error message: $*"
	else
		ok "sweep/$n"
	fi
}

for f in "$B"/kineto/* "$B"/sqlite/* "$B"/gtr/*; do
	sweep "analyze-$(basename "$f")" "$GPUTAP" analyze "$f"
done
for f in "$B"/gtr/*; do
	rm -rf "$T/conv"
	sweep "convert-$(basename "$f")" "$GPUTAP" convert "$f" -o "$T/conv" --format all
done
for f in "$B"/csv/*_cuda_gpu_kern_sum.csv; do
	sweep "analyze-csv-$(basename "$f")" "$GPUTAP" analyze "${f%_cuda_gpu_kern_sum.csv}"
done
for f in "$B"/config/*.json; do
	sweep "config-$(basename "$f")" "$GPUTAP" analyze --config "$f"
	sweep "map-$(basename "$f")" "$GPUTAP" analyze --map "$f" "$B/csv/ok"
done
for d in "$B"/run/*/; do
	n=$(basename "$d")
	rm -rf "$T/r" && cp -r "$d" "$T/r"
	sweep "analyze-run-$n" "$GPUTAP" analyze "$T/r"
	sweep "convert-run-$n" "$GPUTAP" convert "$T/r" -o "$T/r-out"
	sweep "report-run-$n" "$GPUTAP" report "$T/r"
done

[ "$SAN" = 1 ] && finish

# bad NAME STATUS TEXT CMD...: exit STATUS and TEXT in stdout or stderr, within the limits
bad() {
	local n=$1 want=$2 text=$3 rc
	shift 3
	run_limited "$T/b.out" "$T/b.err" "$@"
	rc=$?
	cat "$T/b.out" "$T/b.err" >"$T/b.all"
	if [ "$rc" -ne "$want" ]; then
		notok "$n" "exit $rc, wanted $want: $*" "$(tail -n 8 "$T/b.all")"
	elif [ -n "$text" ] && ! grep -qF -- "$text" "$T/b.all"; then
		notok "$n" "lacks: $text" "$(tail -n 8 "$T/b.all")"
	else
		ok "$n"
	fi
}
# lacks NAME TEXT: the last bad's output does not hold TEXT
lacks() { if grep -qF -- "$2" "$T/b.all"; then notok "$1" "holds: $2" "$(grep -F -- "$2" "$T/b.all" | head -3)"; else ok "$1"; fi; }

K="$B/kineto" S="$B/sqlite" R="$B/gtr" C="$B/config"

# 1. a kernel name holding a NUL byte (or a BLOB): read up to the NUL, never past the copy
bad names-nul-sqlite 0 "Kernel total instances: 3" "$GPUTAP" analyze "$S/name-nul.sqlite"
bad names-blob-sqlite 0 "Kernel total instances: 2" "$GPUTAP" analyze "$S/name-blob.sqlite"
bad names-nul-kineto 0 "Kernel total instances: 2" "$GPUTAP" analyze "$K/name-nul.json"
bad names-nul-gtr 0 "Kernel total instances: 2" "$GPUTAP" analyze "$R/name-nul.gtr"

# 2. absurd and non-finite samples: the report ends, bounded, and says what it left out
for r in samples-absurd power-absurd samples-time-absurd samples-flat-huge samples-time-flat-huge; do
	rm -rf "$T/$r" && cp -r "$B/run/$r" "$T/$r"
	msg="left out of the plots"
	[ "$r" = samples-time-flat-huge ] && msg="" # a flat far-away time axis: nothing to leave out
	bad "report-$r" 0 "$msg" "$GPUTAP" report "$T/$r"
	sz=$(stat -c %s "$T/$r/report.html" 2>/dev/null || echo 0)
	if [ "$sz" -gt 0 ] && [ "$sz" -lt 2000000 ]; then ok "report-$r-bounded"; else notok "report-$r-bounded" "report.html: $sz bytes"; fi
done

# 3. memory proportional to the input: one string id of 2^26 in a 200-byte trace
LIMIT_KB=150000
bad string-id-huge-analyze 1 "string id 67108864" "$GPUTAP" analyze "$R/string-id-2e26.gtr"
bad string-id-huge-convert 1 "string id 67108864" "$GPUTAP" convert "$R/string-id-2e26.gtr" -o "$T/c1"
bad name-id-huge-analyze 0 "Kernel total instances: 1" "$GPUTAP" analyze "$R/kernel-name-id-huge.gtr"
LIMIT_KB=400000

# 4. nothing usable: exit 1 with the file named
for f in root-empty-object root-null root-array root-number events-number events-object; do
	bad "nothing-kineto-$f" 1 "$f.json: not a Kineto trace" "$GPUTAP" analyze "$K/$f.json"
done
bad nothing-kineto-events-empty 1 "events-empty.json: no GPU activity" "$GPUTAP" analyze "$K/events-empty.json"
bad nothing-kineto-cpu-only 1 "cpu-only.json: no GPU activity" "$GPUTAP" analyze "$K/cpu-only.json"
bad nothing-sqlite-empty 1 "empty-tables.sqlite: no GPU activity" "$GPUTAP" analyze "$S/empty-tables.sqlite"
bad nothing-gtr-header-only 1 "header-only.gtr: no GPU activity" "$GPUTAP" analyze "$R/header-only.gtr"
bad nothing-csv-header-only 1 "header-only: no GPU activity" "$GPUTAP" analyze "$B/csv/header-only"
bad nothing-csv-empty 1 "empty_cuda_gpu_kern_sum.csv:1: empty file (no header row)" "$GPUTAP" analyze "$B/csv/empty"
bad nothing-csv-mem-empty 1 "emptymem_cuda_gpu_mem_time_sum.csv:1: empty file (no header row)" "$GPUTAP" analyze "$B/csv/emptymem"
bad nothing-config-inputs-empty 1 "inputs-empty.json: \"inputs\" is empty" "$GPUTAP" analyze --config "$C/inputs-empty.json"
bad nothing-config-inputs-missing 1 "inputs-missing.json: no \"inputs\"" "$GPUTAP" analyze --config "$C/inputs-missing.json"
bad header-past-end 1 "header-past-end.gtr: byte 12: header size 4096 is past the end of the file" "$GPUTAP" analyze "$R/header-past-end.gtr"
bad header-past-end-convert 1 "header-past-end.gtr: byte 12: header size 4096 is past the end of the file" "$GPUTAP" convert "$R/header-past-end.gtr" -o "$T/c2"
rm -rf "$T/tf" && cp -r "$B/run/trace-is-folder" "$T/tf"
bad trace-folder-convert 1 "trace.gtr: is a folder, not a trace file" "$GPUTAP" convert "$T/tf"
rm -rf "$T/tf" && cp -r "$B/run/one-trace-is-folder" "$T/tf"
bad one-trace-folder-convert 1 "pid2/trace.gtr: is a folder, not a trace file" "$GPUTAP" convert "$T/tf"
if [ -f "$T/tf/pid1/trace.json" ]; then ok one-trace-folder-converts-rest; else notok one-trace-folder-converts-rest; fi
bad one-trace-folder-analyze 1 "pid2/trace.gtr: is a folder, not a trace file" "$GPUTAP" analyze "$T/tf"

# 5. library logs: tests/bad-input/liblog is a corpus of the liblog_* fuzz targets, whose invariant
# is that every recorded config reads back to the same text

# 6. ids kept exact or refused; duplicate ranks warned about
bad id-sqlite-2e32-plus-1 1 "device-2e32-plus-1.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL row 2: deviceId 4294967297 is not a device id" "$GPUTAP" analyze "$S/device-2e32-plus-1.sqlite"
bad id-sqlite-int64-max 1 "deviceId 9223372036854775807 is not a device id" "$GPUTAP" analyze "$S/device-int64-max.sqlite"
bad id-sqlite-negative 1 "deviceId -5 is not a device id" "$GPUTAP" analyze "$S/device-negative.sqlite"
bad id-gtr-ffffffff 1 "device 4294967295 is not a device id" "$GPUTAP" analyze "$R/device-ffffffff.gtr"
bad id-gtr-2e31 1 "device 2147483648 is not a device id" "$GPUTAP" analyze "$R/device-2e31.gtr"
bad id-kineto-device-2e32 1 "args.device 4294967296 is not a device id" "$GPUTAP" analyze "$K/device-2e32.json"
bad id-kineto-device-negative 1 "args.device -7 is not a device id" "$GPUTAP" analyze "$K/device-negative.json"
bad id-kineto-device-fraction 1 "args.device 1.5 is not a device id" "$GPUTAP" analyze "$K/device-fraction.json"
bad id-kineto-rank-negative 1 "distributedInfo.rank -3 is not a rank" "$GPUTAP" analyze "$K/rank-negative.json"
bad id-kineto-rank-1e300 1 "distributedInfo.rank 1e300 is not a rank" "$GPUTAP" analyze "$K/rank-1e300.json"
bad id-kineto-rank-2e32 1 "distributedInfo.rank 4294967296 is not a rank" "$GPUTAP" analyze "$K/rank-2e32.json"
bad id-kineto-rank-dup 0 'rank-dup-b.json: "rank1" again (also ' "$GPUTAP" analyze "$K/rank-dup-a.json" "$K/rank-dup-b.json"
contains id-kineto-rank-dup-apart "$T/b.out" "rank1 (rank-dup-b.json)/gpu0"
bad id-gtr-convert-exact 0 "" "$GPUTAP" convert "$R/device-ffffffff.gtr" -o "$T/c3" --format all
if grep -q '4294967295' "$T/c3/trace.json" && ! grep -q 'gpu-1\|GPU -1' "$T/c3/trace.json"; then ok id-gtr-convert-exact-json; else notok id-gtr-convert-exact-json; fi
rm -rf "$T/sd" && cp -r "$B/run/samples-device-absurd" "$T/sd"
bad id-samples-device 0 "gpu_samples.csv:2: device 1e300 is not a device id" "$GPUTAP" report "$T/sd"

# 7. times: refused when negative or beyond the clock, columns never run together
bad time-sqlite-start-negative 1 "start-negative.sqlite: table CUPTI_ACTIVITY_KIND_KERNEL row 1: start -100 is negative" "$GPUTAP" analyze "$S/start-negative.sqlite"
bad time-sqlite-end-negative 1 "end -1 is negative" "$GPUTAP" analyze "$S/end-negative.sqlite"
bad time-sqlite-real 1 "start is not an integer" "$GPUTAP" analyze "$S/time-real.sqlite"
bad time-kineto-1e308 1 "\"ts\" 1e308 is out of range" "$GPUTAP" analyze "$K/ts-1e308.json"
bad time-kineto-inf 1 "\"ts\" 1e999 is out of range" "$GPUTAP" analyze "$K/ts-inf.json"
bad time-kineto-huge-int 1 "is out of range" "$GPUTAP" analyze "$K/ts-huge-int.json"
bad time-kineto-negative 1 "\"ts\" -5.0 is negative" "$GPUTAP" analyze "$K/ts-negative.json"
bad time-kineto-dur-negative 1 "\"dur\" -5.0 is negative" "$GPUTAP" analyze "$K/dur-negative.json"
bad time-kineto-end-overflow 1 "ends past the clock's range" "$GPUTAP" analyze "$K/end-overflow.json"
bad time-gtr-start-max 1 "start_ns 18446744073709551615 is past the clock's range" "$GPUTAP" analyze "$R/start-max.gtr"
bad time-gtr-start-max-convert 0 "" "$GPUTAP" convert "$R/start-max.gtr" -o "$T/c4" --format all

# 8. --nvtx TAG that matches nothing, for every input kind
bad nvtx-nomatch-gtr 0 "no NVTX range named \"train\" in nvtx-nomatch.gtr (ranges seen: step)" "$GPUTAP" analyze --nvtx train "$R/nvtx-nomatch.gtr"
bad nvtx-nomatch-sqlite 0 "no NVTX range named \"train\" in nvtx-nomatch.sqlite (ranges seen: step)" "$GPUTAP" analyze --nvtx train "$S/nvtx-nomatch.sqlite"
bad nvtx-nomatch-kineto 0 "no NVTX range named \"train\" in nvtx-nomatch.json (ranges seen: ProfilerStep#N)" "$GPUTAP" analyze --nvtx train "$K/nvtx-nomatch.json"
rm -rf "$T/nm" && mkdir -p "$T/nm/pid1" && cp "$R/nvtx-nomatch.gtr" "$T/nm/pid1/trace.gtr"
bad nvtx-nomatch-run 0 "no NVTX range named \"train\" in nm (ranges seen: step)" "$GPUTAP" analyze --nvtx train "$T/nm"

# 9. messages that name the real cause
bad msg-header-truncated 1 "header-truncated.gtr: the header is cut short (100 of 160 bytes)" "$GPUTAP" analyze "$R/header-truncated.gtr"
lacks msg-header-truncated-not-size "invalid header size"
bad msg-config-null-item 1 "inputs-null-item.json: inputs[0] is not an object" "$GPUTAP" analyze --config "$C/inputs-null-item.json"
bad msg-config-number-item 1 "inputs-number-item.json: inputs[0] is not an object" "$GPUTAP" analyze --config "$C/inputs-number-item.json"
bad msg-config-kernel-sum-number 1 "kernel-sum-number.json: inputs[0].nsys_csv_file_path.kernel_sum must be a string (a file path), not a number" "$GPUTAP" analyze --config "$C/kernel-sum-number.json"
bad msg-config-kernel-sum-missing 1 "kernel-sum-missing.json: inputs[0].nsys_csv_file_path.kernel_sum must be given" "$GPUTAP" analyze --config "$C/kernel-sum-missing.json"
bad msg-iters-max 2 "--iters is at most 1000000, not '100000000'" "$GPUTAP" analyze --iters 100000000 "$B/csv/ok"
bad msg-gpus-max 2 "--gpus is at most 1000000, not '100000000'" "$GPUTAP" analyze --gpus 100000000 "$B/csv/ok"
bad msg-iters-word 2 "--iters wants a positive integer, not 'ten'" "$GPUTAP" analyze --iters ten "$B/csv/ok"
rm -rf "$T/rj" && cp -r "$B/run/run-json-folder" "$T/rj"
bad msg-run-json-folder 1 "run.json: is a folder, not a file" "$GPUTAP" report "$T/rj"
ln -s "$T/nowhere/at/all" "$T/dangling"
bad msg-run-dangling 2 "is a symbolic link to" "$GPUTAP" run -o "$T/dangling" -- true

# 10. terminal control characters are shown escaped; a BOM is accepted in Kineto JSON too;
# many distinct devices are read in linear time
for f in "$K/name-control.json" "$S/name-control.sqlite" "$R/name-control.gtr"; do
	"$GPUTAP" analyze --format text "$f" >"$T/ctl.out" 2>&1
	if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/ctl.out"; then
		notok "control-chars-$(basename "$f")" "$(cat -v "$T/ctl.out" | grep -m3 '\^')"
	else
		ok "control-chars-$(basename "$f")"
	fi
done
contains control-chars-shown "$T/ctl.out" 'evil\x1b[2J'
bad bom-kineto 0 "Kernel total instances: 1" "$GPUTAP" analyze "$K/bom.json"
python3 - "$T/many.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 1000 + i, "dur": 1,
       "args": {"device": i}} for i in range(60000)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
s0=$(date +%s%N)
bad many-devices 0 "Kernel total instances: 60000" "$GPUTAP" analyze "$T/many.json"
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
if [ "$ms" -lt 5000 ]; then ok many-devices-fast; else notok many-devices-fast "60000 devices took $ms ms"; fi

# 11. null is "not given" for every optional member of a GPU Performance Analyzer config
bad config-null-paths 0 "Kernel total instances: 2" "$GPUTAP" analyze --config "$C/paths-null.json"

# 12. JSON nested deeper than the tree parser's limit, in every file read whole (config, map,
# run.json, run --context-file): refused with the file and line, never a stack overflow
bad deep-config 1 "deep.json:1: JSON nested deeper than 512 levels" "$GPUTAP" analyze --config "$C/deep.json"
bad deep-map 1 "deep.json:1: JSON nested deeper than 512 levels" "$GPUTAP" analyze --map "$C/deep.json" "$B/csv/ok"
rm -rf "$T/rd" && cp -r "$B/run/run-json-deep" "$T/rd"
bad deep-run-json 1 "run.json:1: nested deeper than 512 levels" "$GPUTAP" report "$T/rd"
python3 -c 'import sys; n = 300000; sys.stdout.write("{\"tools\":\n" + "[" * n + "]" * n + "}")' >"$T/deep.json"
bad deep-context-file 2 "deep.json:2: JSON nested deeper than 512 levels" "$GPUTAP" run --context-file "$T/deep.json" -o "$T/rdeep" -- true
python3 -c 'import sys; n = 300000; sys.stdout.write("{\"gemm\":\n" + "[" * n + "]" * n + "}")' >"$T/deepmap.json"
bad deep-map-huge 1 "deepmap.json:2: JSON nested deeper" "$GPUTAP" analyze --map "$T/deepmap.json" "$B/csv/ok"
mkdir -p "$T/rd2" && cp -r "$B/run/run-json-deep/pid1" "$T/rd2/" && cp "$T/deep.json" "$T/rd2/run.json"
bad deep-run-json-huge 1 "run.json:2: nested deeper than 512 levels" "$GPUTAP" report "$T/rd2"

# 13. an empty range name that repeats (record_function(""), empty NVTX text) is never the
# iteration range: analyze, diff and report read it as no iterations
for f in "$K/range-empty-name.json" "$S/nvtx-empty-name.sqlite"; do
	n=$(basename "$f")
	bad "empty-range-analyze-$n" 0 "no NVTX range that repeats" "$GPUTAP" analyze "$f"
	bad "empty-range-diff-$n" 0 "Kernels: 0 added, 0 removed" "$GPUTAP" diff "$f" "$f"
	bad "empty-range-report-$n" 0 "empty-range.html" "$GPUTAP" report -o "$T/empty-range.html" "$f"
done

# 14. -o never renames over what is not a regular file: a character device or a FIFO is written
# into, a folder or a socket refused, a symbolic link's target replaced (the link stays)
rm -rf "$T/o" && mkdir "$T/o" && cp -r "$B/run/samples-absurd" "$T/o/run"
if mknod "$T/o/null" c 1 3 2>/dev/null; then dev="$T/o/null"; else dev=/dev/null; fi
bad out-chardev 0 "" "$GPUTAP" report --quiet -o "$dev" "$T/o/run"
if [ -c "$dev" ]; then ok out-chardev-kept; else notok out-chardev-kept "$(ls -l "$dev")"; fi
if [ -e "$dev.partial" ]; then notok out-chardev-no-partial "$(ls -l "$dev.partial")"; else ok out-chardev-no-partial; fi
mkfifo "$T/o/fifo"
(timeout 20 cat "$T/o/fifo" >"$T/o/fifo.out") &
bad out-fifo 0 "" "$GPUTAP" report --quiet -o "$T/o/fifo" "$T/o/run"
wait
if [ -p "$T/o/fifo" ] && grep -q '</html>' "$T/o/fifo.out"; then ok out-fifo-written; else notok out-fifo-written "$(ls -l "$T/o")"; fi
bad out-folder 1 "is a folder, not a file" "$GPUTAP" report -o "$T/o" "$T/o/run"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/o/sock"
bad out-socket 1 "a socket: never written or replaced" "$GPUTAP" report -o "$T/o/sock" "$T/o/run"
if [ -S "$T/o/sock" ]; then ok out-socket-kept; else notok out-socket-kept; fi
echo old >"$T/o/target.html" && ln -s target.html "$T/o/link.html"
bad out-symlink 0 "" "$GPUTAP" report --quiet -o "$T/o/link.html" "$T/o/run"
if [ -L "$T/o/link.html" ] && grep -q '</html>' "$T/o/target.html"; then ok out-symlink-kept; else notok out-symlink-kept "$(ls -l "$T/o")"; fi
mkdir -p "$T/o/conv" && mknod "$T/o/conv/trace.json" c 1 3 2>/dev/null || mkfifo "$T/o/conv/trace.json"
[ -p "$T/o/conv/trace.json" ] && (timeout 20 cat "$T/o/conv/trace.json" >/dev/null) &
bad out-convert-node 0 "" "$GPUTAP" convert "$R/name-nul.gtr" -o "$T/o/conv" --format json
wait
if [ -c "$T/o/conv/trace.json" ] || [ -p "$T/o/conv/trace.json" ]; then ok out-convert-node-kept; else notok out-convert-node-kept "$(ls -l "$T/o/conv")"; fi
# a link left as <page>.partial is removed, never written through
echo precious >"$T/o/precious" && ln -s "$T/o/precious" "$T/o/p2.html.partial"
bad out-partial-link 0 "" "$GPUTAP" report --quiet -o "$T/o/p2.html" "$T/o/run"
if [ "$(cat "$T/o/precious")" = precious ] && grep -q '</html>' "$T/o/p2.html"; then ok out-partial-link-not-followed; else notok out-partial-link-not-followed "$(head -c 200 "$T/o/precious")"; fi
# libperf writes library_trace.csv beside its -o: a node there is written into, never replaced
mkdir -p "$T/o/lp/logs" "$T/o/lp/out" && cp "$B/liblog/cublaslt-ldd-0.log" "$T/o/lp/logs/"
mknod "$T/o/lp/out/library_trace.csv" c 1 3 2>/dev/null || mkfifo "$T/o/lp/out/library_trace.csv"
[ -p "$T/o/lp/out/library_trace.csv" ] && (timeout 20 cat "$T/o/lp/out/library_trace.csv" >/dev/null) &
"$GPUTAP" libperf "$T/o/lp/logs" -o "$T/o/lp/out/library_perf.csv" >/dev/null 2>&1
wait
if [ -c "$T/o/lp/out/library_trace.csv" ] || [ -p "$T/o/lp/out/library_trace.csv" ]; then ok out-libtrace-node-kept; else notok out-libtrace-node-kept "$(ls -l "$T/o/lp/out")"; fi

# 15. a FIFO (or any node that is not a plain file) in place of <proc>/trace.gtr: a clear error
# in bounded time, never a reader blocked on it (git cannot hold a FIFO: made here)
rm -rf "$T/ff" && mkdir -p "$T/ff/pid1" && mkfifo "$T/ff/pid1/trace.gtr"
LIMIT_S=10
bad fifo-trace-analyze 1 "pid1/trace.gtr: not a plain file (a FIFO" "$GPUTAP" analyze "$T/ff"
bad fifo-trace-diff 1 "pid1/trace.gtr: not a plain file (a FIFO" "$GPUTAP" diff "$T/ff" "$T/ff"
bad fifo-trace-convert 1 "pid1/trace.gtr: not a plain file (a FIFO" "$GPUTAP" convert "$T/ff" -o "$T/ff-out"
bad fifo-trace-file 1 "trace.gtr: not a plain file (a FIFO" "$GPUTAP" analyze "$T/ff/pid1/trace.gtr"
LIMIT_S=${GT_BAD_INPUT_TIMEOUT:-20}

# 16. an nsys SQLite whose kernel table is a view (here a recursive one whose rows never end):
# refused at once; every SQLite read is bounded anyway
LIMIT_S=10
bad sqlite-view 1 "CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table" "$GPUTAP" analyze "$S/kernel-view-recursive.sqlite"
bad sqlite-view-report 1 "CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table" "$GPUTAP" report -o "$T/v.html" "$S/kernel-view-recursive.sqlite"
LIMIT_S=${GT_BAD_INPUT_TIMEOUT:-20}

# 17. report and analyze agree on what a run directory is (run.json or <proc>/trace.gtr): any
# other folder is read as a folder of PyTorch profiler traces (one rank per file, as HTA reads
# it), else refused with no page dropped into it; a damaged run gets its page, the damage named
# on stderr and exit status 1
rm -rf "$T/nr" && mkdir -p "$T/nr" && echo hello >"$T/nr/notes.txt"
bad not-a-run-report 1 "not a gputap run directory (no run.json, no <proc>/trace.gtr)" "$GPUTAP" report "$T/nr"
if [ -e "$T/nr/report.html" ]; then notok not-a-run-report-no-page; else ok not-a-run-report-no-page; fi
bad not-a-run-analyze 1 "not a gputap run directory (no run.json, no <proc>/trace.gtr)" "$GPUTAP" analyze "$T/nr"
rm -rf "$T/kf" && mkdir -p "$T/kf" && cp "$FIX"/kineto-2rank-nccl/rank*.json.gz "$T/kf/"
"$GPUTAP" analyze --format json "$FIX"/kineto-2rank-nccl/rank0.json.gz "$FIX"/kineto-2rank-nccl/rank1.json.gz |
	grep -v '"title"' >"$T/kf-files.json"
bad kineto-folder-analyze 0 "" "$GPUTAP" analyze --format json "$T/kf"
grep -v '"title"' "$T/b.out" >"$T/kf-dir.json"
if [ -s "$T/kf-dir.json" ] && cmp -s "$T/kf-files.json" "$T/kf-dir.json"; then ok kineto-folder-as-files; else notok kineto-folder-as-files "$(diff "$T/kf-files.json" "$T/kf-dir.json" | head -5)"; fi
(cd "$T" && bad kineto-folder-report 0 "inputs       2 traces (in 1 input)" "$GPUTAP" report "$T/kf")
if [ -e "$T/kf/report.html" ] || [ ! -s "$T/report.html" ]; then notok kineto-folder-report-page "$(ls "$T/kf" "$T")"; else ok kineto-folder-report-page; fi
rm -rf "$T/ff2" && mkdir -p "$T/ff2/pid1" && mkfifo "$T/ff2/pid1/trace.gtr"
bad damaged-run-report 1 "gputap: warning: $T/ff2/pid1/trace.gtr: not a plain file" "$GPUTAP" report "$T/ff2"
if [ -s "$T/ff2/report.html" ]; then ok damaged-run-report-page; else notok damaged-run-report-page; fi
# a run that recorded nothing (no process used CUDA, or no driver): a run to both commands
rm -rf "$T/er" && mkdir -p "$T/er" && echo '{"command": ["true"], "exit_code": 0}' >"$T/er/run.json"
bad empty-run-analyze 1 "a gputap run with no <proc>/trace.gtr in it" "$GPUTAP" analyze "$T/er"
bad empty-run-report 0 "$T/er/report.html" "$GPUTAP" report "$T/er"

# 18. gputap run with no NVIDIA driver says so before the command starts and at its end; the run
# folder it leaves is a run to analyze and report
GPUTAP_CUDA_LIB="$T/no-libcuda.so" "$GPUTAP" run -o "$T/nodrv" -- sh -c 'echo command-ran' >"$T/nodrv.out" 2>&1
if grep -q "no NVIDIA driver here (libcuda.so.1 cannot be loaded): the command runs, but no GPU work can be recorded" "$T/nodrv.out" &&
	[ "$(grep -n 'no NVIDIA driver here' "$T/nodrv.out" | cut -d: -f1)" -lt "$(grep -n command-ran "$T/nodrv.out" | cut -d: -f1)" ]; then
	ok no-driver-said-first
else
	notok no-driver-said-first "$(cat "$T/nodrv.out")"
fi
contains no-driver-said-last "$T/nodrv.out" "no GPU work recorded (no NVIDIA driver)"
bad no-driver-analyze 1 "a gputap run with no <proc>/trace.gtr in it" "$GPUTAP" analyze "$T/nodrv"
bad no-driver-report 0 "$T/nodrv/report.html" "$GPUTAP" report "$T/nodrv"

# 19. options the tap would only warn about are usage errors of run, as --tools is; one message each
bad usage-trace-bogus 2 "--trace 'bogus': expected a comma list of api" "$GPUTAP" run --trace bogus -o "$T/ub1" -- true
bad usage-buffer-mb-0 2 "--buffer-mb '0': expected a whole number of MiB from 1 to 65536" "$GPUTAP" run --buffer-mb 0 -o "$T/ub2" -- true
bad usage-buffer-mb-huge 2 "--buffer-mb '70000'" "$GPUTAP" run --buffer-mb 70000 -o "$T/ub3" -- true
bad usage-hold-huge 2 "--hold '70000': expected 0 (no hold) or the launches per batch, 1 to 65536" "$GPUTAP" run --hold 70000 -o "$T/ub3" -- true
if [ -e "$T/ub1" ] || [ -e "$T/ub2" ] || [ -e "$T/ub3" ]; then notok usage-no-run-folder; else ok usage-no-run-folder; fi
bad usage-buckets-0 2 "--buckets wants an integer from 1 to 10000, not '0'" "$GPUTAP" analyze --buckets 0 "$B/csv/ok"
if [ "$(grep -c 'error' "$T/b.all")" -eq 1 ]; then ok usage-buckets-0-one-message; else notok usage-buckets-0-one-message "$(cat "$T/b.all")"; fi

# 20. the text's per-iteration table is capped at 200 rows (as the report's tables), saying how
# many were left out; --all-rows shows them all
python3 - "$T/steps.json" <<'PY'
import json, sys
ev = []
for i in range(300):
    t = 1000 + i * 100
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1, "ts": t, "dur": 90})
    ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": t + 10, "dur": 5,
               "args": {"device": 0, "stream": 7}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
bad rows-capped 0 "... 100 more rows left out (200 shown); --all-rows shows them" "$GPUTAP" analyze "$T/steps.json"
n=$(grep -c '^[0-9][0-9]* steps.json/gpu0 ' "$T/b.out")
[ "$n" -eq 200 ] && ok rows-capped-200 || notok rows-capped-200 "$n rows"
bad rows-all 0 "299 steps.json/gpu0" "$GPUTAP" analyze --all-rows "$T/steps.json"
lacks rows-all-nothing-left-out "more rows left out"

# 21. a library log with a 100 MB line: read in bounded memory and linear time, the line skipped
# as a bad one and the lines after it read (libperf collects the logs before it needs a GPU)
mkdir -p "$T/ll"
{ cat "$B/liblog/cublaslt-ldd-0.log"; head -c 100000000 /dev/zero | tr '\0' x; echo; cat "$B/liblog/cublaslt-ldd-0.log"; } >"$T/ll/b.log"
LIMIT_KB=120000 LIMIT_S=10
bad longline-log 1 "b.log:2: a line of more than 1 MiB; skipped" "$GPUTAP" libperf "$T/ll" -o "$T/ll-out/library_perf.csv"
contains longline-log-read-on "$T/b.all" "b.log:3: cuBLASLt matmul"
LIMIT_KB=400000 LIMIT_S=${GT_BAD_INPUT_TIMEOUT:-20}
rm -f "$T/ll/b.log"

# 22. a Kineto trace holding a 100 MB string: linear time (yajl's lexer took 36 s; analyze/jscan
# hands a long string over once); memory about the string's size
python3 -c 'import sys; sys.stdout.write("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1000, \"dur\": 5, \"args\": {\"device\": 0}}], \"big\": \"" + "x" * 100000000 + "\"}")' >"$T/bigstr.json"
LIMIT_S=8
s0=$(date +%s%N)
bad bigstring-kineto 0 "Kernel total instances: 1" "$GPUTAP" analyze "$T/bigstr.json"
ms=$(( ($(date +%s%N) - s0) / 1000000 ))
[ "$ms" -lt 4000 ] && ok bigstring-kineto-linear || notok bigstring-kineto-linear "100 MB string took $ms ms"
LIMIT_S=${GT_BAD_INPUT_TIMEOUT:-20}
rm -f "$T/bigstr.json"

finish
