/* libperf_kact.c — timing replayed library calls by their GPU kernels with
 * CUPTI's activity API.  See libperf_kact.h. */
#include "libperf/libperf_kact.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/containers.h"
#include "core/sort.h"
#include "gpu/probe.h"

#define BUF_BYTES (1u << 20)
/* records kept per window: far above what a window of timed runs writes */
#define MAX_KEPT (1u << 20)
#define EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

struct ext_rec {
	uint32_t corr;
	uint32_t run;
};
struct gpu_rec {
	uint32_t corr;
	uint64_t ns;
};

static struct {
	struct gt_kact_api api;
	int on;
	CUpti_SubscriberHandle sub;
	pthread_mutex_t mu;
	/* the open window (under mu) */
	int open;
	uint64_t base, next_id;
	int runs;
	struct gt_vec ext; /* struct ext_rec */
	struct gt_vec gpu; /* struct gpu_rec */
	int overflow;
	size_t dropped;
	int failures;
	char last_why[160];
} S = {.mu = PTHREAD_MUTEX_INITIALIZER,
	 .next_id = 1,
	 .ext = {.elsize = sizeof(struct ext_rec)},
	 .gpu = {.elsize = sizeof(struct gpu_rec)}};

/* A new element of `a`, or NULL (counted as an overflow) past MAX_KEPT or out of memory. */
static void *keep(struct gt_vec *a)
{
	void *e = a->n < MAX_KEPT ? gt_vec_push(a) : NULL;
	if (!e)
		S.overflow = 1;
	return e;
}

static const char *res_str(CUptiResult r)
{
	const char *s = NULL;
	if (S.api.cuptiGetResultString && S.api.cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "CUPTI error";
}

int gt_kact_load(struct gt_kact_api *api, char *path, size_t pathlen, char *why, size_t whylen)
{
	memset(api, 0, sizeof(*api));
	void *lib = gt_cupti_open(path, pathlen);
	if (!lib) {
		snprintf(why, whylen, "CUPTI (libcupti.so.13 or .12) not found; set GPUTAP_CUPTI_LIB or CUDA_HOME");
		return -1;
	}
	const char *missing = NULL;
#define GT_KACT_LOAD(n)                                                                            \
	*(void **)&api->n = dlsym(lib, #n);                                                        \
	if (!api->n && !missing)                                                                   \
		missing = #n;
	GT_KACT_FNS(GT_KACT_LOAD)
#undef GT_KACT_LOAD
	if (missing) {
		snprintf(why, whylen, "the CUPTI library %s has no %s", path && pathlen ? path : "found", missing);
		memset(api, 0, sizeof(*api));
		dlclose(lib);
		return -1;
	}
	return 0;
}

static void CUPTIAPI on_request(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_BYTES);
	*size = *buf ? BUF_BYTES : 0;
	*max_records = 0;
}

static void keep_ext(const CUpti_ActivityExternalCorrelation *e)
{
	if (e->externalKind != EXT_KIND || e->externalId < S.base || e->externalId >= S.base + (uint64_t)S.runs)
		return;
	struct ext_rec *r = keep(&S.ext);
	if (r)
		*r = (struct ext_rec){e->correlationId, (uint32_t)(e->externalId - S.base)};
}

static void keep_gpu(uint32_t corr, uint64_t start, uint64_t end)
{
	struct gpu_rec *r = keep(&S.gpu);
	if (r)
		*r = (struct gpu_rec){corr, end > start ? end - start : 0};
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *a = NULL;
	pthread_mutex_lock(&S.mu);
	while (valid > 0 && S.api.cuptiActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS) {
		if (!S.open)
			continue;
		switch (a->kind) {
		case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
			keep_ext((const void *)a);
			break;
		case CUPTI_ACTIVITY_KIND_KERNEL:
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
			/* start, end and correlationId sit at the same offsets in Kernel9 (CUDA 12) and 10 */
			const CUpti_ActivityKernel10 *k = (const void *)a;
			keep_gpu(k->correlationId, k->start, k->end);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMSET: {
			const CUpti_ActivityMemset4 *m = (const void *)a;
			keep_gpu(m->correlationId, m->start, m->end);
			break;
		}
		case CUPTI_ACTIVITY_KIND_MEMCPY: {
			const CUpti_ActivityMemcpy6 *m = (const void *)a;
			keep_gpu(m->correlationId, m->start, m->end);
			break;
		}
		default:
			break;
		}
	}
	size_t dropped = 0;
	if (S.open && S.api.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		S.dropped += dropped;
	pthread_mutex_unlock(&S.mu);
	free(buf);
}

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data)
{
	(void)user, (void)dom, (void)id, (void)data; /* subscribed only to hold CUPTI: no callback is enabled */
}

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET,  CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

int gt_kact_start(const struct gt_kact_api *api, char *why, size_t whylen)
{
	if (S.on)
		return 0;
	S.api = *api;
	CUptiResult r = S.api.cuptiSubscribe(&S.sub, (CUpti_CallbackFunc)on_callback, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		snprintf(why, whylen, "CUPTI is held by another client in this process (a profiler such as nsys, ncu, "
				      "or gputap run's own recording)");
		return -1;
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(why, whylen, "cuptiSubscribe failed: %s", res_str(r));
		return -1;
	}
	size_t on = 0;
	const char *what = "cuptiActivityRegisterCallbacks";
	r = S.api.cuptiActivityRegisterCallbacks(on_request, on_complete);
	if (r == CUPTI_SUCCESS) {
		what = "cuptiActivityEnable";
		for (; on < NKINDS; on++) {
			r = S.api.cuptiActivityEnable(kinds[on]);
			/* without runtime API records the driver's still carry every launch's correlation id */
			if (r != CUPTI_SUCCESS && kinds[on] != CUPTI_ACTIVITY_KIND_RUNTIME)
				break;
			r = CUPTI_SUCCESS;
		}
	}
	if (r != CUPTI_SUCCESS) {
		snprintf(why, whylen, "%s failed: %s", what, res_str(r));
		while (on > 0)
			S.api.cuptiActivityDisable(kinds[--on]);
		S.api.cuptiUnsubscribe(S.sub);
		return -1;
	}
	S.on = 1;
	return 0;
}

int gt_kact_on(void)
{
	return S.on;
}

void gt_kact_stop(void)
{
	if (!S.on)
		return;
	S.api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	for (size_t i = 0; i < NKINDS; i++)
		S.api.cuptiActivityDisable(kinds[i]);
	S.api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	S.api.cuptiUnsubscribe(S.sub);
	S.on = 0;
	pthread_mutex_lock(&S.mu);
	gt_vec_free(&S.ext);
	gt_vec_free(&S.gpu);
	pthread_mutex_unlock(&S.mu);
}

uint64_t gt_kact_open(int runs)
{
	pthread_mutex_lock(&S.mu);
	S.base = S.next_id;
	S.next_id += (uint64_t)(runs > 0 ? runs : 0);
	S.runs = runs;
	S.ext.n = S.gpu.n = 0; /* the space is kept for the next window */
	S.overflow = 0;
	S.dropped = 0;
	S.open = 1;
	uint64_t b = S.base;
	pthread_mutex_unlock(&S.mu);
	return b;
}

int gt_kact_push(uint64_t id)
{
	return S.api.cuptiActivityPushExternalCorrelationId(EXT_KIND, id) == CUPTI_SUCCESS ? 0 : -1;
}

void gt_kact_pop(void)
{
	uint64_t id = 0;
	S.api.cuptiActivityPopExternalCorrelationId(EXT_KIND, &id);
}

static int cmp_ext(const void *a, const void *b)
{
	uint32_t x = ((const struct ext_rec *)a)->corr, y = ((const struct ext_rec *)b)->corr;
	return x < y ? -1 : x > y;
}

/* Add every kept GPU record to its run; the index of the first run without one, or -1. */
static int attribute(int runs, double *us, int *ops)
{
	gt_sort(S.ext.v, S.ext.n, sizeof(struct ext_rec), cmp_ext);
	for (size_t i = 0; i < S.gpu.n; i++) {
		const struct gpu_rec *g = &GT_VEC_AT(&S.gpu, struct gpu_rec, i);
		struct ext_rec key = {g->corr, 0};
		const struct ext_rec *e = S.ext.n ? bsearch(&key, S.ext.v, S.ext.n, sizeof(key), cmp_ext) : NULL;
		if (!e || (int)e->run >= runs)
			continue;
		us[e->run] += (double)g->ns / 1e3;
		ops[e->run]++;
	}
	for (int i = 0; i < runs; i++)
		if (ops[i] == 0)
			return i;
	return -1;
}

/* The window gives no time: `why` (already written) is kept as the last reason. */
static int fail(const char *why)
{
	S.failures++;
	snprintf(S.last_why, sizeof(S.last_why), "%s", why);
	pthread_mutex_lock(&S.mu);
	S.open = 0;
	pthread_mutex_unlock(&S.mu);
	return -1;
}

int gt_kact_close(uint64_t base, int runs, double *median_us, int *median_ops, char *why, size_t whylen)
{
	if (!S.on || runs <= 0 || base != S.base) {
		snprintf(why, whylen, "no kernel-activity window open");
		return fail(why);
	}
	double *us = calloc((size_t)runs, sizeof(*us));
	int *ops = calloc((size_t)runs, sizeof(*ops));
	if (!us || !ops) {
		free(us);
		free(ops);
		snprintf(why, whylen, "out of memory");
		return fail(why);
	}
	int missing = -1;
	/* records of kernels that ended just before the flush can come with a later buffer */
	for (int attempt = 0; attempt < 3; attempt++) {
		if (attempt) {
			struct timespec d = {0, 2000000};
			nanosleep(&d, NULL);
		}
		CUptiResult r = S.api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		if (r != CUPTI_SUCCESS) {
			free(us);
			free(ops);
			snprintf(why, whylen, "cuptiActivityFlushAll failed: %s", res_str(r));
			return fail(why);
		}
		pthread_mutex_lock(&S.mu);
		memset(us, 0, (size_t)runs * sizeof(*us));
		memset(ops, 0, (size_t)runs * sizeof(*ops));
		missing = attribute(runs, us, ops);
		int lost = S.overflow || S.dropped;
		pthread_mutex_unlock(&S.mu);
		if (lost) {
			free(us);
			free(ops);
			snprintf(why, whylen, "CUPTI dropped activity records");
			return fail(why);
		}
		if (missing < 0)
			break;
	}
	if (missing >= 0) {
		free(us);
		free(ops);
		snprintf(why, whylen, "no GPU activity record came for timed run %d", missing + 1);
		return fail(why);
	}
	pthread_mutex_lock(&S.mu);
	S.open = 0;
	pthread_mutex_unlock(&S.mu);
	gt_sort(us, (size_t)runs, sizeof(*us), gt_cmp_double);
	gt_sort(ops, (size_t)runs, sizeof(*ops), gt_cmp_int);
	*median_us = runs % 2 ? us[runs / 2] : 0.5 * (us[runs / 2 - 1] + us[runs / 2]);
	*median_ops = ops[runs / 2];
	free(us);
	free(ops);
	return 0;
}

int gt_kact_failures(const char **last_why)
{
	if (last_why)
		*last_why = S.last_why;
	return S.failures;
}
