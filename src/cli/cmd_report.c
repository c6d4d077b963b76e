/* gputap report — terminal summary and DIR/report.html for a run directory, or a page for traces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "core/log.h"
#include "report/report.h"
#include "trace/rundir.h"

const char cmd_report_help[] =
	"usage: gputap report [--map FILE] [-o PAGE] [--quiet] DIR\n"
	"       gputap report [--map FILE] [-o PAGE] [--quiet] TRACE...\n"
	"\n"
	"Print a summary of the run directory DIR (made by 'gputap run -o DIR') and write\n"
	"DIR/report.html: one self-contained page (no network, no scripts) with plots drawn\n"
	"by gputap as inline SVG:\n"
	"  - the run: command, exit status, duration, GPUs, tools (run.json);\n"
	"  - GPU streams over time: kernels, copies and memsets per stream (<proc>/trace.gtr),\n"
	"    drawn at one column per pixel so that big traces stay small;\n"
	"  - GPU time by kernel class and the per-iteration breakdown (compute, exposed\n"
	"    communication, memory ops, idle), as 'gputap analyze' computes them;\n"
	"  - idle time per stream by cause (host wait, kernel wait, other), kernel launch\n"
	"    delays and the launch queue over time, the top kernels per kind (compute,\n"
	"    communication, memory) and rank, memory bandwidth over time per kind;\n"
	"  - power and memory over time (gpu_samples.csv, or madengine's\n"
	"    gpu_info_power_profiler_output.csv / gpu_info_vram_profiler_output.csv) and the\n"
	"    memory the program allocated (from the trace);\n"
	"  - the most called library configurations (library_trace.csv) with the gains\n"
	"    measured by 'gputap libperf' (library_perf.csv) when present.\n"
	"A section whose data are missing says which file it needed; the page is written\n"
	"whatever subset of files DIR holds.  DIR is a run directory as 'gputap analyze' sees\n"
	"one: it holds run.json or <proc>/trace.gtr.\n"
	"\n"
	"TRACE is anything else 'gputap analyze' reads: PyTorch profiler (Kineto) traces or a\n"
	"folder of them (one rank per file, as HTA reads them), nsys SQLite exports, trace.gtr\n"
	"files, several run directories (the ranks of one job).  The\n"
	"page then holds every section drawn from the analysis (streams over time, classes,\n"
	"iterations, idle, launches, top kernels, bandwidth) and is written to PAGE\n"
	"(default: report.html in the current folder); an input that cannot be read is an\n"
	"error naming it.\n"
	"\n"
	"options:\n"
	"  --map FILE   kernel-name -> class map for the class plot (the JSON map that\n"
	"               'gputap analyze --map' reads); default: a built-in map (docs/report.md)\n"
	"  -o PAGE      write the page to PAGE (default: DIR/report.html, or report.html for traces)\n"
	"  --quiet      write the page, print only its path\n"
	"\n"
	"  -o of a character device or a FIFO (/dev/null, a pipe) writes into it; a folder, a\n"
	"  block device or a socket is refused; a symbolic link's target is replaced.\n"
	"\n"
	"exit status: 0 done; 1 an input cannot be read (a folder that is not a run and holds no\n"
	"traces, a trace that cannot be read), or the page cannot be written; for a run directory\n"
	"of which a part that is there cannot be read (a damaged trace, run.json), the page is still\n"
	"written with the rest, the damage named on stderr, and the status is 1; 2 usage.\n";

int cmd_report(int argc, char **argv)
{
	const char *map = NULL, *page = NULL;
	int quiet = 0, n = 0;
	const char **in = calloc((size_t)(argc > 1 ? argc : 1), sizeof(*in));
	if (!in) {
		gt_error("report: out of memory");
		return 1;
	}
	int rc = 2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--map") == 0 || strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
			if (i + 1 >= argc) {
				gt_error("report: %s needs a file", argv[i]);
				goto out;
			}
			if (argv[i][1] == '-' && argv[i][2] == 'm')
				map = argv[++i];
			else
				page = argv[++i];
		} else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			quiet = 1;
		} else if (strcmp(argv[i], "--") == 0) {
			while (++i < argc)
				in[n++] = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			gt_error("report: unknown option '%s'; see 'gputap help report'", argv[i]);
			goto out;
		} else {
			in[n++] = argv[i];
		}
	}
	if (!n) {
		gt_error("report: no DIR; usage: gputap report DIR, or gputap report TRACE...");
		goto out;
	}
	char err[1024] = "", path[4200];
	struct stat sb;
	if (page)
		snprintf(path, sizeof(path), "%s", page);
	else if (n == 1 && stat(in[0], &sb) == 0 && S_ISDIR(sb.st_mode) && gt_rundir_is_run(in[0]))
		snprintf(path, sizeof(path), "%s/report.html", in[0]);
	else
		snprintf(path, sizeof(path), "report.html");
	int w = gt_report_write_inputs(in, n, map, path, quiet ? NULL : stdout, err, sizeof(err));
	if (w < 0) {
		if (!err[0]) /* never an empty message */
			snprintf(err, sizeof(err), "%s: the report could not be made", in[0]);
		gt_error("%s", err);
		rc = 1;
		goto out;
	}
	if (quiet)
		printf("%s\n", path);
	rc = gt_finish_stdout(0);
	if (w > 0 && rc == 0) { /* a damaged run: the page holds what could be read */
		gt_warn("%s", err);
		gt_error("%s: a part of the run could not be read (above); %s shows the rest", in[0], path);
		rc = 1;
	}
out:
	free(in);
	return rc;
}
