/* The per-op analyses on the report page and in the terminal summary: idle time by cause, kernel
 * launches and the launch queue, top kernels per kind and rank, memory bandwidth over time. */
#include "report/report_an.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/sort.h"
#include "report/svg.h"

#define MAX_BARS 48  /* streams in the idle plot */
#define MAX_LINES 10 /* series in a plot over time */
#define TOP_BARS 12  /* kernels in a top-kernel or launch-delay plot */
#define MAX_RANKS 16 /* ranks listed in the top-kernel table */
#define MAX_ROWS 64  /* rows of the bandwidth table */

static const char *const idle_cats[GT_IDLE_N] = {"host wait", "kernel wait", "other"};
static const char *const idle_cols[GT_IDLE_N] = {"#e15759", "#f28e2b", "#bab0ac"};

void gt_rep_an_nav(FILE *f)
{
	fputs(" &middot; <a href=\"#idle\">idle by cause</a> &middot; <a href=\"#launches\">launches &amp; queue</a> "
	      "&middot; <a href=\"#topkernels\">top kernels</a> &middot; <a href=\"#membw\">memory bandwidth</a>",
	      f);
}

static double idle_of(const struct gt_an_stream *s)
{
	return s->idle_ns[GT_IDLE_HOST] + s->idle_ns[GT_IDLE_KERNEL] + s->idle_ns[GT_IDLE_OTHER];
}

static const char *gpu_label(const struct gt_an_result *r, size_t g)
{
	return g < r->ngpu ? r->gpu[g].label : "?";
}

/* A kernel's name for a label: without a leading "void " and without its argument list. */
static void short_name(const char *n, char *b, size_t len)
{
	if (strncmp(n, "void ", 5) == 0)
		n += 5;
	size_t k = strcspn(n, "(");
	if (k == 0)
		k = strlen(n);
	if (k + 1 > len && len > 4)
		snprintf(b, len, "%.*s...", (int)(len - 4), n);
	else
		snprintf(b, len, "%.*s", (int)k, n);
}

#define NAME_COL 90 /* bytes of a kernel name in a table cell */

/* A number cell; "-" when it cannot be known (NAN) */
static void num_cell(FILE *f, int prec, double v)
{
	if (isfinite(v))
		fprintf(f, "<td class=\"n\">%.*f</td>", prec, v);
	else
		fputs("<td class=\"n\">-</td>", f);
}

/* A bar's hover text: the rank and the kernel's whole name (malloc'd; NULL: the label). */
static char *bar_title(const struct gt_an_result *r, const struct gt_an_kernel *k)
{
	char rl[64];
	gt_an_source_label(r, k->source, rl, sizeof(rl));
	size_t n = strlen(rl) + strlen(k->name) + 3;
	char *t = malloc(n);
	if (t)
		snprintf(t, n, "%s: %s", rl, k->name);
	return t;
}

/* A bar's label: the rank and the kernel's short name, short enough for the plot's label column. */
static void bar_label(const struct gt_an_result *r, const struct gt_an_kernel *k, char *b, size_t len)
{
	char rl[16], sn[34];
	gt_an_source_label(r, k->source, rl, sizeof(rl));
	short_name(k->name, sn, sizeof(sn));
	snprintf(b, len, "%s %s", rl, sn);
}

/* The time axis of a series: the middle of bucket b of GPU g, in seconds from t_base. */
static double bucket_x(const struct gt_an_result *r, size_t g, size_t b, double t_base)
{
	if (g >= r->ngpu)
		return NAN;
	double t = (double)r->gpu[g].bucket0_ns + ((double)b + 0.5) * (double)r->gpu[g].bucket_ns;
	return (t - t_base) / 1e9;
}

static int stream_idle_cmp(const void *a, const void *b)
{
	double x = idle_of(*(const struct gt_an_stream *const *)a), y = idle_of(*(const struct gt_an_stream *const *)b);
	return x < y ? 1 : x > y ? -1 : 0;
}

static int stream_queue_cmp(const void *a, const void *b)
{
	const struct gt_an_stream *x = *(const struct gt_an_stream *const *)a, *y = *(const struct gt_an_stream *const *)b;
	if (x->queue_max != y->queue_max)
		return x->queue_max < y->queue_max ? 1 : -1;
	return x->queued < y->queued ? 1 : x->queued > y->queued ? -1 : 0;
}

static int kernel_time_cmp(const void *a, const void *b)
{
	const struct gt_an_kernel *x = *(const struct gt_an_kernel *const *)a, *y = *(const struct gt_an_kernel *const *)b;
	return x->time_ns < y->time_ns ? 1 : x->time_ns > y->time_ns ? -1 : 0;
}

static int membw_bytes_cmp(const void *a, const void *b)
{
	const struct gt_an_membw *x = *(const struct gt_an_membw *const *)a, *y = *(const struct gt_an_membw *const *)b;
	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* The section is there but has nothing to draw: 1 and says why. */
static int no_timeline(FILE *f, const struct gt_an_result *an, const char *why)
{
	if (!an) {
		gt_html_absent(f, why && why[0] ? why : "no analysis");
		return 1;
	}
	if (!an->has_timeline) {
		gt_html_absent(f, "the inputs have no GPU timeline (summary CSVs hold only totals)");
		return 1;
	}
	return 0;
}

static void sec_idle(FILE *f, const struct gt_an_result *an, const char *why)
{
	fputs("<h2 id=\"idle\">Idle time by cause</h2>\n", f);
	if (no_timeline(f, an, why))
		return;
	if (!an->nstreams) {
		gt_html_absent(f, "no stream has GPU ops");
		return;
	}
	const struct gt_an_stream **s = calloc(an->nstreams, sizeof(*s));
	size_t nb = an->nstreams < MAX_BARS ? an->nstreams : MAX_BARS;
	double *v = calloc(nb * GT_IDLE_N, sizeof(double));
	char(*labels)[96] = calloc(nb, 96);
	const char **lp = calloc(nb, sizeof(*lp));
	if (!s || !v || !labels || !lp)
		goto out;
	double tot[GT_IDLE_N] = {0};
	for (size_t i = 0; i < an->nstreams; i++) {
		s[i] = &an->streams[i];
		for (int c = 0; c < GT_IDLE_N; c++)
			tot[c] += an->streams[i].idle_ns[c];
	}
	double all = tot[0] + tot[1] + tot[2];
	fprintf(f, "<p class=\"note\">Gaps between consecutive ops of one stream, as HTA's idle time breakdown: "
		   "<b>host wait</b> when the op's launch call started after the previous op had ended (the CPU was "
		   "late), <b>kernel wait</b> a shorter gap under %.0f us (launch overhead), <b>other</b> the rest "
		   "(waiting on another stream or an event, an op launched before the trace began). Over all %zu "
		   "streams: host wait %.1f%%, kernel wait %.1f%%, other %.1f%% of %.3f ms.%s</p>\n",
		an->kernel_wait_ns / 1e3, an->nstreams, all > 0 ? tot[0] / all * 100 : 0, all > 0 ? tot[1] / all * 100 : 0,
		all > 0 ? tot[2] / all * 100 : 0, all / 1e6,
		an->nstreams > nb ? " The streams with the most idle time are drawn." : "");
	gt_sort(s, an->nstreams, sizeof(*s), stream_idle_cmp);
	/* drawn in the order of the tables (GPU, stream) */
	const struct gt_an_stream **d = calloc(nb, sizeof(*d));
	if (!d)
		goto out;
	for (size_t i = 0, k = 0; i < an->nstreams && k < nb; i++)
		for (size_t j = 0; j < nb; j++)
			if (s[j] == &an->streams[i]) {
				d[k++] = s[j];
				break;
			}
	for (size_t i = 0; i < nb; i++) {
		snprintf(labels[i], 96, "%s s%u", gpu_label(an, d[i]->gpu), d[i]->stream);
		lp[i] = labels[i];
		for (int c = 0; c < GT_IDLE_N; c++)
			v[i * GT_IDLE_N + c] = d[i]->idle_ns[c] / 1e6;
	}
	gt_svg_hstacked(f, "idle time per stream by cause", lp, nb, idle_cats, idle_cols, GT_IDLE_N, v, "ms");
	fputs("<table><tr><th>GPU</th><th>stream</th><th>ops</th><th>idle ms</th><th>host wait ms</th><th>kernel "
	      "wait ms</th><th>other ms</th><th>queue max</th><th>queue mean</th></tr>\n",
	      f);
	for (size_t i = 0; i < nb; i++) {
		fputs("<tr><td>", f);
		gt_html_esc(f, gpu_label(an, d[i]->gpu));
		fprintf(f,
			"</td><td class=\"n\">%u</td><td class=\"n\">%llu</td><td class=\"n\">%.3f</td><td "
			"class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>",
			d[i]->stream, (unsigned long long)d[i]->ops, idle_of(d[i]) / 1e6, d[i]->idle_ns[0] / 1e6,
			d[i]->idle_ns[1] / 1e6, d[i]->idle_ns[2] / 1e6);
		/* no launch call of the stream's ops in the trace: the queue is unknown, "-" */
		num_cell(f, 0, d[i]->queued ? (double)d[i]->queue_max : NAN);
		num_cell(f, 2, d[i]->queued ? d[i]->queue_time_mean : NAN);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	free(d);
out:
	free(s);
	free(v);
	free(labels);
	free(lp);
}

static void sec_launches(FILE *f, const struct gt_an_result *an, const char *why, double t_base)
{
	fputs("<h2 id=\"launches\">Kernel launches and the launch queue</h2>\n", f);
	if (no_timeline(f, an, why))
		return;
	if (!an->nkernels) {
		gt_html_absent(f, "no GPU op");
		return;
	}
	fprintf(f, "<p class=\"note\">Launch delay: the op's start on the GPU minus the end of its launch call "
		   "(HTA's launch delay), for the ops whose launch call is in the trace. Short: the launch call took "
		   "at most %.0f us and the op ran shorter than it. Outliers: a delay over %.0f us, a launch call over "
		   "%.0f us. Queue: ops launched on a stream and not started yet (HTA's queue length).</p>\n",
		an->runtime_cutoff_ns / 1e3, an->delay_cutoff_ns / 1e3, an->runtime_cutoff_ns / 1e3);
	fputs("<table><tr><th>rank</th><th>ops</th><th>launched</th><th>mean delay us</th><th>mean launch call "
	      "us</th><th>short</th><th>delay outliers</th><th>call outliers</th></tr>\n",
	      f);
	struct gt_an_launches a;
	int src;
	uint64_t launched = 0;
	for (size_t i = 0; (src = gt_an_next_rank_launches(an, &i, &a)) >= 0;) {
		char rl[64];
		gt_an_source_label(an, src, rl, sizeof(rl));
		fputs("<tr><td>", f);
		gt_html_esc(f, rl);
		fprintf(f, "</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td>", (unsigned long long)a.ops,
			(unsigned long long)a.launched);
		/* no launch call of the rank in the trace: unknown, "-" */
		num_cell(f, 2, a.launched ? a.delay_ns / 1e3 / (double)a.launched : NAN);
		num_cell(f, 2, a.launched ? a.cpu_ns / 1e3 / (double)a.launched : NAN);
		fprintf(f, "<td class=\"n\">%llu</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td></tr>\n",
			(unsigned long long)a.short_n, (unsigned long long)a.delay_outliers,
			(unsigned long long)a.runtime_outliers);
		launched += a.launched;
	}
	fputs("</table>\n", f);
	if (!launched) {
		gt_html_absent(f, "no op's launch call is in the inputs: no launch delay and no queue (the trace has no "
				  "CUDA runtime or driver calls)");
		return;
	}
	/* launch delay of the kernels with the most time */
	const struct gt_an_kernel **k = calloc(an->nkernels, sizeof(*k));
	if (!k)
		return;
	size_t nk = 0;
	for (size_t i = 0; i < an->nkernels; i++)
		if (an->kernels[i].launched)
			k[nk++] = &an->kernels[i];
	gt_sort(k, nk, sizeof(*k), kernel_time_cmp);
	size_t nb = nk < TOP_BARS ? nk : TOP_BARS;
	struct gt_bar bars[TOP_BARS];
	char labels[TOP_BARS][96], notes[TOP_BARS][112], *titles[TOP_BARS] = {0};
	for (size_t i = 0; i < nb; i++) {
		bar_label(an, k[i], labels[i], sizeof(labels[i]));
		/* the bar is the p90: its label says it first, in the tables' unit and decimals */
		snprintf(notes[i], sizeof(notes[i]), "p90 %.1f us (p50 %.1f, max %.1f), %llu launches",
			 k[i]->delay_p90_ns / 1e3, k[i]->delay_p50_ns / 1e3, k[i]->delay_max_ns / 1e3,
			 (unsigned long long)k[i]->launched);
		titles[i] = bar_title(an, k[i]);
		bars[i] = (struct gt_bar){labels[i], k[i]->delay_p90_ns / 1e3, notes[i], titles[i]};
	}
	gt_svg_hbars(f, "launch delay (90th percentile) of the ops with the most GPU time", bars, nb, "us");
	for (size_t i = 0; i < nb; i++)
		free(titles[i]);
	free(k);
	/* the queue over time, on the streams where it grew most */
	const struct gt_an_stream **s = calloc(an->nstreams ? an->nstreams : 1, sizeof(*s));
	if (!s)
		return;
	size_t ns = 0;
	for (size_t i = 0; i < an->nstreams; i++)
		if (an->streams[i].queue_max > 0 && an->streams[i].queue_series)
			s[ns++] = &an->streams[i];
	gt_sort(s, ns, sizeof(*s), stream_queue_cmp);
	if (ns > MAX_LINES)
		ns = MAX_LINES;
	struct gt_series gs[MAX_LINES];
	char names[MAX_LINES][96];
	double *xy = calloc(2 * (an->nbuckets ? an->nbuckets : 1) * (ns ? ns : 1), sizeof(double));
	if (!xy) {
		free(s);
		return;
	}
	for (size_t i = 0; i < ns; i++) {
		double *x = xy + 2 * i * an->nbuckets, *y = x + an->nbuckets;
		for (size_t b = 0; b < an->nbuckets; b++) {
			x[b] = bucket_x(an, s[i]->gpu, b, t_base);
			y[b] = s[i]->queue_series[b];
		}
		snprintf(names[i], sizeof(names[i]), "%s s%u", gpu_label(an, s[i]->gpu), s[i]->stream);
		gs[i] = (struct gt_series){names[i], x, y, an->nbuckets};
	}
	if (ns) {
		char title[160];
		snprintf(title, sizeof(title), "launch queue per stream: the most ops waiting in each of %zu time buckets",
			 an->nbuckets);
		gt_svg_lines(f, title, "ops launched, not started", gs, ns);
	}
	free(xy);
	free(s);
}

static void sec_top(FILE *f, const struct gt_an_result *an, const char *why)
{
	fputs("<h2 id=\"topkernels\">Top kernels per kind</h2>\n", f);
	if (no_timeline(f, an, why))
		return;
	if (!an->nkernels) {
		gt_html_absent(f, "no GPU op");
		return;
	}
	int top = an->top > 0 ? an->top : 5;
	/* the rows each rank's top N of each kind (r->kernels: by source, kind, time) */
	const struct gt_an_kernel **k = calloc(an->nkernels, sizeof(*k));
	if (!k)
		return;
	size_t nk = 0, nranks = 0;
	int src = -1, cat = -1, n = 0;
	for (size_t i = 0; i < an->nkernels; i++) {
		const struct gt_an_kernel *e = &an->kernels[i];
		if (e->source != src) {
			nranks++;
			n = 0;
		} else if (e->cat != cat) {
			n = 0;
		}
		src = e->source;
		cat = e->cat;
		if (n++ < top)
			k[nk++] = e;
	}
	fprintf(f, "<p class=\"note\">The %d ops with the most GPU time of each kind (compute kernels, communication "
		   "kernels, memory operations) on each rank; share: of that kind's time on the rank.</p>\n",
		top);
	for (int c = 0; c < 3; c++) {
		const struct gt_an_kernel *sel[TOP_BARS];
		const struct gt_an_kernel **all = calloc(nk ? nk : 1, sizeof(*all));
		if (!all)
			break;
		size_t na = 0;
		for (size_t i = 0; i < nk; i++)
			if (k[i]->cat == c)
				all[na++] = k[i];
		gt_sort(all, na, sizeof(*all), kernel_time_cmp);
		size_t nb = na < TOP_BARS ? na : TOP_BARS;
		struct gt_bar bars[TOP_BARS];
		char labels[TOP_BARS][96], notes[TOP_BARS][96], *titles[TOP_BARS] = {0};
		for (size_t i = 0; i < nb; i++) {
			sel[i] = all[i];
			char rl[32];
			gt_an_source_label(an, sel[i]->source, rl, sizeof(rl));
			bar_label(an, sel[i], labels[i], sizeof(labels[i]));
			double kt = gt_an_kind_time(an, sel[i]->source, c);
			snprintf(notes[i], sizeof(notes[i]), "%.3f ms (%.1f%% on %.12s)", sel[i]->time_ns / 1e6,
				 kt > 0 ? sel[i]->time_ns / kt * 100 : 0, rl);
			titles[i] = bar_title(an, sel[i]);
			bars[i] = (struct gt_bar){labels[i], sel[i]->time_ns / 1e6, notes[i], titles[i]};
		}
		if (nb) {
			char title[96];
			snprintf(title, sizeof(title), "top %s ops (all ranks; share of the kind's time on the rank)",
				 gt_an_kind_name(c));
			gt_svg_hbars(f, title, bars, nb, "ms");
		}
		for (size_t i = 0; i < nb; i++)
			free(titles[i]);
		free(all);
	}
	if (nranks > MAX_RANKS)
		fprintf(f, "<p class=\"note\">The table lists the first %d of %zu ranks; <code>gputap analyze --format "
			   "csv</code> has them all.</p>\n",
			MAX_RANKS, nranks);
	fputs("<table><tr><th>rank</th><th>kind</th><th>time ms</th><th>share %</th><th>count</th><th>delay p50 "
	      "us</th><th>delay p90 us</th><th>delay max us</th><th>short</th><th>name</th></tr>\n",
	      f);
	size_t ranks = 0;
	src = -1;
	for (size_t i = 0; i < nk; i++) {
		if (k[i]->source != src && ++ranks > MAX_RANKS)
			break;
		src = k[i]->source;
		char rl[64];
		gt_an_source_label(an, k[i]->source, rl, sizeof(rl));
		double kt = gt_an_kind_time(an, k[i]->source, k[i]->cat);
		fputs("<tr><td>", f);
		gt_html_esc(f, rl);
		fprintf(f, "</td><td>%s</td><td class=\"n\">%.3f</td><td class=\"n\">%.2f</td><td class=\"n\">%llu</td>",
			gt_an_kind_name(k[i]->cat), k[i]->time_ns / 1e6, kt > 0 ? k[i]->time_ns / kt * 100 : 0,
			(unsigned long long)k[i]->count);
		num_cell(f, 1, k[i]->delay_p50_ns / 1e3);
		num_cell(f, 1, k[i]->delay_p90_ns / 1e3);
		num_cell(f, 1, k[i]->delay_max_ns / 1e3);
		fprintf(f, "<td class=\"n\">%llu</td><td><code title=\"", (unsigned long long)k[i]->short_n);
		/* a long name shortened (start, end, a hash), the whole of it on hover */
		char sn[128];
		gt_an_short_name(k[i]->name, NAME_COL, sn, sizeof(sn));
		gt_html_esc(f, k[i]->name);
		fputs("\">", f);
		gt_html_esc(f, sn);
		fputs("</code></td></tr>\n", f);
	}
	fputs("</table>\n", f);
	free(k);
}

static void sec_membw(FILE *f, const struct gt_an_result *an, const char *why, double t_base)
{
	fputs("<h2 id=\"membw\">Memory bandwidth over time</h2>\n", f);
	if (no_timeline(f, an, why))
		return;
	if (!an->nmembw) {
		gt_html_absent(f, "the inputs hold no memcpy or memset");
		return;
	}
	fputs("<p class=\"note\">The bandwidth of the copies and sets of each kind running at once (HTA's memory "
	      "bandwidth series, in GB/s: a billion bytes per second), drawn as its largest value in each time bucket: the "
	      "plot's peak is the table's. Peak: the largest sum of the bandwidths of the ops running at once; mean: "
	      "the mean of that sum where it is above 0; bytes / time: all bytes over the ops' summed time.</p>\n",
	      f);
	const struct gt_an_membw **m = calloc(an->nmembw, sizeof(*m));
	if (!m)
		return;
	size_t nm = 0;
	for (size_t i = 0; i < an->nmembw; i++)
		if (an->membw[i].bytes && an->membw[i].peak_series)
			m[nm++] = &an->membw[i];
	gt_sort(m, nm, sizeof(*m), membw_bytes_cmp);
	if (nm > MAX_LINES)
		nm = MAX_LINES;
	struct gt_series gs[MAX_LINES];
	char names[MAX_LINES][112];
	double *xy = calloc(2 * (an->nbuckets ? an->nbuckets : 1) * (nm ? nm : 1), sizeof(double));
	if (xy) {
		for (size_t i = 0; i < nm; i++) {
			double *x = xy + 2 * i * an->nbuckets, *y = x + an->nbuckets;
			for (size_t b = 0; b < an->nbuckets; b++) {
				x[b] = bucket_x(an, m[i]->gpu, b, t_base);
				y[b] = m[i]->peak_series[b];
			}
			const char *kind = m[i]->kind;
			if (strncmp(kind, "Memcpy ", 7) == 0)
				kind += 7;
			snprintf(names[i], sizeof(names[i]), "%s %s", gpu_label(an, m[i]->gpu), kind);
			gs[i] = (struct gt_series){names[i], x, y, an->nbuckets};
		}
		if (nm) {
			char title[160];
			snprintf(title, sizeof(title),
				 "memory bandwidth per kind: the most at once in each of %zu time buckets", an->nbuckets);
			const struct gt_line_opts lo = {NAN, NAN, 1, "GB/s"};
			gt_svg_lines_opt(f, title, "GB/s", gs, nm, &lo);
		} else {
			gt_html_absent(f, "the copies and sets carry no byte counts");
		}
	}
	free(xy);
	free(m);
	fputs("<table><tr><th>GPU</th><th>kind</th><th>count</th><th>bytes</th><th>time ms</th><th>mean GB/s "
	      "(bytes / time)</th><th>peak GB/s</th><th>mean GB/s at once</th></tr>\n",
	      f);
	for (size_t i = 0; i < an->nmembw && i < MAX_ROWS; i++) {
		const struct gt_an_membw *w = &an->membw[i];
		char b[32];
		gt_fmt_bytes(b, sizeof(b), (double)w->bytes);
		fputs("<tr><td>", f);
		gt_html_esc(f, gpu_label(an, w->gpu));
		fputs("</td><td>", f);
		gt_html_esc(f, w->kind);
		fprintf(f,
			"</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td class=\"n\">%.3f</td><td "
			"class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td></tr>\n",
			(unsigned long long)w->count, b, w->time_ns / 1e6, w->avg_gbps, w->peak_gbps, w->mean_gbps);
	}
	fputs("</table>\n", f);
	if (an->nmembw > MAX_ROWS)
		fprintf(f, "<p class=\"note\">The first %d of %zu rows; <code>gputap analyze --format csv</code> has them "
			   "all.</p>\n",
			MAX_ROWS, an->nmembw);
}

void gt_rep_an_hta_note(FILE *f, const struct gt_an_result *an)
{
	if (!an || !an->has_timeline)
		return;
	const struct gt_an_hta *h = &an->hta;
	if (!h->nolaunch_ops && !h->last_step_ops && !h->sync_events && !h->cpu_stream_events)
		return;
	fputs("<p class=\"note\">What HTA's default view would count differently (see docs/analyze.md):", f);
	const char *sep = " ";
	if (h->nolaunch_ops) {
		fprintf(f, "%s%llu GPU ops launched before the trace began (%.3f ms) are counted here and left out by HTA",
			sep, (unsigned long long)h->nolaunch_ops, h->nolaunch_ns / 1e6);
		sep = "; ";
	}
	if (h->last_step_ops) {
		fprintf(f, "%s%llu GPU ops launched in the last ProfilerStep (%.3f ms) are counted here and left out by "
			   "HTA's default",
			sep, (unsigned long long)h->last_step_ops, h->last_step_ns / 1e6);
		sep = "; ";
	}
	if (h->sync_events) {
		fprintf(f, "%s%llu cuda_sync events are not GPU work here and are GPU work to HTA", sep,
			(unsigned long long)h->sync_events);
		sep = "; ";
	}
	if (h->cpu_stream_events)
		fprintf(f, "%s%llu CPU-side events that carry args.stream are not GPU work here and are GPU work to HTA",
			sep, (unsigned long long)h->cpu_stream_events);
	fputs(".</p>\n", f);
}

void gt_rep_an_sections(FILE *f, const struct gt_an_result *an, const char *why, double t_base)
{
	sec_idle(f, an, why);
	sec_launches(f, an, why, t_base);
	sec_top(f, an, why);
	sec_membw(f, an, why, t_base);
}

/* ---------------- terminal summary ---------------- */
void gt_rep_an_summary(FILE *f, const struct gt_an_result *an)
{
	if (!an || !an->has_timeline)
		return;
	char esc[512]; /* names from the inputs are shown with their control bytes as \xNN (core/log.h) */
	/* iterations and overlap */
	size_t with_iters = 0, niters = 0;
	for (size_t i = 0; i < an->ngpu; i++)
		if (an->gpu[i].niters) {
			with_iters++;
			if (an->gpu[i].niters > niters)
				niters = an->gpu[i].niters;
		}
	if (with_iters)
		fprintf(f, "  iterations   %zu (%s) on %zu GPU%s\n", niters, an->iter_source, with_iters,
			with_iters > 1 ? "s" : "");
	else
		fprintf(f, "  iterations   none found (no NVTX range or ProfilerStep): whole run only\n");
	if (an->total.comm_ns > 0) {
		char c[32], e[32];
		gt_fmt_ns(c, sizeof(c), an->total.comm_ns);
		gt_fmt_ns(e, sizeof(e), an->total.exposed_ns);
		fprintf(f, "  overlap      communication %s, %.1f%% of it hidden by compute, %s exposed\n", c,
			an->total.overlap_ns / an->total.comm_ns * 100, e);
	}
	/* idle by cause */
	double idle[GT_IDLE_N] = {0};
	for (size_t i = 0; i < an->nstreams; i++)
		for (int c = 0; c < GT_IDLE_N; c++)
			idle[c] += an->streams[i].idle_ns[c];
	double all = idle[0] + idle[1] + idle[2];
	char b[32];
	if (all > 0) {
		gt_fmt_ns(b, sizeof(b), all);
		fprintf(f, "  idle gaps    %s on %zu stream%s: host wait %.1f%%, kernel wait %.1f%%, other %.1f%%\n", b,
			an->nstreams, an->nstreams == 1 ? "" : "s", idle[0] / all * 100, idle[1] / all * 100,
			idle[2] / all * 100);
	}
	/* launches and the queue */
	struct gt_an_launches a, t = {0};
	for (size_t i = 0; gt_an_next_rank_launches(an, &i, &a) >= 0;) {
		t.ops += a.ops;
		t.launched += a.launched;
		t.short_n += a.short_n;
		t.delay_ns += a.delay_ns;
	}
	const struct gt_an_stream *qs = NULL;
	for (size_t i = 0; i < an->nstreams; i++)
		if (!qs || an->streams[i].queue_max > qs->queue_max)
			qs = &an->streams[i];
	if (t.launched) {
		gt_fmt_ns(b, sizeof(b), t.delay_ns / (double)t.launched);
		fprintf(f, "  launches     %llu of %llu ops launched in the trace, mean launch delay %s, %llu short",
			(unsigned long long)t.launched, (unsigned long long)t.ops, b, (unsigned long long)t.short_n);
		if (qs && qs->queue_max)
			fprintf(f, ", queue up to %u (%s stream %u)", qs->queue_max,
				gt_term_str(gpu_label(an, qs->gpu), esc, sizeof(esc)), qs->stream);
		fputc('\n', f);
	}
	/* the top op of each kind */
	for (int c = 0; c < 3; c++) {
		const struct gt_an_kernel *best = NULL;
		for (size_t i = 0; i < an->nkernels; i++)
			if (an->kernels[i].cat == c && (!best || an->kernels[i].time_ns > best->time_ns))
				best = &an->kernels[i];
		if (!best)
			continue;
		char rl[32], sn[64];
		gt_an_source_label(an, best->source, rl, sizeof(rl));
		short_name(best->name, sn, sizeof(sn));
		double kt = gt_an_kind_time(an, best->source, c);
		static const char *const lab[3] = {"top compute", "top comm", "top memory"};
		gt_fmt_ns(b, sizeof(b), best->time_ns);
		fprintf(f, "  %-12s %s: %s, %.1f%% of ", lab[c], gt_term_str(sn, esc, sizeof(esc)), b,
			kt > 0 ? best->time_ns / kt * 100 : 0);
		fprintf(f, "%s's %s\n", gt_term_str(rl, esc, sizeof(esc)), gt_an_kind_name(c));
	}
	/* memory bandwidth */
	const struct gt_an_membw *pk = NULL;
	for (size_t i = 0; i < an->nmembw; i++)
		if (!pk || an->membw[i].peak_gbps > pk->peak_gbps)
			pk = &an->membw[i];
	char pv[32];
	gt_fmt_num(pv, sizeof(pv), pk ? pk->peak_gbps : 0);
	if (pk && pk->peak_gbps > 0)
		fprintf(f, "  memory bw    peak %s GB/s (%s on %s), %zu kinds\n", pv, pk->kind,
			gt_term_str(gpu_label(an, pk->gpu), esc, sizeof(esc)), an->nmembw);
	const struct gt_an_hta *h = &an->hta;
	if (h->nolaunch_ops || h->last_step_ops)
		fprintf(f, "  HTA view     would leave out %llu ops (%llu launched before the trace, %llu in the last "
			   "ProfilerStep)\n",
			(unsigned long long)(h->nolaunch_ops + h->last_step_ops), (unsigned long long)h->nolaunch_ops,
			(unsigned long long)h->last_step_ops);
}
