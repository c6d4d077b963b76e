#!/usr/bin/env bash
# Calls with a sharp edge that gputap reaches only through its own helper:
#   qsort  -> gt_sort (core/sort.h): qsort(NULL, 0, ...) is undefined behaviour.
# Calls allowed on purpose carry a trailing comment "/* lint-ok: why */".
set -u
cd "$(dirname "$0")/../.."
banned='\bqsort\s*\('
bad=0
for f in $(find src tests/unit tests/fuzz -name '*.[ch]'); do
	if grep -nE "$banned" "$f" | grep -v 'lint-ok' | grep -vE '^[0-9]+:\s*(\*|//)'; then
		echo "  ^ $f: use gt_sort (core/sort.h)"
		bad=1
	fi
done
exit $bad
