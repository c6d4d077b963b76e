#!/usr/bin/env bash
# Capture windows on a GPU: the window holds exactly the kernels launched in it (the program
# counts them), work launched in it and ending after it is kept, cudaProfilerApi windows, results
# unchanged, `gputap trigger` on a running PyTorch loop; then the cost of a 5 % window, side by
# side with no tool, counters only and the full trace (interleaved, REPS runs each).
#   tests/gpu/capture.sh OUTDIR [REPS]          ends with "N passed, N failed"
# BENCH_MODES picks the benchmark's modes (default "none metrics full capture5"; also "inert": the
# library loaded and injected with nothing asked of it); with GT_BASE_LIB=an earlier libgputap.so,
# MODE@base runs a mode with it, side by side.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: capture.sh OUTDIR [REPS]}
REPS=${2:-7}
mkdir -p "$OUT"
B=${GT_GPU_BUILD:-$top/.carry/build}
G=${GPUTAP:-$B/gputap}
LIB=$B/libgputap.so
W=$(mktemp -d)
pass=0 fail=0
ok() { echo "ok gpu/capture/$1"; pass=$((pass + 1)); }
notok() { echo "not ok gpu/capture/$1"; shift; printf '  %s\n' "$@"; fail=$((fail + 1)); }
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc -O2 -arch=sm_90 -I"$cuda/include" -o "$W/steps" tests/gpu/capture_steps.cu -lcuda 2>"$W/nvcc.err" ||
	{ notok build "$(cat "$W/nvcc.err")"; echo "$pass passed, $fail failed"; exit 1; }
count() { # TRACE -> kernels, windows
	python3 - "$1" <<'EOP'
import sys
sys.path.insert(0, "tests/gpu")
import gtr
rs = gtr.read(sys.argv[1])["records"]
print(sum(1 for r in rs if r["type"] == "kernel"), sum(1 for r in rs if r["type"] == "range" and r["kind"] == 5),
      sum(1 for r in rs if r["type"] == "kernel" and r["end"] - r["start"] > 20_000_000))
EOP
}
json() { sed -n "s/.*\"$2\":\([-0-9.]*\).*/\1/p" "$1"; }
same() { [ -n "$1" ] && [ "$1" = "$2" ]; } # equal and not empty
[ -x "$G" ] && [ -f "$LIB" ] || { notok build "no $G or $LIB"; echo "$pass passed, $fail failed"; exit 1; }

# 1. no tool: the checksum
"$W/steps" 40 50 --long 12 --count 11 12 >"$W/none.out" || notok none-run
ref=$(json "$W/none.out" checksum)

# 2. nvtx window over steps 11..12, a 50 ms kernel launched at the end of step 12
"$G" run -o "$W/r1" --capture 'nvtx:step@11-12' -- "$W/steps" 40 50 --long 12 --count 11 12 >"$W/r1.out" 2>"$W/r1.err"
read -r nk nw nlong < <(count "$(ls "$W"/r1/*/trace.gtr | head -1)")
want=$(json "$W/r1.out" counted)
same "$nk" "$want" && ok nvtx-window-kernels || notok nvtx-window-kernels "trace $nk kernels, program launched $want in steps 11-12"
same "$nw" 1 && ok nvtx-window-record || notok nvtx-window-record "$nw windows"
same "$nlong" 1 && ok window-keeps-work-ending-after-it || notok window-keeps-work-ending-after-it "$nlong long kernels"
same "$(json "$W/r1.out" checksum)" "$ref" && ok results-unchanged || notok results-unchanged "$(cat "$W/r1.out") vs $ref"
grep -q "Capture windows: 1" "$W/r1.err" "$W/r1.out" && ok summary-window || notok summary-window "$(tail -20 "$W/r1.err")"

# 3. two windows, CUPTI finalized and started again in between: both whole
GPUTAP_LOG=info "$G" run -o "$W/r2" --capture 'nvtx:step@5-6;nvtx:step@30' -- "$W/steps" 40 50 --count 5 6 >"$W/r2.out" 2>"$W/r2.err"
read -r nk nw nlong < <(count "$(ls "$W"/r2/*/trace.gtr | head -1)")
cp "$(ls "$W"/r2/*/trace.gtr | head -1)" "$OUT/r2.gtr"
same "$nk" 150 && same "$nw" 2 && ok two-windows-restart || notok two-windows-restart "$nk kernels (want 150), $nw windows"

# 4. cudaProfilerStart/Stop around steps 20..24
"$G" run -o "$W/r3" --capture cudaProfilerApi -- "$W/steps" 40 50 --profiler 20 24 --count 20 24 >"$W/r3.out" 2>"$W/r3.err"
read -r nk nw nlong < <(count "$(ls "$W"/r3/*/trace.gtr | head -1)")
same "$nk" "$(json "$W/r3.out" counted)" && ok profiler-api-window || notok profiler-api-window "$nk kernels"

# 5. gputap trigger on a running PyTorch loop: the next 3 whole steps
cat >"$W/loop.py" <<'EOP'
import time, torch
x = torch.randn(512, 512, device="cuda")
for i in range(400):
    torch.cuda.nvtx.range_push("step")
    y = torch.relu(x @ x) * 0.5
    x = (y / (y.norm() + 1)).contiguous()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    time.sleep(0.01)
print("done", float(x.sum()))
EOP
"$G" run -o "$W/r4" --capture trigger -- python3 "$W/loop.py" >"$W/r4.out" 2>"$W/r4.err" &
rp=$!
for _ in $(seq 200); do ls "$W"/r4/*/control/pid >/dev/null 2>&1 && break; sleep 0.05; done
sleep 2
"$G" trigger "$W/r4" --iterations 3 >"$W/trig.out" 2>&1 && ok trigger-answered || notok trigger-answered "$(cat "$W/trig.out")"
wait $rp
python3 - "$(ls "$W"/r4/*/trace.gtr | head -1)" <<'EOP' >"$W/trig.chk" 2>&1 && ok trigger-three-steps || notok trigger-three-steps "$(cat "$W/trig.chk")"
import sys
sys.path.insert(0, "tests/gpu")
import gtr
rs = gtr.read(sys.argv[1])["records"]
steps = [r for r in rs if r["type"] == "range" and r["name"] == "step"]
kern = [r for r in rs if r["type"] == "kernel"]
print(len(steps), "steps", len(kern), "kernels")
assert len(steps) == 3, "three whole steps"
assert kern and len(kern) % 3 == 0, "the same kernels in each step"
t0, t1 = min(s["start"] for s in steps), max(s["end"] for s in steps)
EOP
tar czf "$OUT/runs.tgz" -C "$W" --exclude="*.gtr" --exclude=steps . 2>/dev/null

# 6. cost of a 5 % window: 2000 steps x 250 kernels, window = steps 951..1050
modes=${BENCH_MODES:-none metrics full capture5}
echo "| mode | median us/kernel | ratio vs none | ratio vs metrics | runs |" | tee "$OUT/bench.md"
echo "|---|---|---|---|---|" | tee -a "$OUT/bench.md"
declare -A v=()
for r in $(seq "$REPS"); do
	for mm in $modes; do
		m=${mm%@base} l=$LIB
		[ "$m" != "$mm" ] && l=${GT_BASE_LIB:?MODE@base needs GT_BASE_LIB}
		tapenv=(env LD_PRELOAD="$l" CUDA_INJECTION64_PATH="$l" NVTX_INJECTION64_PATH="$l")
		o="$W/b$r$m"
		case $m in
		none) c=("$W/steps" 2000 250) ;;
		inert) c=("${tapenv[@]}" "$W/steps" 2000 250) ;;
		metrics) c=("${tapenv[@]}" GPUTAP_OUT="$o" GPUTAP_TRACE=metrics "$W/steps" 2000 250) ;;
		full) c=("${tapenv[@]}" GPUTAP_OUT="$o" "$W/steps" 2000 250) ;;
		capture5) c=("${tapenv[@]}" GPUTAP_LOG=info GPUTAP_OUT="$o" GPUTAP_CAPTURE='nvtx:step@951-1050' "$W/steps" 2000 250 --count 951 1050) ;;
		*) notok bench-mode "unknown mode $mm"; continue ;;
		esac
		m=$mm
		"${c[@]}" >"$W/b.out" 2>>"$W/b-$m.err"
		v[$m]="${v[$m]:-} $(json "$W/b.out" us_per_kernel)"
		if [ "$m" = capture5 ] && [ "$r" = 1 ]; then
			read -r nk nw nlong < <(count "$(ls "$o"/*/trace.gtr | head -1)")
			same "$nk" "$(json "$W/b.out" counted)" && ok bench-window-exact || notok bench-window-exact "$nk kernels"
			ls -l "$o"/*/ >"$OUT/capture-files.txt"
		fi
		[ "$m" = full ] && [ "$r" = 1 ] && ls -l "$o"/*/ >"$OUT/full-files.txt"
		case $m in metrics* | capture5*) [ "$r" = 1 ] && cp "$(ls "$o"/*/metrics.log | head -1)" "$OUT/metrics-$m.log" ;; esac
		rm -rf "$o"
	done
done
med() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
base=$(echo ${v[none]:-} | med)
met=$(echo ${v[metrics]:-} | med)
for m in $modes; do
	md=$(echo ${v[$m]:-} | med)
	echo "| $m | $md | $(awk -v a="$md" -v b="$base" 'BEGIN {printf "%.3f", b ? a/b : 0}') | $(awk -v a="$md" -v b="$met" 'BEGIN {printf "%.3f", b ? a/b : 0}') | ${v[$m]:-} |" | tee -a "$OUT/bench.md"
done
echo "$pass passed, $fail failed"
