/*
 * metrics/rmagg.h — range metrics without CUPTI: metric lists, the choice of
 * mode, attribution of kernels to named ranges, the reductions, and the CSV
 * and JSON writers.  The CUPTI side (src/tap/rmetrics.c) feeds it; the CLI
 * reads what it wrote.  Pure: no CUDA, no globals, no locks (the caller
 * serialises calls on one aggregate).
 *
 * Model.  A range occurrence is one push..pop of a named range on one
 * thread; its path is the names of the ranges open around it on that
 * thread, outermost first, joined by '/' ("train/step/forward").  A
 * "sample" is one measured piece of GPU work with one value per metric:
 *  - per-kernel mode: one kernel launch (CUPTI auto range);
 *  - per-range mode:  one stretch of the program between two range
 *    boundaries of the profiled thread (CUPTI user range).
 * A sample counts in the innermost open range and in every range around it
 * (each path once); work outside every range goes to the "(none)" row.
 * Work launched on a thread with no open range of its own counts in the
 * ranges open on the other threads at that moment (the _set variants).
 *
 * Reductions.  Per occurrence and per kernel mode: sum, max, mean, min over
 * the occurrence's kernels.  Per occurrence and per range mode: the value
 * of the occurrence (sum of its stretches) in "sum", the others null (there
 * are no per-kernel values).  Per path ("by name", every occurrence of a
 * path merged): per kernel mode over every kernel of every occurrence; per
 * range mode over the occurrences' values.  A row with no measured sample
 * has null values (never 0 for "not measured").
 */
#ifndef GT_METRICS_RMAGG_H
#define GT_METRICS_RMAGG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum gt_rm_mode { GT_RM_AUTO = 0, GT_RM_KERNEL = 1, GT_RM_RANGE = 2 };

#define GT_RM_MAX_METRICS 32
#define GT_RM_NAME_MAX 128
/* The list used when none is given: one pass on Hopper, every metric additive. */
#define GT_RM_DEFAULT_METRICS "gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum"
#define GT_RM_NONE "(none)"

struct gt_rm_list {
	int n;
	char name[GT_RM_MAX_METRICS][GT_RM_NAME_MAX];
};

/* Parse "a,b c" (commas and/or blanks) into distinct metric names.  `what`
 * names the source in messages ("GPUTAP_METRICS", "--metrics").  NULL or ""
 * gives the default list.  0, or -1 with err naming the bad item. */
int gt_rm_parse_list(const char *s, const char *what, struct gt_rm_list *out, char *err, size_t errlen);
/* "auto" / "kernel" / "range" (also "per-kernel", "per-range"); NULL or "" = auto; -1 if unknown. */
int gt_rm_parse_mode(const char *s);
/* "per-kernel" / "per-range" / "auto". */
const char *gt_rm_mode_name(int mode);
/* 1 when values of `metric` over disjoint pieces of work add up to the value
 * over their union (a plain ".sum" counter), else 0 (ratios, averages,
 * maxima, per-second rates, percentages). */
int gt_rm_metric_additive(const char *metric);
/* The mode to use: `requested` (GT_RM_*), the number of replay passes the
 * list needs.  Per range needs one pass; auto picks per range for a one-pass
 * list of additive metrics, else per kernel.  Returns GT_RM_KERNEL or
 * GT_RM_RANGE, or -1 (per range asked for a list that needs several passes)
 * with `why` saying so; `why` also explains an automatic choice. */
int gt_rm_choose_mode(int requested, int passes, const struct gt_rm_list *l, char *why, size_t len);
/* Per kernel: 1 for kernel replay, 0 for one pass without replay.  One pass
 * needs no replay unless `replay` (GPUTAP_METRICS_REPLAY, may be NULL) is
 * "kernel"; several passes always need kernel replay. */
int gt_rm_kernel_replay(int passes, const char *replay);
/* Ranges per counter data image from `s` (GPUTAP_METRICS_CHUNK, may be NULL):
 * *cap = def when s is NULL or empty; 0, or -1 when s is not 1..100000 (then *cap = def). */
int gt_rm_parse_chunk(const char *s, size_t def, size_t *cap);

struct gt_rm_stat {
	double sum, max, min;
	uint64_t n; /* samples */
};

struct gt_rm_path {
	char *path;       /* "a/b/c" */
	const char *name; /* last component, inside path */
	uint32_t level;   /* 0 = outermost */
	int32_t parent;   /* path index, -1 at level 0 */
	uint64_t occurrences;
};

struct gt_rm_occ {
	int32_t path;
	int32_t parent; /* occurrence index of the enclosing range, -1 at level 0 */
	uint64_t occurrence; /* 1.. within its path */
	uint64_t kernels;    /* launches inside it, its children's included */
	int open;
};

struct gt_rm_agg {
	int mode; /* GT_RM_KERNEL or GT_RM_RANGE */
	int nmetrics;
	char *metric[GT_RM_MAX_METRICS];
	char *unit[GT_RM_MAX_METRICS];
	struct gt_rm_path *paths;
	size_t npaths, cap_paths;
	int32_t *hash; /* path index + 1, open addressing over (parent, name) */
	size_t hash_cap;
	struct gt_rm_occ *occs;
	struct gt_rm_stat *stats; /* nmetrics per occurrence */
	size_t noccs, cap_occs;
	int64_t none; /* occurrence index of "(none)", -1 until used */
	uint64_t kernels;         /* launches seen */
	uint64_t samples;         /* samples added */
	uint64_t dropped_ranges;  /* CUPTI ranges lost (counter data full, ...) */
	uint64_t unmeasured;      /* launches that got no values */
	int oom;                  /* an allocation failed: results are partial */
	const char *inexact;      /* NULL, or why the values are not exact (written on every row) */
};

/* Set up for `mode` (GT_RM_KERNEL or GT_RM_RANGE) and the metrics' names and
 * units (units may be NULL or ""); 0 or -ENOMEM. */
int gt_rm_agg_init(struct gt_rm_agg *a, int mode, int nmetrics, const char *const *names,
		   const char *const *units);
void gt_rm_agg_free(struct gt_rm_agg *a);
/* Change the mode and units once known (ranges may open before): 0 or -ENOMEM. */
int gt_rm_agg_set_mode(struct gt_rm_agg *a, int mode, const char *const *units);
/* A range named name[0..len) opens inside occurrence `parent` (-1: at the
 * top).  Returns its occurrence index, or -1 (out of memory). */
int64_t gt_rm_agg_open(struct gt_rm_agg *a, int64_t parent, const char *name, size_t len);
void gt_rm_agg_close(struct gt_rm_agg *a, int64_t occ);
/* One launch inside occurrence `occ` (-1: outside every range). */
void gt_rm_agg_kernel(struct gt_rm_agg *a, int64_t occ);
/* One sample (nmetrics values; NaN = not measured) inside `occ` (-1: outside). */
void gt_rm_agg_sample(struct gt_rm_agg *a, int64_t occ, const double *v);
/* The same for work that counts in several open ranges at once (launched on a
 * thread with no open range of its own: it counts in the innermost range open
 * on each other thread).  Each occurrence, and each range around them, counts
 * it once; n == 0 is "(none)". */
void gt_rm_agg_kernel_set(struct gt_rm_agg *a, const int64_t *occ, int n);
void gt_rm_agg_sample_set(struct gt_rm_agg *a, const int64_t *occ, int n, const double *v);
/* The path text of occurrence `occ` ("(none)" for -1). */
const char *gt_rm_agg_path(const struct gt_rm_agg *a, int64_t occ);

/* Reductions of one occurrence, and of every occurrence of one path. */
void gt_rm_agg_occ_stat(const struct gt_rm_agg *a, size_t occ, int metric, struct gt_rm_stat *out);
void gt_rm_agg_path_stat(const struct gt_rm_agg *a, size_t path, int metric, struct gt_rm_stat *out,
			 uint64_t *kernels);

/* range_metrics.csv: header, then per path its "all" rows, then each
 * occurrence's rows.  Columns:
 *   mode,path,name,level,occurrence,kernels,metric,unit,sum,max,mean,min,exact
 * occurrence is "all" on the per-path rows; empty cells are "not measured";
 * exact is "yes", or "no: <why>" when a->inexact is set.
 * Returns 0, or -1 when the stream reports an error. */
int gt_rm_agg_write_csv(const struct gt_rm_agg *a, FILE *f);
/* The JSON document of tap/rmetrics.h (plus "replay", "kernels",
 * "unmeasured_kernels", "partial"); `replay` may be NULL.  0 or -1. */
int gt_rm_agg_write_json(const struct gt_rm_agg *a, const char *replay, FILE *f);

/* One launch of kernel_metrics.csv. */
struct gt_rm_kinfo {
	uint64_t launch;  /* 1.. in launch order, per process */
	const char *name; /* mangled or plain; written demangled */
	const char *range; /* path, or "(none)" */
	uint32_t grid[3], block[3];
	uint32_t stream, device, tid;
};
/* Columns: launch,kernel,range,grid,block,stream,device,thread, then one per
 * metric named "<metric> (<unit>)". */
int gt_rm_kernel_csv_header(const struct gt_rm_agg *a, FILE *f);
int gt_rm_kernel_csv_row(const struct gt_rm_agg *a, const struct gt_rm_kinfo *k, const double *v, FILE *f);

/*
 * Matching decoded CUPTI ranges to launches.  `launch[i]` are the kernel
 * names of the launches waiting for values, in launch order; `range[j]` the
 * names CUPTI gave its ranges, in order.  When the counts agree, range j is
 * launch j.  When every range name is a number (CUPTI's auto ranges are
 * named by their index in the chunk), range "k" is launch k.  Otherwise
 * ranges are matched to launches by name, in order
 * (a launch with no range left is unmeasured; a range matching no launch is
 * skipped; a launch looks at most 64 ranges ahead).  Names compare equal
 * when one is the other, or the mangled launch name demangles to the range
 * name, or both name the same function (scope, template arguments and
 * parameters left out).
 * map[i] = range index of launch i, or -1.  Returns the number matched.
 */
size_t gt_rm_align(const char *const *launch, size_t nlaunch, const char *const *range, size_t nrange,
		   int64_t *map);

#endif
