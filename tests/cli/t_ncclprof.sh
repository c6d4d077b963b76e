#!/usr/bin/env bash
# The tap as NCCL's profiler plugin, without NCCL or a GPU: a stand-in for NCCL
# (tests/ncclprof/fake_nccl.c) loads libgputap.so through NCCL_PROFILER_PLUGIN as NCCL
# does and reports collectives through each interface version; the trace must hold one
# record per collective with the communicator hash, sequence number and NCCL's names.
. "$(dirname "$0")/lib.sh"
if ! command -v cc >/dev/null; then
	notok build-fake-nccl "no C compiler"
	exit 0
fi
cc -O1 -o "$T/fake_nccl" "$GT_TEST_SRCDIR/ncclprof/fake_nccl.c" -ldl 2>"$T/cc.err" && ok build-fake-nccl ||
	{ notok build-fake-nccl "$(cat "$T/cc.err")"; exit 0; }
PY=${PYTHON:-python3}
for v in 5 4 3 2 1; do
	out="$T/o$v"
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$out" RANK=3 NCCL_PROFILER_PLUGIN="$LIBGPUTAP" \
		"$T/fake_nccl" "$v" 4 >"$T/run.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -qx "version $v name gputap" "$T/run.out" && grep -qx "events 8" "$T/run.out" && ok "v$v-loaded" ||
		notok "v$v-loaded" "exit $rc" "$(cat "$T/run.out")"
	PYTHONPATH="$GT_TEST_SRCDIR/../python" "$PY" - "$out/rank3" "$v" >"$T/check.out" 2>&1 <<'EOP'
import sys
import gputap
t = gputap.read_trace(sys.argv[1])
n = t.nccl
v = int(sys.argv[2])
assert len(n) == 8, len(n)
assert set(n["plugin_version"]) == {v}, set(n["plugin_version"])
for h in ("0x1111222233334444", "0xabcdef0012345678"):
    assert list(n[n["comm"] == h]["seq"]) == [0, 1, 2, 3], n[["comm", "seq"]]
assert set(n["func"]) == {"AllReduce"} and set(n["dtype"]) == {"ncclFloat32"}, n[["func", "dtype"]]
assert set(n["algo"]) == {"RING"} and set(n["proto"]) == {"SIMPLE"}, n[["algo", "proto"]]
assert set(n["count"]) == {1024} and set(n["rank"]) == {3} and set(n["nchannels"]) == {16}
assert set(n["nranks"]) == ({8} if v >= 4 else {0})
assert (n["end_ns"] >= n["start_ns"]).all() and (n["tid"] > 0).all()
print("checked")
EOP
	grep -qx checked "$T/check.out" && ok "v$v-records" || notok "v$v-records" "$(tail -n 15 "$T/check.out")"
done
# sends and receives (interface versions 4 and 5): each a record with its peer, numbered per
# communicator, direction and peer; versions 1-3 are not asked for them and record none
for v in 5 4 3; do
	out="$T/p$v"
	env LD_PRELOAD="$LIBGPUTAP" GPUTAP_OUT="$out" RANK=3 NCCL_PROFILER_PLUGIN="$LIBGPUTAP" \
		"$T/fake_nccl" "$v" 1 p2p >"$T/run.out" 2>&1
	rc=$?
	want=$([ $v -ge 4 ] && echo 4 || echo 0)
	[ $rc -eq 0 ] && grep -qx "p2p events $want" "$T/run.out" && ok "v$v-p2p-events" ||
		notok "v$v-p2p-events" "$(cat "$T/run.out")"
	PYTHONPATH="$GT_TEST_SRCDIR/../python" "$PY" - "$out/rank3" "$v" >"$T/check.out" 2>&1 <<'EOP'
import sys
import gputap
n = gputap.read_trace(sys.argv[1]).nccl
v = int(sys.argv[2])
p = n[n["func"].isin(["Send", "Recv"])]
rows = [(c, f, int(r), int(s), int(k), d) for c, f, r, s, k, d in
        zip(p["comm"], p["func"], p["root"], p["seq"], p["count"], p["dtype"])]
want = [("0x1111222233334444", "Send", 4, 0, 4096, "ncclBfloat16"), ("0x1111222233334444", "Recv", 2, 0, 4097, "ncclBfloat16"),
        ("0xabcdef0012345678", "Send", 4, 0, 4098, "ncclBfloat16"), ("0x1111222233334444", "Send", 4, 1, 4099, "ncclBfloat16")]
assert rows == (want if v >= 4 else []), rows
assert len(n) - len(p) == 2
print("checked")
EOP
	grep -qx checked "$T/check.out" && ok "v$v-p2p-records" || notok "v$v-p2p-records" "$(tail -n 15 "$T/check.out")"
done
# loaded by NCCL alone, with the tap not recording (no GPUTAP_OUT): it answers NCCL, records nothing
expect_status plugin-only-runs 0 env NCCL_PROFILER_PLUGIN="$LIBGPUTAP" "$T/fake_nccl" 5 2
contains plugin-only-no-events "$T/.out" "events 0"
# gputap run loads the tap as NCCL's profiler plugin by itself; a plugin the user chose is kept
expect_status run-sets-plugin 0 env -u NCCL_PROFILER_PLUGIN "$GPUTAP" run -o "$T/rp" -- /bin/true
grep -q "\"NCCL_PROFILER_PLUGIN\": \".*libgputap.so\"" "$T/rp/run.json" && ok run-sets-plugin-to-the-tap ||
	notok run-sets-plugin-to-the-tap "$(grep -n NCCL "$T/rp/run.json")"
expect_status run-keeps-users-plugin 0 env NCCL_PROFILER_PLUGIN=/opt/other/libprof.so "$GPUTAP" run -o "$T/ru" -- /bin/true
! grep -q "\"NCCL_PROFILER_PLUGIN\": \".*libgputap.so\"" "$T/ru/run.json" && ok run-keeps-users-plugin-not-overridden ||
	notok run-keeps-users-plugin-not-overridden "$(grep -n NCCL "$T/ru/run.json")"
finish
