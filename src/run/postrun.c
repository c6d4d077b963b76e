/* run/postrun.c — conversion, report and summary in one pass per trace.  See postrun.h. */
#include "run/postrun.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/findings.h"
#include "core/log.h"
#include "export/export.h"
#include "report/report.h"
#include "trace/rundir.h"
#include "trace/visit.h"


struct state {
	struct gt_postrun *p;
	struct gt_rundir_proc *rp;
	int nrp;
	struct gt_summary *sum;
};

static void warnf(struct gt_postrun *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct gt_postrun *p, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->warn)
		p->warn(p->warn_arg, msg);
}

static int proc_of(struct state *s, const char *path)
{
	for (int i = 0; i < s->nrp; i++)
		if (strcmp(s->rp[i].trace, path) == 0)
			return i;
	return -1;
}

/* Convert one trace with whatever joined its pass; record what it saw. */
static int convert(struct state *s, int i, gt_trace_join_fn join, void *join_arg, char *err, size_t errlen)
{
	struct gt_postrun *p = s->p;
	struct gt_postrun_proc *pp = &p->procs[i];
	struct gt_export_info info;
	p->trace_opens++;
	pp->converted = 1; /* tried: never twice */
	pp->failed = 1;
	int rc = gt_export_convert_ex(s->rp[i].trace, pp->outdir, p->formats, join, join_arg,
				   pp->is_samplers ? NULL : s->sum, &info, err, errlen);
	if (rc < 0)
		return -1;
	pp->failed = 0;
	pp->partial = info.partial;
	pp->flags = info.flags;
	pp->records = info.records;
	pp->lost = info.lost;
	pp->cupti_dropped = info.cupti_dropped;
	snprintf(pp->trace, sizeof(pp->trace), "%s", info.trace_path);
	gt_export_warn(&info);
	return 0;
}

/* The feed the report's analysis reads the run's traces through. */
static int feed(void *arg, const char *path, gt_trace_join_fn join, void *join_arg, char *err, size_t errlen)
{
	struct state *s = arg;
	int i = proc_of(s, path);
	if (i < 0 || s->p->procs[i].converted) {
		/* read again (the analysis' second pass), or not a <proc> trace: no outputs from it */
		s->p->trace_opens++;
		return gt_trace_feed_plain(NULL, path, join, join_arg, err, errlen);
	}
	if (convert(s, i, join, join_arg, err, errlen) < 0) {
		warnf(s->p, "%s", err);
		return -1;
	}
	return 0;
}

static void report_warn(struct gt_postrun *p, const char *err)
{
	warnf(p, "%s", err);
}

int gt_postrun(struct gt_postrun *p)
{
	struct state s = {p, NULL, 0, NULL};
	p->procs = NULL;
	p->nprocs = 0;
	p->trace_opens = 0;
	int n = gt_rundir_procs(p->dir, &s.rp);
	if (n < 0) {
		warnf(p, "%s: %s", p->dir, strerror(errno));
		return -1;
	}
	/* only folders with a trace (a process that wrote only metrics.log has nothing to convert),
	 * then the samplers' when asked for (room for it: one more than n) */
	struct gt_rundir_proc *rp = realloc(s.rp, ((size_t)n + 1) * sizeof(*rp));
	if (!rp) {
		free(s.rp);
		warnf(p, "out of memory");
		return -1;
	}
	s.rp = rp;
	int k = 0;
	for (int i = 0; i < n; i++)
		if (s.rp[i].trace[0])
			s.rp[k++] = s.rp[i];
	int nproc = k;
	if (p->samplers && p->formats && gt_rundir_samplers(p->dir, &s.rp[k]))
		k++;
	s.nrp = k;
	p->procs = calloc(k ? (size_t)k : 1, sizeof(*p->procs));
	if (!p->procs) {
		free(s.rp);
		warnf(p, "out of memory");
		return -1;
	}
	p->nprocs = (size_t)k;
	for (int i = 0; i < k; i++) {
		struct gt_postrun_proc *pp = &p->procs[i];
		snprintf(pp->name, sizeof(pp->name), "%s", s.rp[i].name);
		snprintf(pp->trace, sizeof(pp->trace), "%s", s.rp[i].trace);
		snprintf(pp->outdir, sizeof(pp->outdir), "%s/%s", p->outdir ? p->outdir : p->dir, s.rp[i].name);
		pp->is_samplers = i >= nproc;
	}
	if (p->summary && nproc && !(s.sum = gt_summary_new()))
		warnf(p, "the summary: out of memory");
	char err[1200] = "";
	struct gt_fd_list *fl = NULL; /* the report's findings, for the summary's end */
	if (p->report) {
		const char *in[1] = {p->dir};
		if (gt_report_write_fed_fd(in, 1, NULL, NULL, feed, &s, NULL, p->summary ? &fl : NULL, err,
					   sizeof(err)) < 0)
			report_warn(p, err);
	}
	/* what the report's pass did not cover */
	for (int i = 0; i < k; i++)
		if (!p->procs[i].converted && (p->formats || s.sum) && convert(&s, i, NULL, NULL, err, sizeof(err)) < 0)
			warnf(p, "%s", err);
	if (s.sum) {
		if (gt_summary_print(s.sum, p->summary, p->dir, err, sizeof(err)) < 0)
			warnf(p, "%s", err);
		gt_summary_free(s.sum);
	}
	if (fl && p->summary && fl->n) { /* docs/findings.md; `gputap advise DIR` gives the evidence */
		fputc('\n', p->summary);
		gt_fd_print_text(fl, GT_FD_MIN_GAIN_PCT, 1, p->summary);
		fflush(p->summary);
	}
	gt_fd_list_free(fl);
	free(s.rp);
	return 0;
}

void gt_postrun_free(struct gt_postrun *p)
{
	free(p->procs);
	p->procs = NULL;
	p->nprocs = 0;
}
