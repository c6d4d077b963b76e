#!/usr/bin/env bash
# GPU tests of libgputap.so: builds the library and the examples, runs them
# under the tap and checks the recordings against what the programs say they
# did.  Needs a CUDA GPU, nvcc, and python3 with torch for the PyTorch cases.
#   tests/gpu/run.sh [KEEP_DIR]     ends with "N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
B=${GT_GPU_BUILD:-/tmp/gputap-gpu-build}
W=${1:-$(mktemp -d)}
mkdir -p "$B" "$W"
LIB=$B/libgputap.so
PY=${PYTHON:-python3}
log=$W/results.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }
chk() { "$PY" tests/gpu/check.py "$@" 2>&1 | tee -a "$log"; }

make --no-print-directory O="$B" "$LIB" >"$W/build.log" 2>&1 || say "not ok build/libgputap"
make --no-print-directory -C examples O="$B" "$B/cuda_example" >>"$W/build.log" 2>&1 || say "not ok build/cuda_example"
EX=$B/cuda_example

tap() { # OUTDIR CMD...
	local o=$1
	shift
	env LD_PRELOAD="$LIB${LD_PRELOAD:+:$LD_PRELOAD}" CUDA_INJECTION64_PATH="$LIB" NVTX_INJECTION64_PATH="$LIB" \
		GPUTAP_OUT="$o" "$@"
}

# 1. the CUDA example: counts, bytes, allocations, NVTX, results unchanged
"$EX" --iters 20 >"$W/base.out" 2>"$W/base.err"
brc=$?
tap "$W/ex" "$EX" --iters 20 >"$W/ex.out" 2>"$W/ex.err"
rc=$?
[ $rc -eq $brc ] && say "ok example/exit-status" || say "not ok example/exit-status: $rc vs $brc"
a=$(sed 's/"pid":[0-9]*,//' "$W/base.out")
b=$(sed 's/"pid":[0-9]*,//' "$W/ex.out")
[ -n "$a" ] && [ "$a" = "$b" ] && say "ok example/stdout-unchanged" || say "not ok example/stdout-unchanged: $(diff <(echo "$a") <(echo "$b") | head -c 1500 | cat -A)"
[ ! -s "$W/ex.err" ] && say "ok example/quiet" || say "not ok example/quiet: $(head -c 500 "$W/ex.err")"
chk example example "$W/ex" "$W/ex.out"

# 2. eight threads launching at once
tap "$W/thr" "$EX" --iters 50 --threads 8 >"$W/thr.out" 2>"$W/thr.err"
chk threads threads "$W/thr" "$W/thr.out"

# 3. a forked child gets its own directory
tap "$W/fork" "$EX" --iters 2 --fork >"$W/fork.out" 2>"$W/fork.err"
chk fork fork "$W/fork" "$W/fork.out"

# 4. metrics only
GPUTAP_TRACE=metrics tap "$W/met" "$EX" --iters 20 >"$W/met.out" 2>"$W/met.err"
chk metrics_only metrics-only "$W/met" "$W/met.out"
GPUTAP_TRACE=metrics GPUTAP_RUNTIME_CALLBACKS=on tap "$W/metn" "$EX" --iters 20 >"$W/metn.out" 2>"$W/metn.err"
GPUTAP_RUNTIME_CALLBACKS=on chk metrics_only metrics-named "$W/metn" "$W/metn.out"

# 5. a tiny record buffer: exact loss accounting
GPUTAP_TRACE=nvtx GPUTAP_BUFFER_MB=1 tap "$W/lost" "$EX" --iters 2 --marks 300000 >"$W/lost.out" 2>"$W/lost.err"
chk lost lost "$W/lost" "$W/lost.out"

# 6. an unwritable output directory: one warning, the program runs
tap /proc/gputap-nope "$EX" --iters 2 >"$W/unw.out" 2>"$W/unw.err"
rc=$?
n=$(grep -c '^gputap: warning' "$W/unw.err")
[ $rc -eq 0 ] && [ "$n" -eq 1 ] && say "ok unwritable/one-warning" || say "not ok unwritable/one-warning: rc $rc, $n warnings: $(cat "$W/unw.err")"
grep -q '"checksum"' "$W/unw.out" && say "ok unwritable/program-ran" || say "not ok unwritable/program-ran"

# 7. SIGTERM mid-run
tap "$W/term" "$EX" --iters 100000 --sleep-ms 5 >"$W/term.out" 2>"$W/term.err" &
pid=$!
sleep 4
kill -TERM $pid
wait $pid
chk sigterm sigterm "$W/term" $?

# 8. PyTorch
if "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
	"$PY" examples/torch_train.py --steps 20 >"$W/torch-base.out" 2>"$W/torch-base.err"
	tap "$W/torch" "$PY" examples/torch_train.py --steps 20 >"$W/torch.out" 2>"$W/torch.err"
	rc=$?
	[ $rc -eq 0 ] && say "ok torch/exit-status" || say "not ok torch/exit-status: $rc $(tail -5 "$W/torch.err")"
	chk torch torch "$W/torch" "$W/torch.out" "$W/torch-base.out"
	tap "$W/prof" "$PY" examples/torch_train.py --steps 5 --profiler >"$W/prof.out" 2>"$W/prof.err"
	chk profiler profiler "$W/prof" "$W/prof.out" "$W/prof.err"
else
	say "not ok torch/available: no torch with CUDA"
fi

# 9. the whole pipeline: gputap run (tap + samplers + writers + report), analyze, report
G=${GPUTAP:-}
[ -z "$G" ] && [ -x .carry/build/gputap ] && G=$top/.carry/build/gputap
[ -z "$G" ] && make --no-print-directory O="$B" "$B/gputap" >>"$W/build.log" 2>&1 && G=$B/gputap
if [ -n "$G" ] && [ -x "$G" ]; then
	GPUTAP_LIB=$LIB "$G" run -o "$W/run-ex" --tools kernel_trace,power,vram -- "$EX" --iters 20 >"$W/run-ex.out" 2>"$W/run-ex.err"
	rc=$?
	[ $rc -eq $brc ] && say "ok run/exit-status" || say "not ok run/exit-status: $rc vs $brc: $(tail -5 "$W/run-ex.err")"
	a=$(sed 's/"pid":[0-9]*,//' "$W/base.out")
	b=$(sed 's/"pid":[0-9]*,//' "$W/run-ex.out")
	[ "$a" = "$b" ] && say "ok run/stdout-unchanged" || say "not ok run/stdout-unchanged: $(diff <(echo "$a") <(echo "$b") | head -c 1500 | cat -A)"
	grep -q 'scale\|add' "$W/run-ex.err" && say "ok run/summary" || say "not ok run/summary: $(head -c 800 "$W/run-ex.err")"
	"$PY" tests/gpu/check_run.py example "$W/run-ex" "$W/run-ex.out" 2>&1 | tee -a "$log"
	"$G" analyze "$W/run-ex" --format json >"$W/an.json" 2>"$W/an.err" && say "ok run/analyze" || say "not ok run/analyze: $(head -5 "$W/an.err")"
	GPUTAP_LIB=$LIB "$G" run -o "$W/run-5" -- sh -c 'exit 5' >/dev/null 2>&1
	[ $? -eq 5 ] && say "ok run/exit-status-5" || say "not ok run/exit-status-5"
else
	say "not ok run/gputap-binary: no gputap CLI (make gpu-bundle and carry .carry)"
fi

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed" | tee -a "$log"
[ "$failed" -eq 0 ]
