#!/usr/bin/env bash
# Profiling overhead, side by side in one run: median of REPS runs per mode.
#   [BENCHES="launch compute cuda"] [MODES="none metrics full ..."] bench/overhead/run.sh [REPS]
#   (needs a CUDA GPU, python3 with torch, nvcc)
# Benches: launch, compute (PyTorch, bench/overhead/step.py), cuda (examples/cuda_example), and
# launch-long (the launch loop with 2,000 timed steps, each in an NVTX range "step": for capture5).
# Modes: none, gputap metrics only (GPUTAP_TRACE=metrics), gputap full trace,
# capture5 (a capture window over timed steps 951-1050 of launch-long: 5 % of them),
# noapi (full without host API records), kernel (CUPTI kernel activity alone:
# GPUTAP_TRACE=kernel), torch.profiler (PyTorch cases only).  Prints a table
# of ratios vs none.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
REPS=${1:-5}
B=${GT_GPU_BUILD:-/tmp/gputap-gpu-build}
PY=${PYTHON:-python3}
W=$(mktemp -d)
make --no-print-directory O="$B" "$B/libgputap.so" >/dev/null || exit 1
make --no-print-directory -C examples O="$B" "$B/cuda_example" >/dev/null || exit 1
LIB=$B/libgputap.so
tapenv() { echo LD_PRELOAD="$LIB" CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" GPUTAP_OUT="$W/o$RANDOM"; }

one() { # MODE BENCH -> us per step
	local mode=$1 bench=$2 cmd
	if [ "$bench" = cuda ]; then
		cmd=("$B/cuda_example" --iters 20000 --timing)
	elif [ "$bench" = launch-long ]; then # the launch loop, 2,000 timed steps in NVTX "step" ranges
		cmd=("$PY" bench/overhead/step.py launch --steps 2000 --nvtx)
	else
		cmd=("$PY" bench/overhead/step.py "$bench")
	fi
	case $mode in
	none) ;;
	metrics) cmd=(env $(tapenv) GPUTAP_TRACE=metrics "${cmd[@]}") ;;
	full) cmd=(env $(tapenv) "${cmd[@]}") ;;
	noapi) cmd=(env $(tapenv) GPUTAP_TRACE=kernel,memcpy,memory,nvtx "${cmd[@]}") ;;
	kernel) cmd=(env $(tapenv) GPUTAP_TRACE=kernel "${cmd[@]}") ;;
	capture5) cmd=(env $(tapenv) GPUTAP_CAPTURE='nvtx:step@951-1050' "${cmd[@]}") ;; # launch-long: 5 % of its steps
	profiler) cmd=("${cmd[@]}" --profiler) ;;
	esac
	if [ "$bench" = cuda ]; then
		"${cmd[@]}" 2>>"$W/err" | sed -n 's/.*"us_per_round":\([0-9.]*\).*/\1/p'
	else
		"${cmd[@]}" 2>>"$W/err" | sed -n 's/.*"us_per_step": \([0-9.]*\).*/\1/p'
	fi
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# paired: each round runs every mode back to back, so the median of the per-round ratios
# cancels drift between rounds that the ratio of medians keeps (these machines drift ±10-30 %)
paired() { # "a1 a2 ..." "b1 b2 ...": median of ai/bi
	awk -v a="$1" -v b="$2" 'BEGIN {n = split(a, x, " "); split(b, y, " "); for (i = 1; i <= n; i++) r[i] = x[i] / y[i];
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) {t = r[i]; r[i] = r[j]; r[j] = t}
		printf "%.3f", n ? (n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2) : 0}'
}
echo "| workload | mode | median us/step | ratio vs none | paired ratio | runs |"
echo "|---|---|---|---|---|---|"
for bench in ${BENCHES:-launch compute cuda}; do
	modes=${MODES:-none metrics full noapi profiler}
	[ "$bench" = cuda ] && modes=$(echo $modes | sed 's/ *profiler//')
	declare -A vals=()
	for r in $(seq "$REPS"); do
		for m in $modes; do # interleaved, so drift hits every mode alike
			v=$(one "$m" "$bench")
			vals[$m]="${vals[$m]:-} $v"
		done
	done
	base=$(echo ${vals[none]} | tr ' ' '\n' | median)
	for m in $modes; do
		med=$(echo ${vals[$m]} | tr ' ' '\n' | median)
		ratio=$(awk -v a="$med" -v b="$base" 'BEGIN {printf "%.3f", a / b}')
		echo "| $bench | $m | $med | $ratio | $(paired "${vals[$m]}" "${vals[none]}") | ${vals[$m]} |"
	done
	unset vals
done
echo
echo "(launch: 50 relu(y*a+b) on 256x256 per step, 200 steps after 20 warm-ups; compute: 4 bf16 8192^2 matmuls per step;"
echo " cuda: examples/cuda_example --iters 20000 --timing: wall time of its compute loop per round (2 kernels on 2 streams, 2 NVTX ranges);"
echo " kernel: CUPTI kernel activity alone (GPUTAP_TRACE=kernel);"
echo " noapi: full trace without host API records (GPUTAP_TRACE=kernel,memcpy,memory,nvtx): no launch callbacks, no launch->kernel links)"
if [ -s "$W/err" ]; then
	echo "stderr of the runs (last lines):"
	tail -n 5 "$W/err"
fi
rm -rf "$W"
