/*
 * report/page.h — what the report knows of a run (internal to src/report/).
 *
 * Owns: the page's data, filled by report/load.c (run.json, the traces
 * through the analysis' pass, the samplers' CSVs, the library tables) and
 * read by the two views of it: report/html.c (report.html) and
 * report/term.c (the terminal summary).  report.c orders the three.
 * Bounds: MAX_* below; every series is downsampled to MAX_POINTS.
 */
#ifndef GT_REPORT_PAGE_H
#define GT_REPORT_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <yajl/yajl_tree.h>

#include "analyze/analyze.h"
#include "export/holdstat.h"
#include "liblog/libtrace.h"
#include "trace/visit.h"

#define MAX_PROCS 256
#define MAX_LANES 48
#define MAX_SERIES 64 /* lines of one plot: one per GPU (or process and GPU) */
#define MAX_DEVICE 65536 /* device ids the memory plot follows */
#define COLS 1000 /* timeline resolution: one column per pixel of the plot */
#define MAX_POINTS 1500
#define TOP_LIB 25

struct series {
	char name[64];
	double *x, *y;
	size_t n, cap;
};
struct lane {
	int proc;               /* -1: a lane of the analysis, `device` its GPU index */
	uint32_t device, stream;
	uint64_t events;
	double busy_ns;
	uint8_t *cols;  /* the whole GPU activity range */
	uint8_t *zcols; /* the zoomed window (one iteration) */
};

struct libperf_row {
	char *lib, *config, *status, *gain, *rec_us, *best_us, *best_algo, *rec_algo;
};

struct page {
	const char *dir;
	/* traces instead of a run directory: the inputs of the analysis */
	const char *const *inputs;
	int ninputs;
	size_t sink_lane; /* the lane of the last op the analysis handed over */
	/* run.json */
	yajl_val run;
	char run_err[256];
	double run_start_ns;
	/* traces */
	int nprocs;
	char procs[MAX_PROCS][64];
	char trace_err[512];
	uint64_t kernels, copies, memsets, lost;
	double t0, t1; /* GPU activity range, ns */
	double z0, z1; /* zoomed window (z1 > z0 when there is one) */
	char zlabel[128];
	struct lane *lanes;
	size_t nlanes, lanes_dropped;
	struct series mem[MAX_SERIES];
	size_t nmem;
	/* samples */
	struct series power[MAX_SERIES], memused[MAX_SERIES], util[MAX_SERIES];
	size_t npower, nmemused, nutil;
	size_t series_dropped; /* GPUs (or process and GPU) beyond MAX_SERIES: said under the plots */
	char samples_src[128];
	uint64_t samples_dropped; /* values left out of the plots: not finite, negative or absurd */
	/* analysis */
	struct gt_an_result *an;
	char an_err[512];
	/* library */
	struct gt_libcalls *lib;
	char lib_err[512];
	struct libperf_row *perf;
	size_t nperf;
	char *perf_buf;
	char perf_err[256];
	/* launch hold */
	struct gt_holdstat hold;
	/* how traces are read: by whoever converts them too (gputap run), else plainly; the report's
	 * own reader joins the analysis' pass over each trace */
	gt_trace_feed_fn feed;
	void *feed_arg;
	char **visited; /* traces the report's reader has seen (the analysis may read one twice) */
	size_t nvisited;
};


/* ---- report/load.c ---- */
/* The time the page's x axes start from: the run's start, else the first GPU activity. */
double gt_rp_t_base(const struct page *p);
/* A value of run.json as text (numbers formatted), NULL if absent. */
const char *gt_rp_run_str(const struct page *p, const char *key, char *buf, size_t len);
/* The library_perf.csv row of one library config, NULL if none. */
const struct libperf_row *gt_rp_perf_of(const struct page *p, const char *lib, const char *cfg);
/* A run directory: everything it holds (a section whose data are missing says why). */
void gt_rp_load_dir(struct page *p, const char *map_path, const char *const *inputs);
/* Traces: everything from the analysis, which must succeed.  0, or -1 with err. */
int gt_rp_load_traces(struct page *p, const char *map_path, const char *const *inputs, int ninputs, char *err,
		      size_t errlen);
void gt_rp_free(struct page *p);

/* ---- report/html.c ---- */
/* The whole page.  0, or -1 on a write error. */
int gt_rp_write_page(FILE *f, const struct page *p);

/* ---- report/term.c ---- */
/* The terminal summary; `html` is the page's path. */
void gt_rp_summary(FILE *f, const struct page *p, const char *html);

#endif
