#!/usr/bin/env bash
# Runs every CPU test and ends with one line "N passed, N failed".
# Each test prints "ok NAME" or "not ok NAME"; this script counts them.
#   unit tests (normal and ASan+UBSan builds), fuzz regressions on their
#   corpora (both builds), CLI tests (tests/cli/*.sh), Python tests.
set -u
O=${O:-build}
PYTHON=${PYTHON:-python3}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export GT_TEST_SRCDIR="$top/tests"
case "$O" in /*) ob=$O ;; *) ob=$top/$O ;; esac
export GPUTAP="$ob/gputap" LIBGPUTAP="$ob/libgputap.so"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() { # NAME CMD...: run a test program, keep its ok/not ok lines
	local name=$1
	shift
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(not ok|ok) ' >>"$log"
	printf '%s\n' "$out" | grep -E '^(not ok|ok) |^[a-z-]+: [0-9]+ passed'
	if [ $rc -ne 0 ] || printf '%s\n' "$out" | grep -q '^not ok '; then
		printf '%s\n' "$out" | grep -v -E '^(not ok|ok) ' | tail -n 60 | sed 's/^/    /'
		if ! printf '%s\n' "$out" | grep -q '^not ok '; then
			echo "not ok $name (exit status $rc)" | tee -a "$log"
		fi
	fi
	return 0
}

# The sanitizer stage proves it sanitizes: every binary of $O/san carries ASan's and
# UBSan's checks, and a deliberate heap overread and signed overflow are reported.
san_proof() {
	local b n bins=("$O/san/unit-tests" "$O/san/gputap")
	for n in "$O"/fuzz/*; do bins+=("$O/san/fuzz/$(basename "$n")"); done
	for b in "${bins[@]}"; do
		n=${b#"$O/san/"}
		if [ ! -x "$b" ]; then
			echo "not ok san/instrumented/$n (missing: the sanitizer build did not run)"
		elif nm "$b" | grep -q '__asan_report_load' && nm "$b" | grep -q '__ubsan_handle_'; then
			echo "ok san/instrumented/$n"
		else
			echo "not ok san/instrumented/$n (no ASan/UBSan instrumentation)"
		fi
	done
	local out
	out=$("$O/san/unit-tests" --sanitizer-probe heap 2>&1)
	if [ $? -ne 0 ] && printf '%s' "$out" | grep -q 'heap-buffer-overflow'; then
		echo "ok san/probe-heap-overread"
	else
		echo "not ok san/probe-heap-overread (not reported: $out)"
	fi
	out=$("$O/san/unit-tests" --sanitizer-probe ub 2>&1)
	if [ $? -ne 0 ] && printf '%s' "$out" | grep -q 'runtime error: signed integer overflow'; then
		echo "ok san/probe-signed-overflow"
	else
		echo "not ok san/probe-signed-overflow (not reported: $out)"
	fi
}
run san san_proof

run unit "$O/unit-tests"
ASAN_OPTIONS=detect_leaks=1 run unit-san sh -c "'$O/san/unit-tests' | sed 's/^\(not ok\|ok\) unit\//\1 unit-san\//'"
# the tap's lock-free tables under ThreadSanitizer: a data race fails the test
for f in tap_strtab tap_open; do
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" run unit-tsan sh -c "'$O/tsan/tap-unit-tests' $f | sed 's/^\(not ok\|ok\) unit\//\1 unit-tsan\//'"
done

for f in "$O"/fuzz/*; do
	[ -x "$f" ] || continue
	n=$(basename "$f")
	run "fuzz/$n" "$f" "tests/fuzz/corpus/$n"
	run "fuzz-san/$n" sh -c "'$O/san/fuzz/$n' 'tests/fuzz/corpus/$n' | sed 's/^\(not ok\|ok\) fuzz\//\1 fuzz-san\//'"
done

# each libFuzzer target for a fixed time (make fuzz builds them when clang is there)
if command -v clang >/dev/null; then
	run fuzz-lf tests/fuzz/run-libfuzzer.sh
else
	echo "not ok fuzz-lf (no clang: tools/setup-deps.sh installs clang and libFuzzer)" | tee -a "$log"
fi

# the malformed-input corpus once more through the CLI built with ASan and UBSan
run cli-san/t_bad_input sh -c "GPUTAP='$O/san/gputap' GT_BAD_INPUT_SAN=1 bash tests/cli/t_bad_input.sh | sed 's/^\(not ok\|ok\) cli\//\1 cli-san\//'"

for t in tests/cli/t_*.sh; do
	[ -f "$t" ] || continue
	run "cli/$(basename "$t" .sh)" bash "$t"
done

if [ -d python/tests ] && "$PYTHON" -c 'import pytest' 2>/dev/null; then
	run python sh -c "cd python && PYTHONPATH=. GPUTAP_LIB='$LIBGPUTAP' '$PYTHON' -m pytest -q -rA tests 2>&1 | sed -n 's/^PASSED \(.*\)/ok python\/\1/p; s/^FAILED \(.*\)/not ok python\/\1/p; s/^ERROR \(.*\)/not ok python\/\1/p'"
fi

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
if [ "$passed" -eq 0 ]; then
	echo "no test ran"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
