/*
 * export/model.h — one streaming pass over a trace, and what the writers need
 * from it.
 *
 * Owns: the per-name statistics (kernels, memory operations by time and by
 * size, API calls, NVTX ranges), the few things kept per record because a
 * writer needs them after the pass (API calls that launched GPU work, the
 * first GPU operation of each correlation id, NVTX ranges, memory events),
 * and the writers' visitors (trace.json, timeline.log) that read each record
 * after the model in the same pass.  The trace is read once, through
 * trace/visit.h: one callback per record type.
 *
 * Invariants: every name pointer in the model points into the model's string
 * pool and lives as long as the model; statistics groups are keyed by text
 * (not string id), so two ids with the same text are one group.
 */
#ifndef GT_EXPORT_MODEL_H
#define GT_EXPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/containers.h"
#include "trace/trace_io.h"
#include "trace/visit.h"

/* interned text, owned by the pool */
struct gt_strpool {
	char **items; /* hash slots */
	size_t n, cap;
};
const char *gt_strpool_intern(struct gt_strpool *p, const char *s, size_t len);
void gt_strpool_free(struct gt_strpool *p);

/* ---- statistics per name ---- */

struct gt_stat {
	const char *name;  /* display name (pool) */
	const char *style; /* nvtx_sum only: "PushPop" / "StartEnd", else NULL */
	uint64_t count, total, min, max;
	uint64_t bytes; /* memory operations: bytes moved */
	uint32_t order; /* first-use order */
	struct gt_vec vals; /* uint64_t values, for the median and std dev */
	/* filled by gt_stat_finish */
	double avg, med, stddev;
};

struct gt_stattab {
	struct gt_stat *s;
	size_t n, cap;
	int keep_vals;       /* keep every value (medians); else only sums */
	struct gt_map index; /* (pool name pointer | 1 PushPop, 2 StartEnd) -> index + 1 */
};

/* Add value `v` to group `name` (+ `style`, which is part of the key:
 * NULL, "PushPop" or "StartEnd"); `name` must come from a gt_strpool.
 * NULL on ENOMEM. */
struct gt_stat *gt_stat_add(struct gt_stattab *t, const char *name, const char *style, uint64_t v);
/* Sort the values and compute avg, median (mean of the two middle values
 * for an even count) and the sample standard deviation (0 for one value). */
void gt_stat_finish(struct gt_stat *s);
/* Groups sorted by total descending (ties: by name); caller frees. */
struct gt_stat **gt_stat_sorted(const struct gt_stattab *t);
void gt_stattab_free(struct gt_stattab *t);

/* ---- what is kept per record ---- */

struct gt_m_api { /* an API call carrying a correlation id */
	uint64_t start, end, corr;
	uint32_t tid;
};

struct gt_m_gpuops { /* all GPU work of one correlation id */
	uint64_t start, end; /* first start, last end */
	uint64_t first_start;
	uint32_t device, stream; /* of the first operation */
	uint32_t nops;
	int has_api;
};

struct gt_m_range {
	const char *name; /* "domain:text" as nsys names it (pool) */
	const char *text; /* the range text alone (pool) */
	uint64_t id, parent_id, start, end;
	uint32_t tid, end_tid;
	uint8_t kind, level;
	int open; /* never closed: end is the last timestamp of the trace */
};

struct gt_m_memev {
	uint64_t ts, seq;
	int64_t delta;
	uint32_t device; /* UINT32_MAX when unknown (API records) */
};

struct gt_m_stream {
	uint32_t device, stream;
};

struct gt_model;
struct gt_holdstat;


struct gt_model {
	struct gt_trace_reader r;
	struct gt_file_header hdr;
	int partial;
	char path[4096];
	uint64_t first_ts, last_ts; /* over all timestamped records */
	uint64_t nrecords;

	int keep_links; /* keep launches and GPU work per correlation id (flows,
			 * NVTX projection); 1 by default, the summary sets 0 */

	struct gt_strpool pool;
	struct gt_stattab kern, memtime, memsize, nvtx;
	struct gt_stattab api;    /* CUDA driver + runtime calls (cuda_api_sum) */
	struct gt_stattab apiall; /* every API record, sums only (metrics.log) */

	struct gt_vec apis;   /* struct gt_m_api, calls with corr_id != 0 */
	struct gt_map corr;   /* corr -> index+1 into gpuops */
	struct gt_vec gpuops; /* struct gt_m_gpuops */
	struct gt_vec ranges; /* struct gt_m_range (push/pop, start/end, user) */
	struct gt_vec marks;  /* struct gt_m_range (marks) */
	struct gt_vec windows; /* struct gt_m_range (capture windows: when the full trace was on) */
	struct gt_vec mem_rec; /* struct gt_m_memev from GT_REC_MEMORY */
	struct gt_vec mem_api; /* struct gt_m_memev from API alloc/free calls */
	struct gt_map ptr_api; /* ptr -> bytes (API allocations) */
	struct gt_map ptr_rec; /* address -> bytes (GT_REC_MEMORY) */
	struct gt_vec streams; /* struct gt_m_stream, first-seen order */
	struct gt_map stream_seen;
	struct gt_vec tids;    /* uint32_t, first-seen order */
	struct gt_map tid_seen;
	struct gt_map thread_name; /* tid -> (uintptr_t) pool text */
	struct gt_map device_name; /* device+1 -> pool text */
	struct gt_map kname;       /* kernel string id+1 -> (uintptr_t) demangled pool text */

	uint64_t copy_bytes[GT_COPY_KIND_MAX], copy_ns[GT_COPY_KIND_MAX], copy_count[GT_COPY_KIND_MAX];
	uint64_t memset_bytes, memset_ns, memset_count;
	uint64_t kernel_ns, kernel_count;
	uint64_t dropped_tap, dropped_cupti; /* from GT_REC_DROPPED */
	uint64_t cupti_no_buffer;            /* CUPTI buffer requests refused (GT_DROP_CUPTI_NO_BUFFER) */
	uint32_t notes;                      /* bit (1 << what) for each GT_REC_NOTE seen */

	/* after gt_model_finish */
	struct gt_vec *mem;  /* the chosen memory source, sorted by time */
	uint64_t mem_peak, mem_final;

	struct gt_trace_visitor hooks[2]; /* trace.json, timeline.log: read each record after the model */
	struct gt_holdstat *hold; /* launch hold figures are added here when set (out/holdstat.h) */
};

/* Open the trace (0, or -1 with err). */
int gt_model_open(struct gt_model *m, const char *trace_path, char *err, size_t errlen);
/* Read every record, calling the hooks; then finish the statistics.
 * 0, or -1 with err naming the file and byte offset. */
int gt_model_run(struct gt_model *m, char *err, size_t errlen);
/* gt_model_run with other readers in the same pass (trace/visit.h): the
 * trace is read once for all of them.  At most 7 more. */
int gt_model_run_with(struct gt_model *m, const struct gt_trace_visitor *more, size_t nmore, char *err, size_t errlen);
void gt_model_free(struct gt_model *m);
/* A kernel's name as people read it (demangled, as nsys prints it; the trace keeps it mangled). */
const char *gt_model_kernel_name(struct gt_model *m, uint32_t name_id);

/* Records lost by the tap / dropped by CUPTI: the header's totals, or the
 * sum of GT_REC_DROPPED records when larger (a partial file has no totals). */
uint64_t gt_model_lost(const struct gt_model *m);
uint64_t gt_model_cupti_dropped(const struct gt_model *m);

/* nsys operation name of a copy kind, e.g. "[CUDA memcpy Host-to-Device]" */
const char *gt_copy_op_name(unsigned kind);
/* the direction alone, "Host-to-Device" */
const char *gt_copy_dir_name(unsigned kind);
/* 1 if the API name allocates / frees device memory, else 0 */
int gt_api_is_alloc(const char *name);
int gt_api_is_free(const char *name);
/* Append `s` with invalid UTF-8 replaced by U+FFFD; returns a malloc'd copy. */
char *gt_utf8_clean(const char *s);

#endif
