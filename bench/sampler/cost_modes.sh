#!/usr/bin/env bash
# The samplers' CPU at 100 Hz on every GPU, GPUs idle, modes interleaved round by round:
#   power,vram          the default (power around the driver's refresh; memory after allocations, on change, at 10 Hz)
#   power,vram every    GPUTAP_SAMPLE_EVERY_TICK=1 (power and memory on every tick: before the rules)
#   power               power alone
#   vram                vram alone
#   kt,power,vram       with the tap loaded (kernel_trace): the shared allocation counter in use
# Each run `sleep SECS`; the CPU of the sampler's threads from run.json.  Prints one line per run,
# then per mode the median, min and max % of one core.
#   bench/sampler/cost_modes.sh GPUTAP ROUNDS SECS
set -u
G=$1 ROUNDS=${2:-7} SECS=${3:-5}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
modes=("power,vram" "power,vram every" "power" "vram" "kernel_trace,power,vram")
for r in $(seq 1 "$ROUNDS"); do
	for m in "${modes[@]}"; do
		tools=${m% every}
		every=; [ "$tools" != "$m" ] && every=1
		rm -rf "$W/r"
		GPUTAP_SAMPLE_EVERY_TICK=$every SAMPLING_RATE=0.01 DEVICE=all "$G" run -o "$W/r" --tools "$tools" -- sleep "$SECS" \
			>/dev/null 2>&1
		python3 - "$W/r/run.json" "$m" "$r" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
t = [x for x in j["tools"] if x.get("samples")][0]
print("run\t%s\t%s\t%.4f\t%d\t%d\t%s\t%s" % (sys.argv[2], sys.argv[3], t["thread_cpu_pct"], t["samples"],
      t["missed_deadlines"], t.get("memory_reads", "-"), t.get("memory_reads_when", "-")))
PY
	done
done | tee "$W/all.tsv"
python3 - "$W/all.tsv" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    by.setdefault(f[1], []).append(float(f[3]))
for m, v in by.items():
    print("mode %-26s runs %d  median %.3f %%  min %.3f  max %.3f" % (m, len(v), statistics.median(v), min(v), max(v)))
PY
