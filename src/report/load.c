/* report/load.c — the report's data from a run directory or traces.  See page.h. */
#include "report/page.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/containers.h"
#include "core/csvio.h"
#include "core/jsondepth.h"
#include "core/log.h"
#include "core/sort.h"
#include "trace/rundir.h"
#include "trace/trace_io.h"

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

double gt_rp_t_base(const struct page *p)
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
	long deep = gt_json_too_deep(text, strlen(text), GT_JSON_MAX_DEPTH);
	if (deep) {
		snprintf(p->run_err, sizeof(p->run_err), "run.json:%ld: nested deeper than %d levels: not read", deep,
			 GT_JSON_MAX_DEPTH);
		free(text);
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

const char *gt_rp_run_str(const struct page *p, const char *key, char *buf, size_t len)
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

static int rd_dropped(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_dropped *d)
{
	(void)r;
	((struct trace_rd *)ctx)->p->lost += d->count;
	return 0;
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

static const struct gt_trace_ops rd_ops = {.dropped = rd_dropped, .memory = rd_memory, .end = rd_end, .release = rd_release};

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
	v[(*nv)++] = (struct gt_trace_visitor){&gt_holdstat_ops, &p->hold}; /* launch-hold figures */
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
	double base = gt_rp_t_base(p);
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
		double x = (t - gt_rp_t_base(p)) / 1e9;
		if (gt_rp_t_base(p) <= 0)
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
	o.findings = 1;  /* at the top of the page and of the summaries (analyze/findings.h) */
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

const struct libperf_row *gt_rp_perf_of(const struct page *p, const char *lib, const char *cfg)
{
	for (size_t i = 0; i < p->nperf; i++)
		if (!strcmp(p->perf[i].lib, lib) && !strcmp(p->perf[i].config, cfg))
			return &p->perf[i];
	return NULL;
}


void gt_rp_load_dir(struct page *p, const char *map_path, const char *const *inputs)
{
	load_run(p);
	find_procs(p);
	if (p->nprocs)
		load_analysis(p, map_path, inputs, 1);
	else
		snprintf(p->an_err, sizeof(p->an_err), "no trace in the run directory (<proc>/trace.gtr)");
	if (!p->nprocs)
		snprintf(p->trace_err, sizeof(p->trace_err), "no <proc>/trace.gtr in the run directory");
	traces_done(p);
	load_gpu_samples(p);
	if (!p->npower)
		load_sampler_csv(p, "gpu_info_power_profiler_output.csv", p->power, &p->npower, "power");
	if (!p->nmemused)
		load_sampler_csv(p, "gpu_info_vram_profiler_output.csv", p->memused, &p->nmemused, "vram");
	for (size_t i = 0; i < p->npower; i++)
		series_downsample(&p->power[i]);
	for (size_t i = 0; i < p->nmemused; i++)
		series_downsample(&p->memused[i]);
	for (size_t i = 0; i < p->nutil; i++)
		series_downsample(&p->util[i]);
	load_lib(p);
}

int gt_rp_load_traces(struct page *p, const char *map_path, const char *const *inputs, int ninputs, char *err,
		      size_t errlen)
{
	p->inputs = inputs;
	p->ninputs = ninputs;
	load_analysis(p, map_path, inputs, ninputs);
	if (!p->an) {
		snprintf(err, errlen, "%s", p->an_err);
		return -1;
	}
	keep_busiest(p);
	if (!p->nlanes)
		snprintf(p->trace_err, sizeof(p->trace_err), "the inputs have no GPU timeline");
	snprintf(p->run_err, sizeof(p->run_err), "traces, not a run directory");
	snprintf(p->lib_err, sizeof(p->lib_err), "library calls come from a gputap run directory "
						 "(library_trace.csv); the inputs are traces");
	return 0;
}

void gt_rp_free(struct page *p)
{
	if (p->run)
		yajl_tree_free(p->run);
	for (size_t i = 0; i < p->nlanes; i++) {
		free(p->lanes[i].cols);
		free(p->lanes[i].zcols);
	}
	free(p->lanes);
	struct series *all[4] = {p->mem, p->power, p->memused, p->util};
	size_t cnt[4] = {p->nmem, p->npower, p->nmemused, p->nutil};
	for (int k = 0; k < 4; k++)
		for (size_t i = 0; i < cnt[k]; i++) {
			free(all[k][i].x);
			free(all[k][i].y);
		}
	if (p->an)
		gt_an_free(p->an);
	gt_libcalls_free(p->lib);
	free(p->perf);
	free(p->perf_buf);
	gt_holdstat_free(&p->hold);
	for (size_t i = 0; i < p->nvisited; i++)
		free(p->visited[i]);
	free(p->visited);
}
