/*
 * report/pcstable.h — PC sampling tables for the end-of-run summary and the
 * report page, read back from each process's pc_samples.csv and
 * pc_sampling_totals.csv (export/pcsamp.h).
 *
 * Per process: the samples, dropped samples and period; per kernel (most
 * samples first, at most max_kernels): samples, share, the two largest stall
 * groups (Nsight Compute's names), the hottest source line and PC with its
 * SASS.  HTML adds a bar of the stall groups per kernel and its top lines.
 */
#ifndef GT_REPORT_PCSTABLE_H
#define GT_REPORT_PCSTABLE_H

#include <stdio.h>

/* Returns the number of processes with PC samples. */
int gt_pcs_tables(FILE *out, const char *rundir, int max_kernels, int html);

#endif
