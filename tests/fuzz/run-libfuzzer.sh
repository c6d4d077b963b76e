#!/usr/bin/env bash
# Runs each libFuzzer target (make fuzz) for GT_FUZZ_SECONDS (default 10) on a scratch copy of
# its corpus, with ASan, UBSan, leak checks, a 10 s limit per input and bounded memory (no input
# may take more than 1 GiB, nor allocate 128 MiB at once).  Prints "ok fuzz-lf/NAME (runs)" or
# "not ok fuzz-lf/NAME" with the input that failed, kept in $O/libfuzzer/crashes/.
#   tests/fuzz/run-libfuzzer.sh [NAME...]          (O=build by default)
set -u
O=${O:-build}
secs=${GT_FUZZ_SECONDS:-10}
cd "$(dirname "$0")/../.."
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for t in tests/fuzz/fuzz_*.c; do
		n=${t#tests/fuzz/fuzz_}
		names+=("${n%.c}")
	done
fi
mkdir -p "$O/libfuzzer/crashes"
for n in "${names[@]}"; do
	b="$O/libfuzzer/lf-$n"
	if [ ! -x "$b" ]; then
		echo "not ok fuzz-lf/$n (not built: 'make fuzz' needs clang with libFuzzer; tools/setup-deps.sh installs it)"
		continue
	fi
	w=$(mktemp -d)
	mkdir "$w/new"
	"$b" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=128 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$w/" "$w/new" "tests/fuzz/corpus/$n" >"$w/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -n 1)
	found=$(find "$w" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -n 1)
	if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
		echo "ok fuzz-lf/$n (${runs:-?} runs in ${secs} s)"
	else
		kept=""
		if [ -n "$found" ]; then
			kept="$O/libfuzzer/crashes/$n-$(basename "$found")"
			cp "$found" "$kept"
		fi
		echo "not ok fuzz-lf/$n (exit $rc${kept:+; input kept as $kept})"
		grep -E 'ERROR|runtime error|SUMMARY|#0 |#1 |#2 |#3 ' "$w/log" | head -n 12 | sed 's/^/    /'
	fi
	rm -rf "$w"
done
