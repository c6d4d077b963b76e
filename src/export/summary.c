/* The end-of-run summary: a few tables that fit 80 columns. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/log.h"
#include "export/export.h"
#include "export/holdstat.h"
#include "export/model.h"
#include "export/writers.h"

#define NAME_W 39 /* the name column of the kernel table, so that lines stay < 80 */

struct sum {
	struct gt_strpool pool;
	struct gt_stattab kern, api;
	uint64_t copy_bytes[GT_COPY_KIND_MAX], copy_ns[GT_COPY_KIND_MAX], copy_count[GT_COPY_KIND_MAX];
	uint64_t memset_bytes, memset_ns, memset_count;
	uint64_t kernel_ns, kernel_count, lost, dropped, records;
	uint64_t no_buffer;
	uint32_t notes;
	uint64_t windows, window_ns;
	char window_names[512];
	int partial;
	struct gt_holdstat hold;
	/* per trace */
	size_t n, cap;
	uint64_t *peaks;
	char (*procs)[32];
	char **paths;
};

static int merge(struct sum *s, struct gt_stattab *dst, const struct gt_stattab *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct gt_stat *a = &src->s[i];
		const char *name = gt_strpool_intern(&s->pool, a->name, strlen(a->name));
		struct gt_stat *b = name ? gt_stat_add(dst, name, NULL, 0) : NULL;
		if (!b)
			return -1;
		b->count += a->count - 1; /* gt_stat_add counted one call of 0 ns */
		b->total += a->total;
	}
	return 0;
}

void gt_export_short_name(char *buf, size_t cap, const char *name, size_t width)
{
	char *c = gt_utf8_clean(name);
	const char *s = c ? c : name;
	if (strncmp(s, "void ", 5) == 0)
		s += 5;
	size_t n = strlen(s);
	if (n > width && n > 0 && s[n - 1] == ')') { /* drop the parameter list */
		int depth = 0;
		for (size_t i = n; i-- > 0;) {
			if (s[i] == ')')
				depth++;
			else if (s[i] == '(' && --depth == 0) {
				if (i > 0)
					n = i;
				break;
			}
		}
	}
	if (width >= cap)
		width = cap - 1;
	if (n <= width) {
		snprintf(buf, cap, "%.*s", (int)n, s);
	} else {
		/* keep the head (the family) and the tail (often the tile or variant) */
		size_t tail = (width - 3) / 3, head = width - 3 - tail;
		snprintf(buf, cap, "%.*s...%.*s", (int)head, s, (int)tail, s + n - tail);
	}
	/* a UTF-8 character cut in two would print as garbage: drop broken bytes */
	char *t = gt_utf8_clean(buf);
	if (t) {
		snprintf(buf, cap, "%s", t);
		free(t);
	}
	free(c);
	/* for a terminal: control bytes of a name shown as \xNN */
	char e[512];
	if (gt_term_str(buf, e, sizeof(e)) != buf)
		snprintf(buf, cap, "%s", e);
}

static void human_bytes(char *buf, size_t cap, double b)
{
	const char *u[] = {"B", "KB", "MB", "GB", "TB"};
	int i = 0;
	while (b >= 1000 && i < 4) {
		b /= 1000;
		i++;
	}
	snprintf(buf, cap, i ? "%.2f %s" : "%.0f %s", b, u[i]);
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* "  rank0/  trace.gtr trace.json trace_*.csv ..." for the files that exist */
static void files_of(FILE *f, const char *trace)
{
	static const char *const names[] = {"trace.gtr",   "trace.json",   "trace.json.gz", "trace_cuda_gpu_kern_sum.csv",
					    "metrics.log", "timeline.log"};
	char dir[4096], p[4400];
	snprintf(dir, sizeof(dir), "%s", trace);
	char *sl = strrchr(dir, '/');
	if (sl)
		*sl = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	char line[512];
	int len = snprintf(line, sizeof(line), "  %.40s/ ", base);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		if (!exists(p) && !(i == 0 && (snprintf(p, sizeof(p), "%s/trace.gtr.partial", dir), exists(p))))
			continue;
		const char *shown = i == 3 ? "trace_*.csv" : names[i];
		if (len + 1 + (int)strlen(shown) >= 80)
			break;
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %s", shown);
	}
	fprintf(f, "%s\n", line);
}

static void print(FILE *f, struct sum *s, const char *rundir, const char *const *paths, int n,
		  const uint64_t *peaks, char (*procs)[32])
{
	char nm[128], a[32];
	if (!s->kernel_count && (s->notes & (1u << GT_NOTE_KERNELS_FOR_METRICS)))
		fprintf(f, "gputap summary: %d process%s, kernels measured by range metrics (no kernel records: see "
			"the note and the range-metrics tables below)%s\n",
			n, n == 1 ? "" : "es", s->partial ? " [partial]" : "");
	else
		fprintf(f, "gputap summary: %d process%s, %" PRIu64 " kernels, %.3f ms of GPU kernel time%s\n", n,
			n == 1 ? "" : "es", s->kernel_count, (double)s->kernel_ns / 1e6, s->partial ? " [partial]" : "");
	if (s->windows)
		fprintf(f, "Capture windows: %" PRIu64 " (%.3f ms traced in all; %s); outside them counters only\n",
			s->windows, (double)s->window_ns / 1e6, s->window_names);
	struct gt_stat **v = gt_stat_sorted(&s->kern);
	if (v && s->kern.n) {
		fprintf(f, "\nTop kernels by GPU time\n  %6s %10s %8s %9s  %s\n", "Time%", "Total(ms)", "Calls",
			"Avg(us)", "Name");
		for (size_t i = 0; i < s->kern.n && i < 10; i++) {
			gt_export_short_name(nm, sizeof(nm), v[i]->name, NAME_W);
			double pct = s->kernel_ns ? 100.0 * (double)v[i]->total / (double)s->kernel_ns : 0;
			fprintf(f, "  %6.1f %10.3f %8" PRIu64 " %9.1f  %s\n", pct, (double)v[i]->total / 1e6,
				v[i]->count, (double)v[i]->total / 1e3 / (double)v[i]->count, nm);
		}
		if (s->kern.n > 10)
			fprintf(f, "  (%zu more kernel names)\n", s->kern.n - 10);
	}
	free(v);
	v = gt_stat_sorted(&s->api);
	if (v && s->api.n) {
		fprintf(f, "\nCUDA API calls by host time\n  %10s %8s %9s  %s\n", "Total(ms)", "Calls", "Avg(us)",
			"Name");
		for (size_t i = 0; i < s->api.n && i < 5; i++) {
			gt_export_short_name(nm, sizeof(nm), v[i]->name, 50);
			fprintf(f, "  %10.3f %8" PRIu64 " %9.1f  %s\n", (double)v[i]->total / 1e6, v[i]->count,
				(double)v[i]->total / 1e3 / (double)v[i]->count, nm);
		}
	}
	free(v);
	int any = s->memset_count > 0;
	for (int k = 0; k < GT_COPY_KIND_MAX; k++)
		any |= s->copy_count[k] > 0;
	if (any) {
		fprintf(f, "\nMemory operations on the GPU\n  %-18s %12s %8s %10s %8s\n", "Direction", "Bytes", "Count",
			"Time(ms)", "GB/s");
		for (int k = 0; k <= GT_COPY_KIND_MAX; k++) {
			int ms = k == GT_COPY_KIND_MAX;
			uint64_t cnt = ms ? s->memset_count : s->copy_count[k];
			uint64_t by = ms ? s->memset_bytes : s->copy_bytes[k], ns = ms ? s->memset_ns : s->copy_ns[k];
			if (!cnt)
				continue;
			human_bytes(a, sizeof(a), (double)by);
			fprintf(f, "  %-18s %12s %8" PRIu64 " %10.3f ", ms ? "memset" : gt_copy_dir_name((unsigned)k), a,
				cnt, (double)ns / 1e6);
			if (ns)
				fprintf(f, "%8.2f\n", (double)by / (double)ns);
			else
				fprintf(f, "%8s\n", "-");
		}
	}
	gt_holdstat_sort(&s->hold);
	gt_holdstat_print(f, &s->hold);
	fputs("\nPeak device memory in use:", f);
	for (int i = 0; i < n; i++) {
		human_bytes(a, sizeof(a), (double)peaks[i]);
		fprintf(f, "%s %s", i ? "," : "", a);
		if (n > 1)
			fprintf(f, " (%s)", procs[i][0] ? gt_term_str(procs[i], nm, sizeof(nm)) : "?");
	}
	fputc('\n', f);
	fprintf(f, "Records lost by gputap: %" PRIu64 ", dropped by CUPTI: %" PRIu64 "%s\n", s->lost, s->dropped,
		s->lost || s->dropped ? "  (totals above are lower bounds)" : "");
	if (s->no_buffer)
		fprintf(f, "CUPTI buffer requests refused: %" PRIu64 " (GPU records lost; raise GPUTAP_BUFFER_MB)\n",
			s->no_buffer);
	for (uint32_t w = 1; w < 32; w++)
		if (s->notes & (1u << w))
			fprintf(f, "Note: %s\n", gt_note_text(w));
	if (s->partial)
		fputs("Partial: at least one trace was not finished (the process was killed or ran out of space)\n", f);
	if (rundir && rundir[0]) {
		char p[4400];
		fprintf(f, "\nFiles in %s/:\n", rundir);
		snprintf(p, sizeof(p), "%s/run.json", rundir);
		if (exists(p))
			fputs("  run.json   the run: command, devices, versions, settings\n", f);
		for (int i = 0; i < n && i < 8; i++)
			files_of(f, paths[i]);
		if (n > 8)
			fprintf(f, "  ... and %d more process folders\n", n - 8);
		/* trace.json, or trace.json.gz when the run wrote that (gputap run --trace-json gz) */
		const char *gz = "";
		if (n > 0) {
			snprintf(p, sizeof(p), "%s", paths[0]);
			char *sl = strrchr(p, '/');
			if (sl) {
				snprintf(sl, sizeof(p) - (size_t)(sl - p), "/trace.json.gz");
				gz = exists(p) ? ".gz" : "";
			}
		}
		fprintf(f, "Open trace.json%s in https://ui.perfetto.dev; tables: gputap analyze %s\n", gz, rundir);
	} else {
		for (int i = 0; i < n; i++)
			fprintf(f, "trace: %s\n", paths[i]);
	}
}

struct gt_summary *gt_summary_new(void)
{
	struct sum *s = calloc(1, sizeof(*s));
	if (s)
		gt_holdstat_init(&s->hold);
	return (struct gt_summary *)s;
}

void gt_summary_attach(struct gt_summary *sp, struct gt_model *m)
{
	struct sum *s = (struct sum *)sp;
	m->hold = &s->hold;
}

int gt_summary_add(struct gt_summary *sp, const char *trace_path, struct gt_model *m)
{
	struct sum *s = (struct sum *)sp;
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 8;
		uint64_t *np = realloc(s->peaks, nc * sizeof(*np));
		if (np)
			s->peaks = np;
		char(*nq)[32] = np ? realloc(s->procs, nc * sizeof(*nq)) : NULL;
		if (nq)
			s->procs = nq;
		char **nr = nq ? realloc(s->paths, nc * sizeof(*nr)) : NULL;
		if (!nr)
			return -1;
		s->paths = nr;
		s->cap = nc;
	}
	if (!(s->paths[s->n] = strdup(trace_path)))
		return -1;
	s->peaks[s->n] = m->mem_peak;
	snprintf(s->procs[s->n], sizeof(s->procs[0]), "%s", m->hdr.proc);
	s->n++;
	if (merge(s, &s->kern, &m->kern) < 0 || merge(s, &s->api, &m->api) < 0)
		return -1;
	for (int k = 0; k < GT_COPY_KIND_MAX; k++) {
		s->copy_bytes[k] += m->copy_bytes[k];
		s->copy_ns[k] += m->copy_ns[k];
		s->copy_count[k] += m->copy_count[k];
	}
	s->memset_bytes += m->memset_bytes;
	s->memset_ns += m->memset_ns;
	s->memset_count += m->memset_count;
	s->kernel_ns += m->kernel_ns;
	s->kernel_count += m->kernel_count;
	s->lost += gt_model_lost(m);
	s->dropped += gt_model_cupti_dropped(m);
	s->no_buffer += m->cupti_no_buffer;
	s->notes |= m->notes;
	s->records += m->nrecords;
	s->partial |= m->partial;
	for (size_t w = 0; w < m->windows.n; w++) {
		const struct gt_m_range *r = &GT_VEC_AT(&m->windows, struct gt_m_range, w);
		s->windows++;
		s->window_ns += r->end > r->start ? r->end - r->start : 0;
		if (!strstr(s->window_names, r->text)) {
			size_t o = strlen(s->window_names);
			snprintf(s->window_names + o, sizeof(s->window_names) - o, "%s%s", o ? ", " : "", r->text);
		}
	}
	return 0;
}

int gt_summary_print(struct gt_summary *sp, FILE *f, const char *rundir, char *err, size_t errlen)
{
	struct sum *s = (struct sum *)sp;
	print(f, s, rundir, (const char *const *)s->paths, (int)s->n, s->peaks, s->procs);
	if (fflush(f) != 0 || ferror(f)) {
		snprintf(err, errlen, "writing the summary failed");
		return -1;
	}
	return 0;
}

void gt_summary_free(struct gt_summary *sp)
{
	struct sum *s = (struct sum *)sp;
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->peaks);
	free(s->procs);
	gt_stattab_free(&s->kern);
	gt_stattab_free(&s->api);
	gt_strpool_free(&s->pool);
	gt_holdstat_free(&s->hold);
	free(s);
}

int gt_export_summary(FILE *f, const char *rundir, const char *const *trace_paths, int ntraces, char *err,
		   size_t errlen)
{
	struct gt_summary *s = gt_summary_new();
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = -1;
	for (int i = 0; i < ntraces; i++) {
		struct gt_model m;
		if (gt_model_open(&m, trace_paths[i], err, errlen) < 0)
			goto out;
		m.kern.keep_vals = m.memtime.keep_vals = m.memsize.keep_vals = m.api.keep_vals = m.nvtx.keep_vals = 0;
		m.keep_links = 0;
		gt_summary_attach(s, &m);
		if (gt_model_run(&m, err, errlen) < 0 || gt_summary_add(s, trace_paths[i], &m) < 0) {
			if (!err[0])
				snprintf(err, errlen, "%s: out of memory", m.path);
			gt_model_free(&m);
			goto out;
		}
		gt_model_free(&m);
	}
	rc = gt_summary_print(s, f, rundir, err, errlen);
out:
	gt_summary_free(s);
	return rc;
}
