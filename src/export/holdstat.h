/*
 * export/holdstat.h — what launch hold did, from a trace: launches held and not
 * held (by reason), releases by trigger, batch sizes, and launch-to-start
 * latency of held and not held launches.  Shown by the run summary and by
 * `gputap report` (terminal and report.html).
 *
 * Owns: reading GT_REC_HOLD records, the "hold.*" counters, launch API
 * records and kernel records during a pass over one or more traces.
 *
 * Invariants: correlation ids are per process, so each trace's links are
 * resolved by gt_holdstat_end_trace before the next trace starts; nothing
 * is kept for traces without hold (links are collected only once the trace
 * shows a held launch).
 */
#ifndef GT_EXPORT_HOLDSTAT_H
#define GT_EXPORT_HOLDSTAT_H

#include <stdint.h>
#include <stdio.h>

#include "trace/holdnames.h"
#include "trace/trace_io.h"
#include "trace/visit.h"
#include "export/model.h"

#define GT_HOLDSTAT_TRIGGERS 64

struct gt_holdstat {
	int seen; /* some trace held launches */
	long batch, timeout_us;
	uint64_t held, not_held, failed, releases, released;
	uint64_t refused[GT_HOLD_NREFUSALS];
	uint64_t max_batch;
	struct gt_holdstat_trig {
		char name[64]; /* a driver call, or a reason's name */
		uint64_t n;
	} trig[GT_HOLDSTAT_TRIGGERS]; /* releases by trigger; sorted, most first, by gt_holdstat_sort */
	int ntrig;
	uint64_t trig_other; /* releases past the table */
	struct gt_vec sizes;                   /* uint32_t per release */
	struct gt_vec lat_held, lat_rel, lat_not; /* double, microseconds */
	/* the trace being read */
	int collecting;
	struct gt_map api_end, held_issue, kstart;
};

void gt_holdstat_init(struct gt_holdstat *s);
/* The reader of a trace's records (trace/visit.h), ctx = the gt_holdstat:
 * a visitor in the pass over each trace; callbacks return -1 when out of memory. */
extern const struct gt_trace_ops gt_holdstat_ops;
/* The trace ended: resolve its launch -> kernel links. 0 or -1 (memory). */
int gt_holdstat_end_trace(struct gt_holdstat *s);
/* Sort triggers, batch sizes and latencies (before reading them). */
void gt_holdstat_sort(struct gt_holdstat *s);
/* Quantile q of a sorted vector of doubles (0 if empty). */
double gt_holdstat_at(const struct gt_vec *v, double q);
/* A "Launch hold" block for people (nothing when no launch was held), after gt_holdstat_sort. */
void gt_holdstat_print(FILE *f, const struct gt_holdstat *s);
void gt_holdstat_free(struct gt_holdstat *s);

#endif
