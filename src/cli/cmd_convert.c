/* gputap convert — a gputap trace to Chrome/Perfetto JSON, nsys-style CSVs and the alnair interposer's logs. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/log.h"
#include "export/export.h"
#include "run/postrun.h"
#include "trace/rundir.h"

const char cmd_convert_help[] =
	"usage: gputap convert INPUT [-o OUT] [--format LIST] [--by-window]\n"
	"\n"
	"Turn gputap's binary trace (trace.gtr) into the files other tools read:\n"
	"\n"
	"  trace.json                      Chrome trace event format; open it in\n"
	"                                  https://ui.perfetto.dev or chrome://tracing\n"
	"  trace_cuda_gpu_kern_sum.csv     nsys-compatible summaries (same headers and\n"
	"  trace_cuda_gpu_mem_time_sum.csv meanings as `nsys stats --format csv`), so\n"
	"  trace_cuda_gpu_mem_size_sum.csv that OUT/trace is an nsys CSV prefix for\n"
	"  trace_cuda_api_sum.csv          `gputap analyze` and for tools written for\n"
	"  trace_nvtx_sum.csv              nsys\n"
	"  trace_nvtx_gpu_proj_trace.csv\n"
	"  metrics.log, timeline.log       the alnair interposer's logs, rebuilt\n"
	"\n"
	"INPUT is one of:\n"
	"  a trace file        DIR/<proc>/trace.gtr, or trace.gtr.partial (a process\n"
	"                      that was killed): the outputs go to OUT, by default the\n"
	"                      trace's own directory;\n"
	"  a process directory DIR/<proc> holding trace.gtr: outputs to OUT or DIR/<proc>;\n"
	"  a run directory     DIR from `gputap run -o DIR`: every DIR/<proc>/trace.gtr\n"
	"                      is converted, into OUT/<proc>/ (by default DIR/<proc>/).\n"
	"\n"
	"options:\n"
	"  -o, --output OUT    where to write (created if missing)\n"
	"  --format LIST       comma-separated: json, json.gz, csv, logs, gtr, or all\n"
	"                      (default: json,csv; `logs` rewrites metrics.log and\n"
	"                      timeline.log, which the tap already writes during a run;\n"
	"                      `gtr` rewrites the trace itself in today's compact format,\n"
	"                      so an older trace becomes about ten times smaller; `all`\n"
	"                      leaves it out; `json.gz` writes trace.json.gz instead\n"
	"                      of trace.json, about 10x smaller; Perfetto and\n"
	"                      chrome://tracing open it as it is)\n"
	"  --by-window         a trace recorded with capture windows (gputap run\n"
	"                      --capture): one timeline per window,\n"
	"                      trace.window1.json, trace.window2.json, ... (.json.gz\n"
	"                      with json.gz), each whole and small enough to open;\n"
	"                      a trace without windows gets its one trace.json\n"
	"  -h, --help          this text\n"
	"\n"
	"Every file is written as NAME.partial and renamed when complete, so a file\n"
	"with its final name is always whole; a write error (a full disk) is an error.\n"
	"A partial trace (the process was killed, or the tap lost records) is\n"
	"converted as far as it goes; gputap says so on stderr and trace.json carries\n"
	"\"partial\": true in its otherData.\n"
	"\n"
	"exit status: 0 done (also for a partial trace), 1 bad or damaged input (the\n"
	"message names the file and the byte offset of the damage) or a write error,\n"
	"2 usage.\n"
	"\n"
	"examples:\n"
	"  gputap convert myrun                     # every process of a run, in place\n"
	"  gputap convert myrun/rank0/trace.gtr -o /tmp/r0 --format json\n"
	"  gputap analyze myrun/rank0/trace         # the CSVs, read as nsys output\n"
	"\n"
	"docs/outputs.md describes every file and column; docs/trace-format.md the\n"
	"binary trace.\n";

static int parse_format(const char *s, unsigned *what)
{
	*what = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "json") == 0)
			*what |= GT_EXPORT_JSON;
		else if (strcmp(t, "json.gz") == 0)
			*what |= GT_EXPORT_JSON_GZ;
		else if (strcmp(t, "csv") == 0)
			*what |= GT_EXPORT_CSV;
		else if (strcmp(t, "logs") == 0)
			*what |= GT_EXPORT_LOGS;
		else if (strcmp(t, "all") == 0)
			*what |= GT_EXPORT_ALL;
		else if (strcmp(t, "gtr") == 0)
			*what |= GT_EXPORT_GTR;
		else
			return -1;
	}
	return *what ? 0 : -1;
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* DIR/trace.gtr or its .partial: 1 a file, 0 none, -1 there but not a file (a folder, ...) */
static int has_trace(const char *dir, char *trace, size_t cap)
{
	struct stat st;
	snprintf(trace, cap, "%s/" GT_PROC_TRACE, dir);
	if (is_file(trace))
		return 1;
	if (stat(trace, &st) == 0)
		return -1;
	char p[4200];
	snprintf(p, sizeof(p), "%s.partial", trace);
	if (is_file(p))
		return 1;
	return stat(p, &st) == 0 ? -1 : 0;
}

static int not_a_trace(const char *trace)
{
	struct stat st;
	gt_error("%s: %s, not a trace file", trace,
		 stat(trace, &st) == 0 && S_ISDIR(st.st_mode) ? "is a folder" : "is not a plain file");
	return 1;
}

static void warn_lost(const char *trace, uint64_t lost, uint64_t dropped)
{
	if (lost || dropped)
		gt_warn("%s: %llu records were lost by the tap and %llu dropped by CUPTI: totals are lower bounds", trace,
			(unsigned long long)lost, (unsigned long long)dropped);
}

static void print_done(const char *trace, const char *outdir, unsigned what)
{
	printf("%s -> %s/%s%s%s%s\n", trace, outdir, (what & GT_EXPORT_GTR) ? "trace.gtr " : "",
	       (what & GT_EXPORT_BY_WINDOW) ? ((what & GT_EXPORT_JSON_GZ) ? "trace.window*.json.gz " : "trace.window*.json ")
	       : (what & GT_EXPORT_JSON_GZ) ? "trace.json.gz "
	       : (what & GT_EXPORT_JSON)    ? "trace.json "
					 : "",
	       (what & GT_EXPORT_CSV) ? "trace_*.csv " : "",
	       (what & GT_EXPORT_LOGS) ? "metrics.log timeline.log" : "");
}

static int convert_one(const char *trace, const char *outdir, unsigned what)
{
	char err[1024] = "";
	struct gt_export_info info;
	if (gt_export_convert(trace, outdir, what, &info, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		return 1;
	}
	gt_export_warn(&info);
	warn_lost(info.trace_path, info.lost, info.cupti_dropped);
	print_done(info.trace_path, outdir, what);
	return 0;
}

static void convert_error(void *arg, const char *msg)
{
	*(int *)arg = 1;
	gt_error("%s", msg);
}

/* A run directory: the post-run pass of gputap run, conversion only (the samplers' trace too). */
static int convert_run_dir(const char *dir, const char *out, unsigned what)
{
	int status = 0;
	struct gt_postrun pr = {
		.dir = dir,
		.outdir = out,
		.formats = what,
		.samplers = 1,
		.warn = convert_error,
		.warn_arg = &status,
	};
	if (gt_postrun(&pr) < 0)
		return 1;
	if (!pr.nprocs) {
		gt_error("%s: no gputap trace here (looked for trace.gtr and <proc>/trace.gtr)", dir);
		status = 1;
	}
	for (size_t i = 0; i < pr.nprocs; i++) {
		const struct gt_postrun_proc *p = &pr.procs[i];
		if (!p->converted || p->failed)
			continue;
		warn_lost(p->trace, p->lost, p->cupti_dropped);
		print_done(p->trace, p->outdir, what);
	}
	gt_postrun_free(&pr);
	return status;
}

int cmd_convert(int argc, char **argv)
{
	const char *input = NULL, *out = NULL;
	unsigned what = GT_EXPORT_JSON | GT_EXPORT_CSV;
	int by_window = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (strcmp(a, "--by-window") == 0) {
			by_window = 1;
			continue;
		}
		if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--format") == 0) {
			if (i + 1 >= argc) {
				gt_error("%s needs a value; see 'gputap help convert'", a);
				return 2;
			}
			val = argv[++i];
		} else if (strncmp(a, "--output=", 9) == 0) {
			val = a + 9;
			a = "-o";
		} else if (strncmp(a, "--format=", 9) == 0) {
			val = a + 9;
			a = "--format";
		} else if (a[0] == '-' && a[1]) {
			gt_error("unknown option '%s'; see 'gputap help convert'", a);
			return 2;
		} else if (input) {
			gt_error("one INPUT only ('%s' and '%s'); see 'gputap help convert'", input, a);
			return 2;
		} else {
			input = a;
			continue;
		}
		if (a[1] == 'o' || strcmp(a, "--output") == 0) {
			out = val;
		} else if (parse_format(val, &what) < 0) {
			gt_error("--format '%s': expected a comma-separated list of json, json.gz, csv, logs, all, gtr", val);
			return 2;
		}
	}
	if (!input) {
		gt_error("no INPUT; usage: gputap convert INPUT [-o OUT] [--format LIST]");
		return 2;
	}
	if (by_window && !(what & (GT_EXPORT_JSON | GT_EXPORT_JSON_GZ))) {
		gt_error("--by-window splits the timeline: --format needs json or json.gz");
		return 2;
	}
	if (by_window)
		what |= GT_EXPORT_BY_WINDOW;
	struct stat st;
	char trace[4300];
	int status;
	if (stat(input, &st) == 0 && S_ISDIR(st.st_mode)) {
		int h = has_trace(input, trace, sizeof(trace));
		if (h > 0)
			status = convert_one(trace, out ? out : input, what);
		else if (h < 0)
			status = not_a_trace(trace);
		else
			status = convert_run_dir(input, out, what);
	} else {
		char pp[4300];
		snprintf(pp, sizeof(pp), "%s.partial", input);
		if (stat(input, &st) != 0 && !is_file(pp)) {
			gt_error("%s: %s", input, strerror(errno));
			return gt_finish_stdout(1);
		}
		char dir[4200];
		snprintf(dir, sizeof(dir), "%s", input);
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			dir[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
		status = convert_one(input, out ? out : dir, what);
	}
	return gt_finish_stdout(status);
}
