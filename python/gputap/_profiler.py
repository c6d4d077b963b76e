"""gputap.Profiler: a metric list and a torch.profiler-like schedule.

    prof = gputap.Profiler(metrics=["gpu__time_duration.sum"],
                           schedule=gputap.schedule(wait=1, warmup=1, active=3, repeat=2),
                           on_trace_ready=lambda p: p.print())
    with prof:
        for batch in loader:
            train_step(batch)
            prof.step()

Steps are counted by step().  With pc_sampling=True, PC sampling (docs/pc-sampling.md) runs
only inside active windows: started when a window opens, stopped (after the window's GPU work
finished) when it closes.  In an active window the results are cleared
when the window opens; when it closes (its last step ends) the results of the
window are collected and on_trace_ready(prof) is called; prof.results() is
then that window's document.  Ranges are recorded in every phase (so NVTX
tools see them); only active windows are reported.
"""
import enum
import os
import sys
import warnings

from . import _core
from . import _results


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """The action for each step, as torch.profiler.schedule defines it."""
    for k, v in (("wait", wait), ("warmup", warmup), ("active", active), ("repeat", repeat), ("skip_first", skip_first)):
        if not isinstance(v, int) or v < 0:
            raise ValueError("schedule: %s must be a non-negative integer (got %r)" % (k, v))
    if active < 1:
        raise ValueError("schedule: active must be at least 1")
    span = wait + warmup + active

    def fn(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // span >= repeat:
            return ProfilerAction.NONE
        mod = step % span
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < span - 1 else ProfilerAction.RECORD_AND_SAVE

    return fn


def _always(step):
    return ProfilerAction.RECORD


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class Profiler:
    """Start gputap with a metric list; report the ranges of each active window."""

    def __init__(self, metrics=None, mode="auto", schedule=None, on_trace_ready=None, out_dir=None,
                 pc_sampling=False):
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("on_trace_ready must be callable")
        if schedule is not None and not callable(schedule):
            raise TypeError("schedule must be callable (use gputap.schedule(...))")
        self.metrics = metrics
        self.mode = mode
        self.schedule = schedule or _always
        self.on_trace_ready = on_trace_ready
        self.out_dir = out_dir
        self.pc_sampling = bool(pc_sampling)
        self._pcs = False  # PC sampling windows in use
        self._pcs_open = False
        self.step_num = 0
        self.windows = 0
        self._action = ProfilerAction.NONE
        self._doc = None
        self._running = False

    # -- life --
    def start(self):
        if self.pc_sampling and not _core.active():
            # an in-process start: PC sampling on, in windows only, from the start of CUPTI
            os.environ.setdefault("GPUTAP_PCSAMP", "on")
            os.environ.setdefault("GPUTAP_PCSAMP_WINDOW", "1")
        _core.init(out_dir=self.out_dir)
        if self.metrics:
            _core.enable_metrics(self.metrics, self.mode)
        self._pcs = False
        if self.pc_sampling:
            try:
                _core.pcsamp_window(False)  # windows from now on: nothing sampled outside them
                self._pcs = True
            except _core.GputapError as e:
                warnings.warn("Profiler(pc_sampling=True): %s; the windows are recorded without it" % e,
                              _core.GputapWarning, stacklevel=2)
        self._running = True
        self.step_num = 0
        self._transit(ProfilerAction.NONE, self.schedule(0))
        return self

    def stop(self):
        if not self._running:
            return
        if self._action in _RECORDING:
            self._save()
        self._action = ProfilerAction.NONE
        self._running = False

    def __enter__(self):
        return self.start()

    def __exit__(self, et, ev, tb):
        self.stop()
        return False

    def step(self):
        """End the current step; opens or closes an active window as the schedule says."""
        if not self._running:
            raise RuntimeError("Profiler.step() before start() (use `with gputap.Profiler(...) as prof:`)")
        prev = self._action
        self.step_num += 1
        nxt = self.schedule(self.step_num)
        if prev == ProfilerAction.RECORD_AND_SAVE:
            self._save()
            prev = ProfilerAction.NONE
        self._transit(prev, nxt)

    def _transit(self, prev, nxt):
        if nxt in _RECORDING and prev not in _RECORDING:
            _core.flush()
            _core.reset()
            if self._pcs:
                _core.pcsamp_window(True)
                self._pcs_open = True
        self._action = nxt

    def _save(self):
        if self._pcs_open:
            _core.flush()  # the window's kernels have run: their samples are in
            _core.pcsamp_window(False)
            self._pcs_open = False
        self._doc = _core.results()
        self._doc["window"] = {"index": self.windows, "end_step": self.step_num}
        self.windows += 1
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results of the last window (or everything so far when no window closed yet) --
    @property
    def recording(self):
        return self._action in _RECORDING

    def results(self):
        return self._doc if self._doc is not None else _core.results()

    def dataframe(self):
        return _results.dataframe(self.results())

    def print(self, reduction="SUM", file=None):
        _core.print_results(reduction, file=file or sys.stdout, doc=self.results())

    def write_csv(self, path, reduction="SUM"):
        return _core.write_csv(path, reduction, doc=self.results())
