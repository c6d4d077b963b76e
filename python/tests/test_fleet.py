"""gputap fleet on a real dask.distributed cluster: a generated 64-rank job on 8 machines with a
consistently slow rank (compute), a consistently stalled rank (data loading), a one-off late arrival,
a corrupt rank folder, a trace cut in half, a launcher process without GPU work and a machine with
older NCCL; a two-rank job; the real two-rank NCCL fixture; a scheduler started separately as a
user with a cluster would, and lost; the interpreter `gputap fleet` runs."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest

from gputap import fleet
from gputap.fleet import generate, output
from gputap.fleet.gtrwrite import TraceWriter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
PYDIR = os.path.join(REPO, "python")
GPUTAP = os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "kineto-2rank-nccl")
CUT_RANK = 12  # its trace is cut in half: partial


def _launcher(d, host_dir):
    """The launcher's own folder (torchrun): CUDA API calls, no GPU work."""
    pdir = os.path.join(d, host_dir, "pid4242")
    os.makedirs(pdir)
    w = TraceWriter(os.path.join(pdir, "trace.gtr"), "pid4242", "node00", pid=4242, start_ns=generate.T0)
    w.api("cudaGetDeviceCount", generate.T0 + 1000, generate.T0 + 2000, 1)
    w.close()


def _cut(path):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("job64"))
    truth = generate.write_gtr(d, ranks=64, gpus_per_host=8, iterations=6, late_ms=33.0)
    _launcher(d, "host0")
    _cut(os.path.join(d, "host1", "rank%d" % CUT_RANK, "trace.gtr"))
    return d, truth


@pytest.fixture(scope="module")
def result(job, tmp_path_factory):
    d, truth = job
    out = str(tmp_path_factory.mktemp("fleet64"))
    hosts = sorted(os.path.join(d, h) for h in os.listdir(d) if h.startswith("host"))
    # a dask.distributed LocalCluster of 3 worker processes, given as the client
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            Client(lc) as client:
        res = fleet.analyze(hosts + [os.path.join(d, "no-such-host")], out=out, client=client, gputap=GPUTAP,
                            progress=None)
    return res, out, truth


def _strag(res, rank):
    got = [x for x in res.summary["stragglers"] if x["rank"] == rank]
    assert got, (rank, res.summary["stragglers"])
    return got[0]


def test_dask_localcluster_analyses_every_good_rank(result):
    res, out, truth = result
    assert res.summary["ranks"] == 62  # 64 minus the corrupt one and the partial one
    assert sorted(res.ranks["rank"]) == [r for r in range(64) if r not in (truth["corrupt_rank"], CUT_RANK)]
    assert res.summary["hosts"] == ["node%02d" % h for h in range(8)]
    assert res.summary["cluster"]["kind"] == "client"
    assert 8 <= res.summary["tasks"] < 64  # ranks of one machine share an analyzer run


def test_corrupt_missing_partial_and_launcher(result):
    res, out, truth = result
    s = res.summary
    failed = {f["path"]: f["error"] for f in s["failed"]}
    bad = [p for p in failed if "rank%d" % truth["corrupt_rank"] in p]
    assert len(bad) == 1 and "not a gputap trace" in failed[bad[0]]
    assert any(p.endswith("no-such-host") and "no such file" in e for p, e in failed.items())
    assert len(failed) == 2  # the launcher is not a failure, nor is the partial trace
    assert len(s["skipped"]) == 1 and s["skipped"][0]["path"].endswith("/host0/pid4242/trace.gtr")
    assert "no GPU work" in s["skipped"][0]["reason"]
    assert len(s["partial"]) == 1 and "rank%d" % CUT_RANK in s["partial"][0]["path"]
    assert "partial" in s["partial"][0]["reason"]
    assert CUT_RANK not in set(res.iterations["rank"]) and CUT_RANK not in set(res.ranks["rank"])
    text = open(os.path.join(out, "summary.txt")).read()
    assert "Partial traces, left out of the statistics (1)" in text and "Skipped, no GPU work" in text


def test_consistent_late_ranks_and_the_one_off_are_all_found(result):
    """The consistently late ranks are not taken for the usual skew, and do not hide the one-off."""
    res, out, truth = result
    s = res.summary
    it = truth["iterations"]
    one = _strag(res, truth["late"]["rank"])
    assert one["pattern"] == "one-off" and one["cause"] == "compute" and one["iterations_late"] == 1
    # the others waited 33 ms for it, less the slow rank's own lateness at that collective (~0.45 ms)
    assert 32.0 < one["cost_ms"] < 33.0 and abs(one["max_late_ms"] - 33.0) < 0.1
    assert abs(one["waited_for_ms"] - one["cost_ms"] * 61) < 1e-6  # every other rank waited that long
    stall = _strag(res, truth["stall"]["rank"])
    assert stall["pattern"] == "consistent" and stall["cause"] == "data loading"
    assert stall["iterations_late"] == it and abs(stall["max_late_ms"] - 4.0) < 0.1
    # late 4 ms at each first AllReduce, where the slow rank is itself ~2 ms late: it alone held it ~2 ms
    assert 1.8 * it < stall["cost_ms"] < 2.2 * it
    slow = _strag(res, truth["slow_rank"])
    assert slow["pattern"] == "consistent" and slow["cause"] == "compute"
    assert slow["iterations_late"] == it and slow["late_collectives"] == 2 * it
    # by steady cost (in the iterations, without each rank's costliest one): the stalled rank (~2 ms a
    # step), the slow one (~0.4 ms a step), then the one-off 33 ms, costliest of all by its whole cost
    assert [x["rank"] for x in s["stragglers"][:3]] == [truth["stall"]["rank"], truth["slow_rank"],
                                                       truth["late"]["rank"]]
    assert s["stragglers"][2]["cost_ms"] > s["stragglers"][0]["cost_ms"] > s["stragglers"][1]["cost_ms"]
    assert s["stragglers"][2]["steady_cost_ms"] == 0.0 < s["stragglers"][1]["steady_cost_ms"]
    assert len(s["stragglers"]) == 3  # nobody else
    r = res.ranks.set_index("rank")
    assert r.loc[truth["slow_rank"], "pattern"] == "consistent" and r.loc[truth["late"]["rank"], "pattern"] == "one-off"


def test_late_collectives_name_every_late_rank(result):
    res, out, truth = result
    c = res.collectives
    assert set(c["count"]) == {1 << 22}  # the message size, as NCCL's plugin gave it
    late = c[c["is_late"]]
    assert len(late) == 2 * truth["iterations"]  # every collective had someone late
    one = c[c["seq"] == truth["late"]["seq"]].iloc[0]
    assert one["late_rank"] == truth["late"]["rank"] and one["iteration"] == truth["late"]["iteration"]
    assert abs(one["late_ms"] - 33.0) < 0.1 and one["cause"] == "compute"
    assert list(one["late_ranks"]) == [truth["late"]["rank"], truth["slow_rank"]]  # the slow rank, late too
    first = c[c["seq"] % 2 == 0]
    assert set(first["late_rank"]) == {truth["stall"]["rank"]} and set(first["cause"]) == {"data loading"}
    assert all(list(x[:2]) == [truth["stall"]["rank"], truth["slow_rank"]] for x in first["late_ranks"])
    top = res.summary["late_collectives"][0]
    assert (top["iteration"], top["seq"], top["late_rank"]) == (truth["late"]["iteration"], truth["late"]["seq"],
                                                                 truth["late"]["rank"])
    per = {x["iteration"]: x for x in res.summary["per_iteration"]}
    for i in range(truth["iterations"]):
        want = truth["late"]["rank"] if i == truth["late"]["iteration"] else truth["stall"]["rank"]
        assert per[i]["late_rank"] == want and per[i]["late_collectives"] == 2


def test_no_negative_times(result):
    res, out, truth = result
    for t in (res.ranks, res.iterations, res.collectives):
        for col in t.columns:
            if col.endswith("_ms") and col not in ("clock_offset_ms",) and t[col].dtype.kind == "f":
                assert (t[col] >= 0).all(), col
    assert all(min(a) >= 0 for a in res.collectives["arrival_ms"])
    for x in res.summary["per_iteration"]:
        assert min(v for k, v in x.items() if k.endswith("_ms")) >= 0, x


def test_clock_offsets_recovered_from_collective_completion(result):
    res, out, truth = result
    clock = {c["host"]: c for c in res.summary["clock"]}
    for h, want in enumerate(truth["clock_offset_ms"]):
        c = clock["node%02d" % h]
        assert abs(c["offset_ms"] - want) < 0.01, (h, c, want)
        if h:
            assert c["source"] == "collectives" and c["rms_us"] < 10 and c["collectives"] >= 80
    # iterations in the reference clock: every rank's iteration 2 starts within 0.1 ms of rank 0's
    it2 = res.iterations[res.iterations["iteration"] == 2]
    assert (it2["start_ns"] - it2["start_ns"].iloc[0]).abs().max() < 100_000
    assert set(it2["host"]) == {"node%02d" % h for h in range(8)}


def test_older_nccl_machine_matched_by_order(result):
    res, out, truth = result
    m = res.summary["collective_rows_by_match"]
    assert m["order"] == 8 * 12 and m["nccl"] == 54 * 12  # 8 ranks on the old machine, 54 with the plugin
    c = res.collectives
    assert len(c) == 12 and set(c["comm"]) == {"0x%016x" % generate.WORLD_COMM}
    assert all(len(r) == 62 for r in c["ranks"])
    assert any("matched by order" in w for w in res.summary["warnings"])
    assert "NCCL's profiler plugin 648 rows, order 96 rows" in res.headline


def _analyze_json(paths):
    cp = subprocess.run([GPUTAP, "analyze", "--format", "json"] + paths, capture_output=True, check=True)
    return json.loads(cp.stdout)["results"][0]


def test_per_rank_numbers_identical_to_single_machine_analyze(job, result):
    d, truth = job
    res, out, _ = result
    traces = sorted(os.path.join(dp, "trace.gtr") for dp, _, fs in os.walk(d) if "trace.gtr" in fs
                    and not dp.endswith(("rank%d" % truth["corrupt_rank"], "rank%d" % CUT_RANK, "pid4242")))
    one = _analyze_json(traces)  # every rank in one process, on one machine
    by_label = {g["label"]: g for g in one["timeline"]["gpus"]}
    assert len(by_label) == 62
    for _, r in res.ranks.iterrows():
        g = by_label[r["label"]]
        for k in ("span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms", "exposed_comm_ms"):
            assert r[k] == g["total"][k], (r["label"], k)
        its = res.iterations[res.iterations["rank"] == r["rank"]].sort_values("iteration")
        assert [w["compute_ms"] for w in g["iterations"]] == list(its["compute_ms"])


def test_parquet_read_back_by_pyarrow_and_duckdb(result):
    res, out, truth = result
    ranks = pq.read_table(os.path.join(out, "ranks.parquet"))
    for col in ("rank", "host", "path", "iterations", "span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms",
                "exposed_comm_ms", "cost_ms", "pattern", "cause"):
        assert col in ranks.column_names
    assert ranks.num_rows == 62
    its = pq.read_table(os.path.join(out, "iterations.parquet"))
    assert its.num_rows == 62 * 6 and "host" in its.column_names and "late_ms" in its.column_names
    coll = pq.read_table(os.path.join(out, "collectives.parquet"))
    for col in ("comm", "seq", "iteration", "name", "count", "arrival_ms", "skew_ms", "late_rank", "late_ranks"):
        assert col in coll.column_names
    con = duckdb.connect()
    late = con.execute("select late_rank, seq, round(late_ms, 1), count from read_parquet(?) order by held_ms desc "
                       "limit 1", [os.path.join(out, "collectives.parquet")]).fetchone()
    assert late == (truth["late"]["rank"], truth["late"]["seq"], 33.0, 1 << 22)
    n, top = con.execute("select count(*), arg_max(rank, late_count) from read_parquet(?)",
                         [os.path.join(out, "ranks.parquet")]).fetchone()
    assert (n, top) == (62, truth["slow_rank"])
    s = json.load(open(os.path.join(out, "summary.json")))
    assert {"failed", "stragglers", "late_collectives", "partial", "skipped"} <= set(s)
    text = open(os.path.join(out, "summary.txt")).read()
    assert "Late collectives" in text and "Stragglers" in text
    assert 'id="fleet"' in open(os.path.join(out, "report.html")).read()


def test_two_ranks(tmp_path):
    """Two ranks as two thousand: rank 1 consistently slow, rank 0 once 33 ms late."""
    d = str(tmp_path / "j2")
    truth = generate.write_gtr(d, ranks=2, gpus_per_host=2, iterations=6, late_ms=33.0)
    assert truth["slow_rank"] == 1 and truth["late"]["rank"] == 0 and truth["corrupt_rank"] is None
    res = fleet.analyze([d], workers=1, gputap=GPUTAP, progress=None)
    s = res.summary
    assert s["ranks"] == 2 and s["match"] == "nccl"
    one, slow = _strag(res, 0), _strag(res, 1)
    # of two ranks, lateness is against the other one: 33 ms less rank 1's own ~0.5 ms at that collective
    assert one["pattern"] == "one-off" and 32.3 < one["max_late_ms"] < 33.0 and one["cost_ms"] == one["max_late_ms"]
    assert slow["pattern"] == "consistent" and slow["cause"] == "compute" and slow["iterations_late"] == 6
    assert slow["late_collectives"] == 11  # all but the one where rank 0 was later still
    assert [x["rank"] for x in s["stragglers"]] == [1, 0]  # every step's straggler first, the one-off after
    c = res.collectives
    assert len(c[c["is_late"]]) == 12
    assert "2 ranks on 1 host" in res.text


def test_text_output_is_capped(tmp_path):
    d = str(tmp_path / "long")
    generate.write_gtr(d, ranks=4, gpus_per_host=4, iterations=60, plants=False)
    res = fleet.analyze([d], workers=1, gputap=GPUTAP, progress=None)
    text = res.text
    assert res.summary["iterations"] == 60 and len(res.summary["per_iteration"]) == 60
    assert len(text.splitlines()) < 80, len(text.splitlines())
    assert "40 more in summary.json (per_iteration)" in text
    # Kineto traces name no machine: not "on 0 hosts"
    k = str(tmp_path / "k")
    generate.write_kineto(k, ranks=2, gpus_per_host=2, iterations=3, plants=False)
    res = fleet.analyze([k], workers=1, gputap=GPUTAP, progress=None)
    assert "0 hosts" not in res.text and "do not name their machines" in res.text


def test_report_bars_stay_inside_the_chart():
    n = 1024
    ranks = pd.DataFrame({"rank": range(n), "work_ms": [10.0] * n, "wait_ms": [1.0] * n})
    svg = output._bars(ranks, width=760)
    xs = [float(x) + float(w) for x, w in re.findall(r'<rect x="([0-9.]+)" y="[-0-9.]+" width="([0-9.]+)"', svg)]
    assert len(xs) == 2 * n and max(xs) <= 760


def test_real_nccl_fixture_numbers_equal_its_readme(tmp_path):
    res = fleet.analyze([os.path.join(FIXTURE, "rank0.json.gz"), os.path.join(FIXTURE, "rank1.json.gz")],
                        out=str(tmp_path), workers=2, gputap=GPUTAP, progress=None)
    r = res.ranks.set_index("rank")
    want = {0: (1222.847, 675.191, 210.320, 337.336, 14.95), 1: (1231.186, 651.136, 271.973, 308.077, 19.93)}
    for rank, (span, idle, comp, noncomp, ovl) in want.items():
        got = r.loc[rank]
        assert round(got["span_ms"], 3) == span
        assert round(got["idle_ms"], 3) == idle
        assert round(got["compute_ms"], 3) == comp
        assert round(got["non_compute_ms"], 3) == noncomp
        assert round(100 * got["overlap_ms"] / got["comm_ms"], 2) == ovl
    assert res.summary["failed"] == []
    assert len(res.collectives) > 0


def _wait_for(path, timeout=60):
    t = time.time()
    while time.time() - t < timeout:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.2)
    return False


def test_separately_started_scheduler_and_workers_through_the_cli(tmp_path):
    job = str(tmp_path / "job")
    truth = generate.write_gtr(job, ranks=16, gpus_per_host=4, iterations=4)
    sf = str(tmp_path / "scheduler.json")
    env = dict(os.environ, PYTHONPATH=PYDIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [subprocess.Popen(dask + ["--scheduler-file", sf, "--port", "0", "--host", "127.0.0.1",
                                      "--dashboard-address", ":0"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)]
    try:
        assert _wait_for(sf), "the scheduler did not start"
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", sf,
                                           "--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--host",
                                           "127.0.0.1"], env=env, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True))
        from dask.distributed import Client
        with Client(scheduler_file=sf, timeout=30) as c:
            c.wait_for_workers(2, timeout=60)
        # relative inputs, from a folder the workers do not run in
        cp = subprocess.run([GPUTAP, "fleet", "--scheduler-file", sf, "-o", "out", "job/host0", "job/host1",
                             "job/host2", "job/host3"], env=env, capture_output=True, timeout=240, cwd=str(tmp_path))
        assert cp.returncode == 0, cp.stderr.decode()
        assert b"16/16 ranks analysed, 1 failed" in cp.stderr  # progress, on stderr
        s = json.load(open(os.path.join(str(tmp_path), "out", "summary.json")))
        assert s["ranks"] == 15 and len(s["failed"]) == 1 and "not a gputap trace" in s["failed"][0]["error"]
        assert s["inputs"][0] == os.path.join(job, "host0") and s["cluster"]["kind"] == "scheduler"
        assert {x["rank"] for x in s["stragglers"]} == {truth["slow_rank"], truth["stall"]["rank"],
                                                       truth["late"]["rank"]}
        assert s["late_collectives"][0]["seq"] == truth["late"]["seq"]
        assert b"Stragglers" in cp.stdout
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def _shim(tmp_path, *mods):
    """A PYTHONPATH on which importing each of `mods` fails as when it is not installed."""
    shim = tmp_path / ("shim-" + "-".join(mods))
    shim.mkdir(parents=True)
    for m in mods:
        (shim / (m + ".py")).write_text("raise ImportError(\"No module named '%s'\")\n" % m)
    return dict(os.environ, PYTHONPATH=str(shim) + os.pathsep + PYDIR)


def test_cli_says_what_to_install_when_the_extra_is_missing(tmp_path):
    job = str(tmp_path / "job")
    generate.write_gtr(job, ranks=2, gpus_per_host=2, iterations=2, plants=False)
    # without -o the command needs no Python at all: numpy missing changes nothing
    cp = subprocess.run([GPUTAP, "fleet", "--quiet", job], env=_shim(tmp_path / "c", "numpy"), capture_output=True)
    assert cp.returncode == 0 and b"2 ranks on 1 host" in cp.stdout, cp.stderr
    # with -o: numpy missing, no tables; pyarrow missing, the Parquet files cannot be written
    for mod, args in (("numpy", ["-o", str(tmp_path / "out"), job]), ("pyarrow", ["-o", str(tmp_path / "out"), job])):
        cp = subprocess.run([GPUTAP, "fleet"] + args, env=_shim(tmp_path, mod), capture_output=True)
        assert cp.returncode == 1, (mod, cp.stderr)
        err = cp.stderr.decode()
        assert "pip install './python[fleet]'" in err and mod in err, err
        assert not os.path.exists(str(tmp_path / "out" / "summary.json"))


def test_cli_runs_without_importing_pandas(tmp_path):
    """The command's reduction is numpy's: with pandas' and dask's imports failing it still finds the
    straggler on this machine and writes every file (pandas is for the Python API's DataFrames, made
    on first use; dask for a cluster)."""
    job = str(tmp_path / "job")
    truth = generate.write_gtr(job, ranks=8, gpus_per_host=4, iterations=6, late_ms=20.0)
    out = str(tmp_path / "out")
    cp = subprocess.run([GPUTAP, "fleet", "--quiet", "-o", out, job], env=_shim(tmp_path, "pandas", "dask"),
                        capture_output=True)
    assert cp.returncode == 0, cp.stderr
    s = json.load(open(os.path.join(out, "summary.json")))
    assert truth["slow_rank"] in [x["rank"] for x in s["stragglers"]]
    assert pq.read_table(os.path.join(out, "ranks.parquet")).num_rows == s["ranks"] == 8 - len(s["failed"]) >= 7
    assert "Stragglers" in cp.stdout.decode()


def test_cli_usage_errors(tmp_path):
    cp = subprocess.run([GPUTAP, "fleet", "--workers", "0", str(tmp_path)], capture_output=True)
    assert cp.returncode == 2 and b"--workers" in cp.stderr
    cp = subprocess.run([GPUTAP, "fleet", "--scheduler", "tcp://x:1", "--scheduler-file", "f", "x"],
                        capture_output=True)
    assert cp.returncode == 2
    cp = subprocess.run([GPUTAP, "help", "fleet"], capture_output=True)
    assert cp.returncode == 0 and b"--scheduler-file" in cp.stdout


def test_generated_kineto_job_gives_the_same_answers(tmp_path):
    d = str(tmp_path / "k")
    truth = generate.write_kineto(d, ranks=8, gpus_per_host=4, iterations=4)
    res = fleet.analyze([d], workers=2, gputap=GPUTAP, progress=None)
    assert res.summary["ranks"] == 8
    assert _strag(res, truth["slow_rank"])["pattern"] == "consistent"
    assert _strag(res, truth["stall"]["rank"])["cause"] == "data loading"
    assert _strag(res, truth["late"]["rank"])["pattern"] == "one-off"
    assert res.summary["late_collectives"][0]["late_rank"] == truth["late"]["rank"]
    assert set(res.collectives["match"]) == {"order"} and res.summary["match"] == "order"
    assert shutil.which(GPUTAP) or os.access(GPUTAP, os.X_OK)


def _start(cmd, env):
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _stop(procs):
    for p in reversed(procs):
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in reversed(procs):
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_lost_cluster_ends_with_an_error(tmp_path):
    """The only worker killed while the ranks wait: a clear error and exit status 1, not a hang."""
    job = str(tmp_path / "job")
    generate.write_gtr(job, ranks=8, gpus_per_host=8, iterations=2, plants=False)
    slow = tmp_path / "slow-gputap"
    slow.write_text("#!/bin/sh\nsleep 2\nexec '%s' \"$@\"\n" % GPUTAP)
    slow.chmod(0o755)
    sf = str(tmp_path / "scheduler.json")
    env = dict(os.environ, PYTHONPATH=PYDIR + os.pathsep + os.environ.get("PYTHONPATH", ""),
               GPUTAP_FLEET_LOST_AFTER="3")
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    procs = [_start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file", sf, "--port", "0",
                     "--host", "127.0.0.1", "--dashboard-address", ":0"], env)]
    try:
        assert _wait_for(sf), "the scheduler did not start"
        procs.append(_start([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", sf, "--nworkers",
                             "1", "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"], env))
        from dask.distributed import Client
        with Client(scheduler_file=sf, timeout=30) as c:
            c.wait_for_workers(1, timeout=60)
        run = subprocess.Popen([GPUTAP, "fleet", "--scheduler-file", sf, "--gputap", str(slow), job], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.0)
        _stop(procs[1:])  # the worker, while its first task runs
        out, err = run.communicate(timeout=120)
        assert run.returncode == 1, (out, err)
        assert b"the Dask cluster has had no worker for 3 s" in err and b"ranks analysed" in err
    finally:
        _stop(procs)


def test_workers_option_wins_over_the_scheduler_variable_and_says_so(tmp_path):
    job = str(tmp_path / "job")
    generate.write_gtr(job, ranks=4, gpus_per_host=4, iterations=2, plants=False)
    env = dict(os.environ, PYTHONPATH=PYDIR, DASK_SCHEDULER_ADDRESS="tcp://127.0.0.1:9")
    cp = subprocess.run([GPUTAP, "fleet", "--workers", "2", "--quiet", job], env=env, capture_output=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert b"DASK_SCHEDULER_ADDRESS (tcp://127.0.0.1:9) is not used" in cp.stderr
    assert b"4 ranks on 1 host" in cp.stdout


def test_bytecode_kept_in_gputaps_cache_when_python_may_not_write_it(tmp_path):
    """PYTHONDONTWRITEBYTECODE=1 (containers): `gputap fleet -o`'s client keeps its bytecode under gputap's
    own cache folder, so the next run does not compile numpy again; nothing is written beside the
    sources.  A PYTHONPYCACHEPREFIX the user set wins; without PYTHONDONTWRITEBYTECODE nothing changes."""
    job = str(tmp_path / "job")
    generate.write_gtr(job, ranks=2, gpus_per_host=2, iterations=2, plants=False)
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=PYDIR, XDG_CACHE_HOME=str(cache), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPYCACHEPREFIX", None)
    cp = subprocess.run([GPUTAP, "fleet", "--workers", "1", "--quiet", "-o", str(tmp_path / "out"), job], env=env, capture_output=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    got = {p.name for p in (cache / "gputap" / "pycache").rglob("*.pyc")}
    assert any(n.startswith("columns.") for n in got) and any(n.startswith("_methods.") or n.startswith("numeric.")
                                                              for n in got), sorted(got)[:20]
    mine = tmp_path / "mine"
    cp = subprocess.run([GPUTAP, "fleet", "--workers", "1", "--quiet", "-o", str(tmp_path / "out"), job], env=dict(env, PYTHONPYCACHEPREFIX=str(mine),
                        XDG_CACHE_HOME=str(tmp_path / "c2")), capture_output=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert not (tmp_path / "c2").exists()
    env3 = dict(env, XDG_CACHE_HOME=str(tmp_path / "c3"))
    env3.pop("PYTHONDONTWRITEBYTECODE")
    cp = subprocess.run([GPUTAP, "fleet", "--workers", "1", "--quiet", "-o", str(tmp_path / "out"), job], env=env3, capture_output=True, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert not (tmp_path / "c3").exists()


def test_the_package_interpreter_runs_fleet_not_python3_from_path(tmp_path):
    """An installed package: <prefix>/lib/pythonX.Y/site-packages/gputap/_bin/gputap.  With no python3
    on PATH, `gputap fleet -o` runs <prefix>/bin/python3; the `gputap` command pip installs names its own
    interpreter in GPUTAP_PYTHON."""
    prefix = tmp_path / "venv"
    b = prefix / "lib" / "python3.99" / "site-packages" / "gputap" / "_bin"
    b.mkdir(parents=True)
    shutil.copy(GPUTAP, str(b / "gputap"))
    (prefix / "bin").mkdir()
    mark = tmp_path / "used"
    py = prefix / "bin" / "python3"
    py.write_text("#!/bin/sh\n: > '%s'\nPYTHONPATH='%s' exec '%s' \"$@\"\n" % (mark, PYDIR, sys.executable))
    py.chmod(0o755)
    job = str(tmp_path / "job")
    generate.write_gtr(job, ranks=2, gpus_per_host=2, iterations=2, plants=False)
    env = {"PATH": "/nonexistent", "HOME": str(tmp_path), "GPUTAP": GPUTAP}
    cp = subprocess.run([str(b / "gputap"), "fleet", "--workers", "1", "--quiet", "-o", str(tmp_path / "out"), job], env=env, capture_output=True,
                        timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert mark.exists() and b"2 ranks on 1 host" in cp.stdout
    # the console script: GPUTAP_PYTHON = its own interpreter, unless already set
    code = ("import os, sys; from gputap import _cli; os.environ.pop('GPUTAP_PYTHON', None); "
            "os.execv = lambda exe, argv: (print(os.environ['GPUTAP_PYTHON']), sys.exit(0)); "
            "_cli.binary = lambda: %r; _cli.main()" % GPUTAP)
    cp = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=PYDIR), capture_output=True,
                        text=True)
    assert cp.returncode == 0 and cp.stdout.strip() == sys.executable, cp.stderr


def _coll_job(d, late):
    """Two ranks, per step an AllReduce and a Broadcast: NCCL numbers each kind apart (AllReduce 0, 1,
    ... and Broadcast 0, 1, ...), as a real DDP job's records show.  `late`: {(kind, seq): ms} of rank 1."""
    ms, t0 = 1_000_000, generate.T0
    os.makedirs(os.path.join(d, "host0"))
    with open(os.path.join(d, "host0", "run.json"), "w") as f:
        json.dump({"host": "node00", "start_ns": t0}, f)
    for r in range(2):
        pdir = os.path.join(d, "host0", "rank%d" % r)
        os.makedirs(pdir)
        w = TraceWriter(os.path.join(pdir, "trace.gtr"), "rank%d" % r, "node00", pid=100 + r, start_ns=t0)
        corr, t = 1, t0 + 10 * ms
        for step in range(4):
            w.range("ProfilerStep#%d" % step, t - ms // 2, t + 9 * ms)
            for kind, at in (("AllReduce", 1), ("Broadcast", 5)):
                extra = int(late.get((kind, step), 0) * ms) if r == 1 else 0
                start = t + at * ms + extra
                launch = t + at * ms - 200_000
                # the Broadcasts as DDP's of its parameters: bytes as ncclInt8 (4096 of them)
                w.nccl_coll(0xC0FFEE, step, launch - 3000, launch + 8000, kind, "RING", "SIMPLE",
                            1024 if kind == "AllReduce" else 4096, r, 2,
                            dtype="ncclFloat32" if kind == "AllReduce" else "ncclInt8")
                w.api("cuLaunchKernelEx", launch, launch + 6000, corr)
                end = t + at * ms + int(late.get((kind, step), 0) * ms) + 2 * ms  # all end together
                w.kernel("ncclDevKernel_%s_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)" % kind, r, 21, start, end,
                         corr)
                corr += 1
            t += 10 * ms
        w.close()


@pytest.mark.parametrize("layout", ["after", "before"])
@pytest.mark.parametrize("kinds", [("AllReduce", "Broadcast", "AllGather"), ("AllReduce",)])
def test_plugin_records_on_their_own_kernels(tmp_path, layout, kinds):
    """NCCL's profiler-plugin record of a collective starts next to its kernel's launch: on NCCL 2.28
    just after the launch call returns ("after", measured on real DDP runs), else just before it.
    Each record must land on its own kernel either way, whether the kernels' names tell the kinds
    apart or not (a job of AllReduces only): names, counts (a different one per collective) and
    iterations as written, every row matched by the plugin."""
    ms, us, t0 = 1_000_000, 1000, generate.T0
    d = str(tmp_path / "job")
    want = {}
    for r in range(2):
        pdir = os.path.join(d, "rank%d" % r)
        os.makedirs(pdir)
        w = TraceWriter(os.path.join(pdir, "trace.gtr"), "rank%d" % r, "node00", pid=100 + r, start_ns=t0)
        corr, t, seqs = 1, t0 + 10 * ms, {}
        for step in range(3):
            w.range("ProfilerStep#%d" % step, t - ms // 2, t + 9 * ms)
            for i, kind in enumerate(kinds * 2):
                launch = t + i * ms
                seq = seqs[kind] = seqs.get(kind, -1) + 1
                count = 1000 + 100 * step + i
                want[(kind, seq)] = (count, step)
                rec = launch + 7 * us if layout == "after" else launch - 3 * us
                if layout == "before":
                    w.nccl_coll(0xC0FFEE, seq, rec, rec + 8 * us, kind, "RING", "LL", count, r, 2)
                w.api("cuLaunchKernelEx", launch, launch + 6 * us, corr)
                if layout == "after":
                    w.nccl_coll(0xC0FFEE, seq, rec, rec + 8 * us, kind, "RING", "LL", count, r, 2)
                w.kernel("ncclDevKernel_%s_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)" % kind, r, 21,
                         launch + 20 * us, launch + 500 * us, corr)
                corr += 1
            t += 10 * ms
        w.close()
    res = fleet.analyze([d], workers=1, gputap=GPUTAP, progress=None)
    c = res.collectives
    assert res.summary["collective_rows_by_match"] == {"nccl": 2 * len(want)}
    got = {(n, int(q)): (int(k), int(i)) for n, q, k, i in zip(c["name"], c["seq"], c["count"], c["iteration"])}
    assert got == want
    assert all(len(x) == 2 for x in c["ranks"])


def test_collectives_of_each_kind_are_matched_apart(tmp_path):
    d = str(tmp_path / "kinds")
    _coll_job(d, {("Broadcast", 2): 3.0})
    res = fleet.analyze([d], workers=1, gputap=GPUTAP, progress=None)
    c = res.collectives
    assert len(c) == 8 and sorted(set(c["name"])) == ["AllReduce", "Broadcast"]  # not 4 mixed pairs
    assert all(len(x) == 2 for x in c["ranks"])
    late = c[c["is_late"]]
    assert len(late) == 1 and (late.iloc[0]["name"], late.iloc[0]["seq"], late.iloc[0]["late_rank"]) == (
        "Broadcast", 2, 1)
    assert abs(late.iloc[0]["late_ms"] - 3.0) < 0.01
    assert not res.summary["warnings"]
    # the message size in bytes, from the records' data type: 1024 floats and 4096 bytes are both 4 KiB
    ar, bc = c[c["name"] == "AllReduce"], c[c["name"] == "Broadcast"]
    assert set(ar["count"]) == {1024} and set(ar["dtype"]) == {"ncclFloat32"} and set(ar["bytes"]) == {4096}
    assert set(bc["count"]) == {4096} and set(bc["dtype"]) == {"ncclInt8"} and set(bc["bytes"]) == {4096}
    lc = res.summary["late_collectives"][0]
    assert (lc["name"], lc["count"], lc["dtype"], lc["bytes"]) == ("Broadcast", 4096, "ncclInt8", 4096)


def _counting_gputap(d):
    """A gputap that records how many of its analyzer runs overlap (then runs the real one); its other
    commands (the fleet command that starts the analyzers) run as they are."""
    exe = os.path.join(d, "gputap")
    with open(exe, "w") as f:
        f.write("#!/bin/sh\n"
                "[ \"$1\" = analyze ] || exec %s \"$@\"\n"
                "d=%s\n"
                "echo x >> \"$d/started\"\n"
                "n=$(( $(cat \"$d\"/running.* 2>/dev/null | wc -l) + 1 ))\n"
                "echo $n > \"$d/running.$$\"; echo $n >> \"$d/seen\"\n"
                "sleep 0.05\n"
                "%s \"$@\"; rc=$?\n"
                "rm -f \"$d/running.$$\"\n"
                "exit $rc\n" % (GPUTAP, d, GPUTAP))
    os.chmod(exe, 0o755)
    return exe


@pytest.mark.parametrize("workers", [1, 2])
def test_this_machine_runs_at_most_workers_analyzers_at_once(tmp_path, workers):
    """--workers bounds the analyzer processes (one more thread reads a finished batch's output while
    the next batch runs): with 1 worker they never overlap, with 2 at most 2 run."""
    job = str(tmp_path / "job")
    generate.write_gtr(job, ranks=48, gpus_per_host=8, iterations=3, plants=False)
    exe = _counting_gputap(str(tmp_path))
    res = fleet.analyze([job], workers=workers, gputap=exe, progress=None)
    assert res.summary["ranks"] == 48 and not res.summary["failed"]
    started = open(str(tmp_path / "started")).read().split()
    assert len(started) >= 4  # several batches: the bound is tested
    seen = [int(x) for x in open(str(tmp_path / "seen")).read().split()]
    assert max(seen) <= workers, seen


def test_analyzer_columns_equal_its_json(job):
    """`gputap analyze --format columns` (what fleet reads) holds the JSON format's numbers: per GPU its
    totals and per iteration its window, and every collective row, on generated ranks and on the real
    NCCL fixture; output cut short or with bytes after the columns is refused, not misread."""
    from gputap.fleet import worker

    d, _ = job
    paths = sorted(os.path.join(dp, "trace.gtr") for dp, _, fs in os.walk(d) if "trace.gtr" in fs
                   and "rank%d" % CUT_RANK not in dp)[:16]
    win = ("start_ns", "end_ns", "first_ns", "last_ns", "span_ms", "busy_ms", "idle_ms", "kernel_sum_ms", "kernels",
           "memops", "compute_ms", "comm_ms", "overlap_ms", "exposed_comm_ms", "memop_ms", "non_compute_ms")
    for args in (paths, [FIXTURE]):
        def run(fmt):
            return subprocess.run([GPUTAP, "analyze", "--format", fmt, "--collectives"] + args, capture_output=True,
                                  check=True).stdout
        full = json.loads(run("json"))["results"][0]
        raw = run("columns")
        hdr, tab = worker.parse_columns(raw)
        gj = full["timeline"]["gpus"]
        assert [(g["label"], g["source"], g["device"], len(g["iterations"])) for g in gj] == [
            (g["label"], g["source"], g["device"], g["iterations"]) for g in hdr["gpus"]]
        assert [g["total"] for g in gj] == [g["total"] for g in hdr["gpus"]]
        it = tab["iterations"]
        rows = [w for g in gj for w in g["iterations"]]
        assert len(rows) == len(it["gpu"]) > 0
        for k in win:
            got = it[k].tolist() if k.endswith("_ns") or k in ("kernels", "memops") else [round(x, 6) for x in it[k]]
            assert got == [w[k] for w in rows], k
        co, strs = tab["collectives"], hdr["tables"]["collectives"]["strings"]
        cj = full["collectives"]
        assert len(cj) == len(co["source"]) > 0
        for k in ("source", "device", "seq", "count", "bytes", "start_ns", "end_ns", "launch_ns"):
            assert co[k].tolist() == [c[k] for c in cj], k
        assert co["iteration"].tolist() == [-1 if c["iteration"] is None else c["iteration"] for c in cj]
        for k in ("comm", "name", "algo", "proto", "dtype", "match"):
            assert [strs[i] for i in co[k]] == [c[k] for c in cj], k
        for bad in (raw[:-8], raw + b"\0" * 8, raw[:40]):
            with pytest.raises(ValueError):
                worker.parse_columns(bad)


@pytest.mark.parametrize("tag", ["train_step", ""])
@pytest.mark.parametrize("fixture", ["fleet-ddp-2xh200", "fleet-ddp-4xh200", "fleet-kineto-ddp-2xh200",
                                     "fleet-fsdp-2xh200", "fleet-per-rank-4xh200", "fleet-inproc-2xh200",
                                     "fleet-stall-2xh200", "fleet-copy-2xh200", "fleet-accum-2xh200",
                                     "fleet-fsdp-hostwait-2xh200"])
def test_real_ddp_run_with_a_planted_straggler(tmp_path, fixture, tag):
    """Real 2- and 4-GPU DDP jobs (2 and 4 x H200) traced by `gputap run` (tests/fixtures/fleet-ddp-*),
    the 2-GPU one recorded by torch.profiler instead (fleet-kineto-ddp-2xh200), and the same model
    sharded with FSDP2 under the default `gputap run` (fleet-fsdp-2xh200), and the 4-GPU job with
    torchrun around `gputap run -o job/rank%q{RANK}` (fleet-per-rank-4xh200: one run folder per
    rank, four gputap processes started at once), and the 2-GPU job recording itself with the Python
    API (fleet-inproc-2xh200: gputap.init(out_dir=...) on each rank, no `gputap run`), and two 2-GPU
    jobs whose slow rank stalls otherwise (fleet-stall-2xh200: its host sleeps between steps, cause
    data loading; fleet-copy-2xh200: a host-to-GPU copy before backward, cause memory copies), and one
    with gradient accumulation (fleet-accum-2xh200: every 4th step all-reduces), and an FSDP run whose
    slow rank's host waited for its own GPU (fleet-fsdp-hostwait-2xh200: cause compute, not
    host/launch): rank 1 sleeps
    ~19.5 ms on the GPU before backward from step 4 on.  tests/gpu/check_fleet_ddp.py checks fleet's
    answer against the job's own PLANT line: slow rank 1, its cost within 15 % of the sleep x 8 steps,
    a late collective by rank 1 on every affected step (75-125 % of the sleep), no other rank late
    after the warm-up, torchrun's process skipped, every collective matched by NCCL's plugin (by
    process group and order in PyTorch's traces), and each step's AllReduces carrying the model's
    parameter count in float32.  With the iteration range named (--nvtx train_step) and without (the
    default: the analyzer picks the range that repeats and covers the most time)."""
    run = str(tmp_path / "ddp")
    shutil.copytree(os.path.join(REPO, "tests", "fixtures", fixture), run)
    cp = subprocess.run([sys.executable, os.path.join(REPO, "tests", "gpu", "check_fleet_ddp.py"), run, GPUTAP],
                        capture_output=True, text=True, env=dict(os.environ, GT_NVTX=tag))
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-2000:]
    lines = cp.stdout.splitlines()
    assert lines[-1] == "15 passed, 0 failed", lines[-1]
    assert not [x for x in lines if x.startswith("not ok")]


def test_the_straggler_of_every_step_before_a_late_start(tmp_path):
    """Real 2 x H200 DDP run (fleet-copy-2xh200): rank 0 made the other wait 342 ms at the barrier before
    the first step and in the two warm-up steps (411.8 ms in all), rank 1 every step from step 4 on
    (157.0 ms).  Rank 1 is the straggler: ranked by the cost in the iterations, each with both costs,
    and the cost per late iteration counts only the iterations' part."""
    res = fleet.analyze([os.path.join(REPO, "tests", "fixtures", "fleet-copy-2xh200")], nvtx="train_step", workers=2,
                        gputap=GPUTAP, progress=None)
    st = res.summary["stragglers"]
    assert [x["rank"] for x in st] == [1, 0]
    one, zero = st
    assert zero["cost_ms"] > 2 * one["cost_ms"] > 0  # by the whole cost rank 0 would come first
    assert one["cost_in_iterations_ms"] > 2 * zero["cost_in_iterations_ms"] > 0
    its = res.iterations
    for x in st:
        inside = float(its[its["rank"] == x["rank"]]["cost_ms"].sum())
        assert abs(x["cost_in_iterations_ms"] - inside) < 1e-9
        assert abs(x["cost_per_late_iteration_ms"] - inside / x["iterations_late"]) < 1e-9
        assert "%.3f ms of it in the iterations" % inside in x["reason"]
    assert (one["pattern"], one["cause"]) == ("consistent", "memory copies")
    text = res.text
    rows = [ln.split() for ln in text.splitlines() if ln.strip().startswith(("1 ", "0 "))][:2]
    assert [r[0] for r in rows] == ["1", "0"] and float(rows[0][3]) == round(one["cost_in_iterations_ms"], 3)


def test_one_run_folder_per_rank(tmp_path):
    """torchrun around `gputap run -o job/rank%q{RANK}` (each rank its own run folder, torchrun itself not
    traced): the real 2 x H200 DDP run's ranks split that way give tests/gpu/check_fleet_ddp.py's 15
    checks, and the same ranks (but their paths), iterations and collectives as the one run folder."""
    src = os.path.join(REPO, "tests", "fixtures", "fleet-ddp-2xh200")
    one, job = str(tmp_path / "one"), str(tmp_path / "job")
    shutil.copytree(src, one)
    for r in (0, 1):
        d = os.path.join(job, "rank%d" % r)
        shutil.copytree(os.path.join(src, "rank%d" % r), os.path.join(d, "rank%d" % r))
        shutil.copy(os.path.join(src, "run.json"), d)
    for f in ("bare.out", "traced.out"):
        shutil.copy(os.path.join(src, f), job)
    cp = subprocess.run([sys.executable, os.path.join(REPO, "tests", "gpu", "check_fleet_ddp.py"), job, GPUTAP],
                        capture_output=True, text=True)
    lines = cp.stdout.splitlines()
    assert cp.returncode == 0 and lines[-1] == "15 passed, 0 failed", cp.stdout[-3000:] + cp.stderr[-2000:]
    a = fleet.analyze([one], nvtx="train_step", workers=2, gputap=GPUTAP, progress=None)
    b = fleet.analyze([job], nvtx="train_step", workers=2, gputap=GPUTAP, progress=None)
    assert a.summary["ranks"] == b.summary["ranks"] == 2 and len(a.summary["skipped"]) == 1 and not b.summary["skipped"]
    for name in ("ranks", "iterations", "collectives"):
        x, y = getattr(a, name), getattr(b, name)
        cols = [c for c in x.columns if c != "path"]
        assert len(x) == len(y) > 0 and list(x.columns) == list(y.columns), name
        assert x[cols].equals(y[cols]), name
    assert [p.split(os.sep)[-3:-1] for p in b.ranks["path"]] == [["rank0", "rank0"], ["rank1", "rank1"]]


def test_ranks_with_two_gpus_each(tmp_path):
    """A process that drives two GPUs is one rank: its row and its iterations are the sums (spans: of
    each GPU's) of its GPUs' windows as `gputap analyze --format json` gives them, iteration by
    iteration; the third rank's extra kernels in iteration 2 show there and only there."""
    T0, US = generate.T0, 1000
    MS = 1000 * US
    for r in range(3):
        os.makedirs(str(tmp_path / "job" / ("rank%d" % r)))
        w = TraceWriter(str(tmp_path / "job" / ("rank%d" % r) / "trace.gtr"), "rank%d" % r, "node00", pid=100 + r,
                        start_ns=T0)
        corr, t = 1, T0 + MS
        for i in range(4):
            a = t
            for dev in (0, 1):
                for k in range(3 + dev + (r == 2 and i == 2) * 5):
                    s = t + k * 2 * MS + dev * 300 * US
                    w.api("cudaLaunchKernel", s - 50 * US, s - 40 * US, corr)
                    w.kernel("gemm_%d" % k, dev, 7, s, s + MS + r * 100 * US, corr)
                    corr += 1
            t += 20 * MS
            w.range("ProfilerStep#%d" % i, a - 100 * US, t - MS)
        w.close()
    job = str(tmp_path / "job")
    res = fleet.analyze([job], workers=2, gputap=GPUTAP, progress=None)
    assert res.summary["ranks"] == 3 and not res.summary["failed"]
    one = _analyze_json(sorted(os.path.join(job, "rank%d" % r, "trace.gtr") for r in range(3)))
    by_rank = {}
    for g in one["timeline"]["gpus"]:
        by_rank.setdefault(int(g["label"].split("/")[0][4:]), []).append(g)
    for _, row in res.ranks.iterrows():
        gs = by_rank[row["rank"]]
        assert row["gpus"] == len(gs) == 2 and row["iterations"] == 4
        for k in ("span_ms", "busy_ms", "compute_ms", "idle_ms"):
            assert abs(row[k] - sum(g["total"][k] for g in gs)) < 1e-9, k
        its = res.iterations[res.iterations["rank"] == row["rank"]].sort_values("iteration")
        for j, it in enumerate(its.itertuples()):
            ws = [g["iterations"][j] for g in gs]
            assert it.local_start_ns == min(w["start_ns"] for w in ws)
            assert abs(it.compute_ms - sum(w["compute_ms"] for w in ws)) < 1e-9
    c2 = res.iterations[res.iterations["rank"] == 2].set_index("iteration")["compute_ms"]
    c0 = res.iterations[res.iterations["rank"] == 0].set_index("iteration")["compute_ms"]
    assert c2[2] > c2[1] + 5 and abs(c2[1] - c0[1]) < 2


def test_report_chart_equals_the_ranks_table(result):
    """report.html's bars are the ranks table: one dark and one light bar per rank, in rank order, each
    titled with that rank's time not waiting / waiting (3 decimals), heights in proportion, the axis'
    top label the largest rank's total; its tables name the summary's stragglers."""
    res, out, _ = result
    _chart_equals_the_ranks_table(res, out)


def test_report_chart_equals_the_ranks_table_of_a_real_run(tmp_path):
    """The same on the real FSDP run (tests/fixtures/fleet-fsdp-2xh200), whose slow rank waits least."""
    res = fleet.analyze([os.path.join(REPO, "tests", "fixtures", "fleet-fsdp-2xh200")], out=str(tmp_path / "out"),
                        workers=1, gputap=GPUTAP, progress=None)
    assert res.summary["stragglers"][0]["rank"] == 1
    _chart_equals_the_ranks_table(res, str(tmp_path / "out"))


def _chart_equals_the_ranks_table(res, out):
    page = open(os.path.join(out, "report.html")).read()
    svg = page[page.index("<svg"):page.index("</svg>")]
    bars = re.findall(r'<rect x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)" fill="(#[0-9a-f]+)">'
                      r'<title>rank (\d+): ([0-9.]+) ms (not waiting|waiting)</title>', svg)
    r = res.ranks.sort_values("rank")
    assert len(bars) == 2 * len(r)
    work = [b for b in bars if b[5] == "not waiting"]
    wait = [b for b in bars if b[5] == "waiting"]
    assert [int(b[3]) for b in work] == list(r["rank"]) == [int(b[3]) for b in wait]
    assert [float(b[4]) for b in work] == [round(x, 3) for x in r["work_ms"]]
    assert [float(b[4]) for b in wait] == [round(x, 3) for x in r["wait_ms"]]
    top = float(re.search(r'<text x="0" y="12" font-size="11">([0-9.]+) ms</text>', svg).group(1))
    assert abs(top - (r["work_ms"] + r["wait_ms"]).max()) < 0.06
    for b, w in zip(work, r["work_ms"]):  # heights: 160 px for the top
        assert abs(float(b[1]) - 160 * w / (r["work_ms"] + r["wait_ms"]).max()) < 0.06
    for s in res.summary["stragglers"]:
        assert "<td>%d</td>" % s["rank"] in page


def test_a_collective_twice_on_one_gpu_counts_once(tmp_path):
    """Two PyTorch-profiler ranks whose NCCL kernels carry "Process Group Name" and "Seq"; rank 1's trace
    gives Seq 3 to two kernels (a trace that numbers wrongly).  The second is left out with a warning,
    so that collective has one row per rank (three rows on two ranks would count rank 1 twice in its
    arrivals and their noise), and rank 1's planted 5 ms late arrival at Seq 4 is found."""
    def trace(rank):
        ev, t = [], 1_000_000.0  # us
        for step in range(6):
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 1, "tid": 1,
                       "ts": t, "dur": 20_000})
            seqs = [step] + ([3] if rank == 1 and step == 5 else [])
            for j, seq in enumerate(seqs):
                start = t + 10_000 + j * 3000 + (5000 if rank == 1 and seq == 4 else 0)
                end = t + 10_000 + j * 3000 + 5000 + 200 if seq == 4 else start + 200
                ev.append({"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": start, "dur": end - start,
                           "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                           "args": {"device": 0, "stream": 7, "correlation": 100 * step + j,
                                    "Process Group Name": "0", "Seq": seq}})
            t += 20_000
        return {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": ev}

    d = tmp_path / "job"
    d.mkdir()
    for r in (0, 1):
        (d / ("rank%d.json" % r)).write_text(json.dumps(trace(r)))
    res = fleet.analyze([str(d)], workers=1, gputap=GPUTAP, progress=None)
    c = res.collectives
    assert len(c) == 6 and all(len(x) == 2 for x in c["ranks"]), c[["seq", "ranks"]]
    assert any("1 collective rows left out" in w for w in res.summary["warnings"]), res.summary["warnings"]
    late = c[c["is_late"]]
    assert list(late["seq"]) == [4] and list(late["late_rank"]) == [1]
    assert abs(float(late["late_ms"].iloc[0]) - 5.0) < 0.01
    assert res.summary["stragglers"][0]["rank"] == 1


def test_progress_goes_to_the_stream_given(tmp_path):
    """fleet.analyze(progress=stream): the command's progress lines reach that stream as they come
    (the last one counting every rank); progress=None: none, and the result is the same."""
    import io

    job = str(tmp_path / "job")
    generate.write_gtr(job, ranks=24, gpus_per_host=8, iterations=2, plants=False)
    s = io.StringIO()
    res = fleet.analyze([job], workers=2, gputap=GPUTAP, progress=s)
    lines = s.getvalue().splitlines()
    assert lines and all(x.startswith("gputap fleet: ") and "ranks analysed" in x for x in lines), lines
    assert lines[-1].startswith("gputap fleet: 24/24 ranks analysed"), lines
    quiet = fleet.analyze([job], workers=2, gputap=GPUTAP, progress=None)
    assert quiet.text == res.text and quiet.summary["ranks"] == 24
