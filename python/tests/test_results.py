"""Reductions, printed tables and CSV over known result documents."""
import io
import os

import pytest

import gputap
from gputap import _results
from conftest import DATA, load_doc


@pytest.fixture
def doc():
    return _results.parse(load_doc("results_two_ranges.json"))


@pytest.mark.parametrize("red", ["SUM", "MAX", "MEAN"])
def test_csv_matches_expected(doc, red):
    with open(os.path.join(DATA, "results_two_ranges.%s.csv" % red)) as f:
        expected = f.read()
    assert _results.csv_text(doc, red) == expected


def test_reduction_case_insensitive_and_checked(doc):
    assert _results.reduce_range(doc["ranges"][0], "max")["gpu__time_duration.sum"] == 500.0
    with pytest.raises(ValueError, match="SUM, MAX, MEAN"):
        _results.reduce_range(doc["ranges"][0], "MEDIAN")


def test_metrics_summed_over_occurrences(doc):
    m = doc["ranges"][0]["metrics"]["gpu__time_duration.sum"]
    assert m == {"sum": 1500.0, "max": 500.0, "min": 100.0, "kernels": 6, "mean": 250.0}
    assert doc["ranges"][1]["metrics"] == {}
    assert doc["metric_names"] == ["gpu__time_duration.sum", "smsp__inst_executed.sum"]


def test_kernel_table_layout(doc):
    text = _results.format_ranges(doc, "SUM")
    lines = text.splitlines()
    assert lines[0] == "Kernel Profiling Results (SUM):"
    assert lines[1] == "Number of ranges: 3"
    assert lines[2] == "Range 1: matrix_operations"
    assert "  gpu__time_duration.sum: 1500" in lines
    assert "  smsp__inst_executed.sum: 6000" in lines
    assert "  kernels: 6" in lines
    assert "Range 2: matrix_operations/inner" in lines
    # every line below a range header is "  name: value"
    for ln in lines[3:]:
        assert ln.startswith("Range ") or (ln.startswith("  ") and ": " in ln)


def test_kernel_table_selects_names(doc):
    text = _results.format_ranges(doc, "MEAN", names=["memory_ops"])
    assert "Number of ranges: 1" in text
    assert "Range 1: memory_ops" in text
    assert "  wall_time_us: 5000" in text


def test_memory_table_layout(doc):
    text = _results.format_memory(doc, names=["memory_ops"])
    assert text.splitlines() == [
        "Memory Activity Results:",
        "Range 1: memory_ops",
        "  Allocations: 5 operations, 104857600 bytes (100.00 MB)",
        "  Deallocations: 5 operations, 104857600 bytes (100.00 MB)",
        "  Peak in use: 209715200 bytes (200.00 MB)",
    ]
    assert _results.format_memory(doc, names=[]).splitlines()[1] == "No memory ranges recorded."


def test_memory_activity_plain_structures(doc):
    acts = _results.memory_activity(doc)
    assert acts[2] == {
        "name": "memory_ops",
        "path": "memory_ops",
        "calls": 1,
        "allocations": {"count": 5, "bytes": 104857600},
        "deallocations": {"count": 5, "bytes": 104857600},
        "peak_bytes": 209715200,
    }
    assert all(type(v) in (str, int, dict) for a in acts for v in a.values())


def test_no_metrics_says_why():
    doc = _results.parse(
        '{"ranges":[{"path":"a","calls":1,"wall_ns":10,"wall_min_ns":10,"wall_max_ns":10}],'
        '"metrics":null,"metrics_error":"no range-metrics engine"}'
    )
    text = _results.format_ranges(doc)
    assert "hardware metrics: not available (no range-metrics engine)" in text
    assert doc["ranges"][0]["kernels"] == 0
    assert _results.csv_text(doc).splitlines()[0].endswith("peak_bytes")


@pytest.mark.parametrize(
    "bad, msg",
    [
        ("{", "not valid JSON"),
        ('{"ranges": 3}', "'ranges' list"),
        ('{"ranges": [{"name": "x"}]}', "no 'path'"),
        ('{"ranges": [{"path": "x", "calls": "two"}]}', "calls is not a number"),
    ],
)
def test_bad_documents(bad, msg):
    with pytest.raises(gputap.ResultsFormatError, match=msg):
        _results.parse(bad)


def test_table_columns(doc):
    t = _results.table(doc)
    assert t["path"] == ["matrix_operations", "matrix_operations/inner", "memory_ops"]
    assert t["gpu__time_duration.sum:max"] == [500.0, None, 10.0]
    assert t["kernels"] == [6, 2, 1]


def test_dataframe_when_pandas(doc):
    pd = pytest.importorskip("pandas")
    df = _results.dataframe(doc)
    assert isinstance(df, pd.DataFrame)
    assert df.loc["memory_ops", "alloc_bytes"] == 104857600


def test_print_results_to_file(fake_results):
    fake_results("results_two_ranges.json")
    buf = io.StringIO()
    gputap._core.print_results("MAX", file=buf)
    out = buf.getvalue()
    assert out.startswith("Kernel Profiling Results (MAX):\n")
    assert "Memory Activity Results:" in out
