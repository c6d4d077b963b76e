/*
 * libperf/libperf_kact.h — timing replayed library calls by their GPU work:
 * CUPTI's kernel activity (the records torch.profiler and nsys sum per
 * operation), from the CUPTI gpu/probe.h finds, loaded at run time.
 *
 * Owns: CUPTI's activity API as libperf uses it (one subscriber, the
 * activity kinds, the buffers) and the attribution of GPU records to timed
 * runs.  Each timed run is bracketed by an external correlation id; CUPTI
 * writes, for every driver and runtime call made inside the bracket, a record
 * that maps the call's correlation id to that id; every kernel, memset and
 * copy record carrying one of those correlation ids adds its duration
 * (end - start, GPU timestamps) to the run and counts as one of its GPU
 * operations.
 *
 * Invariants:
 *  - process-wide, as CUPTI is: started once, stopped once;
 *  - a CUPTI client already in the process (nsys, ncu, gputap's own tap, a
 *    framework profiler) is left alone: starting fails, saying so, and the
 *    caller times with CUDA events;
 *  - a window in which any run has no GPU record, or in which CUPTI dropped
 *    records, gives no time: the caller uses its event time for it;
 *  - records outside an open window are read and discarded (memory stays
 *    bounded by one window).
 */
#ifndef GT_LIBPERF_KACT_H
#define GT_LIBPERF_KACT_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#define GT_KACT_FNS(X)                                                                             \
	X(cuptiGetVersion)                                                                         \
	X(cuptiGetResultString)                                                                    \
	X(cuptiSubscribe)                                                                          \
	X(cuptiUnsubscribe)                                                                        \
	X(cuptiActivityEnable)                                                                     \
	X(cuptiActivityDisable)                                                                    \
	X(cuptiActivityRegisterCallbacks)                                                          \
	X(cuptiActivityFlushAll)                                                                   \
	X(cuptiActivityGetNextRecord)                                                              \
	X(cuptiActivityGetNumDroppedRecords)                                                       \
	X(cuptiActivityPushExternalCorrelationId)                                                  \
	X(cuptiActivityPopExternalCorrelationId)

#define GT_KACT_PTR(n) __typeof__(&n) n;
struct gt_kact_api {
	GT_KACT_FNS(GT_KACT_PTR)
};
#undef GT_KACT_PTR

/* Resolve the table from the CUPTI of gpu/probe.h's search (GPUTAP_CUPTI_LIB
 * first; the one the tap loads and `gputap info` names); `path` receives the
 * library.  0, or -1 with `why`. */
int gt_kact_load(struct gt_kact_api *api, char *path, size_t pathlen, char *why, size_t whylen);
/* Start: subscribe, register the buffer callbacks, enable kernel, memset,
 * copy, driver and runtime API and external-correlation records.  `api` is
 * copied.  0, or -1 with `why` and nothing left enabled. */
int gt_kact_start(const struct gt_kact_api *api, char *why, size_t whylen);
/* 1 between a successful gt_kact_start and gt_kact_stop. */
int gt_kact_on(void);
/* Flush, disable the kinds, unsubscribe. */
void gt_kact_stop(void);

/* Open a window of `runs` timed runs; their ids are base .. base + runs - 1. */
uint64_t gt_kact_open(int runs);
/* Bracket one run: the calls between push and pop belong to run `id`.  0, or -1. */
int gt_kact_push(uint64_t id);
void gt_kact_pop(void);
/* After the runs ran (the stream synchronised): flush, attribute, close.
 * 0 with the median GPU time of a run (microseconds) and the median number
 * of GPU operations per run; -1 with `why` (a run without records, records
 * dropped, CUPTI failing). */
int gt_kact_close(uint64_t base, int runs, double *median_us, int *median_ops, char *why, size_t whylen);
/* Windows that gave no time since the start, and the reason of the last one. */
int gt_kact_failures(const char **last_why);

#endif
