#!/usr/bin/env bash
# The main job on its embedded default.
#  - With a working NVIDIA GPU: build the bundled CUDA C example and profile it
#    with `gputap run`, then analyse the run.
#  - Without one: analyse the bundled recorded run of that example (made on an
#    H100/H200) and write its report, so every output can be looked at.
# Output goes to ./demo-run (or $1).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-demo-run}
gputap="$top/build/gputap"
[ -x "$gputap" ] || make -C "$top" -j"$(nproc)" >/dev/null
rm -rf "$out"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null 2>&1; then
	echo "gputap demo: GPU found; profiling examples/cuda_example"
	make -C "$top/examples" >/dev/null
	"$gputap" run -o "$out" -- "$top/examples/build/cuda_example"
	"$gputap" analyze "$out"
else
	rec="$top/examples/recorded/cuda-example"
	echo "gputap demo: no GPU here; analysing the recorded run in examples/recorded/cuda-example"
	cp -r "$rec" "$out"
	"$gputap" convert "$out" >/dev/null
	"$gputap" analyze "$out"
	"$gputap" report "$out"
fi
echo "gputap demo: files in $out/ (open $out/report.html; load $out/*/trace.json in ui.perfetto.dev)"
