"""The package over the real libgputap.so, on a machine without a GPU: the library
records ranges (started by GPUTAP_OUT, as under `gputap run`), and the results
document says what was recorded."""
import json
import os

import subprocess
import sys

from conftest import child_env, run_py

PRELUDE = """
import gputap, json, threading
def doc():
    return json.loads(gputap.results_json())
def by_path(d):
    return {r["path"]: r for r in d["ranges"]}
"""


def run(body, tmp_path, binding=None, **env):
    """Run PRELUDE + body in a child recording in-process; binding: "extension" or "ctypes"
    (GPUTAP_NO_EXTENSION=1), checked in the child; None: the default."""
    code = PRELUDE + body
    if binding is not None:
        env["GPUTAP_NO_EXTENSION"] = "1" if binding == "ctypes" else None
        code += "\nassert gputap.library()['binding'] == %r, gputap.library()\n" % binding
    r = run_py(code, GPUTAP_OUT=str(tmp_path / "run"), **env)
    assert r.returncode == 0, r.stderr
    return r


def test_nesting_paths_levels_and_calls(tmp_path, binding):
    r = run(
        """
with gputap.range("train"):
    for i in range(3):
        with gputap.range("forward"):
            with gputap.range("matmul"):
                pass
    with gputap.range("backward"):
        pass
with gputap.range("forward"):
    pass
d = doc()
print(json.dumps([(x["path"], x["name"], x["level"], x["calls"], x["open"]) for x in d["ranges"]]))
print(d["mode"], d["recording"])
""",
        tmp_path,
        binding,
    )
    lines = r.stdout.splitlines()
    assert json.loads(lines[0]) == [
        ["train", "train", 0, 1, 0],
        ["train/forward", "forward", 1, 3, 0],
        ["train/forward/matmul", "matmul", 2, 3, 0],
        ["train/backward", "backward", 1, 1, 0],
        ["forward", "forward", 0, 1, 0],
    ]
    assert lines[1] == "in-process True"


def test_wall_times_are_consistent(tmp_path):
    r = run(
        """
import time
with gputap.range("outer"):
    for i in range(2):
        with gputap.range("sleep"):
            time.sleep(0.02 * (i + 1))
x = by_path(doc())
o, s = x["outer"], x["outer/sleep"]
print(s["calls"], s["wall_min_ns"] >= 20e6, s["wall_max_ns"] >= 40e6, s["wall_ns"] == s["wall_min_ns"] + s["wall_max_ns"],
      o["wall_ns"] >= s["wall_ns"], s["wall_max_ns"] < 1e9)
""",
        tmp_path,
    )
    assert r.stdout.split() == ["2", "True", "True", "True", "True", "True"]


def test_threads_have_their_own_nesting(tmp_path, binding):
    r = run(
        """
barrier = threading.Barrier(4)
def work(i):
    barrier.wait()
    for _ in range(100):
        with gputap.range("worker"):
            with gputap.range("t%d" % i):
                pass
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
x = by_path(doc())
print(x["worker"]["calls"], sorted((p, v["calls"]) for p, v in x.items() if p != "worker"))
""",
        tmp_path,
        binding,
    )
    assert r.stdout.strip() == (
        "400 [('worker/t0', 100), ('worker/t1', 100), ('worker/t2', 100), ('worker/t3', 100)]"
    )


def test_exceptions_close_ranges(tmp_path, binding):
    r = run(
        """
@gputap.profile
def bad():
    raise ValueError("x")
for _ in range(3):
    try:
        with gputap.range("outer"):
            bad()
    except ValueError:
        pass
with gputap.range("after"):
    pass
x = by_path(doc())
print(sorted((p, v["calls"], v["open"]) for p, v in x.items()))
""",
        tmp_path,
        binding,
    )
    assert r.stdout.strip() == "[('after', 1, 0), ('outer', 3, 0), ('outer/bad', 3, 0)]"


def test_open_ranges_reset_and_disable(tmp_path, binding):
    r = run(
        """
held = gputap.range("held"); held.__enter__()
with gputap.range("a"):
    pass
gputap.reset()
x = by_path(doc())
print(sorted((p, v["calls"], v["open"]) for p, v in x.items()))
gputap.disable()
with gputap.range("hidden"):
    pass
gputap.enable()
held.__exit__(None, None, None)
x = by_path(doc())
print(sorted((p, v["calls"], v["open"]) for p, v in x.items()))
""",
        tmp_path,
        binding,
    )
    lines = r.stdout.splitlines()
    assert lines[0] == "[('held', 0, 1)]"
    assert lines[1] == "[('held', 1, 0)]"


def test_results_document_fields(tmp_path):
    r = run(
        """
with gputap.range("r"):
    pass
d = doc()
print(json.dumps(sorted(d.keys())))
print(json.dumps(sorted(d["ranges"][0].keys())))
print(d["gpu_activity"], d["metrics"], bool(d["metrics_error"]), d["kernels_total"], d["memory_source"])
""",
        tmp_path,
    )
    lines = r.stdout.splitlines()
    assert json.loads(lines[0]) == sorted(
        ["schema", "proc", "mode", "recording", "gpu_activity", "gpu_activity_note", "memory_source",
         "mem_used_bytes", "mem_peak_bytes", "kernels_total", "kernels_in_ranges", "lost", "ranges", "metrics",
         "metrics_error"]
    )
    assert json.loads(lines[1]) == sorted(
        ["path", "name", "level", "calls", "open", "wall_ns", "wall_min_ns", "wall_max_ns", "kernels", "gpu_ns",
         "gpu_min_ns", "gpu_max_ns", "timed_kernels", "alloc_count", "alloc_bytes", "free_count", "free_bytes",
         "peak_bytes"]
    )
    assert lines[2] == "False None True 0 none"


def test_names_are_escaped(tmp_path, binding):
    r = run(
        """
names = ['q"uote', 'back\\\\slash', 'new\\nline', 'caf\\u00e9', 'a/b']
for n in names:
    with gputap.range(n):
        pass
print(json.dumps([x["name"] for x in doc()["ranges"]]))
""",
        tmp_path,
        binding,
    )
    assert json.loads(r.stdout) == ['q"uote', "back\\slash", "new\nline", "caf\u00e9", "a/b"]


def test_ranges_in_the_trace_and_finish_writes_a_run_directory(tmp_path):
    out = tmp_path / "run"
    r = run(
        """
import gputap._core as c
c._state["out_dir"] = %r   # started by GPUTAP_OUT, as init(out_dir=...) would
for i in range(5):
    with gputap.range("step"):
        with gputap.range("inner"):
            pass
print(gputap.finish(report=False))
print(gputap.active())
"""
        % str(out),
        tmp_path,
        GPUTAP="",
    )
    assert r.stdout.splitlines() == [str(out), "False"]
    procs = [p for p in os.listdir(out) if p.startswith("pid")]
    assert len(procs) == 1
    pdir = out / procs[0]
    assert (pdir / "trace.gtr").exists() and not (pdir / "trace.gtr.partial").exists()
    with open(out / "run.json") as f:
        rj = json.load(f)
    assert rj["recorded_by"] == "python" and rj["processes"][0]["proc"] == procs[0]
    assert rj["warnings"] == []
    # the converted summaries: the NVTX table has our 10 ranges
    with open(pdir / "trace_nvtx_sum.csv") as f:
        text = f.read()
    rows = [ln for ln in text.splitlines()[1:] if ln]
    assert any(",5," in ln and "step" in ln for ln in rows), text
    assert any(",5," in ln and "inner" in ln for ln in rows), text


def test_ranks_finishing_into_one_folder_at_once(tmp_path):
    """Each rank of a job calls init(out_dir=D) and finish() into one folder, at the same moment: every
    finish() returns (before, one rank's raised FileNotFoundError: two wrote one temporary run.json),
    run.json is whole and lists every rank, spanning the earliest start, and report.html is whole."""
    out = tmp_path / "run"
    code = PRELUDE + """
import gputap._core as c, time
c._state["out_dir"] = %r
c._state["start_ns"] = time.time_ns() - 1000000 * (1 + int(__import__("os").environ["RANK"]))
with gputap.range("step"):
    pass
print(gputap.finish())
""" % str(out)
    n = 6
    ps = [subprocess.Popen([sys.executable, "-c", code], env=child_env(GPUTAP_OUT=str(out), GPUTAP="", RANK=str(r)),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(n)]
    res = [p.communicate(timeout=120) + (p.returncode,) for p in ps]
    assert all(rc == 0 and o.strip() == str(out) for o, e, rc in res), res
    with open(out / "run.json") as f:
        rj = json.load(f)
    assert sorted(p["proc"] for p in rj["processes"]) == ["rank%d" % r for r in range(n)]
    assert rj["end_ns"] - rj["start_ns"] >= n * 1000000 and abs(rj["wall_s"] - (rj["end_ns"] - rj["start_ns"]) / 1e9) < 1e-6
    left = [f for f in os.listdir(out) if f.endswith(".tmp") or f.endswith(".partial")]
    assert not left, left
    with open(out / "report.html") as f:
        page = f.read()
    assert page.rstrip().endswith("</html>")


def test_init_makes_nvtx_and_nccl_load_the_library(tmp_path):
    """What init() does once the library started: NVTX_INJECTION64_PATH and NCCL_PROFILER_PLUGIN = this
    library (the program's NVTX ranges recorded, NCCL's collectives with communicator and sequence
    number, as under `gputap run`), each unless the environment already names one."""
    code = """
import os, gputap, gputap._core as c, gputap._lib as l
c._injections()
p = l.info()["path"]
print(os.path.isabs(p), os.environ.get("NVTX_INJECTION64_PATH") == p, os.environ.get("NCCL_PROFILER_PLUGIN") == p)
os.environ["NCCL_PROFILER_PLUGIN"] = "/opt/theirs.so"
os.environ["NVTX_INJECTION64_PATH"] = "/opt/nsys.so"
c._injections()
print(os.environ["NCCL_PROFILER_PLUGIN"], os.environ["NVTX_INJECTION64_PATH"])
"""
    r = run_py(code, NCCL_PROFILER_PLUGIN=None, NVTX_INJECTION64_PATH=None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True", "True", "/opt/theirs.so", "/opt/nsys.so"]
