"""Shared helpers: the package is imported from this source tree; the library is
$GPUTAP_LIB (make check sets it) or the repository's build/libgputap.so.

A test module that needs an optional extra (pyproject.toml's fleet: dask, pyarrow, pandas, numpy;
duckdb to read the Parquet back) that is not installed is skipped as a whole, reported as skipped
(never a collection error, never a pass): `pip install './python[fleet]' duckdb` runs it."""
import ast
import ctypes
import importlib.util
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)
ROOT = os.path.dirname(PKG)
DATA = os.path.join(HERE, "data")
if PKG not in sys.path:
    sys.path.insert(0, PKG)


# import name -> the extra that brings it
EXTRAS = {"dask": "fleet", "distributed": "fleet", "pyarrow": "fleet", "pandas": "fleet", "numpy": "fleet",
          "duckdb": "test"}
# modules that need the whole fleet extra though they import it only through the package
FLEET_MODULES = ("test_fleet",)


def _missing_extras(path):
    """The extras' modules that `path` needs (imported anywhere in it, or the whole fleet extra for a
    fleet test) and that cannot be imported here."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    if os.path.basename(str(path)).startswith(FLEET_MODULES):
        names.update(n for n, e in EXTRAS.items() if e == "fleet")
    return sorted(n for n in names if n in EXTRAS and not _importable(n))


def _importable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class _ExtraMissing(pytest.Module):
    """A test module whose extra is not installed: its collection is one skip."""

    missing = ()

    def collect(self):
        pytest.skip("needs %s, not installed: pip install './python[fleet]' duckdb" % ", ".join(self.missing))


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    missing = _missing_extras(module_path)
    if missing:
        m = _ExtraMissing.from_parent(parent, path=module_path)
        m.missing = missing
        return m
    return None


def lib_path():
    p = os.environ.get("GPUTAP_LIB") or os.path.join(ROOT, "build", "libgputap.so")
    return os.path.abspath(p)


def child_env(**extra):
    env = dict(os.environ)
    for k in ("GPUTAP_OUT", "PFLOG", "LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"):
        env.pop(k, None)
    env["PYTHONPATH"] = PKG + os.pathsep + env.get("PYTHONPATH", "")
    env["GPUTAP_LIB"] = lib_path()
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run_py(code, timeout=120, **env):
    """Run `code` in a fresh interpreter; returns CompletedProcess (text)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        env=child_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        cwd=env.pop("cwd", None) if "cwd" in env else None,
    )


def load_doc(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


@pytest.fixture
def fake_results(monkeypatch):
    """Make gputap's results come from a JSON file of tests/data."""
    import gputap._core as core

    def use(name):
        text = load_doc(name)
        monkeypatch.setattr(core, "results_json", lambda flush_first=True: text)
        return json.loads(text)

    return use


class FakeLog(list):
    """The push/pop calls seen, in order; use(push, pop) puts other functions in their place."""

    def __init__(self, install):
        super().__init__()
        self._install = install

    def use(self, push, pop):
        self._install(push, pop)


# the library's two hot functions, as C function types (the extension calls them through pointers)
PUSH_T = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p)
POP_T = ctypes.CFUNCTYPE(ctypes.c_int)


def extension_or_fail():
    """gputap._speedups as the package uses it; fails when it is not built (unless turned off)."""
    import gputap._core as core

    if core._ext is None:
        if os.environ.get("GPUTAP_NO_EXTENSION", "") not in ("", "0"):
            pytest.skip("GPUTAP_NO_EXTENSION is set: the C extension is turned off")
        pytest.fail("gputap._speedups is not built: `make check` builds it in python/gputap "
                    "(needs the Python headers: tools/setup-deps.sh)")
    return core._ext


@pytest.fixture(params=["extension", "ctypes"])
def binding(request, monkeypatch):
    """Each test that takes it runs twice: ranges in C (gputap._speedups) and the pure-ctypes path."""
    import gputap
    import gputap._core as core

    if request.param == "extension":
        extension_or_fail()
    else:
        monkeypatch.setattr(core, "_ext", None)
        monkeypatch.setattr(core, "range", core._PyRange)
        monkeypatch.setattr(gputap, "range", core._PyRange)
    return request.param


@pytest.fixture
def fake_lib(binding, monkeypatch):
    """Replace the two hot library calls with Python ones that log push/pop per thread,
    for the C extension (through C function pointers) and the ctypes path."""
    import gputap._core as core

    keep = []

    def install(push, pop):
        monkeypatch.setattr(core, "_push", push)
        monkeypatch.setattr(core, "_pop", pop)
        if core._ext is not None:
            cp, cq = PUSH_T(push), POP_T(pop)
            keep[:] = [cp, cq]  # alive while the extension holds their addresses
            core._ext.bind(ctypes.cast(cp, ctypes.c_void_p).value, ctypes.cast(cq, ctypes.c_void_p).value)

    log = FakeLog(install)

    def push(b):
        log.append(("push", b.decode()))
        return 0

    def pop():
        log.append(("pop",))
        return 0

    install(push, pop)
    was = core._state["enabled"]
    monkeypatch.setitem(core._state, "enabled", True)
    if core._ext is not None:
        core._ext.set_enabled(True)
    yield log
    if core._ext is not None:
        core._ext.unbind()  # the next range binds the real library again
        core._ext.set_enabled(was)
