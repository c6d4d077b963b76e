/*
 * tap/rmetrics.h — range metrics: GPU hardware counters (Nsight Compute
 * metric names) per kernel and per named range, measured in the program's
 * own process with the CUPTI Range Profiler, and reduced SUM/MAX/MEAN/MIN
 * over the kernels of each range.
 *
 * Owns: the range-metrics session of this process (GPUTAP_METRICS,
 * gputap_metrics_enable), its CSV files (<proc>/range_metrics.csv,
 * <proc>/kernel_metrics.csv) and its JSON document.
 *
 * Entry points for other parts of the library:
 *  - gt_rmetrics_results_json: the results so far as one malloc'd JSON
 *    document (the caller frees it), or NULL when range metrics are off.
 *    Format (docs/range-metrics.md):
 *      {"mode":"per-kernel"|"per-range","metrics":[{"name":..,"unit":..}],
 *       "ranges":[{"path":"a/b","name":"b","level":1,"occurrence":N,
 *                  "kernels":N,"values":{"<metric>":{"sum":..,"max":..,
 *                  "mean":..,"min":..}}}],
 *       "by_name":[...the same, merged per path...],"dropped_ranges":N}
 *  - gt_rmetrics_last_error: why the last gputap_metrics_enable failed, in
 *    one sentence; "" when it did not.
 */
#ifndef GT_TAP_RMETRICS_H
#define GT_TAP_RMETRICS_H

char *gt_rmetrics_results_json(void);
const char *gt_rmetrics_last_error(void);

#endif
