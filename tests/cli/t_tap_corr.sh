#!/usr/bin/env bash
# Correlation ids of copies and memsets without a GPU: the stand-in CUPTI
# (tests/tap/fake_cupti.c) under a stand-in libcuda and CUDA runtime
# (tests/fakecuda/), a program making cuMemsetD8Async and cuMemcpyHtoDAsync
# through the driver's pointers and cudaMemsetAsync and cudaMemcpyAsync through
# the runtime (tests/fakecuda/copies_prog.c).  Every copy and memset record of
# the trace links to the API record of the call that made it (the driver
# call's, or the interposed runtime call's), as kernels do, so `gputap analyze`
# finds the launch of each; the enabled callback ids are the copies' and
# memsets' only when API records are wanted.
. "$(dirname "$0")/lib.sh"
src="$GT_TEST_SRCDIR"
cuda=${CUDA_HOME:-/usr/local/cuda}
if ! command -v cc >/dev/null || [ ! -f "$cuda/include/cupti.h" ] || ! command -v python3 >/dev/null; then
	notok build "needs cc, python3 and $cuda/include/cupti.h"
	exit 0
fi
mkdir -p "$T/lib"
if cc -O1 -shared -fPIC -I"$cuda/include" -o "$T/libfakecupti.so" "$src/tap/fake_cupti.c" -lpthread 2>"$T/cc.err" &&
	cc -O1 -shared -fPIC -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -I"$cuda/include" -o "$T/lib/libcuda.so.1" \
		"$src/fakecuda/libcuda.c" -ldl -lpthread 2>>"$T/cc.err" &&
	cc -O1 -shared -fPIC -Wl,-soname,libcudart.so.13 -I"$cuda/include" -o "$T/lib/libcudart.so.13" \
		"$src/fakecuda/libcudart.c" -ldl 2>>"$T/cc.err" &&
	cc -O1 -I"$cuda/include" -o "$T/copies_prog" "$src/fakecuda/copies_prog.c" "$T/lib/libcudart.so.13" \
		-ldl 2>>"$T/cc.err"; then
	ok build
else
	notok build "$(cat "$T/cc.err")"
	exit 0
fi
export LD_LIBRARY_PATH="$T/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run() { # DIR ENV...: the program under the tap with the stand-in CUPTI, 3 rounds of the four calls
	local d=$1
	shift
	timeout -k 3 20 env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$d" GPUTAP_CUPTI_LIB="$T/libfakecupti.so" \
		FAKE_CUPTI_LOG="$d.log" "$@" "$T/copies_prog" 3
}
# links TRACE: "memcpy M memset S api A unlinked U" and one line "NAME N" per API record that has a
# GPU record, by name (U: GPU records whose correlation id no API record carries)
links() {
	python3 - "$1" <<'EOP'
import sys
sys.path.insert(0, "tests/gpu")
import gtr
recs = gtr.read(sys.argv[1])["records"]
api = {r["corr"]: r["name"] for r in recs if r["type"] == "api" and r["corr"]}
ops = [r for r in recs if r["type"] in ("memcpy", "memset")]
names = {}
for r in ops:
    if r["corr"] in api:
        names[api[r["corr"]]] = names.get(api[r["corr"]], 0) + 1
print("memcpy", sum(r["type"] == "memcpy" for r in ops), "memset", sum(r["type"] == "memset" for r in ops),
      "api", sum(r["type"] == "api" for r in recs), "unlinked", sum(r["corr"] not in api for r in ops))
for n in sorted(names):
    print(n, names[n])
EOP
}
trace_of() { ls "$1"/pid*/trace.gtr 2>/dev/null | head -1; }

run "$T/a" >"$T/a.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -qx done "$T/a.out" && ok runs || notok runs "exit $rc" "$(cat "$T/a.out")"
links "$(trace_of "$T/a")" >"$T/a.links" 2>&1
# per round: the driver's memset and copy (their own records), the runtime's memset (recorded as the
# driver call it makes: the runtime's cudaMemsetAsync is not interposed) and copy (cudaMemcpyAsync)
grep -qx "memcpy 6 memset 6 api [0-9]* unlinked 0" "$T/a.links" &&
	ok copies-memsets-link-to-api || notok copies-memsets-link-to-api "$(cat "$T/a.links")"
grep -qx "cuMemsetD8Async 6" "$T/a.links" && grep -qx "cuMemcpyH2D_ASYNC 3" "$T/a.links" &&
	grep -qx "cudaMemcpyAsync 3" "$T/a.links" &&
	ok linked-to-driver-and-runtime-calls || notok linked-to-driver-and-runtime-calls "$(cat "$T/a.links")"
# the callback ids enabled: a copy's (cuMemcpyHtoDAsync_v2 277) and a memset's (cuMemsetD8Async 216)
grep -qx "driver-callback 277" "$T/a.log" && grep -qx "driver-callback 216" "$T/a.log" &&
	ok copy-callbacks-enabled || notok copy-callbacks-enabled "$(cat "$T/a.log")"

# gputap analyze finds the launch of every op (the launch table's Ops and Launched: 12 and 12), none
# said to be launched before the trace began
"$GPUTAP" analyze "$T/a" >"$T/an.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -Eq '^pid[0-9]+ +12 +12 ' "$T/an.out" && ! grep -q "launched before the trace" "$T/an.out" &&
	ok analyze-no-op-before-trace || notok analyze-no-op-before-trace "exit $rc" "$(cat "$T/an.out")"

# without API records (GPU records only) the copies' callbacks are not enabled: nothing to link to
run "$T/g" GPUTAP_TRACE=kernel,memcpy,memset >"$T/g.out" 2>&1
links "$(trace_of "$T/g")" >"$T/g.links" 2>&1
grep -qx "memcpy 6 memset 6 api 0 unlinked 12" "$T/g.links" && ! grep -qx "driver-callback 277" "$T/g.log" &&
	! grep -qx "driver-callback 216" "$T/g.log" &&
	ok no-api-records-no-copy-callbacks || notok no-api-records-no-copy-callbacks "$(cat "$T/g.links" "$T/g.log")"
finish
