/* Range-metrics tables for the run summary and `gputap report`, from DIR/<proc>/range_metrics.csv.  See rmtable.h. */
#include "report/rmtable.h"

#include <stdlib.h>
#include <string.h>

#include "core/csvio.h"
#include "report/svg.h"
#include "trace/rundir.h"

/* Columns of range_metrics.csv (metrics/rmagg.h). */
/* `exact` came later: files without it (12 columns) are read as exact. */
enum { C_MODE, C_PATH, C_NAME, C_LEVEL, C_OCC, C_KERNELS, C_METRIC, C_UNIT, C_SUM, C_MAX, C_MEAN, C_MIN, C_EXACT, C_N };

/* A long path keeps its innermost part ("...step/forward"), a long metric name its head. */
static void fit(char *buf, size_t cap, const char *s, size_t w, int keep_tail)
{
	size_t n = strlen(s);
	if (n <= w)
		snprintf(buf, cap, "%s", s);
	else if (keep_tail)
		snprintf(buf, cap, "...%s", s + n - (w - 3));
	else
		snprintf(buf, cap, "%.*s...", (int)(w - 3), s);
}

static void num(char *buf, size_t cap, const char *v)
{
	if (!v || !*v) {
		snprintf(buf, cap, "-");
		return;
	}
	double d = strtod(v, NULL);
	/* nine characters at most: the table fits 80 columns */
	if (d == (double)(long long)d && d < 1e9 && d > -1e8)
		snprintf(buf, cap, "%lld", (long long)d);
	else
		snprintf(buf, cap, "%.3g", d);
}

/* One process: the per-name ("all") rows, first max_rows of them. */
static int table(FILE *out, const char *rundir, const char *proc, int max_rows, int html)
{
	char p[4400];
	snprintf(p, sizeof(p), "%s/%s/" GT_PROC_RANGE_METRICS, rundir, proc);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	char line[8192];
	int lineno = 0, shown = 0, total = 0;
	char mode[32] = "", inexact[300] = "";
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		char *c[C_N + 1];
		int nc = lineno == 1 ? 0 : gt_csv_split(line, c, C_N + 1);
		if (nc != C_N && nc != C_N - 1)
			continue;
		if (nc == C_N && strncmp(c[C_EXACT], "no", 2) == 0 && !inexact[0])
			snprintf(inexact, sizeof(inexact), "%s", c[C_EXACT]);
		if (strcmp(c[C_OCC], "all") != 0)
			continue;
		total++;
		if (!mode[0]) {
			snprintf(mode, sizeof(mode), "%s", c[C_MODE]);
			if (html) {
				fprintf(out, "<h3>");
				gt_html_esc(out, proc);
				fprintf(out, " &middot; %s</h3>\n<table><tr><th>range</th><th>kernels</th><th>metric</th>"
					     "<th>unit</th><th>sum</th><th>max</th><th>mean</th><th>min</th></tr>\n",
					mode);
			} else {
				fprintf(out, "\nRange metrics of %s (%s; every occurrence of a range merged)\n", proc, mode);
				fprintf(out, "  %-13s %6s %-22s %-4s %9s %9s %9s\n", "Range", "Kernel", "Metric", "Unit",
					"Sum", "Mean", "Max");
			}
		}
		if (shown >= max_rows)
			continue;
		shown++;
		if (html) {
			fputs("<tr><td>", out);
			gt_html_esc(out, c[C_PATH]);
			fprintf(out, "</td><td>%s</td><td>", c[C_KERNELS]);
			gt_html_esc(out, c[C_METRIC]);
			fputs("</td><td>", out);
			gt_html_esc(out, c[C_UNIT]);
			for (int k = C_SUM; k <= C_MIN; k++) {
				char v[64];
				num(v, sizeof(v), c[k]);
				fprintf(out, "</td><td>%s", v);
			}
			fputs("</td></tr>\n", out);
		} else {
			char r[64], m[64], u[16], s[32], me[32], mx[32];
			fit(r, sizeof(r), c[C_PATH], 13, 1);
			fit(m, sizeof(m), c[C_METRIC], 22, 0);
			fit(u, sizeof(u), c[C_UNIT], 4, 0);
			num(s, sizeof(s), c[C_SUM]);
			num(me, sizeof(me), c[C_MEAN]);
			num(mx, sizeof(mx), c[C_MAX]);
			fprintf(out, "  %-13s %6s %-22s %-4s %9s %9s %9s\n", r, c[C_KERNELS], m, u, s, me, mx);
		}
	}
	fclose(f);
	if (html && mode[0])
		fputs("</table>\n", out);
	if (total > shown)
		fprintf(out, html ? "<p class=\"note\">%d more rows in %s/range_metrics.csv</p>\n"
				  : "  (%d more rows in %s/range_metrics.csv)\n",
			total - shown, proc);
	if (inexact[0]) {
		const char *why = inexact[2] == ':' ? inexact + 4 : inexact;
		if (html) {
			fputs("<p class=\"note\"><b>Not exact:</b> ", out);
			gt_html_esc(out, why);
			fputs("</p>\n", out);
		} else {
			fprintf(out, "  NOT EXACT: %s\n", why);
		}
	}
	if (!html && mode[0])
		fprintf(out, "  per kernel: %s/kernel_metrics.csv; per occurrence: range_metrics.csv\n", proc);
	return 0;
}

int gt_rm_tables(FILE *out, const char *rundir, int max_rows, int html)
{
	struct gt_rundir_proc *procs;
	int np = gt_rundir_procs(rundir, &procs), n = 0;
	for (int i = 0; i < np; i++) /* the <proc> folders that hold range_metrics.csv */
		if (procs[i].has_range_metrics)
			procs[n++] = procs[i];
	if (html && n)
		fputs("<h2 id=\"range-metrics\">Range metrics</h2>\n<p class=\"note\">GPU hardware counters per NVTX "
		      "range, over the kernels inside it (per-kernel mode) or over the range's time (per-range mode); "
		      "full tables in each process's range_metrics.csv.</p>\n",
		      out);
	for (int i = 0; i < n; i++)
		table(out, rundir, procs[i].name, max_rows, html);
	free(procs);
	return n;
}
