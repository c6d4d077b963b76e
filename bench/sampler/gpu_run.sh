#!/usr/bin/env bash
# The sampler's measurements on a GPU machine (one call): NVML query costs, then
# `gputap run --tools power,vram` at 100 Hz and 10 Hz on every GPU around a 10 s
# matmul load.  Built elsewhere: B=dir with gputap (make gpu-bundle) and nvml_bench.
#   bench/sampler/gpu_run.sh .carry/build .carry/bench/nvml_bench OUTDIR
set -u
B=$1 BENCH=$2 OUT=$3
mkdir -p "$OUT"
# nvml_bench not built yet: build it here (needs only a C compiler)
if [ ! -x "$BENCH" ]; then
	mkdir -p "$(dirname "$BENCH")"
	cc -O2 -o "$BENCH" "$(dirname "$0")/nvml_bench.c" -ldl -lpthread || echo "nvml_bench: build failed" >&2
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/device.txt" 2>&1
"$BENCH" 300 >"$OUT/nvml_bench.txt" 2>&1
cat "$OUT/nvml_bench.txt"
for r in 0.01 0.1; do
	DEVICE=all SAMPLING_RATE=$r "$B/gputap" run -o "/tmp/s$r" --tools power,vram -- python3 bench/sampler/mm.py 10
	python3 bench/sampler/summarize.py "/tmp/s$r" "fields $r" | tee "$OUT/run_$r.json"
done
# the same at 100 Hz with the plain calls (as drivers without nvmlDeviceGetFieldValues)
GPUTAP_NVML_NO_FIELDS=1 DEVICE=all SAMPLING_RATE=0.01 "$B/gputap" run -o /tmp/nf --tools power,vram -- python3 bench/sampler/mm.py 10
python3 bench/sampler/summarize.py /tmp/nf "plain calls 0.01" | tee "$OUT/run_nofields_0.01.json"
tar czf "$OUT/runs.tgz" -C /tmp s0.01 s0.1 nf 2>/dev/null
