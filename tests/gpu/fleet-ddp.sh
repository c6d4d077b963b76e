#!/usr/bin/env bash
# gputap fleet on a real DDP job (a machine with >= 2 GPUs).  tests/gpu/ddp_straggler.py, with a GPU
# sleep planted before backward on one rank from some step on, runs bare (its checksum) and under
# `gputap run --tools kernel_trace,nccl_trace,power,vram` with NCCL's profiler plugin (the tap's
# library) and the samplers at 100 Hz on every GPU.  The run folder comes back as fleet-ddp-run.tgz;
# tests/gpu/check_fleet_ddp.py runs gputap fleet on it (here when pandas and pyarrow are installed,
# else where the tarball is unpacked) and checks the straggler, its cost and the
# late collectives against the plant, the checksum and the samplers' cost.
#   tests/gpu/fleet-ddp.sh OUTDIR
# env: GT_NPROC (ranks; default every GPU nvidia-smi lists), DEVICE (the GPUs sampled; default all),
#      GT_FLEET_NAME (the run folder /tmp/NAME and the tarball's top folder; default gt-fleet-ddp)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: fleet-ddp.sh OUTDIR}
mkdir -p "$OUT"
B=${GT_GPU_BUILD:-$top/.carry/build}
G=$B/gputap
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export CUBLAS_WORKSPACE_CONFIG=:4096:8
n=${GT_NPROC:-$(nvidia-smi -L | wc -l)}
export DEVICE=${DEVICE:-all}
log=$OUT/fleet-ddp.txt
name=${GT_FLEET_NAME:-gt-fleet-ddp}
W=/tmp/$name
J=/tmp/$name-job # the job's own output, bare and traced
rm -rf "$W" "$J" "$W-plugin-failed"
mkdir -p "$J"
{
	date -u
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
} >"$OUT/device.txt" 2>&1
t=$(date +%s%N)
timeout 90 torchrun --standalone --nproc_per_node "$n" tests/gpu/ddp_straggler.py \
	>"$J"/bare.out 2>"$J"/bare.err
echo "bare exit $? wall_ms $((($(date +%s%N) - t) / 1000000))" | tee -a "$log"
t=$(date +%s%N)
SAMPLING_RATE=0.01 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
	timeout 120 "$G" run -o "$W" --tools kernel_trace,nccl_trace,power,vram -- \
	torchrun --standalone --nproc_per_node "$n" tests/gpu/ddp_straggler.py >"$J"/traced.out \
	2>"$J"/traced.err
rc=$?
echo "traced exit $rc wall_ms $((($(date +%s%N) - t) / 1000000))" | tee -a "$log"
if [ $rc -ne 0 ]; then # the job failed with the plugin: once more without it (collectives matched by order)
	tail -20 "$J"/traced.err | tee -a "$log"
	mv "$W" "$W-plugin-failed" 2>/dev/null
	SAMPLING_RATE=0.01 timeout 90 "$G" run -o "$W" --tools kernel_trace,nccl_trace,power,vram -- \
		torchrun --standalone --nproc_per_node "$n" tests/gpu/ddp_straggler.py >"$J"/traced.out \
		2>"$J"/traced.err
	echo "traced without the plugin: exit $?" | tee -a "$log"
fi
cp "$J"/* "$W"/ 2>/dev/null
# the run first: it comes back even if what follows runs out of time
tar czf "$OUT/fleet-ddp-run.tgz" -C /tmp "$name" $(cd /tmp && ls -d "$name-plugin-failed" 2>/dev/null) 2>/dev/null
grep -h -E '(PLANT|CHECKSUM|STEPS) ' "$W"/bare.out "$W"/traced.out | tee -a "$log"
grep -h -i -E 'profiler' "$W"/traced.out "$W"/traced.err | sort | uniq -c | head -8 | tee -a "$log"
python3 bench/sampler/summarize.py "$W" "power,vram 100 Hz on GPUs $DEVICE during the traced job ($n ranks)" >>"$log" 2>&1
ls -la "$W" "$W"/rank* >>"$log" 2>&1
if python3 -c 'import pandas, pyarrow' 2>/dev/null; then
	PYTHONPATH=$top/python python3 tests/gpu/check_fleet_ddp.py "$W" "$G" 2>&1 | tee -a "$log"
else
	echo "fleet: pandas or pyarrow missing here: run tests/gpu/check_fleet_ddp.py on the tarball" |
		tee -a "$log"
fi
ls -la "$OUT"
