"""The GMP profiler's Python API, working: what `gmp_python` re-exports.

    import gmp_python
    profiler = gmp_python.create_profiler()
    profiler.init()
    with profiler.profile_range("my_operations"):
        ...
    profiler.print_profiler_ranges()        # "Range 1: my_operations", one "metric: value" line each

Every range is a gputap range (so it also has kernels, GPU time and memory
activity, and is an NVTX range); the profile type only decides which table
prints it: CONCURRENT_KERNEL ranges in print_profiler_ranges(), MEMORY ranges
in print_memory_activity().  Results also go to <output_dir>/result.csv
("output" by default) each time the kernel table is printed.

Hardware metrics: the GMP profiler's output is its counters per range, so a
GMP script run unchanged measures DEFAULT_METRICS per kernel (mode "kernel":
every kernel alone, SUM/MAX/MEAN over a range's kernels, as the GMP profiler
does).  create_profiler(metrics=None) or GPUTAP_GMP_METRICS=none turns them
off; GPUTAP_GMP_METRICS=LIST and GPUTAP_GMP_MODE=auto|kernel|range choose
others.  When the defaults cannot be measured (no GPU, restricted counters,
`gputap run --metrics` already chose a list) the ranges go on without them and
the tables say why; a list asked for explicitly raises instead.
"""
import contextlib
import functools
import os
import sys
import warnings

from . import _core
from . import _results

# What the GMP profiler prints per range (its README's example output), one pass on Hopper.
DEFAULT_METRICS = "gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum"
DEFAULT_MODE = "kernel"
_DEFAULT = "default"  # the sentinel of the metrics argument: the GMP defaults (or GPUTAP_GMP_METRICS)
_OFF_WORDS = ("", "none", "off", "0", "no")


def _resolve(metrics, mode):
    """(metrics or None, mode, explicit) from the arguments and GPUTAP_GMP_METRICS / GPUTAP_GMP_MODE."""
    if metrics is not _DEFAULT:
        return metrics, mode or DEFAULT_MODE, True
    env = os.environ.get("GPUTAP_GMP_METRICS")
    emode = os.environ.get("GPUTAP_GMP_MODE") or mode or DEFAULT_MODE
    if env is not None:
        if env.strip().lower() in _OFF_WORDS:
            return None, emode, True
        return env, emode, True
    return DEFAULT_METRICS, emode, False

PROFILE_TYPES = ("CONCURRENT_KERNEL", "MEMORY")


def _check_type(t):
    name = getattr(t, "name", t)
    if not isinstance(name, str) or name.upper() not in PROFILE_TYPES:
        raise ValueError("profile type must be 'CONCURRENT_KERNEL' or 'MEMORY' (got %r)" % (t,))
    return name.upper()


class GmpProfiler:
    """One profiler: its ranges, printed in the GMP profiler's layout."""

    def __init__(self, output_dir="output", metrics=_DEFAULT, mode=None):
        self.output_dir = output_dir
        self.metrics, self.mode, self._explicit = _resolve(metrics, mode)
        self._enabled = True
        self._names = {t: [] for t in PROFILE_TYPES}

    # -- control --
    def init(self):
        """Start gputap in this process (raises gputap.GPUUnavailableError without a GPU).

        The default metrics are measured when they can be; when they cannot, one warning and
        the ranges go on without them (a list given explicitly raises instead)."""
        _core.init()
        if self.metrics:
            try:
                _core.enable_metrics(self.metrics, self.mode)
            except _core.GputapError as e:
                if self._explicit:
                    raise
                if "already on" in str(e):
                    return self  # `gputap run --metrics` chose the list: its values are in the tables
                warnings.warn("GMP default metrics not measured: %s" % e, RuntimeWarning, stacklevel=2)
        return self

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    @property
    def enabled(self):
        return self._enabled

    # -- ranges --
    def _note(self, name, ptype):
        lst = self._names[ptype]
        if name not in lst:
            lst.append(name)

    @contextlib.contextmanager
    def profile_range(self, name, type="CONCURRENT_KERNEL"):  # noqa: A002 - the GMP profiler's keyword
        """Context manager: the body is a range named `name`; nestable."""
        ptype = _check_type(type)
        if not self._enabled:
            yield
            return
        self._note(name, ptype)
        with _core.range(name):
            yield

    def profile_memory(self, name):
        """Context manager: a MEMORY range (see print_memory_activity)."""
        return self.profile_range(name, "MEMORY")

    def profile_function(self, name=None, type="CONCURRENT_KERNEL"):  # noqa: A002
        """Decorator: each call of the function is a range (named `name`, or after the function)."""
        ptype = _check_type(type)

        def deco(fn):
            rname = name or fn.__name__
            inner = _core.range(rname)(fn)

            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                if not self._enabled:
                    return fn(*args, **kwargs)
                self._note(rname, ptype)
                return inner(*args, **kwargs)

            return wrapper

        if callable(name):  # @profiler.profile_function without parentheses
            fn, name = name, None
            return deco(fn)
        return deco

    # -- results --
    def results(self):
        return _core.results()

    def _selected(self, ptype):
        return list(self._names[ptype])

    def print_profiler_ranges(self, reduction="SUM", file=None):
        """Print the kernel ranges: 'Range N: name', then one 'metric: value' line each."""
        red = _results.check_reduction(reduction)
        doc = _core.results()
        names = self._selected("CONCURRENT_KERNEL")
        (file or sys.stdout).write(_results.format_ranges(doc, red, names))
        self.write_csv(doc=doc, reduction=red)

    def print_memory_activity(self, file=None):
        """Print the MEMORY ranges: allocations and deallocations (count, bytes, MB) and peak."""
        doc = _core.results()
        (file or sys.stdout).write(_results.format_memory(doc, self._selected("MEMORY")))

    def get_memory_activity(self):
        """The MEMORY ranges as plain Python structures (a list of dicts)."""
        return _results.memory_activity(_core.results(), self._selected("MEMORY"))

    def write_csv(self, path=None, reduction="SUM", doc=None):
        """<output_dir>/result.csv (or `path`): every range of this profiler, both types."""
        if path is None:
            if not self.output_dir:
                return None
            path = os.path.join(self.output_dir, "result.csv")
        names = self._selected("CONCURRENT_KERNEL") + [
            n for n in self._selected("MEMORY") if n not in self._names["CONCURRENT_KERNEL"]
        ]
        return _core.write_csv(path, reduction, doc=doc, names=names)

    def print_results(self, reduction="SUM", file=None):
        self.print_profiler_ranges(reduction, file)
        self.print_memory_activity(file)


def create_profiler(output_dir="output", metrics=_DEFAULT, mode=None):
    """A new GmpProfiler (call its init() before the work to profile).

    metrics: the GMP defaults (DEFAULT_METRICS, per kernel) unless given; None turns
    hardware metrics off."""
    return GmpProfiler(output_dir=output_dir, metrics=metrics, mode=mode)


_global = {"profiler": None}


def init_global_profiler(output_dir="output", metrics=_DEFAULT, mode=None):
    """Create and start the module-level profiler the functions below use.

    The profiler is kept even when init() raises (no GPU): a script that goes on gets
    ranges that record nothing, as gputap.range does, instead of an error at each one."""
    p = create_profiler(output_dir, metrics, mode)
    _global["profiler"] = p
    p.init()
    return p


def get_global_profiler():
    p = _global["profiler"]
    if p is None:
        raise RuntimeError("call init_global_profiler() first")
    return p


def profile_range(name, type="CONCURRENT_KERNEL"):  # noqa: A002
    return get_global_profiler().profile_range(name, type)


def profile_memory(name):
    return get_global_profiler().profile_memory(name)


def profile_function(name=None, type="CONCURRENT_KERNEL"):  # noqa: A002
    return get_global_profiler().profile_function(name, type)


def print_profiler_ranges(reduction="SUM", file=None):
    get_global_profiler().print_profiler_ranges(reduction, file)


def print_memory_activity(file=None):
    get_global_profiler().print_memory_activity(file)


def get_memory_activity():
    return get_global_profiler().get_memory_activity()


def print_results(reduction="SUM", file=None):
    """The global profiler's kernel and memory tables."""
    get_global_profiler().print_results(reduction, file)
