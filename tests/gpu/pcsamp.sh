#!/usr/bin/env bash
# PC sampling on a GPU (docs/pc-sampling.md).  Needs nvcc, ncu, python3 with torch.
#   make O=.carry/pcs STATIC_DEPS=1 .carry/pcs/gputap .carry/pcs/libgputap.so   (here)
#   DEADLINE_S=S tests/gpu/pcsamp.sh OUTDIR [PARTS]   (there; PARTS from "probe tool ncu torch check bench")
# probe: CUPTI's PC Sampling API alone (tests/gpu/pcsamp_probe.cu): reasons, GetData, timings
# tool:  gputap run --pc-sampling on the three kernels of pcsamp_kernels.cuh (-lineinfo)
# ncu:   Nsight Compute's sampling of the same kernels (WarpStateStats, SourceCounters)
# torch: a PyTorch training loop sampled whole
# check: gputap against ncu's warp sampling at the same period (--warp-sampling-interval N-5):
#        dominant stall group, group shares, hottest source line (pcsamp_check.py)
# bench: interleaved rounds of the training loop (no tool, kernel trace, kernel trace + PC
#        sampling), as many as DEADLINE_S (seconds from the start) leaves room for, at most 9,
#        after ncu's source-level collection of the same kernels
# Times on an H100 (2026-11-27): probe+tool+torch+ncu about 115 s; check about 60 s with the
# build; bench: two bare runs 24 s, ncu's collection 34 s, a round about 65 s (10 + 11 s, and 43 s
# for the PC-sampling run with its 30-s SASS step): 7 rounds with DEADLINE_S=560.
# ncu's own messages (stdout and stderr apart) are kept in check.tgz.
set -u
START=$(date +%s)
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
	[ -x "$B/prog" ] || nvcc -O2 -lineinfo -arch=sm_90 -o "$B/prog" tests/gpu/pcsamp_prog.cu >"$B/nvcc.log" 2>&1
	[ -x "$B/prog" ] || { echo "not ok build: $(tail -5 "$B/nvcc.log")"; return 1; }
	part probe || return 0
	[ -x "$B/probe" ] || nvcc -O2 -lineinfo -arch=sm_90 -o "$B/probe" tests/gpu/pcsamp_probe.cu -lcupti -lcuda >>"$B/nvcc.log" 2>&1
	[ -x "$B/probe" ] || { echo "not ok build: $(tail -5 "$B/nvcc.log")"; return 1; }
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
	/usr/bin/time -f "wall %e s" timeout 60 "$G" run -o "$B/torch" --pc-sampling -- python3 tests/gpu/pcsamp_torch.py --steps 30 \
		>"$B/torch.out" 2>"$B/torch.err"
	rc=$?
	echo "exit $rc"
	[ $rc -eq 0 ] && torch_ok=1
	tail -n 30 "$B/torch.err"
	cat "$B/torch.out"
	cat "$B/torch"/*/pc_sampling_totals.csv
	head -n 12 "$B/torch"/*/pc_kernels.csv | cut -c1-400
	head -n 5 "$B/torch"/*/pc_ranges.csv | cut -c1-300
	tar czf "$OUT/torch.tgz" -C "$B" --exclude='trace.json' --exclude='*.gtr' --exclude='*.cubin' torch torch.out torch.err 2>/dev/null
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

if part check; then
	echo "== check: gputap against ncu on the same kernels"
	echo "bare: $("$B/prog" 40 | tr '\n' ';')"
	ncu --help 2>&1 | grep -A3 -i 'sampling-interval' >"$B/ncu-help.txt"
	# ncu's --warp-sampling-interval n samples every 2^(5+n) cycles: the same period as --pc-sampling=5+n.
	# ncu profiles 8 launches of each kernel (its samples per launch are gputap's per launch).
	for p in 17 12; do
		rm -rf "$B/chk$p"
		timeout 60 "$G" run -o "$B/chk$p" --pc-sampling=$p -- "$B/prog" 40 >"$B/chk$p.out" 2>"$B/chk$p.err"
		echo "gputap period $p exit $?: $(tr '\n' ';' <"$B/chk$p.out")"
		rm -f "$B/ncu$p.ncu-rep"
		timeout 90 $NCU --section WarpStateStats --section SourceCounters --warp-sampling-interval $((p - 5)) \
			-k regex:k_ -c 24 -o "$B/ncu$p" "$B/prog" 8 >"$B/ncu$p.out" 2>"$B/ncu$p.err"
		rc=$?
		echo "ncu --warp-sampling-interval $((p - 5)) exit $rc; its last lines:"
		tail -n 4 "$B/ncu$p.err" "$B/ncu$p.out"
		if [ ! -f "$B/ncu$p.ncu-rep" ]; then # once more without the period, so that the rest can run
			timeout 90 $NCU --section WarpStateStats --section SourceCounters -k regex:k_ -c 24 \
				-o "$B/ncu$p" "$B/prog" 8 >"$B/ncu$p-auto.out" 2>"$B/ncu$p-auto.err"
			echo "ncu without --warp-sampling-interval exit $?"
			tail -n 4 "$B/ncu$p-auto.err"
		fi
		ncu -i "$B/ncu$p.ncu-rep" --page raw --csv >"$B/ncu$p-raw.csv" 2>"$B/ncu$p-raw.err"
		ncu -i "$B/ncu$p.ncu-rep" --page source --csv --print-source=sass >"$B/ncu$p-sass.csv" 2>"$B/ncu$p-sass.err"
		echo "exports: raw $(wc -l <"$B/ncu$p-raw.csv") lines, sass $(wc -l <"$B/ncu$p-sass.csv") lines"
		head -c 600 "$B/ncu$p-sass.csv" | head -4
		grep -o 'smsp__pcsamp_interval[^,]*' "$B/ncu$p-raw.csv" | head -2 | tr '\n' ' '
		python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); h=r[0]; print("ncu interval:", [x[h.index("smsp__pcsamp_interval_cycles")] for x in r[2:5]] if "smsp__pcsamp_interval_cycles" in h else "?")' "$B/ncu$p-raw.csv"
	done
	nvdisasm -g "$(ls "$B"/chk17/pid*/pcsamp/*.cubin | head -1)" >"$B/nvdisasm-g.txt" 2>&1
	for p in 17 12; do
		python3 tests/gpu/pcsamp_check.py "$B/chk$p" "$B/ncu$p-raw.csv" "$B/ncu$p-sass.csv" "$B/nvdisasm-g.txt" 0.10 "2^$p" |
			tee -a "$B/check.txt"
	done
	cp "$B/check.txt" "$OUT/check.txt" 2>/dev/null
	tar czf "$OUT/check.tgz" -C "$B" --exclude='*.ncu-rep' --exclude='trace.json' --exclude='*.cubin' --exclude='*.gtr' \
		chk17 chk12 ncu-help.txt nvdisasm-g.txt $(cd "$B" && ls ncu1[27]*.out ncu1[27]*.err ncu1[27]-*.csv 2>/dev/null)
fi

if part bench; then
	echo "== bench: the training loop, interleaved (none, kernel trace, kernel trace + PC sampling)"
	T="python3 tests/gpu/pcsamp_torch.py --steps 60"
	S="python3 tests/gpu/pcsamp_torch.py --steps 3 --warmup 1"
	now() { date +%s.%N; }
	dt() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b - a}'; }
	left() { awk -v s="$START" -v d="${DEADLINE_S:-100000}" -v n="$(date +%s)" 'BEGIN{print int(d - (n - s))}'; }
	t0=$(now); timeout 60 $S >/dev/null 2>&1; t1=$(now)
	echo "bench short-bare total_s $(dt "$t0" "$t1") (the first: files into the page cache)"
	t0=$(now); timeout 60 $S >/dev/null 2>&1; t1=$(now)
	echo "bench short-bare total_s $(dt "$t0" "$t1")"
	t0=$(now)
	timeout 90 $NCU --section WarpStateStats --section SourceCounters -c 40 $S >"$B/ncu-torch.out" 2>&1
	rc=$?
	t1=$(now)
	echo "bench ncu rc $rc total_s $(dt "$t0" "$t1") kernels_profiled $(grep -c '==PROF== Profiling' "$B/ncu-torch.out")"
	tail -n 3 "$B/ncu-torch.out"
	rounds=0 need=${ROUND_S:-60}
	for i in 1 2 3 4 5 6 7 8 9; do
		[ "$(left)" -gt "$need" ] || { echo "bench: $(left) s left, a round takes about $need s: no round $i"; break; }
		r0=$(date +%s)
		for m in none trace pcs; do
			rm -rf "$B/b$m"
			t0=$(now)
			case $m in
			none) timeout 40 $T >"$B/b.out" 2>&1 ;;
			trace) timeout 40 "$G" run -o "$B/b$m" --tools kernel_trace -- $T >"$B/b.out" 2>"$B/b.err" ;;
			pcs) timeout 70 "$G" run -o "$B/b$m" --tools kernel_trace --pc-sampling -- $T >"$B/b.out" 2>"$B/b.err" ;;
			esac
			rc=$?
			t1=$(now)
			cmd=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.3f" % ((r["end_ns"]-r["start_ns"])/1e9))' "$B/b$m/run.json" 2>/dev/null)
			echo "bench $m run $i rc $rc total_s $(dt "$t0" "$t1") command_s ${cmd:-$(dt "$t0" "$t1")} $(grep -h pcsamp_torch "$B/b.out")"
		done
		rounds=$i
		need=$(($(date +%s) - r0 + 5))
	done
	echo "bench rounds $rounds"
	echo "bench kernels $(awk -F, 'NR>1{gsub(/"/,"",$3); s+=$3} END{print s}' "$B/btrace"/*/trace_cuda_gpu_kern_sum.csv) (trace run)"
	cat "$B/bpcs"/*/pc_sampling_totals.csv | tr '\n' ' '; echo
	head -6 "$B/bpcs"/*/pc_kernels.csv | cut -c1-300
	grep -i "nvdisasm\|PC sampling" "$B/b.err" | head -5 | cut -c1-300
	tar czf "$OUT/bench.tgz" -C "$B" --exclude='trace.json' --exclude='*.gtr' --exclude='*.cubin' --exclude='pcsamp' \
		bpcs btrace b.err ncu-torch.out 2>/dev/null
fi

# small files only: the CSVs and JSON of the runs, ncu's CSVs, the logs (check and bench have their own)
part probe || part tool || part torch || part ncu || { ls -la "$OUT"; exit 0; }
find "$B" \( -name trace.json -o -name '*.ncu-rep' -o -name 'trace.json.gz' -o \( -name '*.gtr' -size +2M \) \) -delete
tar czf "$OUT/pcsamp.tgz" -C /tmp --exclude='*.cubin' --exclude=prog --exclude=probe gt-pcs 2>/dev/null
ls -la "$OUT"
