/* gputap run — options, then run/run.c does the work; see commands.h. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "core/log.h"
#include "run/run.h"

const char cmd_run_help[] =
	"NAME\n"
	"    gputap run - run a command under the tap and write the files of a run\n"
	"\n"
	"SYNOPSIS\n"
	"    gputap run [-o DIR] [--tools LIST | --context JSON | --context-file F]\n"
	"               [--trace KINDS] [--buffer-mb N] [--hold N] [--capture SPEC]\n"
	"               [--metrics LIST] [--metrics-mode auto|kernel|range]\n"
	"               [--pc-sampling[=PERIOD]]\n"
	"               [--trace-json json|gz|none] [--] CMD [ARGS...]\n"
	"    gputap run --tools help\n"
	"\n"
	"DESCRIPTION\n"
	"    Starts CMD with ARGS (no shell: CMD is searched in PATH as execvp does) with\n"
	"    the tools of the stack around it, waits for it, and writes everything it\n"
	"    recorded into DIR.  CMD's standard input, output and error are its own and\n"
	"    untouched.  Without --tools or --context the stack is kernel_trace (the full\n"
	"    tap).  The tap is libgputap.so, found next to the gputap executable, then in\n"
	"    ../lib/, then at $GPUTAP_LIB; it is loaded into CMD and every process it\n"
	"    starts through LD_PRELOAD and CUDA_INJECTION64_PATH.\n"
	"\n"
	"    Signals SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to gputap\n"
	"    are passed on to CMD (to its process group if it leads one).  A Ctrl-C typed\n"
	"    at the terminal reaches CMD once, not twice.  After CMD ends, samplers stop\n"
	"    at once, then every trace is converted, library logs are collected, and\n"
	"    DIR/report.html and a short summary (on standard error) are written.\n"
	"\n"
	"OPTIONS\n"
	"    -o DIR, --output DIR\n"
	"        Write the run into DIR (created if missing; refused if it already holds a\n"
	"        run.json, or another run started at the same time took it).  Default:\n"
	"        gputap-YYYYmmdd-HHMMSS in the current directory, with -2, -3... added\n"
	"        rather than overwrite an earlier run or share a folder with one started at\n"
	"        the same time.  Placeholders (as nsys's): %q{NAME} the environment\n"
	"        variable NAME, %h the host name, %p gputap's pid; a '%' itself is\n"
	"        written twice.  One folder per rank under torchrun:\n"
	"          torchrun --nproc_per_node 4 --no-python gputap run -o job/rank%q{RANK} \\\n"
	"              -- python train.py\n"
	"    --tools LIST\n"
	"        Comma-separated tools, the first one innermost, e.g.\n"
	"        --tools kernel_trace,power,vram.  'help' lists them; 'none' runs CMD with\n"
	"        no tool (run.json only).\n"
	"    --context JSON, --context-file F\n"
	"        The tool stack as madengine's additional context:\n"
	"          {\"tools\": [{\"name\": \"power\", \"env_vars\": {\"DEVICE\": \"all\",\n"
	"                      \"SAMPLING_RATE\": \"0.05\"}},\n"
	"                     {\"name\": \"cublaslt_trace\"},\n"
	"                     {\"name\": \"kernel_trace\", \"cmd\": \"taskset -c 0-7\"}]}\n"
	"        Each tool object has \"name\", and optionally \"cmd\" (a wrapper command put\n"
	"        in front of CMD, split on blanks, '...' and \"...\" group) and \"env_vars\"\n"
	"        (an object of strings).  Other keys of the context (gpu_vendor, guest_os,\n"
	"        ...) are ignored.  The first tool is the innermost: set-up runs from the\n"
	"        last tool to the first, tear-down from the first to the last; wrappers\n"
	"        nest the same way; a later tool's env_vars win; the same wrapper given\n"
	"        twice runs once.\n"
	"    --trace KINDS\n"
	"        What the tap records (GPUTAP_TRACE): a comma list of api, kernel,\n"
	"        memcpy, memset, memory, nvtx, or metrics.  Overrides what the tools chose.\n"
	"    --buffer-mb N\n"
	"        Memory bound of the tap's record buffers, in MiB (GPUTAP_BUFFER_MB).\n"
	"    --hold N\n"
	"        Hold kernel launches and release them in batches of N, in the order\n"
	"        they were made, on their own streams (GPUTAP_HOLD; 0 = no hold).  The\n"
	"        program's results do not change: arguments are copied when a launch is\n"
	"        queued, every driver call that could observe or reorder held work\n"
	"        (copies, syncs, event records, frees, captures, ...) releases the queue\n"
	"        first, and a launch waits at most GPUTAP_HOLD_TIMEOUT_US (default 1000).\n"
	"        Launches during a stream capture, on the per-thread stream, or whose\n"
	"        arguments point into pinned memory are not held.  GPUTAP_HOLD_MAX\n"
	"        bounds the queue (default 1024), GPUTAP_HOLD_KERNELS=word,... holds only\n"
	"        kernels whose name contains a word.  The summary says what was held,\n"
	"        what was not and why, and what released each batch (docs/hold.md).\n"
	"    --metrics LIST\n"
	"        Range metrics (GPUTAP_METRICS): GPU hardware counters, by their Nsight\n"
	"        Compute names, for every kernel and every NVTX or gputap range, e.g.\n"
	"        --metrics gpu__time_duration.sum,smsp__inst_executed.sum.  'default' is\n"
	"        gpu__time_duration.sum, smsp__inst_executed.sum, dram__bytes_read.sum,\n"
	"        dram__bytes_write.sum.  Writes DIR/<proc>/range_metrics.csv (and\n"
	"        kernel_metrics.csv per kernel); 'gputap info --metrics' lists the GPU's\n"
	"        metrics.  Needs access to GPU performance counters (root or\n"
	"        NVreg_RestrictProfilingToAdminUsers=0); see docs/range-metrics.md.\n"
	"    --metrics-mode auto|kernel|range\n"
	"        kernel: every kernel measured on its own (one pass without replay, or\n"
	"        kernel replay for several passes; launches serialised); range: one value\n"
	"        per range occurrence in one pass, the program's concurrency kept;\n"
	"        auto (default): range for a one-pass list of .sum counters, else kernel\n"
	"        (GPUTAP_METRICS_MODE).\n"
	"    --pc-sampling[=PERIOD]\n"
	"        PC sampling (GPUTAP_PCSAMP): CUPTI samples the warps' program counters\n"
	"        and stall reasons while the program runs, alongside the kernel trace.\n"
	"        PERIOD is N for one sample per SM every 2^N cycles (5..31, default 17).\n"
	"        Writes DIR/<proc>/pc_samples.csv (per PC: kernel, offset, SASS, source\n"
	"        line, samples per stall reason), pc_kernels.csv and pc_sampling.json\n"
	"        (per kernel: samples, stall reasons grouped as Nsight Compute does, the\n"
	"        hottest lines), pc_ranges.csv (per NVTX range), a table in the summary\n"
	"        and a section in the report.\n"
	"        Only some steps: GPUTAP_PCSAMP_WINDOW=1 samples only between\n"
	"        gputap_pcsamp_start() and gputap_pcsamp_stop() (C), or in the active\n"
	"        windows of gputap.Profiler(pc_sampling=True) (Python).  SASS is added\n"
	"        after the run by the toolkit's nvdisasm (GPUTAP_PCSAMP_SASS_S: its time\n"
	"        budget, 0 for none).\n"
	"        Needs access to GPU performance counters; see docs/pc-sampling.md.\n"
	"    --capture SPEC\n"
	"        Trace only inside capture windows (GPUTAP_CAPTURE); outside them the tap\n"
	"        keeps its counters only, at the cost of the metrics mode. SPEC, several\n"
	"        separated by ';' or given as several --capture options:\n"
	"          nvtx:NAME[@FIRST[-LAST]]  occurrences FIRST..LAST (from 1; default the\n"
	"                                    first) of the NVTX range NAME; NAME* matches by\n"
	"                                    prefix (ProfilerStep#*); @100- = to the end\n"
	"          cudaProfilerApi           between cu(da)ProfilerStart and Stop\n"
	"          time:DELAY[+DURATION]     seconds after the process started (30, 1.5s, 250ms)\n"
	"          trigger                   nothing until `gputap trigger` starts a window\n"
	"        GPU work launched inside a window is kept whole. Example:\n"
	"        --capture 'nvtx:train_step@100-110'\n"
	"    --trace-json json|gz|none\n"
	"        The timeline of each process for Perfetto and chrome://tracing:\n"
	"        DIR/<proc>/trace.json (json, the default), trace.json.gz (gz: about\n"
	"        10x smaller, opened as it is; for long runs) or none.  `gputap\n"
	"        convert` makes it later from trace.gtr in any form.\n"
	"    -h, --help\n"
	"        This text.\n"
	"\n"
	"TOOLS\n"
	"    kernel_trace   full GPU trace: API calls, kernels, copies, memory, NVTX\n"
	"    api_trace      CUDA API records only\n"
	"    metrics        counters only (the alnair interposer's metrics.log, timeline.log)\n"
	"    power          power samples (madengine name gpu_info_power_profiler)\n"
	"    vram           memory-use samples (madengine name gpu_info_vram_profiler)\n"
	"    range_metrics  GPU hardware counters per kernel and per NVTX range\n"
	"                   (env_vars GPUTAP_METRICS, GPUTAP_METRICS_MODE)\n"
	"    pc_sampling    the full trace and PC samples with stall reasons per kernel\n"
	"                   and source line (env_vars GPUTAP_PCSAMP)\n"
	"    cublas_trace, cublaslt_trace, cudnn_trace, nccl_trace\n"
	"                   the library's own call log into DIR/libs/, summarised into\n"
	"                   DIR/library_trace.csv\n"
	"\n"
	"ENVIRONMENT\n"
	"    DEVICE         GPUs the samplers read: 0, 0,1,2 or all (default 0; the one GPU\n"
	"                   CUDA_VISIBLE_DEVICES shows, or under torchrun/mpirun/srun the rank's GPU).\n"
	"    SAMPLING_RATE  seconds between samples (default 0.1).  A tool's env_vars\n"
	"                   DEVICE / SAMPLING_RATE / MODE (power|vram) override both.\n"
	"    GPUTAP_SAMPLE_EVERY_TICK=1  above 10 Hz, read power and memory on every tick (default:\n"
	"                   power around the driver's refresh, memory after an allocation or free,\n"
	"                   while it changes and at 10 Hz; docs/samplers.md).  GPUTAP_SAMPLE_VERIFY=1:\n"
	"                   every tick, and run.json counts what those rules would have shown otherwise.\n"
	"    GPUTAP_LIB     libgputap.so to use when none is next to gputap.\n"
	"    GPUTAP_NVML_LIB  NVML library to load instead of libnvidia-ml.so.1.\n"
	"    GPUTAP_LOG     gputap's own message level: quiet, error, warn, info, debug.\n"
	"    Set for CMD: LD_PRELOAD (libgputap.so prepended), CUDA_INJECTION64_PATH,\n"
	"    NVTX_INJECTION64_PATH, GPUTAP_OUT=DIR, GPUTAP_TRACE, GPUTAP_BUFFER_MB,\n"
	"    GPUTAP_HOLD, and the logging variables of the library tools (CUBLAS_LOGINFO_DBG,\n"
	"    CUBLASLT_LOG_LEVEL, CUDNN_LOGLEVEL_DBG, NCCL_DEBUG, ... see docs/run.md).\n"
	"\n"
	"FILES\n"
	"    DIR/run.json                   command, argv, cwd, start/end, exit status or\n"
	"                                   signal, host, user, GPUs, driver and CUDA\n"
	"                                   versions, tools and settings, environment set,\n"
	"                                   processes found (partial / lost flags)\n"
	"    DIR/<proc>/                    one per process (rank<R> or pid<P>): trace.gtr,\n"
	"                                   trace.json, nsys-style *_sum.csv, metrics.log,\n"
	"                                   timeline.log\n"
	"    DIR/gpu_info_power_profiler_output.csv   time, Power(Watt) GPU<i>...\n"
	"    DIR/gpu_info_vram_profiler_output.csv    time, vram(%) GPU<i>...\n"
	"    DIR/gpu_samples.csv            time_ns, device, power_W, energy_J, mem_used_MiB,\n"
	"                                   mem_total_MiB, sm_util_pct, mem_util_pct,\n"
	"                                   sm_clock_MHz, temperature_C (empty = not reported)\n"
	"    DIR/samplers/trace.gtr         the samples as counter records (and trace.json)\n"
	"    DIR/libs/, DIR/library_trace.csv   library logs and their summary\n"
	"    DIR/report.html                the report with plots\n"
	"\n"
	"EXIT STATUS\n"
	"    The exit status of CMD; 128+N if signal N ended it (as a shell reports it);\n"
	"    127 if CMD was not found, 126 if it could not be run (as env(1)); 2 for a\n"
	"    usage error (bad option, bad --context) found before CMD started; 125 if the\n"
	"    run directory could not be created.\n"
	"\n"
	"EXAMPLES\n"
	"    gputap run -o myrun -- python train.py --epochs 1\n"
	"    gputap run --tools kernel_trace,power,vram -- ./app\n"
	"    SAMPLING_RATE=0.01 DEVICE=all gputap run --tools power -- torchrun ...\n"
	"    gputap run --context '{\"tools\":[{\"name\":\"cublaslt_trace\"},{\"name\":\"power\"}]}' \\\n"
	"        -- python bench.py\n"
	"    gputap run --tools help\n";

static int need_arg(int argc, char **argv, int i)
{
	if (i + 1 >= argc) {
		gt_error("run: %s needs a value; see 'gputap help run'", argv[i]);
		return 0;
	}
	return 1;
}

int cmd_run(int argc, char **argv)
{
	struct gt_run_opts o;
	memset(&o, 0, sizeof(o));
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		const char **dst = NULL;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (gt_is_help_flag(a)) {
			fputs(cmd_run_help, stdout);
			return gt_finish_stdout(0);
		}
		if (a[0] != '-')
			break; /* the command starts here, as with env(1) */
		const char *eq = strchr(a, '=');
		size_t nl = eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a);
		if ((nl == 2 && strncmp(a, "-o", 2) == 0) || (nl == 8 && strncmp(a, "--output", 8) == 0))
			dst = &o.outdir;
		else if (nl == 7 && strncmp(a, "--tools", 7) == 0)
			dst = &o.tools;
		else if (nl == 9 && strncmp(a, "--context", 9) == 0)
			dst = &o.context;
		else if (nl == 14 && strncmp(a, "--context-file", 14) == 0)
			dst = &o.context_file;
		else if (nl == 7 && strncmp(a, "--trace", 7) == 0)
			dst = &o.trace;
		else if (nl == 11 && strncmp(a, "--buffer-mb", 11) == 0)
			dst = &o.buffer_mb;
		else if (nl == 6 && strncmp(a, "--hold", 6) == 0)
			dst = &o.hold;
		else if (nl == 9 && strncmp(a, "--metrics", 9) == 0)
			dst = &o.metrics;
		else if (nl == 14 && strncmp(a, "--metrics-mode", 14) == 0)
			dst = &o.metrics_mode;
		else if (nl == 12 && strncmp(a, "--trace-json", 12) == 0)
			dst = &o.trace_json;
		else if (nl == 13 && strncmp(a, "--pc-sampling", 13) == 0) {
			o.pcsamp = eq ? eq + 1 : "default"; /* the period only as --pc-sampling=N */
			continue;
		} else if (nl == 9 && strncmp(a, "--capture", 9) == 0) {
			const char *v = eq ? eq + 1 : (need_arg(argc, argv, i) ? argv[++i] : NULL);
			if (!v)
				return 2;
			size_t used = strlen(o.capture);
			if (used + strlen(v) + 2 > sizeof(o.capture)) {
				gt_error("run: --capture: the windows are longer than %zu characters", sizeof(o.capture) - 1);
				return 2;
			}
			snprintf(o.capture + used, sizeof(o.capture) - used, "%s%s", used ? ";" : "", v);
			continue;
		}
		if (!dst) {
			gt_error("run: unknown option '%s'; see 'gputap help run'", a);
			return 2;
		}
		if (eq && a[1] == '-') {
			*dst = eq + 1;
		} else {
			if (!need_arg(argc, argv, i))
				return 2;
			*dst = argv[++i];
		}
	}
	if (o.tools && (o.context || o.context_file)) {
		gt_error("run: --tools and --context/--context-file cannot be used together");
		return 2;
	}
	if (o.context && o.context_file) {
		gt_error("run: give --context or --context-file, not both");
		return 2;
	}
	if (o.tools && strcmp(o.tools, "help") == 0)
		return gt_run_execute(&o) == 0 ? gt_finish_stdout(0) : 2;
	if (i >= argc) {
		gt_error("run: no command given; usage: gputap run [OPTIONS] -- CMD [ARGS...]");
		return 2;
	}
	o.argv = argv + i;
	o.argc = argc - i;
	return gt_run_execute(&o);
}
