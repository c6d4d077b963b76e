/*
 * report/report_an.h — the sections of report.html and the lines of the terminal summary drawn
 * from the analyzer's per-op analyses (internal to report/): idle time by cause per stream, kernel
 * launches and the launch queue over time, the top kernels per kind and rank, memory bandwidth over
 * time, and what HTA's default view would count differently.
 *
 * Invariants: every section is written whatever the result holds (one without data says why);
 * plots are bounded (at most 48 bars, 10 lines of the analyzer's time buckets); every name from
 * the data is HTML-escaped.  Definitions of the numbers: docs/analyze.md.
 */
#ifndef GT_REPORT_AN_H
#define GT_REPORT_AN_H

#include <stdio.h>

#include "analyze/analyze.h"

/* Links to the sections, for the page's list of sections. */
void gt_rep_an_nav(FILE *f);
/* The note under the per-iteration breakdown: what HTA's default view would count differently. */
void gt_rep_an_hta_note(FILE *f, const struct gt_an_result *an);
/* The sections.  `an` NULL: each says `why`.  `t_base_ns`: time 0 of the plots' time axes. */
void gt_rep_an_sections(FILE *f, const struct gt_an_result *an, const char *why, double t_base_ns);
/* The summary lines (none when `an` is NULL or has no timeline). */
void gt_rep_an_summary(FILE *f, const struct gt_an_result *an);

#endif
