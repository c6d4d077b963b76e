#!/usr/bin/env bash
# Range metrics right by default, on a GPU, against Nsight Compute and the programs' own account:
# the README's command with no mode and no tool list, both modes, a range opened before the
# first CUDA call, nested ranges, several streams and threads, a thread with no range of its
# own, the explicit inexact combination marked; a PyTorch step (forward/backward/optimizer) in
# both modes and by default against torch.profiler's kernel count; the GMP page's examples
# unchanged.  Ends with "N passed, N failed".
#   make gpu-bundle; tests/gpu/rm_default.sh OUTDIR    (GPUTAP=, GT_GPU_BUILD= to use another build)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: rm_default.sh OUTDIR}
BLD=${GT_GPU_BUILD:-$top/.carry/build}
G=${GPUTAP:-$BLD/gputap}
B=${RM_WORK:-/tmp/rm-default}
rm -rf "$B"
mkdir -p "$OUT" "$B"
RES=$OUT/rm-default-results.txt
: >"$RES"
INST=smsp__inst_executed.sum
PAIR=gpu__time_duration.sum,$INST
NCU="ncu --csv --print-units base --clock-control none --cache-control none"
say() { echo "$@" | tee -a "$RES"; }
chk() { python3 tests/gpu/rm_check.py "$@" 2>&1 | tee -a "$RES"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; } >"$OUT/rm-default-device.txt" 2>&1

nvcc -O2 -lineinfo -o "$B/rm_prog" tests/gpu/rm_prog.cu -lpthread >"$B/nvcc.log" 2>&1 || say "not ok rmdefault/build: $(tail -3 "$B/nvcc.log")"
P=$B/rm_prog
ARGS="--iters 3 --per 2 --outer --bare"
"$P" $ARGS --manifest "$B/man.txt" >"$B/base.out" 2>&1
$NCU --metrics $PAIR "$P" $ARGS >"$B/ncu.csv" 2>"$B/ncu.err"
# ncu's own range value for each "main/iter" (application range replay)
$NCU --metrics $INST --nvtx --nvtx-include "main/iter/" --replay-mode app-range "$P" $ARGS >"$B/ncu-range.csv" 2>"$B/ncu-range.err"

# 1. the README's command: no mode, no tool list (the default tools, kernel trace included)
"$G" run -o "$B/d" --metrics $INST -- "$P" $ARGS >"$B/d.out" 2>"$B/d.err"
say "# default: exit $?; $(grep -c . "$B/d.err") stderr lines"
chk same "$B/base.out" "$B/d.out"
grep -q '^per-range,' "$B"/d/*/range_metrics.csv && say "ok rmdefault/default-is-per-range" || say "not ok rmdefault/default-is-per-range: $(sed -n 2p "$B"/d/*/range_metrics.csv)"
chk range "$B/d" "$B/man.txt" "$B/ncu.csv" --exact
chk attribution "$B/d" "$B/man.txt" main=$(wc -l <"$B/man.txt") main/bare=2
grep -q '^per-range,main,main,0,all,' "$B"/d/*/range_metrics.csv && say "ok rmdefault/range-before-first-cuda-call-kept-at-level-0" ||
	say "not ok rmdefault/range-before-first-cuda-call-kept-at-level-0: $(cut -d, -f2-5 "$B"/d/*/range_metrics.csv | sort -u | head -5)"
python3 - "$B/d" "$B/ncu-range.csv" <<'PY' 2>&1 | tee -a "$RES"
import csv, glob, sys
rows = [r for r in csv.DictReader(open(glob.glob(sys.argv[1] + "/*/range_metrics.csv")[0]))
        if r["path"] == "main/iter" and r["occurrence"] != "all" and r["metric"] == "smsp__inst_executed.sum"]
got = [float(r["sum"]) for r in sorted(rows, key=lambda r: int(r["occurrence"]))]
vals = []
for line in open(sys.argv[2]):
    if "smsp__inst_executed.sum" in line:
        f = next(csv.reader([line]))
        vals.append(float(f[-1].replace(",", "")))
print("# main/iter per-range %s; ncu app-range %s" % (got, vals))
ok = len(got) == 3 and len(vals) >= 3 and all(abs(a - b) <= 1e-9 * b for a, b in zip(got, vals[:3]))
print(("ok" if ok else "not ok") + " rmdefault/default-range-values-equal-ncu-app-range")
PY
"$G" report "$B/d" >"$B/d-report.txt" 2>&1
grep -q "NOT EXACT" "$B/d-report.txt" && say "not ok rmdefault/default-summary-not-marked-inexact" || say "ok rmdefault/default-summary-not-marked-inexact"

# 2. per kernel, asked for
"$G" run -o "$B/k" --metrics $PAIR --metrics-mode kernel -- "$P" $ARGS >"$B/k.out" 2>"$B/k.err"
chk same "$B/base.out" "$B/k.out"
chk kernel "$B/k" "$B/man.txt" "$B/ncu.csv"
chk attribution "$B/k" "$B/man.txt" main=$(wc -l <"$B/man.txt") main/bare=2

# 3. per range with the kernel trace, both asked for: kept, and every value says it is not exact
"$G" run -o "$B/x" --tools kernel_trace --metrics $INST --metrics-mode range -- "$P" $ARGS >"$B/x.out" 2>"$B/x.err"
n_no=$(python3 -c "import csv,sys; print(sum(r['exact'].startswith('no: ') for r in csv.DictReader(open(sys.argv[1]))))" "$B"/x/*/range_metrics.csv)
n_all=$(($(wc -l <"$B"/x/*/range_metrics.csv) - 1))
[ "$n_no" -gt 0 ] && [ "$n_no" -eq "$n_all" ] && say "ok rmdefault/explicit-combination-every-row-marked ($n_no rows)" ||
	say "not ok rmdefault/explicit-combination-every-row-marked: $n_no of $n_all"
grep -q '"exact":false' "$B"/x/*/range_metrics.json && say "ok rmdefault/explicit-combination-json-marked" || say "not ok rmdefault/explicit-combination-json-marked"
"$G" report "$B/x" >"$B/x-report.txt" 2>&1
grep -q "NOT EXACT" "$B/x-report.txt" && say "ok rmdefault/explicit-combination-summary-marked" || say "not ok rmdefault/explicit-combination-summary-marked"
grep -q "values are not exact" "$B/x.err" && say "ok rmdefault/explicit-combination-warned" || say "not ok rmdefault/explicit-combination-warned: $(head -3 "$B/x.err")"

# 4. PyTorch: per kernel and per range in-process, the default command, torch.profiler's count
export PYTHONPATH=$top/python GPUTAP_LIB=$BLD/libgputap.so
T=tests/gpu/rm_torch_modes.py
python3 $T --out "$B/t-prof.json" --profiler >"$B/t-prof.out" 2>&1 || say "not ok rmdefault/torch-profiler-run: $(tail -3 "$B/t-prof.out")"
python3 -c "import torch; print('torch', torch.__version__)" >>"$OUT/rm-default-device.txt" 2>&1
python3 $T --out "$B/t-kernel.json" --init kernel >"$B/t-kernel.out" 2>&1 || say "not ok rmdefault/torch-kernel-run: $(tail -3 "$B/t-kernel.out")"
python3 $T --out "$B/t-range.json" --init range >"$B/t-range.out" 2>&1 || say "not ok rmdefault/torch-range-run: $(tail -3 "$B/t-range.out")"
"$G" run -o "$B/td" --metrics $INST -- python3 $T --out "$B/t-default.json" >"$B/t-default.out" 2>"$B/t-default.err" ||
	say "not ok rmdefault/torch-default-run: $(tail -3 "$B/t-default.err")"
grep -h loss "$B"/t-*.out | sort | uniq -c | sed 's/^/# /' | tee -a "$RES"
[ "$(grep -h '^loss' "$B"/t-*.out | sort -u | wc -l)" = 1 ] && say "ok rmdefault/torch-results-unchanged" || say "not ok rmdefault/torch-results-unchanged"
python3 tests/gpu/rm_torch_check.py "$B/t-kernel.json" "$B/t-range.json" "$B/t-prof.json" "$B/t-default.json" 2>&1 | tee -a "$RES"

# 5. the GMP page's examples, unchanged: counters printed
for ex in basic decorator global memory; do
	python3 tests/gpu/gmp_examples.py $ex >"$B/gmp-$ex.out" 2>&1
	rc=$?
	case $ex in
	memory) grep -q "Allocations: [1-9]" "$B/gmp-$ex.out" && [ $rc = 0 ] && say "ok rmdefault/gmp-$ex" || say "not ok rmdefault/gmp-$ex: rc $rc $(tail -3 "$B/gmp-$ex.out")" ;;
	*) grep -qE "smsp__inst_executed.sum: [1-9]" "$B/gmp-$ex.out" && grep -qE "gpu__time_duration.sum: [1-9]" "$B/gmp-$ex.out" && [ $rc = 0 ] &&
		say "ok rmdefault/gmp-$ex-prints-counters" || say "not ok rmdefault/gmp-$ex-prints-counters: rc $rc $(tail -5 "$B/gmp-$ex.out")" ;;
	esac
done
sed -n 1,12p "$B/gmp-basic.out" | sed 's/^/# /' | tee -a "$RES"

p=$(grep -c '^ok' "$RES")
f=$(grep -c '^not ok' "$RES")
say "$p passed, $f failed"
tar czf "$OUT/rm-default-work.tgz" -C "$B" --exclude='*.gtr' --exclude=rm_prog . 2>/dev/null
