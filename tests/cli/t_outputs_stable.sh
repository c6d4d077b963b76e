#!/usr/bin/env bash
# Outputs that a move of code must not change, byte for byte, against files made
# before it (tests/golden/stable, gzip-compressed):
#   gputap convert --format all of the recorded traces (tests/fixtures/trace-v1, trace-v2 and
#   tests/golden/out/sample.gtr): trace.json, the nsys-style CSVs, metrics.log, timeline.log;
#   gputap convert --format gtr of the same traces (the trace rewritten in today's format);
#   the range-metrics table that gputap report prints and writes into report.html for
#   tests/fixtures/range-metrics (the table only: the rest of the report is not covered here).
# GT_STABLE_WRITE=1 writes the goldens from $GPUTAP instead of checking (only on purpose, with
# a binary from before the change whose outputs must stay).
. "$(dirname "$0")/lib.sh"
GOLD="$GT_TEST_SRCDIR/golden/stable"

# out_check NAME FILE: FILE equals $GOLD/NAME.gz (or becomes it when writing)
out_check() {
	local name=$1 file=$2
	if [ "${GT_STABLE_WRITE:-0}" = 1 ]; then
		mkdir -p "$(dirname "$GOLD/$name")"
		gzip -n -9 -c "$file" >"$GOLD/$name.gz"
		ok "write/$name"
	elif [ ! -f "$GOLD/$name.gz" ]; then
		notok "$name" "no golden $GOLD/$name.gz"
	elif gzip -dc "$GOLD/$name.gz" | cmp -s - "$file"; then
		ok "$name"
	else
		notok "$name" "$(gzip -dc "$GOLD/$name.gz" | diff - "$file" | head -n 20)"
	fi
}

FILES="trace.json trace_cuda_gpu_kern_sum.csv trace_cuda_gpu_mem_time_sum.csv trace_cuda_gpu_mem_size_sum.csv
trace_cuda_api_sum.csv trace_nvtx_sum.csv trace_nvtx_gpu_proj_trace.csv metrics.log timeline.log"
for t in trace-v1:"$FIX/trace-v1/trace.gtr" trace-v2:"$FIX/trace-v2/trace.gtr" \
	sample:"$GT_TEST_SRCDIR/golden/out/sample.gtr"; do
	name=${t%%:*}
	mkdir -p "$T/$name"
	cp "${t#*:}" "$T/$name/trace.gtr"
	expect_status "$name/convert-all" 0 "$GPUTAP" convert "$T/$name/trace.gtr" -o "$T/$name/all" --format all
	for f in $FILES; do
		out_check "$name/$f" "$T/$name/all/$f"
	done
	expect_status "$name/convert-gtr" 0 "$GPUTAP" convert "$T/$name/trace.gtr" -o "$T/$name/gtr" --format gtr
	out_check "$name/trace.gtr" "$T/$name/gtr/trace.gtr"
done

# the range-metrics tables of a run recorded on an H100
mkdir -p "$T/rm"
cp -r "$FIX/range-metrics/pid2621" "$T/rm/"
expect_status rm/report 0 "$GPUTAP" report "$T/rm"
sed -n '/^Range metrics of /,/^  per kernel: /p' "$T/.out" >"$T/rm.txt"
[ -s "$T/rm.txt" ] && ok rm/table-found || notok rm/table-found "$(cat "$T/.out")"
out_check rm/table.txt "$T/rm.txt"
sed -n '/<h2 id="range-metrics">/,/<\/table>/p' "$T/rm/report.html" >"$T/rm.html"
[ -s "$T/rm.html" ] && ok rm/html-table-found || notok rm/html-table-found
out_check rm/table.html "$T/rm.html"
finish
