/* report/term.c — the report's terminal summary.  See page.h. */
#include "report/page.h"

#include <math.h>

#include "analyze/findings.h"
#include "core/log.h"
#include "report/report_an.h"
#include "report/pcstable.h"
#include "report/rmtable.h"
#include "report/svg.h"

/* What is wrong first, one line: the findings at or above the default threshold, most costly first
 * (analyze/findings.h; the page and `gputap advise` give the evidence). */
static void summary_findings(FILE *f, const struct gt_fd_list *l)
{
	if (!l)
		return;
	size_t shown = gt_fd_shown(l, GT_FD_MIN_GAIN_PCT);
	if (!l->nchecked) { /* nothing the input could show (no timeline): why, as the first kind says */
		fprintf(f, "  findings     none checked: %s\n", l->nskipped ? l->skipped[0].why : "nothing to check");
		return;
	}
	if (!shown) {
		fprintf(f, "  findings     none with an estimated gain of %.0f%% of an iteration or more (%zu kind%s checked)\n",
			GT_FD_MIN_GAIN_PCT, l->nchecked, l->nchecked == 1 ? "" : "s");
		return;
	}
	fprintf(f, "  findings     %zu:", shown);
	for (size_t i = 0, k = 0; i < l->n && k < 4; i++)
		if (gt_fd_listed(&l->v[i], GT_FD_MIN_GAIN_PCT))
			fprintf(f, "%s %s %s%.1f%%", k++ ? "," : "", l->v[i].id, l->v[i].upper_bound ? "up to " : "",
				l->v[i].gain_pct);
	fprintf(f, "%s of an iteration (gputap advise: evidence and fixes)\n", shown > 4 ? ", ..." : "");
}

void gt_rp_summary(FILE *f, const struct page *p, const char *html)
{
	/* names from the run's files are shown with their control bytes as \xNN (core/log.h) */
	char b[64], b2[64], esc[1024];
	fprintf(f, "gputap report: %s\n", gt_term_str(p->dir, esc, sizeof(esc)));
	summary_findings(f, p->an ? p->an->findings : NULL);
	if (p->inputs) {
		int nsrc = 0; /* a folder of traces is one input of several ranks */
		for (size_t i = 0; p->an && i < p->an->ngpu; i++)
			if (p->an->gpu[i].source + 1 > nsrc)
				nsrc = p->an->gpu[i].source + 1;
		if (nsrc > p->ninputs)
			fprintf(f, "  inputs       %d traces (in %d input%s)\n", nsrc, p->ninputs, p->ninputs > 1 ? "s" : "");
		else
			fprintf(f, "  inputs       %d trace%s\n", p->ninputs, p->ninputs > 1 ? "s" : "");
	} else if (p->run) {
		const char *c = gt_rp_run_str(p, "command", b, sizeof(b));
		fprintf(f, "  command      %s\n", c ? gt_term_str(c, esc, sizeof(esc)) : "?");
		const char *w = gt_rp_run_str(p, "wall_s", b, sizeof(b));
		const char *e = gt_rp_run_str(p, "exit_status", b2, sizeof(b2));
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
	if (!p->inputs)
		gt_pcs_tables(f, p->dir, 10, 0);
}

