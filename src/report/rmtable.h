/*
 * report/rmtable.h — range-metrics tables (GPU counters per NVTX range) for the
 * end-of-run summary and `gputap report`, read back from each process's
 * range_metrics.csv (written by the library, format in metrics/rmagg.h).
 */
#ifndef GT_EXPORT_RMTABLE_H
#define GT_EXPORT_RMTABLE_H

#include <stdio.h>

/* One table per DIR/<proc>/range_metrics.csv: the per-name rows (every
 * occurrence of a range merged), at most max_rows each; text, or HTML (a
 * section of report.html).  Returns the number of processes with a table. */
int gt_rm_tables(FILE *out, const char *rundir, int max_rows, int html);

#endif
