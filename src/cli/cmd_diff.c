/* gputap diff — two runs or traces compared, kernel by kernel and iteration by iteration. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "analyze/analyze.h"
#include "cli/commands.h"
#include "core/csvio.h"
#include "core/log.h"
#include "core/sort.h"

const char cmd_diff_help[] =
    "usage: gputap diff [--nvtx TAG] [--format text|json|csv] [--top N] [--threshold PCT]\n"
    "                   [--launched-only] [--without-last-step] A B\n"
    "\n"
    "Compare two runs or traces (A: the baseline, B: the new one), as HTA's trace diff does: the GPU\n"
    "kernels (and memory operations) B added, the ones it removed, and the ones whose count or time\n"
    "changed, per name over the whole input and per iteration, then each iteration side by side.\n"
    "A and B are anything 'gputap analyze' reads: a gputap run directory, a Kineto trace (.json,\n"
    ".json.gz), an nsys SQLite export, a trace.gtr.  Iterations are the ProfilerStep#N ranges (or\n"
    "--nvtx TAG); a GPU op belongs to the iteration that launched it.  Runs of different lengths\n"
    "compare through the per-iteration columns (count or time / iterations).\n"
    "\n"
    "Options:\n"
    "  --nvtx TAG         the range that marks one iteration (default: ProfilerStep#N)\n"
    "  --format F         text (default), json, csv (section,name,iteration,count_a,count_b,\n"
    "                     time_a_ms,time_b_ms,status)\n"
    "  --top N            rows of the text's kernel table, largest time change first (20; all: 0)\n"
    "  --threshold PCT    a kernel whose count is the same is 'changed' when its time per iteration\n"
    "                     moved by more than PCT percent (5)\n"
    "  --launched-only, --without-last-step   as in 'gputap analyze' (HTA's default view: both)\n"
    "  -h, --help         this help\n"
    "\n"
    "Status of a kernel: added (in B only), removed (in A only), changed, same.\n"
    "Exit status: 0 ok; 1 bad input (the message names the file); 2 usage.\n"
    "\n"
    "Example:\n"
    "  gputap diff baseline-run/ new-run/\n";

struct drow {
	const char *name;
	uint64_t ca, cb;
	double ta, tb;
	const char *status;
};

struct dside {
	struct gt_an_result *r;
	double iters;
};

static int drow_cmp(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	double dx = fabs(x->tb - x->ta), dy = fabs(y->tb - y->ta);
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static long max_iter(const struct gt_an_result *r);

/* Kernel names of both sides with count and time (all ranks): of the ops inside the iterations when
 * a side has iterations (the per-iteration columns divide by their number), else of the whole input. */
static struct drow *collect(const struct dside *a, const struct dside *b, size_t *n, double thr)
{
	size_t cap = a->r->nkernels + b->r->nkernels + a->r->niterk + b->r->niterk + 1, k = 0;
	struct drow *v = calloc(cap, sizeof(*v));
	if (!v)
		return NULL;
	const struct dside *sides[2] = {a, b};
	for (int s = 0; s < 2; s++) {
		const struct gt_an_result *r = sides[s]->r;
		int by_iter = max_iter(r) >= 0;
		size_t nrows = by_iter ? r->niterk : r->nkernels;
		for (size_t i = 0; i < nrows; i++) {
			const char *name = by_iter ? r->iterk[i].name : r->kernels[i].name;
			uint64_t cnt = by_iter ? r->iterk[i].count : r->kernels[i].count;
			double t = by_iter ? r->iterk[i].time_ns : r->kernels[i].time_ns;
			if (by_iter && r->iterk[i].iter < 0) /* launched outside every iteration */
				continue;
			size_t j = 0;
			while (j < k && strcmp(v[j].name, name) != 0)
				j++;
			if (j == k)
				v[k++].name = name;
			if (s == 0) {
				v[j].ca += cnt;
				v[j].ta += t;
			} else {
				v[j].cb += cnt;
				v[j].tb += t;
			}
		}
	}
	for (size_t j = 0; j < k; j++) {
		struct drow *d = &v[j];
		double pa = d->ta / a->iters, pb = d->tb / b->iters;
		double qa = (double)d->ca / a->iters, qb = (double)d->cb / b->iters;
		if (!d->ca)
			d->status = "added";
		else if (!d->cb)
			d->status = "removed";
		else if (fabs(qa - qb) > 1e-9 || fabs(pb - pa) > thr / 100.0 * pa)
			d->status = "changed";
		else
			d->status = "same";
	}
	gt_sort(v, k, sizeof(*v), drow_cmp);
	*n = k;
	return v;
}

/* Count and time of iteration `it` (all kernels, all ranks). */
static void iter_sum(const struct gt_an_result *r, long it, uint64_t *c, double *t)
{
	*c = 0;
	*t = 0;
	for (size_t i = 0; i < r->niterk; i++)
		if (r->iterk[i].iter == it) {
			*c += r->iterk[i].count;
			*t += r->iterk[i].time_ns;
		}
}

static long max_iter(const struct gt_an_result *r)
{
	long m = -1;
	for (size_t i = 0; i < r->niterk; i++)
		if (r->iterk[i].iter > m)
			m = r->iterk[i].iter;
	return m;
}

static void totals(const struct gt_an_result *r, uint64_t *c, double *t)
{
	*c = 0;
	*t = 0;
	for (size_t i = 0; i < r->nkernels; i++) {
		*c += r->kernels[i].count;
		*t += r->kernels[i].time_ns;
	}
}

static void print_text(FILE *f, const char *na, const char *nb, const struct dside *a, const struct dside *b,
		       const struct drow *v, size_t n, int top)
{
	uint64_t ca, cb;
	double ta, tb;
	totals(a->r, &ca, &ta);
	totals(b->r, &cb, &tb);
	fprintf(f, "A: %s: %.0f iteration(s), %llu GPU ops, %.3f ms\n", na, a->iters, (unsigned long long)ca, ta / 1e6);
	fprintf(f, "B: %s: %.0f iteration(s), %llu GPU ops, %.3f ms (%+.2f%% per iteration)\n", nb, b->iters,
		(unsigned long long)cb, tb / 1e6, ta > 0 ? ((tb / b->iters) / (ta / a->iters) - 1) * 100 : 0.0);
	size_t cnt[4] = {0};
	for (size_t i = 0; i < n; i++)
		cnt[v[i].status[0] == 'a' ? 0 : v[i].status[0] == 'r' ? 1 : v[i].status[0] == 'c' ? 2 : 3]++;
	fprintf(f, "Kernels: %zu added, %zu removed, %zu changed, %zu the same\n\n", cnt[0], cnt[1], cnt[2], cnt[3]);
	fprintf(f, "%-9s%11s%11s%12s%12s%14s%14s  %s\n", "Status", "Count/it A", "Count/it B", "Time/it A",
		"Time/it B", "Diff/it(ms)", "Diff(%)", "Kernel");
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		const struct drow *d = &v[i];
		if (!strcmp(d->status, "same"))
			continue;
		if (top > 0 && shown++ >= (size_t)top)
			break;
		double pa = d->ta / a->iters / 1e6, pb = d->tb / b->iters / 1e6;
		char sn[96], esc[512]; /* long names: start, end and a hash, so that two rows never look alike */
		gt_an_short_name(d->name, 70, sn, sizeof(sn));
		fprintf(f, "%-9s%11.2f%11.2f%12.3f%12.3f%14.3f%14.1f  %s\n", d->status, (double)d->ca / a->iters,
			(double)d->cb / b->iters, pa, pb, pb - pa, pa > 0 ? (pb - pa) / pa * 100 : 100.0,
			gt_term_str(sn, esc, sizeof(esc)));
	}
	long ma = max_iter(a->r), mb = max_iter(b->r), m = ma > mb ? ma : mb;
	if (m >= 0) {
		fprintf(f, "\nPer iteration (GPU ops by the iteration that launched them):\n");
		fprintf(f, "%-10s%10s%10s%14s%14s%14s\n", "Iteration", "Ops A", "Ops B", "Time A(ms)", "Time B(ms)",
			"Diff(ms)");
		for (long it = 0; it <= m; it++) {
			uint64_t xa, xb;
			double ya, yb;
			iter_sum(a->r, it, &xa, &ya);
			iter_sum(b->r, it, &xb, &yb);
			fprintf(f, "%-10ld%10llu%10llu%14.3f%14.3f%14.3f\n", it, (unsigned long long)xa,
				(unsigned long long)xb, ya / 1e6, yb / 1e6, (yb - ya) / 1e6);
		}
	}
}

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

/* ms with 6 decimals (ns), trailing zeros dropped: no 17-digit binary noise */
static void jms(yajl_gen g, double v)
{
	char b[64];
	int n = snprintf(b, sizeof(b), isfinite(v) && fabs(v) < 1e15 ? "%.6f" : "%.17g", isfinite(v) ? v : 0.0);
	while (n > 1 && strchr(b, '.') && b[n - 1] == '0' && b[n - 2] != '.')
		b[--n] = '\0';
	yajl_gen_number(g, b, (size_t)n);
}

static void jside(yajl_gen g, const char *k, const char *name, const struct dside *s)
{
	uint64_t c;
	double t;
	totals(s->r, &c, &t);
	GS(g, k);
	yajl_gen_map_open(g);
	GS(g, "input");
	GS(g, name);
	GS(g, "iterations");
	yajl_gen_integer(g, (long long)s->iters);
	GS(g, "ops");
	yajl_gen_integer(g, (long long)c);
	GS(g, "time_ms");
	jms(g, t / 1e6);
	yajl_gen_map_close(g);
}

static int print_json(FILE *f, const char *na, const char *nb, const struct dside *a, const struct dside *b,
		      const struct drow *v, size_t n)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g)
		return -1;
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_map_open(g);
	GS(g, "schema_version");
	yajl_gen_integer(g, 1);
	GS(g, "tool");
	GS(g, "gputap diff");
	jside(g, "a", na, a);
	jside(g, "b", nb, b);
	GS(g, "kernels");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		GS(g, "name");
		GS(g, v[i].name);
		GS(g, "status");
		GS(g, v[i].status);
		GS(g, "count_a");
		yajl_gen_integer(g, (long long)v[i].ca);
		GS(g, "count_b");
		yajl_gen_integer(g, (long long)v[i].cb);
		GS(g, "time_a_ms");
		jms(g, v[i].ta / 1e6);
		GS(g, "time_b_ms");
		jms(g, v[i].tb / 1e6);
		GS(g, "time_per_iter_a_ms");
		jms(g, v[i].ta / a->iters / 1e6);
		GS(g, "time_per_iter_b_ms");
		jms(g, v[i].tb / b->iters / 1e6);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "iterations");
	yajl_gen_array_open(g);
	long ma = max_iter(a->r), mb = max_iter(b->r), m = ma > mb ? ma : mb;
	for (long it = 0; it <= m; it++) {
		uint64_t xa, xb;
		double ya, yb;
		iter_sum(a->r, it, &xa, &ya);
		iter_sum(b->r, it, &xb, &yb);
		yajl_gen_map_open(g);
		GS(g, "iteration");
		yajl_gen_integer(g, it);
		GS(g, "ops_a");
		yajl_gen_integer(g, (long long)xa);
		GS(g, "ops_b");
		yajl_gen_integer(g, (long long)xb);
		GS(g, "time_a_ms");
		jms(g, ya / 1e6);
		GS(g, "time_b_ms");
		jms(g, yb / 1e6);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	int rc = yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok && fwrite(buf, 1, len, f) == len ? 0 : -1;
	yajl_gen_free(g);
	return rc;
}

static void print_csv(FILE *f, const struct dside *a, const struct dside *b, const struct drow *v, size_t n)
{
	fputs("section,name,iteration,count_a,count_b,time_a_ms,time_b_ms,status\n", f);
	for (size_t i = 0; i < n; i++) {
		fputs("kernel,", f);
		gt_csv_put(f, v[i].name);
		fprintf(f, ",,%llu,%llu,%.6f,%.6f,%s\n", (unsigned long long)v[i].ca, (unsigned long long)v[i].cb,
			v[i].ta / 1e6, v[i].tb / 1e6, v[i].status);
	}
	long ma = max_iter(a->r), mb = max_iter(b->r), m = ma > mb ? ma : mb;
	for (long it = 0; it <= m; it++) {
		uint64_t xa, xb;
		double ya, yb;
		iter_sum(a->r, it, &xa, &ya);
		iter_sum(b->r, it, &xb, &yb);
		fprintf(f, "iteration,,%ld,%llu,%llu,%.6f,%.6f,\n", it, (unsigned long long)xa, (unsigned long long)xb,
			ya / 1e6, yb / 1e6);
	}
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"nvtx", required_argument, 0, 'n'},      {"format", required_argument, 0, 'f'},
	    {"top", required_argument, 0, 't'},       {"threshold", required_argument, 0, 'x'},
	    {"launched-only", no_argument, 0, 'L'},   {"without-last-step", no_argument, 0, 'W'},
	    {"help", no_argument, 0, 'h'},            {0, 0, 0, 0},
	};
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	o.per_iter_kernels = 1;
	const char *format = "text";
	int top = 20;
	double thr = 5;
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *e;
		switch (ch) {
		case 'n': o.nvtx_tag = optarg; break;
		case 'f': format = optarg; break;
		case 't':
			top = (int)strtol(optarg, &e, 10);
			if (!*optarg || *e || top < 0) {
				gt_error("--top wants a non-negative integer, not '%s'", optarg);
				return 2;
			}
			break;
		case 'x':
			thr = strtod(optarg, &e);
			if (!*optarg || *e || !(thr >= 0)) {
				gt_error("--threshold wants a non-negative percentage, not '%s'", optarg);
				return 2;
			}
			break;
		case 'L': o.launched_only = 1; break;
		case 'W': o.without_last_step = 1; break;
		case 'h': fputs(cmd_diff_help, stdout); return gt_finish_stdout(0);
		default:
			gt_error("diff: unknown or incomplete option '%s'; see 'gputap help diff'", argv[optind - 1]);
			return 2;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv")) {
		gt_error("--format is text, json or csv, not '%s'", format);
		return 2;
	}
	if (argc - optind != 2) {
		gt_error("diff: wants two inputs, A and B; see 'gputap help diff'");
		return 2;
	}
	struct dside s[2] = {{0}};
	char err[1024];
	int rc = 1;
	for (int i = 0; i < 2; i++) {
		const char *in = argv[optind + i];
		if (gt_an_run(&in, 1, &o, &s[i].r, err, sizeof(err)) < 0) {
			gt_error("%s", err);
			goto out;
		}
		if (!s[i].r->has_timeline) {
			gt_error("%s: a summary without a timeline: diff needs GPU ops (a run, a trace or an export)", in);
			goto out;
		}
		s[i].iters = s[i].r->iters > 0 ? s[i].r->iters : 1;
	}
	size_t n = 0;
	struct drow *v = collect(&s[0], &s[1], &n, thr);
	if (!v) {
		gt_error("out of memory");
		goto out;
	}
	int werr = 0;
	if (!strcmp(format, "json"))
		werr = print_json(stdout, argv[optind], argv[optind + 1], &s[0], &s[1], v, n);
	else if (!strcmp(format, "csv"))
		print_csv(stdout, &s[0], &s[1], v, n);
	else
		print_text(stdout, argv[optind], argv[optind + 1], &s[0], &s[1], v, n, top);
	free(v);
	rc = werr ? 1 : 0;
out:
	gt_an_free(s[0].r);
	gt_an_free(s[1].r);
	return gt_finish_stdout(rc);
}
