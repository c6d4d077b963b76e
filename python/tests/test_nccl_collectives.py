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
    # no "Seq": numbered in order within the process group
    assert rows[:4] == [("AllGather", 4096, "ncclBfloat16", 8192, "0", 0),
                        ("ReduceScatter", 4096, "ncclFloat16", 8192, "0", 1),
                        ("AllReduce", 1000, "ncclInt64", 8000, "0", 2), ("AllReduce", 10, "ComplexFloat", 0, "0", 3)]
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
