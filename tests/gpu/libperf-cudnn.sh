#!/usr/bin/env bash
# `gputap libperf` replays cuDNN convolutions (one GPU, PyTorch): a ResNet-18
# forward + backward (FP32 NCHW, then FP16 channels-last) is recorded with
# `gputap run --tools cudnn_trace`, its library_trace.csv replayed, and every
# convolution row must be timed, the best engine never slower than the
# recorded one, and the recorded engine's time within the noise of what
# torch.profiler measured for that convolution in the traced run.  Then the
# same trace without cuDNN (GPUTAP_CUDNN_LIB pointing nowhere): one message,
# GEMM rows still replayed.
#   make gpu-bundle            (builds .carry/build/gputap)
#   tests/gpu/libperf-cudnn.sh OUTDIR       ends with "N passed, N failed"
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
OUT=${1:?usage: libperf-cudnn.sh OUTDIR}
mkdir -p "$OUT"
G=${GPUTAP:-$top/.carry/build/gputap}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
log=$OUT/libperf-cudnn.txt
: >"$log"
say() { echo "$@" | tee -a "$log"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/device.txt" 2>&1
[ -x "$G" ] || { say "not ok libperf-cudnn/binary: $G missing (make gpu-bundle)"; echo "0 passed, 1 failed"; exit 1; }

# no cuDNN: one message, the GEMM row still timed, every cuDNN row skipped saying why
# (the library trace recorded with the fixture logs: cuBLASLt, cuBLAS, cuDNN and NCCL rows)
cp tests/fixtures/liblogs/h200-torch2.11/library_trace.expected.csv /tmp/gt-nocudnn.csv
GPUTAP_CUDNN_LIB=/nonexistent/libcudnn.so.9 timeout 60 "$G" libperf /tmp/gt-nocudnn.csv -o /tmp/gt-nocudnn.perf.csv >/tmp/gt-nocudnn.txt 2>&1
rc=$?
[ $rc -eq 0 ] && say "ok libperf-cudnn/no-cudnn/exit-status" || say "not ok libperf-cudnn/no-cudnn/exit-status: $rc"
n=$(grep -c "cuDNN rows are not replayed" /tmp/gt-nocudnn.txt)
[ "$n" -eq 1 ] && say "ok libperf-cudnn/no-cudnn/one-message" || say "not ok libperf-cudnn/no-cudnn/one-message: $n"
grep -q '^cublasLt,.*,ok,' /tmp/gt-nocudnn.perf.csv && say "ok libperf-cudnn/no-cudnn/gemm-row-ok" ||
	say "not ok libperf-cudnn/no-cudnn/gemm-row-ok: $(grep cublasLt /tmp/gt-nocudnn.perf.csv)"
bad=$(grep '^cudnn,' /tmp/gt-nocudnn.perf.csv | grep -vc 'skipped: cuDNN 9 (libcudnn.so.9) not found (GPUTAP_CUDNN_LIB=/nonexistent/libcudnn.so.9 cannot be loaded)')
nrows=$(grep -c '^cudnn,' /tmp/gt-nocudnn.perf.csv)
[ "$bad" -eq 0 ] && [ "$nrows" -ge 2 ] && say "ok libperf-cudnn/no-cudnn/rows-say-why" || say "not ok libperf-cudnn/no-cudnn/rows-say-why: $bad of $nrows rows"
cp /tmp/gt-nocudnn.txt "$OUT/no-cudnn.txt"; cp /tmp/gt-nocudnn.perf.csv "$OUT/no-cudnn.perf.csv"


# replay with the cuDNN PyTorch ran with (engine ids belong to the library that logged them)
lib=$("$PY" tests/gpu/libperf_cudnn.py cudnn-lib 2>/dev/null)
if [ -n "$lib" ] && [ -e "$lib" ]; then export GPUTAP_CUDNN_LIB=$lib; fi
say "# GPUTAP_CUDNN_LIB=${GPUTAP_CUDNN_LIB:-unset, the library search of libperf}"

for mode in fp32 half; do
	W=/tmp/gt-libperf-cudnn-$mode
	rm -rf "$W" "$W".*
	flag=""
	[ "$mode" = half ] && flag=--half
	t0=$(date +%s)
	timeout 150 "$G" run -o "$W" --tools cudnn_trace -- \
		"$PY" tests/gpu/libperf_cudnn.py run "$W.profile.json" $flag >"$W.out" 2>"$W.err"
	rc=$?
	say "# $mode: gputap run $(($(date +%s) - t0)) s: $(grep -E '^(model|profiled)' "$W.out" | tr '\n' ' ')"
	[ $rc -eq 0 ] && say "ok libperf-cudnn/$mode/run-exit-status" ||
		say "not ok libperf-cudnn/$mode/run-exit-status: $rc $(tail -5 "$W.err")"
	t0=$(date +%s)
	timeout 170 "$G" libperf "$W/library_trace.csv" -o "$W/library_perf.csv" --iters 20 --warmup 5 \
		>"$W.libperf" 2>&1
	rc=$?
	say "# $mode: gputap libperf $(($(date +%s) - t0)) s, $(grep -c ',cudnn,\|^cudnn,' "$W/library_perf.csv" 2>/dev/null) cuDNN rows"
	[ $rc -eq 0 ] && say "ok libperf-cudnn/$mode/libperf-exit-status" ||
		say "not ok libperf-cudnn/$mode/libperf-exit-status: $rc $(tail -5 "$W.libperf")"
	"$PY" tests/gpu/libperf_cudnn.py check "$W/library_perf.csv" "$W.profile.json" "$W.libperf" 2>&1 |
		sed "s|libperf-cudnn/|libperf-cudnn/$mode/|" | tee -a "$log"
	cp "$W.out" "$W.err" "$W.libperf" "$W.profile.json" "$W/library_trace.csv" "$OUT"/ 2>/dev/null
	cp "$W/library_perf.csv" "$OUT/library_perf.$mode.csv" 2>/dev/null
	for f in out err libperf profile.json; do mv "$OUT/gt-libperf-cudnn-$mode.$f" "$OUT/$mode.$f" 2>/dev/null; done
	mv "$OUT/library_trace.csv" "$OUT/library_trace.$mode.csv" 2>/dev/null
done

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed" | tee -a "$log"
[ "$failed" -eq 0 ]
