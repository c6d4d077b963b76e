/*
 * analyze/output.c — the three output formats.  Text keeps the GPU Performance Analyzer's sections and column layout
 * byte for byte (header cells padded to 17/15/23 columns, numbers right-aligned), then adds the
 * measured tables when a timeline was read.  JSON (schema in docs/analyze.md) and CSV (long
 * format: one value per row) carry the same numbers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "analyze/an_internal.h"
#include "analyze/emit.h"
#include "analyze/findings.h"
#include "core/log.h"

#define MS(ns) ((ns) / 1e6)

static double pct(double a, double b) { return b > 0 ? a / b * 100.0 : 0.0; }

/* Cells of the text tables.  Names come from input files: control bytes are shown as \xNN.  A
 * cell wider than its column keeps one space before the next, so columns never run together. */
static void lcell(FILE *f, int w, const char *s)
{
	char buf[512];
	s = gt_term_str(s, buf, sizeof(buf));
	int n = (int)strlen(s);
	fprintf(f, "%s%*s", s, n < w ? w - n : 1, "");
}

static void ncell(FILE *f, int w, int prec, double v)
{
	char b[64];
	int n = snprintf(b, sizeof(b), "%.*f", prec, v);
	fprintf(f, "%*s%s", n < w ? w - n : 1, "", b);
}

static void ucell(FILE *f, int w, unsigned long long v)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%llu", v);
	fprintf(f, "%*s%s", n < w ? w - n : 1, "", b);
}

static void print_window(FILE *f, int lw, const char *label, const struct gt_an_window *w)
{
	lcell(f, lw, label);
	const double v[7] = {w->span_ns, w->busy_ns, w->idle_ns, w->compute_ns, w->comm_ns, w->overlap_ns,
			     w->exposed_ns};
	for (int i = 0; i < 7; i++)
		ncell(f, 12, 3, MS(v[i]));
	if (w->comm_ns > 0)
		ncell(f, 12, 2, pct(w->overlap_ns, w->comm_ns));
	else /* no communication: nothing to hide, the share is unknown, not 0 */
		fprintf(f, "%12s", "-");
	fputc('\n', f);
}

/* A name row of the GPU Performance Analyzer's tables: name, per-iteration time and count,
 * [percent of the per-iteration time], total time and count, [percent of the total]. */
static void print_stat(FILE *f, int nw, const struct gt_an_stat *s, int with_pct, double per_iter_all,
		       double total_all)
{
	lcell(f, nw, s->name);
	ncell(f, 15, 2, MS(s->time_per_iter_ns));
	ucell(f, 17, (unsigned long long)s->count_per_iter);
	if (with_pct) {
		ncell(f, 16, 2, pct(s->time_per_iter_ns, per_iter_all));
		ncell(f, 16, 2, MS(s->time_ns));
		ucell(f, 17, (unsigned long long)s->count);
		ncell(f, 14, 2, pct(s->time_ns, total_all));
	} else {
		ncell(f, 15, 2, MS(s->time_ns));
		ucell(f, 17, (unsigned long long)s->count);
	}
	fputc('\n', f);
}

static void window_header(FILE *f, int lw, const char *first)
{
	fprintf(f, "%-*s%12s%12s%12s%12s%12s%12s%12s%12s\n", lw, first, "Span(ms)", "Busy(ms)", "Idle(ms)",
		"Compute(ms)", "Comm(ms)", "Overlap(ms)", "Exposed(ms)", "Overlap(%)");
}

int gt_an_print_text(const struct gt_an_result *r, FILE *f)
{
	fputs("===== ", f);
	lcell(f, 0, r->title);
	fputs("=====\n", f);
	fprintf(f, "Kernel time per iteration: %.3f (ms)\n", MS(r->kernel_time_per_iter_ns));
	fprintf(f, "Kernel instances per iteration: %llu\n", (unsigned long long)r->kernel_count_per_iter);
	fprintf(f, "Kernel total time: %.3f (ms)\n", MS(r->kernel_time_ns));
	fprintf(f, "Kernel total instances: %llu\n", (unsigned long long)r->kernel_count);
	fprintf(f, "Kernel Statistic:\n");
	fprintf(f, "%-17s%-17s%-17s%-17s%-17s%-15s%-15s\n", "Class", "TimePerIter(ms)", "InstancePerIter",
		"TimePerIter(%)", "TotalTime(ms)", "TotalInstance", "TotalTime(%)");
	for (size_t i = 0; i < r->nclasses; i++) {
		print_stat(f, 17, &r->classes[i], 1, r->kernel_time_per_iter_ns, r->kernel_time_ns);
	}
	fprintf(f, "\n");
	fprintf(f, "NCCL time per iteration: %.3f (ms)\n", MS(r->nccl_time_per_iter_ns));
	fprintf(f, "NCCL instances per iteration: %llu\n", (unsigned long long)r->nccl_count_per_iter);
	fprintf(f, "NCCL total time: %.3f (ms)\n", MS(r->nccl_time_ns));
	fprintf(f, "NCCL total instances: %llu\n", (unsigned long long)r->nccl_count);
	fprintf(f, "NCCL Statistic:\n");
	fprintf(f, "%-17s%-17s%-17s%-17s%-15s\n", "Class", "TimePerIter(ms)", "InstancePerIter", "TotalTime(ms)",
		"TotalInstance");
	for (size_t i = 0; i < r->nnccl; i++) {
		print_stat(f, 17, &r->nccl[i], 0, 0, 0);
	}
	if (r->has_mem) {
		fprintf(f, "\n");
		fprintf(f, "Mem Ops Statistic:\n");
		fprintf(f, "%-23s%-17s%-17s%-17s%-15s\n", "Class", "TimePerIter(ms)", "InstancePerIter",
			"TotalTime(ms)", "TotalInstance");
		for (size_t i = 0; i < r->nmemops; i++) {
			print_stat(f, 23, &r->memops[i], 0, 0, 0);
		}
	}
	fprintf(f, "\n");
	if (r->nvtx_count > 0) {
		double total = MS(r->nvtx_total_ns), avg = total / (double)r->nvtx_count;
		double kpi = MS(r->kernel_time_per_iter_ns), kt = MS(r->kernel_time_ns);
		fprintf(f, "NVTX range count: %llu\n", (unsigned long long)r->nvtx_count);
		fprintf(f, "NVTX average range time: %.3f (ms)\n", avg);
		fprintf(f, "NVTX total range time: %.3f (ms)\n", total);
		if (strcmp(r->nvtx_time, "cpu-range") != 0 && r->nvtx_time[0])
			fprintf(f, "NVTX range times are %sGPU projections: first start to last end of the GPU work each "
				   "range launched\n", strcmp(r->nvtx_time, "mixed") == 0 ? "partly " : "");
		fprintf(f, "\n");
		fprintf(f, "Estimated non-hidden NCCL, mem ops and bubble time per range: %.3f (ms)\n", avg - kpi);
		fprintf(f, "Estimated non-hidden NCCL, mem ops and bubble time per range: %.2f (%%)\n",
			avg > 0 ? (avg - kpi) / avg * 100 : 0.0);
		fprintf(f, "Estimated non-hidden NCCL, mem ops and bubble total time: %.3f (ms)\n", total - kt);
		fprintf(f, "Estimated non-hidden NCCL, mem ops and bubble total time: %.2f (%%)\n",
			total > 0 ? (total - kt) / total * 100 : 0.0);
	}
	if (r->has_timeline) {
		int lw = 17; /* the label column: as wide as the longest label ("12 rank0/gpu0") + 1 */
		for (size_t i = 0; i < r->ngpu; i++) {
			char lab[96];
			int n = snprintf(lab, sizeof(lab), "%zu %s", r->gpu[i].niters, r->gpu[i].label);
			if (n + 1 > lw)
				lw = n + 1;
		}
		if (r->ngpu == 0) {
			fprintf(f, "\nMeasured GPU time: no GPU kernel, memcpy or memset in the timeline\n");
			return ferror(f) ? -1 : 0;
		}
		fprintf(f, "\nMeasured GPU time (merged intervals; overlap = communication hidden by compute):\n");
		window_header(f, lw, "GPU");
		for (size_t i = 0; i < r->ngpu; i++)
			print_window(f, lw, r->gpu[i].label, &r->gpu[i].total);
		if (r->ngpu > 1)
			print_window(f, lw, "total", &r->total);
		if (!(r->total.comm_ns > 0))
			fprintf(f, "Overlap(%%) -: no communication kernel, so no share of it can be hidden (null in JSON)\n");
		int any = 0;
		for (size_t i = 0; i < r->ngpu; i++)
			any |= r->gpu[i].niters > 0;
		if (any) {
			if (r->ops_by_launch + r->ops_outside)
				fprintf(f,
					"\nMeasured per iteration (%s; GPU ops by the iteration that launched them: %llu "
					"(%llu by their launch event, %llu without one in the trace, by correlation-id "
					"range), launched outside every iteration: %llu, by GPU time: %llu):\n",
					r->iter_source, (unsigned long long)r->ops_by_launch,
					(unsigned long long)r->by_launch_event, (unsigned long long)r->by_launch_range,
					(unsigned long long)r->ops_outside, (unsigned long long)r->ops_by_time);
			else
				fprintf(f, "\nMeasured per iteration (%s):\n", r->iter_source);
			window_header(f, lw, "Iteration/GPU");
			size_t rows = 0, left = 0; /* capped as the report's tables are (--all-rows) */
			for (size_t i = 0; i < r->ngpu; i++)
				for (size_t j = 0; j < r->gpu[i].niters; j++) {
					char lab[96];
					if (!r->all_rows && rows >= GT_AN_TEXT_ROWS) {
						left++;
						continue;
					}
					rows++;
					snprintf(lab, sizeof(lab), "%zu %s", j, r->gpu[i].label);
					print_window(f, lw, lab, &r->gpu[i].iters[j]);
				}
			if (left)
				fprintf(f, "... %zu more rows left out (%zu shown); --all-rows shows them (JSON and CSV hold "
					   "every row)\n",
					left, rows);
		}
		gt_an_text_detail(r, f);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- JSON ---- */

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static void jstats(yajl_gen g, const char *k, const struct gt_an_stat *v, size_t n)
{
	GS(g, k);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		GS(g, "name");
		GS(g, v[i].name);
		gt_an_jnum(g, "time_ms", MS(v[i].time_ns));
		gt_an_jint(g, "count", v[i].count);
		gt_an_jnum(g, "time_per_iter_ms", MS(v[i].time_per_iter_ns));
		gt_an_jint(g, "count_per_iter", v[i].count_per_iter);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void gt_an_json_window(void *gen, const struct gt_an_window *w)
{
	yajl_gen g = gen;
	yajl_gen_map_open(g);
	gt_an_jint(g, "start_ns", w->start_ns);
	gt_an_jint(g, "end_ns", w->end_ns);
	gt_an_jint(g, "first_ns", w->first_ns);
	gt_an_jint(g, "last_ns", w->last_ns);
	gt_an_jnum(g, "span_ms", MS(w->span_ns));
	gt_an_jnum(g, "busy_ms", MS(w->busy_ns));
	gt_an_jnum(g, "idle_ms", MS(w->idle_ns));
	gt_an_jnum(g, "kernel_sum_ms", MS(w->kernel_ns));
	gt_an_jint(g, "kernels", w->kernels);
	gt_an_jint(g, "memops", w->memops);
	gt_an_jnum(g, "compute_ms", MS(w->compute_ns));
	gt_an_jnum(g, "comm_ms", MS(w->comm_ns));
	gt_an_jnum(g, "overlap_ms", MS(w->overlap_ns));
	gt_an_jnum(g, "exposed_comm_ms", MS(w->exposed_ns));
	gt_an_jnum(g, "memop_ms", MS(w->memop_ns));
	gt_an_jnum(g, "non_compute_ms", MS(w->non_compute_ns));
	gt_an_jnum(g, "overlap_pct", w->comm_ns > 0 ? pct(w->overlap_ns, w->comm_ns) : NAN); /* null: no communication */
	gt_an_jnum(g, "idle_pct", pct(w->idle_ns, w->span_ns));
	gt_an_jnum(g, "compute_pct", pct(w->compute_ns, w->span_ns));
	gt_an_jnum(g, "non_compute_pct", pct(w->non_compute_ns, w->span_ns));
	yajl_gen_map_close(g);
}

static void jresult(yajl_gen g, const struct gt_an_result *r)
{
	yajl_gen_map_open(g);
	GS(g, "title");
	GS(g, r->title);
	if (r->findings) { /* docs/findings.md */
		GS(g, "findings");
		gt_fd_json(g, r->findings, GT_FD_MIN_GAIN_PCT);
	}
	gt_an_jint(g, "iterations", (unsigned)r->iters);
	gt_an_jint(g, "gpus", (unsigned)r->gpus);
	GS(g, "iteration_source");
	GS(g, r->iter_source);
	GS(g, "kernels");
	yajl_gen_map_open(g);
	gt_an_jnum(g, "time_ms", MS(r->kernel_time_ns));
	gt_an_jint(g, "count", r->kernel_count);
	gt_an_jnum(g, "time_per_iter_ms", MS(r->kernel_time_per_iter_ns));
	gt_an_jint(g, "count_per_iter", r->kernel_count_per_iter);
	jstats(g, "classes", r->classes, r->nclasses);
	yajl_gen_map_close(g);
	GS(g, "nccl");
	yajl_gen_map_open(g);
	gt_an_jnum(g, "time_ms", MS(r->nccl_time_ns));
	gt_an_jint(g, "count", r->nccl_count);
	gt_an_jnum(g, "time_per_iter_ms", MS(r->nccl_time_per_iter_ns));
	gt_an_jint(g, "count_per_iter", r->nccl_count_per_iter);
	jstats(g, "collectives", r->nccl, r->nnccl);
	yajl_gen_map_close(g);
	if (r->has_mem) {
		jstats(g, "memops", r->memops, r->nmemops);
	} else {
		GS(g, "memops");
		yajl_gen_null(g);
	}
	GS(g, "nvtx");
	if (r->nvtx_count) {
		yajl_gen_map_open(g);
		GS(g, "tag");
		GS(g, r->nvtx_tag);
		gt_an_jint(g, "count", r->nvtx_count);
		gt_an_jnum(g, "total_ms", MS(r->nvtx_total_ns));
		gt_an_jnum(g, "average_ms", MS(r->nvtx_total_ns) / (double)r->nvtx_count);
		gt_an_jnum(g, "estimated_non_hidden_ms", MS(r->nvtx_total_ns - r->kernel_time_ns));
		GS(g, "time_source");
		GS(g, r->nvtx_time[0] ? r->nvtx_time : "cpu-range");
		yajl_gen_map_close(g);
	} else {
		yajl_gen_null(g);
	}
	GS(g, "iteration_assignment");
	if (r->has_timeline) {
		yajl_gen_map_open(g);
		gt_an_jint(g, "by_launch", r->ops_by_launch);
		gt_an_jint(g, "outside", r->ops_outside);
		gt_an_jint(g, "by_time", r->ops_by_time);
		yajl_gen_map_close(g);
	} else {
		yajl_gen_null(g);
	}
	GS(g, "timeline");
	if (r->has_timeline) {
		yajl_gen_map_open(g);
		GS(g, "total");
		gt_an_json_window(g, &r->total);
		GS(g, "gpus");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < r->ngpu; i++) {
			yajl_gen_map_open(g);
			GS(g, "label");
			GS(g, r->gpu[i].label);
			gt_an_jint(g, "source", (unsigned)r->gpu[i].source);
			gt_an_jint(g, "device", (unsigned)r->gpu[i].device);
			GS(g, "total");
			gt_an_json_window(g, &r->gpu[i].total);
			GS(g, "iterations");
			yajl_gen_array_open(g);
			for (size_t j = 0; j < r->gpu[i].niters; j++)
				gt_an_json_window(g, &r->gpu[i].iters[j]);
			yajl_gen_array_close(g);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	} else {
		yajl_gen_null(g);
	}
	gt_an_json_collectives(g, r);
	gt_an_json_detail(g, r);
	gt_an_jstrs(g, "notes", r->notes, r->nnotes);
	yajl_gen_map_close(g);
}

int gt_an_print_json(const struct gt_an_result *const *rs, size_t n, FILE *f)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g)
		return -1;
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	yajl_gen_map_open(g);
	gt_an_jint(g, "schema_version", GT_AN_SCHEMA_VERSION);
	GS(g, "tool");
	GS(g, "gputap analyze");
	GS(g, "results");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++)
		jresult(g, rs[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	int rc = 0;
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || fwrite(buf, 1, len, f) != len)
		rc = -1;
	yajl_gen_free(g);
	return rc;
}

/* ---- CSV: title,section,gpu,iteration,name,metric,value ---- */

static void csv_stats(FILE *f, const char *title, const char *sec, const struct gt_an_stat *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		gt_an_csv_row(f, title, sec, "", -1, v[i].name, "time_ms", MS(v[i].time_ns));
		gt_an_csv_row(f, title, sec, "", -1, v[i].name, "count", (double)v[i].count);
		gt_an_csv_row(f, title, sec, "", -1, v[i].name, "time_per_iter_ms", MS(v[i].time_per_iter_ns));
		gt_an_csv_row(f, title, sec, "", -1, v[i].name, "count_per_iter", (double)v[i].count_per_iter);
	}
}

static void csv_window(FILE *f, const char *title, const char *gpu, long it, const struct gt_an_window *w)
{
	static const char *const names[] = {"span_ms", "busy_ms", "idle_ms", "compute_ms", "comm_ms",
					    "overlap_ms", "exposed_comm_ms", "memop_ms", "kernel_sum_ms"};
	double v[] = {w->span_ns, w->busy_ns, w->idle_ns, w->compute_ns, w->comm_ns,
		      w->overlap_ns, w->exposed_ns, w->memop_ns, w->kernel_ns};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		gt_an_csv_row(f, title, it >= 0 ? "iteration" : "gpu", gpu, it, "", names[i], MS(v[i]));
	gt_an_csv_row(f, title, it >= 0 ? "iteration" : "gpu", gpu, it, "", "kernels", (double)w->kernels);
}

int gt_an_print_csv(const struct gt_an_result *r, FILE *f)
{
	const char *t = r->title;
	fputs("title,section,gpu,iteration,name,metric,value\n", f);
	csv_stats(f, t, "class", r->classes, r->nclasses);
	csv_stats(f, t, "nccl", r->nccl, r->nnccl);
	if (r->has_mem)
		csv_stats(f, t, "memop", r->memops, r->nmemops);
	if (r->nvtx_count) {
		gt_an_csv_row(f, t, "nvtx", "", -1, r->nvtx_tag, "count", (double)r->nvtx_count);
		gt_an_csv_row(f, t, "nvtx", "", -1, r->nvtx_tag, "total_ms", MS(r->nvtx_total_ns));
	}
	if (r->has_timeline) {
		for (size_t i = 0; i < r->ngpu; i++) {
			csv_window(f, t, r->gpu[i].label, -1, &r->gpu[i].total);
			for (size_t j = 0; j < r->gpu[i].niters; j++)
				csv_window(f, t, r->gpu[i].label, (long)j, &r->gpu[i].iters[j]);
		}
		csv_window(f, t, "total", -1, &r->total);
		gt_an_csv_detail(r, f);
	}
	return ferror(f) ? -1 : 0;
}
