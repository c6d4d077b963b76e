#!/usr/bin/env bash
# Bytes per kernel of every output gputap writes, and what writing and reading them costs, on a
# generated trace of the launch-bound loop of bench/overhead (150 tiny kernels per step, one
# cuLaunchKernel per kernel, ns timestamps with a real run's jitter; bench/analyze/gen.c gtr).
#
#   bench/trace/run.sh                 # 150,000 kernels (what the H100 run of the loop wrote)
#   KERNELS=2000000 RUNS=7 bench/trace/run.sh
#
# KERNELS  kernels in the trace (default 150000)
# RUNS     runs per timing, interleaved, the median is shown (default 5)
# WORK     scratch folder (default /tmp/gputap-bench-trace)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
KERNELS=${KERNELS:-150000}
RUNS=${RUNS:-5}
WORK=${WORK:-/tmp/gputap-bench-trace}
mkdir -p "$WORK"
make -C "$top" -s build/gputap >/dev/null
G="$top/build/gputap"
cc -O2 -I"$top/include" -o "$WORK/gen" "$top/bench/analyze/gen.c" -lsqlite3
cc -O2 -D_GNU_SOURCE -I"$top/include" -I"$top/src" -o "$WORK/tracebench" "$top/bench/trace/tracebench.c" \
	"$top/src/trace/trace_io.c" "$top/src/trace/blockz.c" "$top/src/core/csvio.c" -lz

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
size() { stat -c %s "$1"; }
perk() { awk -v b="$1" -v k="$KERNELS" 'BEGIN {printf "%.1f", b / k}'; }

echo "== $(date -u +%Y-%m-%d) $(uname -m), $(nproc) cores; $KERNELS kernels, medians of $RUNS runs"
v1="$WORK/v1/trace.gtr"
mkdir -p "$WORK/v1" "$WORK/v2"
[ -s "$v1" ] && [ "$(cat "$WORK/v1/kernels" 2>/dev/null)" = "$KERNELS" ] ||
	{ "$WORK/gen" gtr "$v1" "$KERNELS" && echo "$KERNELS" >"$WORK/v1/kernels"; }

echo "== trace.gtr: format version 1 (plain records) and 2 (blocks), as the tap and convert write it"
for level in 1 6; do
	"$WORK/tracebench" write "$v1" "$WORK/v2/l$level.gtr" "$level"
done
v2="$WORK/v2/l1.gtr"
echo "| file | bytes | bytes per kernel |"
echo "|---|---|---|"
echo "| trace.gtr, version 1 | $(size "$v1") | $(perk "$(size "$v1")") |"
echo "| trace.gtr, version 2, level 1 (the tap) | $(size "$v2") | $(perk "$(size "$v2")") |"
echo "| trace.gtr, version 2, level 6 (convert --format gtr) | $(size "$WORK/v2/l6.gtr") | $(perk "$(size "$WORK/v2/l6.gtr")") |"

echo "== reading: gt_tr_next alone, and gputap analyze (M records/s)"
: >"$WORK/r1"; : >"$WORK/r2"; : >"$WORK/a1"; : >"$WORK/a2"
for _ in $(seq "$RUNS"); do
	"$WORK/tracebench" read "$v1" | sed -n 's/.*= \([0-9.]*\) M records.*/\1/p' >>"$WORK/r1"
	"$WORK/tracebench" read "$v2" | sed -n 's/.*= \([0-9.]*\) M records.*/\1/p' >>"$WORK/r2"
	for f in 1 2; do
		t=$([ $f = 1 ] && echo "$v1" || echo "$v2")
		s=$( { /usr/bin/time -f "%e" "$G" analyze --format json "$t" >/dev/null; } 2>&1 | tail -1)
		awk -v n="$(( KERNELS * 2 ))" -v s="$s" 'BEGIN {printf "%.2f\n", n / s / 1e6}' >>"$WORK/a$f"
	done
done
echo "| reader | version 1 | version 2 | runs v1 / v2 |"
echo "|---|---|---|---|"
echo "| gt_tr_next | $(median <"$WORK/r1") | $(median <"$WORK/r2") | $(tr '\n' ' ' <"$WORK/r1")/ $(tr '\n' ' ' <"$WORK/r2") |"
echo "| gputap analyze | $(median <"$WORK/a1") | $(median <"$WORK/a2") | $(tr '\n' ' ' <"$WORK/a1")/ $(tr '\n' ' ' <"$WORK/a2") |"

echo "== the files made from it: bytes per kernel, and the time to write them (gputap convert, one run)"
echo "| file | bytes | bytes per kernel | convert s |"
echo "|---|---|---|---|"
for fmt in json json.gz csv logs; do
	rm -rf "$WORK/out-$fmt"
	s=$( { /usr/bin/time -f "%e" "$G" convert "$v2" -o "$WORK/out-$fmt" --format "$fmt" >/dev/null; } 2>&1 | tail -1)
	for f in "$WORK/out-$fmt"/*; do
		echo "| $(basename "$f") | $(size "$f") | $(perk "$(size "$f")") | $s |"
	done
done
