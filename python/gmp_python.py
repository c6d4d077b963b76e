"""The GMP profiler's `gmp_python` module, provided by gputap: GMP scripts run unchanged.

    import gmp_python
    profiler = gmp_python.create_profiler()
    profiler.init()
    with profiler.profile_range("my_operations"):
        ...
    profiler.print_profiler_ranges()
"""
from gputap.gmp import (  # noqa: F401
    PROFILE_TYPES,
    GmpProfiler,
    create_profiler,
    get_global_profiler,
    get_memory_activity,
    init_global_profiler,
    print_memory_activity,
    print_profiler_ranges,
    print_results,
    profile_function,
    profile_memory,
    profile_range,
)
from gputap import GPUUnavailableError, GputapError  # noqa: F401

__all__ = [
    "GmpProfiler",
    "PROFILE_TYPES",
    "create_profiler",
    "get_global_profiler",
    "get_memory_activity",
    "init_global_profiler",
    "print_memory_activity",
    "print_profiler_ranges",
    "print_results",
    "profile_function",
    "profile_memory",
    "profile_range",
]
