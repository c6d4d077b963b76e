"""GMP profiler scripts run unchanged on gputap (results from a known document)."""
import csv
import io
import os

import pytest

import gmp_python
import gmp_py_wrapper
import gputap


def test_gmp_module_names():
    for n in ("create_profiler", "init_global_profiler", "profile_range", "print_results", "GmpProfiler"):
        assert getattr(gmp_python, n) is getattr(gputap.gmp, n)
    assert gmp_py_wrapper.GmpProfileType.MEMORY.value == "MEMORY"
    assert [r.value for r in gmp_py_wrapper.GmpOutputKernelReduction] == ["SUM", "MAX", "MEAN"]


def test_gmp_readme_script(tmp_path, monkeypatch, fake_lib, fake_results):
    """The GMP page's basic, memory and decorator examples, with init() stubbed (no GPU here)."""
    fake_results("results_two_ranges.json")
    monkeypatch.setattr(gputap._core, "init", lambda **k: True)
    monkeypatch.chdir(tmp_path)
    profiler = gmp_python.create_profiler()
    profiler.init()
    with profiler.profile_range("matrix_operations"):
        pass
    with profiler.profile_memory("memory_ops"):
        pass

    @profiler.profile_function("matrix_operations")
    def my_function():
        return 3

    assert my_function() == 3
    out = io.StringIO()
    profiler.print_profiler_ranges(file=out)
    text = out.getvalue()
    assert text.startswith("Kernel Profiling Results (SUM):\nNumber of ranges: 1\nRange 1: matrix_operations\n")
    out = io.StringIO()
    profiler.print_memory_activity(file=out)
    assert out.getvalue().splitlines()[1:3] == [
        "Range 1: memory_ops",
        "  Allocations: 5 operations, 104857600 bytes (100.00 MB)",
    ]
    mem = profiler.get_memory_activity()
    assert [m["name"] for m in mem] == ["memory_ops"]
    with open(os.path.join("output", "result.csv")) as f:
        rows = list(csv.DictReader(f))
    assert [r["path"] for r in rows] == ["matrix_operations", "memory_ops"]
    assert rows[0]["gpu__time_duration.sum"] == "1500"
    assert fake_lib == [("push", "matrix_operations"), ("pop",), ("push", "memory_ops"), ("pop",),
                        ("push", "matrix_operations"), ("pop",)]


def test_gmp_global_profiler(tmp_path, monkeypatch, fake_lib, fake_results, capsys):
    fake_results("results_two_ranges.json")
    monkeypatch.setattr(gputap._core, "init", lambda **k: True)
    monkeypatch.chdir(tmp_path)
    gmp_python.init_global_profiler()
    with gmp_python.profile_range("operations"):
        pass
    gmp_python.print_results()
    out = capsys.readouterr().out
    assert "Kernel Profiling Results (SUM):" in out and "Memory Activity Results:" in out
    gputap.gmp._global["profiler"] = None


def test_gmp_disable_and_types(monkeypatch, fake_lib):
    p = gmp_python.create_profiler()
    p.disable()
    with p.profile_range("off"):
        pass
    p.enable()
    with pytest.raises(ValueError):
        with p.profile_range("x", type="GRAPH"):
            pass
    with p.profile_range("on", type="MEMORY"):
        pass
    assert fake_lib == [("push", "on"), ("pop",)]


def test_wrapper_push_pop(fake_lib):
    w = gmp_py_wrapper.GmpProfiler()
    w.push_range("a", gmp_py_wrapper.GmpProfileType.MEMORY)
    w.disable()
    w.pushRange("b")
    w.popRange()
    w.enable()
    w.pop_range()
    assert w.pop_range() == -1
    assert fake_lib == [("push", "a"), ("pop",)]


def test_unknown_reduction_is_an_error(fake_results):
    fake_results("results_two_ranges.json")
    with pytest.raises(ValueError, match="SUM, MAX, MEAN"):
        gmp_python.create_profiler(output_dir=None).print_profiler_ranges("MEDIAN")


@pytest.fixture
def asked(monkeypatch):
    """init() stubbed; the metric lists asked of the engine, in order."""
    calls = []
    monkeypatch.setattr(gputap._core, "init", lambda **k: True)
    monkeypatch.setattr(gputap._core, "enable_metrics", lambda m, mode="auto": calls.append((m, mode)) or True)
    monkeypatch.delenv("GPUTAP_GMP_METRICS", raising=False)
    monkeypatch.delenv("GPUTAP_GMP_MODE", raising=False)
    return calls


def test_gmp_script_unchanged_measures_the_default_metrics_per_kernel(asked):
    gmp_python.create_profiler().init()
    assert asked == [(gputap.gmp.DEFAULT_METRICS, "kernel")]
    assert "smsp__inst_executed.sum" in gputap.gmp.DEFAULT_METRICS
    assert "gpu__time_duration.sum" in gputap.gmp.DEFAULT_METRICS


def test_gmp_metrics_none_or_environment_turns_them_off_or_chooses(asked, monkeypatch):
    gmp_python.create_profiler(metrics=None).init()
    assert asked == []
    monkeypatch.setenv("GPUTAP_GMP_METRICS", "none")
    gmp_python.create_profiler().init()
    assert asked == []
    monkeypatch.setenv("GPUTAP_GMP_METRICS", "smsp__inst_executed.sum")
    monkeypatch.setenv("GPUTAP_GMP_MODE", "range")
    gmp_python.create_profiler().init()
    assert asked == [("smsp__inst_executed.sum", "range")]
    gmp_python.create_profiler(metrics="dram__bytes_read.sum", mode="auto").init()
    assert asked[-1] == ("dram__bytes_read.sum", "auto")


def test_gmp_defaults_that_cannot_be_measured_warn_an_explicit_list_raises(monkeypatch):
    monkeypatch.setattr(gputap._core, "init", lambda **k: True)
    monkeypatch.delenv("GPUTAP_GMP_METRICS", raising=False)

    def refuse(m, mode="auto"):
        raise gputap.MetricsError("counters restricted to administrators")

    monkeypatch.setattr(gputap._core, "enable_metrics", refuse)
    with pytest.warns(RuntimeWarning, match="GMP default metrics not measured: counters restricted"):
        gmp_python.create_profiler().init()
    with pytest.raises(gputap.MetricsError):
        gmp_python.create_profiler(metrics="smsp__inst_executed.sum").init()


def test_gmp_global_profiler_ranges_go_on_after_init_fails(monkeypatch, fake_lib):
    def no_gpu(**k):
        raise gputap.GPUUnavailableError("no CUDA driver")

    monkeypatch.setattr(gputap._core, "init", no_gpu)
    with pytest.raises(gputap.GPUUnavailableError):
        gmp_python.init_global_profiler()
    try:
        with gmp_python.profile_range("still_runs"):
            x = 1
        assert x == 1
        assert fake_lib == [("push", "still_runs"), ("pop",)]
    finally:
        gputap.gmp._global["profiler"] = None
