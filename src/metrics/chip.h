/*
 * metrics/chip.h — what one GPU offers for range metrics, asked of CUPTI's profiler host
 * (gputap info --metrics).  CLI only: not compiled into the tap.
 *
 * Owns: the list of the chip's base metrics (name, unit, type, description), and the check of a
 * metric list on one GPU: every name known to the chip (each tried alone first, so that an unknown
 * one is named), each one's unit and whether it adds up over kernels, the replay passes the list
 * needs, the mode 'auto' would choose (metrics/rmagg.h) and whether this user may read the counters.
 * The report goes to `f`; what stops it is said on stderr (core/log.h), one line each.
 */
#ifndef GT_METRICS_CHIP_H
#define GT_METRICS_CHIP_H

#include <stdio.h>

/* `list` NULL: the chip's metrics of GPU `dev`; else the check of `list` (comma-separated full
 * names) on it.  0, or -1 when there is no GPU `dev`, no CUPTI, or a name of `list` is unknown. */
int gt_rm_chip_report(const char *list, int dev, FILE *f);

#endif
