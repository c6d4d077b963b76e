#!/usr/bin/env bash
# The findings' cost: `gputap advise` against `gputap analyze` without the findings, on the same
# generated inputs (bench/analyze/gen.c: a Kineto trace, an nsys SQLite export, a gputap trace).
#
#   bench/findings/run.sh [GPUTAP]
#
# The baseline is the same tree with the findings switched off in analyze (a copy of HEAD with
# `o.findings = 0` in src/cli/cmd_analyze.c, built into $WORK/base), so the ratio is the findings'
# own cost.  RUNS runs of each, interleaved (default 7); the median CPU time (user + system: less
# sensitive than wall time to other work on the machine) and the median wall time.
#   KINETO_MB (100) SQLITE_KERNELS (1000000) GTR_KERNELS (1000000) WORK (/tmp/gputap-bench-findings)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-/tmp/gputap-bench-findings}
RUNS=${RUNS:-7}
mkdir -p "$WORK"
G=${1:-$top/build/gputap}
[ -x "$G" ] || make -C "$top" -s build/gputap >/dev/null
if [ ! -x "$WORK/base/b/gputap" ]; then
	rm -rf "$WORK/base" && mkdir -p "$WORK/base"
	git -C "$top" archive HEAD | tar -x -C "$WORK/base"
	sed -i 's|o.findings = 1;|o.findings = 0;|' "$WORK/base/src/cli/cmd_analyze.c"
	make -C "$WORK/base" -s O=b b/gputap >/dev/null
fi
B=$WORK/base/b/gputap
cc -O2 -I"$top/include" -I"$top/src" -o "$WORK/gen" "$top/bench/analyze/gen.c" -lsqlite3
K=${KINETO_MB:-100} S=${SQLITE_KERNELS:-1000000} R=${GTR_KERNELS:-1000000}
[ -s "$WORK/k$K.json" ] || "$WORK/gen" kineto "$WORK/k$K.json" "$K"
[ -s "$WORK/s$S.sqlite" ] || "$WORK/gen" sqlite "$WORK/s$S.sqlite" "$S"
[ -s "$WORK/g$R.gtr" ] || "$WORK/gen" gtr "$WORK/g$R.gtr" "$R"
one() { # LABEL CMD...: append "label cpu_s wall_s"
	local l=$1
	shift
	/usr/bin/time -f "%U %S %e" -o "$WORK/.t" "$@" >/dev/null 2>&1
	awk -v l="$l" '{ printf "%s %.3f %.3f\n", l, $1 + $2, $3 }' "$WORK/.t" >>"$WORK/times"
}
echo "== $(date -u +%Y-%m-%d) $(uname -m), $(nproc) cores; $RUNS runs each, interleaved"
for spec in "kineto:--iters 10 $WORK/k$K.json" "sqlite:--nvtx train_step $WORK/s$S.sqlite" "gtr:$WORK/g$R.gtr"; do
	name=${spec%%:*}
	args=${spec#*:}
	: >"$WORK/times"
	for _ in $(seq "$RUNS"); do
		# shellcheck disable=SC2086
		one analyze "$B" analyze --format json $args
		# shellcheck disable=SC2086
		one advise "$G" advise --format json $args
		# shellcheck disable=SC2086
		one analyze+findings "$G" analyze --format json $args
	done
	python3 - "$name" "$WORK/times" <<'PY'
import statistics, sys
c, w = {}, {}
for line in open(sys.argv[2]):
    l, cpu, wall = line.split()
    c.setdefault(l, []).append(float(cpu))
    w.setdefault(l, []).append(float(wall))
m = lambda d, k: statistics.median(d[k])
ca, wa = m(c, "analyze"), m(w, "analyze")
print("%-7s analyze (no findings) cpu %.3f s wall %.3f s | advise cpu %.3f s (%.3fx) wall %.3f s (%.3fx) | "
      "analyze with findings cpu %.3f s (%.3fx)" % (sys.argv[1], ca, wa, m(c, "advise"), m(c, "advise") / ca,
                                                   m(w, "advise"), m(w, "advise") / wa, m(c, "analyze+findings"),
                                                   m(c, "analyze+findings") / ca))
PY
done
