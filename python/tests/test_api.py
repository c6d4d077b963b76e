"""Names, signatures and Python-level behaviour of ranges, decorators and the Profiler."""
import inspect
import threading

import pytest

import gputap
from gputap import _core
from conftest import run_py

GMP_NAMES = [
    "create_profiler",
    "init_global_profiler",
    "profile_range",
    "profile_memory",
    "profile_function",
    "print_profiler_ranges",
    "print_memory_activity",
    "get_memory_activity",
    "print_results",
]


def params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def test_public_names():
    for n in gputap.__all__:
        assert hasattr(gputap, n), n
    for n in GMP_NAMES + ["init", "range", "profile", "Profiler", "schedule", "results", "dataframe", "finish"]:
        assert callable(getattr(gputap, n)), n
    assert issubclass(gputap.GPUUnavailableError, gputap.GputapError)
    assert issubclass(gputap.GputapError, RuntimeError)
    assert issubclass(gputap.CuptiBusyWarning, gputap.GputapWarning)


def test_signatures():
    e = inspect.Parameter.empty
    assert params(gputap.init) == [("out_dir", None), ("metrics", None), ("mode", "auto")]
    assert params(gputap.range) == [("name", e)]
    assert params(gputap.Profiler) == [
        ("metrics", None),
        ("mode", "auto"),
        ("schedule", None),
        ("on_trace_ready", None),
        ("out_dir", None),
        ("pc_sampling", False),
    ]
    p = gputap.create_profiler()
    assert params(p.profile_range) == [("name", e), ("type", "CONCURRENT_KERNEL")]
    assert params(p.profile_memory) == [("name", e)]
    assert params(p.print_profiler_ranges)[0] == ("reduction", "SUM")
    for n in ("init", "enable", "disable", "print_memory_activity", "get_memory_activity"):
        assert callable(getattr(p, n)), n


def test_import_is_silent_and_lazy():
    r = run_py("import gputap, gmp_python, gmp_py_wrapper, sys; print(gputap.library()['path'] is None or 'x')")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    # the library is not loaded by the import itself
    r = run_py("import gputap; print(sum('libgputap' in l for l in open('/proc/self/maps')))")
    assert r.stdout.strip() == "0", r.stdout


def test_import_never_fails_without_library():
    r = run_py(
        "import gputap\nwith gputap.range('x'):\n  pass\n"
        "try:\n  gputap.init()\nexcept gputap.GPUUnavailableError as e:\n  print('ERR', e)\n",
        GPUTAP_LIB="/nonexistent/libgputap.so",
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def test_context_manager_nesting(fake_lib):
    with gputap.range("outer"):
        with gputap.range("inner"):
            pass
    assert fake_lib == [("push", "outer"), ("push", "inner"), ("pop",), ("pop",)]


def test_context_manager_pops_on_exception(fake_lib):
    with pytest.raises(KeyError):
        with gputap.range("boom"):
            raise KeyError("x")
    assert fake_lib == [("push", "boom"), ("pop",)]


def test_decorators_pop_on_exception(fake_lib):
    @gputap.profile
    def f(x):
        if x:
            raise ValueError("no")
        return 7

    @gputap.range("named")
    def g():
        return 8

    @gputap.profile(name="other")
    def h():
        return 9

    assert f(0) == 7 and g() == 8 and h() == 9
    with pytest.raises(ValueError):
        f(1)
    assert f.__name__ == "f"
    names = [e[1] for e in fake_lib if e[0] == "push"]
    assert names == ["test_decorators_pop_on_exception.<locals>.f", "named", "other", names[0]]
    assert fake_lib.count(("pop",)) == 4


def test_disable_skips_and_open_ranges_still_close(fake_lib):
    r = gputap.range("a")
    r.__enter__()
    gputap.disable()
    try:
        with gputap.range("skipped"):
            pass
        r.__exit__(None, None, None)
    finally:
        gputap.enable()
    assert fake_lib == [("push", "a"), ("pop",)]


def test_threads_push_and_pop_on_their_own_thread(fake_lib):
    seen = []
    lock = threading.Lock()

    def push(b):
        with lock:
            seen.append((threading.get_ident(), "push", b))
        return 0

    def pop():
        with lock:
            seen.append((threading.get_ident(), "pop"))
        return 0

    fake_lib.use(push, pop)

    barrier = threading.Barrier(4)

    def work(i):
        barrier.wait()
        for _ in range(50):
            with gputap.range("t%d" % i):
                with gputap.range("inner"):
                    pass
        barrier.wait()  # all alive until all are done: thread idents stay distinct

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    per = {}
    for e in seen:
        per.setdefault(e[0], []).append(e[1:])
    assert len(per) == 4
    for evs in per.values():
        depth = 0
        for e in evs:
            depth += 1 if e[0] == "push" else -1
            assert 0 <= depth <= 2
        assert depth == 0 and len(evs) == 200
        assert len({e[1] for e in evs if e[0] == "push"}) == 2  # its own name and "inner"


def test_bad_names():
    with pytest.raises(TypeError):
        gputap.range(3)
    with pytest.raises(ValueError):
        gputap.range("a\0b")


def test_schedule_like_torch():
    s = gputap.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    A = gputap.ProfilerAction
    got = [s(i) for i in range(10)]
    assert got == [A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.WARMUP, A.RECORD,
                   A.RECORD_AND_SAVE, A.NONE]
    with pytest.raises(ValueError):
        gputap.schedule(wait=0, warmup=0, active=0)


def test_profiler_windows(monkeypatch, fake_results):
    fake_results("results_two_ranges.json")
    calls = []
    monkeypatch.setattr(_core, "init", lambda **k: calls.append(("init", k)))
    monkeypatch.setattr(_core, "reset", lambda: calls.append(("reset",)))
    monkeypatch.setattr(_core, "flush", lambda: None)
    ready = []
    prof = gputap.Profiler(schedule=gputap.schedule(wait=1, warmup=1, active=2, repeat=2),
                           on_trace_ready=lambda p: ready.append((p.step_num, p.results()["window"])))
    with prof:
        for _ in range(9):
            prof.step()
    assert [r[0] for r in ready] == [4, 8]
    assert [r[1]["index"] for r in ready] == [0, 1]
    assert calls.count(("reset",)) == 2
    assert prof.results()["ranges"][0]["path"] == "matrix_operations"


def test_profiler_stop_saves_open_window(monkeypatch, fake_results):
    fake_results("results_two_ranges.json")
    monkeypatch.setattr(_core, "init", lambda **k: None)
    monkeypatch.setattr(_core, "reset", lambda: None)
    monkeypatch.setattr(_core, "flush", lambda: None)
    ready = []
    with gputap.Profiler(on_trace_ready=ready.append) as prof:
        prof.step()
    assert ready == [prof]
    with pytest.raises(RuntimeError):
        prof.step()


def test_range_object_reused_and_nested(fake_lib):
    r = gputap.range("loop")
    for _ in range(2):
        with r:
            with r:
                pass
    assert fake_lib == [("push", "loop"), ("push", "loop"), ("pop",), ("pop",)] * 2
