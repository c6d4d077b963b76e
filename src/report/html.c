/* report/html.c — report.html: one self-contained page with inline SVG plots, every section shown
 * (one whose data are missing says which file it needed).  See page.h. */
#include "report/page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/findings.h"
#include "core/sort.h"
#include "report/report_an.h"
#include "report/pcstable.h"
#include "report/rmtable.h"
#include "report/svg.h"

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
	"svg .ln{fill:none;stroke-width:1.5}svg .cut{fill:none;stroke:#fff;stroke-width:2}svg .clipped{fill:#333;font-weight:600}"
	"svg .peak{fill:#333;font-weight:600}svg .pk{fill:#e15759}svg .lane{fill:#f4f4f4}";

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
	kv_row(f, "command", gt_rp_run_str(p, "command", b, sizeof(b)));
	kv_row(f, "host", gt_rp_run_str(p, "host", b, sizeof(b)));
	kv_row(f, "start", gt_rp_run_str(p, "start", b, sizeof(b)));
	const char *w = gt_rp_run_str(p, "wall_s", b, sizeof(b));
	if (w)
		snprintf(b2, sizeof(b2), "%.3f s", atof(w));
	kv_row(f, "duration", w ? b2 : NULL);
	const char *sig = gt_rp_run_str(p, "signal", b2, sizeof(b2));
	char st[96];
	const char *es = gt_rp_run_str(p, "exit_status", b, sizeof(b));
	if (sig)
		snprintf(st, sizeof(st), "killed by %s", sig);
	else
		snprintf(st, sizeof(st), "%s", es ? es : "unknown (the run did not finish)");
	kv_row(f, "exit status", st);
	kv_row(f, "driver", gt_rp_run_str(p, "driver_version", b, sizeof(b)));
	kv_row(f, "CUDA (driver)", gt_rp_run_str(p, "cuda_driver_version", b, sizeof(b)));
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

/* The lanes' columns of one window as spans; returns the number of rectangles.  `src` >= 0: only the
 * lanes of that rank (an iteration is one rank's: another rank's work in its time window is not it). */
static size_t draw_lanes(FILE *f, const struct page *p, int zoom, int src, double w0, double w1, const char *title,
			 const char *xlabel)
{
	struct gt_tl_lane *tl = calloc(p->nlanes ? p->nlanes : 1, sizeof(*tl));
	if (!tl)
		return 0;
	double colw = (w1 - w0) / COLS;
	size_t rects = 0, n = 0;
	for (size_t k = 0; k < p->nlanes; k++) {
		const struct lane *l = &p->lanes[k];
		const struct gt_an_gpu *g = p->an && l->device < p->an->ngpu ? &p->an->gpu[l->device] : NULL;
		if (src >= 0 && (!g || g->source != src))
			continue;
		size_t i = n++;
		const uint8_t *cols = zoom ? l->zcols : l->cols;
		snprintf(tl[i].label, sizeof(tl[i].label), "%s stream %u", g ? g->label : "?", l->stream);
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
	gt_svg_timeline(f, title, tl, n, w0, w1, xlabel);
	for (size_t i = 0; i < n; i++)
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
	char b[32], cw[32];
	gt_fmt_ns(b, sizeof(b), span);
	gt_fmt_ns(cw, sizeof(cw), span / COLS);
	fprintf(f, "<p class=\"note\">%llu kernels, %llu copies, %llu memsets over %s on %zu streams, drawn at one "
		   "column per %s.%s</p>\n",
		(unsigned long long)p->kernels, (unsigned long long)p->copies, (unsigned long long)p->memsets, b,
		p->nlanes + p->lanes_dropped, cw,
		p->lanes_dropped ? " Only the busiest streams are shown." : "");
	draw_lanes(f, p, 0, -1, p->t0, p->t1, "whole run", "time since first GPU activity (s)");
	/* the zoomed iteration (the loader's choice: the first GPU with iterations, its second of three or
	 * more), numbered as gputap analyze numbers them (from 0), drawn with its rank's lanes only */
	const struct gt_an_gpu *zg = NULL;
	size_t zit = 0;
	for (size_t i = 0; p->an && i < p->an->ngpu && !zg; i++) {
		const struct gt_an_gpu *g = &p->an->gpu[i];
		zit = g->niters >= 3 ? 1 : 0;
		if (g->niters && (double)g->iters[zit].start_ns == p->z0 && (double)g->iters[zit].end_ns == p->z1)
			zg = g;
	}
	if (p->z1 > p->z0) {
		char title[192];
		gt_fmt_ns(b, sizeof(b), p->z1 - p->z0);
		if (zg) {
			char rl[64];
			gt_an_source_label(p->an, zg->source, rl, sizeof(rl));
			snprintf(title, sizeof(title), "iteration %zu of %s, its streams only (%s)", zit, rl, b);
		} else {
			snprintf(title, sizeof(title), "%s (%s)", p->zlabel, b);
		}
		draw_lanes(f, p, 1, zg ? zg->source : -1, p->z0, p->z1, title, "time since the iteration's start (s)");
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
			b[k++] = (struct gt_bar){p->an->classes[i].name, p->an->classes[i].time_ns / 1e6, NULL, NULL};
	if (p->an->nccl_time_ns > 0)
		b[k++] = (struct gt_bar){"nccl (communication)", p->an->nccl_time_ns / 1e6, NULL, NULL};
	gt_sort(b, k, sizeof(*b), stat_cmp);
	for (size_t i = 0; i < k; i++) {
		char v[32];
		gt_fmt_num(v, sizeof(v), b[i].value);
		snprintf(notes[i], 48, "%s ms (%.1f%%)", v, total > 0 ? b[i].value * 1e6 / total * 100 : 0);
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
		if (g) /* numbered as gputap analyze numbers them */
			snprintf(labels[i], 80, "%zu", i);
		else
			snprintf(labels[i], 80, "%s", p->an->gpu[i].label);
		lp[i] = labels[i];
	}
	if (g)
		fprintf(f, "<p class=\"note\">%s, %zu iterations (from %s), numbered from 0 as in <code>gputap "
			   "analyze</code>%s.</p>\n",
			g->label, g->niters, p->an->iter_source, g->niters > nb ? "; the first 200 are shown" : "");
	else
		fputs("<p class=\"note\">No iteration boundaries were found (no NVTX ranges or ProfilerStep); each bar "
		      "is one GPU over the whole run.</p>\n",
		      f);
	char title[128];
	snprintf(title, sizeof(title), g ? "GPU time per iteration: %s" : "GPU time per GPU", g ? g->label : "");
	if (gt_svg_stacked(f, title, lp, nb, cats, cols, 4, v, "ms"))
		fputs("<p class=\"note\">A bar more than 3 times the median (often a warm-up iteration) is drawn cut "
		      "at the top, with its value, so that the others stay readable.</p>\n",
		      f);
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

/* `pct`: a percentage, drawn on 0-100 whatever the values (1 % busy is not a full plot) */
static void lines_section(FILE *f, const char *title, const char *ylabel, const struct series *s, size_t n, int pct)
{
	struct gt_series gs[MAX_SERIES];
	for (size_t i = 0; i < n && i < MAX_SERIES; i++)
		gs[i] = (struct gt_series){s[i].name, s[i].x, s[i].y, s[i].n};
	const struct gt_line_opts o = {pct ? 0 : NAN, pct ? 100 : NAN, 0, NULL};
	gt_svg_lines_opt(f, title, ylabel, gs, n < MAX_SERIES ? n : MAX_SERIES, &o);
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
		lines_section(f, "GPU power", "W", p->power, p->npower, 0);
	else
		absent(f, "no power samples (gpu_samples.csv or gpu_info_power_profiler_output.csv; run with --tools "
			  "gpu_info_power_profiler)");
	if (p->nmemused)
		lines_section(f, p->memused[0].name[0] == 'm' ? "GPU memory used (driver view)" : "GPU memory (vram %)",
			      strncmp(p->memused[0].name, "vram", 4) == 0 ? "% of total" : "MiB", p->memused, p->nmemused,
			      strncmp(p->memused[0].name, "vram", 4) == 0);
	else
		absent(f, "no memory samples (gpu_samples.csv or gpu_info_vram_profiler_output.csv)");
	if (p->nmem)
		lines_section(f, "device memory allocated by the program (from the trace)", "MiB", p->mem, p->nmem, 0);
	else
		absent(f, p->nprocs ? "the traces hold no allocation record" : "no trace");
	if (p->nutil)
		lines_section(f, "SM busy (sampled)", "% of the time an SM was busy", p->util, p->nutil, 1);
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
		const struct libperf_row *pr = gt_rp_perf_of(p, gt_lib_name(top[i]->lib), top[i]->config);
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
		const struct libperf_row *pr = gt_rp_perf_of(p, gt_lib_name(top[i]->lib), top[i]->config);
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
			bars[nb] = (struct gt_bar){labels[nb], atof(pr->gain), NULL, NULL};
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
	return p->inputs ? p->t0 : gt_rp_t_base(p);
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

int gt_rp_write_page(FILE *f, const struct page *p)
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
	if (p->an && p->an->findings) /* what is wrong first (analyze/findings.h) */
		gt_fd_print_html(p->an->findings, GT_FD_MIN_GAIN_PCT, f);
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
	if (!p->inputs) /* PC sampling: stall bars and top lines per kernel */
		gt_pcs_tables(f, p->dir, 50, 1);
	fprintf(f, "<p class=\"note\">Made by gputap. This page is self-contained: it loads nothing.</p>\n"
		   "</body></html>\n");
	return ferror(f) ? -1 : 0;
}

