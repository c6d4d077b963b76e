#!/usr/bin/env bash
# Correlation ids of copies and memsets on a GPU: tests/gpu/corr_copies.cu, built with a shared and
# with a static CUDA runtime, under the tap; every copy and memset record must carry the
# correlation id of an API record (the driver call's, or the interposed cudaMemcpy*'s), kernels
# too, and `gputap analyze` must find no op launched before the trace.  With OLD_LIB set (an
# earlier libgputap.so) the same runs under it are counted for comparison, and the host time of a
# launch, a memset and a copy is measured without the tap, under OLD_LIB and under the new one.
#   GT_GPU_BUILD=DIR GPUTAP=DIR/gputap [OLD_LIB=...] tests/gpu/corr.sh OUTDIR
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
B=${GT_GPU_BUILD:?GT_GPU_BUILD: the folder of libgputap.so}
GPUTAP=${GPUTAP:-$B/gputap}
W=${1:?usage: corr.sh OUTDIR}
mkdir -p "$W"
LIB=$B/libgputap.so
say() { echo "$@" | tee -a "$W/results.txt"; }
for rt in shared static; do
	nvcc -O2 -cudart $rt -o "$W/cc_$rt" tests/gpu/corr_copies.cu -L"$(dirname "$(command -v nvcc)")/../lib64/stubs" \
		-lcuda >>"$W/build.log" 2>&1 || say "not ok build/$rt: $(tail -5 "$W/build.log")"
done
tap() { # LIB OUTDIR CMD...
	local l=$1 o=$2
	shift 2
	env LD_PRELOAD="$l" CUDA_INJECTION64_PATH="$l" GPUTAP_OUT="$o" "$@"
}
links() { # TRACE_DIR: "memcpy M memset S kernel K unlinked U" and the linked API names with their counts
	python3 - "$(ls "$1"/*/trace.gtr | head -1)" <<'EOP'
import sys
sys.path.insert(0, "tests/gpu")
import gtr
recs = gtr.read(sys.argv[1])["records"]
api = {r["corr"]: r["name"] for r in recs if r["type"] == "api" and r["corr"]}
ops = [r for r in recs if r["type"] in ("memcpy", "memset", "kernel")]
un = [r for r in ops if r["corr"] not in api]
names = {}
for r in ops:
    if r["corr"] in api:
        k = r["type"] + ":" + api[r["corr"]]
        names[k] = names.get(k, 0) + 1
print("memcpy", sum(r["type"] == "memcpy" for r in ops), "memset", sum(r["type"] == "memset" for r in ops),
      "kernel", sum(r["type"] == "kernel" for r in ops), "unlinked", len(un),
      "unlinked-types", sorted(set(r["type"] for r in un)))
print("linked", " ".join("%s=%d" % kv for kv in sorted(names.items())))
EOP
}
for rt in shared static; do
	tap "$LIB" "$W/new-$rt" "$W/cc_$rt" check 10 >"$W/new-$rt.out" 2>&1
	say "new $rt exit $? $(cat "$W/new-$rt.out")"
	links "$W/new-$rt" >"$W/new-$rt.links" 2>&1
	say "new $rt $(cat "$W/new-$rt.links")"
	# 10 rounds of 3 memsets, 4 copies, 1 kernel; then 1 memset and 1 copy
	awk 'NR == 1 && $2 >= 41 && $4 >= 31 && $6 == 10 && $8 == 0 {ok = 1} END {exit !ok}' "$W/new-$rt.links" &&
		say "ok links/$rt" || say "not ok links/$rt"
	"$GPUTAP" analyze "$W/new-$rt" >"$W/an-$rt.txt" 2>&1
	! grep -q "launched before the trace" "$W/an-$rt.txt" && say "ok analyze-none-before-trace/$rt" ||
		say "not ok analyze-none-before-trace/$rt: $(grep "launched before the trace" "$W/an-$rt.txt")"
	if [ -n "${OLD_LIB:-}" ]; then
		tap "$OLD_LIB" "$W/old-$rt" "$W/cc_$rt" check 10 >/dev/null 2>&1
		links "$W/old-$rt" >"$W/old-$rt.links" 2>&1
		say "old $rt $(cat "$W/old-$rt.links")"
		"$GPUTAP" analyze "$W/old-$rt" 2>&1 | grep "launched before the trace" | sed 's/^/old: /' | tee -a "$W/results.txt"
	fi
done
# host time per call, three rounds in turn: no tap, the earlier library, the new one
if [ -n "${OLD_LIB:-}" ]; then
	for r in 1 2 3; do
		"$W/cc_shared" time 2000 | sed "s/^/none $r /" | tee -a "$W/times.txt"
		tap "$OLD_LIB" "$W/t-old$r" "$W/cc_shared" time 2000 | sed "s/^/old $r /" | tee -a "$W/times.txt"
		tap "$LIB" "$W/t-new$r" "$W/cc_shared" time 2000 | sed "s/^/new $r /" | tee -a "$W/times.txt"
	done
fi
