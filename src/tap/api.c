/*
 * In-process control: the entry points of include/gputap.h that start, stop,
 * flush and report (gputap_start & co.).  See tap/api.h.
 */
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "gpu/probe.h"
#include "gputap.h"
#include "tap/api.h"
#include "tap/cupti.h"
#include "tap/rangeagg.h"
#include "tap/tap.h"

#if defined(__has_include)
#if __has_include("tap/rmetrics.h")
#include "tap/rmetrics.h"
#define GT_HAVE_RMETRICS 1
#endif
#endif

GT_EXPORT const char *gputap_last_error(void)
{
	const char *e = gt_api_error();
#ifdef GT_HAVE_RMETRICS
	if (!e[0])
		e = gt_rmetrics_last_error(); /* gputap_metrics_enable's reason */
#endif
	return e;
}

/* ---- in-process control (include/gputap.h) ---- */

static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static int cupti_rc = 1; /* gt_cupti_start's result; 1 = not tried here */

/* cuInit and a device, or GPUTAP_ENOGPU with the reason. */
static int probe_gpu(void)
{
	typedef CUresult (*init_t)(unsigned);
	typedef CUresult (*count_t)(int *);
	typedef CUresult (*name_t)(CUresult, const char **);
	void *h = gt_libcuda_open();
	if (!h) {
		const char *why = dlerror();
		gt_api_set_error("no NVIDIA driver: libcuda.so.1 cannot be loaded (%s)", why ? why : "not found");
		return GPUTAP_ENOGPU;
	}
	init_t init = (init_t)gt_real_dlsym(h, "cuInit");
	count_t count = (count_t)gt_real_dlsym(h, "cuDeviceGetCount");
	name_t ename = (name_t)gt_real_dlsym(h, "cuGetErrorName");
	name_t estr = (name_t)gt_real_dlsym(h, "cuGetErrorString");
	if (!init || !count) {
		gt_api_set_error("the CUDA driver found lacks cuInit/cuDeviceGetCount");
		return GPUTAP_ENOGPU;
	}
	int saved = gt_tls.guard;
	gt_tls.guard++;
	CUresult r = init(0);
	int n = 0;
	if (r == CUDA_SUCCESS)
		r = count(&n);
	gt_tls.guard = saved;
	if (r != CUDA_SUCCESS) {
		const char *nm = "?", *st = "";
		if (ename)
			ename(r, &nm);
		if (estr)
			estr(r, &st);
		gt_api_set_error("CUDA could not be initialised: cuInit returned %s (%s)", nm ? nm : "?", st ? st : "");
		return GPUTAP_ENOGPU;
	}
	if (n <= 0) {
		gt_api_set_error("no CUDA device is visible (cuDeviceGetCount returned 0)");
		return GPUTAP_ENOGPU;
	}
	return 0;
}

static const char busy_msg[] =
	"another CUPTI client (torch.profiler, nsys, ncu, ...) holds this process: gputap records the ranges' "
	"wall times and emits them as NVTX ranges (that tool sees them); kernel counts, GPU time and "
	"memory activity per range are not recorded";

GT_EXPORT int gputap_start(const char *out_dir)
{
	pthread_mutex_lock(&start_mu);
	gt_api_set_error("%s", "");
	gt_tap_init();
	int rc = 0;
	if (gt_tap_recording() && gt_api_hooks_live()) {
		gt_tap_touch();
		goto out; /* gputap run / LD_PRELOAD: the driver hooks start CUPTI at cuInit */
	}
	rc = probe_gpu();
	if (rc < 0)
		goto out;
	/* this start is the program's own: warnings become the error text, not stderr lines */
	int lv = gt_log_level;
	if (gt_log_level == GT_LOG_WARN)
		gt_log_level = GT_LOG_ERROR;
	if (!atomic_load(&gt_tap.on)) {
		int r = gt_tap_start_inprocess(out_dir);
		if (r < 0) {
			gt_log_level = lv;
			gt_api_set_error(r == -EALREADY ? "gputap was stopped in this process (gputap_stop) and cannot start "
							  "again"
							: "gputap could not reserve its record memory");
			rc = GPUTAP_EFAIL;
			goto out;
		}
	}
	if (cupti_rc == 1) {
		int saved = gt_tls.guard;
		gt_tls.guard++;
		cupti_rc = gt_cupti_start();
		gt_tls.guard = saved;
	}
	gt_log_level = lv;
	if (cupti_rc == -EBUSY) {
		gt_api_set_error("%s", busy_msg);
		rc = GPUTAP_EBUSY;
	}
out:
	pthread_mutex_unlock(&start_mu);
	return rc;
}

GT_EXPORT int gputap_stop(void)
{
	gt_tap_finish();
	return 0;
}

GT_EXPORT int gputap_flush(void)
{
	if (!atomic_load(&gt_tap.on) && !atomic_load(&gt_tap.stopped))
		return 0;
	typedef CUresult (*getcur_t)(CUcontext *);
	typedef CUresult (*sync_t)(void);
	getcur_t getcur = (getcur_t)gt_real_driver("cuCtxGetCurrent");
	sync_t sync = (sync_t)gt_real_driver("cuCtxSynchronize");
	int saved = gt_tls.guard;
	gt_tls.guard++;
	CUcontext ctx = NULL;
	if (getcur && sync && getcur(&ctx) == CUDA_SUCCESS && ctx)
		sync(); /* the kernels queued so far have run: their records exist */
	gt_cupti_flush();
	gt_tls.guard = saved;
	return 0;
}

GT_EXPORT int gputap_results_reset(void)
{
	gt_api_ranges_reset();
	return 0;
}

static void results(struct gt_jbuf *b)
{
#ifdef GT_HAVE_RMETRICS
	/* first: decoding what range metrics hold also counts (and times) the ranges' kernels when
	 * kernel records are off */
	char *m = gt_rmetrics_results_json();
#endif
	int gpu = atomic_load(&gt_tap.cupti_active);
	gt_jb_puts(b, "{\"schema\":\"gputap.results/1\",\"proc\":");
	gt_jb_str(b, gt_tap.proc, strlen(gt_tap.proc));
	const char *mode = !atomic_load(&gt_tap.on) ? "off" : gt_api_hooks_live() ? "preload" : "in-process";
	gt_jb_printf(b, ",\"mode\":\"%s\",\"recording\":%s,\"gpu_activity\":%s", mode,
		     atomic_load(&gt_tap.on) ? "true" : "false", gpu ? "true" : "false");
	const char *note = cupti_rc == -EBUSY   ? busy_msg
			   : cupti_rc == -ENOENT ? "CUPTI was not found: set CUDA_HOME to the toolkit that has it"
			   : !gpu && atomic_load(&gt_tap.on) ? "GPU activity is not recorded in this process (see gputap's warnings)"
							     : NULL;
	gt_jb_puts(b, ",\"gpu_activity_note\":");
	if (note)
		gt_jb_str(b, note, strlen(note));
	else
		gt_jb_puts(b, "null");
	gt_jb_printf(b, ",\"memory_source\":\"%s\"",
		     !atomic_load(&gt_tap.on) && !atomic_load(&gt_tap.stopped) ? "none"
		     : gt_api_hooks_live()                                        ? "driver-hooks"
		     : gpu                                                        ? "cupti-callbacks"
										  : "none");
	gt_api_ranges_json(b);
#ifdef GT_HAVE_RMETRICS
	if (m) {
		gt_jb_puts(b, ",\"metrics\":");
		gt_jb_puts(b, m);
		free(m);
	} else {
		const char *why = gt_rmetrics_last_error();
		if (!why || !why[0])
			why = "no metrics were asked for";
		gt_jb_puts(b, ",\"metrics\":null,\"metrics_error\":");
		gt_jb_str(b, why, strlen(why));
	}
#else
	gt_jb_puts(b, ",\"metrics\":null,\"metrics_error\":\"this libgputap.so has no range-metrics engine\"");
#endif
	gt_jb_puts(b, "}\n");
}

GT_EXPORT long gputap_results_json(char *buf, unsigned long cap)
{
	struct gt_jbuf b = {0};
	int saved = gt_tls.guard;
	gt_tls.guard++;
	results(&b);
	gt_tls.guard = saved;
	if (b.failed || !b.p) {
		free(b.p);
		gt_api_set_error("out of memory building the results");
		return GPUTAP_EFAIL;
	}
	if (buf && cap) {
		size_t n = b.len < cap ? b.len : cap - 1;
		memcpy(buf, b.p, n);
		buf[n] = '\0';
	}
	long len = (long)b.len;
	free(b.p);
	return len;
}
