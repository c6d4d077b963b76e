/*
 * report/report.h — `gputap report DIR`: terminal summary and DIR/report.html.
 *
 * Owns: the self-contained HTML page (inline SVG plots, no network) and the
 * terminal summary of a run directory.
 */
#ifndef GT_REPORT_H
#define GT_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* Write DIR/report.html (via .partial + rename) and print the summary to `f`
 * (NULL: print nothing).  0 or -1 with err. */
int gt_report_write(const char *rundir, FILE *f, char *err, size_t errlen);

#endif
