#!/usr/bin/env bash
# The report's plots agree with the tables beside them and with gputap analyze (read from the page's
# SVG as text; tests/cli/t_report_browser.sh checks the same in a browser): the bandwidth plot's peak
# is the table's, the launch-delay bars are the p90, iterations are numbered as analyze numbers them,
# a warm-up iteration does not flatten the others, long names are short in tables (whole on hover),
# no number has an exponent, the zoomed iteration draws its rank only, unknown values are "-".
. "$(dirname "$0")/lib.sh"
K="$FIX/kineto-2rank-nccl"
D="$T/p"
python3 "$GT_TEST_SRCDIR/analyze-data/make_parity_inputs.py" "$D" || notok generate "make_parity_inputs.py failed"
pics() { # PREFIX PAGE JSON TXT [--warmup]: the checks of check_pictures.py, named PREFIX-CHECK
	local p=$1
	shift
	python3 "$GT_TEST_SRCDIR/report/check_pictures.py" "$@" >"$T/$p.chk" 2>&1
	grep -q '^ok \|^not ok ' "$T/$p.chk" || notok "$p-runs" "$(cat "$T/$p.chk")"
	while read -r st rest; do
		if [ "$st" = ok ]; then ok "$p-$rest"; else notok "$p-${rest%%:*}" "$rest"; fi
	done < <(grep '^ok \|^not ok ' "$T/$p.chk" | sed 's/^not ok /not /')
}
"$GPUTAP" report -o "$T/two.html" "$K/rank0.json.gz" "$K/rank1.json.gz" >/dev/null 2>&1 || notok two-report
"$GPUTAP" analyze --format json "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/two.json" 2>/dev/null
"$GPUTAP" analyze "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/two.txt" 2>/dev/null
pics two-ranks "$T/two.html" "$T/two.json" "$T/two.txt"

"$GPUTAP" report -o "$T/ws.html" "$D/warmstep.json" >/dev/null 2>&1 || notok warmup-report
"$GPUTAP" analyze --format json "$D/warmstep.json" >"$T/ws.json" 2>/dev/null
"$GPUTAP" analyze "$D/warmstep.json" >"$T/ws.txt" 2>/dev/null
pics warmup "$T/ws.html" "$T/ws.json" "$T/ws.txt" --warmup

# what cannot be known is "-" on the page too (no launch call in the trace)
"$GPUTAP" report -o "$T/nl.html" "$D/nolaunch.json" >/dev/null 2>&1 || notok nolaunch-report
if grep -q '<td>nolaunch.json</td><td class="n">2</td><td class="n">0</td><td class="n">-</td><td class="n">-</td>' "$T/nl.html" &&
	grep -q '<td class="n">-</td><td class="n">-</td><td class="n">-</td><td class="n">0</td><td><code' "$T/nl.html"; then
	ok unknown-delays-are-dash
else
	notok unknown-delays-are-dash "$(grep -o '<td>nolaunch.json</td>.*' "$T/nl.html" | head -3)"
fi
finish
