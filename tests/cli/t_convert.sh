#!/usr/bin/env bash
# gputap convert: a trace, a process directory, a run directory, damaged and missing input.
. "$(dirname "$0")/lib.sh"
G="$(dirname "$0")/../golden/out"

mkdir -p "$T/run/rank0" "$T/run/rank1"
cp "$G/sample.gtr" "$T/run/rank0/trace.gtr"
cp "$G/sample.gtr" "$T/run/rank1/trace.gtr"

# a trace file, all formats, into -o
expect_status file 0 "$GPUTAP" convert "$T/run/rank0/trace.gtr" -o "$T/o1" --format all
for r in cuda_gpu_kern_sum cuda_gpu_mem_time_sum cuda_gpu_mem_size_sum cuda_api_sum nvtx_sum nvtx_gpu_proj_trace; do
	if cmp -s "$T/o1/trace_$r.csv" "$G/trace_$r.csv"; then ok "file-$r"; else notok "file-$r" "$(diff "$T/o1/trace_$r.csv" "$G/trace_$r.csv")"; fi
done
if cmp -s "$T/o1/metrics.log" "$G/metrics.log"; then ok file-metrics; else notok file-metrics; fi
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["otherData"]["proc"]=="rank0"' "$T/o1/trace.json" 2>"$T/.err"; then
	ok file-json-valid
else
	notok file-json-valid "$(cat "$T/.err")"
fi
if ls "$T/o1"/*.partial >/dev/null 2>&1; then notok file-no-partial-left; else ok file-no-partial-left; fi
# json.gz: the same JSON, gzip-compressed, instead of trace.json
expect_status file-json-gz 0 "$GPUTAP" convert "$T/run/rank0/trace.gtr" -o "$T/o1z" --format json.gz
contains file-json-gz-named "$T/.out" "trace.json.gz"
if gzip -dc "$T/o1z/trace.json.gz" | cmp -s - "$T/o1/trace.json" && [ ! -e "$T/o1z/trace.json" ]; then
	ok file-json-gz-same
else
	notok file-json-gz-same "$(ls "$T/o1z")"
fi
# a write error (a full disk: here a file-size limit of 0 with SIGXFSZ ignored, so that every
# write fails with EFBIG) is an error and leaves neither the file nor its .partial (a link left
# as the .partial is removed, never written through: t_bad_input)
mkdir -p "$T/o1f"
# (its messages through a pipe: the limit would stop them too)
expect_status file-json-gz-full 1 bash -c '(trap "" XFSZ; ulimit -f 0; exec "$@") 2>&1 | cat; exit "${PIPESTATUS[0]}"' sh \
	"$GPUTAP" convert "$T/run/rank0/trace.gtr" -o "$T/o1f" --format json.gz
contains file-json-gz-full-msg "$T/.out" "write failed"
if [ ! -e "$T/o1f/trace.json.gz" ] && [ ! -e "$T/o1f/trace.json.gz.partial" ]; then
	ok file-json-gz-full-none
else
	notok file-json-gz-full-none "$(ls -l "$T/o1f")"
fi

# the CSVs are an nsys CSV prefix for gputap analyze
expect_status analyze-reads-prefix 0 "$GPUTAP" analyze "$T/o1/trace"
contains analyze-kernels "$T/.out" "Kernel total instances: 5"

# a run directory, in place, default formats (json, csv; no metrics/timeline logs)
expect_status rundir 0 "$GPUTAP" convert "$T/run"
if [ -f "$T/run/rank0/trace.json" ] && [ -f "$T/run/rank1/trace_cuda_gpu_kern_sum.csv" ]; then ok rundir-files; else notok rundir-files "$(ls -R "$T/run")"; fi
if [ ! -e "$T/run/rank0/metrics.log" ]; then ok rundir-default-no-logs; else notok rundir-default-no-logs; fi

# a process directory into -o
expect_status procdir 0 "$GPUTAP" convert "$T/run/rank1" -o "$T/o2" --format=csv
if [ -f "$T/o2/trace_nvtx_gpu_proj_trace.csv" ] && [ ! -e "$T/o2/trace.json" ]; then ok procdir-csv-only; else notok procdir-csv-only "$(ls "$T/o2")"; fi

# a partial trace (only trace.gtr.partial): converted, with a warning, marked in trace.json
mkdir -p "$T/p"
cp "$G/sample.gtr" "$T/p/trace.gtr.partial"
expect_status partial 0 "$GPUTAP" convert "$T/p/trace.gtr"
contains partial-warns "$T/.out" "partial"
contains partial-in-json "$T/p/trace.json" '"partial":true'

# a damaged trace: exit 1, the file and the byte offset named
cp "$G/sample.gtr" "$T/bad.gtr"
printf '\x0c\x00' | dd of="$T/bad.gtr" bs=1 seek=194 conv=notrunc 2>/dev/null  # 2nd record's size := 12
expect_status damaged 1 "$GPUTAP" convert "$T/bad.gtr" -o "$T/o3"
contains damaged-names-file "$T/.out" "bad.gtr"
contains damaged-names-offset "$T/.out" "byte "
if [ ! -e "$T/o3/trace.json" ] && ! ls "$T/o3"/*.partial >/dev/null 2>&1; then ok damaged-no-output; else notok damaged-no-output "$(ls "$T/o3")"; fi

# not a trace at all
echo "hello" >"$T/notatrace.gtr"
expect_status not-a-trace 1 "$GPUTAP" convert "$T/notatrace.gtr"
contains not-a-trace-msg "$T/.out" "not a gputap trace"

# missing input, empty directory, usage errors, help
expect_status missing 1 "$GPUTAP" convert "$T/nope.gtr"
contains missing-msg "$T/.out" "nope.gtr"
mkdir -p "$T/empty"
expect_status empty-dir 1 "$GPUTAP" convert "$T/empty"
contains empty-dir-msg "$T/.out" "no gputap trace"
expect_status no-input 2 "$GPUTAP" convert
expect_status bad-format 2 "$GPUTAP" convert "$T/run" --format xml
expect_status bad-option 2 "$GPUTAP" convert "$T/run" --frobnicate
expect_status help 0 "$GPUTAP" convert --help
contains help-usage "$T/.out" "usage: gputap convert INPUT"
contains help-formats "$T/.out" "--format"
# kernel names demangled in every human-facing output, kept mangled in the trace
R="$(dirname "$0")/../../examples/recorded/torch-train"
expect_status demangle-convert 0 "$GPUTAP" convert "$(ls -d "$R"/pid*/trace.gtr | head -n1)" -o "$T/dm" --format all
if grep -q "_Z" "$T/dm"/*.csv; then notok demangle-no-mangled-csv "$(grep -h "_Z" "$T/dm"/*.csv | head -n 3)"; else ok demangle-no-mangled-csv; fi
contains demangle-csv-readable "$T/dm/trace_cuda_gpu_kern_sum.csv" "void at::native::"
if python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
k=[e["name"] for e in d["traceEvents"] if e.get("cat")=="kernel"]
assert k and not any(n.startswith("_Z") for n in k), k[:3]' "$T/dm/trace.json" 2>"$T/.err"; then ok demangle-json; else notok demangle-json "$(cat "$T/.err")"; fi
if grep -qa "_ZN2at6native" "$(ls -d "$R"/pid*/trace.gtr | head -n1)"; then ok demangle-trace-keeps-mangled; else notok demangle-trace-keeps-mangled; fi
expect_status demangle-analyze 0 "$GPUTAP" analyze "$R"
if grep -q "_Z" "$T/.out"; then notok demangle-analyze-readable "$(grep "_Z" "$T/.out" | head -n 3)"; else ok demangle-analyze-readable; fi

finish
