"""Which collective each NCCL kernel ran, on real traces (tests/fixtures/nccl-kinds-2xh200).

tests/gpu/nccl_kinds.py issued, on 2 x H200 (NCCL 2.28.9, PyTorch 2.11), five rounds of an
AllReduce, a Broadcast, an AllGather and a ReduceScatter of distinct sizes, once under `gputap run`
with NCCL's profiler plugin and once under torch.profiler; each rank printed the list it issued.
`gputap analyze --collectives` must find that list, in order, with each collective's message size
(tests/gpu/check_nccl_kinds.py: kinds and bytes as issued, types consistent, every kernel matched by
the plugin, or by order per process group in PyTorch's traces).  Before the plugin's records were
put on their own kernels, every record sat on the next kernel: 6 of these 7 checks failed."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GPUTAP = os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap")
FIXTURES = os.path.join(REPO, "tests", "fixtures")


def _recorded(fixture, recorder):
    """A two-rank fixture's job output and its ranks' traces: gputap's (rank folders) or, in kineto/,
    torch.profiler's."""
    d = os.path.join(FIXTURES, fixture)
    if recorder == "gputap-plugin":
        return [os.path.join(d, "job.out"), os.path.join(d, "rank0"), os.path.join(d, "rank1")]
    d = os.path.join(d, "kineto")
    return [os.path.join(d, "job.out"), os.path.join(d, "rank0.json.gz"), os.path.join(d, "rank1.json.gz")]


def _check(script, *args):
    """Run tests/gpu/SCRIPT: (exit status, its lines, the end of its output for a failing assert)."""
    cp = subprocess.run([sys.executable, os.path.join(REPO, "tests", "gpu", script)] + list(args),
                        capture_output=True, text=True)
    return cp.returncode, cp.stdout.splitlines(), cp.stdout[-2000:] + cp.stderr[-1000:]


def _analyze(*args):
    """The results of `gputap analyze --format json ARGS`."""
    cp = subprocess.run([GPUTAP, "analyze", "--format", "json"] + list(args), capture_output=True, text=True)
    assert cp.returncode == 0, cp.stderr[-500:]
    return json.loads(cp.stdout)["results"]


@pytest.mark.parametrize("recorder", ["gputap-plugin", "torch-profiler"])
def test_collectives_as_the_job_issued_them(recorder):
    rc, lines, why = _check("check_nccl_kinds.py", GPUTAP, *_recorded("nccl-kinds-2xh200", recorder))
    assert rc == 0 and lines and lines[-1] == "7 passed, 0 failed", why


@pytest.mark.parametrize("rank", [0, 1])
def test_gputap_and_torch_profiler_count_the_same_kernels_in_the_steps(rank):
    """The same DDP job (tests/gpu/ddp_straggler.py: no random numbers, 12 steps) recorded by `gputap run`
    (tests/fixtures/fleet-ddp-2xh200) and by torch.profiler (fleet-kineto-ddp-2xh200) on 2 x H200:
    the kernels and copies launched inside the 12 `train_step` ranges, and each class of kernel, must be
    the same count in both; the NCCL collectives in the steps too (gputap's trace also holds the 4 of
    the start-up, before the profiler started)."""
    g = _analyze("--nvtx", "train_step", "--collectives", os.path.join(FIXTURES, "fleet-ddp-2xh200", "rank%d" % rank))[0]
    k = _analyze("--nvtx", "train_step", "--collectives",
                 os.path.join(FIXTURES, "fleet-kineto-ddp-2xh200", "rank%d.json.gz" % rank))[0]
    assert g["iterations"] == k["iterations"] == 12
    assert g["iteration_assignment"]["by_launch"] == k["iteration_assignment"]["by_launch"] > 900
    assert k["iteration_assignment"]["outside"] == 0 and g["iteration_assignment"]["outside"] > 0
    assert {c["name"]: c["count"] for c in g["kernels"]["classes"] if c["name"] == "gemm"} == {
        c["name"]: c["count"] for c in k["kernels"]["classes"] if c["name"] == "gemm"}
    in_steps = [sum(1 for c in r["collectives"] if c["iteration"] is not None) for r in (g, k)]
    assert in_steps[0] == in_steps[1] == len(k["collectives"]) == len(g["collectives"]) - 4


@pytest.mark.parametrize("recorder", ["gputap-plugin", "torch-profiler"])
def test_two_process_groups_issued_in_another_order_per_rank(recorder):
    """tests/fixtures/nccl-groups-2xh200: the collectives of two process groups over the same ranks,
    issued in a different order on each rank, matched by communicator: each key the same element
    count on both ranks, two communicators, fleet seeing each collective on both ranks
    (tests/gpu/check_nccl_groups.py)."""
    rc, lines, why = _check("check_nccl_groups.py", GPUTAP, *_recorded("nccl-groups-2xh200", recorder))
    assert rc == 0 and lines and lines[-1] == "6 passed, 0 failed", why


def test_message_size_from_pytorch_kernel_arguments(tmp_path):
    """A PyTorch-profiler NCCL kernel's "In msg nelems" / "Out msg nelems" / "dtype": the count is the
    smaller of the two (an AllGather's input, a ReduceScatter's output), PyTorch's type names become
    NCCL's and give the bytes; a type NCCL has no name for is kept, with bytes 0."""
    def kern(ts, name, nin, nout, dtype, corr):
        return {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_%s_RING_LL(ncclDevKernelArgsStorage<4096ul>)" % name,
                "pid": 0, "tid": 7, "ts": ts, "dur": 50,
                "args": {"device": 0, "stream": 7, "correlation": corr, "Collective name": name.lower(),
                         "In msg nelems": nin, "Out msg nelems": nout, "dtype": dtype, "Group size": 2,
                         "Process Group Name": "0"}}

    odd = "Fl" + "\u00f6" * 20  # a long name of the trace's own, not ASCII: cut whole characters only
    ev = [kern(1000, "AllGather", 4096, 8192, "BFloat16", 1), kern(2000, "ReduceScatter", 8192, 4096, "Half", 2),
          kern(3000, "AllReduce", 1000, 1000, "Long", 3), kern(4000, "AllReduce", 10, 10, "ComplexFloat", 4),
          kern(5000, "AllReduce", 10, 10, odd, 5)]
    p = tmp_path / "rank0.json"
    p.write_text(json.dumps({"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 2}, "traceEvents": ev}))
    rows = [(c["name"], c["count"], c["dtype"], c["bytes"], c["comm"], c["seq"])
            for c in _analyze("--collectives", str(p))[0]["collectives"]]
    # no "Seq": numbered in order within the process group, each kind apart (as NCCL numbers them)
    assert rows[:4] == [("AllGather", 4096, "ncclBfloat16", 8192, "0", 0),
                        ("ReduceScatter", 4096, "ncclFloat16", 8192, "0", 0),
                        ("AllReduce", 1000, "ncclInt64", 8000, "0", 0), ("AllReduce", 10, "ComplexFloat", 0, "0", 1)]
    assert rows[4][2] == odd[:8] and rows[4][3] == 0  # 14 of the 15 bytes there are room for


def test_all_reduce_replayed_from_a_cuda_graph():
    """tests/fixtures/nccl-graph-2xh200: an all-reduce captured once into a CUDA graph and replayed each
    step, rank 1 late from step 3 on.  The plugin's record of the capture has no kernel of its own:
    put on the NCCL kernel launched before it (before this was handled) it made a collective of three
    rows on two ranks, whose spread set the arrival noise so high (25 ms) that no arrival was late.  Now: one
    all-reduce a step on both ranks, rank 1 the straggler, late at every affected step."""
    rc, lines, why = _check("check_nccl_graph.py", os.path.join(FIXTURES, "nccl-graph-2xh200"), GPUTAP)
    assert rc == 0 and lines and lines[-1] == "7 passed, 0 failed", why


def test_pipeline_hops_between_all_reduces_with_a_slow_sender():
    """tests/fixtures/nccl-p2p-2xh200: send/receive hops (no plugin records: matched by order among
    themselves) between all-reduces (plugin records), rank 0 the slow sender from step 3 on, rank 1 late
    once by 106 ms in step 0 (NCCL connecting the ranks).  Each hop is one operation of its two ranks,
    never folded into an all-reduce; rank 0 the straggler (by steady cost), late at every affected hop."""
    rc, lines, why = _check("check_nccl_p2p.py", os.path.join(FIXTURES, "nccl-p2p-2xh200"), GPUTAP)
    assert rc == 0 and lines and lines[-1] == "9 passed, 0 failed", why


def test_four_stage_pipeline_with_a_slow_first_stage():
    """tests/fixtures/nccl-p2p-4xh200 (4 x H200): hops 0 -> 1 -> 2 -> 3 matched by NCCL's send and
    receive records, each in its pair's communicator; ranks 1 and 2 pass rank 0's lateness on; rank 0
    the straggler.  Also through `gputap fleet` with no options, whose default iterations are the
    train_step ranges, not NCCL's own ncclCommDestroy (before: rank 2 first, "late in 0 of 10
    iterations" for ranks 0 and 1)."""
    d = os.path.join(FIXTURES, "nccl-p2p-4xh200")
    rc, lines, why = _check("check_nccl_p2p.py", d, GPUTAP)
    assert rc == 0 and lines and lines[-1] == "9 passed, 0 failed", why
    # the same job recorded by torch.profiler (kineto/): its send and receive kernels carry "Src Rank" /
    # "Dst Rank" and name their pair; each kind numbered apart in the process group (before: every
    # kernel of the default group in one order, so 3 of the 9 checks)
    rc, lines, why = _check("check_nccl_p2p.py", os.path.join(d, "kineto"), GPUTAP)
    assert rc == 0 and lines and lines[-1] == "9 passed, 0 failed", why
    cp = subprocess.run([GPUTAP, "fleet", "--quiet", d], capture_output=True, text=True,
                        env=dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), GPUTAP_PYTHON=sys.executable))
    assert cp.returncode == 0, cp.stderr[-1000:]
    rows = cp.stdout.split("Stragglers")[1].splitlines()[2:6]
    assert [r.split()[0] for r in rows] == ["0", "3", "2", "1"], rows
    assert "8/10 consistent   compute" in rows[0] and "waiting for rank 0" in rows[3], rows
    # each pair's communicator numbers it 0 and 1: fleet names the hops in the job's ranks
    from gputap import fleet

    c = fleet.analyze([d], workers=1, gputap=GPUTAP, progress=None).collectives
    hops = c[c["name"].str.startswith("SendRecv")]
    assert sorted(set(hops["name"])) == ["SendRecv 0>1", "SendRecv 1>2", "SendRecv 2>3"]
    assert all("SendRecv %d>%d" % tuple(r) == n for n, r in zip(hops["name"], hops["ranks"]))


def test_tensor_and_data_parallel_pairs_with_a_slow_rank():
    """tests/fixtures/nccl-2d-4xh200 (4 x H200): collectives of tensor- and data-parallel pairs matched by
    NCCL's plugin, no false "fewer ranks" warning; rank 3 the straggler; its tensor-parallel partner's
    lateness at the data-parallel all-reduce put down to it ("waiting for rank 3"), not a second
    straggler (before: rank 2 at 75.7 ms, cause unclear)."""
    for sub in ("", "kineto"):  # recorded by gputap run, and by torch.profiler
        rc, lines, why = _check("check_nccl_2d.py", os.path.join(FIXTURES, "nccl-2d-4xh200", sub), GPUTAP)
        assert rc == 0 and lines and lines[-1] == "10 passed, 0 failed", (sub, why)


def test_all_to_all_of_four_ranks_with_a_slow_rank():
    """tests/fixtures/nccl-a2a-4xh200 (4 x H200): each all-to-all is 12 operations of two ranks (the
    ordered pairs of different ranks), each rank's own share left out (before: 32 rows "left out" and
    16 operations a step); rank 2 the straggler, late at its exchanges of every affected step."""
    rc, lines, why = _check("check_nccl_a2a.py", os.path.join(FIXTURES, "nccl-a2a-4xh200"), GPUTAP)
    assert rc == 0 and lines and lines[-1] == "8 passed, 0 failed", why


def test_process_group_names_empty_odd_and_long(tmp_path):
    """PyTorch-profiler traces whose process groups are named "", with quotes and a backslash, in three
    scripts, and two 300-character names differing only at the end: five communicators, each
    numbered in order on its own, the odd names kept as written, the two long ones kept apart (once
    cut to the same 63 bytes, they were one communicator); rank 1's 0.5 ms lateness in one group found;
    the Parquet files and summary written."""
    from gputap import fleet

    names = ["", 'pg with spaces "quoted" \\ back', "\u00fcn\u00efc\u00f8d\u00e9-\u0433\u0440\u0443\u043f\u043f\u0430-\u7ec4",
             "x" * 300, "x" * 300 + "B"]
    job = tmp_path / "job"
    job.mkdir()
    for rank in (0, 1):
        ev, t = [], 1_000_000.0
        for step in range(4):
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 1, "tid": 1,
                       "ts": t, "dur": 20000})
            for j, pg in enumerate(names):
                s = t + 1000 + j * 2000 + (500 if rank == 1 and j == 3 else 0)
                ev.append({"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": s,
                           "dur": 100 + (500 if rank == 0 and j == 3 else 0),
                           "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)",
                           "args": {"device": 0, "stream": 7, "correlation": 10 * step + j, "Process Group Name": pg,
                                    "In msg nelems": 100 + j, "Out msg nelems": 100 + j, "dtype": "Float"}})
            t += 20000
        (job / ("rank%d.json" % rank)).write_text(json.dumps(
            {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": ev}))
    res = fleet.analyze([str(job)], out=str(tmp_path / "out"), workers=1, gputap=GPUTAP, progress=None)
    c = res.collectives
    comms = sorted(set(c["comm"]))
    assert len(c) == 20 and all(len(x) == 2 for x in c["ranks"])
    assert len(comms) == 5 and names[1] in comms and names[2] in comms, comms
    longs = [x for x in comms if x.startswith("xxxx")]
    assert len(longs) == 2 and all(len(x.encode()) == 63 for x in longs)
    assert "(order)" in comms  # the unnamed group: the unknown communicator, numbered by position
    for comm in comms:
        if comm != "(order)":  # named groups: in order within the group
            assert sorted(c[c["comm"] == comm]["seq"]) == [0, 1, 2, 3], comm
    late = c[c["is_late"]]
    assert len(late) == 4 and set(late["late_rank"]) == {1} and set(late["count"]) == {103}
    assert len(set(late["comm"])) == 1 and late["comm"].iloc[0] in longs
    for f in ("ranks.parquet", "iterations.parquet", "collectives.parquet", "summary.json", "report.html"):
        assert (tmp_path / "out" / f).stat().st_size > 0


def _pipeline(d, p2p_records, steps=6, late_from=2, late_ms=5.0):
    """Three ranks of a pipeline (0 -> 1 -> 2) as gputap run folders: each step an all-reduce, a hop
    (rank 0 sends to 1; rank 1 receives from 0, then sends to 2; rank 2 receives from 1) and an
    all-reduce, in NVTX "train_step" ranges; rank 0 sends late_ms late from step late_from on.  The
    all-reduces come with profiler-plugin records (NCCL 2.28's timing: just after the launch call);
    the sends and receives too when p2p_records (peer in root, counted per direction and peer)."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    from gputap.fleet.gtrwrite import TraceWriter

    US, MS, T0, COMM = 1000, 1000000, 1795000000 * 10 ** 9, 0x77AA
    AR, SR = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", \
        "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
    os.makedirs(d)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump({"host": "node00", "start_ns": T0, "run_json_version": 1}, f)
    ws = [TraceWriter(os.path.join(d, "rank%d" % r, "trace.gtr"), "rank%d" % r, "node00", pid=100 + r, start_ns=T0)
          for r in range(3) if not os.makedirs(os.path.join(d, "rank%d" % r))]
    corr = [1, 1, 1]

    def launch(r, name, at, start, end, rec=None):
        w = ws[r]
        w.api("cudaLaunchKernelExC", at, at + 10 * US, corr[r])
        w.kernel(name, r, 7, start, end, corr[r])
        corr[r] += 1
        if rec:
            func, seq, peer = rec
            w.nccl_coll(COMM, seq, at + 12 * US, at + 20 * US, func, "RING" if peer < 0 else "", "LL" if peer < 0 else "",
                        1000 if peer < 0 else 4096, r, 3, root=peer)

    for i in range(steps):
        t = T0 + MS + i * 20 * MS
        for r in range(3):
            ws[r].range("train_step", t - 100 * US, t + 15 * MS)
            launch(r, AR, t, t + 100 * US, t + MS, ("AllReduce", 2 * i, -1))
        s0 = t + 2 * MS + (late_ms * MS if i >= late_from else 0)  # rank 0's send starts (its GPU was busy)
        e0 = int(s0 + 500 * US)
        launch(0, SR, t + 1900 * US, int(s0), e0, ("Send", i, 1) if p2p_records else None)
        launch(1, SR, t + 1900 * US, t + 2 * MS, e0, ("Recv", i, 0) if p2p_records else None)
        launch(1, SR, t + 1950 * US, e0, e0 + 500 * US, ("Send", i, 2) if p2p_records else None)
        launch(2, SR, t + 1900 * US, t + 2 * MS, e0 + 500 * US, ("Recv", i, 1) if p2p_records else None)
        for r in range(3):
            a = t + 12 * MS
            launch(r, AR, a, a + 100 * US, a + MS, ("AllReduce", 2 * i + 1, -1))
    for w in ws:
        w.close()


@pytest.mark.parametrize("p2p_records", [True, False])
def test_pipeline_of_three_ranks(tmp_path, p2p_records):
    """Sends and receives of a 3-stage pipeline.  With the plugin's send/receive records (NCCL 2.26 on):
    each hop is one operation of its two ranks, named for the pair ("SendRecv 0>1", "SendRecv 1>2"),
    the k-th send from A to B with the k-th receive by B from A; rank 0, sending 5 ms late from step
    2 on, is late at every such hop 0>1.  Without them (older NCCL) the hops are matched by order
    among each rank's hops, and never take the key of an all-reduce another rank launched at the same
    position (before, rank 0's send took the key of rank 1's next all-reduce)."""
    from gputap import fleet

    d = str(tmp_path / "pipe")
    _pipeline(d, p2p_records)
    res = fleet.analyze([d], nvtx="train_step", workers=1, gputap=GPUTAP, progress=None)
    c = res.collectives
    assert res.summary["ranks"] == 3 and not res.summary["failed"]
    assert not [w for w in res.summary["warnings"] if "rows left out" in w], res.summary["warnings"]
    assert p2p_records != any("fewer ranks" in w for w in res.summary["warnings"]), res.summary["warnings"]
    ar = c[c["name"] == "AllReduce"]
    assert len(ar) == 12 and all(list(x) == [0, 1, 2] for x in ar["ranks"]) and set(ar["match"]) == {"nccl"}
    hops = c[c["name"] != "AllReduce"]
    if p2p_records:
        assert sorted(set(hops["name"])) == ["SendRecv 0>1", "SendRecv 1>2"] and set(hops["match"]) == {"nccl"}
        for name, pair in (("SendRecv 0>1", [0, 1]), ("SendRecv 1>2", [1, 2])):
            h = hops[hops["name"] == name]
            assert len(h) == 6 and all(list(x) == pair for x in h["ranks"]), h[["name", "seq", "ranks"]]
            assert sorted(h["seq"]) == list(range(6)) and set(h["count"]) == {4096}
        h01 = hops[hops["name"] == "SendRecv 0>1"].sort_values("seq")
        assert list(h01["is_late"]) == [False, False, True, True, True, True]
        assert all(r == 0 and 4.9 < m < 5.1 for r, m in zip(h01["late_rank"][2:], h01["late_ms"][2:]))
        # rank 1 waited in its receive and sends on late: late at hop 1>2, but the lateness is rank 0's
        # (in steps 0-1 it is 0.5 ms late there, the transfer's own time in this model: its own)
        h12 = hops[(hops["name"] == "SendRecv 1>2") & hops["is_late"]]
        assert set(h12["late_rank"]) == {1}
        assert sorted(h12[h12["cause"] == "waiting for rank 0"]["iteration"]) == [2, 3, 4, 5], h12[["iteration", "cause"]]
        st = {x["rank"]: x for x in res.summary["stragglers"]}
        assert res.summary["stragglers"][0]["rank"] == 0 and 19 < st[0]["cost_ms"] < 21
        assert st[1]["cost_ms"] < 1.1 and st[1]["cause"] == "waiting for rank 0"
    else:
        assert set(hops["name"]) == {"SendRecv"} and set(hops["match"]) == {"order"}
        assert len(hops) == 12 and sum(len(x) for x in hops["ranks"]) == 24  # 24 hop kernels, none lost


def test_nccls_own_ranges_are_not_the_iterations(tmp_path):
    """NCCL marks its API calls with NVTX ranges of its own domain ("NCCL"): on a real 4-rank job two
    ncclCommDestroy ranges, seconds long, were taken for the iterations of two ranks (the default pick:
    the range that repeats and covers the most time), over ten train_step steps.  They are not
    candidates; a range of that name in the default domain still is."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    from gputap.fleet.gtrwrite import TraceWriter

    US, MS, T0 = 1000, 1000000, 1795000000 * 10 ** 9
    for dom, want in (("NCCL", "train_step"), (None, "ncclCommDestroy")):
        p = str(tmp_path / ("%s.gtr" % dom))
        w = TraceWriter(p, "rank0", "node00", pid=100, start_ns=T0)
        for i in range(10):
            t = T0 + MS + i * 20 * MS
            w.range("train_step", t, t + 15 * MS)
            w.api("cudaLaunchKernel", t + 10 * US, t + 20 * US, i + 1)
            w.kernel("gemm", 0, 7, t + 100 * US, t + 5 * MS, i + 1)
        for k in range(2):
            t = T0 + 300 * MS + k * 1200 * MS
            w.range("ncclCommDestroy", t, t + 1000 * MS, domain=dom)
        w.close()
        cp = subprocess.run([GPUTAP, "analyze", p], capture_output=True, text=True)
        assert cp.returncode == 0, cp.stderr
        assert 'iterations are the NVTX range "%s"' % want in cp.stderr, cp.stderr


@pytest.mark.parametrize("peers", [3, 5])
def test_all_to_all_as_sends_and_receives(tmp_path, peers):
    """An all-to-all runs a send and a receive per rank in one NCCL kernel, itself included.  Its own
    share (a send to itself, a receive from itself) is no pair: left out (kept, the two rows made one
    collective of one GPU twice).  With 3 peers (6 records) each is a row of its pair; with 5 (10,
    more than 8) the kernel stays one row matched by order — a row per pair would make an all-to-all
    of N ranks N^2 rows."""
    sys.path.insert(0, os.path.join(REPO, "python"))
    from gputap.fleet.gtrwrite import TraceWriter

    US, MS, T0 = 1000, 1000000, 1795000000 * 10 ** 9
    p = str(tmp_path / "a2a.gtr")
    w = TraceWriter(p, "rank0", "node00", pid=100, start_ns=T0)
    for i in range(3):
        t = T0 + MS + i * 10 * MS
        w.api("cudaLaunchKernelExC", t, t + 10 * US, i + 1)
        w.kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 0, 7, t + 100 * US, t + MS, i + 1)
        for q in range(0, peers + 1):  # peer 0 is itself: an all-to-all's own share, no pair
            w.nccl_coll(0x55, i, t + 12 * US, t + 20 * US, "Send", "", "", 256, 0, peers + 1, root=q)
            w.nccl_coll(0x55, i, t + 13 * US, t + 20 * US, "Recv", "", "", 256, 0, peers + 1, root=q)
    w.close()
    rows = [(c["name"], c["seq"], c["match"]) for c in _analyze("--collectives", p)[0]["collectives"]]
    if peers == 3:
        assert len(rows) == 3 * 6 and {m for _, _, m in rows} == {"nccl"}
        assert sorted({n for n, _, _ in rows}) == ["SendRecv 0>1", "SendRecv 0>2", "SendRecv 0>3", "SendRecv 1>0",
                                                    "SendRecv 2>0", "SendRecv 3>0"]
    else:
        assert rows == [("SendRecv", 0, "order"), ("SendRecv", 1, "order"), ("SendRecv", 2, "order")], rows
