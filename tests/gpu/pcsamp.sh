#!/usr/bin/env bash
# PC sampling on a GPU (docs/pc-sampling.md).  Needs nvcc, ncu, python3 with torch.
#   make O=.carry/pcs STATIC_DEPS=1 .carry/pcs/gputap .carry/pcs/libgputap.so   (here)
#   tests/gpu/pcsamp.sh OUTDIR [PARTS]   (there; PARTS from "probe tool ncu torch check bench")
# probe: CUPTI's PC Sampling API alone (tests/gpu/pcsamp_probe.cu): reasons, GetData, timings
# tool:  gputap run --pc-sampling on the three kernels of pcsamp_kernels.cuh (-lineinfo)
# ncu:   Nsight Compute's sampling of the same kernels (WarpStateStats, SourceCounters)
# torch: a PyTorch training loop sampled whole
# check: gputap against ncu: dominant stall group, group shares, hottest source line (pcsamp_check.py)
# bench: interleaved runs of the training loop: no tool, kernel trace, kernel trace + PC sampling,
#        and ncu's source-level collection of the same kernels
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: pcsamp.sh OUTDIR [PARTS]}
PARTS=" ${2:-probe tool ncu torch check bench} "
part() { case "$PARTS" in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
B=/tmp/gt-pcs
mkdir -p "$B"
G=${GPUTAP:-$top/.carry/pcs/gputap}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; } >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
NCU="ncu --clock-control none --cache-control none"

build() {
	[ -x "$B/prog" ] && return 0
	nvcc -O2 -lineinfo -arch=sm_90 -o "$B/prog" tests/gpu/pcsamp_prog.cu >"$B/nvcc.log" 2>&1 &
	nvcc -O2 -lineinfo -arch=sm_90 -o "$B/probe" tests/gpu/pcsamp_probe.cu -lcupti -lcuda >>"$B/nvcc.log" 2>&1
	wait
	[ -x "$B/prog" ] && [ -x "$B/probe" ] || { echo "not ok build: $(tail -5 "$B/nvcc.log")"; return 1; }
}
build

if part probe; then
	echo "== probe"
	for args in "0 40" "17 40 act" "12 40 act"; do
		echo "-- probe $args"
		timeout 30 "$B/probe" $args 2>&1 | tee -a "$B/probe.txt" | grep -vE '^probe (record|getdata after)' | cut -c1-600
	done
	grep -E '^probe (record|getdata after)' "$B/probe.txt" | head -20
fi

if part tool; then
	echo "== tool"
	for p in 17 12; do
		rm -rf "$B/run$p"
		/usr/bin/time -f "wall %e s" timeout 60 "$G" run -o "$B/run$p" --pc-sampling=$p -- "$B/prog" 40 >"$B/run$p.out" 2>"$B/run$p.err"
		echo "exit $? (period $p)"
		tail -n 25 "$B/run$p.err"
		cat "$B/run$p.out"
	done
	ls -la "$B/run17"/pid*/ "$B/run17"/pid*/pcsamp 2>&1 | head -30
	cat "$B/run17"/pid*/pc_sampling_totals.csv
	head -c 3000 "$B/run17"/pid*/pc_samples.csv; echo
	cat "$B/run17"/pid*/pc_kernels.csv
	head -c 1500 "$B/run17"/pid*/pc_sampling.json; echo
fi

if part torch; then
	echo "== torch"
	rm -rf "$B/torch"
	/usr/bin/time -f "wall %e s" timeout 90 "$G" run -o "$B/torch" --pc-sampling -- python3 tests/gpu/pcsamp_torch.py --steps 30 \
		>"$B/torch.out" 2>"$B/torch.err"
	echo "exit $?"
	tail -n 30 "$B/torch.err"
	cat "$B/torch.out"
	cat "$B/torch"/*/pc_sampling_totals.csv
	head -n 12 "$B/torch"/*/pc_kernels.csv | cut -c1-400
fi

if part ncu; then
	echo "== ncu"
	rm -f "$B"/ncu.ncu-rep
	timeout 60 $NCU --section WarpStateStats --section SourceCounters --import-source yes -k regex:k_ -c 3 \
		-o "$B/ncu" "$B/prog" 1 >"$B/ncu.out" 2>&1
	echo "ncu exit $?"
	tail -3 "$B/ncu.out"
	ncu -i "$B/ncu.ncu-rep" --page raw --csv >"$B/ncu-raw.csv" 2>&1
	echo "raw: $(wc -l <"$B/ncu-raw.csv") lines"
	head -1 "$B/ncu-raw.csv" | tr ',' '\n' | grep -n pcsamp | head -60
	ncu -i "$B/ncu.ncu-rep" --page details --csv >"$B/ncu-details.csv" 2>&1
	grep -i "stall\|warp cycles" "$B/ncu-details.csv" | head -20
	for v in "--page source --csv --print-source cuda" "--page source --csv --print-source=sass" "--page source --csv"; do
		echo "-- ncu -i $v"
		ncu -i "$B/ncu.ncu-rep" $v >"$B/ncu-src.txt" 2>&1
		echo "exit $?"
		head -c 1500 "$B/ncu-src.txt"
		echo
	done
fi

tar czf "$OUT/pcsamp.tgz" -C /tmp --exclude='*.gtr' --exclude='*.ncu-rep' --exclude='prog' --exclude='probe' gt-pcs 2>/dev/null
ls -la "$OUT"
