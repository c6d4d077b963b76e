/*
 * core/capture.h — capture windows: when the full trace is on.
 *
 * Owns: parsing GPUTAP_CAPTURE / `gputap run --capture SPEC`, and the state
 * machine that turns NVTX ranges, cu(da)ProfilerStart/Stop, elapsed time and
 * `gputap trigger` requests into "window W opens / closes".  Outside every
 * window the tap keeps only its counters; inside, the full trace.
 *
 * SPEC is one or more windows separated by ';':
 *   nvtx:NAME[@FIRST[-LAST]]   occurrences FIRST..LAST (1-based, default 1..FIRST)
 *                              of the NVTX range NAME (push/pop or start/end, any
 *                              domain); NAME ending in '*' matches by prefix
 *                              (PyTorch's `ProfilerStep#*`); LAST may be '' for
 *                              "until the end" (`@100-`)
 *   cudaProfilerApi            between every cu(da)ProfilerStart and Stop
 *   time:DELAY[+DURATION]      seconds since the process started (s, ms, m suffixes)
 *   trigger                    nothing until `gputap trigger` starts a window
 * A window of `nvtx` opens when the FIRST-th matching range opens and closes
 * when the LAST-th one closes.  Windows may overlap; the trace is on while any
 * is open.
 *
 * Invariants: pure (no CUDA, no I/O, no allocation after parse; one mutex
 * owned by the caller serialises the event calls); every transition is
 * reported once, through the return value of the event call.
 */
#ifndef GT_CORE_CAPTURE_H
#define GT_CORE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#define GT_CAP_MAX 16
#define GT_CAP_NAME_MAX 128

enum gt_cap_kind { GT_CAP_NVTX = 1, GT_CAP_PROFILER_API, GT_CAP_TIME, GT_CAP_TRIGGER };
enum gt_cap_state { GT_CAP_WAITING = 0, GT_CAP_OPEN, GT_CAP_DONE };

struct gt_cap_window {
	int kind;
	int state;
	char name[GT_CAP_NAME_MAX]; /* nvtx: the range name (without the trailing '*') */
	int prefix;                 /* nvtx: NAME ended in '*' */
	uint64_t first, last;       /* nvtx: occurrences, 1-based; last 0 = no end */
	uint64_t seen;              /* nvtx: matching ranges opened so far */
	uint64_t open_key;          /* nvtx: the key of the range whose close ends the window */
	uint64_t delay_ns, dur_ns;  /* time / trigger: dur 0 = no end */
	uint64_t iters;             /* trigger: end after this many top-level ranges close (0 = by time) */
	uint64_t opened_ns, closed_ns;
	uint64_t repeat;            /* cudaProfilerApi: how many times it opened */
};

struct gt_capture {
	int n;
	struct gt_cap_window w[GT_CAP_MAX];
	int open;          /* windows open now */
	uint64_t start_ns; /* process start, for time windows */
	uint64_t windows_opened;
	int armed;         /* `--iterations` triggers waiting for the next top-level range */
};

/* Parse SPEC into c (zeroed first).  0, or -1 with a message naming the bad part in err. */
int gt_capture_parse(struct gt_capture *c, const char *spec, char *err, size_t errlen);
/* Write the SPEC of c back (for run.json and the trace header); returns buf. */
const char *gt_capture_describe(const struct gt_capture *c, char *buf, size_t len);

/*
 * Events.  Each returns the change in "trace on": +1 when the first window
 * opened, -1 when the last open window closed, 0 otherwise.  `key` names one
 * range occurrence (any value unique while it is open, e.g. the range id).
 */
int gt_capture_range_open(struct gt_capture *c, const char *name, uint64_t key, int top_level, uint64_t now_ns);
int gt_capture_range_close(struct gt_capture *c, uint64_t key, int top_level, uint64_t now_ns);
int gt_capture_profiler(struct gt_capture *c, int start, uint64_t now_ns);
int gt_capture_tick(struct gt_capture *c, uint64_t now_ns); /* time windows and trigger durations */
/* A `gputap trigger` request: a new window for dur_ns from now, or for the next iters
 * top-level ranges (it opens when the next one opens: whole iterations), or, both 0,
 * from now until the process ends.  -2 when no window slot is left. */
int gt_capture_trigger(struct gt_capture *c, uint64_t dur_ns, uint64_t iters, uint64_t now_ns);
/* Close every open window (at exit): -1 if the trace was on, else 0. */
int gt_capture_close_all(struct gt_capture *c, uint64_t now_ns);
/* 1 when the trace is on now. */
static inline int gt_capture_on(const struct gt_capture *c) { return c->open > 0; }
/* 1 when a window may still open later (decides whether CUPTI is kept loaded). */
int gt_capture_pending(const struct gt_capture *c);

#endif
