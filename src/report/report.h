/*
 * report/report.h — `gputap report DIR`: terminal summary and DIR/report.html.
 *
 * Owns: the self-contained HTML page (inline SVG plots, no network) and the
 * terminal summary of a run directory.
 *
 * Invariants: every section of the page is present; one whose input is
 * missing says which file it needed.  Every text from data is HTML-escaped.
 * The page's size is bounded whatever the trace size (the timeline is drawn
 * at pixel resolution, series are downsampled).  Reads traces only through
 * trace/trace_io.h and kernel classes, iterations and per-op analyses only
 * through analyze.h.
 */
#ifndef GT_REPORT_H
#define GT_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "trace/visit.h"

/* Write DIR/report.html (via .partial + rename) and print the summary to `f`
 * (NULL: print nothing).  0 or -1 with err. */
int gt_report_write(const char *rundir, FILE *f, char *err, size_t errlen);
/* The same with a kernel-name -> class map (analyze's JSON map format) for
 * the "time by kernel class" plot; NULL: the built-in map (docs/report.md). */
int gt_report_write_opts(const char *rundir, const char *map_path, FILE *f, char *err, size_t errlen);
/* The page of any inputs 'gputap analyze' reads.  One run directory (trace/rundir.h): as above, the
 * page written to `html` (NULL: DIR/report.html); 1 (not 0) when a part of it that is there could
 * not be read (a trace, run.json), the page written with the rest and `err` naming what.
 * Otherwise traces (PyTorch profiler / Kineto, nsys SQLite, trace.gtr, several run directories): the sections drawn from the analysis (timeline,
 * classes, iterations, idle, launches, top kernels, bandwidth), the page written to `html` (NULL:
 * report.html in the current folder); an input the analyzer cannot read is an error (-1, `err`
 * naming it, and no page). */
int gt_report_write_inputs(const char *const *inputs, int ninputs, const char *map_path, const char *html,
			   FILE *f, char *err, size_t errlen);

/* gt_report_write_inputs where `feed` reads each trace of a run directory (trace/visit.h; NULL:
 * plainly): gputap run converts the traces in the same pass as the report reads them. */
int gt_report_write_fed(const char *const *inputs, int ninputs, const char *map_path, const char *html,
			gt_trace_feed_fn feed, void *feed_arg, FILE *f, char *err, size_t errlen);
/* The same, handing the findings of the page's analysis (analyze/findings.h) to the caller in
 * *findings (NULL: none), to free with gt_fd_list_free: gputap run's closing summary shows them. */
struct gt_fd_list;
int gt_report_write_fed_fd(const char *const *inputs, int ninputs, const char *map_path, const char *html,
			   gt_trace_feed_fn feed, void *feed_arg, FILE *f, struct gt_fd_list **findings, char *err,
			   size_t errlen);

#endif
