"""Traces recorded with capture windows: gputap analyze makes each window one iteration unless the
trace has ProfilerStep#N ranges or --nvtx names a range; gputap convert --by-window writes one
timeline per window."""
import gzip
import json
import os
import subprocess

from gputap.fleet.gtrwrite import TraceWriter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
GPUTAP = os.environ.get("GPUTAP") or os.path.join(REPO, "build", "gputap")
US, MS = 1000, 1000000
T0 = 1_700_000_000_000_000_000
WINDOW = 5  # GT_RANGE_WINDOW


def write(path, windows, steps=2, kernels=4, profiler_steps=False):
    """`windows` capture windows of `steps` NVTX "inner" ranges of `kernels` launches each; the
    kernels of window w last 1 + w/10 ms, so each window's kernel time is known."""
    w = TraceWriter(path, "pid1", "h", pid=1, start_ns=T0)
    corr = 1
    for win in range(windows):
        ws = T0 + win * 100 * MS
        w.range("nvtx:inner@%d-%d" % (win * steps + 1, win * steps + steps), ws, ws + steps * 10 * MS, kind=WINDOW)
        for step in range(steps):
            s = ws + step * 10 * MS
            w.range("ProfilerStep#%d" % (win * steps + step) if profiler_steps else "inner", s, s + 9 * MS)
            for k in range(kernels):
                t = s + k * 2 * MS
                w.api("cudaLaunchKernel", t, t + 5 * US, corr)
                w.kernel("gemm_kernel", 0, 7, t + 10 * US, t + 10 * US + (1000 + win * 100) * US, corr)
                corr += 1
    w.close()


def write_no_windows(path):
    """One launch and its kernel, no capture window."""
    w = TraceWriter(path, "pid1", "h", pid=1, start_ns=T0)
    w.api("cudaLaunchKernel", T0, T0 + 5 * US, 1)
    w.kernel("gemm_kernel", 0, 7, T0 + 10 * US, T0 + 900 * US, 1)
    w.close()


def analyze(path, *args):
    cp = subprocess.run([GPUTAP, "analyze", "--format", "json", *args, path], capture_output=True, text=True,
                        timeout=60)
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)["results"][0], cp.stderr


def test_several_windows_are_the_iterations(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write(p, windows=3)
    r, err = analyze(p)
    assert r["iterations"] == 3 and r["iteration_source"] == "capture-windows"
    assert r["nvtx"]["count"] == 3
    assert "iterations are the 3 capture windows" in err
    # 24 kernels in 3 iterations: 8 launched in each window
    assert r["iteration_assignment"]["by_launch"] == 24 and r["iteration_assignment"]["outside"] == 0


def test_explicit_windows_and_explicit_range(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write(p, windows=3)
    r, _ = analyze(p, "--nvtx", "windows")
    assert r["iterations"] == 3 and r["iteration_source"] == "capture-windows"
    r, _ = analyze(p, "--nvtx", "inner")
    assert r["iterations"] == 6 and r["iteration_source"] == "nvtx" and r["nvtx"]["tag"] == "inner"


def test_profiler_steps_win_over_windows(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write(p, windows=3, profiler_steps=True)
    r, _ = analyze(p)
    assert r["iterations"] == 6 and r["iteration_source"] == "profiler-step"


def test_one_window_leaves_the_repeating_range(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write(p, windows=1, steps=3)
    r, err = analyze(p)
    assert r["iterations"] == 3 and r["nvtx"]["tag"] == "inner", err


def test_windows_asked_of_a_trace_without_them(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write_no_windows(p)
    r, err = analyze(p, "--nvtx", "windows")
    assert "no capture window in trace.gtr" in err
    assert r["iterations"] == 1 and r["iteration_source"] == "none"


def test_text_output_counts_per_window(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write(p, windows=2)
    cp = subprocess.run([GPUTAP, "analyze", p], capture_output=True, text=True, timeout=60)
    assert cp.returncode == 0, cp.stderr
    assert "Kernel instances per iteration: 8" in cp.stdout


def convert(path, out, *args):
    cp = subprocess.run([GPUTAP, "convert", path, "-o", out, *args], capture_output=True, text=True, timeout=60)
    return cp


def events(doc):
    return [e for e in doc["traceEvents"] if e["ph"] != "M"]


def test_convert_by_window_splits_the_timeline(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write(p, windows=3)
    whole = str(tmp_path / "whole")
    assert convert(p, whole, "--format", "json").returncode == 0
    one = json.load(open(os.path.join(whole, "trace.json")))
    split = str(tmp_path / "split")
    cp = convert(p, split, "--format", "json.gz,csv", "--by-window")
    assert cp.returncode == 0, cp.stderr
    assert "trace.window*.json.gz" in cp.stdout
    names = sorted(os.listdir(split))
    assert [n for n in names if n.startswith("trace.window")] == ["trace.window%d.json.gz" % k for k in (1, 2, 3)]
    assert "trace.json" not in names and "trace.json.gz" not in names and "trace_cuda_gpu_kern_sum.csv" in names
    docs = [json.load(gzip.open(os.path.join(split, "trace.window%d.json.gz" % k))) for k in (1, 2, 3)]
    # nothing lost, nothing twice: the windows' events are the whole timeline's
    key = lambda e: json.dumps(e, sort_keys=True)
    assert sorted(key(e) for d in docs for e in events(d)) == sorted(key(e) for e in events(one))
    for k, d in enumerate(docs):
        od = d["otherData"]
        assert od["capture_window"] == k + 1 and od["capture_windows"] == 3
        assert od["capture_spec"] == "nvtx:inner@%d-%d" % (2 * k + 1, 2 * k + 2)
        kern = [e for e in events(d) if e.get("cat") == "kernel"]
        assert len(kern) == 8, len(kern)  # 2 steps x 4 launches in each window
        # every launch arrow ends in the same file as it starts
        flows = [e for e in events(d) if e.get("cat") == "flow"]
        assert sorted(e["id"] for e in flows if e["ph"] == "s") == sorted(e["id"] for e in flows if e["ph"] == "f")
        # each file names its tracks
        assert any(e["ph"] == "M" and e["name"] == "process_name" for e in d["traceEvents"])


def test_convert_by_window_without_windows_and_misuse(tmp_path):
    p = str(tmp_path / "trace.gtr")
    write_no_windows(p)
    out = str(tmp_path / "o")
    cp = convert(p, out, "--format", "json", "--by-window")
    assert cp.returncode == 0 and "no capture window" in cp.stderr
    assert os.path.exists(os.path.join(out, "trace.json"))
    cp = convert(p, str(tmp_path / "o2"), "--format", "csv", "--by-window")
    assert cp.returncode == 2 and "--format needs json or json.gz" in cp.stderr
