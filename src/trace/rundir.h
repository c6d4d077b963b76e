/*
 * trace/rundir.h — the layout of a run directory, named once.
 *
 * Owns: the names of what `gputap run -o DIR` leaves in DIR (run.json, one
 * <proc> folder per process that touched CUDA, samplers/, libs/, the trace
 * and logs of a <proc>, its control folder while it runs) and the one listing of the <proc> folders that
 * run, convert, report and analyze share.  Listing opens no trace.
 */
#ifndef GT_TRACE_RUNDIR_H
#define GT_TRACE_RUNDIR_H

#include <stddef.h>

#define GT_RUN_JSON "run.json"
#define GT_RUN_SAMPLERS "samplers" /* the samplers' own trace (counters) and CSVs: not a process */
#define GT_RUN_LIBS "libs"         /* library call logs */
#define GT_RUN_REPORT "report.html"
#define GT_PROC_TRACE "trace.gtr"
#define GT_PROC_METRICS "metrics.log"
#define GT_PROC_RANGE_METRICS "range_metrics.csv" /* range metrics (GPUTAP_METRICS) */
#define GT_PROC_KERNEL_METRICS "kernel_metrics.csv" /* range metrics, one row per kernel */
#define GT_PROC_TIMELINE "timeline.log" /* the alnair interposer's timeline */
#define GT_PROC_CONTROL "control" /* a live process's request folder (gputap trigger) */

struct gt_rundir_proc {
	char name[64];
	char trace[4200]; /* DIR/<proc>/trace.gtr (the reader falls back to .partial); "" if neither exists */
	int trace_partial; /* only trace.gtr.partial exists (the process did not finish it) */
	int has_metrics;   /* metrics.log */
	int has_range_metrics; /* range_metrics.csv */
};

/* The <proc> folders of `dir`: every folder but samplers/, libs/ and hidden
 * ones that holds trace.gtr, trace.gtr.partial, metrics.log or
 * range_metrics.csv (in any form:
 * a trace.gtr that is a folder is listed, for its reader to name), sorted by
 * name.  Returns how many (*out malloc'd, NULL when 0), or -1 with errno
 * (dir unreadable, ENOMEM). */
int gt_rundir_procs(const char *dir, struct gt_rundir_proc **out);

/* Whether `dir` is a gputap run directory: it holds run.json (written before the command starts, so
 * a run that recorded nothing is one too), a <proc> folder as gt_rundir_procs lists them, samplers/,
 * libs/, or a file the run's tools write (gpu_samples.csv, library_trace.csv, library_perf.csv,
 * madengine's gpu_info_power_profiler_output.csv / gpu_info_vram_profiler_output.csv).  The one
 * definition run, analyze and report share.  1 or 0. */
int gt_rundir_is_run(const char *dir);

/* The live process folders of `dir`, the ones `gputap trigger` talks to:
 * `dir` itself when it holds GT_PROC_CONTROL, else each folder of `dir`
 * (hidden ones skipped) that holds one, in name order.  fn(procdir,
 * control, arg) for each; a negative return stops the listing and is
 * returned.  0, or -1 with errno when `dir` cannot be listed.  Whether the
 * process still runs is the caller's to check. */
int gt_rundir_each_live(const char *dir, int (*fn)(const char *procdir, const char *control, void *arg), void *arg);

/* DIR/samplers/ as an entry of the same shape (name "samplers"): 1 when it
 * holds a trace (or its .partial), else 0. */
int gt_rundir_samplers(const char *dir, struct gt_rundir_proc *out);

#endif
