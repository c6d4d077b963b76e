"""gputap for Python: ranges with wall and GPU time, kernel counts, memory
activity and hardware metrics, from inside the program.

    import gputap
    gputap.init()                       # GPUUnavailableError without a GPU
    with gputap.range("forward"):
        y = model(x)
    gputap.print_results()              # or gputap.results(), gputap.dataframe()

The GMP profiler's API is here too (create_profiler, init_global_profiler,
profile_range, ...) and, unchanged, in the `gmp_python` module.  Importing
never fails and prints nothing.  Documentation: docs/python.md.
"""
from ._core import (
    CuptiBusyWarning,
    GPUUnavailableError,
    GputapError,
    GputapWarning,
    MetricsError,
    active,
    dataframe,
    disable,
    enable,
    enable_metrics,
    enabled,
    flush,
    init,
    library,
    mark,
    pop,
    profile,
    push,
    range,
    reset,
    results,
    results_json,
    state,
    write_csv,
)
from ._results import ResultsFormatError
from ._profiler import Profiler, ProfilerAction, schedule
from ._rundir import finish
from .readtrace import Trace, TraceFormatError, read_trace
from .gmp import (
    GmpProfiler,
    create_profiler,
    get_memory_activity,
    init_global_profiler,
    print_memory_activity,
    print_profiler_ranges,
    profile_function,
    profile_memory,
    profile_range,
)
from . import _core as _c
from . import gmp as _gmp

__version__ = "0.1.0"


def print_results(reduction="SUM", file=None):
    """Print the results: the global GMP profiler's tables when there is one, else every range."""
    if _gmp._global["profiler"] is not None:
        _gmp.print_results(reduction, file)
    else:
        _c.print_results(reduction, file)


__all__ = [
    "Trace",
    "TraceFormatError",
    "read_trace",
    "CuptiBusyWarning",
    "GPUUnavailableError",
    "GmpProfiler",
    "GputapError",
    "GputapWarning",
    "MetricsError",
    "Profiler",
    "ProfilerAction",
    "ResultsFormatError",
    "active",
    "create_profiler",
    "dataframe",
    "disable",
    "enable",
    "enable_metrics",
    "enabled",
    "finish",
    "flush",
    "get_memory_activity",
    "init",
    "init_global_profiler",
    "library",
    "mark",
    "pop",
    "print_memory_activity",
    "print_profiler_ranges",
    "print_results",
    "profile",
    "profile_function",
    "profile_memory",
    "profile_range",
    "push",
    "range",
    "reset",
    "results",
    "results_json",
    "schedule",
    "state",
    "write_csv",
]
