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

#include <stdatomic.h>
#include <stdint.h>

#include <cupti_callbacks.h>

char *gt_rmetrics_results_json(void);
const char *gt_rmetrics_last_error(void);

/* Small hooks the rest of the tap calls (each a no-op unless range metrics are on; gt_tap.rm_active
 * says whether they are). */
/* Set-up: GPUTAP_METRICS read; registers range metrics with the CUPTI switchboard (tap/cupti.h),
 * which calls it again where CUPTI starts, and the next two and gt_rm_callback, gt_rm_finish. */
void gt_rm_init_env(void);
int gt_rm_wanted(void);         /* a list was given and nothing failed */
int gt_rm_kernel_records_ok(void); /* 0 in per-kernel mode (kernels profiled one by one) */
void gt_rm_push(uint32_t name_id, uint32_t domain); /* a push/pop range opened on this thread */
void gt_rm_pop(uint32_t domain);
/* CUPTI callbacks (through the switchboard): kernel launches (driver API) and context destruction. */
void gt_rm_callback(CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data);
void gt_rm_finish(void); /* decode what is left, write the files; idempotent */

#endif
