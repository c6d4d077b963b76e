/*
 * Launch hold: the queue, the copy of each launch, the checks made at queue
 * time, the release and the timer.  See hold.h for the contract and
 * docs/hold.md for the rules in prose.
 */
#include "tap/hold.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "core/log.h"

#define FN_CAP 4096u /* function cache entries (power of two) */
#define PAIRS_CAP (64u * 1024u)
#define DEV_CAP 64u

enum { K_UNKNOWN = 0, K_FUNC = 1, K_KERNEL = 2, K_BAD = 3 };
enum { L_UNKNOWN = 0, L_KNOWN = 1, L_NONE = 2 };

struct gt_hold_fn {
	CUfunction f; /* key; NULL = empty slot */
	CUdevice dev; /* key */
	unsigned attr_gen;
	uint8_t kind, layout, name_state; /* name_state: 0 unknown, 1 selected, 2 not selected */
	uint32_t nparams, argbytes;
	size_t pairs;
	int max_threads, max_dyn_smem;
};

struct gt_hold_dev {
	int valid;
	int grid[3], block[3], threads, sms, coop;
};

/* ---- clocks, locks ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static uint64_t def_now(void)
{
	return clock_ns(CLOCK_REALTIME);
}
static uint64_t def_mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int self_owns(struct gt_hold *h)
{
	return atomic_load_explicit(&h->owned, memory_order_acquire) && pthread_equal(h->owner, pthread_self());
}

static void lock(struct gt_hold *h)
{
	pthread_mutex_lock(&h->mu);
	h->owner = pthread_self();
	atomic_store_explicit(&h->owned, 1, memory_order_release);
}

static void unlock(struct gt_hold *h)
{
	atomic_store_explicit(&h->owned, 0, memory_order_release);
	pthread_mutex_unlock(&h->mu);
}

/* ---- release ---- */

static CUresult issue(const struct gt_hold_entry *e)
{
	switch (e->form) {
	case GT_HOLD_KERNEL_EX:
		return ((gt_hold_pfn_ex)e->real)(&e->cfg, e->f, e->params, e->extra);
	case GT_HOLD_COOP:
		return ((gt_hold_pfn_coop)e->real)(e->f, e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1],
						    e->block[2], e->smem, e->stream, e->params);
	default:
		return ((gt_hold_pfn_kernel)e->real)(e->f, e->grid[0], e->grid[1], e->grid[2], e->block[0],
						      e->block[1], e->block[2], e->smem, e->stream, e->params, e->extra);
	}
}

static const char *kernel_name(struct gt_hold *h, CUfunction f)
{
	const char *name = NULL;
	if (h->drv.func_get_name && h->drv.func_get_name(&name, f) == CUDA_SUCCESS && name)
		return name;
	name = NULL;
	if (h->drv.kernel_get_name && h->drv.kernel_get_name(&name, (CUkernel)f) == CUDA_SUCCESS && name)
		return name;
	return "?";
}

static uint64_t take_corr(struct gt_hold *h)
{
	return h->cb.take_corr ? h->cb.take_corr() : 0;
}

/* Issue everything queued, oldest first. Called with the lock held. */
static void release_locked(struct gt_hold *h, enum gt_hold_reason why, uint32_t name_id)
{
	uint32_t n = h->n;
	if (!n)
		return;
	uint64_t start = h->cb.now_ns();
	uint64_t batch = ++h->batch;
	CUcontext cur = NULL, pushed = NULL;
	int did_push = 0;
	if (h->drv.ctx_get_current(&cur) != CUDA_SUCCESS)
		cur = NULL;
	CUresult first = CUDA_SUCCESS;
	for (uint32_t i = 0; i < n; i++) {
		struct gt_hold_entry *e = &h->q[i];
		CUresult r = CUDA_SUCCESS;
		CUcontext in_effect = did_push ? pushed : cur;
		if (e->ctx != in_effect) {
			if (did_push) {
				CUcontext dummy;
				h->drv.ctx_pop(&dummy);
				did_push = 0;
			}
			if (e->ctx != cur) {
				r = h->drv.ctx_push(e->ctx);
				if (r == CUDA_SUCCESS) {
					pushed = e->ctx;
					did_push = 1;
				}
			}
		}
		uint64_t corr = 0;
		if (r == CUDA_SUCCESS) {
			take_corr(h);
			r = issue(e);
			corr = take_corr(h);
		}
		if (h->cb.released)
			h->cb.released(e, r, corr, batch, h->cb.now_ns());
		if (r != CUDA_SUCCESS) {
			atomic_fetch_add(&h->st.failed, 1);
			if (first == CUDA_SUCCESS) {
				first = r;
				if (h->cb.failed)
					h->cb.failed(e, r, kernel_name(h, e->f));
			}
		}
	}
	if (did_push) {
		CUcontext dummy;
		h->drv.ctx_pop(&dummy);
	}
	h->n = 0;
	h->arena_used = 0;
	atomic_store_explicit(&h->nq, 0, memory_order_release);
	atomic_fetch_add(&h->st.released, n);
	atomic_fetch_add(&h->st.batches, 1);
	atomic_fetch_add(&h->st.releases[why], 1);
	if (n > atomic_load(&h->st.max_batch))
		atomic_store(&h->st.max_batch, n);
	if (first != CUDA_SUCCESS) {
		int expect = 0;
		atomic_compare_exchange_strong(&h->pending, &expect, (int)first);
	}
	if (h->cb.batch)
		h->cb.batch(why, name_id, n, start, h->cb.now_ns(), first, batch);
}

void gt_hold_release(struct gt_hold *h, enum gt_hold_reason why, uint32_t name_id)
{
	if (!atomic_load_explicit(&h->nq, memory_order_acquire) || self_owns(h))
		return;
	lock(h);
	release_locked(h, why, name_id);
	unlock(h);
}

static void invalidate_locked(struct gt_hold *h, enum gt_hold_reason why)
{
	if (why == GT_HOLD_STATE) {
		h->attr_gen++;
		return;
	}
	/* handles may be reused after an unload or a context's end */
	memset(h->fns, 0, sizeof(*h->fns) * h->nfns_cap);
	h->pairs_used = 0;
	h->attr_gen++;
	if (why == GT_HOLD_CONTEXT) {
		h->nctxdev = 0;
		memset(h->devs, 0, sizeof(*h->devs) * DEV_CAP);
	}
}

int gt_hold_reason_invalidates(enum gt_hold_reason r)
{
	return r == GT_HOLD_UNLOAD || r == GT_HOLD_CONTEXT || r == GT_HOLD_STATE;
}

void gt_hold_before(struct gt_hold *h, enum gt_hold_reason why, uint32_t name_id)
{
	if (why == GT_HOLD_PASS || self_owns(h))
		return;
	if (gt_hold_reason_invalidates(why)) {
		if (!atomic_load_explicit(&h->on, memory_order_acquire))
			return;
		lock(h);
		release_locked(h, why, name_id);
		invalidate_locked(h, why);
		unlock(h);
		return;
	}
	gt_hold_release(h, why, name_id);
}

/* ---- the timer ---- */

int gt_hold_tick(struct gt_hold *h, uint64_t mono)
{
	int done = 0;
	lock(h);
	if (h->n && mono >= h->q[0].mono_ns + (uint64_t)h->cfg.timeout_us * 1000u) {
		release_locked(h, GT_HOLD_TIMER, 0);
		done = 1;
	}
	unlock(h);
	return done;
}

static void *timer_main(void *arg)
{
	struct gt_hold *h = arg;
	lock(h);
	while (!h->timer_stop) {
		if (h->n == 0) {
			h->timer_idle = 1;
			atomic_store_explicit(&h->owned, 0, memory_order_release);
			pthread_cond_wait(&h->cv, &h->mu);
			h->owner = pthread_self();
			atomic_store_explicit(&h->owned, 1, memory_order_release);
			h->timer_idle = 0;
			continue;
		}
		uint64_t deadline = h->q[0].mono_ns + (uint64_t)h->cfg.timeout_us * 1000u;
		uint64_t now = h->cb.mono_ns();
		if (now >= deadline) {
			release_locked(h, GT_HOLD_TIMER, 0);
			continue;
		}
		struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
		atomic_store_explicit(&h->owned, 0, memory_order_release);
		pthread_cond_timedwait(&h->cv, &h->mu, &ts);
		h->owner = pthread_self();
		atomic_store_explicit(&h->owned, 1, memory_order_release);
	}
	unlock(h);
	return NULL;
}

/* ---- caches: devices, functions ---- */

static int ctx_device(struct gt_hold *h, CUcontext ctx, CUdevice *dev)
{
	for (unsigned i = 0; i < h->nctxdev; i++)
		if (h->ctxdev[i].ctx == ctx) {
			*dev = h->ctxdev[i].dev;
			return 0;
		}
	if (!h->drv.ctx_get_device || h->drv.ctx_get_device(dev) != CUDA_SUCCESS)
		return -1;
	unsigned slot = h->nctxdev < 16 ? h->nctxdev++ : (unsigned)(h->seq % 16);
	h->ctxdev[slot].ctx = ctx;
	h->ctxdev[slot].dev = *dev;
	return 0;
}

static const struct gt_hold_dev *dev_limits(struct gt_hold *h, CUdevice dev)
{
	if (dev < 0 || (unsigned)dev >= DEV_CAP || !h->drv.device_get_attribute)
		return NULL;
	struct gt_hold_dev *d = &h->devs[dev];
	if (d->valid)
		return d;
	static const CUdevice_attribute a[] = {
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
		CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
		CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH};
	int *dst[] = {&d->grid[0], &d->grid[1], &d->grid[2], &d->block[0], &d->block[1],
		      &d->block[2], &d->threads, &d->sms, &d->coop};
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		if (h->drv.device_get_attribute(dst[i], a[i], dev) != CUDA_SUCCESS)
			return NULL;
	d->valid = 1;
	return d;
}

static int fn_attr(struct gt_hold *h, const struct gt_hold_fn *fn, CUfunction_attribute a, int *v)
{
	if (fn->kind == K_FUNC)
		return h->drv.func_get_attribute && h->drv.func_get_attribute(v, a, fn->f) == CUDA_SUCCESS ? 0 : -1;
	return h->drv.kernel_get_attribute && h->drv.kernel_get_attribute(v, a, (CUkernel)fn->f, fn->dev) == CUDA_SUCCESS
		       ? 0
		       : -1;
}

/* Which handle kind `f` is: a CUfunction answers cuFuncGetAttribute, a
 * CUkernel (the runtime's handles since CUDA 12) cuKernelGetAttribute. */
static void fn_kind(struct gt_hold *h, struct gt_hold_fn *fn)
{
	int v;
	fn->kind = K_FUNC;
	if (fn_attr(h, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &v) == 0)
		return;
	fn->kind = K_KERNEL;
	if (fn_attr(h, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &v) == 0)
		return;
	fn->kind = K_BAD;
}

static int fn_attrs(struct gt_hold *h, struct gt_hold_fn *fn)
{
	if (fn->attr_gen == h->attr_gen)
		return 0;
	if (fn_attr(h, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &fn->max_threads) < 0 ||
	    fn_attr(h, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &fn->max_dyn_smem) < 0)
		return -1;
	fn->attr_gen = h->attr_gen;
	return 0;
}

static CUresult param_info(struct gt_hold *h, const struct gt_hold_fn *fn, size_t i, size_t *off, size_t *size)
{
	if (fn->kind == K_FUNC)
		return h->drv.func_get_param_info ? h->drv.func_get_param_info(fn->f, i, off, size) : CUDA_ERROR_NOT_FOUND;
	return h->drv.kernel_get_param_info ? h->drv.kernel_get_param_info((CUkernel)fn->f, i, off, size)
					    : CUDA_ERROR_NOT_FOUND;
}

/* The parameter layout: count by asking for increasing indices until the
 * driver says the index is out of range (cuFuncGetParamCount is 13.2+). */
static void fn_layout(struct gt_hold *h, struct gt_hold_fn *fn)
{
	fn->layout = L_NONE;
	size_t start = h->pairs_used;
	uint32_t np = 0, bytes = 0;
	for (;;) {
		size_t off = 0, size = 0;
		CUresult r = param_info(h, fn, np, &off, &size);
		if (r == CUDA_ERROR_INVALID_VALUE)
			break;
		if (r != CUDA_SUCCESS || np >= GT_HOLD_MAX_PARAMS || off + size > 65536u || size == 0)
			return;
		if (h->pairs_used + 2 > h->pairs_cap)
			return;
		h->pairs[h->pairs_used++] = (uint32_t)off;
		h->pairs[h->pairs_used++] = (uint32_t)size;
		if (off + size > bytes)
			bytes = (uint32_t)(off + size);
		np++;
	}
	fn->pairs = start;
	fn->nparams = np;
	fn->argbytes = bytes;
	fn->layout = L_KNOWN;
}

static struct gt_hold_fn *fn_get(struct gt_hold *h, CUfunction f, CUdevice dev)
{
	uint64_t k = (uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull ^ (uint64_t)(unsigned)dev;
	uint32_t mask = h->nfns_cap - 1;
	for (uint32_t i = 0; i < h->nfns_cap; i++) {
		struct gt_hold_fn *fn = &h->fns[((uint32_t)(k >> 40) + i) & mask];
		if (fn->f == f && fn->dev == dev)
			return fn;
		if (fn->f == NULL) {
			fn->f = f;
			fn->dev = dev;
			fn->attr_gen = h->attr_gen - 1;
			fn_kind(h, fn);
			return fn;
		}
		if (i > 64)
			break;
	}
	/* crowded: start again (entries are rebuilt on use) */
	invalidate_locked(h, GT_HOLD_UNLOAD);
	struct gt_hold_fn *fn = &h->fns[(uint32_t)(k >> 40) & mask];
	fn->f = f;
	fn->dev = dev;
	fn->attr_gen = h->attr_gen - 1;
	fn_kind(h, fn);
	return fn;
}

int gt_hold_name_matches(const char *list, const char *name)
{
	if (!list || !*list)
		return 1;
	if (!name)
		return 0;
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n) {
			for (const char *s = name; *s; s++)
				if (strncmp(s, p, n) == 0)
					return 1;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* ---- pinned and managed memory ---- */

void gt_hold_add_range(struct gt_hold *h, uint64_t ptr, uint64_t bytes)
{
	if (!h->ranges || !ptr || !bytes)
		return;
	pthread_mutex_lock(&h->range_mu);
	if (h->nranges >= GT_HOLD_HOST_RANGES) {
		h->ranges_lost = 1;
	} else {
		uint32_t i = h->nranges;
		while (i > 0 && h->ranges[i - 1].lo > ptr) {
			h->ranges[i] = h->ranges[i - 1];
			i--;
		}
		h->ranges[i].lo = ptr;
		h->ranges[i].hi = ptr + bytes;
		h->nranges++;
	}
	pthread_mutex_unlock(&h->range_mu);
}

void gt_hold_remove_range(struct gt_hold *h, uint64_t ptr)
{
	if (!h->ranges || !ptr || !h->nranges)
		return;
	pthread_mutex_lock(&h->range_mu);
	for (uint32_t i = 0; i < h->nranges; i++) {
		if (h->ranges[i].lo != ptr)
			continue;
		memmove(&h->ranges[i], &h->ranges[i + 1], (h->nranges - i - 1) * sizeof(h->ranges[0]));
		h->nranges--;
		break;
	}
	pthread_mutex_unlock(&h->range_mu);
}

/* 1 if an 8-byte word of `p` (8-aligned) points into a pinned or managed range (*word: that word) */
static int points_to_host(struct gt_hold *h, const unsigned char *p, size_t len, uint64_t *word)
{
	if (!h->nranges)
		return 0;
	int hit = 0;
	pthread_mutex_lock(&h->range_mu);
	uint64_t lo = h->nranges ? h->ranges[0].lo : 0;
	for (size_t off = 0; off + 8 <= len && !hit && h->nranges; off += 8) {
		uint64_t w;
		memcpy(&w, p + off, 8);
		if (w < lo)
			continue;
		uint32_t a = 0, b = h->nranges;
		while (a < b) { /* last range with lo <= w */
			uint32_t m = (a + b) / 2;
			if (h->ranges[m].lo <= w)
				a = m + 1;
			else
				b = m;
		}
		/* ranges may nest (a registration inside an allocation): look back a little */
		for (uint32_t i = a; i > 0 && a - i < 8; i--)
			if (w < h->ranges[i - 1].hi) {
				hit = 1;
				*word = w;
				break;
			}
	}
	pthread_mutex_unlock(&h->range_mu);
	return hit;
}

/* ---- queueing a launch ---- */

static void *arena_alloc(struct gt_hold *h, size_t n)
{
	n = (n + 15u) & ~(size_t)15u;
	if (h->arena_used + n > h->arena_cap)
		return NULL;
	void *p = h->arena + h->arena_used;
	h->arena_used += n;
	return p;
}

static int attr_ok(const CUlaunchAttribute *a, int *coop, unsigned cluster[3])
{
	switch ((int)a->id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		return 1;
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
		*coop = a->value.cooperative != 0;
		return 1;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
		cluster[0] = a->value.clusterDim.x;
		cluster[1] = a->value.clusterDim.y;
		cluster[2] = a->value.clusterDim.z;
		return 1;
	default:
		/* PROGRAMMATIC_EVENT and LAUNCH_COMPLETION_EVENT record an event at
		 * launch (a query would have to release); DEVICE_UPDATABLE_KERNEL_NODE
		 * writes an output; SYNCHRONIZATION_POLICY is for streams; others are
		 * unknown to this build. */
		return 0;
	}
}

struct plan {
	CUcontext ctx;
	struct gt_hold_fn *fn;
	const struct gt_hold_dev *dev;
	unsigned grid[3], block[3], smem;
	CUstream stream;
	void **params, **extra;
	const CUlaunchAttribute *attrs;
	unsigned nattrs;
	int coop;
	unsigned cluster[3];
	void *xbuf;  /* extra: the packed buffer and its size */
	size_t xsize;
};

/* Checks that need no lock: the refusal, or -1 to go on. */
static int early(struct gt_hold *h, const struct gt_hold_call *c, struct plan *p)
{
	if (c->nested)
		return GT_HOLD_NO_NESTED;
	if (c->by_name)
		return GT_HOLD_NO_BY_NAME;
	memset(p, 0, sizeof(*p));
	if (c->form == GT_HOLD_KERNEL_EX) {
		const CUlaunchConfig *cf = c->cfg;
		if (!cf || (cf->numAttrs && !cf->attrs) || cf->numAttrs > GT_HOLD_MAX_ATTRS)
			return GT_HOLD_NO_CHECK;
		p->grid[0] = cf->gridDimX;
		p->grid[1] = cf->gridDimY;
		p->grid[2] = cf->gridDimZ;
		p->block[0] = cf->blockDimX;
		p->block[1] = cf->blockDimY;
		p->block[2] = cf->blockDimZ;
		p->smem = cf->sharedMemBytes;
		p->stream = cf->hStream;
		p->attrs = cf->attrs;
		p->nattrs = cf->numAttrs;
		for (unsigned i = 0; i < p->nattrs; i++)
			if (!attr_ok(&cf->attrs[i], &p->coop, p->cluster))
				return GT_HOLD_NO_ATTRIBUTE;
	} else {
		memcpy(p->grid, c->grid, sizeof(p->grid));
		memcpy(p->block, c->block, sizeof(p->block));
		p->smem = c->smem;
		p->stream = c->stream;
		p->coop = c->form == GT_HOLD_COOP;
	}
	if (p->stream == CU_STREAM_PER_THREAD || (c->per_thread && p->stream == NULL))
		return GT_HOLD_NO_PER_THREAD;
	p->params = c->params;
	p->extra = c->form == GT_HOLD_COOP ? NULL : c->extra;
	if (p->params && p->extra)
		return GT_HOLD_NO_ARGS;
	if (p->extra) {
		void *bp = NULL;
		const size_t *bs = NULL;
		int end = 0;
		for (int i = 0; i < 32 && !end; i += 2) {
			void *key = p->extra[i];
			if (key == CU_LAUNCH_PARAM_END)
				end = 1;
			else if (key == CU_LAUNCH_PARAM_BUFFER_POINTER)
				bp = p->extra[i + 1];
			else if (key == CU_LAUNCH_PARAM_BUFFER_SIZE)
				bs = p->extra[i + 1];
			else
				return GT_HOLD_NO_ARGS; /* a key this build does not know */
		}
		if (!end || !bp || !bs || *bs == 0)
			return GT_HOLD_NO_ARGS;
		if (*bs > 65536u)
			return GT_HOLD_NO_SIZE;
		p->xbuf = bp;
		p->xsize = *bs;
	}
	if (!h->drv.ctx_get_current || h->drv.ctx_get_current(&p->ctx) != CUDA_SUCCESS || !p->ctx)
		return GT_HOLD_NO_CHECK;
	/* During a capture the launch belongs to a graph (or breaks it): never held.
	 * The legacy stream reports an error while any blocking stream captures. */
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	if (!h->drv.stream_is_capturing || h->drv.stream_is_capturing(p->stream, &cs) != CUDA_SUCCESS ||
	    cs != CU_STREAM_CAPTURE_STATUS_NONE)
		return GT_HOLD_NO_CAPTURE;
	return -1;
}

/* Checks against the device and function limits (the lock held). */
static int check(struct gt_hold *h, const struct gt_hold_call *c, struct plan *p)
{
	CUdevice dev;
	if (ctx_device(h, p->ctx, &dev) < 0 || !(p->dev = dev_limits(h, dev)))
		return GT_HOLD_NO_CHECK;
	struct gt_hold_fn *fn = fn_get(h, c->f, dev);
	p->fn = fn;
	if (fn->kind == K_BAD || fn_attrs(h, fn) < 0)
		return GT_HOLD_NO_CHECK;
	if (h->kernels[0]) {
		if (!fn->name_state)
			fn->name_state = gt_hold_name_matches(h->kernels, kernel_name(h, c->f)) ? 1 : 2;
		if (fn->name_state == 2)
			return GT_HOLD_NO_FILTER;
	}
	uint64_t threads = 1, blocks = 1;
	for (int i = 0; i < 3; i++) {
		if (p->grid[i] < 1 || p->grid[i] > (unsigned)p->dev->grid[i] || p->block[i] < 1 ||
		    p->block[i] > (unsigned)p->dev->block[i])
			return GT_HOLD_NO_CHECK;
		threads *= p->block[i];
		blocks *= p->grid[i];
	}
	if (threads > (uint64_t)p->dev->threads || threads > (uint64_t)fn->max_threads ||
	    p->smem > (unsigned)fn->max_dyn_smem)
		return GT_HOLD_NO_CHECK;
	if (p->cluster[0] || p->cluster[1] || p->cluster[2]) {
		uint64_t cl = 1;
		for (int i = 0; i < 3; i++) {
			if (p->cluster[i] < 1 || p->grid[i] % p->cluster[i])
				return GT_HOLD_NO_CHECK;
			cl *= p->cluster[i];
		}
		if (cl > 8) /* the portable cluster size; larger ones depend on function attributes */
			return GT_HOLD_NO_CHECK;
	}
	if (p->coop) {
		CUfunction func = c->f;
		int per_sm = 0;
		if (!p->dev->coop || !h->drv.occupancy ||
		    (fn->kind == K_KERNEL &&
		     (!h->drv.kernel_get_function || h->drv.kernel_get_function(&func, (CUkernel)c->f) != CUDA_SUCCESS)) ||
		    h->drv.occupancy(&per_sm, func, (int)threads, p->smem) != CUDA_SUCCESS)
			return GT_HOLD_NO_CHECK;
		if (blocks > (uint64_t)per_sm * (uint64_t)p->dev->sms)
			return GT_HOLD_NO_COOPERATIVE;
	}
	if (fn->layout == L_UNKNOWN)
		fn_layout(h, fn);
	if (fn->layout != L_KNOWN)
		return GT_HOLD_NO_LAYOUT;
	if (p->extra) {
		/* the driver refuses a packed buffer of another size (LAUNCH_OUT_OF_RESOURCES) */
		if (p->xsize != fn->argbytes)
			return GT_HOLD_NO_CHECK;
	} else {
		if (fn->nparams && !p->params)
			return GT_HOLD_NO_ARGS;
		for (uint32_t i = 0; i < fn->nparams; i++)
			if (!p->params[i])
				return GT_HOLD_NO_ARGS;
	}
	return -1;
}

/* Copy what the driver will read into the arena and fill the next entry
 * (*out), or return a refusal. */
static int copy_in(struct gt_hold *h, const struct gt_hold_call *c, struct plan *p, struct gt_hold_entry **out)
{
	const struct gt_hold_fn *fn = p->fn;
	size_t need = 0;
	if (p->extra)
		need += 16 + 6 * sizeof(void *) + p->xsize;
	else if (fn->nparams)
		need += 16 + fn->nparams * sizeof(void *) + 16 + fn->argbytes;
	need += 16 + p->nattrs * sizeof(CUlaunchAttribute) + 16;
	if (need > h->arena_cap)
		return GT_HOLD_NO_SIZE;
	if (h->arena_used + need > h->arena_cap)
		release_locked(h, GT_HOLD_BYTES, 0);
	size_t mark = h->arena_used;
	struct gt_hold_entry *e = &h->q[h->n];
	memset(e, 0, sizeof(*e));
	const unsigned char *scan = NULL;
	size_t scan_len = 0;
	if (p->extra) {
		void **x = arena_alloc(h, 6 * sizeof(void *));
		unsigned char *buf = arena_alloc(h, p->xsize);
		memcpy(buf, p->xbuf, p->xsize);
		size_t *sz = (size_t *)&x[5];
		*sz = p->xsize;
		x[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		x[1] = buf;
		x[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		x[3] = sz;
		x[4] = CU_LAUNCH_PARAM_END;
		e->extra = x;
		scan = buf;
		scan_len = p->xsize;
	} else if (fn->nparams) {
		void **pp = arena_alloc(h, fn->nparams * sizeof(void *));
		unsigned char *buf = arena_alloc(h, fn->argbytes);
		memset(buf, 0, fn->argbytes);
		for (uint32_t i = 0; i < fn->nparams; i++) {
			uint32_t off = h->pairs[fn->pairs + 2 * i], size = h->pairs[fn->pairs + 2 * i + 1];
			memcpy(buf + off, p->params[i], size);
			pp[i] = buf + off;
		}
		e->params = pp;
		scan = buf;
		scan_len = fn->argbytes;
	}
	uint64_t word = 0;
	if (scan && points_to_host(h, scan, scan_len, &word)) {
		h->arena_used = mark;
		if (gt_log_level >= GT_LOG_DEBUG)
			gt_debug("launch hold: an argument of %s points into pinned or managed memory (0x%llx)",
				 kernel_name(h, c->f), (unsigned long long)word);
		return GT_HOLD_NO_HOST_MEMORY;
	}
	if (c->form == GT_HOLD_KERNEL_EX) {
		e->cfg = *c->cfg;
		if (p->nattrs) {
			CUlaunchAttribute *a = arena_alloc(h, p->nattrs * sizeof(CUlaunchAttribute));
			memcpy(a, p->attrs, p->nattrs * sizeof(CUlaunchAttribute));
			e->cfg.attrs = a;
		} else {
			e->cfg.attrs = NULL;
		}
	}
	e->form = c->form;
	e->real = c->real;
	e->ctx = p->ctx;
	e->f = c->f;
	e->stream = p->stream;
	memcpy(e->grid, p->grid, sizeof(e->grid));
	memcpy(e->block, p->block, sizeof(e->block));
	e->smem = p->smem;
	e->api = c->api;
	e->tid = c->tid;
	e->t0 = c->t0;
	e->bytes = (uint32_t)(h->arena_used - mark);
	*out = e;
	return -1;
}

static CUresult call_real(const struct gt_hold_call *c)
{
	switch (c->form) {
	case GT_HOLD_KERNEL_EX:
		return ((gt_hold_pfn_ex)c->real)(c->cfg, c->f, c->params, c->extra);
	case GT_HOLD_COOP:
		return ((gt_hold_pfn_coop)c->real)(c->f, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
						    c->block[2], c->smem, c->stream, c->params);
	default:
		return ((gt_hold_pfn_kernel)c->real)(c->f, c->grid[0], c->grid[1], c->grid[2], c->block[0],
						      c->block[1], c->block[2], c->smem, c->stream, c->params, c->extra);
	}
}

CUresult gt_hold_launch(struct gt_hold *h, const struct gt_hold_call *c, int *held, int *why)
{
	*held = 0;
	*why = GT_HOLD_NREFUSALS;
	if (!atomic_load_explicit(&h->on, memory_order_acquire) || self_owns(h))
		return gt_hold_after(h, call_real(c));
	struct plan p;
	int no = early(h, c, &p);
	if (no < 0) {
		lock(h);
		if (!atomic_load(&h->on)) {
			no = GT_HOLD_NO_CLOSED;
		} else if ((no = check(h, c, &p)) < 0) {
			struct gt_hold_entry *e = NULL;
			if ((no = copy_in(h, c, &p, &e)) < 0) {
				e->seq = ++h->seq;
				e->queued_ns = h->cb.now_ns();
				e->mono_ns = h->cb.mono_ns();
				h->n++;
				atomic_store_explicit(&h->nq, h->n, memory_order_release);
				atomic_fetch_add(&h->st.held, 1);
				if (h->n >= (uint32_t)h->cfg.n || h->n >= h->cap)
					release_locked(h, GT_HOLD_FULL, 0);
				else if (h->n == 1 && h->timer_idle)
					pthread_cond_signal(&h->cv); /* once per batch: the timer starts waiting */
				unlock(h);
				*held = 1;
				return gt_hold_after(h, CUDA_SUCCESS);
			}
		}
		/* not held: what is queued goes first */
		release_locked(h, GT_HOLD_LAUNCH, 0);
		unlock(h);
	} else {
		gt_hold_release(h, GT_HOLD_LAUNCH, 0);
	}
	*why = no;
	if (atomic_fetch_add(&h->st.refused[no], 1) < 3 && gt_log_level >= GT_LOG_DEBUG)
		gt_debug("launch hold: a launch of %s is not held (%s)", kernel_name(h, c->f), gt_hold_refusal_names[no]);
	atomic_fetch_add(&h->st.passed, 1);
	return gt_hold_after(h, call_real(c));
}

/* ---- life ---- */

int gt_hold_init(struct gt_hold *h, const struct gt_hold_config *cfg, const struct gt_hold_drv *drv,
		 const struct gt_hold_cb *cb, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	h->cfg = *cfg;
	if (h->cfg.max < 1)
		h->cfg.max = 1;
	if (h->cfg.n < 1 || h->cfg.n > h->cfg.max)
		h->cfg.n = h->cfg.n < 1 ? 1 : h->cfg.max;
	if (h->cfg.timeout_us < 1)
		h->cfg.timeout_us = 1;
	h->drv = *drv;
	if (cb)
		h->cb = *cb;
	if (!h->cb.now_ns)
		h->cb.now_ns = def_now;
	if (!h->cb.mono_ns)
		h->cb.mono_ns = def_mono;
	if (!h->drv.ctx_get_current || !h->drv.ctx_push || !h->drv.ctx_pop) {
		snprintf(err, errlen, "the driver lacks cuCtxGetCurrent/cuCtxPushCurrent/cuCtxPopCurrent");
		return -1;
	}
	if (cfg->kernels)
		snprintf(h->kernels, sizeof(h->kernels), "%s", cfg->kernels);
	h->cap = (uint32_t)h->cfg.max;
	h->arena_cap = (size_t)h->cap * GT_HOLD_BYTES_PER_LAUNCH;
	if (h->arena_cap < GT_HOLD_MIN_ARENA)
		h->arena_cap = GT_HOLD_MIN_ARENA;
	h->nfns_cap = FN_CAP;
	h->pairs_cap = PAIRS_CAP;
	size_t sq = sizeof(struct gt_hold_entry) * h->cap, sf = sizeof(struct gt_hold_fn) * h->nfns_cap,
	       sp = sizeof(uint32_t) * h->pairs_cap, sd = sizeof(struct gt_hold_dev) * DEV_CAP,
	       sr = sizeof(struct gt_hold_range) * GT_HOLD_HOST_RANGES;
	size_t al = 64;
	sq = (sq + al - 1) / al * al;
	sf = (sf + al - 1) / al * al;
	sp = (sp + al - 1) / al * al;
	sd = (sd + al - 1) / al * al;
	sr = (sr + al - 1) / al * al;
	h->mem_size = sq + sf + sp + sd + sr + h->arena_cap;
	void *m = mmap(NULL, h->mem_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "cannot reserve %zu KiB for the queue: %s", h->mem_size >> 10, strerror(errno));
		h->mem = NULL;
		return -1;
	}
	unsigned char *b = m;
	h->mem = m;
	h->q = (void *)b;
	h->fns = (void *)(b += sq);
	h->pairs = (void *)(b += sf);
	h->devs = (void *)(b += sp);
	h->ranges = (void *)(b += sd);
	h->arena = b + sr;
	h->attr_gen = 1;
	pthread_mutex_init(&h->mu, NULL);
	pthread_mutex_init(&h->range_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (cfg->timer) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int rc = pthread_create(&h->timer, NULL, timer_main, h);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc) {
			snprintf(err, errlen, "cannot start the release timer: %s", strerror(rc));
			munmap(h->mem, h->mem_size);
			h->mem = NULL;
			return -1;
		}
		h->timer_running = 1;
	}
	atomic_store(&h->on, 1);
	return 0;
}

void gt_hold_close(struct gt_hold *h)
{
	if (!h->mem || self_owns(h))
		return;
	lock(h);
	release_locked(h, GT_HOLD_EXIT, 0);
	atomic_store(&h->on, 0);
	h->timer_stop = 1;
	pthread_cond_signal(&h->cv);
	unlock(h);
	if (h->timer_running) {
		pthread_join(h->timer, NULL);
		h->timer_running = 0;
	}
}

void gt_hold_free(struct gt_hold *h)
{
	if (!h->mem)
		return;
	munmap(h->mem, h->mem_size);
	h->mem = NULL;
	pthread_mutex_destroy(&h->mu);
	pthread_mutex_destroy(&h->range_mu);
	pthread_cond_destroy(&h->cv);
}

void gt_hold_fork_prepare(struct gt_hold *h)
{
	if (!h->mem)
		return;
	lock(h);
	release_locked(h, GT_HOLD_FORK, 0);
	pthread_mutex_lock(&h->range_mu);
}

void gt_hold_fork_parent(struct gt_hold *h)
{
	if (!h->mem)
		return;
	pthread_mutex_unlock(&h->range_mu);
	unlock(h);
}

void gt_hold_fork_child(struct gt_hold *h)
{
	if (!h->mem)
		return;
	/* one thread now: the timer is gone and the driver must be set up again */
	pthread_mutex_init(&h->mu, NULL);
	pthread_mutex_init(&h->range_mu, NULL);
	atomic_store(&h->owned, 0);
	atomic_store(&h->on, 0);
	h->timer_running = 0;
	h->n = 0;
	atomic_store(&h->nq, 0);
}
