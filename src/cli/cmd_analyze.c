/* gputap analyze — per-iteration tables from nsys, PyTorch-profiler and gputap recordings. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/findings.h"
#include "cli/commands.h"
#include "core/log.h"

const char cmd_analyze_help[] =
    "usage: gputap analyze --config FILE [--format text|json|csv]\n"
    "       gputap analyze [--map F] [--iters N] [--gpus N] [--nvtx TAG] [--format text|json|csv|columns]\n"
    "                      [--title T] [--progress] [--collectives] [--launched-only]\n"
    "                      [--without-last-step] [--hta-view] [--top N] [--kernel-wait-us X]\n"
    "                      [--buckets N] [--all-rows] INPUT...\n"
    "\n"
    "Summarise where GPU time goes: kernel time by class, NCCL time by collective, memory\n"
    "operations, NVTX iterations, and, for inputs with a timeline, the measured overlap of\n"
    "communication with compute, exposed communication and idle time, per GPU and per iteration.\n"
    "\n"
    "INPUT is one of:\n"
    "  DIR                a gputap run directory (every DIR/<proc>/trace.gtr; one rank per <proc>), or\n"
    "                     a folder of PyTorch profiler traces (every *.json[.gz] in it; one rank each)\n"
    "  FILE.gtr           one gputap trace\n"
    "  PREFIX             nsys summary CSVs PREFIX_cuda_gpu_kern_sum.csv (required),\n"
    "                     PREFIX_cuda_gpu_mem_time_sum.csv, PREFIX_nvtx_gpu_proj_trace.csv (optional;\n"
    "                     older names _gpukernsum, _gpumemtimesum, _nvtx_sum, _nvtxppsum too)\n"
    "  PREFIX_*.csv       one of those files: its siblings are found the same way\n"
    "  FILE.sqlite        an nsys SQLite export (nsys export --type sqlite)\n"
    "  FILE.nsys-rep      converted with 'nsys export' when nsys is on PATH (an error says so if not)\n"
    "  FILE.json[.gz]     a PyTorch profiler / Kineto Chrome trace; several files = several ranks\n"
    "\n"
    "Options:\n"
    "  --config FILE      run the inputs of a GPU Performance Analyzer config (inputs[], format csv or\n"
    "                     nsys-rep, analysis_args, kernel_to_class_map); // comments and trailing\n"
    "                     commas are accepted; paths are relative to the config's folder\n"
    "  --map FILE         kernel-name -> class map: a JSON object {\"part_of_name\": \"class\", ...} or a\n"
    "                     config with a kernel_to_class_map.  Keys match case-insensitively as\n"
    "                     substrings; NCCL kernels always go to the NCCL table; the rest is 'others'\n"
    "  --iters N          divide per-iteration columns by N; for timelines without iteration ranges,\n"
    "                     also split each rank's timeline into N windows of equal time (1 to 1000000)\n"
    "  --gpus N           divide per-iteration columns by N GPUs (default: GPUs seen, else 1; at\n"
    "                     most 1000000)\n"
    "  --nvtx TAG         the NVTX range that marks one iteration (default: ProfilerStep#N ranges; without\n"
    "                     them, the capture windows of a gputap trace when it has several, else the NVTX\n"
    "                     range that repeats and covers the most time, named in a note); `--nvtx windows`:\n"
    "                     each capture window of a gputap trace (gputap run --capture) is one iteration\n"
    "  --format F         text (default, the GPU Performance Analyzer's layout plus the measured tables), json (stable,\n"
    "                     with schema_version), csv (title,section,gpu,iteration,name,metric,value),\n"
    "                     columns (per-GPU iterations and, with --collectives, the collectives as binary\n"
    "                     columns after a JSON header line: what 'gputap fleet' reads; docs/analyze.md)\n"
    "  --title T          title of the report (default: the first input's name)\n"
    "  --progress         show progress on stderr (default: only when stderr is a terminal)\n"
    "  --collectives      JSON, columns: add \"collectives\", one row per NCCL collective per rank (communicator,\n"
    "                     sequence number, algorithm, protocol, GPU start/end, iteration), as NCCL's\n"
    "                     profiler plugin recorded it, else numbered in order; what 'gputap fleet' matches\n"
    "  --launched-only    leave out GPU ops whose launch event is not in the trace (launched before it\n"
    "                     began), as HTA does\n"
    "  --without-last-step  leave out GPU ops launched at or after the start of the last ProfilerStep\n"
    "                     (2 or more steps), as HTA's default view does\n"
    "  --hta-view         both: the rows HTA's default view counts (what it leaves out is printed below\n"
    "                     the tables either way)\n"
    "  --top N            kernels per kind (compute, communication, memory) and rank in the text (5)\n"
    "  --kernel-wait-us X idle gaps on a stream under X us that are not host wait are kernel wait (30,\n"
    "                     as HTA 0.5 applies its default to its microsecond timestamps)\n"
    "  --buckets N        time buckets of the queue-length and bandwidth series in JSON/CSV (20)\n"
    "  --all-rows         text: every row of the per-iteration table (default: the first 200 and a\n"
    "                     line saying how many were left out; JSON and CSV hold every row)\n"
    "  -h, --help         this help\n"
    "\n"
    "Findings (what is wrong, ranked by estimated gain; docs/findings.md) print above the tables of an\n"
    "input with a timeline, and in JSON under each result's \"findings\"; 'gputap advise' gives their\n"
    "evidence and fixes.\n"
    "\n"
    "Definitions (docs/analyze.md): busy = |union of kernel, memcpy and memset intervals| of a GPU;\n"
    "idle = (last end - first start) - busy; compute = |union of non-NCCL kernels|; comm = |union of\n"
    "NCCL kernels|; overlap = |compute ∩ comm|; exposed = comm - overlap.  These are the merged\n"
    "intervals of Holistic Trace Analysis (get_temporal_breakdown, get_comm_comp_overlap).  Per\n"
    "stream: idle time by cause (host wait, kernel wait, other) and the launch queue; per rank: top\n"
    "kernels per kind with launch delays (GPU start - end of the launch call), short kernels and\n"
    "outliers; per GPU: memory bandwidth per kind (HTA's idle time breakdown, kernel launch\n"
    "statistics, queue length and memory bandwidth summaries).\n"
    "\n"
    "Exit status: 0 ok; 1 bad input (the message names the file and line or row); 2 usage.\n"
    "\n"
    "Examples:\n"
    "  gputap analyze --config config.json\n"
    "  gputap analyze --map classes.json --nvtx step myrun/\n"
    "  gputap analyze --format json rank0.pt.trace.json.gz rank1.pt.trace.json.gz\n";

/* A count option: 0, or 2 after saying what is wrong with it. */
static int parse_count(const char *opt, const char *s, int *out)
{
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (*s == '\0' || *e || v <= 0) {
		gt_error("%s wants a positive integer, not '%s'", opt, s);
		return 2;
	}
	if (v > GT_AN_MAX_COUNT || errno == ERANGE) {
		gt_error("%s is at most %d, not '%s'", opt, GT_AN_MAX_COUNT, s);
		return 2;
	}
	*out = (int)v;
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, 0, 'c'}, {"map", required_argument, 0, 'm'},
	    {"iters", required_argument, 0, 'i'},  {"gpus", required_argument, 0, 'g'},
	    {"nvtx", required_argument, 0, 'n'},   {"format", required_argument, 0, 'f'},
	    {"title", required_argument, 0, 't'},  {"progress", no_argument, 0, 'p'},
	    {"collectives", no_argument, 0, 'C'},  {"help", no_argument, 0, 'h'},
	    {"launched-only", no_argument, 0, 'L'}, {"without-last-step", no_argument, 0, 'W'},
	    {"hta-view", no_argument, 0, 'H'},      {"top", required_argument, 0, 'T'},
	    {"kernel-wait-us", required_argument, 0, 'K'}, {"buckets", required_argument, 0, 'B'},
	    {"all-rows", no_argument, 0, 'A'},
	    {0, 0, 0, 0},
	};
	const char *config = NULL, *mapf = NULL, *format = "text";
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	o.progress = isatty(2);
	o.findings = 1; /* at the top of the output (analyze/findings.h; gputap advise gives the evidence) */
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': config = optarg; break;
		case 'm': mapf = optarg; break;
		case 'i':
			if (parse_count("--iters", optarg, &o.iters))
				return 2;
			break;
		case 'g':
			if (parse_count("--gpus", optarg, &o.gpus))
				return 2;
			break;
		case 'n': o.nvtx_tag = strcmp(optarg, "windows") == 0 ? GT_AN_WINDOWS_TAG : optarg; break;
		case 'f': format = optarg; break;
		case 't': o.title = optarg; break;
		case 'p': o.progress = 1; break;
		case 'A': o.all_rows = 1; break;
		case 'C': o.collectives = 1; break;
		case 'L': o.launched_only = 1; break;
		case 'W': o.without_last_step = 1; break;
		case 'H': o.launched_only = o.without_last_step = 1; break;
		case 'T':
			if (parse_count("--top", optarg, &o.top))
				return 2;
			break;
		case 'B': {
			char *e;
			long v = strtol(optarg, &e, 10);
			if (!*optarg || *e || v < 1 || v > 10000) { /* one message, whatever is wrong */
				gt_error("--buckets wants an integer from 1 to 10000, not '%s'", optarg);
				return 2;
			}
			o.buckets = (int)v;
			break;
		}
		case 'K': {
			char *e;
			double v = strtod(optarg, &e);
			if (!*optarg || *e || !(v > 0) || v > 1e9) {
				gt_error("--kernel-wait-us wants a positive number of microseconds, not '%s'", optarg);
				return 2;
			}
			o.kernel_wait_ns = v * 1e3;
			break;
		}
		case 'h': fputs(cmd_analyze_help, stdout); return gt_finish_stdout(0);
		default:
			gt_error("analyze: unknown or incomplete option '%s'; see 'gputap help analyze'",
				 argv[optind - 1]);
			return 2;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv") && strcmp(format, "columns")) {
		gt_error("--format is text, json, csv or columns, not '%s'", format);
		return 2;
	}
	if (config && strcmp(format, "columns") == 0) {
		gt_error("--format columns is for INPUTs given on the command line, not --config");
		return 2;
	}
	if (strcmp(format, "columns") == 0)
		o.findings = 0, o.no_detail = 1; /* the columns hold neither: not computed for nothing */
	if (config) {
		if (optind < argc || mapf || o.iters || o.gpus || o.nvtx_tag) {
			gt_error("--config takes everything from the config file: no INPUT, --map, --iters, --gpus "
				 "or --nvtx with it");
			return 2;
		}
		return gt_finish_stdout(gt_an_config_run(config, format, stdout));
	}
	if (optind >= argc) {
		gt_error("analyze: no INPUT given; see 'gputap help analyze'");
		return 2;
	}
	char err[1024] = "";
	struct gt_an_map *map = NULL;
	if (mapf && gt_an_map_load(&map, mapf, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		return 1;
	}
	o.map = map;
	struct gt_an_result *r = NULL;
	int rc = gt_an_run((const char *const *)argv + optind, argc - optind, &o, &r, err, sizeof(err));
	if (rc < 0) {
		gt_error("%s", err);
		gt_an_map_free(map);
		return 1;
	}
	for (size_t i = 0; i < r->nnotes; i++)
		gt_warn("%s", r->notes[i]);
	int werr;
	if (strcmp(format, "json") == 0)
		werr = gt_an_print_json((const struct gt_an_result *const *)&r, 1, stdout);
	else if (strcmp(format, "csv") == 0)
		werr = gt_an_print_csv(r, stdout);
	else if (strcmp(format, "columns") == 0)
		werr = gt_an_print_columns(r, stdout);
	else {
		if (r->findings && r->has_timeline) {
			gt_fd_print_text(r->findings, GT_FD_MIN_GAIN_PCT, 1, stdout);
			fputc('\n', stdout);
		}
		werr = gt_an_print_text(r, stdout);
	}
	gt_an_free(r);
	gt_an_map_free(map);
	return gt_finish_stdout(werr ? 1 : 0);
}
