/*
 * What the replays share (libperf/libperf.h): loading a library of the CUDA
 * stack (gt_libperf_open_lib) and timing a run on the GPU through the CUDA
 * driver table (gt_libperf_time and what says how it timed).  A file of its
 * own so that the GEMM, cuDNN and NCCL replays depend on it and not on each
 * other or on gt_libperf_run's file.
 */
#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sort.h"
#include "libperf/libperf.h"
#include "libperf/libperf_kact.h"

#ifndef GT_CUDA_HOME
#define GT_CUDA_HOME "/usr/local/cuda"
#endif

static void *try_open(const char *path, char *why, size_t whylen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h && why[0] == 0) {
		const char *e = dlerror();
		snprintf(why, whylen, "%s", e ? e : path);
	}
	return h;
}

/* First file matching the glob `pat` that dlopen accepts. */
static void *try_glob(const char *pat, char *why, size_t whylen)
{
	glob_t g;
	void *h = NULL;
	if (glob(pat, 0, NULL, &g) != 0)
		return NULL;
	for (size_t i = 0; i < g.gl_pathc && !h; i++)
		h = try_open(g.gl_pathv[i], why, whylen);
	globfree(&g);
	return h;
}

void *gt_libperf_open_lib(const char *soname, const char *env, char *why, size_t whylen)
{
	const char *ev = getenv(env);
	why[0] = 0;
	if (ev && *ev) {
		void *h = try_open(ev, why, whylen);
		if (!h)
			snprintf(why, whylen, "%s=%s cannot be loaded", env, ev);
		return h;
	}
	void *h = try_open(soname, why, whylen);
	if (h)
		return h;
	char pat[1024];
	const char *home = getenv("CUDA_HOME");
	const char *roots[] = {home, GT_CUDA_HOME, "/usr/local/cuda"};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !h; i++) {
		if (!roots[i] || !*roots[i])
			continue;
		snprintf(pat, sizeof(pat), "%s/lib64/%s", roots[i], soname);
		if (!(h = try_open(pat, why, whylen))) {
			snprintf(pat, sizeof(pat), "%s/lib/%s", roots[i], soname);
			h = try_open(pat, why, whylen);
		}
	}
	static const char *const fixed[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib",
					    "/usr/local/nccl/lib"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && !h; i++) {
		snprintf(pat, sizeof(pat), "%s/%s", fixed[i], soname);
		h = try_open(pat, why, whylen);
	}
	/* the nvidia-* wheels: <site-packages>/nvidia/nccl/lib, nvidia/cudnn/lib (nvidia/cu13/lib in newer layouts) */
	const char *pre[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"), getenv("HOME")};
	const char *pre_dir[] = {"", "", "/.local"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]) && !h; i++) {
		if (!pre[i] || !*pre[i])
			continue;
		snprintf(pat, sizeof(pat), "%s%s/lib/python3*/site-packages/nvidia/*/lib/%s", pre[i], pre_dir[i],
			 soname);
		h = try_glob(pat, why, whylen);
	}
	static const char *const sys[] = {"/usr/local/lib/python3*/dist-packages/nvidia/*/lib/",
					  "/usr/local/lib/python3*/site-packages/nvidia/*/lib/",
					  "/usr/lib/python3/dist-packages/nvidia/*/lib/",
					  "/usr/lib/python3*/site-packages/nvidia/*/lib/",
					  "/opt/conda/lib/python3*/site-packages/nvidia/*/lib/"};
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]) && !h; i++) {
		snprintf(pat, sizeof(pat), "%s%s", sys[i], soname);
		h = try_glob(pat, why, whylen);
	}
	return h;
}

/* The gate's word: pinned host memory mapped for the GPU (portable: every context), made once. */
static volatile uint32_t *gate_word(const struct gt_cu_api *c, cu_ptr *dev)
{
	static void *mem;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	if (!c->host_alloc || !c->host_dev_ptr || !c->wait_value32)
		return NULL;
	pthread_mutex_lock(&mu);
	if (!mem && c->host_alloc(&mem, 64, 0x01 | 0x02 /* PORTABLE | DEVICEMAP */) != 0)
		mem = NULL;
	pthread_mutex_unlock(&mu);
	if (!mem || c->host_dev_ptr(dev, mem, 0) != 0)
		return NULL;
	return mem;
}

struct gate_watch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, fired;
	volatile uint32_t *word;
};

static void *gate_watch_main(void *arg)
{
	struct gate_watch *w = arg;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)GT_LIBPERF_GATE_S;
	dl.tv_nsec += (long)((GT_LIBPERF_GATE_S - (double)(time_t)GT_LIBPERF_GATE_S) * 1e9);
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (!w->done) {
		if (pthread_cond_timedwait(&w->cv, &w->mu, &dl) != 0 && !w->done) {
			__atomic_store_n(w->word, 1u, __ATOMIC_SEQ_CST); /* queueing stalled: let the GPU go */
			w->fired = 1;
			break;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static __thread struct gt_libperf_timing last = {0, GT_TIMED_EVENTS, 0, -1};

int gt_libperf_last_gated(void)
{
	return last.gated;
}

const struct gt_libperf_timing *gt_libperf_last(void)
{
	return &last;
}

static const char *const method_names[GT_TIMED_NMETHODS] = {"events", "events_gated", "kernel_activity"};

void gt_libperf_timing_names(unsigned mask, char *buf, size_t len)
{
	buf[0] = 0;
	/* the most faithful first */
	for (int m = GT_TIMED_NMETHODS - 1; m >= 0; m--)
		if (mask & (1u << m)) {
			size_t l = strlen(buf);
			snprintf(buf + l, len - l, "%s%s", l ? "+" : "", method_names[m]);
		}
}

/* The timed runs, queued (each bracketed for kernel activity when `kbase` is not 0); 0, or -1 when
 * a run or an event failed. */
static int queue_runs(const struct gt_cu_api *c, int (*run)(void *arg), void *arg, cu_stream st, cu_event *ev,
		      int iters, uint64_t kbase)
{
	for (int i = 0; i < iters; i++) {
		/* the previous run's data leaves the L2 cache (not timed: before the start event) */
		if (c->l2_flush && c->memset8_async && c->memset8_async(c->l2_flush, 0, c->l2_flush_bytes, st) != 0)
			return -1;
		if (c->event_record(ev[2 * i], st) != 0)
			return -1;
		int pushed = kbase && gt_kact_push(kbase + (uint64_t)i) == 0;
		int rc = run(arg);
		if (pushed)
			gt_kact_pop();
		if (rc != 0 || c->event_record(ev[2 * i + 1], st) != 0)
			return -1;
	}
	return 0;
}

/* The median of the runs' event times, in microseconds; -1 when an event cannot be read. */
static double elapsed_median(const struct gt_cu_api *c, const cu_event *ev, float *ms, int iters)
{
	for (int i = 0; i < iters; i++)
		if (c->event_elapsed(&ms[i], ev[2 * i], ev[2 * i + 1]) != 0)
			return -1;
	gt_sort(ms, (size_t)iters, sizeof(*ms), gt_cmp_float);
	double med = iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]);
	return med * 1000.0;
}

/* The runs were queued and the stream synchronised: the event median, and the kernels' when their
 * records came (`last` says which was returned). */
static double finish(const struct gt_cu_api *c, const cu_event *ev, float *ms, int iters, uint64_t kbase)
{
	last.event_us = elapsed_median(c, ev, ms, iters);
	last.method = last.gated == 1 ? GT_TIMED_EVENTS_GATED : GT_TIMED_EVENTS;
	last.ops = 0;
	double us;
	int ops;
	char why[160];
	if (kbase && gt_kact_close(kbase, iters, &us, &ops, why, sizeof(why)) == 0) {
		last.method = GT_TIMED_KERNELS;
		last.ops = ops;
		return us;
	}
	return last.event_us;
}

/* Without the gate: each run between its events as the host issues them. */
static double plain_time(const struct gt_cu_api *c, int (*run)(void *arg), void *arg, cu_stream st, cu_event *ev,
			 float *ms, int iters)
{
	uint64_t kbase = gt_kact_on() ? gt_kact_open(iters) : 0;
	if (queue_runs(c, run, arg, st, ev, iters, kbase) != 0) {
		c->stream_sync(st);
		return -1;
	}
	if (c->stream_sync(st) != 0)
		return -1;
	return finish(c, ev, ms, iters, kbase);
}

double gt_libperf_time(const struct gt_cu_api *c, int (*run)(void *arg), void *arg, cu_stream st, cu_event *ev,
		       float *ms, int iters, int warmup)
{
	for (int i = 0; i < warmup; i++)
		if (run(arg) != 0)
			return -1;
	last.gated = 0;
	last.method = GT_TIMED_EVENTS;
	last.ops = 0;
	last.event_us = -1;
	cu_ptr dev = 0;
	volatile uint32_t *word = gate_word(c, &dev);
	if (!word || c->stream_sync(st) != 0)
		return plain_time(c, run, arg, st, ev, ms, iters);
	__atomic_store_n(word, 0u, __ATOMIC_SEQ_CST);
	if (c->wait_value32(st, dev, 1, 0 /* CU_STREAM_WAIT_VALUE_GEQ */) != 0)
		return plain_time(c, run, arg, st, ev, ms, iters);
	struct gate_watch w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, word};
	pthread_t th;
	int watched = pthread_create(&th, NULL, gate_watch_main, &w) == 0;
	uint64_t kbase = gt_kact_on() ? gt_kact_open(iters) : 0;
	int rc = queue_runs(c, run, arg, st, ev, iters, kbase);
	__atomic_store_n(word, 1u, __ATOMIC_SEQ_CST); /* open: everything is queued */
	if (watched) {
		pthread_mutex_lock(&w.mu);
		w.done = 1;
		pthread_cond_signal(&w.cv);
		pthread_mutex_unlock(&w.mu);
		pthread_join(th, NULL);
	}
	if (c->stream_sync(st) != 0 || rc != 0)
		return -1;
	if (!watched || w.fired) {
		last.gated = -1;
		return plain_time(c, run, arg, st, ev, ms, iters);
	}
	last.gated = 1;
	return finish(c, ev, ms, iters, kbase);
}

void gt_libperf_note_timing(unsigned *mask, int *ops, double *event_us, int recorded)
{
	*mask |= 1u << last.method;
	if (recorded) {
		*ops = last.ops;
		*event_us = last.event_us;
	}
}
