"""Ranges, start, results: the thin layer over libgputap.so.

Importing costs nothing and prints nothing: the library is loaded at the first
range or call that needs it.  Ranges work before init() and without a GPU:
they then cost one library call (or nothing when no library can be loaded) and
record nothing, unless the program already runs under `gputap run`.

The range object and the decorator's call path exist twice, with the same
behaviour: in C (gputap/_speedups.c, built with the package when a C compiler
is there; it calls the library's push/pop through two function pointers) and
here in Python over ctypes (`_PyRange`: the fallback, and the choice when
GPUTAP_NO_EXTENSION=1).  library()["binding"] says which one is in use.
"""
import ctypes
import functools
import os
import sys
import threading
import time
import warnings

from . import _lib
from . import _results


class GputapError(RuntimeError):
    """Base of the errors gputap raises."""


class GPUUnavailableError(GputapError):
    """init(): no NVIDIA driver, no GPU, CUDA could not be initialised, or libgputap.so is missing."""


class MetricsError(GputapError):
    """Hardware metrics could not be enabled: unknown name, counters restricted to administrators, ..."""


class GputapWarning(UserWarning):
    """Something gputap could not do; the program and the rest of gputap go on."""


class CuptiBusyWarning(GputapWarning):
    """Another CUPTI client (torch.profiler, nsys, ncu) holds the process: GPU activity is not recorded."""


# codes of include/gputap.h
ENOGPU, EBUSY, EPERM, EINVAL, EFAIL = -1, -2, -3, -4, -5

_state = {
    "started": False,
    "out_dir": None,
    "metrics": None,
    "metrics_error": None,
    "busy": None,
    "enabled": True,
    "start_ns": None,
}
_start_lock = threading.Lock()
_UNBOUND = object()
# The hot pair: the library's push/pop through ctypes.PyDLL (the GIL stays held: the two
# calls never block, and not releasing it halves their cost); `_push` is None while
# disabled or when no library can be loaded, _UNBOUND until the first use.
_push = _UNBOUND
_pop = None
_push_fn = None
_names = {}


def _extension():
    """gputap._speedups, or None: not built, or GPUTAP_NO_EXTENSION set (not empty, not 0)."""
    if os.environ.get("GPUTAP_NO_EXTENSION", "") not in ("", "0"):
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    return _speedups


_ext = _extension()


def _bind():
    """Load the library once and cache the two hot functions (in the extension too)."""
    global _push, _pop, _push_fn
    lib = _lib.load()
    if lib is None:
        _push = None
        if _ext is not None:
            _ext.bind(0, 0)
        return None
    fast = _lib.fast()
    _push_fn = fast.gputap_range_push
    _pop = fast.gputap_range_pop
    _push = _push_fn if _state["enabled"] else None
    if _ext is not None:
        _ext.bind(ctypes.cast(lib.gputap_range_push, ctypes.c_void_p).value,
                  ctypes.cast(lib.gputap_range_pop, ctypes.c_void_p).value)
    return lib


def _lib_or_raise():
    lib = _lib.load()
    if lib is None:
        raise GPUUnavailableError(_lib.load_error())
    return lib


def _encode(name):
    b = _names.get(name)
    if b is None:
        if not isinstance(name, str):
            raise TypeError("range name must be a str, not %s" % type(name).__name__)
        b = name.encode("utf-8", "replace")
        if b"\0" in b:
            raise ValueError("range name contains a NUL character")
        if len(_names) < 65536:
            _names[name] = b
    return b


def enabled():
    return _state["enabled"]


def enable():
    """Ranges opened from now on are recorded (the default)."""
    global _push
    _state["enabled"] = True
    if _ext is not None:
        _ext.set_enabled(True)
    if _push is not _UNBOUND:
        _push = _push_fn


def disable():
    """Ranges opened from now on are neither recorded nor emitted as NVTX; open ones still close."""
    global _push
    _state["enabled"] = False
    if _ext is not None:
        _ext.set_enabled(False)
    if _push is not _UNBOUND:
        _push = None


class _PyRange:
    """A named range: `with gputap.range("forward"):` or `@gputap.range("step")`.

    Ranges nest per thread (the path of an inner range is "outer/inner"), are
    NVTX ranges too (nsys, ncu and torch.profiler see them), and close on the
    thread that opened them, also when the body raises.
    """

    __slots__ = ("name", "_b", "_pushed")

    def __init__(self, name):
        self.name = name
        b = _names.get(name)
        self._b = b if b is not None else _encode(name)
        self._pushed = 0

    def __enter__(self):
        p = _push
        if p is _UNBOUND:
            _bind()
            p = _push
        if p is not None:
            p(self._b)
            self._pushed += 1
        return self

    def __exit__(self, et, ev, tb):
        if self._pushed:
            self._pushed -= 1
            _pop()
        return False

    def __call__(self, fn):
        b = self._b

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            p = _push
            if p is _UNBOUND:
                _bind()
                p = _push
            if p is None:
                return fn(*args, **kwargs)
            p(b)
            try:
                return fn(*args, **kwargs)
            finally:
                _pop()

        return wrapper

    def __repr__(self):
        return "gputap.range(%r)" % (self.name,)


_PyRange.__name__ = _PyRange.__qualname__ = "range"


def _decorate(r, fn):
    """The decorator of the C range: `fn` called inside a range named like `r`."""
    b = r._b
    call = _ext.call

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return call(b, fn, args, kwargs)

    return wrapper


if _ext is not None:
    _ext.setup(_names, _encode, _bind, _decorate)
    range = _ext.range  # noqa: A001 - the name users write: `with gputap.range("x")`
else:
    range = _PyRange  # noqa: A001


def profile(fn=None, *, name=None):
    """Decorator: the function's calls are ranges named after it (or `name`).

    `@gputap.profile`, `@gputap.profile()` and `@gputap.profile(name="x")` all work.
    """
    if fn is None:
        return lambda f: profile(f, name=name)
    if isinstance(fn, str):  # @gputap.profile("name")
        return lambda f: profile(f, name=fn)
    if not callable(fn):
        raise TypeError("gputap.profile decorates a function")
    return range(name or getattr(fn, "__qualname__", None) or fn.__name__)(fn)


def mark(name):
    """A point in time named `name` (recorded as a range of zero length)."""
    lib = _lib.load()
    if lib is not None and _state["enabled"]:
        lib.gputap_mark(_encode(name))


def push(name):
    """Open a range on this thread (prefer `with gputap.range(name)`); returns its level or -1.
    Every push() that returns without raising must be matched by one pop()."""
    b = _names.get(name)
    if b is None:
        b = _encode(name)
    if _ext is not None:
        return _ext.push(b)
    p = _push
    if p is _UNBOUND:
        _bind()
        p = _push
    if p is None:
        return -1
    return p(b)


def pop():
    """Close this thread's innermost range; returns its level or -1."""
    if _ext is not None:
        return _ext.pop()
    if _push is _UNBOUND:
        _bind()
    return _pop() if _pop is not None else -1


def library():
    """Where libgputap.so came from: {'path', 'how', 'error', 'binding'}; how is 'loaded' under
    gputap run; binding is 'extension' (ranges in C) or 'ctypes'."""
    d = _lib.info()
    d["binding"] = "extension" if _ext is not None else "ctypes"
    return d


def active():
    """True while the library records this process (after init(), or under gputap run)."""
    lib = _lib.load()
    return bool(lib is not None and lib.gputap_active())


def _raise_for(code, lib, what):
    msg = _lib.last_error(lib) or "%s failed (code %d)" % (what, code)
    if code == ENOGPU:
        raise GPUUnavailableError(msg)
    if code in (EPERM, EINVAL):
        raise MetricsError(msg)
    raise GputapError(msg)


def init(out_dir=None, metrics=None, mode="auto"):
    """Start recording in this process.

    out_dir: also write a whole gputap run directory there (trace, metrics.log,
    timeline.log; finish() completes it with run.json and the CSVs), default
    none.  metrics: hardware metrics per range (a list or a comma string of
    Nsight Compute names; None = none, "default" = the engine's default list).
    mode: "auto", "kernel" or "range" (see docs/python.md).

    Works in a plain `python train.py`, also after PyTorch created its CUDA
    context; under `gputap run` it attaches to the library already there.
    Raises GPUUnavailableError without a driver or GPU, MetricsError when the
    metrics cannot be enabled.  Warns (CuptiBusyWarning) when another CUPTI
    client holds the process.  Calling it again is harmless.
    """
    lib = _lib_or_raise()
    if _push is _UNBOUND:
        _bind()
    with _start_lock:
        if not _state["started"]:
            if not hasattr(lib, "gputap_start"):
                raise GPUUnavailableError("%s is too old: it has no gputap_start" % _lib.info()["path"])
            arg = os.fsencode(os.path.abspath(out_dir)) if out_dir else None
            rc = lib.gputap_start(arg)
            if rc == EBUSY:
                _state["busy"] = _lib.last_error(lib)
                warnings.warn(_state["busy"], CuptiBusyWarning, stacklevel=2)
            elif rc < 0:
                _raise_for(rc, lib, "gputap_start")
            _state["started"] = True
            _state["start_ns"] = time.time_ns()
            _state["out_dir"] = os.path.abspath(out_dir) if out_dir else None
            _injections()
        if metrics:
            enable_metrics(metrics, mode)
    return True


def _injections():
    """What `gputap run` sets up front, set by init() for what starts after it: NVTX (at a library's
    first NVTX call) takes this library as its injection, so the program's own NVTX ranges
    (torch.cuda.nvtx, NVTX in C++ code) are recorded; NCCL (>= 2.23, at a communicator's creation:
    PyTorch's init_process_group) loads it as its profiler plugin, so the collectives carry
    communicator and sequence number, which `gputap fleet` matches ranks by.  What the environment
    already names is kept."""
    path = _lib.info().get("path")
    for var in ("NVTX_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN"):
        if path and not os.environ.get(var):
            os.environ[var] = path


def enable_metrics(metrics, mode="auto"):
    """Ask the range-metrics engine for `metrics` (list or comma string)."""
    lib = _lib_or_raise()
    if isinstance(metrics, (list, tuple)):
        metrics = ",".join(metrics)
    if not isinstance(metrics, str):
        raise TypeError("metrics must be a list of names or a comma-separated string")
    if mode not in ("auto", "kernel", "range"):
        raise ValueError("mode must be 'auto', 'kernel' or 'range' (got %r)" % (mode,))
    if not hasattr(lib, "gputap_metrics_enable"):
        _state["metrics_error"] = "this libgputap.so has no range-metrics engine"
        raise MetricsError(_state["metrics_error"])
    m = None if metrics == "default" else metrics.encode()
    rc = lib.gputap_metrics_enable(m, mode.encode())
    if rc < 0:
        _state["metrics_error"] = _lib.last_error(lib) or "code %d" % rc
        _raise_for(rc, lib, "gputap_metrics_enable")
    _state["metrics"] = metrics
    return True


def flush():
    """Wait for the GPU work queued so far and make its records visible to results()."""
    lib = _lib.load()
    if lib is None or not hasattr(lib, "gputap_flush"):
        return
    rc = lib.gputap_flush()
    if rc < 0 and rc != ENOGPU:
        _raise_for(rc, lib, "gputap_flush")


def pcsamp_window(on):
    """Open (on=True) or close a PC sampling window (gputap_pcsamp_start/stop, docs/pc-sampling.md):
    samples are taken only inside windows from the first call on.  Returns the number of contexts
    sampled in windows; raises GputapError when PC sampling is not on in this process (run under
    `gputap run --pc-sampling`, or set GPUTAP_PCSAMP before init()) or the library has no windows."""
    lib = _lib_or_raise()
    name = "gputap_pcsamp_start" if on else "gputap_pcsamp_stop"
    if not hasattr(lib, name):
        raise GputapError("%s has no PC sampling windows (%s)" % (_lib.info()["path"], name))
    rc = getattr(lib, name)()
    if rc < 0:
        raise GputapError(_lib.last_error(lib) or "%s failed (code %d)" % (name, rc))
    return rc


def results_json(flush_first=True):
    """The library's results document as JSON text (see docs/python.md)."""
    lib = _lib.load()
    if lib is None or not hasattr(lib, "gputap_results_json"):
        return '{"ranges":[],"metrics":null,"mode":"off"}'
    if flush_first:
        flush()
    cap = 1 << 16
    while True:
        buf = ctypes.create_string_buffer(cap)
        n = lib.gputap_results_json(buf, cap)
        if n < 0:
            _raise_for(n, lib, "gputap_results_json")
        if n < cap:
            return buf.value.decode("utf-8", "replace")
        cap = n + 1


def results(flush_first=True):
    """Every range closed so far: a dict (format in docs/python.md)."""
    doc = _results.parse(results_json(flush_first))
    if not doc.get("metric_names") and not doc.get("metrics_error"):
        if _state["metrics_error"]:
            doc["metrics_error"] = _state["metrics_error"]
        elif not _lib.has("gputap_metrics_enable"):
            doc["metrics_error"] = "this libgputap.so has no range-metrics engine"
    if _state["busy"]:
        doc.setdefault("notes", []).append(_state["busy"])
    return doc


def reset():
    """Forget the results so far (ranges still open keep counting)."""
    lib = _lib.load()
    if lib is not None and hasattr(lib, "gputap_results_reset"):
        lib.gputap_results_reset()


def dataframe(doc=None):
    """Results as a pandas DataFrame (one row per range path); needs pandas."""
    return _results.dataframe(doc if doc is not None else results())


def print_results(reduction="SUM", file=None, doc=None):
    """Print the kernel table then the memory table, in the GMP profiler's layout."""
    d = doc if doc is not None else results()
    out = file or sys.stdout
    out.write(_results.format_ranges(d, reduction))
    out.write(_results.format_memory(d))


def write_csv(path, reduction="SUM", doc=None, names=None):
    """Write the ranges as CSV (columns in docs/python.md); returns the path."""
    d = doc if doc is not None else results()
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(_results.csv_text(d, reduction, names))
    os.replace(tmp, path)
    return path


def state():
    """What init() did: started, out_dir, metrics, busy (a message or None)."""
    return dict(_state)
