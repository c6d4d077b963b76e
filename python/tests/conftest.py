"""Shared helpers: the package is imported from this source tree; the library is
$GPUTAP_LIB (make check sets it) or the repository's build/libgputap.so."""
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


@pytest.fixture
def fake_lib(monkeypatch):
    """Replace the two hot library calls with Python ones that log push/pop per thread."""
    import gputap._core as core

    log = []

    def push(b):
        log.append(("push", b.decode()))
        return 0

    def pop():
        log.append(("pop",))
        return 0

    monkeypatch.setattr(core, "_push", push)
    monkeypatch.setattr(core, "_pop", pop)
    monkeypatch.setitem(core._state, "enabled", True)
    return log
