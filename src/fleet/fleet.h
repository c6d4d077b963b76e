/*
 * fleet/fleet.h — `gputap fleet`'s cross-rank analysis, in C: one implementation for the command on
 * one machine and for the Python package's clusters (docs/fleet.md defines every number).
 *
 * Owns:
 *  - the plan (plan.c): what the inputs are, one task per rank, and the batches of tasks that one
 *    analyzer run takes (gputap run folders, rank folders, trace.gtr, Kineto .json[.gz], nsys
 *    .sqlite/.nsys-rep, folders of these);
 *  - the rows (rows.c): per task one rank row, its iterations and its collectives, from one
 *    `gputap analyze --format columns --collectives` run over a batch (task.c runs it, takes out an
 *    input it refuses and runs the rest again, and splits its output per task), with their wire
 *    format (many batches' rows are concatenated bytes);
 *  - the reduction (reduce.c): rows of every task -> three tables (ranks, iterations, collectives)
 *    and the summary (JSON text, as summary.json);
 *  - the text summary (text.c), from the summary and the ranks table;
 *  - the result's wire format (wire.c), read by the Python package (gputap.fleet) for its
 *    DataFrames, Parquet files and report.
 * The fleet command (cli/cmd_fleet.c) holds the options and the local worker pool; the Python
 * package holds the Dask cluster, the Parquet files and report.html.
 */
#ifndef GT_FLEET_H
#define GT_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the plan ---------------------------------------------------------------------------------- */

typedef struct {
	char *path;        /* absolute: what the analyzer reads (a trace, or a rank folder without one) */
	char *label;       /* the rank folder's or file's name (without .json.gz/.json/.sqlite/.nsys-rep) */
	long rank;         /* from the name ("rank<R>"), -1: none */
	char *host;        /* from the run's run.json, NULL: not known */
	int has_anchor;    /* run.json's start_ns was there */
	int64_t anchor_ns; /* run.json's start_ns (the clock anchor of that host) */
	int64_t size;      /* bytes of path, -1: not known */
	int index;         /* position in the plan */
} fl_task;

typedef struct {
	char *path;  /* as given */
	char *error; /* "no such file or folder", "no trace found (...)" */
} fl_failed;

typedef struct {
	fl_task *tasks;
	size_t ntasks;
	fl_failed *failed;
	size_t nfailed;
} fl_plan;

typedef struct {
	int *task; /* indices into the plan's tasks */
	size_t n;
} fl_batch;

/* Tasks for the inputs in a stable order (the inputs' order, each folder's entries by length then name); the
 * inputs that are not there or hold no trace in p->failed.  0, or -1 (out of memory). */
int fl_plan_expand(fl_plan *p, char *const *inputs, int n);
/* Groups of tasks for one analyzer run each: per host when by_host, and per
 * format; at most max_ranks tasks and max_bytes of input a batch (a larger task alone), about four
 * batches per worker.  *out: an array of *nout batches (fl_batches_free).  0 or -1. */
int fl_plan_batches(const fl_plan *p, int workers, int max_ranks, int64_t max_bytes, int by_host, fl_batch **out,
		    size_t *nout);
void fl_batches_free(fl_batch *b, size_t n);
void fl_plan_free(fl_plan *p);
/* os.path.abspath: joined to the working folder when relative, "." and ".." resolved in the text
 * (no link followed); malloc'd, NULL: no memory. */
char *fl_abspath(const char *p);
/* The plan as JSON ({"tasks": [...], "failed": [...]}), and read back: 0 or -1 with *err set. */
char *fl_plan_json(const fl_plan *p);
int fl_plan_from_json(fl_plan *p, const char *json, size_t len, char *err, size_t errlen);

/* ---- the rows of the tasks ------------------------------------------------------------------- */

/* The per-rank and per-iteration numbers of `gputap analyze` (docs/analyze.md), in this order. */
#define FL_WINDOW(X)                                                                                         \
	X(SPAN, "span_ms") X(BUSY, "busy_ms") X(IDLE, "idle_ms") X(COMPUTE, "compute_ms") X(COMM, "comm_ms")  \
	X(EXPOSED, "exposed_comm_ms") X(OVERLAP, "overlap_ms") X(MEMOP, "memop_ms")                           \
	X(KSUM, "kernel_sum_ms") X(NONCOMP, "non_compute_ms")
#define FL_W_ENUM(e, s) FL_W_##e,
enum { FL_WINDOW(FL_W_ENUM) FL_NWIN };
#undef FL_W_ENUM
extern const char *const fl_window_names[FL_NWIN];

enum fl_status { FL_OK, FL_FAILED, FL_SKIPPED, FL_PARTIAL };
extern const char *const fl_status_names[4]; /* "ok", "failed", "skipped", "partial" */

typedef struct {
	int task;
	int status;              /* enum fl_status */
	char *message;           /* why failed/skipped/partial; "" */
	char *label;             /* the GPUs' labels, ","-joined; "" */
	int gpus;
	int64_t iterations, first_ns, last_ns;
	char *iteration_source;  /* "" */
	double w[FL_NWIN];       /* sums over the rank's GPUs of their totals (6 decimals each) */
} fl_rankrow;

typedef struct {
	int task;
	int64_t iteration, start_ns, first_ns, last_ns;
	double w[FL_NWIN];
} fl_iterrow;

/* The collectives' string columns, numbers into the rows' strings. */
#define FL_COLL_STR(X) X(comm) X(name) X(algo) X(proto) X(match) X(dtype)
typedef struct {
	int task;
#define FL_CS(n) int n;
	FL_COLL_STR(FL_CS)
#undef FL_CS
	int64_t device, seq, count, bytes, iteration, start_ns, end_ns, launch_ns;
} fl_collrow;

typedef struct {
	fl_rankrow *ranks;
	size_t nranks, cap_ranks;
	fl_iterrow *iters;
	size_t niters, cap_iters;
	fl_collrow *colls;
	size_t ncolls, cap_colls;
	char **strings; /* string number i; strings[0] is "" */
	size_t nstrings, cap_strings;
	void *index;    /* string -> number (rows.c) */
} fl_rows;

void fl_rows_init(fl_rows *r);
void fl_rows_free(fl_rows *r);
/* The number of string s in r (added when new); -1 out of memory. */
int fl_rows_intern(fl_rows *r, const char *s);
/* Room for one more zeroed iteration or collective row at the end; NULL: out of memory. */
fl_iterrow *fl_rows_iter_push(fl_rows *r);
fl_collrow *fl_rows_coll_push(fl_rows *r);
/* Append src's rows to dst (string numbers mapped); 0 or -1. */
int fl_rows_append(fl_rows *dst, const fl_rows *src);
/* A rank row for a task that has no analysis (failed or skipped with this message). */
int fl_rows_fail(fl_rows *r, int task, int status, const char *message);
/* Wire format of rows (docs/fleet.md "rows"): write to f; read one or more concatenated rows
 * blocks from buf, appending to r.  0, or -1 with err ("rows block 2: cut short"). */
int fl_rows_write(const fl_rows *r, FILE *f);
int fl_rows_read(fl_rows *r, const unsigned char *buf, size_t len, char *err, size_t errlen);

/* One analyzer run over the tasks idx[0..n) of the plan (`exe analyze --format columns
 * --collectives [--nvtx TAG] PATH...`): a missing file, a folder
 * without trace.gtr or a missing analyzer are failed rows; an input the analyzer refuses is named
 * in its error (else each input runs alone) and taken out, the rest run again; a process without
 * GPU work is "skipped", a trace the analyzer calls partial "partial".  Appends to out; never
 * fails but for memory (-1). */
int fl_task_run(const char *exe, const fl_plan *p, const int *idx, size_t n, const char *nvtx, fl_rows *out);

/* ---- tables ------------------------------------------------------------------------------------ */

enum fl_coltype { FL_I64, FL_F64, FL_STR, FL_BOOL, FL_LIST_I64, FL_LIST_F64 };

typedef struct {
	const char *name;
	int type;        /* enum fl_coltype */
	int64_t *i;      /* FL_I64, FL_BOOL (0/1); FL_LIST_*: offsets, rows + 1 of them */
	double *f;       /* FL_F64; FL_LIST_F64: the values */
	int64_t *li;     /* FL_LIST_I64: the values */
	char **s;        /* FL_STR: one string per row (owned by the table's pool) */
} fl_col;

typedef struct {
	size_t rows, ncols;
	fl_col *cols;
	char **pool; /* strings the columns point into, freed with the table */
	size_t npool, cap_pool;
} fl_table;

/* The column of that name; NULL if none. */
const fl_col *fl_table_col(const fl_table *t, const char *name);
void fl_table_free(fl_table *t);

/* ---- the reduction ----------------------------------------------------------------------------- */

#define FL_LATE_MIN_MS 0.1 /* an arrival less than this after the others' is never "late" */
#define FL_LATE_NOISE 6.0  /* ... nor one within this many times the arrival noise */

typedef struct {
	fl_table ranks, iterations, collectives;
	char *summary_json; /* summary.json's object, without "inputs", "cluster", "tasks", "seconds",
			     * "memory" (the caller's; fl_summary_finish adds them) */
} fl_result;

/* The cross-rank answers from every task's rows (docs/fleet.md).  0, -1 (out of
 * memory). */
int fl_reduce(const fl_plan *p, const fl_rows *rows, fl_result *out);
void fl_result_free(fl_result *r);

/* The text summary `gputap fleet` prints, from summary.json's text and the ranks table; NULL on bad JSON or no memory. */
char *fl_text_summary(const char *summary_json, const fl_table *ranks);

/* The result for the Python package (docs/fleet.md "result"): its summary and the three tables. */
int fl_result_write(const fl_result *r, FILE *f);

#endif
