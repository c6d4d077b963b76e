#!/usr/bin/env bash
# The Python package on a GPU (needs PyTorch): install it, then check per-range
# kernel counts against torch.profiler and memory activity against PyTorch's
# caching allocator (also with expandable segments, also under `gputap run`),
# the other-CUPTI-client cases and the no-GPU error.  Ends "N passed, N failed".
#   make gpu-bundle (on a build machine), then: tests/gpu/python.sh OUTDIR
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
OUT=${1:?usage: python.sh OUTDIR}
mkdir -p "$OUT"
B=${GT_GPU_BUILD:-$top/.carry/build}
W=/tmp/gt-py
rm -rf "$W" && mkdir -p "$W"
log="$OUT/python-gpu.txt"
: >"$log"
say() { echo "$@" | tee -a "$log"; }

# 1. install: a fresh virtual environment that sees the system's PyTorch
PY=python3
if python3 -m venv --system-site-packages "$W/venv" >>"$W/install.txt" 2>&1 &&
	GPUTAP_PREBUILT="$B" "$W/venv/bin/pip" install --no-build-isolation --no-deps ./python >>"$W/install.txt" 2>&1; then
	PY="$W/venv/bin/python"
	GT="$W/venv/bin/gputap"
	say "ok python-gpu/install pip install ./python into a fresh venv ($("$GT" --version))"
	if ! "$PY" -c 'import torch' 2>/dev/null; then
		# PyTorch is not where a venv sees it: the system python, with the installed package on its path
		export PYTHONPATH="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
		PY=python3
		say "info python-gpu/install: the venv does not see PyTorch; python3 with PYTHONPATH=$PYTHONPATH"
	fi
	say "info python-gpu/install: ranges through the $("$PY" -c 'import gputap; print(gputap.library()["binding"])' 2>&1 | tail -1) binding"
else
	say "not ok python-gpu/install (see install.txt); going on with PYTHONPATH=python"
	tail -5 "$W/install.txt" | tee -a "$log"
	export PYTHONPATH="$top/python" GPUTAP_LIB="$B/libgputap.so"
	GT="$B/gputap"
fi
cp "$W/install.txt" "$OUT/" 2>/dev/null

run() { # NAME CMD...: keep output, say if it failed
	local name=$1
	shift
	if ! timeout 300 "$@" >"$W/$name.out" 2>"$W/$name.err"; then
		say "not ok python-gpu/run:$name (exit status $?)"
		tail -15 "$W/$name.err" | tee -a "$log"
		return 1
	fi
	return 0
}
EXP=expandable_segments:True
run torch "$PY" tests/gpu/py_ranges.py torch "$W/torch.json"
PYTORCH_CUDA_ALLOC_CONF=$EXP run torch-exp "$PY" tests/gpu/py_ranges.py torch "$W/torch-exp.json"
run inproc-late "$PY" tests/gpu/py_ranges.py gputap "$W/gt-late.json" --late
run inproc "$PY" tests/gpu/py_ranges.py gputap "$W/gt.json"
PYTORCH_CUDA_ALLOC_CONF=$EXP run inproc-exp "$PY" tests/gpu/py_ranges.py gputap "$W/gt-exp.json"
run gputap-run "$GT" run -o "$W/run" -- "$PY" tests/gpu/py_ranges.py gputap "$W/gt-run.json"
PYTORCH_CUDA_ALLOC_CONF=$EXP run gputap-run-exp "$GT" run -o "$W/run-exp" -- "$PY" tests/gpu/py_ranges.py gputap "$W/gt-run-exp.json"

cmp() { # LABEL TORCH GPUTAP [--expandable]
	[ -f "$W/$2" ] && [ -f "$W/$3" ] || { say "not ok python-gpu/$1 (missing output)"; return; }
	"$PY" tests/gpu/py_compare.py "$W/$2" "$W/$3" "$1" ${4:-} | tee -a "$log"
}
cmp in-process-late torch.json gt-late.json
cmp in-process torch.json gt.json
cmp in-process-expandable torch-exp.json gt-exp.json --expandable
cmp gputap-run torch.json gt-run.json
cmp gputap-run-expandable torch-exp.json gt-run-exp.json --expandable

# the mode each run reports
"$PY" - "$W" <<'PY' | tee -a "$log"
import json, sys, os
w = sys.argv[1]
want = {"gt-late.json": ("in-process", "cupti-callbacks", "package"), "gt.json": ("in-process", "cupti-callbacks", "package"),
        "gt-exp.json": ("in-process", "cupti-callbacks", "package"), "gt-run.json": ("preload", "driver-hooks", "loaded"),
        "gt-run-exp.json": ("preload", "driver-hooks", "loaded")}
for f, (mode, mem, how) in want.items():
    p = os.path.join(w, f)
    if not os.path.exists(p):
        continue
    d = json.load(open(p))
    got = (d["results"]["mode"], d["results"]["memory_source"], d["library"]["how"])
    ok = got == (mode, mem, how) or (how == "package" and got[:2] == (mode, mem) and got[2] == "GPUTAP_LIB")
    print("%s python-gpu/attach:%s  mode/memory/library=%s" % ("ok" if ok else "not ok", f, "/".join(got)))
PY
# gputap run: the ranges are also in the run's NVTX table, counted once
for d in run run-exp; do
	f=$(ls "$W"/$d/*/trace_nvtx_sum.csv 2>/dev/null | head -1)
	if [ -n "$f" ] && grep -q 'matrix_operations' "$f"; then
		say "ok python-gpu/nvtx:$d $(grep -c . "$f") rows; $(grep matrix_operations "$f" | head -1 | cut -c1-120)"
	else
		say "not ok python-gpu/nvtx:$d (no matrix_operations in ${f:-no trace_nvtx_sum.csv})"
	fi
done
cp "$W"/gt.json.gmp.txt "$OUT/gmp-output.txt" 2>/dev/null

# another CUPTI client, both orders (outcome recorded, checked loosely: no crash, one warning or a working profile)
for o in profiler-first gputap-first; do
	if run "busy-$o" "$PY" tests/gpu/py_busy.py "$o"; then
		say "ok python-gpu/other-cupti:$o"
		sed 's/^/    /' "$W/busy-$o.out" | tee -a "$log"
		grep -v '^\s*$' "$W/busy-$o.err" | head -5 | sed 's/^/    stderr: /' | tee -a "$log"
	fi
done

# no GPU visible: init() raises the documented error, nothing printed
out=$(CUDA_VISIBLE_DEVICES= "$PY" -c 'import gputap
try:
    gputap.init()
except gputap.GPUUnavailableError as e:
    print("GPUUnavailableError:", e)' 2>&1)
case "$out" in "GPUUnavailableError: "*) say "ok python-gpu/no-gpu $out" ;; *) say "not ok python-gpu/no-gpu $out" ;; esac

tar czf "$OUT/python-gpu-runs.tgz" -C /tmp --exclude='*.gtr' --exclude='*.gtr.partial' --exclude=venv gt-py 2>/dev/null
p=$(grep -c '^ok ' "$log")
f=$(grep -c '^not ok ' "$log")
echo "$p passed, $f failed" | tee -a "$log"
