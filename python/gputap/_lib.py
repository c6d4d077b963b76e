"""Finding and binding libgputap.so (ctypes).

Which library: the one already in the process when there is one (under
`gputap run`, LD_PRELOAD or CUDA_INJECTION64_PATH: a second copy would record
nothing and fight the first over CUPTI), else $GPUTAP_LIB, else the copy
installed with the package (gputap/_bin/libgputap.so), else a development
build next to the sources (build/libgputap.so).  Loading never raises: when no
library can be loaded, `load()` returns None and says why in `load_error()`.
"""
import ctypes
import os
import threading

_lock = threading.Lock()
_state = {"done": False, "lib": None, "path": None, "how": None, "error": None, "fast": None}

LIB_NAME = "libgputap.so"


def _here():
    return os.path.dirname(os.path.abspath(__file__))


def _loaded_paths():
    """Paths of libgputap.so objects mapped into this process."""
    paths = []
    try:
        with open("/proc/self/maps", "r") as f:
            for line in f:
                p = line.rstrip("\n").split(None, 5)
                if len(p) == 6 and p[5].endswith("/" + LIB_NAME) and p[5] not in paths:
                    paths.append(p[5])
    except OSError:
        pass
    return paths


def _env_paths(var):
    v = os.environ.get(var, "")
    return [p for p in v.replace(":", " ").split() if os.path.basename(p) == LIB_NAME]


def candidates():
    """(path, how) in the order tried; `how` says why that path."""
    out = []
    for p in _loaded_paths():
        out.append((p, "loaded"))
    # CUDA_INJECTION64_PATH: libcuda loads it at cuInit; take the same file so there is one copy.
    for p in _env_paths("CUDA_INJECTION64_PATH") + _env_paths("LD_PRELOAD"):
        out.append((p, "injection"))
    v = os.environ.get("GPUTAP_LIB")
    if v:  # an explicit choice: no fallback that would hide a wrong path
        out.append((v, "GPUTAP_LIB"))
        return out
    out.append((os.path.join(_here(), "_bin", LIB_NAME), "package"))
    out.append((os.path.join(_here(), "..", "..", "build", LIB_NAME), "source tree"))
    return out


_PROTOS = {
    "gputap_range_push": (ctypes.c_int, [ctypes.c_char_p]),
    "gputap_range_pop": (ctypes.c_int, []),
    "gputap_mark": (None, [ctypes.c_char_p]),
    "gputap_active": (ctypes.c_int, []),
    "gputap_start": (ctypes.c_int, [ctypes.c_char_p]),
    "gputap_stop": (ctypes.c_int, []),
    "gputap_flush": (ctypes.c_int, []),
    "gputap_metrics_enable": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p]),
    "gputap_results_json": (ctypes.c_long, [ctypes.c_char_p, ctypes.c_ulong]),
    "gputap_results_reset": (ctypes.c_int, []),
    "gputap_last_error": (ctypes.c_char_p, []),
    "gputap_pcsamp_start": (ctypes.c_int, []),
    "gputap_pcsamp_stop": (ctypes.c_int, []),
}


def _bind(lib):
    for name, (res, args) in _PROTOS.items():
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        fn.restype = res
        fn.argtypes = args


def load():
    """The bound library, or None."""
    if _state["done"]:
        return _state["lib"]
    with _lock:
        if _state["done"]:
            return _state["lib"]
        errors = []
        for path, how in candidates():
            if how != "loaded" and not os.path.isfile(path):
                if how == "GPUTAP_LIB":
                    errors.append("GPUTAP_LIB=%s: no such file" % path)
                continue
            mode = os.RTLD_NOW | (os.RTLD_NOLOAD if how == "loaded" else 0)
            try:
                lib = ctypes.CDLL(path, mode=mode)
            except OSError as e:
                errors.append("%s: %s" % (path, e))
                continue
            if not hasattr(lib, "gputap_range_push"):
                errors.append("%s: not a gputap library" % path)
                continue
            _bind(lib)
            _state.update(lib=lib, path=os.path.realpath(path), how=how)
            break
        else:
            _state["error"] = "libgputap.so could not be loaded: " + (
                "; ".join(errors) if errors else "not installed with the package and GPUTAP_LIB is not set"
            )
        _state["done"] = True
        return _state["lib"]


def fast():
    """The same library through ctypes.PyDLL, for the calls that never block (the GIL stays held)."""
    lib = load()
    if lib is None:
        return None
    if _state.get("fast") is None:
        f = ctypes.PyDLL(_state["path"], mode=os.RTLD_NOW | os.RTLD_NOLOAD)
        for name in ("gputap_range_push", "gputap_range_pop", "gputap_mark"):
            getattr(f, name).restype = None if name == "gputap_mark" else ctypes.c_int
        _state["fast"] = f
    return _state["fast"]


def has(name):
    lib = load()
    return lib is not None and hasattr(lib, name)


def info():
    load()
    return {"path": _state["path"], "how": _state["how"], "error": _state["error"]}


def load_error():
    load()
    return _state["error"]


def last_error(lib):
    if not hasattr(lib, "gputap_last_error"):
        return ""
    s = lib.gputap_last_error()
    return s.decode("utf-8", "replace") if s else ""


def _reset_for_tests():
    with _lock:
        _state.update(done=False, lib=None, path=None, how=None, error=None, fast=None)
