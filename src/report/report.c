/* gputap report: read what a run directory holds, print a terminal summary
 * and write DIR/report.html, one self-contained page with inline SVG plots.
 * Every section is shown; one whose data are missing says which file it
 * needed.  Traces are read only through trace/trace_io.h, twice (time range,
 * then drawing), with memory bounded by the number of lanes and pixels. */
#include "report/report.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/containers.h"
#include "core/csvio.h"
#include <yajl/yajl_tree.h>

#include "analyze/analyze.h"
#include "core/log.h"
#include "trace/trace_io.h"
#include "liblog/libtrace.h"
#include "report/rmtable.h"
#include "export/holdstat.h"
#include "report/report_an.h"
#include "report/svg.h"
#include "trace/rundir.h"
#include "core/sort.h"

#define MAX_PROCS 256
#define MAX_LANES 48
#define MAX_SERIES 64 /* lines of one plot: one per GPU (or process and GPU) */
#define MAX_DEVICE 65536 /* device ids the memory plot follows */
#define COLS 1000 /* timeline resolution: one column per pixel of the plot */
#define MAX_POINTS 1500
#define TOP_LIB 25

/* ---------------- small helpers ---------------- */
static int exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

static double num(const char *s)
{
	if (!s || !*s)
		return NAN;
	char *e;
	double v = strtod(s, &e);
	while (*e == ' ')
		e++;
	return *e ? NAN : v;
}

/* ---------------- data of the page ---------------- */
struct series {
	char name[64];
	double *x, *y;
	size_t n, cap;
};

static int series_add(struct series *s, double x, double y)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		double *nx = realloc(s->x, nc * sizeof(double));
		if (!nx)
			return -1;
		s->x = nx;
		double *ny = realloc(s->y, nc * sizeof(double));
		if (!ny)
			return -1;
		s->y = ny;
		s->cap = nc;
	}
	s->x[s->n] = x;
	s->y[s->n] = y;
	s->n++;
	return 0;
}

/* Keep at most MAX_POINTS points: the maximum of each bucket (peaks stay visible). */
static void series_downsample(struct series *s)
{
	if (s->n <= MAX_POINTS)
		return;
	size_t per = (s->n + MAX_POINTS - 1) / MAX_POINTS, o = 0;
	for (size_t i = 0; i < s->n; i += per) {
		size_t best = i;
		for (size_t j = i; j < i + per && j < s->n; j++)
			if (s->y[j] > s->y[best] || isnan(s->y[best]))
				best = j;
		s->x[o] = s->x[i];
		s->y[o] = s->y[best];
		o++;
	}
	s->n = o;
}

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

static double t_base(const struct page *p)
{
	if (p->run_start_ns > 0)
		return p->run_start_ns;
	return p->t0 > 0 ? p->t0 : 0;
}

/* ---------------- run.json ---------------- */
static void load_run(struct page *p)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/run.json", p->dir);
	struct stat sb;
	char *text = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? gt_read_file(path, NULL) : NULL;
	if (!text) {
		int e = errno;
		if (stat(path, &sb) < 0)
			snprintf(p->run_err, sizeof(p->run_err), "run.json not found");
		else if (S_ISDIR(sb.st_mode))
			snprintf(p->run_err, sizeof(p->run_err), "run.json: is a folder, not a file");
		else
			snprintf(p->run_err, sizeof(p->run_err), "run.json: %s",
				 S_ISREG(sb.st_mode) ? strerror(e) : "not a plain file");
		return;
	}
	char yerr[256] = "";
	p->run = yajl_tree_parse(text, yerr, sizeof(yerr));
	free(text);
	if (!p->run) {
		snprintf(p->run_err, sizeof(p->run_err), "run.json could not be read: %.200s", yerr);
		return;
	}
	const char *k[] = {"start_ns", NULL};
	yajl_val v = yajl_tree_get(p->run, k, yajl_t_number);
	if (v)
		p->run_start_ns = YAJL_GET_DOUBLE(v);
}

static const char *run_str(const struct page *p, const char *key, char *buf, size_t len)
{
	if (!p->run)
		return NULL;
	const char *k[] = {key, NULL};
	yajl_val v = yajl_tree_get(p->run, k, yajl_t_any);
	if (!v || YAJL_IS_NULL(v))
		return NULL;
	if (YAJL_IS_STRING(v))
		return YAJL_GET_STRING(v);
	if (YAJL_IS_NUMBER(v)) {
		snprintf(buf, len, "%s", YAJL_GET_NUMBER(v));
		return buf;
	}
	if (YAJL_IS_TRUE(v))
		return "true";
	if (YAJL_IS_FALSE(v))
		return "false";
	return NULL;
}

/* ---------------- traces ---------------- */
static void find_procs(struct page *p)
{
	struct gt_rundir_proc *v;
	int n = gt_rundir_procs(p->dir, &v);
	for (int i = 0; i < n && p->nprocs < MAX_PROCS; i++)
		if (v[i].trace[0])
			snprintf(p->procs[p->nprocs++], sizeof(p->procs[0]), "%s", v[i].name);
	if (n > 0)
		free(v);
}

static struct lane *get_lane(struct page *p, int proc, uint32_t dev, uint32_t stream)
{
	for (size_t i = p->nlanes; i-- > 0;)
		if (p->lanes[i].proc == proc && p->lanes[i].device == dev && p->lanes[i].stream == stream)
			return &p->lanes[i];
	if (p->nlanes % 16 == 0) {
		struct lane *nl = realloc(p->lanes, (p->nlanes + 16) * sizeof(*nl));
		if (!nl)
			return NULL;
		p->lanes = nl;
	}
	struct lane *l = &p->lanes[p->nlanes++];
	memset(l, 0, sizeof(*l));
	l->proc = proc, l->device = dev, l->stream = stream;
	return l;
}

static int lane_cmp(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;
	if (x->proc != y->proc)
		return x->proc - y->proc;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int busy_cmp(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;
	return x->busy_ns < y->busy_ns ? 1 : x->busy_ns > y->busy_ns ? -1 : 0;
}

/* Zoom on one iteration (the second when there are three or more: the first is often warm-up). */
static void choose_zoom(struct page *p, const struct gt_an_result *an)
{
	if (!an)
		return;
	for (size_t i = 0; i < an->ngpu; i++) {
		const struct gt_an_gpu *g = &an->gpu[i];
		if (!g->niters)
			continue;
		size_t it = g->niters >= 3 ? 1 : 0;
		if (g->iters[it].end_ns <= g->iters[it].start_ns)
			continue;
		p->z0 = (double)g->iters[it].start_ns;
		p->z1 = (double)g->iters[it].end_ns;
		snprintf(p->zlabel, sizeof(p->zlabel), "iteration %zu of %s", it + 1, g->label);
		return;
	}
}

/* The column of time t in a window starting at w0: clamped as a double first, since casting NaN
 * or a value beyond a long (a window too small to divide by, times near 2^64) is undefined. */
static long col_at(double t, double w0, double span)
{
	double c = (t - w0) / span * COLS;
	if (!(c > 0))
		return 0;
	return c >= COLS - 1 ? COLS - 1 : (long)c;
}

static void mark(uint8_t *cols, double w0, double w1, uint64_t s, uint64_t e, int kind)
{
	if ((double)e < w0 || (double)s > w1)
		return;
	double span = w1 - w0;
	if (!(span > 0))
		span = 1;
	long c0 = col_at((double)s, w0, span), c1 = col_at((double)e, w0, span);
	/* kernels are drawn over copies, copies over memsets */
	uint8_t v = (uint8_t)(3 - kind);
	for (long c = c0; c <= c1; c++)
		if (cols[c] < v)
			cols[c] = v;
}

/* At most MAX_LANES lanes, the busiest, in (process, GPU, stream) order. */
static void keep_busiest(struct page *p)
{
	if (p->nlanes > MAX_LANES) {
		gt_sort(p->lanes, p->nlanes, sizeof(*p->lanes), busy_cmp);
		for (size_t i = MAX_LANES; i < p->nlanes; i++) {
			free(p->lanes[i].cols);
			free(p->lanes[i].zcols);
		}
		p->lanes_dropped = p->nlanes - MAX_LANES;
		p->nlanes = MAX_LANES;
	}
	gt_sort(p->lanes, p->nlanes, sizeof(*p->lanes), lane_cmp);
}

/* Traces other than a run's: the lanes are drawn from the analysis' sweep of every GPU op (one
 * pass; the columns of every stream are kept, then the busiest lanes). */
static void sink_begin(void *arg, const struct gt_an_result *r, uint64_t first, uint64_t last)
{
	struct page *p = arg;
	p->t0 = (double)first;
	p->t1 = last > first ? (double)last : (double)first + 1;
	choose_zoom(p, r);
}

static void sink_op(void *arg, size_t gpu, uint32_t stream, uint64_t s, uint64_t e, int kind, int comm)
{
	struct page *p = arg;
	(void)comm;
	struct lane *l = p->sink_lane < p->nlanes ? &p->lanes[p->sink_lane] : NULL;
	if (!l || l->device != gpu || l->stream != stream) { /* ops of one stream come in runs */
		if (!(l = get_lane(p, -1, (uint32_t)gpu, stream)))
			return;
		p->sink_lane = (size_t)(l - p->lanes);
	}
	if (!l->cols && !(l->cols = calloc(COLS, 1)))
		return;
	if (p->z1 > p->z0 && !l->zcols && !(l->zcols = calloc(COLS, 1)))
		return;
	l->events++;
	l->busy_ns += (double)(e - s);
	if (kind == 0)
		p->kernels++;
	else if (kind == 1)
		p->copies++;
	else
		p->memsets++;
	mark(l->cols, p->t0, p->t1, s, e, kind);
	if (l->zcols)
		mark(l->zcols, p->z0, p->z1, s, e, kind);
}

/* The report's own reader of a run's trace, in the analysis' pass over it (one read): records lost,
 * launch hold, device memory in use over time per process and GPU.  The GPU lanes come from the
 * analysis' sweep (sink_op). */
struct trace_rd {
	struct page *p;
	char proc[64];
	struct gt_map live; /* address -> bytes */
	double *used;       /* per device: bytes in use */
	long *memidx;       /* per device: index into p->mem + 1, 0 none, -1 dropped */
	size_t ndev;
};

static int rd_any(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_hdr *h)
{
	struct trace_rd *t = ctx;
	if (h->type == GT_REC_DROPPED)
		t->p->lost += ((const struct gt_rec_dropped *)h)->count;
	return gt_holdstat_record(&t->p->hold, r, h);
}

static int rd_memory(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_memory *m)
{
	(void)r;
	struct trace_rd *t = ctx;
	struct page *p = t->p;
	if (m->device >= MAX_DEVICE || (m->op != GT_MEM_ALLOC && m->op != GT_MEM_FREE))
		return 0;
	if (m->device >= t->ndev) {
		size_t nd = (size_t)m->device + 1;
		double *nu = realloc(t->used, nd * sizeof(*nu));
		if (!nu)
			return -1;
		t->used = nu;
		long *nm = realloc(t->memidx, nd * sizeof(*nm));
		if (!nm)
			return -1;
		t->memidx = nm;
		for (size_t d = t->ndev; d < nd; d++)
			t->used[d] = 0, t->memidx[d] = 0;
		t->ndev = nd;
	}
	if (m->op == GT_MEM_ALLOC) {
		uint64_t *b = gt_map_put(&t->live, m->address, NULL);
		if (b)
			*b = m->bytes;
		t->used[m->device] += (double)m->bytes;
	} else {
		uint64_t *b = gt_map_get(&t->live, m->address);
		uint64_t bytes = m->bytes ? m->bytes : b ? *b : 0;
		if (b)
			*b = 0;
		t->used[m->device] -= (double)bytes;
	}
	if (t->memidx[m->device] == 0) {
		if (p->nmem < MAX_SERIES) {
			t->memidx[m->device] = (long)++p->nmem;
			snprintf(p->mem[p->nmem - 1].name, sizeof(p->mem[0].name), "%s gpu%u", t->proc, m->device);
		} else {
			t->memidx[m->device] = -1;
			p->series_dropped++;
		}
	}
	if (t->memidx[m->device] > 0) {
		/* a step: the old value up to this instant, then the new one (x in ns until the time
		 * base is known, after the pass) */
		struct series *ms = &p->mem[t->memidx[m->device] - 1];
		double x = (double)m->ts_ns;
		series_add(ms, x, ms->n ? ms->y[ms->n - 1] : 0);
		series_add(ms, x, t->used[m->device] / 1048576.0);
	}
	return 0;
}

static void rd_release(void *ctx)
{
	struct trace_rd *t = ctx;
	gt_map_free(&t->live);
	free(t->used);
	free(t->memidx);
	free(t);
}

static int rd_end(void *ctx, const struct gt_trace_reader *r)
{
	struct trace_rd *t = ctx;
	t->p->lost += r->hdr.lost_records + r->hdr.cupti_dropped;
	gt_holdstat_end_trace(&t->p->hold);
	rd_release(t);
	return 0;
}

static const struct gt_trace_ops rd_ops = {.any = rd_any, .memory = rd_memory, .end = rd_end, .release = rd_release};

struct rd_join {
	gt_trace_join_fn inner;
	void *inner_arg;
	struct page *p;
	const char *path;
};

static int report_join(void *arg, const struct gt_trace_reader *r, struct gt_trace_visitor *v, size_t *nv)
{
	struct rd_join *j = arg;
	struct page *p = j->p;
	if (j->inner(j->inner_arg, r, v, nv) < 0)
		return -1;
	for (size_t i = 0; i < p->nvisited; i++)
		if (strcmp(p->visited[i], j->path) == 0)
			return 0; /* the analysis reads it again: the report has what it needs */
	char **nvs = realloc(p->visited, (p->nvisited + 1) * sizeof(*nvs));
	if (!nvs)
		return -1;
	p->visited = nvs;
	struct trace_rd *t = calloc(1, sizeof(*t));
	if (!t || !(p->visited[p->nvisited] = strdup(j->path))) {
		free(t);
		return -1;
	}
	p->nvisited++;
	t->p = p;
	snprintf(t->proc, sizeof(t->proc), "%s", r->hdr.proc[0] ? r->hdr.proc : "?");
	v[(*nv)++] = (struct gt_trace_visitor){&rd_ops, t};
	return 0;
}

static int report_feed(void *arg, const char *path, gt_trace_join_fn join, void *join_arg, char *err, size_t errlen)
{
	struct page *p = arg;
	struct rd_join j = {join, join_arg, p, path};
	return p->feed(p->feed_arg, path, report_join, &j, err, errlen);
}

/* After the pass: memory series on the page's time axis, lanes kept and ordered. */
static void traces_done(struct page *p)
{
	double base = t_base(p);
	for (size_t i = 0; i < p->nmem; i++) {
		for (size_t k = 0; k < p->mem[i].n; k++)
			p->mem[i].x[k] = (p->mem[i].x[k] - base) / 1e9;
		series_downsample(&p->mem[i]);
	}
	gt_holdstat_sort(&p->hold);
	keep_busiest(p);
	if (p->nprocs && !p->nlanes && !p->trace_err[0])
		snprintf(p->trace_err, sizeof(p->trace_err), "%s", p->an ? "the traces hold no GPU work" : p->an_err);
}

/* ---------------- samples ---------------- */
/* The largest sample value a plot takes (W, MiB, %: far beyond any real one) and the largest time
 * offset from the run's start (about 30 years); anything else is left out and counted. */
#define SAMPLE_MAX 1e12
#define SAMPLE_T_MAX 1e9

static void sample_add(struct page *p, struct series *s, double x, double y)
{
	if (!isfinite(x) || fabs(x) > SAMPLE_T_MAX || !isfinite(y) || y < 0 || y > SAMPLE_MAX)
		p->samples_dropped++;
	else
		series_add(s, x, y);
}

/* A device column: an integer id, else -1 (the row's values are left out). */
static int sample_device(struct page *p, const char *file, long line, const char *v)
{
	double d = num(v);
	if (d >= 0 && d <= 2147483647.0 && d == floor(d))
		return (int)d;
	gt_warn("%s/%s:%ld: device %s is not a device id; the row is left out of the plots", p->dir, file, line, v);
	p->samples_dropped++;
	return -1;
}

static void samples_done(struct page *p, const char *file, uint64_t dropped0)
{
	if (p->samples_dropped > dropped0)
		gt_warn("%s/%s: %llu values left out of the plots (not finite, negative, above %.0e, or a time more "
			"than %.0e s from the start)",
			p->dir, file, (unsigned long long)(p->samples_dropped - dropped0), SAMPLE_MAX, SAMPLE_T_MAX);
}

static struct series *dev_series(struct page *p, struct series *arr, size_t *n, const char *what, int dev)
{
	char name[64];
	snprintf(name, sizeof(name), "%s gpu%d", what, dev);
	for (size_t i = 0; i < *n; i++)
		if (strcmp(arr[i].name, name) == 0)
			return &arr[i];
	if (*n >= MAX_SERIES) {
		p->series_dropped++;
		return NULL;
	}
	struct series *s = &arr[(*n)++];
	snprintf(s->name, sizeof(s->name), "%s", name);
	return s;
}

static void load_gpu_samples(struct page *p)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/gpu_samples.csv", p->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	int ct = -1, cd = -1, cp = -1, cm = -1, cu = -1, header = 1;
	long lineno = 0;
	uint64_t dropped0 = p->samples_dropped;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		char *fl[32];
		int nf = gt_csv_split(line, fl, 32);
		if (nf < 1)
			continue; /* malformed quoting: skip the row */
		if (header) {
			for (int i = 0; i < nf; i++) {
				if (!strcmp(fl[i], "time_ns"))
					ct = i;
				else if (!strcmp(fl[i], "device"))
					cd = i;
				else if (!strcmp(fl[i], "power_W"))
					cp = i;
				else if (!strcmp(fl[i], "mem_used_MiB"))
					cm = i;
				else if (!strcmp(fl[i], "sm_util_pct"))
					cu = i;
			}
			header = 0;
			if (ct < 0)
				break;
			continue;
		}
		double t = ct < nf ? num(fl[ct]) : NAN;
		int dev = cd >= 0 && cd < nf ? sample_device(p, "gpu_samples.csv", lineno, fl[cd]) : 0;
		if (isnan(t) || dev < 0)
			continue;
		double x = (t - t_base(p)) / 1e9;
		if (t_base(p) <= 0)
			x = t / 1e9;
		struct series *s;
		if (cp >= 0 && cp < nf && !isnan(num(fl[cp])) && (s = dev_series(p, p->power, &p->npower, "power", dev)))
			sample_add(p, s, x, num(fl[cp]));
		if (cm >= 0 && cm < nf && !isnan(num(fl[cm])) &&
		    (s = dev_series(p, p->memused, &p->nmemused, "memory used", dev)))
			sample_add(p, s, x, num(fl[cm]));
		if (cu >= 0 && cu < nf && !isnan(num(fl[cu])) && (s = dev_series(p, p->util, &p->nutil, "SM busy", dev)))
			sample_add(p, s, x, num(fl[cu]));
	}
	free(line);
	fclose(f);
	samples_done(p, "gpu_samples.csv", dropped0);
	snprintf(p->samples_src, sizeof(p->samples_src), "gpu_samples.csv");
}

/* madengine's power / vram CSVs: time, then one column per GPU. */
static void load_sampler_csv(struct page *p, const char *file, struct series *arr, size_t *n, const char *what)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", p->dir, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	int header = 1, ncol = 0;
	double first = NAN;
	size_t row = 0;
	struct series *cols[MAX_SERIES] = {0};
	uint64_t dropped0 = p->samples_dropped;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\r\n")] = 0;
		char *fl[MAX_SERIES + 1];
		int nf = gt_csv_split(line, fl, MAX_SERIES + 1);
		if (nf < 1)
			continue; /* malformed quoting: skip the row */
		if (header) {
			ncol = nf;
			for (int i = 1; i < nf && i <= MAX_SERIES; i++) {
				const char *g = strstr(fl[i], "GPU");
				long dev = g ? strtol(g + 3, NULL, 10) : i - 1;
				cols[i - 1] = dev >= 0 && dev <= 2147483647L ? dev_series(p, arr, n, what, (int)dev) : NULL;
			}
			header = 0;
			continue;
		}
		double t = num(fl[0]);
		if (isnan(first))
			first = t;
		double x = isnan(t) ? (double)row : t - first;
		row++;
		for (int i = 1; i < nf && i < ncol && i <= MAX_SERIES; i++)
			if (cols[i - 1] && !isnan(num(fl[i])))
				sample_add(p, cols[i - 1], x, num(fl[i]));
	}
	free(line);
	fclose(f);
	samples_done(p, file, dropped0);
	if (!p->samples_src[0])
		snprintf(p->samples_src, sizeof(p->samples_src), "%s", file);
}

/* ---------------- analysis (classes, iterations) ---------------- */

static void load_analysis(struct page *p, const char *map_path, const char *const *inputs, int ninputs)
{
	struct gt_an_map *m = NULL;
	char err[512];
	int rc = map_path ? gt_an_map_load(&m, map_path, err, sizeof(err)) : 0; /* NULL: analyze's default map */
	if (rc < 0) {
		snprintf(p->an_err, sizeof(p->an_err), "%s", err);
		return;
	}
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	o.map = m;
	o.buckets = 100; /* the plots over time */
	struct gt_an_sink sink = {p, sink_begin, sink_op};
	o.sink = &sink;
	if (!p->inputs) { /* a run directory: the report's reader joins the pass over each trace */
		o.gtr_feed = report_feed;
		o.gtr_feed_arg = p;
	}
	if (gt_an_run(inputs, ninputs, &o, &p->an, err, sizeof(err)) < 0) {
		snprintf(p->an_err, sizeof(p->an_err), "%s", err);
		p->an = NULL;
	}
	gt_an_map_free(m);
}

/* ---------------- library tables ---------------- */
static void load_lib(struct page *p)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/library_trace.csv", p->dir);
	if (!exists(path)) {
		snprintf(p->lib_err, sizeof(p->lib_err), "library_trace.csv not found (run with --tools "
							 "cublas_trace,cublaslt_trace,cudnn_trace,nccl_trace)");
	} else {
		p->lib = gt_libcalls_new();
		if (p->lib && gt_libcalls_read_csv(path, p->lib, p->lib_err, sizeof(p->lib_err)) < 0) {
			gt_libcalls_free(p->lib);
			p->lib = NULL;
		}
	}
	snprintf(path, sizeof(path), "%s/library_perf.csv", p->dir);
	p->perf_buf = gt_read_file(path, NULL);
	if (!p->perf_buf)
		return;
	int col[8];
	static const char *const names[8] = {"library", "config", "status", "gain_pct",
					     "recorded_us", "best_us", "best_algo", "recorded_algo"};
	for (int i = 0; i < 8; i++)
		col[i] = -1;
	char *save = NULL;
	int header = 1;
	size_t cap = 0;
	for (char *line = strtok_r(p->perf_buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, "\r")] = 0;
		char *fl[32];
		int nf = gt_csv_split(line, fl, 32);
		if (nf < 1)
			continue; /* malformed quoting: skip the row */
		if (header) {
			for (int i = 0; i < nf; i++)
				for (int j = 0; j < 8; j++)
					if (!strcmp(fl[i], names[j]))
						col[j] = i;
			header = 0;
			if (col[0] < 0 || col[1] < 0) {
				snprintf(p->perf_err, sizeof(p->perf_err), "library_perf.csv has no library/config header");
				return;
			}
			continue;
		}
		if (p->nperf == cap) {
			cap = cap ? cap * 2 : 32;
			struct libperf_row *nr = realloc(p->perf, cap * sizeof(*nr));
			if (!nr)
				return;
			p->perf = nr;
		}
		char *v[8];
		for (int j = 0; j < 8; j++)
			v[j] = col[j] >= 0 && col[j] < nf ? fl[col[j]] : "";
		p->perf[p->nperf++] = (struct libperf_row){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
	}
}

static const struct libperf_row *perf_of(const struct page *p, const char *lib, const char *cfg)
{
	for (size_t i = 0; i < p->nperf; i++)
		if (!strcmp(p->perf[i].lib, lib) && !strcmp(p->perf[i].config, cfg))
			return &p->perf[i];
	return NULL;
}

/* ---------------- the page ---------------- */
static void absent(FILE *f, const char *why)
{
	gt_html_absent(f, why);
}

static void kv_row(FILE *f, const char *k, const char *v)
{
	fputs("<tr><th>", f);
	gt_html_esc(f, k);
	fputs("</th><td>", f);
	gt_html_esc(f, v ? v : "unknown");
	fputs("</td></tr>\n", f);
}

static const char css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;max-width:1160px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;"
	"padding-bottom:4px}.sub{color:#666;font-size:13px}table{border-collapse:collapse;font-size:13px}"
	"td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}"
	"th{color:#555;font-weight:600;white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"code{font-size:12px;word-break:break-all}.absent{color:#a05a00;background:#fff6e5;padding:6px 10px;"
	"border-radius:4px;font-size:13px}.note{color:#666;font-size:12px}"
	"svg.plot{display:block;margin:6px 0;font-size:11px}svg .pt{font-size:13px;font-weight:600}"
	"svg .frame{fill:none;stroke:#bbb}svg .grid{stroke:#eee}svg .yt{text-anchor:end;fill:#555}"
	"svg .xt{text-anchor:middle;fill:#555}svg .xl{text-anchor:middle;fill:#333}svg .yl{text-anchor:middle;"
	"fill:#333}svg .bl{text-anchor:end;fill:#333}svg .bv{fill:#333}svg .lg{fill:#333}"
	"svg .ln{fill:none;stroke-width:1.5}svg .lane{fill:#f4f4f4}";

/* The inputs of a page of traces: each file, and what the analysis found in them. */
static void sec_inputs(FILE *f, const struct page *p)
{
	fputs("<h2 id=\"run\">Inputs</h2>\n<table>\n", f);
	for (int i = 0; i < p->ninputs; i++) {
		char k[32];
		snprintf(k, sizeof(k), "input %d", i + 1);
		kv_row(f, k, p->inputs[i]);
	}
	if (p->an) {
		char b[128];
		snprintf(b, sizeof(b), "%zu", p->an->ngpu);
		kv_row(f, "GPUs (ranks × devices)", b);
		if (p->an->iter_source[0] && strcmp(p->an->iter_source, "none") != 0)
			snprintf(b, sizeof(b), "%d per GPU at most (%s)", p->an->iters, p->an->iter_source);
		else
			snprintf(b, sizeof(b), "none found (no NVTX range or ProfilerStep)");
		kv_row(f, "iterations", b);
		for (size_t i = 0; i < p->an->nnotes; i++)
			kv_row(f, "note", p->an->notes[i]);
	}
	fputs("</table>\n<p class=\"note\">Traces, not a gputap run directory: no run.json, power and memory "
	      "samples or library calls.</p>\n",
	      f);
}

static void sec_run(FILE *f, const struct page *p)
{
	if (p->inputs) {
		sec_inputs(f, p);
		return;
	}
	fputs("<h2 id=\"run\">Run</h2>\n", f);
	if (!p->run) {
		absent(f, p->run_err);
		return;
	}
	char b[64], b2[64];
	fputs("<table>\n", f);
	kv_row(f, "command", run_str(p, "command", b, sizeof(b)));
	kv_row(f, "host", run_str(p, "host", b, sizeof(b)));
	kv_row(f, "start", run_str(p, "start", b, sizeof(b)));
	const char *w = run_str(p, "wall_s", b, sizeof(b));
	if (w)
		snprintf(b2, sizeof(b2), "%.3f s", atof(w));
	kv_row(f, "duration", w ? b2 : NULL);
	const char *sig = run_str(p, "signal", b2, sizeof(b2));
	char st[96];
	const char *es = run_str(p, "exit_status", b, sizeof(b));
	if (sig)
		snprintf(st, sizeof(st), "killed by %s", sig);
	else
		snprintf(st, sizeof(st), "%s", es ? es : "unknown (the run did not finish)");
	kv_row(f, "exit status", st);
	kv_row(f, "driver", run_str(p, "driver_version", b, sizeof(b)));
	kv_row(f, "CUDA (driver)", run_str(p, "cuda_driver_version", b, sizeof(b)));
	const char *gk[] = {"gpus", NULL};
	yajl_val g = yajl_tree_get(p->run, gk, yajl_t_array);
	fputs("<tr><th>GPUs</th><td>", f);
	if (!g || !YAJL_GET_ARRAY(g)->len)
		fputs("none recorded", f);
	for (size_t i = 0; g && i < YAJL_GET_ARRAY(g)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(g)->values[i];
		const char *nk[] = {"name", NULL}, *mk[] = {"memory_total_bytes", NULL};
		yajl_val n = yajl_tree_get(e, nk, yajl_t_string), m = yajl_tree_get(e, mk, yajl_t_number);
		char mb[32] = "";
		if (m)
			gt_fmt_bytes(mb, sizeof(mb), YAJL_GET_DOUBLE(m));
		fprintf(f, "%s%zu: ", i ? "<br>" : "", i);
		gt_html_esc(f, n ? YAJL_GET_STRING(n) : "?");
		if (mb[0])
			fprintf(f, " (%s)", mb);
	}
	fputs("</td></tr>\n<tr><th>tools</th><td>", f);
	const char *tk[] = {"tools", NULL};
	yajl_val t = yajl_tree_get(p->run, tk, yajl_t_array);
	for (size_t i = 0; t && i < YAJL_GET_ARRAY(t)->len; i++) {
		const char *nk[] = {"name", NULL};
		yajl_val n = yajl_tree_get(YAJL_GET_ARRAY(t)->values[i], nk, yajl_t_string);
		if (n) {
			fputs(i ? ", " : "", f);
			gt_html_esc(f, YAJL_GET_STRING(n));
		}
	}
	fputs("</td></tr>\n</table>\n", f);
}

/* The lanes' columns of one window as spans; returns the number of rectangles. */
static size_t draw_lanes(FILE *f, const struct page *p, int zoom, double w0, double w1, const char *title,
			 const char *xlabel)
{
	struct gt_tl_lane *tl = calloc(p->nlanes, sizeof(*tl));
	if (!tl)
		return 0;
	double colw = (w1 - w0) / COLS;
	size_t rects = 0;
	for (size_t i = 0; i < p->nlanes; i++) {
		const struct lane *l = &p->lanes[i];
		const uint8_t *cols = zoom ? l->zcols : l->cols;
		snprintf(tl[i].label, sizeof(tl[i].label), "%s stream %u",
			 p->an && l->device < p->an->ngpu ? p->an->gpu[l->device].label : "?", l->stream);
		tl[i].events = l->events;
		if (!cols)
			continue;
		for (int c = 0; c < COLS;) {
			if (!cols[c]) {
				c++;
				continue;
			}
			int e = c;
			while (e + 1 < COLS && cols[e + 1] == cols[c])
				e++;
			if (tl[i].n == tl[i].cap) {
				tl[i].cap = tl[i].cap ? tl[i].cap * 2 : 32;
				struct gt_tl_span *ns = realloc(tl[i].spans, tl[i].cap * sizeof(*ns));
				if (!ns)
					break;
				tl[i].spans = ns;
			}
			tl[i].spans[tl[i].n++] = (struct gt_tl_span){w0 + c * colw, w0 + (e + 1) * colw, (uint8_t)(3 - cols[c])};
			rects++;
			c = e + 1;
		}
	}
	gt_svg_timeline(f, title, tl, p->nlanes, w0, w1, xlabel);
	for (size_t i = 0; i < p->nlanes; i++)
		free(tl[i].spans);
	free(tl);
	return rects;
}

static void sec_timeline(FILE *f, const struct page *p)
{
	fputs("<h2 id=\"timeline\">GPU streams over time</h2>\n", f);
	if (p->nlanes == 0) {
		absent(f, p->trace_err[0] ? p->trace_err : "the traces hold no kernel, copy or memset");
		return;
	}
	double span = p->t1 - p->t0;
	char b[32];
	gt_fmt_ns(b, sizeof(b), span);
	fprintf(f, "<p class=\"note\">%llu kernels, %llu copies, %llu memsets over %s on %zu streams, drawn at one "
		   "column per %.3g us.%s</p>\n",
		(unsigned long long)p->kernels, (unsigned long long)p->copies, (unsigned long long)p->memsets, b,
		p->nlanes + p->lanes_dropped, span / COLS / 1e3,
		p->lanes_dropped ? " Only the busiest streams are shown." : "");
	draw_lanes(f, p, 0, p->t0, p->t1, "whole run", "time since first GPU activity (s)");
	if (p->z1 > p->z0) {
		char title[192];
		gt_fmt_ns(b, sizeof(b), p->z1 - p->z0);
		snprintf(title, sizeof(title), "%s (%s)", p->zlabel, b);
		draw_lanes(f, p, 1, p->z0, p->z1, title, "time since the iteration's start (s)");
	}
}

static int stat_cmp(const void *a, const void *b)
{
	const struct gt_bar *x = a, *y = b;
	return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

static void sec_classes(FILE *f, const struct page *p)
{
	fputs("<h2 id=\"classes\">GPU time by kernel class</h2>\n", f);
	if (!p->an) {
		absent(f, p->an_err[0] ? p->an_err : "no analysis");
		return;
	}
	size_t n = p->an->nclasses + (p->an->nnccl ? 1 : 0);
	struct gt_bar *b = calloc(n ? n : 1, sizeof(*b));
	char(*notes)[48] = calloc(n ? n : 1, 48);
	if (!b || !notes) {
		free(b);
		free(notes);
		return;
	}
	size_t k = 0;
	double total = p->an->kernel_time_ns + p->an->nccl_time_ns;
	for (size_t i = 0; i < p->an->nclasses; i++)
		if (p->an->classes[i].time_ns > 0)
			b[k++] = (struct gt_bar){p->an->classes[i].name, p->an->classes[i].time_ns / 1e6, NULL};
	if (p->an->nccl_time_ns > 0)
		b[k++] = (struct gt_bar){"nccl (communication)", p->an->nccl_time_ns / 1e6, NULL};
	gt_sort(b, k, sizeof(*b), stat_cmp);
	for (size_t i = 0; i < k; i++) {
		snprintf(notes[i], 48, "%.4g ms (%.1f%%)", b[i].value, total > 0 ? b[i].value * 1e6 / total * 100 : 0);
		b[i].note = notes[i];
	}
	if (k == 0)
		absent(f, "the run recorded no kernel");
	else
		gt_svg_hbars(f, "kernel time by class (all GPUs)", b, k, "ms");
	free(b);
	free(notes);
}

/* The stacked bars of one GPU's iterations (g), or of every GPU's whole run (g NULL). */
static void iter_plot(FILE *f, const struct page *p, const struct gt_an_gpu *g)
{
	size_t nb = g ? g->niters : p->an->ngpu;
	if (nb > 200)
		nb = 200;
	static const char *const cats[4] = {"compute", "exposed communication", "memory ops and other", "idle"};
	static const char *const cols[4] = {"#4e79a7", "#e15759", "#f28e2b", "#d0d0d0"};
	double *v = calloc(nb * 4, sizeof(double));
	char(*labels)[80] = calloc(nb, 80);
	const char **lp = calloc(nb, sizeof(char *));
	if (!v || !labels || !lp)
		goto out;
	for (size_t i = 0; i < nb; i++) {
		const struct gt_an_window *w = g ? &g->iters[i] : &p->an->gpu[i].total;
		v[i * 4 + 0] = w->compute_ns / 1e6;
		v[i * 4 + 1] = w->exposed_ns / 1e6;
		v[i * 4 + 2] = fmax(0, w->non_compute_ns - w->exposed_ns) / 1e6;
		v[i * 4 + 3] = w->idle_ns / 1e6;
		if (g)
			snprintf(labels[i], 80, "%zu", i + 1);
		else
			snprintf(labels[i], 80, "%s", p->an->gpu[i].label);
		lp[i] = labels[i];
	}
	if (g)
		fprintf(f, "<p class=\"note\">%s, %zu iterations (from %s)%s.</p>\n", g->label, g->niters,
			p->an->iter_source, g->niters > nb ? "; the first 200 are shown" : "");
	else
		fputs("<p class=\"note\">No iteration boundaries were found (no NVTX ranges or ProfilerStep); each bar "
		      "is one GPU over the whole run.</p>\n",
		      f);
	char title[128];
	snprintf(title, sizeof(title), g ? "GPU time per iteration: %s" : "GPU time per GPU", g ? g->label : "");
	gt_svg_stacked(f, title, lp, nb, cats, cols, 4, v, "ms");
out:
	free(v);
	free(labels);
	free(lp);
}

#define MAX_ITER_PLOTS 8

static void sec_iters(FILE *f, const struct page *p)
{
	fputs("<h2 id=\"iterations\">Per-iteration breakdown</h2>\n", f);
	if (!p->an) {
		absent(f, p->an_err[0] ? p->an_err : "no analysis");
		return;
	}
	if (!p->an->has_timeline || p->an->ngpu == 0) {
		absent(f, "the inputs have no GPU timeline");
		return;
	}
	/* the iterations of each GPU that has them (the first 8), or every GPU's whole run */
	size_t drawn = 0, with = 0;
	for (size_t i = 0; i < p->an->ngpu; i++)
		if (p->an->gpu[i].niters && with++ < MAX_ITER_PLOTS) {
			iter_plot(f, p, &p->an->gpu[i]);
			drawn++;
		}
	if (!drawn)
		iter_plot(f, p, NULL);
	else if (with > drawn)
		fprintf(f, "<p class=\"note\">The first %zu of %zu GPUs with iterations are drawn.</p>\n", drawn, with);
}

static void lines_section(FILE *f, const char *title, const char *ylabel, const struct series *s, size_t n)
{
	struct gt_series gs[MAX_SERIES];
	for (size_t i = 0; i < n && i < MAX_SERIES; i++)
		gs[i] = (struct gt_series){s[i].name, s[i].x, s[i].y, s[i].n};
	gt_svg_lines(f, title, ylabel, gs, n < MAX_SERIES ? n : MAX_SERIES);
}

static void sec_power(FILE *f, const struct page *p)
{
	fputs("<h2 id=\"power\">Power and memory over time</h2>\n", f);
	if (p->inputs) {
		absent(f, "power and memory samples come from a gputap run directory (gpu_samples.csv, the sampler CSVs); "
			  "the inputs are traces");
		return;
	}
	if (p->npower)
		lines_section(f, "GPU power", "W", p->power, p->npower);
	else
		absent(f, "no power samples (gpu_samples.csv or gpu_info_power_profiler_output.csv; run with --tools "
			  "gpu_info_power_profiler)");
	if (p->nmemused)
		lines_section(f, p->memused[0].name[0] == 'm' ? "GPU memory used (driver view)" : "GPU memory (vram %)",
			      strncmp(p->memused[0].name, "vram", 4) == 0 ? "% of total" : "MiB", p->memused, p->nmemused);
	else
		absent(f, "no memory samples (gpu_samples.csv or gpu_info_vram_profiler_output.csv)");
	if (p->nmem)
		lines_section(f, "device memory allocated by the program (from the trace)", "MiB", p->mem, p->nmem);
	else
		absent(f, p->nprocs ? "the traces hold no allocation record" : "no trace");
	if (p->nutil)
		lines_section(f, "SM busy (sampled)", "%", p->util, p->nutil);
	if (p->samples_src[0])
		fprintf(f, "<p class=\"note\">Samples from %s.</p>\n", p->samples_src);
	if (p->series_dropped)
		fprintf(f, "<p class=\"note\">Each plot draws at most %d lines (GPUs); %zu more were left out.</p>\n",
			MAX_SERIES, p->series_dropped);
}

static void sec_lib(FILE *f, const struct page *p)
{
	fputs("<h2 id=\"library\">Library calls</h2>\n", f);
	if (!p->lib) {
		absent(f, p->lib_err);
		return;
	}
	const struct gt_libcall_row *rows;
	size_t n = gt_libcalls_rows(p->lib, &rows);
	if (n == 0) {
		absent(f, "library_trace.csv lists no call");
		return;
	}
	/* most-called first, whatever the library */
	const struct gt_libcall_row **top = calloc(n, sizeof(*top));
	if (!top)
		return;
	for (size_t i = 0; i < n; i++)
		top[i] = &rows[i];
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && top[j]->calls > top[j - 1]->calls; j--) {
			const struct gt_libcall_row *t = top[j];
			top[j] = top[j - 1];
			top[j - 1] = t;
		}
	size_t shown = n < TOP_LIB ? n : TOP_LIB;
	struct gt_bar bars[TOP_LIB];
	char labels[TOP_LIB][64];
	int have_gain = 0;
	for (size_t i = 0; i < shown; i++) {
		const struct libperf_row *pr = perf_of(p, gt_lib_name(top[i]->lib), top[i]->config);
		if (pr && pr->gain[0])
			have_gain = 1;
	}
	fprintf(f, "<p class=\"note\">%zu distinct configurations; the %zu most called. Gains are from "
		   "library_perf.csv (<code>gputap libperf</code>).</p>\n",
		n, shown);
	fputs("<table><tr><th>#</th><th>library</th><th>calls</th>", f);
	if (p->nperf)
		fputs("<th>recorded us</th><th>best us</th><th>gain %</th><th>status</th>", f);
	fputs("<th>config</th></tr>\n", f);
	size_t nb = 0;
	for (size_t i = 0; i < shown; i++) {
		const struct libperf_row *pr = perf_of(p, gt_lib_name(top[i]->lib), top[i]->config);
		fprintf(f, "<tr><td class=\"n\">%zu</td><td>%s</td><td class=\"n\">%llu</td>", i + 1,
			gt_lib_name(top[i]->lib), (unsigned long long)top[i]->calls);
		if (p->nperf) {
			const char *c[4] = {pr ? pr->rec_us : "", pr ? pr->best_us : "", pr ? pr->gain : "",
					    pr ? pr->status : "not replayed"};
			for (int j = 0; j < 4; j++) {
				fputs(j < 3 ? "<td class=\"n\">" : "<td>", f);
				gt_html_esc(f, c[j]);
				fputs("</td>", f);
			}
		}
		fputs("<td><code>", f);
		gt_html_esc(f, top[i]->config);
		fputs("</code></td></tr>\n", f);
		if (have_gain && pr && pr->gain[0] && nb < TOP_LIB) {
			snprintf(labels[nb], sizeof(labels[nb]), "#%zu %s", i + 1, gt_lib_name(top[i]->lib));
			bars[nb] = (struct gt_bar){labels[nb], atof(pr->gain), NULL};
			nb++;
		}
	}
	fputs("</table>\n", f);
	if (nb)
		gt_svg_hbars(f, "gain of the best algorithm over the recorded one", bars, nb, "%");
	else if (p->nperf == 0)
		fputs("<p class=\"note\">No library_perf.csv: run <code>gputap libperf DIR/library_trace.csv -o "
		      "DIR/library_perf.csv</code> on a GPU to time the recorded GEMMs, cuDNN convolutions and NCCL collectives.</p>\n",
		      f);
	if (p->perf_err[0])
		absent(f, p->perf_err);
	free(top);
}

static double an_t_base(const struct page *p)
{
	return p->inputs ? p->t0 : t_base(p);
}

static void lat_cell(FILE *f, const struct gt_vec *v)
{
	if (v->n)
		fprintf(f, "<td>%.1f</td><td>%.1f</td><td>%zu</td>", gt_holdstat_at(v, 0.5), gt_holdstat_at(v, 0.95), v->n);
	else
		fputs("<td>-</td><td>-</td><td>0</td>", f);
}

static void sec_hold(FILE *f, const struct page *p)
{
	const struct gt_holdstat *h = &p->hold;
	if (!h->seen)
		return;
	fputs("<h2 id=\"hold\">Launch hold</h2>\n", f);
	fprintf(f, "<p>Batches of %ld, a launch waits %ld &micro;s at most. %llu launches held, %llu not held, "
		   "%llu releases, %llu launches failed when issued.</p>\n",
		h->batch, h->timeout_us, (unsigned long long)h->held, (unsigned long long)h->not_held,
		(unsigned long long)h->releases, (unsigned long long)h->failed);
	fputs("<table><tr><th>not held because</th><th>launches</th></tr>\n", f);
	for (int i = 0; i < GT_HOLD_NREFUSALS; i++)
		if (h->refused[i])
			fprintf(f, "<tr><td>%s</td><td>%llu</td></tr>\n", gt_hold_refusal_names[i],
				(unsigned long long)h->refused[i]);
	fputs("</table>\n<table><tr><th>released by</th><th>releases</th></tr>\n", f);
	for (int i = 0; i < h->ntrig; i++) {
		fputs("<tr><td>", f);
		gt_html_esc(f, h->trig[i].name);
		fprintf(f, "</td><td>%llu</td></tr>\n", (unsigned long long)h->trig[i].n);
	}
	if (h->trig_other)
		fprintf(f, "<tr><td>others</td><td>%llu</td></tr>\n", (unsigned long long)h->trig_other);
	fputs("</table>\n", f);
	if (h->sizes.n)
		fprintf(f, "<p>Batch size: median %u, largest %llu.</p>\n", GT_VEC_AT(&h->sizes, uint32_t, h->sizes.n / 2),
			(unsigned long long)h->max_batch);
	fputs("<table><tr><th>launch to kernel start (&micro;s)</th><th>median</th><th>p95</th><th>launches</th></tr>\n"
	      "<tr><td>held, from the launch call</td>",
	      f);
	lat_cell(f, &h->lat_held);
	fputs("</tr>\n<tr><td>held, from the release</td>", f);
	lat_cell(f, &h->lat_rel);
	fputs("</tr>\n<tr><td>not held</td>", f);
	lat_cell(f, &h->lat_not);
	fputs("</tr></table>\n", f);
}

static int write_page(FILE *f, const struct page *p)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>gputap report: ", f);
	gt_html_esc(f, p->dir);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>gputap report</h1>\n<p class=\"sub\">", css);
	gt_html_esc(f, p->dir);
	fputs(" &middot; <a href=\"#run\">run</a> &middot; <a href=\"#timeline\">timeline</a> &middot; <a "
	      "href=\"#classes\">kernel classes</a> &middot; <a href=\"#iterations\">iterations</a>",
	      f);
	gt_rep_an_nav(f);
	fputs(" &middot; <a href=\"#power\">power &amp; memory</a> &middot; <a href=\"#library\">library calls</a></p>\n",
	      f);
	if (p->lost)
		fprintf(f, "<p class=\"absent\">%llu records were lost while recording: numbers below are lower bounds."
			   "</p>\n",
			(unsigned long long)p->lost);
	sec_run(f, p);
	sec_timeline(f, p);
	sec_classes(f, p);
	sec_iters(f, p);
	gt_rep_an_hta_note(f, p->an);
	gt_rep_an_sections(f, p->an, p->an_err, an_t_base(p));
	sec_power(f, p);
	sec_lib(f, p);
	sec_hold(f, p);
	if (!p->inputs) /* a run directory's range_metrics.csv */
		gt_rm_tables(f, p->dir, 200, 1);
	fprintf(f, "<p class=\"note\">Made by gputap. This page is self-contained: it loads nothing.</p>\n"
		   "</body></html>\n");
	return ferror(f) ? -1 : 0;
}

/* ---------------- terminal summary ---------------- */
static void summary(FILE *f, const struct page *p, const char *html)
{
	/* names from the run's files are shown with their control bytes as \xNN (core/log.h) */
	char b[64], b2[64], esc[1024];
	fprintf(f, "gputap report: %s\n", gt_term_str(p->dir, esc, sizeof(esc)));
	if (p->inputs) {
		fprintf(f, "  inputs       %d trace%s\n", p->ninputs, p->ninputs > 1 ? "s" : "");
	} else if (p->run) {
		const char *c = run_str(p, "command", b, sizeof(b));
		fprintf(f, "  command      %s\n", c ? gt_term_str(c, esc, sizeof(esc)) : "?");
		const char *w = run_str(p, "wall_s", b, sizeof(b));
		const char *e = run_str(p, "exit_status", b2, sizeof(b2));
		fprintf(f, "  duration     %s s, exit status %s\n", w ? w : "?", e ? e : "?");
	} else {
		fprintf(f, "  run          %s\n", p->run_err);
	}
	if (p->nlanes) {
		gt_fmt_ns(b, sizeof(b), p->t1 - p->t0);
		fprintf(f, "  GPU work     %llu kernels, %llu copies, %llu memsets over %s, %zu stream%s\n",
			(unsigned long long)p->kernels, (unsigned long long)p->copies, (unsigned long long)p->memsets, b,
			p->nlanes + p->lanes_dropped, p->nlanes + p->lanes_dropped == 1 ? "" : "s");
	} else {
		fprintf(f, "  GPU work     none recorded (%s)\n",
			p->trace_err[0] ? gt_term_str(p->trace_err, esc, sizeof(esc)) : "no GPU activity");
	}
	if (p->an && p->an->kernel_time_ns + p->an->nccl_time_ns > 0) {
		double tot = p->an->kernel_time_ns + p->an->nccl_time_ns;
		fprintf(f, "  kernel time  %s", (gt_fmt_ns(b, sizeof(b), tot), b));
		size_t best[3] = {0, 0, 0}, nb = 0;
		for (size_t k = 0; k < 3; k++) {
			size_t bi = (size_t)-1;
			for (size_t i = 0; i < p->an->nclasses; i++) {
				int used = 0;
				for (size_t j = 0; j < nb; j++)
					used |= best[j] == i;
				if (!used && p->an->classes[i].time_ns > 0 &&
				    (bi == (size_t)-1 || p->an->classes[i].time_ns > p->an->classes[bi].time_ns))
					bi = i;
			}
			if (bi == (size_t)-1)
				break;
			best[nb++] = bi;
			fprintf(f, "%s %s %.1f%%", k ? "," : ":", gt_term_str(p->an->classes[bi].name, esc, sizeof(esc)),
				tot > 0 ? 100 * p->an->classes[bi].time_ns / tot : 0);
		}
		if (p->an->nccl_time_ns > 0)
			fprintf(f, ", nccl %.1f%%", 100 * p->an->nccl_time_ns / tot);
		fputc('\n', f);
	}
	gt_rep_an_summary(f, p->an);
	double pk = -1;
	for (size_t i = 0; i < p->npower; i++)
		for (size_t j = 0; j < p->power[i].n; j++)
			pk = fmax(pk, p->power[i].y[j]);
	if (pk >= 0)
		fprintf(f, "  power        peak %.0f W\n", pk);
	if (p->lib) {
		const struct gt_libcall_row *rows;
		size_t n = gt_libcalls_rows(p->lib, &rows);
		uint64_t calls = 0;
		for (size_t i = 0; i < n; i++)
			calls += rows[i].calls;
		fprintf(f, "  library      %zu configs, %llu calls%s\n", n, (unsigned long long)calls,
			p->nperf ? ", library_perf.csv read" : "");
	}
	gt_holdstat_print(f, &p->hold);
	fprintf(f, "  report       %s\n", html);
	if (!p->inputs)
		gt_rm_tables(f, p->dir, 12, 0);
}

int gt_report_write(const char *rundir, FILE *out, char *err, size_t errlen)
{
	return gt_report_write_opts(rundir, NULL, out, err, errlen);
}

int gt_report_write_opts(const char *rundir, const char *map_path, FILE *out, char *err, size_t errlen)
{
	const char *in[1] = {rundir};
	return gt_report_write_inputs(in, 1, map_path, NULL, out, err, errlen);
}

int gt_report_write_inputs(const char *const *inputs, int ninputs, const char *map_path, const char *html_path,
			   FILE *out, char *err, size_t errlen)
{
	return gt_report_write_fed(inputs, ninputs, map_path, html_path, NULL, NULL, out, err, errlen);
}

int gt_report_write_fed(const char *const *inputs, int ninputs, const char *map_path, const char *html_path,
			gt_trace_feed_fn feed, void *feed_arg, FILE *out, char *err, size_t errlen)
{
	struct stat sb;
	if (ninputs < 1) {
		snprintf(err, errlen, "no input");
		return -1;
	}
	const char *rundir = inputs[0];
	int is_dir = ninputs == 1 && stat(rundir, &sb) == 0 && S_ISDIR(sb.st_mode);
	struct page p;
	memset(&p, 0, sizeof(p));
	gt_holdstat_init(&p.hold);
	p.feed = feed ? feed : gt_trace_feed_plain;
	p.feed_arg = feed_arg;
	char title[512];
	int rc = 0;
	FILE *f;
	if (is_dir) {
		p.dir = rundir;
		load_run(&p);
		find_procs(&p);
		if (p.nprocs)
			load_analysis(&p, map_path, inputs, 1);
		else
			snprintf(p.an_err, sizeof(p.an_err), "no trace in the run directory (<proc>/trace.gtr)");
		if (!p.nprocs)
			snprintf(p.trace_err, sizeof(p.trace_err), "no <proc>/trace.gtr in the run directory");
		traces_done(&p);
		load_gpu_samples(&p);
		if (!p.npower)
			load_sampler_csv(&p, "gpu_info_power_profiler_output.csv", p.power, &p.npower, "power");
		if (!p.nmemused)
			load_sampler_csv(&p, "gpu_info_vram_profiler_output.csv", p.memused, &p.nmemused, "vram");
		for (size_t i = 0; i < p.npower; i++)
			series_downsample(&p.power[i]);
		for (size_t i = 0; i < p.nmemused; i++)
			series_downsample(&p.memused[i]);
		for (size_t i = 0; i < p.nutil; i++)
			series_downsample(&p.util[i]);
		load_lib(&p);
	} else {
		/* traces: everything from the analysis, which must succeed */
		size_t len = 0;
		title[0] = '\0';
		for (int i = 0; i < ninputs && len < sizeof(title); i++)
			len += (size_t)snprintf(title + len, sizeof(title) - len, "%s%s", i ? ", " : "", inputs[i]);
		p.dir = title;
		p.inputs = inputs;
		p.ninputs = ninputs;
		load_analysis(&p, map_path, inputs, ninputs);
		if (!p.an) {
			snprintf(err, errlen, "%s", p.an_err);
			rc = -1;
			goto done;
		}
		keep_busiest(&p);
		if (!p.nlanes)
			snprintf(p.trace_err, sizeof(p.trace_err), "the inputs have no GPU timeline");
		snprintf(p.run_err, sizeof(p.run_err), "traces, not a run directory");
		snprintf(p.lib_err, sizeof(p.lib_err), "library calls come from a gputap run directory "
						       "(library_trace.csv); the inputs are traces");
	}

	char html[4096], tmp[4200];
	f = NULL;
	if (html_path)
		snprintf(html, sizeof(html), "%s", html_path);
	else if (is_dir)
		snprintf(html, sizeof(html), "%s/report.html", rundir);
	else
		snprintf(html, sizeof(html), "report.html");
	snprintf(tmp, sizeof(tmp), "%s.partial", html);
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		rc = -1;
	} else {
		rc = write_page(f, &p);
		if (fclose(f) != 0 || rc < 0) {
			snprintf(err, errlen, "%s: write failed: %s", tmp, strerror(errno));
			unlink(tmp);
			rc = -1;
		} else if (rename(tmp, html) < 0) {
			snprintf(err, errlen, "%s: %s", html, strerror(errno));
			rc = -1;
		}
	}
	if (rc == 0 && out)
		summary(out, &p, html);
done:
	if (p.run)
		yajl_tree_free(p.run);
	for (size_t i = 0; i < p.nlanes; i++) {
		free(p.lanes[i].cols);
		free(p.lanes[i].zcols);
	}
	free(p.lanes);
	struct series *all[4] = {p.mem, p.power, p.memused, p.util};
	size_t cnt[4] = {p.nmem, p.npower, p.nmemused, p.nutil};
	for (int k = 0; k < 4; k++)
		for (size_t i = 0; i < cnt[k]; i++) {
			free(all[k][i].x);
			free(all[k][i].y);
		}
	if (p.an)
		gt_an_free(p.an);
	gt_libcalls_free(p.lib);
	free(p.perf);
	free(p.perf_buf);
	gt_holdstat_free(&p.hold);
	for (size_t i = 0; i < p.nvisited; i++)
		free(p.visited[i]);
	free(p.visited);
	return rc;
}
