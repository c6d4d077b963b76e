/* gputap info — GPUs, driver, CUDA/CUPTI/NVML versions, what works here: the questions are gpu/survey.h's,
 * the metrics metrics/chip.h's; this file holds the options, the help and the printing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "cli/commands.h"
#include "core/log.h"
#include "gpu/probe.h"
#include "gpu/survey.h"
#include "metrics/chip.h"

const char cmd_info_help[] =
	"NAME\n"
	"    gputap info - GPUs, driver, CUDA/CUPTI versions, what is supported\n"
	"\n"
	"SYNOPSIS\n"
	"    gputap info [--format text|json]\n"
	"    gputap info --metrics [LIST] [--device N]\n"
	"\n"
	"DESCRIPTION\n"
	"    Lists the GPUs NVML sees (index, name, UUID, memory, compute capability,\n"
	"    power limit), the driver version, the CUDA version the driver supports\n"
	"    (cuDriverGetVersion from libcuda.so.1, which creates no context), the CUPTI\n"
	"    version (cuptiGetVersion), the NVML version, and which gputap features can\n"
	"    work on this machine: the tap (needs libcuda and CUPTI), the power and vram\n"
	"    samplers (need NVML).  Without a driver it says so and still exits 0.\n"
	"\n"
	"    --metrics lists the hardware metrics this GPU offers for range metrics\n"
	"    (gputap run --metrics), from CUPTI's own list for the device's chip: one\n"
	"    line per base metric with its unit, type and description.  A metric is\n"
	"    named base.rollup[.submetric]: rollups .sum .avg .max .min, submetrics\n"
	"    such as .per_second or .pct_of_peak_sustained_elapsed, as in Nsight\n"
	"    Compute.  With LIST (comma-separated full names) it checks the list\n"
	"    instead: each metric's unit, the replay passes the list needs, the mode\n"
	"    'auto' would choose, and whether this user may read the counters; an\n"
	"    unknown name is an error (exit status 1).\n"
	"\n"
	"OPTIONS\n"
	"    --format text|json   text (default) or one JSON object on standard output\n"
	"    --metrics [LIST]     the GPU's metrics, or check LIST (see above)\n"
	"    --device N           the GPU whose metrics --metrics lists (default 0)\n"
	"    -h, --help           this text\n"
	"\n"
	"ENVIRONMENT\n"
	"    GPUTAP_NVML_LIB   NVML library to load instead of libnvidia-ml.so.1\n"
	"    GPUTAP_CUDA_LIB   CUDA driver library instead of libcuda.so.1\n"
	"    GPUTAP_CUPTI_LIB  CUPTI library to try first\n"
	"\n"
	"EXIT STATUS\n"
	"    0, also when no GPU or driver is present; 2 for a usage error.  With\n"
	"    --metrics: 1 when there is no GPU or CUPTI, or a name in LIST is unknown.\n"
	"\n"
	"EXAMPLES\n"
	"    gputap info\n"
	"    gputap info --format json | python3 -m json.tool\n"
	"    gputap info --metrics | grep dram__\n"
	"    gputap info --metrics smsp__inst_executed.sum,dram__bytes_read.sum\n";

static void gen_str(yajl_gen g, const char *k, const char *v)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
	if (v && *v)
		yajl_gen_string(g, (const unsigned char *)v, strlen(v));
	else
		yajl_gen_null(g);
}

static void gen_int(yajl_gen g, const char *k, long long v)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
	yajl_gen_integer(g, v);
}

static void gen_bool(yajl_gen g, const char *k, int v)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
	yajl_gen_bool(g, v);
}

static int print_json(const struct gt_gpu_survey *in)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g)
		return 1;
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_map_open(g);
	gen_str(g, "gputap_version", gt_version);
	gen_str(g, "nvml", in->nvml_ok ? "ok" : in->nvml_err);
	gen_str(g, "driver_version", in->driver);
	char b[32];
	gt_cuda_version_str(in->cuda_drv ? in->cuda_drv : in->cuda_nvml, b, sizeof(b));
	gen_str(g, "cuda_driver_version", b);
	gen_str(g, "nvml_version", in->nvml_ver);
	yajl_gen_string(g, (const unsigned char *)"cupti_version", 13);
	if (in->cupti)
		yajl_gen_integer(g, in->cupti);
	else
		yajl_gen_null(g);
	gen_str(g, "cupti_library", in->cupti_path);
	yajl_gen_string(g, (const unsigned char *)"gpus", 4);
	yajl_gen_array_open(g);
	for (int i = 0; i < in->ngpu; i++) {
		const struct gt_gpu_static *s = &in->gpu[i];
		yajl_gen_map_open(g);
		gen_int(g, "index", i);
		gen_str(g, "name", s->name);
		gen_str(g, "uuid", s->uuid);
		yajl_gen_string(g, (const unsigned char *)"memory_total_bytes", 18);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)s->mem_total);
		yajl_gen_number(g, b, strlen(b));
		if (s->cc_major >= 0) {
			snprintf(b, sizeof(b), "%d.%d", s->cc_major, s->cc_minor);
			gen_str(g, "compute_capability", b);
		}
		if (s->power_limit_mw) {
			yajl_gen_string(g, (const unsigned char *)"power_limit_W", 13);
			snprintf(b, sizeof(b), "%.1f", s->power_limit_mw / 1000.0);
			yajl_gen_number(g, b, strlen(b));
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_string(g, (const unsigned char *)"features", 8);
	yajl_gen_map_open(g);
	gen_bool(g, "tap", in->cuda_drv > 0 && in->cupti > 0);
	gen_bool(g, "power_sampler", in->nvml_ok && in->ngpu > 0);
	gen_bool(g, "vram_sampler", in->nvml_ok && in->ngpu > 0);
	gen_bool(g, "analyze", 1);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	yajl_gen_get_buf(g, &buf, &len);
	fwrite(buf, 1, len, stdout);
	fputc('\n', stdout);
	yajl_gen_free(g);
	return 0;
}

static void print_text(const struct gt_gpu_survey *in)
{
	char b[32];
	printf("gputap %s\n", gt_version);
	if (!in->nvml_ok)
		printf("NVIDIA driver: not found - %s\n", in->nvml_err);
	else
		printf("NVIDIA driver: %s\n", in->driver[0] ? in->driver : "(version unknown)");
	gt_cuda_version_str(in->cuda_drv ? in->cuda_drv : in->cuda_nvml, b, sizeof(b));
	printf("CUDA (driver): %s\n", b[0] ? b : "not available (libcuda.so.1 not loadable)");
	if (in->cupti)
		printf("CUPTI:         API version %u (%s)\n", in->cupti, in->cupti_path);
	else
		printf("CUPTI:         not found\n");
	printf("NVML:          %s\n", in->nvml_ok ? (in->nvml_ver[0] ? in->nvml_ver : "ok") : "not available");
	printf("GPUs:          %d\n", in->ngpu);
	for (int i = 0; i < in->ngpu; i++) {
		const struct gt_gpu_static *s = &in->gpu[i];
		printf("  GPU %d: %s, %.1f GiB", i, s->name[0] ? s->name : "?", (double)s->mem_total / 1073741824.0);
		if (s->cc_major >= 0)
			printf(", compute capability %d.%d", s->cc_major, s->cc_minor);
		if (s->power_limit_mw)
			printf(", power limit %.0f W", s->power_limit_mw / 1000.0);
		printf("\n         %s\n", s->uuid);
	}
	printf("features:\n");
	printf("  tap (gputap run, kernel_trace):  %s\n",
	       in->cuda_drv > 0 && in->cupti > 0 ? "yes"
	       : in->cuda_drv > 0		 ? "no (CUPTI not found; API counters only)"
						 : "no (no CUDA driver)");
	printf("  power / vram samplers:           %s\n", in->nvml_ok && in->ngpu > 0 ? "yes" : "no (needs NVML and a GPU)");
	printf("  analyze, convert, report:        yes\n");
}

int cmd_info(int argc, char **argv)
{
	const char *format = "text";
	int metrics = 0, dev = 0;
	const char *mlist = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--metrics") == 0) {
			metrics = 1;
			if (i + 1 < argc && argv[i + 1][0] != '-')
				mlist = argv[++i];
		} else if (strncmp(argv[i], "--metrics=", 10) == 0) {
			metrics = 1;
			mlist = argv[i] + 10;
		} else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
			char *end;
			dev = (int)strtol(argv[++i], &end, 10);
			if (*end || dev < 0) {
				gt_error("info: --device '%s': expected a GPU index", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format = argv[++i];
		else if (strncmp(argv[i], "--format=", 9) == 0)
			format = argv[i] + 9;
		else {
			gt_error("info: unknown argument '%s'; see 'gputap help info'", argv[i]);
			return 2;
		}
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
		gt_error("info: --format '%s': expected text or json", format);
		return 2;
	}
	if (metrics)
		return gt_finish_stdout(gt_rm_chip_report(mlist, dev, stdout) < 0 ? 1 : 0);
	static struct gt_gpu_survey in;
	gt_gpu_survey(&in);
	int rc = 0;
	if (strcmp(format, "json") == 0)
		rc = print_json(&in);
	else
		print_text(&in);
	gt_gpu_survey_free(&in);
	return gt_finish_stdout(rc);
}
