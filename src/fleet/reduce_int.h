/*
 * fleet/reduce_int.h — what the reduction's two files share: reduce.c (statuses, rank numbers,
 * clocks, matching, arrivals, causes) and reduce_out.c (the tables and the summary), and the
 * group arithmetic both use (reduce_util.c: a stable sort of row indices, medians and quantiles as
 * numpy computes them, rows grouped by a dense id).
 */
#ifndef GT_FLEET_REDUCE_INT_H
#define GT_FLEET_REDUCE_INT_H

#include <stdarg.h>
#include <stdint.h>

#include "core/containers.h"
#include "fleet/fleet.h"

#define Z_OUTLIER 3.5   /* robust z-score beyond which a rank is an outlier */
#define REL_OUTLIER 0.05
#define LIST_MAX 200    /* entries of the summary's lists (the tables hold every row) */

/* causes of a late arrival, as cause codes */
enum { C_NONE = -1, C_COMPUTE, C_MEMCPY, C_HOST, C_DATA, C_UNCLEAR, C_UPSTREAM };
static const char *const cause_names[] = {"compute", "memory copies", "host/launch", "data loading", "unclear"};

struct rank {
	int task;
	int64_t rank;
	const char *host, *path, *label, *clock_name;
	char clockbuf[32];
	int clock, has_anchor, gpus;
	int64_t anchor, iterations, first_ns, last_ns;
	double w[FL_NWIN];
	/* the rank table's */
	int64_t collectives, late_count, last_count, iterations_late, with_colls;
	double wait_ms, work_ms, cost_ms, waited_ms, max_late_ms, in_its, steady;
	char cause[48];
	const char *pattern;
};

struct iter {
	int64_t rank, iteration, start_ns, first_ns, last_ns;
	int ri; /* its rank's index */
	double w[FL_NWIN];
	double excess[4];
	/* the iteration table's */
	double wait_ms, work_ms, late_ms, cost_ms, waited_ms;
	int64_t nlate;
	char cause[48];
};

struct coll {
	int64_t rank, device, seq, count, bytes, iteration, start, end, launch;
	int comm, name, algo, proto, match, dtype;
	int launch_ok, clock, ri;
	int64_t ordinal, k, n, pos, up;
	double a_start, a_end, a_launch;
	double late_ms, held_ms, wait_ms, arrival_ms, dev_ns, launch_lag_ms, cost_ms, waited_ms;
	int late, cause;
};

struct clockfit {
	int have;
	int64_t n;
	double rms_us, p95_us, max_us;
};

struct red {
	const fl_plan *p;
	const fl_rows *rows;
	char **voc;
	size_t nvoc;
	int empty, order;
	struct rank *rk;
	size_t nr;
	struct iter *it;
	size_t ni;
	struct coll *c;
	size_t nc, ng; /* rows, collectives */
	int64_t *gstart; /* collective g's rows: gstart[g] .. gstart[g+1] */
	int64_t *by_rank_iter; /* the collective rows by rank, iteration (row order within) */
	struct coll *scratch;  /* room for the rows, to permute them into */
	size_t nclk;
	double *off;
	struct clockfit *fit;
	int64_t base;
	double noise, thr;
	int64_t nit;
	/* the summary's lists */
	struct gt_vec failed, skipped, partial, warnings; /* of struct note */
	size_t twice;
	int oom;
};

struct note {
	char *path, *text, *label;
};


void *fl_xcalloc(struct red *r, size_t n, size_t sz);
void fl_add_note(struct red *r, struct gt_vec *v, const char *path, const char *text, const char *label);
void fl_warn(struct red *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *fl_cause_str(const struct coll *c, char *buf, size_t len);
const char *fl_clock_name(const struct red *r, int clk);
int fl_clock_anchor(const struct red *r, int clk, int64_t *a);
/* reduce_out.c: the three tables and the summary into out; 0 or -1 */
int fl_reduce_out(struct red *r, fl_result *out);

/* ---- reduce_util.c ---- */
/* a - b for numbers that come from other machines' rows: wrapped, never undefined */
static inline int64_t fl_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
/* A double as an int64_t: truncated, and clamped where it does not fit (NaN: 0). */
static inline int64_t fl_i64(double v)
{
	return v != v ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
}
/* compare two numbers for a comparator: return -1/1 when they differ */
#define FL_CMP(a, b)                                                                               \
	do {                                                                                       \
		if ((a) < (b))                                                                     \
			return -1;                                                                 \
		if ((a) > (b))                                                                     \
			return 1;                                                                  \
	} while (0)
typedef int (*fl_cmp_fn)(const void *ctx, int64_t a, int64_t b);
void fl_iota(int64_t *o, size_t n);
/* Stable sort of the indices o[0..n) by cmp (a merge sort: equal rows keep their order). */
void fl_msort(int64_t *o, size_t n, fl_cmp_fn cmp, const void *ctx);
/* o (row indices) sorted stably by (key[row], then cmp): a counting sort by key (0 .. nkeys-1),
 * then each key's rows by cmp (NULL: none).  0, or -1 without memory (o unchanged then). */
int fl_bucket_sort(int64_t *o, size_t n, const int64_t *key, size_t nkeys, fl_cmp_fn cmp, const void *ctx);
/* The median of v[idx[0..n)] that are not NaN (NaN when none), as numpy's: the mean of the two
 * middle values of an even count.  tmp: room for n doubles. */
double fl_median_of(const double *v, const int64_t *idx, size_t n, double *tmp);
/* The q-quantile of v[idx[0..n)], linear between the closest ranks, as numpy's. */
double fl_quantile_of(const double *v, const int64_t *idx, size_t n, double q, double *tmp);
/* Rows grouped by gid (0 .. ng-1): o lists the rows group after group (row order within), start[g]
 * where group g begins (ng + 1 entries). */
void fl_group_index(const int64_t *gid, size_t n, size_t ng, int64_t *o, int64_t *start);
/* Dense ids of the iterations' numbers in sorted order; the number of ids. */
size_t fl_dense_ids_i64(struct red *r, const struct iter *it, size_t n, int64_t *gid);
int fl_cmp_iter_task(const void *ctx, int64_t a, int64_t b);
int fl_cmp_coll_task(const void *ctx, int64_t a, int64_t b);

#endif
