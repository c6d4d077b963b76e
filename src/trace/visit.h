/*
 * trace/visit.h — one pass over a trace for several readers at once.
 *
 * Owns: the dispatch of each record of a trace to the readers that want it,
 * one callback per record type (as perf's `perf_tool`), so a trace is read
 * once however many outputs are made from it (the model and its writers,
 * the report's timeline, the analyzer, the summary).
 *
 * Invariants: records come in file order; a record pointer and the reader's
 * string table are valid only during the callback; a callback returning < 0
 * stops the pass (out of memory, or bad input it has explained in its own
 * error); `any` is called before the typed callback for every record,
 * string records included (readers that switch on the type themselves);
 * a string record's typed callback (`string`) sees it after the reader
 * has interned it.
 */
#ifndef GT_TRACE_VISIT_H
#define GT_TRACE_VISIT_H

#include <stddef.h>

#include "trace/trace_io.h"

struct gt_trace_ops {
	int (*any)(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_hdr *h);
	/* one per record type, named as in GT_REC_TYPES: int (*kernel)(ctx, r, const struct gt_rec_kernel *) */
#define GT_VISIT_FIELD_(T, num, name, v1, thread)                                                  \
	int (*name)(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_##name *rec);
	GT_REC_TYPES(GT_VISIT_FIELD_)
#undef GT_VISIT_FIELD_
	/* after the last record (not called when the pass failed) */
	int (*end)(void *ctx, const struct gt_trace_reader *r);
	/* instead of `end` when the pass failed or never started (damage, a
	 * visitor's error, a later join's failure): free what ctx holds.  Each
	 * visitor gets exactly one of `end` and `release`. */
	void (*release)(void *ctx);
};

struct gt_trace_visitor {
	const struct gt_trace_ops *ops;
	void *ctx;
};

/* Read every remaining record of `r`, handing each to each visitor, then
 * call their `end`.  0; or -1 with err: the reader's (damage: file and byte
 * offset), a visitor's own message when it wrote one into err (err must be
 * "" on entry), else "out of memory" at the byte offset. */
int gt_trace_visit(struct gt_trace_reader *r, const struct gt_trace_visitor *v, size_t nv, char *err, size_t errlen);
/* Call `release` of each of v[0..nv): for a pass that will not happen. */
void gt_trace_release(const struct gt_trace_visitor *v, size_t nv);

/*
 * Readers joining a pass over a trace that someone else opens and reads:
 * `join` is called with the trace open, before its first record, and appends
 * its visitors at v[*nv] (room for GT_VISIT_MAX in all).  A feed reads the
 * trace at `path` once with whatever joined (and its own readers).  So the
 * analysis, the report and the exporters read each trace of a run once.
 */
#define GT_VISIT_MAX 8
typedef int (*gt_trace_join_fn)(void *arg, const struct gt_trace_reader *r, struct gt_trace_visitor *v, size_t *nv);
typedef int (*gt_trace_feed_fn)(void *arg, const char *path, gt_trace_join_fn join, void *join_arg, char *err,
				size_t errlen);
/* When a join fails, the feed releases whatever sits in v[0..*nv) then
 * (gt_trace_release): a join frees only what it did not append.
 * The plain feed: open, join, visit, close.  `arg` is unused. */
int gt_trace_feed_plain(void *arg, const char *path, gt_trace_join_fn join, void *join_arg, char *err, size_t errlen);

#endif
