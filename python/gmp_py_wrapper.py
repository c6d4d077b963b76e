"""The GMP profiler's low-level `gmp_py_wrapper` module, provided by gputap.

The GMP profiler built this as a pybind11 extension under gmp_python; here it
is plain Python over libgputap.so (no compiler needed).  It exists so that
`import gmp_py_wrapper` works (the GMP install check) and offers the
low-level calls: push/pop a typed range, print, get memory activity.
"""
import enum
import threading

from gputap import _core
from gputap.gmp import GmpProfiler as _GmpProfiler


class GmpProfileType(enum.Enum):
    CONCURRENT_KERNEL = "CONCURRENT_KERNEL"
    MEMORY = "MEMORY"


class GmpOutputKernelReduction(enum.Enum):
    SUM = "SUM"
    MAX = "MAX"
    MEAN = "MEAN"


class GmpProfiler(_GmpProfiler):
    """GmpProfiler with the explicit push/pop calls of the extension module."""

    _tls = threading.local()

    def _stack(self):
        s = getattr(self._tls, "stack", None)
        if s is None:
            s = self._tls.stack = []
        return s

    def push_range(self, name, type=GmpProfileType.CONCURRENT_KERNEL):  # noqa: A002
        """Open a range on this thread; pop_range() closes it."""
        t = getattr(type, "value", type)
        if t not in self._names:
            raise ValueError("profile type must be CONCURRENT_KERNEL or MEMORY (got %r)" % (type,))
        on = self.enabled and _core.enabled()
        self._stack().append(on)
        if not on:
            return -1
        self._note(name, t)
        return _core.push(name)

    def pop_range(self, name=None, type=GmpProfileType.CONCURRENT_KERNEL):  # noqa: A002
        """Close this thread's innermost range opened by push_range()."""
        s = self._stack()
        if not s:
            return -1
        return _core.pop() if s.pop() else -1

    pushRange = push_range
    popRange = pop_range

    def printProfilerRanges(self, reduction=GmpOutputKernelReduction.SUM):  # noqa: N802
        self.print_profiler_ranges(getattr(reduction, "value", reduction))

    def printMemoryActivity(self):  # noqa: N802
        self.print_memory_activity()

    def getMemoryActivity(self):  # noqa: N802
        return self.get_memory_activity()


__all__ = ["GmpOutputKernelReduction", "GmpProfileType", "GmpProfiler"]
