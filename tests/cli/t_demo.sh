#!/usr/bin/env bash
# `make demo` (tools/demo.sh) without a GPU: exit 0, and what it shows is real multi-rank work —
# iterations, NCCL, overlap, kernel classes, the per-op analyses — with a report page for each
# input; its output folder is git-ignored, replaced on a rerun, and a foreign folder is refused.
. "$(dirname "$0")/lib.sh"
top="$GT_TEST_SRCDIR/.."
# no GPU here, whatever the machine: an nvidia-smi that finds none
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' >"$T/bin/nvidia-smi"
chmod +x "$T/bin/nvidia-smi"
demo() { PATH="$T/bin:$PATH" GPUTAP="$GPUTAP" bash "$top/tools/demo.sh" "$@"; }

demo "$T/d" >"$T/demo.out" 2>"$T/demo.err"
rc=$?
[ $rc -eq 0 ] && ok exit-0 || notok exit-0 "exit $rc" "$(tail -20 "$T/demo.err")"
O="$T/demo.out"
A="$T/d/nccl-2rank/analysis.txt" # every table; the terminal gets each input's summary
contains says-no-gpu "$O" "gputap demo: no GPU here"
contains iterations-per-rank "$A" "Measured per iteration (profiler-step"
contains iterations-two-ranks "$O" "iterations   2 (profiler-step) on 2 GPUs"
contains iterations-torch-train "$O" "iterations   10 (profiler-step) on 1 GPU"
contains nccl-table "$A" "NCCL Statistic:"
contains nccl-sendrecv "$O" "SendRecv"
contains nccl-overlap "$O" "overlap      communication 775 ms, 17.4% of it hidden by compute"
contains classes "$O" "embedding "
contains classes-gemm "$O" "gemm "
contains idle-by-cause "$A" "Idle time per stream by cause"
contains top-kernels "$O" "top comm     ncclKernel_SendRecv"
contains library "$O" "library      5 configs"
# a screenful per input, not every table: at most 25 lines from one "===" to the next
awk '/^===/ { if (n > m) m = n; n = 0 } { n++ } END { if (n > m) m = n; print m }' "$O" >"$T/maxlines"
[ "$(cat "$T/maxlines")" -le 25 ] && ok lines-per-input || notok lines-per-input "$(cat "$T/maxlines") lines in one part"
# make demo opens with its headline, not the build's command lines
make -n -s -C "$top" demo O="$T/nobuild" 2>/dev/null | head -3 >"$T/make-n"
if head -1 "$T/make-n" | grep -q '^echo "gputap demo: ' && ! grep -q '^cc \|^gcc ' "$T/make-n"; then
	ok make-demo-headline-first
else
	notok make-demo-headline-first "$(cat "$T/make-n")"
fi
# no error, and the demo's class map is unambiguous on its inputs
if grep -q "error\|match keys of two classes" "$T/demo.err" "$O"; then
	notok no-errors "$(grep "error\|match keys" "$T/demo.err" "$O" | head -5)"; else ok no-errors; fi
for p in nccl-2rank torch-train cuda-example; do
	[ -s "$T/d/$p/report.html" ] && ok "page-$p" || notok "page-$p"
done
contains page-nccl-idle "$T/d/nccl-2rank/report.html" "<h2 id=\"idle\">"
contains page-nccl-classes "$T/d/nccl-2rank/report.html" "embedding"
contains page-torch-train-launches "$T/d/torch-train/report.html" "<h2 id=\"launches\">"
[ -s "$T/d/torch-train/pid591/trace.json" ] && ok converted || notok converted
# a rerun replaces the demo's folder; a folder the demo did not make is left alone
demo "$T/d" >"$T/demo2.out" 2>&1 && ok rerun || notok rerun "$(tail -5 "$T/demo2.out")"
mkdir -p "$T/mine" && echo keep >"$T/mine/file"
demo "$T/mine" >"$T/demo3.out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ -s "$T/mine/file" ] && ok foreign-folder-kept || notok foreign-folder-kept "exit $rc"
contains foreign-folder-said "$T/demo3.out" "was not made by the demo"
grep -qx '/demo-run/' "$top/.gitignore" && ok output-ignored || notok output-ignored ".gitignore lacks /demo-run/"
# With a GPU (stand-ins for nvidia-smi and nvcc: this machine has none): the bundled example is built
# where the demo then runs it, and `gputap run` runs it (exit 0 in run.json, its output printed).
mkdir -p "$T/gbin"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3"\n' >"$T/gbin/nvidia-smi"
cat >"$T/gbin/nvcc" <<'EOS'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -o ] && { out=$2; shift; }; shift; done
printf '#!/bin/sh\necho stand-in-example-ran\n' >"$out" && chmod +x "$out"
EOS
chmod +x "$T/gbin/nvidia-smi" "$T/gbin/nvcc"
PATH="$T/gbin:$PATH" GT_DEMO_BUILD="$T/exbuild" GPUTAP="$GPUTAP" bash "$top/tools/demo.sh" "$T/g" >"$T/g.out" 2>&1
contains gpu-branch "$T/g.out" "gputap demo: GPU found; profiling examples/cuda_example"
contains gpu-example-ran "$T/g.out" "stand-in-example-ran"
[ -x "$T/exbuild/cuda_example" ] && ok gpu-example-built || notok gpu-example-built "$(cat "$T/g.out")"
if grep -q '"exit_status": *0' "$T/g/cuda-example/run.json" 2>/dev/null; then ok gpu-example-found; else
	notok gpu-example-found "$(cat "$T/g.out")"; fi
if grep -q "command not found" "$T/g.out"; then notok gpu-no-not-found "$(cat "$T/g.out")"; else ok gpu-no-not-found; fi
finish
