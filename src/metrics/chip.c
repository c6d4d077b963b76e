/* metrics/chip.c — what one GPU offers for range metrics, asked of CUPTI (metrics/chip.h). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#include "core/log.h"
#include "gpu/cuprof.h"
#include "gpu/probe.h"
#include "metrics/chip.h"
#include "metrics/rmagg.h"

/* The driver's calls the check needs, CUPTI's profiler host of the GPU's chip. */
struct chip {
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*setcur)(CUcontext);
	struct gt_cuprof p;
	const char *name;
	CUpti_Profiler_Host_Object *host;
};

/* GPU `dev` found through libcuda, CUPTI's profiler host made for its chip.  0, or -1 (said). */
static int chip_open(struct chip *c, int dev)
{
	char err[1024];
	void *cu = gt_libcuda_open();
	CUresult (*init)(unsigned) = NULL, (*count)(int *) = NULL;
	if (cu) {
		*(void **)&init = dlsym(cu, "cuInit");
		*(void **)&count = dlsym(cu, "cuDeviceGetCount");
		*(void **)&c->retain = dlsym(cu, "cuDevicePrimaryCtxRetain");
		*(void **)&c->setcur = dlsym(cu, "cuCtxSetCurrent");
	}
	int n = 0;
	if (!init || !count || init(0) != CUDA_SUCCESS || count(&n) != CUDA_SUCCESS || n == 0) {
		gt_error("info --metrics: no CUDA GPU here (libcuda.so.1 %s)", cu ? "found, no device" : "not loadable");
		return -1;
	}
	if (dev < 0 || dev >= n) {
		gt_error("info --metrics: --device %d: this machine has GPUs 0 to %d", dev, n - 1);
		return -1;
	}
	if (gt_cuprof_load(&c->p, NULL, err, sizeof(err)) < 0 || gt_cuprof_chip(&c->p, dev, &c->name, err, sizeof(err)) < 0 ||
	    gt_cuprof_host(&c->p, c->name, NULL, &c->host, err, sizeof(err)) < 0) {
		gt_error("info --metrics: %s", err);
		return -1;
	}
	return 0;
}

static void print_metric(const char *name, const char *unit, const char *desc, const char *type, void *arg)
{
	fprintf(arg, "%-60s %-12s %-10s %s\n", name, unit[0] ? unit : "-", type, desc);
}

/* The chip's base metrics, one line each. */
static int chip_list(struct chip *c, int dev, FILE *f)
{
	char err[1024];
	fprintf(f, "# metrics of GPU %d (chip %s), CUPTI %u: base names; add a rollup (.sum .avg .max .min)\n", dev,
		c->name, c->p.version);
	fprintf(f, "%-60s %-12s %-10s %s\n", "METRIC", "UNIT", "TYPE", "DESCRIPTION");
	int k = gt_cuprof_list(&c->p, c->host, print_metric, f, err, sizeof(err));
	gt_cuprof_host_free(&c->p, c->host);
	if (k < 0) {
		gt_error("info --metrics: %s", err);
		return -1;
	}
	return 0;
}

/* Each name of the list alone, so that an unknown one is named.  0, or -1 (each said). */
static int check_names(struct chip *c, const struct gt_rm_list *l)
{
	char err[1024];
	int bad = 0;
	for (int i = 0; i < l->n; i++) {
		CUpti_Profiler_Host_Object *h1 = NULL;
		uint8_t *img = NULL;
		size_t sz;
		int passes;
		const char *one[1] = {l->name[i]};
		if (gt_cuprof_host(&c->p, c->name, NULL, &h1, err, sizeof(err)) == 0 &&
		    gt_cuprof_config(&c->p, h1, one, 1, &img, &sz, &passes, err, sizeof(err)) < 0) {
			gt_error("%s", err);
			bad = 1;
		}
		free(img);
		gt_cuprof_host_free(&c->p, h1);
	}
	return bad ? -1 : 0;
}

/* The list as a whole: each metric's unit and whether it adds up, the passes, the mode 'auto' would
 * choose, and whether this user may read the counters. */
static int chip_check(struct chip *c, const struct gt_rm_list *l, int dev, FILE *f)
{
	char err[1024];
	if (check_names(c, l) < 0) {
		gt_cuprof_host_free(&c->p, c->host);
		return -1;
	}
	const char *names[GT_RM_MAX_METRICS];
	for (int i = 0; i < l->n; i++)
		names[i] = l->name[i];
	uint8_t *img = NULL;
	size_t sz;
	int passes = 0;
	if (gt_cuprof_config(&c->p, c->host, names, l->n, &img, &sz, &passes, err, sizeof(err)) < 0) {
		gt_error("info --metrics: %s", err);
		gt_cuprof_host_free(&c->p, c->host);
		return -1;
	}
	free(img);
	fprintf(f, "GPU %d (chip %s), CUPTI %u\n", dev, c->name, c->p.version);
	for (int i = 0; i < l->n; i++) {
		char unit[64];
		gt_cuprof_unit(&c->p, c->host, l->name[i], unit, sizeof(unit));
		fprintf(f, "  %-58s %-10s %s\n", l->name[i], unit[0] ? unit : "-",
			gt_rm_metric_additive(l->name[i]) ? "additive" : "not additive (per-kernel mode)");
	}
	gt_cuprof_host_free(&c->p, c->host);
	char why[512];
	int mode = gt_rm_choose_mode(GT_RM_AUTO, passes, l, why, sizeof(why));
	fprintf(f, "passes: %d\nmode 'auto': %s\n", passes, mode < 0 ? "none fits" : why);
	CUcontext ctx = NULL;
	uint8_t *avail = NULL;
	const char *access = "unknown (no context)";
	if (c->retain && c->setcur && c->retain(&ctx, (CUdevice)dev) == CUDA_SUCCESS && c->setcur(ctx) == CUDA_SUCCESS) {
		int rc = gt_cuprof_availability(&c->p, ctx, &avail, NULL, err, sizeof(err));
		access = rc == 0 ? "yes" : rc == GT_CUPROF_EPERM ? gt_cuprof_perm_help() : err;
		free(avail);
	}
	fprintf(f, "counter access: %s\n", access);
	return 0;
}

int gt_rm_chip_report(const char *list, int dev, FILE *f)
{
	char err[1024];
	struct gt_rm_list l;
	if (list && gt_rm_parse_list(list, "--metrics", &l, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		return -1;
	}
	struct chip c = {0};
	if (chip_open(&c, dev) < 0)
		return -1;
	return list ? chip_check(&c, &l, dev, f) : chip_list(&c, dev, f);
}
