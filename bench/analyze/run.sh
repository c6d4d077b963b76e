#!/usr/bin/env bash
# Analyzer throughput: generate a large nsys SQLite export and a large Kineto trace, time
# `gputap analyze` on them (records/s, peak memory), and run HTA on a Kineto trace for the same
# numbers side by side.
#
#   bench/analyze/run.sh                         # the full sizes: 10 M kernels, 2048 MB Kineto
#   SQLITE_KERNELS=1000000 KINETO_MB=200 HTA_MB=100 bench/analyze/run.sh
#
# SQLITE_KERNELS  kernels in the SQLite export (default 10000000)
# KINETO_MB       size of the Kineto trace gputap reads (default 2048)
# HTA_MB          size of the Kineto trace both gputap and HTA read (default: KINETO_MB; HTA holds
#                 the whole trace in pandas, so on a small machine give it less)
# RUNS            gputap runs per measurement, the median is shown (default 5)
# HTA_RUNS        HTA runs, the median is shown (default 3)
# WORK            where the inputs go (default /tmp/gputap-bench-analyze)
# HTA_VENV        a virtualenv for HTA, made with pip install holistictraceanalysis if missing
#                 (default $WORK/hta-venv); SKIP_HTA=1 to leave HTA out
#
# On the real PyTorch traces of bench/analyze/traces, side by side with HTA in-process (every analysis
# gputap computes) and an older gputap binary, interleaved:
#   bench/analyze/vs_hta.py --runs 5 --before OLD/gputap --hta-python $WORK/hta-venv/bin/python \
#       build/gputap bench/analyze/traces/*.json.gz
# and two gputap binaries alone: bench/analyze/ab.py OLD/gputap build/gputap TRACE...
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
SQLITE_KERNELS=${SQLITE_KERNELS:-10000000}
KINETO_MB=${KINETO_MB:-2048}
HTA_MB=${HTA_MB:-$KINETO_MB}
WORK=${WORK:-/tmp/gputap-bench-analyze}
HTA_VENV=${HTA_VENV:-$WORK/hta-venv}
mkdir -p "$WORK"
make -C "$top" -s build/gputap >/dev/null
G="$top/build/gputap"
cc -O2 -o "$WORK/gen" "$top/bench/analyze/gen.c" -lsqlite3

RUNS=${RUNS:-5}
measure() { # OUT_PREFIX CMD...: median wall seconds and largest peak RSS (KB) of RUNS runs
	local p=$1
	shift
	: >"$p.all"
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$p.time" "$@" >"$p.out"
		cat "$p.time" >>"$p.all"
	done
	sort -n "$p.all" | awk '{ s[NR] = $1; if ($2 > kb) kb = $2 } END { print s[int((NR + 1) / 2)] > "'"$p.s"'"; print kb > "'"$p.kb"'" }'
}
events_of() { # JSON output -> kernels + memops
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["results"][0]["timeline"]["total"]; print(t["kernels"]+t["memops"])' "$1"
}

echo "== $(date -u +%Y-%m-%d) $(uname -m), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo)"
echo "== nsys SQLite export, $SQLITE_KERNELS kernels"
t0=$(date +%s)
[ -s "$WORK/k$SQLITE_KERNELS.sqlite" ] || "$WORK/gen" sqlite "$WORK/k$SQLITE_KERNELS.sqlite" "$SQLITE_KERNELS"
echo "generated in $(( $(date +%s) - t0 )) s, $(du -m "$WORK/k$SQLITE_KERNELS.sqlite" | cut -f1) MB"
measure "$WORK/sq" "$G" analyze --format json --nvtx train_step "$WORK/k$SQLITE_KERNELS.sqlite"
n=$(events_of "$WORK/sq.out")
awk -v n="$n" -v s="$(cat "$WORK/sq.s")" -v kb="$(cat "$WORK/sq.kb")" -v mb="$(du -m "$WORK/k$SQLITE_KERNELS.sqlite" | cut -f1)" \
	'BEGIN { printf "gputap: %d records in %.2f s = %.2f M records/s, peak RSS %.1f MB (input %d MB)\n", n, s, n / s / 1e6, kb / 1024, mb }'

echo "== Kineto trace, $KINETO_MB MB"
t0=$(date +%s)
[ -s "$WORK/kineto$KINETO_MB/rank0.json" ] || { mkdir -p "$WORK/kineto$KINETO_MB" && "$WORK/gen" kineto "$WORK/kineto$KINETO_MB/rank0.json" "$KINETO_MB"; }
echo "generated in $(( $(date +%s) - t0 )) s"
measure "$WORK/kj" "$G" analyze --format json --iters 10 "$WORK/kineto$KINETO_MB/rank0.json"
n=$(events_of "$WORK/kj.out")
awk -v n="$n" -v s="$(cat "$WORK/kj.s")" -v kb="$(cat "$WORK/kj.kb")" -v mb="$KINETO_MB" \
	'BEGIN { printf "gputap: %d records in %.2f s = %.2f M records/s (%.0f MB/s), peak RSS %.1f MB = 1/%.0f of the trace\n", n, s, n / s / 1e6, mb / s, kb / 1024, mb * 1024 / kb }'

[ "${SKIP_HTA:-0}" = 1 ] && exit 0
echo "== HTA and gputap on the same Kineto trace, $HTA_MB MB"
if [ ! -x "$HTA_VENV/bin/python" ] || ! "$HTA_VENV/bin/python" -c 'import hta' 2>/dev/null; then
	python3 -m venv "$HTA_VENV"
	"$HTA_VENV/bin/pip" install -q holistictraceanalysis
fi
[ -s "$WORK/kineto$HTA_MB/rank0.json" ] || { mkdir -p "$WORK/kineto$HTA_MB" && "$WORK/gen" kineto "$WORK/kineto$HTA_MB/rank0.json" "$HTA_MB"; }
measure "$WORK/gh" "$G" analyze --format json "$WORK/kineto$HTA_MB/rank0.json"
for i in $(seq "${HTA_RUNS:-3}"); do
	"$HTA_VENV/bin/python" "$top/bench/analyze/hta_bench.py" "$WORK/kineto$HTA_MB" "$WORK/hta$i.json" >"$WORK/hta.log" 2>&1 || { tail -20 "$WORK/hta.log"; exit 1; }
done
# keep the run with the median total time
python3 - "$WORK" "${HTA_RUNS:-3}" <<'PY'
import json, shutil, sys
runs = sorted((json.load(open("%s/hta%d.json" % (sys.argv[1], i)))["seconds_total"], i) for i in range(1, int(sys.argv[2]) + 1))
print("HTA runs (s):", " ".join("%.2f" % t for t, _ in runs))
shutil.copy("%s/hta%d.json" % (sys.argv[1], runs[(len(runs) - 1) // 2][1]), "%s/hta.json" % sys.argv[1])
PY
python3 "$top/bench/analyze/compare.py" "$WORK/gh.out" "$WORK/hta.json" "$(cat "$WORK/gh.s")" "$(cat "$WORK/gh.kb")" "$(events_of "$WORK/gh.out")"
