/* gputap report — terminal summary and DIR/report.html for a run directory. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "core/log.h"
#include "report/report.h"

const char cmd_report_help[] =
	"usage: gputap report [--map FILE] [--quiet] DIR\n"
	"\n"
	"Print a summary of the run directory DIR (made by 'gputap run -o DIR') and write\n"
	"DIR/report.html: one self-contained page (no network, no scripts) with plots drawn\n"
	"by gputap as inline SVG:\n"
	"  - the run: command, exit status, duration, GPUs, tools (run.json);\n"
	"  - GPU streams over time: kernels, copies and memsets per stream (<proc>/trace.gtr),\n"
	"    drawn at one column per pixel so that big traces stay small;\n"
	"  - GPU time by kernel class and the per-iteration breakdown (compute, exposed\n"
	"    communication, memory ops, idle), as 'gputap analyze' computes them;\n"
	"  - power and memory over time (gpu_samples.csv, or madengine's\n"
	"    gpu_info_power_profiler_output.csv / gpu_info_vram_profiler_output.csv) and the\n"
	"    memory the program allocated (from the trace);\n"
	"  - the most called library configurations (library_trace.csv) with the gains\n"
	"    measured by 'gputap libperf' (library_perf.csv) when present.\n"
	"A section whose data are missing says which file it needed; the page is written\n"
	"whatever subset of files DIR holds.\n"
	"\n"
	"options:\n"
	"  --map FILE   kernel-name -> class map for the class plot (the JSON map that\n"
	"               'gputap analyze --map' reads); default: a built-in map (docs/report.md)\n"
	"  --quiet      write the page, print only its path\n"
	"\n"
	"exit status: 0 done, 1 DIR is not a folder or the page cannot be written, 2 usage.\n";

int cmd_report(int argc, char **argv)
{
	const char *dir = NULL, *map = NULL;
	int quiet = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--map") == 0) {
			if (i + 1 >= argc) {
				gt_error("--map needs a file");
				return 2;
			}
			map = argv[++i];
		} else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			quiet = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			gt_error("report: unknown option '%s'; see 'gputap help report'", argv[i]);
			return 2;
		} else if (!dir) {
			dir = argv[i];
		} else {
			gt_error("report: one DIR only");
			return 2;
		}
	}
	if (!dir) {
		gt_error("report: no DIR; usage: gputap report DIR");
		return 2;
	}
	char err[1024];
	if (gt_report_write_opts(dir, map, quiet ? NULL : stdout, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		return 1;
	}
	if (quiet)
		printf("%s/report.html\n", dir);
	return gt_finish_stdout(0);
}
