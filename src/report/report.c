/* gputap report: read what a run directory (or a list of traces) holds, write report.html and print
 * a terminal summary.  The three parts: report/load.c (the data: run.json, the traces read in the
 * analysis' one pass over each, the samplers' CSVs, the library tables), report/html.c (the page)
 * and report/term.c (the summary); page.h is what they share. */
#include "report/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/holdstat.h"
#include "export/ofile.h"
#include "report/page.h"
#include "trace/rundir.h"

int gt_report_write(const char *rundir, FILE *out, char *err, size_t errlen)
{
	return gt_report_write_opts(rundir, NULL, out, err, errlen);
}

int gt_report_write_opts(const char *rundir, const char *map_path, FILE *out, char *err, size_t errlen)
{
	const char *in[1] = {rundir};
	return gt_report_write_inputs(in, 1, map_path, NULL, out, err, errlen);
}

int gt_report_write_inputs(const char *const *inputs, int ninputs, const char *map_path, const char *html_path,
			   FILE *out, char *err, size_t errlen)
{
	return gt_report_write_fed(inputs, ninputs, map_path, html_path, NULL, NULL, out, err, errlen);
}

/* Write the page to `html` through html.partial (export/ofile.h: never renamed over what is not a
 * regular file).  0, or -1 with err. */
static int write_html(const struct page *p, const char *html, char *err, size_t errlen)
{
	struct gt_ofile o;
	if (gt_ofile_open_path(&o, html, err, errlen) < 0)
		return -1;
	if (gt_rp_write_page(o.f, p) < 0) {
		snprintf(err, errlen, "%s: write failed: %s", html, strerror(errno));
		gt_ofile_abort(&o);
		return -1;
	}
	return gt_ofile_commit(&o, err, errlen);
}

/* What of a run directory could not be read, the page showing the rest: 1 and err naming it, else 0.
 * A file that is absent is not damage (a run without samplers has no gpu_samples.csv); one that is
 * there and cannot be read is. */
static int damaged(const struct page *p, char *err, size_t errlen)
{
	size_t n = 0;
	err[0] = '\0';
	if (p->nprocs && !p->an && p->an_err[0])
		n += (size_t)snprintf(err, errlen, "%s", p->an_err);
	if (p->run_err[0] && strcmp(p->run_err, "run.json not found") != 0 && n < errlen)
		n += (size_t)snprintf(err + n, errlen - n, "%s%s/%s", n ? "; " : "", p->dir, p->run_err);
	return n > 0;
}

int gt_report_write_fed(const char *const *inputs, int ninputs, const char *map_path, const char *html_path,
			gt_trace_feed_fn feed, void *feed_arg, FILE *out, char *err, size_t errlen)
{
	return gt_report_write_fed_fd(inputs, ninputs, map_path, html_path, feed, feed_arg, out, NULL, err, errlen);
}

int gt_report_write_fed_fd(const char *const *inputs, int ninputs, const char *map_path, const char *html_path,
			   gt_trace_feed_fn feed, void *feed_arg, FILE *out, struct gt_fd_list **findings, char *err,
			   size_t errlen)
{
	if (findings)
		*findings = NULL;
	struct stat sb;
	if (ninputs < 1) {
		snprintf(err, errlen, "no input");
		return -1;
	}
	const char *rundir = inputs[0];
	/* a run directory (trace/rundir.h); any other folder is an input as analyze reads it (a folder of
	 * Kineto traces, or an error naming it), with the page in the current folder */
	int is_dir = ninputs == 1 && stat(rundir, &sb) == 0 && S_ISDIR(sb.st_mode) && gt_rundir_is_run(rundir);
	struct page p;
	memset(&p, 0, sizeof(p));
	gt_holdstat_init(&p.hold);
	p.feed = feed ? feed : gt_trace_feed_plain;
	p.feed_arg = feed_arg;
	char title[512];
	int rc = 0;
	if (is_dir) {
		p.dir = rundir;
		gt_rp_load_dir(&p, map_path, inputs);
	} else {
		size_t len = 0;
		title[0] = '\0';
		for (int i = 0; i < ninputs && len < sizeof(title); i++)
			len += (size_t)snprintf(title + len, sizeof(title) - len, "%s%s", i ? ", " : "", inputs[i]);
		p.dir = title;
		rc = gt_rp_load_traces(&p, map_path, inputs, ninputs, err, errlen);
	}
	if (rc == 0) {
		char html[4096];
		if (html_path)
			snprintf(html, sizeof(html), "%s", html_path);
		else if (is_dir)
			snprintf(html, sizeof(html), "%s/report.html", rundir);
		else
			snprintf(html, sizeof(html), "report.html");
		rc = write_html(&p, html, err, errlen);
		if (rc == 0 && out)
			gt_rp_summary(out, &p, html);
		if (rc == 0 && is_dir && damaged(&p, err, errlen))
			rc = 1;
	}
	if (findings && p.an) { /* the caller's now */
		*findings = p.an->findings;
		p.an->findings = NULL;
	}
	gt_rp_free(&p);
	return rc;
}
