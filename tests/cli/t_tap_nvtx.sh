#!/usr/bin/env bash
# NVTX through the injection entry point, without a GPU: push/pop nesting is
# per thread and per domain (a pop in one domain never closes another
# domain's range), as NVTX defines it and as NCCL's own domain needs.
. "$(dirname "$0")/lib.sh"
cuda=${CUDA_HOME:-/usr/local/cuda}
if ! command -v cc >/dev/null || [ ! -f "$cuda/include/nvtx3/nvToolsExt.h" ]; then
	notok nvtx-headers "no C compiler or no $cuda/include/nvtx3"
	finish
fi
cat >"$T/nv.c" <<'EOC'
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
int main(void)
{
	nvtxDomainHandle_t nccl = nvtxDomainCreateA("NCCL");
	nvtxEventAttributes_t a = {0};
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	int bad = 0;
	bad |= nvtxRangePushA("step0") != 0;
	a.message.ascii = "init"; /* opened in NCCL's domain, never closed on this thread */
	bad |= nvtxDomainRangePushEx(nccl, &a) != 0;
	a.message.ascii = "allreduce";
	bad |= nvtxDomainRangePushEx(nccl, &a) != 1;
	bad |= nvtxDomainRangePop(nccl) != 1;
	bad |= nvtxRangePop() != 0;  /* closes step0, not the open NCCL range */
	bad |= nvtxRangePushA("step1") != 0;
	bad |= nvtxRangePushA("inner") != 1;
	bad |= nvtxRangePop() != 1;
	bad |= nvtxRangePop() != 0;
	bad |= nvtxRangePop() != -1; /* nothing open in the default domain */
	printf("%s\n", bad ? "wrong levels" : "levels ok");
	return bad;
}
EOC
if ! cc -I"$cuda/include" -o "$T/nv" "$T/nv.c" -ldl 2>"$T/cc.err"; then
	notok nvtx-compile "$(cat "$T/cc.err")"
	finish
fi
expect_status nvtx-levels 0 env LD_PRELOAD="$LIBGPUTAP" NVTX_INJECTION64_PATH="$LIBGPUTAP" GPUTAP_OUT="$T/o" \
	GPUTAP_TRACE=nvtx "$T/nv"
contains nvtx-levels-output "$T/.out" "levels ok"
f=$(ls "$T"/o/pid*/trace.gtr 2>/dev/null | head -1)
[ -n "$f" ] || { notok nvtx-trace "no trace in $(ls -R "$T/o")"; finish; }
python3 - "$f" <<'EOP' >"$T/r.txt" 2>&1 && ok nvtx-domains || notok nvtx-domains "$(cat "$T/r.txt")"
import sys
sys.path.insert(0, "tests/gpu")
import gtr
rs = [r for r in gtr.read(sys.argv[1])["records"] if r["type"] == "range"]
by = {r["name"]: r for r in rs}
print(sorted((r["name"], r["domain"], r["level"]) for r in rs))
assert set(by) == {"step0", "allreduce", "step1", "inner"}, "init stays open: never written"
assert by["step0"]["level"] == 0 and by["step0"]["domain"] == ""
assert by["allreduce"]["level"] == 1 and by["allreduce"]["domain"] == "NCCL"
assert by["step1"]["level"] == 0 and by["inner"]["level"] == 1
assert by["inner"]["parent_id"] == by["step1"]["range_id"]
assert by["step0"]["start"] < by["allreduce"]["start"] and by["allreduce"]["end"] <= by["step0"]["end"]
EOP
finish
