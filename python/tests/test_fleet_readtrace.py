"""gputap.read_trace: a run's records as pandas / Arrow tables, checked against what the generator
wrote and against gputap analyze on a recorded run."""
import json
import os
import subprocess

import pytest

import gputap
from gputap.fleet import generate

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GPUTAP = os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("job8"))
    truth = generate.write_gtr(d, ranks=8, gpus_per_host=4, iterations=3, plants=False)
    return d, truth


def test_run_folder_tables(job):
    d, truth = job
    t = gputap.read_trace(os.path.join(d, "host0"))  # ranks 0..3
    assert sorted(set(t.kernels["proc"])) == ["rank0", "rank1", "rank2", "rank3"]
    assert [h["host"] for h in t.header] == ["node00"] * 4
    # per rank and iteration: 5 compute kernels and 2 NCCL kernels
    assert len(t.kernels) == 4 * 3 * 7
    assert (t.kernels["name"].str.startswith("ncclDevKernel_AllReduce")).sum() == 4 * 3 * 2
    assert len(t.copies) == 4 * 3 and set(t.copies["kind"]) == {"HtoD"} and set(t.copies["bytes"]) == {4 << 20}
    assert list(t.ranges[t.ranges["proc"] == "rank0"]["name"]) == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    nc = t.nccl[t.nccl["proc"] == "rank2"]
    assert list(nc["seq"]) == list(range(6))
    assert set(nc["comm"]) == {"0x%016x" % generate.WORLD_COMM} and set(nc["func"]) == {"AllReduce"}
    assert set(nc["algo"]) == {"RING"} and set(nc["proto"]) == {"SIMPLE"} and set(nc["nranks"]) == {8}
    assert (t.kernels["duration_ns"] > 0).all()
    # every kernel has its launching API call
    assert set(t.kernels["corr_id"]) <= set(t.api["corr_id"])
    arrow = t.to_arrow()
    assert arrow["kernels"].num_rows == len(t.kernels) and "start_ns" in arrow["api"].column_names


def test_one_trace_and_a_corrupt_one(job):
    d, truth = job
    one = gputap.read_trace(os.path.join(d, "host0", "rank1", "trace.gtr"))
    assert set(one.kernels["proc"]) == {"rank1"} and len(one.nccl) == 6
    bad = os.path.join(d, "broken.gtr")
    with open(bad, "wb") as f:
        f.write(b"not a trace at all" * 10)
    with pytest.raises(gputap.TraceFormatError) as e:
        gputap.read_trace(bad)
    assert bad in str(e.value) and "bad magic" in str(e.value)
    with pytest.raises(FileNotFoundError):
        gputap.read_trace(os.path.join(d, "nothing-here"))


def test_recorded_run_agrees_with_analyze():
    run = os.path.join(REPO, "examples", "recorded", "torch-train")
    t = gputap.read_trace(run)
    cp = subprocess.run([GPUTAP, "analyze", "--format", "json", run], capture_output=True, check=True)
    r = json.loads(cp.stdout)["results"][0]
    assert len(t.kernels) == r["kernels"]["count"] + r["nccl"]["count"]
    assert abs(t.kernels["duration_ns"].sum() / 1e6 - (r["kernels"]["time_ms"] + r["nccl"]["time_ms"])) < 1e-3
    assert len(t.copies) + len(t.memsets) == sum(m["count"] for m in r["memops"])


def test_compact_trace_reads_as_the_plain_one(tmp_path):
    """Format version 2 (blocks, delta-coded, compressed) gives the tables version 1 gives."""
    v1 = os.path.join(REPO, "examples", "recorded", "torch-train", "pid591", "trace.gtr")
    v2 = os.path.join(REPO, "tests", "fixtures", "trace-v2", "trace.gtr")
    a, b = gputap.read_trace(v1), gputap.read_trace(v2)
    assert [h["version"] for h in a.header + b.header] == [1, 2]
    for t in a.TABLES:
        ta, tb = getattr(a, t), getattr(b, t)
        assert len(ta) == len(tb), t
        assert ta.drop(columns="proc").equals(tb.drop(columns="proc")), t
    assert len(b.kernels) == 202 and len(b.api) == 1584
    # a torn copy: the whole blocks before the tear read, the trace is partial
    data = open(v2, "rb").read()
    torn = tmp_path / "trace.gtr.partial"
    torn.write_bytes(data[:-100])
    t = gputap.read_trace(str(torn))
    assert t.header[0]["partial"] and len(t.kernels) == 0  # one block: nothing whole is left
    # a damaged block of a complete file is an error naming the block
    bad = bytearray(data)
    bad[160 + 24 + 50] ^= 0x10
    (tmp_path / "bad.gtr").write_bytes(bytes(bad))
    with pytest.raises(gputap.TraceFormatError) as e:
        gputap.read_trace(str(tmp_path / "bad.gtr"))
    assert "block at byte 160" in str(e.value) and "checksum" in str(e.value)


def test_rewritten_trace_reads_the_same(job, tmp_path):
    """gputap convert --format gtr of a version-1 trace: the same tables from the compact file."""
    d, _ = job
    src = os.path.join(d, "host0", "rank1", "trace.gtr")
    subprocess.run([GPUTAP, "convert", src, "-o", str(tmp_path), "--format", "gtr"], capture_output=True,
                   check=True)
    out = str(tmp_path / "trace.gtr")
    assert os.path.getsize(out) < os.path.getsize(src) / 2
    a, b = gputap.read_trace(src), gputap.read_trace(out)
    for t in a.TABLES:
        assert getattr(a, t).drop(columns="proc").equals(getattr(b, t).drop(columns="proc")), t
