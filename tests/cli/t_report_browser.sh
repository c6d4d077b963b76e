#!/usr/bin/env bash
# report.html in a real browser (headless Chromium, installed by tools/setup-deps.sh): a screenshot
# of the page, and the DOM the browser laid out, read by tests/report/browser_check.js injected into
# a copy of the page: the bandwidth plot's peak label is the table's peak, the launch-delay bars'
# p90 labels are the table's p90, the iteration labels are gputap analyze's numbers, and each such
# label lies inside its plot.  Without a browser this is a failure, not a skip.
. "$(dirname "$0")/lib.sh"
K="$FIX/kineto-2rank-nccl"
B=""
for c in chromium chromium-browser google-chrome; do
	command -v "$c" >/dev/null 2>&1 && B=$c && break
done
if [ -z "$B" ]; then
	notok browser "no headless browser (chromium): tools/setup-deps.sh installs Debian's chromium"
	finish
fi
# a profile of its own, no sandbox (tests may run as root), no GPU
br() { HOME="$T" timeout 120 "$B" --headless --no-sandbox --disable-gpu --user-data-dir="$T/profile" \
	--no-first-run --virtual-time-budget=5000 "$@" 2>"$T/browser.err"; }
"$GPUTAP" report -o "$T/two.html" "$K/rank0.json.gz" "$K/rank1.json.gz" >/dev/null 2>&1 || notok two-report
"$GPUTAP" analyze --format json "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/two.json" 2>/dev/null
"$GPUTAP" analyze "$K/rank0.json.gz" "$K/rank1.json.gz" >"$T/two.txt" 2>/dev/null
python3 - "$T/two.html" "$GT_TEST_SRCDIR/report/browser_check.js" "$T/probe.html" <<'PY'
import sys
page, js = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", "<script>\n" + js + "\n</script></body>"))
PY
br --dump-dom "file://$T/probe.html" >"$T/dom.html" || notok dump-dom "$(tail -5 "$T/browser.err")"
br --window-size=1200,3000 --screenshot="$T/shot.png" "file://$T/two.html" >/dev/null || notok screenshot "$(tail -5 "$T/browser.err")"
python3 "$GT_TEST_SRCDIR/report/check_browser.py" "$T/dom.html" "$T/two.json" "$T/two.txt" "$T/shot.png" 1200 3000 >"$T/b.chk" 2>&1
grep -q '^ok \|^not ok ' "$T/b.chk" || notok check-runs "$(head -c 2000 "$T/b.chk")"
while read -r st rest; do
	if [ "$st" = ok ]; then ok "$rest"; else notok "${rest%%:*}" "$(printf '%s' "$rest" | head -c 1500)"; fi
done < <(grep '^ok \|^not ok ' "$T/b.chk" | sed 's/^not ok /not /')
finish
