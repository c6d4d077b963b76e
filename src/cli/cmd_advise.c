/* gputap advise — findings: what is wrong with a run, the evidence, the estimated gain, the fix. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "analyze/analyze.h"
#include "analyze/findings.h"
#include "cli/commands.h"
#include "core/log.h"

const char cmd_advise_help[] =
    "usage: gputap advise [--format text|json] [--min-gain PCT] [--nvtx TAG] [--iters N] [--progress] INPUT...\n"
    "\n"
    "Say what is wrong with a run: a short list of findings, most costly first.  Each has a stable id,\n"
    "a title, the evidence with its numbers (per iteration, where: rank/GPU/stream, the API call or\n"
    "kernel, events with their times as the trace's Perfetto view shows them), the estimated gain if\n"
    "fixed (ms per iteration and % of the iteration, and how it was estimated; 'up to' marks an upper\n"
    "bound), and the fix in PyTorch and CUDA C terms with a reference.\n"
    "\n"
    "INPUT is anything 'gputap analyze' reads: a gputap run directory, a trace.gtr, PyTorch profiler\n"
    "(Kineto) traces (several files = several ranks), an nsys SQLite export, nsys summary CSVs (no\n"
    "timeline: nothing can be checked, and the output says so).\n"
    "\n"
    "Kinds (docs/findings.md gives each one's thresholds and why): launch-bound, host-gap, host-sync,\n"
    "sync-copy, alloc-churn, step-gap, pageable-copy, copy-compute-serial, small-grid, memset,\n"
    "fp32-gemm, exposed-comm, straggler; from per-kernel counters (a run of 'gputap run --metrics-mode\n"
    "kernel --metrics ...', docs/findings.md names them) uncoalesced and low-occupancy.  A kind the\n"
    "input cannot show is listed under 'Not checked' with the reason.\n"
    "\n"
    "Options:\n"
    "  --format F      text (default) or json (schema in docs/findings.md)\n"
    "  --min-gain PCT  list only findings whose estimated gain is at least PCT % of an iteration\n"
    "                  (default 2; the others are counted)\n"
    "  --nvtx TAG      the NVTX range that marks one iteration (as 'gputap analyze')\n"
    "  --iters N       split a timeline without iteration ranges into N windows (as 'gputap analyze')\n"
    "  --progress      show progress on stderr\n"
    "  -h, --help      this help\n"
    "\n"
    "Exit status: 0 ok (with or without findings); 1 bad input; 2 usage.\n"
    "\n"
    "Examples:\n"
    "  gputap advise myrun/\n"
    "  gputap advise --format json --min-gain 5 rank0.pt.trace.json.gz rank1.pt.trace.json.gz\n";

int cmd_advise(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"format", required_argument, 0, 'f'}, {"min-gain", required_argument, 0, 'g'},
	    {"nvtx", required_argument, 0, 'n'},   {"iters", required_argument, 0, 'i'},
	    {"progress", no_argument, 0, 'p'},     {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	const char *format = "text";
	double min_gain = GT_FD_MIN_GAIN_PCT;
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	o.progress = isatty(2);
	o.findings = 1;
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'f': format = optarg; break;
		case 'g': {
			char *e;
			errno = 0;
			double v = strtod(optarg, &e);
			if (!*optarg || *e || errno || !(v >= 0) || v > 100) {
				gt_error("--min-gain wants a percentage from 0 to 100, not '%s'", optarg);
				return 2;
			}
			min_gain = v;
			break;
		}
		case 'n': o.nvtx_tag = strcmp(optarg, "windows") == 0 ? GT_AN_WINDOWS_TAG : optarg; break;
		case 'i': {
			char *e;
			long long v = strtoll(optarg, &e, 10);
			if (!*optarg || *e || v <= 0 || v > GT_AN_MAX_COUNT) {
				gt_error("--iters wants an integer from 1 to %d, not '%s'", GT_AN_MAX_COUNT, optarg);
				return 2;
			}
			o.iters = (int)v;
			break;
		}
		case 'p': o.progress = 1; break;
		case 'h': fputs(cmd_advise_help, stdout); return gt_finish_stdout(0);
		default:
			gt_error("advise: unknown or incomplete option '%s'; see 'gputap help advise'", argv[optind - 1]);
			return 2;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		gt_error("--format is text or json, not '%s'", format);
		return 2;
	}
	if (optind >= argc) {
		gt_error("advise: no INPUT given; see 'gputap help advise'");
		return 2;
	}
	char err[1024] = "";
	struct gt_an_result *r = NULL;
	if (gt_an_run((const char *const *)argv + optind, argc - optind, &o, &r, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		return 1;
	}
	for (size_t i = 0; i < r->nnotes; i++)
		gt_warn("%s", r->notes[i]);
	int werr = 0;
	if (strcmp(format, "json") == 0) {
		yajl_gen g = yajl_gen_alloc(NULL);
		if (!g) {
			gt_an_free(r);
			gt_error("out of memory");
			return 1;
		}
		yajl_gen_config(g, yajl_gen_beautify, 1);
		yajl_gen_config(g, yajl_gen_indent_string, "  ");
		yajl_gen_map_open(g);
		yajl_gen_string(g, (const unsigned char *)"schema_version", 14);
		yajl_gen_integer(g, GT_FD_SCHEMA_VERSION);
		yajl_gen_string(g, (const unsigned char *)"tool", 4);
		yajl_gen_string(g, (const unsigned char *)"gputap advise", 13);
		yajl_gen_string(g, (const unsigned char *)"title", 5);
		yajl_gen_string(g, (const unsigned char *)r->title, strlen(r->title));
		yajl_gen_string(g, (const unsigned char *)"findings", 8);
		gt_fd_json(g, r->findings, min_gain);
		yajl_gen_map_close(g);
		const unsigned char *buf;
		size_t len;
		if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || fwrite(buf, 1, len, stdout) != len)
			werr = 1;
		yajl_gen_free(g);
	} else {
		/* what was read: the analysis' title names the first input only */
		char esc[1024], head[1024] = "";
		size_t hl = 0;
		int nin = argc - optind;
		for (int i = 0; i < nin && hl < sizeof(head); i++) {
			const char *b = strrchr(argv[optind + i], '/');
			b = b && b[1] ? b + 1 : argv[optind + i];
			if (hl > 200) {
				hl += (size_t)snprintf(head + hl, sizeof(head) - hl, " and %d more", nin - i);
				break;
			}
			hl += (size_t)snprintf(head + hl, sizeof(head) - hl, "%s%s", i ? ", " : "", b);
		}
		printf("===== %s =====\n", gt_term_str(nin > 1 ? head : r->title, esc, sizeof(esc)));
		gt_fd_print_text(r->findings, min_gain, 0, stdout);
	}
	gt_an_free(r);
	return gt_finish_stdout(werr ? 1 : 0);
}
