/* gputap info — GPUs, driver, CUDA/CUPTI/NVML versions, what works here; see commands.h. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include <yajl/yajl_gen.h>

#include "cli/commands.h"
#include "core/log.h"
#include "metrics/rmagg.h"
#include "gpu/cuprof.h"
#include "gpu/nvml.h"
#include "gpu/probe.h"

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

struct info {
	char nvml_err[256];
	int nvml_ok;
	int ngpu;
	char driver[96], nvml_ver[96], cupti_path[512];
	int cuda_nvml, cuda_drv;
	unsigned cupti;
};

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

static int print_json(const struct info *in)
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
		struct gt_gpu_static s;
		gt_nvml_static(i, &s);
		yajl_gen_map_open(g);
		gen_int(g, "index", i);
		gen_str(g, "name", s.name);
		gen_str(g, "uuid", s.uuid);
		yajl_gen_string(g, (const unsigned char *)"memory_total_bytes", 18);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)s.mem_total);
		yajl_gen_number(g, b, strlen(b));
		if (s.cc_major >= 0) {
			snprintf(b, sizeof(b), "%d.%d", s.cc_major, s.cc_minor);
			gen_str(g, "compute_capability", b);
		}
		if (s.power_limit_mw) {
			yajl_gen_string(g, (const unsigned char *)"power_limit_W", 13);
			snprintf(b, sizeof(b), "%.1f", s.power_limit_mw / 1000.0);
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

static void print_text(const struct info *in)
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
		struct gt_gpu_static s;
		gt_nvml_static(i, &s);
		printf("  GPU %d: %s, %.1f GiB", i, s.name[0] ? s.name : "?", (double)s.mem_total / 1073741824.0);
		if (s.cc_major >= 0)
			printf(", compute capability %d.%d", s.cc_major, s.cc_minor);
		if (s.power_limit_mw)
			printf(", power limit %.0f W", s.power_limit_mw / 1000.0);
		printf("\n         %s\n", s.uuid);
	}
	printf("features:\n");
	printf("  tap (gputap run, kernel_trace):  %s\n",
	       in->cuda_drv > 0 && in->cupti > 0 ? "yes"
	       : in->cuda_drv > 0		 ? "no (CUPTI not found; API counters only)"
						 : "no (no CUDA driver)");
	printf("  power / vram samplers:           %s\n", in->nvml_ok && in->ngpu > 0 ? "yes" : "no (needs NVML and a GPU)");
	printf("  analyze, convert, report:        yes\n");
}

static void print_metric(const char *name, const char *unit, const char *desc, const char *type, void *arg)
{
	(void)arg;
	printf("%-60s %-12s %-10s %s\n", name, unit[0] ? unit : "-", type, desc);
}

/* gputap info --metrics [LIST]: the chip's metrics from CUPTI, or a check of LIST. */
static int info_metrics(const char *list, int dev)
{
	char err[1024];
	struct gt_rm_list l;
	if (list && gt_rm_parse_list(list, "--metrics", &l, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		return 1;
	}
	void *cu = gt_libcuda_open();
	CUresult (*init)(unsigned) = NULL, (*count)(int *) = NULL, (*retain)(CUcontext *, CUdevice) = NULL,
		 (*setcur)(CUcontext) = NULL;
	if (cu) {
		*(void **)&init = dlsym(cu, "cuInit");
		*(void **)&count = dlsym(cu, "cuDeviceGetCount");
		*(void **)&retain = dlsym(cu, "cuDevicePrimaryCtxRetain");
		*(void **)&setcur = dlsym(cu, "cuCtxSetCurrent");
	}
	int n = 0;
	if (!init || !count || init(0) != CUDA_SUCCESS || count(&n) != CUDA_SUCCESS || n == 0) {
		gt_error("info --metrics: no CUDA GPU here (libcuda.so.1 %s)", cu ? "found, no device" : "not loadable");
		return 1;
	}
	if (dev < 0 || dev >= n) {
		gt_error("info --metrics: --device %d: this machine has GPUs 0 to %d", dev, n - 1);
		return 1;
	}
	struct gt_cuprof p;
	const char *chip = NULL;
	CUpti_Profiler_Host_Object *host = NULL;
	if (gt_cuprof_load(&p, NULL, err, sizeof(err)) < 0 ||
	    gt_cuprof_chip(&p, dev, &chip, err, sizeof(err)) < 0 || gt_cuprof_host(&p, chip, NULL, &host, err, sizeof(err)) < 0) {
		gt_error("info --metrics: %s", err);
		return 1;
	}
	if (!list) {
		printf("# metrics of GPU %d (chip %s), CUPTI %u: base names; add a rollup (.sum .avg .max .min)\n", dev,
		       chip, p.version);
		printf("%-60s %-12s %-10s %s\n", "METRIC", "UNIT", "TYPE", "DESCRIPTION");
		int k = gt_cuprof_list(&p, host, print_metric, NULL, err, sizeof(err));
		gt_cuprof_host_free(&p, host);
		if (k < 0) {
			gt_error("info --metrics: %s", err);
			return 1;
		}
		return 0;
	}
	/* each name alone first, so that an unknown one is named */
	int bad = 0;
	for (int i = 0; i < l.n; i++) {
		CUpti_Profiler_Host_Object *h1 = NULL;
		uint8_t *img = NULL;
		size_t sz;
		int passes;
		const char *one[1] = {l.name[i]};
		if (gt_cuprof_host(&p, chip, NULL, &h1, err, sizeof(err)) == 0 &&
		    gt_cuprof_config(&p, h1, one, 1, &img, &sz, &passes, err, sizeof(err)) < 0) {
			gt_error("%s", err);
			bad = 1;
		}
		free(img);
		gt_cuprof_host_free(&p, h1);
	}
	if (bad) {
		gt_cuprof_host_free(&p, host);
		return 1;
	}
	const char *names[GT_RM_MAX_METRICS];
	for (int i = 0; i < l.n; i++)
		names[i] = l.name[i];
	uint8_t *img = NULL;
	size_t sz;
	int passes = 0;
	if (gt_cuprof_config(&p, host, names, l.n, &img, &sz, &passes, err, sizeof(err)) < 0) {
		gt_error("info --metrics: %s", err);
		gt_cuprof_host_free(&p, host);
		return 1;
	}
	free(img);
	printf("GPU %d (chip %s), CUPTI %u\n", dev, chip, p.version);
	for (int i = 0; i < l.n; i++) {
		char unit[64];
		gt_cuprof_unit(&p, host, l.name[i], unit, sizeof(unit));
		printf("  %-58s %-10s %s\n", l.name[i], unit[0] ? unit : "-",
		       gt_rm_metric_additive(l.name[i]) ? "additive" : "not additive (per-kernel mode)");
	}
	gt_cuprof_host_free(&p, host);
	char why[512];
	int mode = gt_rm_choose_mode(GT_RM_AUTO, passes, &l, why, sizeof(why));
	printf("passes: %d\nmode 'auto': %s\n", passes, mode < 0 ? "none fits" : why);
	CUcontext ctx = NULL;
	uint8_t *avail = NULL;
	const char *access = "unknown (no context)";
	if (retain && setcur && retain(&ctx, (CUdevice)dev) == CUDA_SUCCESS && setcur(ctx) == CUDA_SUCCESS) {
		int rc = gt_cuprof_availability(&p, ctx, &avail, NULL, err, sizeof(err));
		access = rc == 0 ? "yes" : rc == GT_CUPROF_EPERM ? gt_cuprof_perm_help() : err;
		free(avail);
	}
	printf("counter access: %s\n", access);
	return 0;
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
		return gt_finish_stdout(info_metrics(mlist, dev));
	static struct info in;
	memset(&in, 0, sizeof(in));
	in.nvml_ok = gt_nvml_open(in.nvml_err, sizeof(in.nvml_err)) == 0;
	if (in.nvml_ok) {
		in.ngpu = gt_nvml_device_count();
		gt_nvml_driver_version(in.driver, sizeof(in.driver));
		gt_nvml_version(in.nvml_ver, sizeof(in.nvml_ver));
		in.cuda_nvml = gt_nvml_cuda_driver_version();
	}
	in.cuda_drv = gt_cuda_driver_version();
	in.cupti = gt_cupti_version(in.cupti_path, sizeof(in.cupti_path));
	int rc = 0;
	if (strcmp(format, "json") == 0)
		rc = print_json(&in);
	else
		print_text(&in);
	gt_nvml_close();
	return gt_finish_stdout(rc);
}
