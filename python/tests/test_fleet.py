"""gputap fleet on a real dask.distributed cluster: a generated 64-rank job on 8 machines with a slow
rank, a late collective, a corrupt rank folder and a machine with older NCCL, the real two-rank NCCL
fixture, and a scheduler started separately as a user with a cluster would."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pyarrow.parquet as pq
import pytest

from gputap import fleet
from gputap.fleet import generate

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
PYDIR = os.path.join(REPO, "python")
GPUTAP = os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "kineto-2rank-nccl")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("job64"))
    truth = generate.write_gtr(d, ranks=64, gpus_per_host=8, iterations=6)
    return d, truth


@pytest.fixture(scope="module")
def result(job, tmp_path_factory):
    d, truth = job
    out = str(tmp_path_factory.mktemp("fleet64"))
    hosts = sorted(os.path.join(d, h) for h in os.listdir(d) if h.startswith("host"))
    # a LocalCluster of 3 worker processes, made by gputap.fleet itself
    res = fleet.analyze(hosts + [os.path.join(d, "no-such-host")], out=out, workers=3, gputap=GPUTAP, progress=None)
    return res, out, truth


def test_localcluster_runs_one_task_per_rank_on_several_processes(result):
    res, out, truth = result
    assert res.summary["ranks"] == 63  # 64 minus the corrupt one
    assert sorted(res.ranks["rank"]) == [r for r in range(64) if r != truth["corrupt_rank"]]
    assert res.summary["hosts"] == ["node%02d" % h for h in range(8)]


def test_corrupt_and_missing_inputs_are_named_and_left_out(result):
    res, out, truth = result
    failed = {f["path"]: f["error"] for f in res.summary["failed"]}
    bad = [p for p in failed if "rank%d" % truth["corrupt_rank"] in p]
    assert len(bad) == 1 and "not a gputap trace" in failed[bad[0]]
    assert any(p.endswith("no-such-host") and "no such file" in e for p, e in failed.items())
    assert len(failed) == 2


def test_slow_rank_found_first_with_compute_as_reason(result):
    res, out, truth = result
    slow = res.summary["slow_ranks"]
    assert slow and slow[0]["rank"] == truth["slow_rank"]
    assert slow[0]["reason"].startswith("compute")
    # every iteration without the planted late collective: the slow rank is the slowest, by compute
    for it in res.summary["per_iteration"]:
        if it["iteration"] != truth["late"]["iteration"]:
            assert it["slowest_rank"] == truth["slow_rank"] and it["phase"] == "compute"
            assert it["spread_ms"] > 2.0


def test_late_collective_found(result):
    res, out, truth = result
    late = res.summary["late_collectives"]
    assert len(late) == 1
    assert (late[0]["iteration"], late[0]["seq"], late[0]["late_rank"]) == (
        truth["late"]["iteration"], truth["late"]["seq"], truth["late"]["rank"])
    assert abs(late[0]["skew_ms"] - truth["late"]["extra_ms"]) < 0.1
    it = [x for x in res.summary["per_iteration"] if x["iteration"] == truth["late"]["iteration"]][0]
    assert it["slowest_rank"] == truth["late"]["rank"]


def test_clock_offsets_recovered_from_collective_completion(result):
    res, out, truth = result
    clock = {c["host"]: c for c in res.summary["clock"]}
    for h, want in enumerate(truth["clock_offset_ms"]):
        c = clock["node%02d" % h]
        assert abs(c["offset_ms"] - want) < 0.01, (h, c, want)
        if h:
            assert c["source"] == "collectives" and c["rms_us"] < 10 and c["collectives"] >= 80


def test_older_nccl_machine_matched_by_order(result):
    res, out, truth = result
    m = res.summary["collective_rows_by_match"]
    old = truth["old_nccl_host"]
    assert m["order"] == 8 * 12 and m["nccl"] == 55 * 12  # 8 ranks on the old machine, 55 with the plugin
    c = res.collectives
    assert len(c) == 12 and set(c["comm"]) == {"0x%016x" % generate.WORLD_COMM}
    assert all(len(r) == 63 for r in c["ranks"])
    assert old is not None


def _analyze_json(paths):
    cp = subprocess.run([GPUTAP, "analyze", "--format", "json"] + paths, capture_output=True, check=True)
    return json.loads(cp.stdout)["results"][0]


def test_per_rank_numbers_identical_to_single_machine_analyze(job, result):
    d, truth = job
    res, out, _ = result
    traces = sorted(os.path.join(dp, "trace.gtr") for dp, _, fs in os.walk(d) if "trace.gtr" in fs
                    and not dp.endswith("rank%d" % truth["corrupt_rank"]))
    one = _analyze_json(traces)  # every rank in one process, on one machine
    by_label = {g["label"]: g for g in one["timeline"]["gpus"]}
    assert len(by_label) == 63
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
                "exposed_comm_ms"):
        assert col in ranks.column_names
    assert ranks.num_rows == 63
    its = pq.read_table(os.path.join(out, "iterations.parquet"))
    assert its.num_rows == 63 * 6
    coll = pq.read_table(os.path.join(out, "collectives.parquet"))
    for col in ("comm", "seq", "iteration", "name", "arrival_ms", "skew_ms", "late_rank"):
        assert col in coll.column_names
    con = duckdb.connect()
    late = con.execute("select late_rank, seq, round(skew_ms, 1) from read_parquet(?) order by skew_ms desc limit 1",
                       [os.path.join(out, "collectives.parquet")]).fetchone()
    assert late == (truth["late"]["rank"], truth["late"]["seq"], 8.0)
    n, top = con.execute("select count(*), arg_max(rank, compute_ms) from read_parquet(?)",
                         [os.path.join(out, "ranks.parquet")]).fetchone()
    assert (n, top) == (63, truth["slow_rank"])
    arrivals = con.execute("select len(arrival_ms), len(ranks) from read_parquet(?) limit 1",
                           [os.path.join(out, "collectives.parquet")]).fetchone()
    assert arrivals == (63, 63)
    s = json.load(open(os.path.join(out, "summary.json")))
    assert {"failed", "slow_ranks", "late_collectives"} <= set(s)
    assert "late collectives" in open(os.path.join(out, "summary.txt")).read().lower()
    assert 'id="fleet"' in open(os.path.join(out, "report.html")).read()


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
        out = str(tmp_path / "out")
        cp = subprocess.run([GPUTAP, "fleet", "--scheduler-file", sf, "-o", out, job], env=env, capture_output=True,
                            timeout=240)
        assert cp.returncode == 0, cp.stderr.decode()
        assert b"16/16 ranks analysed, 1 failed" in cp.stderr  # progress, on stderr
        s = json.load(open(os.path.join(out, "summary.json")))
        assert s["ranks"] == 15 and len(s["failed"]) == 1
        assert s["slow_ranks"][0]["rank"] == truth["slow_rank"]
        assert [(x["seq"], x["late_rank"]) for x in s["late_collectives"]] == [(truth["late"]["seq"],
                                                                                truth["late"]["rank"])]
        assert b"Slow ranks" in cp.stdout
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


def test_cli_says_what_to_install_when_the_extra_is_missing(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "pyarrow.py").write_text("raise ImportError(\"No module named 'pyarrow'\")\n")
    env = dict(os.environ, PYTHONPATH=str(shim) + os.pathsep + PYDIR)
    cp = subprocess.run([GPUTAP, "fleet", str(tmp_path)], env=env, capture_output=True)
    assert cp.returncode == 1
    err = cp.stderr.decode()
    assert "pip install './python[fleet]'" in err and "pyarrow" in err


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
    assert res.summary["slow_ranks"][0]["rank"] == truth["slow_rank"]
    assert res.summary["late_collectives"][0]["late_rank"] == truth["late"]["rank"]
    assert set(res.collectives["match"]) == {"order"}
    assert shutil.which(GPUTAP) or os.access(GPUTAP, os.X_OK)
