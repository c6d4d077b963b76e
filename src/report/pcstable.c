/* PC sampling tables for the run summary and report.html.  See pcstable.h. */
#include "report/pcstable.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/demangle.h"
#include "core/sort.h"
#include "export/pcsamp.h"
#include "export/writers.h"
#include "report/svg.h"
#include "trace/rundir.h"

/* One colour per stall group (index as gt_pcs_group_name), cycling. */
static const char *const colours[] = {"#d62728", "#9467bd", "#1f77b4", "#ff7f0e", "#8c564b", "#e377c2",
				      "#bcbd22", "#7f7f7f", "#2ca02c", "#17becf", "#aec7e8", "#ffbb78"};

struct rsum {
	const char *range, *top;
	double samples, top_samples;
};
static int by_rsum(const void *x, const void *y)
{
	const struct rsum *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return strcmp(a->range, b->range);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The two largest groups of kernel k. */
static void top2(const struct gt_pcs_kernel *k, int *g1, int *g2)
{
	*g1 = *g2 = -1;
	for (size_t g = 0; g < gt_pcs_ngroups(); g++) {
		if (!k->group[g])
			continue;
		if (*g1 < 0 || k->group[g] > k->group[*g1]) {
			*g2 = *g1;
			*g1 = (int)g;
		} else if (*g2 < 0 || k->group[g] > k->group[*g2]) {
			*g2 = (int)g;
		}
	}
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "";
}

static void text_table(FILE *out, const char *proc, const struct gt_pcs_data *d, int max_k)
{
	const char *per = gt_pcs_total(d, "period_log2_cycles"), *drop = gt_pcs_total(d, "dropped_samples");
	fprintf(out, "\nPC sampling of %s: %" PRIu64 " samples (one per SM every 2^%s cycles), %s dropped by the hardware\n",
		proc, d->samples, per ? per : "?", drop ? drop : "?");
	const char *wm = gt_pcs_total(d, "window_mode"), *nw = gt_pcs_total(d, "windows"),
		   *before = gt_pcs_total(d, "samples_before_windows");
	if (wm && strcmp(wm, "1") == 0)
		fprintf(out, "  sampled only in windows (gputap_pcsamp_start ... stop): %s; %s samples before the first dropped\n",
			nw ? nw : "?", before ? before : "?");
	fprintf(out, "  %-30s %9s %6s  %-24s %s\n", "Kernel", "Samples", "Share", "Top stall", "Next");
	for (size_t i = 0; i < d->nk && (int)i < max_k; i++) {
		const struct gt_pcs_kernel *k = &d->k[i];
		char dm[2048], nm[64], a[64] = "-", b[64] = "";
		gt_export_short_name(nm, sizeof(nm), gt_demangle_to(k->name, dm, sizeof(dm)), 30);
		int g1, g2;
		top2(k, &g1, &g2);
		if (g1 >= 0)
			snprintf(a, sizeof(a), "%s %.0f%%", gt_pcs_group_name((size_t)g1), pct(k->group[g1], k->samples));
		if (g2 >= 0)
			snprintf(b, sizeof(b), "%s %.0f%%", gt_pcs_group_name((size_t)g2), pct(k->group[g2], k->samples));
		fprintf(out, "  %-30s %9" PRIu64 " %5.1f%%  %-24s %s\n", nm, k->samples, pct(k->samples, d->samples), a, b);
		if (k->ntop_line)
			fprintf(out, "      hottest line %s:%" PRIu32 " (%.0f%%)", base(k->top_line[0].file), k->top_line[0].line,
				pct(k->top_line[0].samples, k->samples));
		else
			fputs("      no line info", out);
		if (k->ntop_pc) {
			const struct gt_pcs_row *w = &d->row[k->top_pc[0]];
			fprintf(out, "; PC +0x%" PRIx64 " %.40s (%.0f%%)", w->off, w->sass ? w->sass : "", pct(w->samples, k->samples));
		}
		fputc('\n', out);
	}
	if (d->nk > (size_t)max_k)
		fprintf(out, "  (%zu more kernels)\n", d->nk - (size_t)max_k);
	if (d->nrr) {
		/* per range: its samples (every kernel's share) and its hottest kernel, most samples first */
		struct rsum *v = calloc(d->nrr, sizeof(*v));
		size_t n = 0;
		for (size_t i = 0; v && i < d->nrr; i++) {
			const struct gt_pcs_range_row *w = &d->rr[i];
			struct rsum *x = NULL;
			for (size_t j = 0; j < n && !x; j++)
				if (strcmp(v[j].range, w->range) == 0)
					x = &v[j];
			if (!x) {
				x = &v[n++];
				x->range = w->range;
			}
			x->samples += w->samples;
			if (!x->top || w->samples > x->top_samples) {
				x->top = w->kernel;
				x->top_samples = w->samples;
			}
		}
		gt_sort(v, n, sizeof(*v), by_rsum);
		fputs("  by NVTX range (a kernel's samples split by its GPU time in each range):\n", out);
		for (size_t i = 0; i < n && i < (size_t)max_k; i++) {
			char dm[2048], nm[64], rg[40];
			gt_export_short_name(nm, sizeof(nm), gt_demangle_to(v[i].top, dm, sizeof(dm)), 30);
			size_t len = strlen(v[i].range);
			snprintf(rg, sizeof(rg), "%s%s", len > 30 ? "..." : "", len > 30 ? v[i].range + len - 27 : v[i].range);
			fprintf(out, "    %-30s %9.0f %5.1f%%  top: %s %.0f%%\n", rg, v[i].samples, pct((uint64_t)v[i].samples, d->samples),
				nm, v[i].samples > 0 ? 100.0 * v[i].top_samples / v[i].samples : 0.0);
		}
		if (n > (size_t)max_k)
			fprintf(out, "    (%zu more ranges in %s/" GT_PCS_FILE_RANGES ")\n", n - (size_t)max_k, proc);
		free(v);
	}
	fprintf(out, "  per PC: %s/" GT_PCS_FILE_SAMPLES "; per kernel: " GT_PCS_FILE_KERNELS ", " GT_PCS_FILE_JSON "\n", proc);
}

static void html_table(FILE *out, const char *proc, const struct gt_pcs_data *d, int max_k)
{
	const char *per = gt_pcs_total(d, "period_log2_cycles"), *drop = gt_pcs_total(d, "dropped_samples"),
		   *wm = gt_pcs_total(d, "window_mode");
	fputs("<h3>", out);
	gt_html_esc(out, proc);
	fprintf(out, "</h3>\n<p class=\"note\">%" PRIu64 " samples, one per SM every 2<sup>%s</sup> cycles; %s dropped by "
		     "the hardware%s. Bars: the stall reasons of each kernel's samples, grouped as Nsight Compute "
		     "names them.</p>\n<table><tr><th>kernel</th><th>samples</th><th>share</th><th>stall reasons</th>"
		     "<th>hottest lines</th></tr>\n",
		d->samples, per ? per : "?", drop ? drop : "?", wm && strcmp(wm, "1") == 0 ? "; sampled only in windows" : "");
	for (size_t i = 0; i < d->nk && (int)i < max_k; i++) {
		const struct gt_pcs_kernel *k = &d->k[i];
		char dm[2048], nm[128];
		gt_export_short_name(nm, sizeof(nm), gt_demangle_to(k->name, dm, sizeof(dm)), 60);
		fputs("<tr><td>", out);
		gt_html_esc(out, nm);
		fprintf(out, "</td><td>%" PRIu64 "</td><td>%.1f%%</td><td><div style=\"display:flex;width:320px;height:14px\">",
			k->samples, pct(k->samples, d->samples));
		for (size_t g = 0; g < gt_pcs_ngroups(); g++) {
			double p = pct(k->group[g], k->samples);
			if (p < 0.5)
				continue;
			fprintf(out, "<span title=\"%s %.1f%%\" style=\"width:%.1f%%;background:%s\"></span>", gt_pcs_group_name(g), p,
				p, colours[g % (sizeof(colours) / sizeof(colours[0]))]);
		}
		fputs("</div><small>", out);
		int g1, g2;
		top2(k, &g1, &g2);
		if (g1 >= 0)
			fprintf(out, "%s %.0f%%", gt_pcs_group_name((size_t)g1), pct(k->group[g1], k->samples));
		if (g2 >= 0)
			fprintf(out, ", %s %.0f%%", gt_pcs_group_name((size_t)g2), pct(k->group[g2], k->samples));
		fputs("</small></td><td>", out);
		for (size_t t = 0; t < k->ntop_line && t < 3; t++) {
			char ln[600];
			snprintf(ln, sizeof(ln), "%s:%" PRIu32 " %.0f%%", base(k->top_line[t].file), k->top_line[t].line,
				 pct(k->top_line[t].samples, k->samples));
			if (t)
				fputs("<br>", out);
			gt_html_esc(out, ln);
		}
		if (!k->ntop_line && k->ntop_pc) {
			const struct gt_pcs_row *w = &d->row[k->top_pc[0]];
			char ln[600];
			snprintf(ln, sizeof(ln), "+0x%" PRIx64 " %s %.0f%%", w->off, w->sass ? w->sass : "(no line info)",
				 pct(w->samples, k->samples));
			gt_html_esc(out, ln);
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	if (d->nrr) {
		fputs("<p class=\"note\">By NVTX range: a kernel's samples split over the ranges it was launched in, by "
		      "its GPU time in each (continuous sampling gives no launch id).</p>\n<table><tr><th>range</th>"
		      "<th>kernel</th><th>launches</th><th>samples</th></tr>\n",
		      out);
		for (size_t i = 0; i < d->nrr && (int)i < max_k * 4; i++) {
			const struct gt_pcs_range_row *w = &d->rr[i];
			if (w->samples < 0.5)
				continue;
			char dm[2048], nm[128];
			gt_export_short_name(nm, sizeof(nm), gt_demangle_to(w->kernel, dm, sizeof(dm)), 60);
			fputs("<tr><td>", out);
			gt_html_esc(out, w->range);
			fputs("</td><td>", out);
			gt_html_esc(out, nm);
			fprintf(out, "</td><td>%" PRIu64 "</td><td>%.0f</td></tr>\n", w->launches, w->samples);
		}
		fputs("</table>\n", out);
	}
	if (d->nk > (size_t)max_k)
		fprintf(out, "<p class=\"note\">%zu more kernels in %s/" GT_PCS_FILE_KERNELS "</p>\n", d->nk - (size_t)max_k, proc);
}

int gt_pcs_tables(FILE *out, const char *rundir, int max_kernels, int html)
{
	struct gt_rundir_proc *procs = NULL;
	int np = gt_rundir_procs(rundir, &procs), n = 0;
	for (int i = 0; i < np; i++) {
		char dir[4400], err[512];
		snprintf(dir, sizeof(dir), "%s/%s", rundir, procs[i].name);
		struct gt_pcs_data d;
		if (gt_pcs_load(dir, &d, err, sizeof(err)) != 0)
			continue;
		if (gt_pcs_summarize(&d) == 0) {
			if (html && n == 0)
				fputs("<h2 id=\"pc-sampling\">PC sampling</h2>\n", out);
			if (html)
				html_table(out, procs[i].name, &d, max_kernels);
			else
				text_table(out, procs[i].name, &d, max_kernels);
			n++;
		}
		gt_pcs_free(&d);
	}
	free(procs);
	return n;
}
