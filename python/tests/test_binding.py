"""The two bindings of the hot pair: the C extension (gputap._speedups, the default when
built) and the pure-ctypes path (the fallback; GPUTAP_NO_EXTENSION=1 forces it).  Both
must behave the same over the real libgputap.so; the extension's own object protocol
(arguments, attributes, errors, references) is checked in-process."""
import inspect
import json
import sys

import pytest

import gputap
from gputap import _core
from conftest import extension_or_fail, run_py

BINDING = "import gputap\nprint(gputap.library()['binding'], gputap.range is gputap._core._PyRange)\n"


def test_default_is_the_extension_and_the_variable_turns_it_off():
    extension_or_fail()
    r = run_py(BINDING, GPUTAP_NO_EXTENSION=None)
    assert r.returncode == 0 and r.stdout.split() == ["extension", "False"], r.stdout + r.stderr
    r = run_py(BINDING, GPUTAP_NO_EXTENSION="0")
    assert r.stdout.split() == ["extension", "False"], r.stdout + r.stderr
    r = run_py(BINDING, GPUTAP_NO_EXTENSION="1")
    assert r.returncode == 0 and r.stdout.split() == ["ctypes", "True"], r.stdout + r.stderr
    r = run_py("import gputap._core as c; print(c._ext)", GPUTAP_NO_EXTENSION="1")
    assert r.stdout.strip() == "None"


# Everything a range can do, over the real library recording in-process (GPUTAP_OUT):
# levels from push/pop, disable before the first range, a recursive decorated function,
# an exception through the decorator and through `with`, a range object re-entered,
# threads; printed as one JSON document that must be the same for both bindings.
SCRIPT = r"""
import gputap, json, threading, os
out = {}
gputap.disable()
with gputap.range("hidden-before-first-use"):
    pass
out["push_disabled"] = gputap.push("hidden")
gputap.enable()
out["levels"] = [gputap.push("a"), gputap.push("b"), gputap.pop(), gputap.pop(), gputap.pop()]

@gputap.profile
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
out["fact"] = fact(4)

@gputap.range("raiser")
def raiser(e):
    raise e
err = KeyError("k")
try:
    with gputap.range("outer"):
        raiser(err)
except KeyError as e:
    out["same_exception"] = e is err

r = gputap.range("again")
with r:
    with r:
        out["pushed_inside"] = r._pushed
out["pushed_after"] = r._pushed

def work(i):
    for _ in range(20):
        with gputap.range("w%d" % i):
            pass
ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
[t.start() for t in ts]; [t.join() for t in ts]
d = json.loads(gputap.results_json())
out["ranges"] = sorted((x["path"], x["calls"], x["open"]) for x in d["ranges"])
out["binding"] = gputap.library()["binding"]
print(json.dumps(out))
"""


def test_both_bindings_record_the_same(tmp_path):
    extension_or_fail()
    got = {}
    for b, flag in (("extension", None), ("ctypes", "1")):
        r = run_py(SCRIPT, GPUTAP_OUT=str(tmp_path / b), GPUTAP_NO_EXTENSION=flag)
        assert r.returncode == 0, r.stderr
        got[b] = json.loads(r.stdout)
        assert got[b].pop("binding") == b
    assert got["extension"] == got["ctypes"]
    d = got["extension"]
    assert d["push_disabled"] == -1
    assert d["levels"] == [0, 1, 1, 0, -1]
    assert d["fact"] == 24 and d["same_exception"] is True
    assert d["pushed_inside"] == 2 and d["pushed_after"] == 0
    assert [tuple(x) for x in d["ranges"]] == [
        ("a", 1, 0),
        ("a/b", 1, 0),
        ("again", 1, 0),
        ("again/again", 1, 0),
        ("fact", 1, 0),
        ("fact/fact", 1, 0),
        ("fact/fact/fact", 1, 0),
        ("fact/fact/fact/fact", 1, 0),
        ("outer", 1, 0),
        ("outer/raiser", 1, 0),
        ("w0", 20, 0),
        ("w1", 20, 0),
        ("w2", 20, 0),
    ]


@pytest.mark.parametrize("flag", [None, "1"], ids=["extension", "ctypes"])
@pytest.mark.parametrize("lib", ["not-recording", "no-library"])
def test_without_recording_ranges_cost_nothing_and_say_so(flag, lib):
    if flag is None:
        extension_or_fail()
    env = {"GPUTAP_NO_EXTENSION": flag}
    if lib == "no-library":
        env["GPUTAP_LIB"] = "/nonexistent/libgputap.so"
    code = (
        "import gputap\n"
        "with gputap.range('x'):\n    with gputap.range('y'):\n        pass\n"
        "@gputap.profile\ndef f():\n    return 5\n"
        "r = gputap.range('z')\nwith r:\n    pass\n"
        "print(f(), gputap.push('p'), gputap.pop(), r._pushed, gputap.active(), gputap.library()['binding'])\n"
    )
    r = run_py(code, **env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    # not recording: the library is called (NVTX ranges for other tools) and returns -1
    assert r.stdout.split() == ["5", "-1", "-1", "0", "False", "ctypes" if flag else "extension"]


# ---- the extension's object protocol, in this process ----


@pytest.fixture
def ext():
    return extension_or_fail()


# fake_lib for the extension alone (it otherwise runs each test for both bindings)
only_extension = pytest.mark.parametrize("binding", ["extension"], indirect=True)


@only_extension
def test_extension_range_protocol(ext, fake_lib):
    R = ext.range
    assert gputap.range is R and _core.range is R
    assert [p.name for p in inspect.signature(R).parameters.values()] == ["name"]
    assert R.__name__ == "range" and R.__module__ == "gputap._core"
    r = R("fwd")
    assert repr(r) == "gputap.range('fwd')" and r.name == "fwd" and r._b == b"fwd" and r._pushed == 0
    assert R(name="kw").name == "kw"
    with pytest.raises(TypeError):
        R()
    with pytest.raises(TypeError):
        R("a", "b")
    with pytest.raises(TypeError):
        R(nme="x")
    with pytest.raises(TypeError):
        R(3)
    with pytest.raises(TypeError):
        R(["unhashable"])
    with pytest.raises(ValueError):
        R("a\0b")
    assert r.__enter__() is r and r._pushed == 1
    with pytest.raises(TypeError):
        r.__exit__()
    assert r.__exit__(None, None, None) is False and r._pushed == 0
    assert r.__exit__(None, None, None) is False  # nothing pushed: nothing popped
    with pytest.raises(AttributeError):
        r._pushed = 5
    assert fake_lib == [("push", "fwd"), ("pop",)]


@only_extension
def test_extension_subclass_and_decorator_metadata(ext, fake_lib):
    class Named(gputap.range):
        def __init__(self, name, extra):
            super().__init__(name)
            self.extra = extra

    n = Named("sub", 7)
    with n:
        pass
    assert n.extra == 7 and isinstance(n, gputap.range)

    def f(a, b=2, *, c=3):
        """doc of f"""
        return (a, b, c)

    g = gputap.range("deco")(f)
    assert g(1, c=4) == (1, 2, 4)
    assert g.__name__ == "f" and g.__doc__ == "doc of f" and g.__wrapped__ is f
    assert inspect.signature(g) == inspect.signature(f)
    with pytest.raises(TypeError):
        gputap.range("deco")()
    assert fake_lib == [("push", "sub"), ("pop",), ("push", "deco"), ("pop",)]


@only_extension
def test_extension_holds_no_stray_references(ext, fake_lib):
    name = "refcount-" + str(id(fake_lib))  # a fresh string object
    b = gputap.range(name)._b
    rn, rb = sys.getrefcount(name), sys.getrefcount(b)
    for _ in range(1000):
        with gputap.range(name):
            pass
    gputap.push(name)
    gputap.pop()
    assert (sys.getrefcount(name), sys.getrefcount(b)) == (rn, rb)

    err = ValueError("x")

    def boom(arg):
        raise err

    arg = object()
    g = gputap.range(name)(boom)
    ra, re_ = sys.getrefcount(arg), sys.getrefcount(err)
    for _ in range(100):
        with pytest.raises(ValueError) as info:
            g(arg)
        assert info.value is err
        del info
    err.__traceback__ = None
    assert (sys.getrefcount(arg), sys.getrefcount(err)) == (ra, re_)
    assert fake_lib.count(("pop",)) == 1000 + 1 + 100


def test_extension_call_checks_its_arguments(ext):
    with pytest.raises(TypeError):
        ext.call("not-bytes", len, (), None)
    with pytest.raises(TypeError):
        ext.call(b"x", len, [], None)
    with pytest.raises(TypeError):
        ext.push("not-bytes")
    with pytest.raises(ValueError):
        ext.bind(1, 0)
