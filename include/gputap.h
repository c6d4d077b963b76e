/*
 * gputap.h — ranges and markers for programs that want to name their own
 * phases in a gputap recording.
 *
 * The functions live in libgputap.so.  Link with -lgputap (or dlsym them):
 * when the program runs without gputap (no GPUTAP_OUT or PFLOG set), they
 * do nothing and cost a few nanoseconds.  Safe from any thread; never
 * allocate, lock or print.  A range opened on a thread is closed on the same
 * thread; ranges nest (up to 64 levels are recorded, deeper ones are counted
 * as lost).  Records are GT_REC_RANGE with kind GT_RANGE_USER.
 */
#ifndef GPUTAP_H
#define GPUTAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Open a range named `name` on this thread; returns its nesting level (0 = outermost), -1 if not recording. */
int gputap_range_push(const char *name);
/* Close the innermost open range of this thread; returns its level, -1 if none or not recording. */
int gputap_range_pop(void);
/* A point in time named `name` (a range whose start equals its end). */
void gputap_mark(const char *name);
/* 1 while the library records this process, else 0. */
int gputap_active(void);

/*
 * In-process control, for programs (and the Python package) that start
 * gputap themselves instead of running under `gputap run` / LD_PRELOAD.
 * All return 0 on success or a negative GPUTAP_E* code; gputap_last_error()
 * then says why in one sentence.  When the library was already started by
 * the loader, gputap_start() attaches to that instance and returns 0.
 */
#define GPUTAP_ENOGPU -1   /* no driver, no device, or CUDA could not be initialised */
#define GPUTAP_EBUSY -2    /* another CUPTI client holds this process (torch.profiler, nsys, ncu, ...) */
#define GPUTAP_EPERM -3    /* GPU performance counters restricted to administrators */
#define GPUTAP_EINVAL -4   /* a bad argument: unknown metric name, mode, ... */
#define GPUTAP_EFAIL -5    /* anything else; gputap_last_error() names it */

/* Start recording in this process; out_dir NULL = GPUTAP_OUT, or no files. */
int gputap_start(const char *out_dir);
/* Make every record so far (GPU records included) visible to the results below. */
int gputap_flush(void);
/* Stop recording and finish this process's files (trace.gtr, metrics.log); results stay readable. */
int gputap_stop(void);
/* Forget the per-range results so far (paths stay known); ranges open now count from here. */
int gputap_results_reset(void);
/* Range metrics: metrics = comma-separated Nsight Compute names (NULL = the
 * default list); mode = "auto", "kernel" (per kernel) or "range" (per range). */
int gputap_metrics_enable(const char *metrics, const char *mode);
/* Results of every range closed so far as one JSON document (format in
 * docs/python.md).  Writes at most cap bytes, NUL-terminated, into buf and
 * returns the document's full length (call again with a larger buf when the
 * return value >= cap), or a negative GPUTAP_E* code. */
long gputap_results_json(char *buf, unsigned long cap);
/* PC sampling windows (docs/pc-sampling.md): with PC sampling on in this process
 * (`gputap run --pc-sampling`, GPUTAP_PCSAMP), samples are taken only between
 * gputap_pcsamp_start() and gputap_pcsamp_stop() from the first of these calls on
 * (GPUTAP_PCSAMP_WINDOW=1: from the start).  Call them from the program's threads,
 * outside CUPTI callbacks.  They return the number of contexts sampled in windows,
 * or GPUTAP_EINVAL when PC sampling is not on. */
int gputap_pcsamp_start(void);
int gputap_pcsamp_stop(void);
/* The last error of a call above, in one sentence; "" when none. */
const char *gputap_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
