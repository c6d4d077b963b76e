#!/usr/bin/env bash
# The main job on its embedded default.
#  - With a working NVIDIA GPU: build the bundled CUDA C example and profile it
#    with `gputap run`, then analyse the run.
#  - Without one: analyse real recorded work, so that every part of the analysis
#    shows something: two ranks of a real NCCL training job (PyTorch profiler
#    traces: kernel classes, iterations, NCCL, communication/compute overlap,
#    idle time by cause, launch delays and queues, memory bandwidth), then the
#    gputap runs recorded on H100/H200 GPUs in examples/recorded/ (converted,
#    analysed, with their report pages).
# Output goes to ./demo-run (or $1, which must be new, empty or a previous demo's output).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-demo-run}
gputap=${GPUTAP:-$top/build/gputap} # GPUTAP: another build (the tests)
[ -x "$gputap" ] || make -C "$top" -j"$(nproc)" >/dev/null
if [ "$out" != demo-run ] && [ -e "$out" ] && [ ! -e "$out/.gputap-demo" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
	echo "gputap demo: $out exists and was not made by the demo; not replacing it (give another folder)" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$out"
touch "$out/.gputap-demo"
outabs=$(cd "$out" && pwd)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null 2>&1; then
	echo "gputap demo: GPU found; profiling examples/cuda_example"
	exdir=${GT_DEMO_BUILD:-$top/build} # where examples/Makefile puts it (GT_DEMO_BUILD: the tests)
	if ! make -s -C "$top/examples" O="$exdir" "$exdir/cuda_example" >/dev/null; then
		echo "gputap demo: could not build examples/cuda_example with nvcc (the error is above)" >&2
		exit 1
	fi
	"$gputap" run -o "$outabs/cuda-example" -- "$exdir/cuda_example"
	"$gputap" analyze "$outabs/cuda-example"
	echo "gputap demo: files in $out/cuda-example/ (open report.html; load */trace.json in ui.perfetto.dev)"
	exit 0
fi

# No GPU: recorded work.  Inputs are named relative to the repository, as a user would type them.
cd "$top"
map=examples/kernel-classes.json
k=tests/fixtures/kineto-2rank-nccl
echo "gputap demo: no GPU here; what gputap finds in recorded work:"
echo "  1. two ranks of a real NCCL training job (PyTorch profiler traces in $k/)"
echo "  2. examples/recorded/torch-train: a PyTorch training run recorded with gputap on an H100"
echo "  3. examples/recorded/cuda-example: the bundled CUDA example recorded with gputap on an H200"
echo
# each input: the report's summary on the terminal (a screenful), the page and the full analysis
# (gputap analyze: every table) in files
echo "=== 1. two ranks of a real NCCL job: gputap report --map $map $k/rank0.json.gz $k/rank1.json.gz"
mkdir -p "$outabs/nccl-2rank"
"$gputap" analyze --map "$map" "$k/rank0.json.gz" "$k/rank1.json.gz" >"$outabs/nccl-2rank/analysis.txt"
"$gputap" analyze --map "$map" --format json "$k/rank0.json.gz" "$k/rank1.json.gz" >"$outabs/nccl-2rank/analysis.json"
"$gputap" report --map "$map" -o "$outabs/nccl-2rank/report.html" "$k/rank0.json.gz" "$k/rank1.json.gz"
n=2
for run in torch-train cuda-example; do
	echo
	echo "=== $n. examples/recorded/$run: gputap convert, analyze, report (copied to $out/$run)"
	cp -r "examples/recorded/$run" "$outabs/$run"
	"$gputap" convert "$outabs/$run" >/dev/null
	"$gputap" analyze --map "$map" "$outabs/$run" >"$outabs/$run/analysis.txt" 2>/dev/null # its notes: below
	"$gputap" report --map "$map" "$outabs/$run"
	n=$((n + 1))
done
echo
echo "gputap demo: files in $out/: nccl-2rank/report.html, torch-train/report.html, cuda-example/report.html"
echo "  every table of each: gputap analyze (in */analysis.txt); the timelines: */*/trace.json of the"
echo "  recorded runs in ui.perfetto.dev"
