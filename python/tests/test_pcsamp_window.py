"""gputap.Profiler(pc_sampling=True): PC sampling started when an active window opens and stopped
when it closes (gputap_pcsamp_start/stop); a warning, and windows without it, when PC sampling is
not on.  The end-to-end run under the tap with the stand-in CUPTI is in tests/cli/t_pcsamp.sh."""
import warnings

import gputap
import gputap._core as _core

from conftest import run_py


def _fake(monkeypatch, calls, window_rc=1):
    monkeypatch.setattr(_core, "init", lambda **k: calls.append("init"))
    monkeypatch.setattr(_core, "active", lambda: True)
    monkeypatch.setattr(_core, "reset", lambda: calls.append("reset"))
    monkeypatch.setattr(_core, "flush", lambda: calls.append("flush"))
    monkeypatch.setattr(_core, "results", lambda flush_first=True: {"ranges": []})

    def window(on):
        calls.append("pcs-start" if on else "pcs-stop")
        if window_rc < 0:
            raise _core.GputapError("PC sampling is not on in this process")
        return window_rc

    monkeypatch.setattr(_core, "pcsamp_window", window)


def test_sampling_only_in_active_windows(monkeypatch):
    calls = []
    _fake(monkeypatch, calls)
    prof = gputap.Profiler(schedule=gputap.schedule(wait=1, warmup=1, active=2, repeat=2), pc_sampling=True,
                           on_trace_ready=lambda p: calls.append("ready %d" % p.step_num))
    with prof:
        for i in range(9):
            calls.append("step %d" % i)
            prof.step()
    seq = [c for c in calls if c not in ("reset", "init")]
    # windows over steps 2-3 and 6-7: started after the flush that opens them, stopped after a flush
    # at their end (the window's kernels ran) and before the window is delivered; outside: nothing
    assert seq == ["pcs-stop", "step 0", "step 1", "flush", "pcs-start", "step 2", "step 3", "flush", "pcs-stop",
                   "ready 4", "step 4", "step 5", "flush", "pcs-start", "step 6", "step 7", "flush", "pcs-stop",
                   "ready 8", "step 8"], seq


def test_open_window_stopped_at_stop_and_on_exception(monkeypatch):
    calls = []
    _fake(monkeypatch, calls)
    try:
        with gputap.Profiler(pc_sampling=True):
            calls.append("body")
            raise KeyError("x")
    except KeyError:
        pass
    assert calls[-3:] == ["body", "flush", "pcs-stop"], calls
    assert calls.count("pcs-start") == 1


def test_without_pc_sampling_no_window_call(monkeypatch):
    calls = []
    _fake(monkeypatch, calls)
    with gputap.Profiler(schedule=gputap.schedule(wait=0, warmup=0, active=1)) as prof:
        prof.step()
        prof.step()
    assert "pcs-start" not in calls and "pcs-stop" not in calls


def test_not_on_warns_and_windows_go_on(monkeypatch):
    calls = []
    _fake(monkeypatch, calls, window_rc=-4)
    ready = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with gputap.Profiler(pc_sampling=True, on_trace_ready=ready.append) as prof:
            prof.step()
    assert any(issubclass(x.category, gputap.GputapWarning) and "PC sampling is not on" in str(x.message) for x in w)
    assert calls.count("pcs-stop") == 1 and "pcs-start" not in calls  # tried once, then left alone
    assert ready == [prof]


def test_real_library_says_pc_sampling_is_off():
    # the library on the CPU, not started: the window call is refused with the reason, and an
    # in-process Profiler asks for PC sampling in windows before it starts the library
    r = run_py(
        "import os, gputap, gputap._core as c\n"
        "try:\n"
        "    c.pcsamp_window(True)\n"
        "    print('no error')\n"
        "except gputap.GputapError as e:\n"
        "    print('error:', e)\n"
        "c.init = lambda **k: print('init', os.environ.get('GPUTAP_PCSAMP'), os.environ.get('GPUTAP_PCSAMP_WINDOW'))\n"
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    with gputap.Profiler(pc_sampling=True):\n"
        "        pass\n"
        "print('warned', len(w))\n",
        GPUTAP_PCSAMP=None, GPUTAP_PCSAMP_WINDOW=None)
    assert r.returncode == 0, r.stderr
    assert "error: PC sampling is not on in this process" in r.stdout, r.stdout
    assert "init on 1" in r.stdout, r.stdout
    assert "warned 1" in r.stdout, r.stdout
