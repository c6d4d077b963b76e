#!/usr/bin/env bash
# PC sampling in a window of steps from the Python package (docs/pc-sampling.md "Windows").
#   make O=.carry/35b STATIC_DEPS=1 .carry/35b/gputap .carry/35b/libgputap.so   (here)
#   tests/gpu/pcsamp_window.sh OUTDIR   (there: python3 with torch)
# The loop of pcsamp_window.py (40 steps; a marker sort in every step outside 20..29), each run
# with the SASS step off (GPUTAP_PCSAMP_SASS_S=0):
#   bare    no tool: the program's loss and parameter checksum
#   whole   gputap run --pc-sampling, no window: every step sampled
#   all     gputap run --pc-sampling, Profiler(pc_sampling=True) window over the 40 steps
#   win     the same with the window over steps 20..29 (switching from whole-run sampling)
#   winenv  the same with GPUTAP_PCSAMP_WINDOW=1 (contexts configured for windows from the start)
#   inproc  no gputap run: the Profiler starts gputap in the process after PyTorch made its
#           context (found at the first window call), window 20..29
# Checks (pcsamp_window_check.py): win and winenv ~ 10/40 of all's samples, the marker's kernels
# never sampled in a window of 20..29 (sampled in whole and all), their kernels a subset of
# whole's, the loss and checksum the same as bare's.  About 90 s on an H100.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: pcsamp_window.sh OUTDIR}
mkdir -p "$OUT"
G=${GPUTAP:-$top/.carry/35b/gputap}
L=$(dirname "$G")/libgputap.so
B=/tmp/gt-pcw
rm -rf "$B"
mkdir -p "$B"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}" GPUTAP_PCSAMP_SASS_S=0 GPUTAP_NO_EXTENSION=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
P="python3 tests/gpu/pcsamp_window.py"
t() { # NAME CMD...: timed, output kept
	local n=$1 s
	shift
	s=$(date +%s%N)
	"$@" >"$B/$n.out" 2>"$B/$n.err"
	echo "$n exit $? wall $((($(date +%s%N) - s) / 1000000)) ms: $(grep pcsamp_window "$B/$n.out")"
}
t bare timeout 60 $P
t whole timeout 90 "$G" run -o "$B/whole" --pc-sampling -- $P
t all timeout 90 "$G" run -o "$B/all" --pc-sampling -- $P --window 0 40 --pcs
t win timeout 90 "$G" run -o "$B/win" --pc-sampling -- $P --window 20 30 --pcs
t winenv env GPUTAP_PCSAMP_WINDOW=1 timeout 90 "$G" run -o "$B/winenv" --pc-sampling -- $P --window 20 30 --pcs
t inproc env GPUTAP_LIB="$L" timeout 90 $P --window 20 30 --pcs --inprocess "$B/inproc"
python3 tests/gpu/pcsamp_window_check.py "$B" 2>&1 | tee "$OUT/check.txt"
for n in whole all win winenv inproc; do grep -h 'PC sampling\|gputap:.*warn\|Warning' "$B/$n.err" | head -8 | sed "s/^/$n: /"; done >"$OUT/stderr.txt"
(cd "$B" && tar czf "$OUT/runs.tgz" ./*.out ./*.err ./*/pid*/pc_sampling_totals.csv ./*/pid*/pc_samples.csv ./*/pid*/pc_kernels.csv 2>/dev/null)
