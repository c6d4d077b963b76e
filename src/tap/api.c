/*
 * In-process control (gputap_start & co.), the per-range table's feeding,
 * the virtual-memory calls, and the CUPTI callbacks used when the driver
 * hooks are not in effect.  See tap/api.h.
 */
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "gpu/probe.h"
#include "gputap.h"
#include "tap/api.h"
#include "tap/rangeagg.h"
#include "tap/tap.h"

#if defined(__has_include)
#if __has_include("tap/rmetrics.h")
#include "tap/rmetrics.h"
#define GT_HAVE_RMETRICS 1
#endif
#endif

/* ---- errors ---- */

static pthread_mutex_t err_mu = PTHREAD_MUTEX_INITIALIZER;
static char err_text[2][512]; /* written into the other one, then published: a reader never sees it torn */
static _Atomic int err_cur;

void gt_api_set_error(const char *fmt, ...)
{
	pthread_mutex_lock(&err_mu);
	int next = !atomic_load(&err_cur);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_text[next], sizeof(err_text[next]), fmt, ap);
	va_end(ap);
	atomic_store(&err_cur, next);
	pthread_mutex_unlock(&err_mu);
}

GT_EXPORT const char *gputap_last_error(void)
{
	const char *e = err_text[atomic_load(&err_cur)];
#ifdef GT_HAVE_RMETRICS
	if (!e[0])
		e = gt_rmetrics_last_error(); /* gputap_metrics_enable's reason */
#endif
	return e;
}

/* ---- the per-range table ---- */

static struct gt_ra_node ra_nodes[GT_RA_NODES];
static _Atomic uint64_t ra_links[GT_RA_LINKS];
static _Atomic uint32_t ra_sets[GT_RA_SETS][GT_RA_SET_MAX];
static struct gt_ra ra = {.nodes = ra_nodes, .links = ra_links, .sets = ra_sets};
static _Atomic int64_t mem_peak;

static void amax_i64(_Atomic int64_t *p, int64_t v)
{
	int64_t cur = atomic_load_explicit(p, memory_order_relaxed);
	while (v > cur && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

/* This thread's slot if it has one (never creates one: threads without ranges have nothing to find). */
static struct gt_slot *my_slot(void)
{
	struct gt_tls *t = &gt_tls;
	return t->slot && t->gen == atomic_load_explicit(&gt_tap.gen, memory_order_acquire) ? t->slot : NULL;
}

static int top_of(const struct gt_slot *s)
{
	int d = s->depth < GT_NEST_MAX ? s->depth : GT_NEST_MAX;
	return d - 1;
}

static uint32_t innermost_node(const struct gt_slot *s, int below)
{
	for (int d = below; d >= 0; d--)
		if (s->stack[d].node)
			return s->stack[d].node;
	return 0;
}

void gt_api_range_open(struct gt_slot *s, int d)
{
	struct gt_nest *n = &s->stack[d];
	n->node = gt_ra_node(&ra, innermost_node(s, d - 1), n->name_id);
	n->peak = atomic_load_explicit(&gt_tap.mem_used, memory_order_relaxed);
}

void gt_api_range_close(const struct gt_nest *n, uint64_t end_ns)
{
	int64_t now = atomic_load_explicit(&gt_tap.mem_used, memory_order_relaxed);
	gt_ra_close(&ra, n->node, end_ns - n->start_ns, n->peak > now ? n->peak : now);
}

void gt_api_on_kernel(uint64_t corr, uint64_t start_ns, uint64_t end_ns)
{
	gt_ra_kernel(&ra, corr, end_ns > start_ns ? end_ns - start_ns : 0);
}

static void raise_peaks(struct gt_slot *s, int64_t used_now)
{
	for (int d = top_of(s); d >= 0; d--) {
		if (!s->stack[d].node)
			continue;
		int64_t cur = __atomic_load_n(&s->stack[d].peak, __ATOMIC_RELAXED);
		while (used_now > cur &&
		       !__atomic_compare_exchange_n(&s->stack[d].peak, &cur, used_now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}

/* The innermost open range of every thread but `self` that has one (at most `max`); with
 * used_now >= 0 their ranges' memory peaks are raised to it. */
static int others_open(const struct gt_slot *self, uint32_t *open, int max, int64_t used_now)
{
	int n = 0;
	if (!gt_tap.slots)
		return 0;
	for (unsigned i = 0; i < GT_MAX_THREADS && n < max; i++) {
		struct gt_slot *o = &gt_tap.slots[i];
		if (o == self || !atomic_load_explicit(&o->used, memory_order_relaxed) || o->depth <= 0)
			continue;
		uint32_t x = innermost_node(o, top_of(o));
		if (!x)
			continue;
		open[n++] = x;
		if (used_now >= 0)
			raise_peaks(o, used_now);
	}
	return n;
}

/*
 * Memory counts in the allocating thread's open ranges.  An allocation or free
 * on a thread with no open range (PyTorch's autograd thread runs the backward
 * pass; library worker threads) counts in the ranges open on the other threads
 * at that moment: what the process took from the driver while they were open,
 * as the caching allocator's own statistics see it.
 */
void gt_api_on_mem(int alloc, uint64_t bytes, int64_t used_now)
{
	if (alloc)
		amax_i64(&mem_peak, used_now);
	struct gt_slot *s = my_slot();
	uint32_t node = s && s->depth > 0 ? innermost_node(s, top_of(s)) : 0;
	if (node) {
		gt_ra_mem(&ra, node, alloc, bytes);
		if (alloc)
			raise_peaks(s, used_now);
		return;
	}
	uint32_t open[64];
	int n = others_open(s, open, 64, alloc ? used_now : -1);
	gt_ra_mem_set(&ra, open, n, alloc, bytes);
}

/*
 * A kernel counts in the launching thread's innermost open range; launched on
 * a thread with no open range (PyTorch's autograd thread runs the backward
 * pass), in the ranges open on the other threads at that moment — the rule
 * memory follows, and range metrics too (docs/range-metrics.md).
 */
static void on_launch(uint64_t corr)
{
	struct gt_slot *s = my_slot();
	uint32_t node = s && s->depth > 0 ? innermost_node(s, top_of(s)) : 0;
	if (node) {
		gt_ra_link(&ra, corr, node);
		return;
	}
	uint32_t open[GT_RA_SET_MAX];
	int n = others_open(s, open, GT_RA_SET_MAX, -1);
	if (n)
		gt_ra_link_set(&ra, corr, open, n);
}

void gt_api_on_kernel_counted(uint64_t corr, double ns)
{
	if (ns >= 0)
		gt_ra_kernel(&ra, corr, (uint64_t)ns);
	else
		gt_ra_kernel_untimed(&ra, corr);
}

/* ---- virtual memory ---- */

#define VMM_HANDLE_TAG (1ull << 63) /* keys of physical allocations in the pointer table */
#define VMM_MAP_TAG (1ull << 62)    /* keys of mappings: value = device + 1 */

static uint32_t handle_device(uint64_t handle)
{
	typedef CUresult (*fn_t)(CUmemAllocationProp *, CUmemGenericAllocationHandle);
	static void *_Atomic fn;
	fn_t f = (fn_t)atomic_load(&fn);
	if (!f) {
		f = (fn_t)gt_real_driver("cuMemGetAllocationPropertiesFromHandle");
		atomic_store(&fn, (void *)f);
	}
	CUmemAllocationProp p;
	memset(&p, 0, sizeof(p));
	if (!f || f(&p, (CUmemGenericAllocationHandle)handle) != CUDA_SUCCESS || p.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return 0;
	return (uint32_t)p.location.id;
}

static void memory_record(int op, uint64_t addr, uint64_t bytes, uint32_t device)
{
	if (!(gt_tap.trace & GT_TR_MEMORY))
		return;
	struct gt_rec_memory r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_MEMORY;
	r.h.size = sizeof(r);
	r.op = (uint8_t)op;
	r.mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r.device = device;
	r.ts_ns = gt_now_ns();
	r.address = addr;
	r.bytes = bytes;
	r.corr_id = gt_tls.corr;
	gt_tap_put(&r, sizeof(r));
}

void gt_api_vmm(int op, int result, uint64_t ptr, uint64_t bytes, uint64_t handle)
{
	if (result != CUDA_SUCCESS || !atomic_load_explicit(&gt_tap.on, memory_order_relaxed))
		return;
	switch (op) {
	case GT_VMM_CREATE:
		gt_tap_mem_alloc(handle | VMM_HANDLE_TAG, bytes);
		break;
	case GT_VMM_RELEASE:
		gt_tap_mem_free(handle | VMM_HANDLE_TAG);
		break;
	case GT_VMM_MAP: {
		uint32_t dev = handle_device(handle);
		gt_ptrtab_insert(&gt_tap.ptrs, ptr | VMM_MAP_TAG, (uint64_t)dev + 1);
		memory_record(GT_MEM_ALLOC, ptr, bytes, dev);
		break;
	}
	case GT_VMM_UNMAP: {
		uint64_t dev1 = gt_ptrtab_remove(&gt_tap.ptrs, ptr | VMM_MAP_TAG);
		memory_record(GT_MEM_FREE, ptr, bytes, dev1 ? (uint32_t)(dev1 - 1) : 0);
		break;
	}
	default:
		break;
	}
}

/* ---- driver hooks in effect? ---- */

int gt_api_hooks_live(void)
{
	static _Atomic int live = -1;
	int v = atomic_load(&live);
	if (v >= 0)
		return v;
	/* preloaded: the process's "dlsym" is this library's (tap/resolve.c) */
	void *g = gt_real_dlsym ? gt_real_dlsym(RTLD_DEFAULT, "dlsym") : NULL;
	Dl_info a, b;
	v = g && dladdr(g, &a) && dladdr((void *)gt_api_hooks_live, &b) && a.dli_fbase == b.dli_fbase;
	atomic_store(&live, v);
	return v;
}

/* ---- CUPTI driver callbacks ---- */

static const CUpti_CallbackId mem_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,        CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
	CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
	CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,       CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuMemCreate,          CUPTI_DRIVER_TRACE_CBID_cuMemRelease,
	CUPTI_DRIVER_TRACE_CBID_cuMemMap,             CUPTI_DRIVER_TRACE_CBID_cuMemUnmap,
	CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve,  CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree,
};

size_t gt_api_callback_ids(const unsigned **ids)
{
	*ids = mem_cbids;
	return gt_api_hooks_live() ? 0 : sizeof(mem_cbids) / sizeof(mem_cbids[0]);
}

static int launch_api(unsigned cbid)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: return GT_API_cuLaunchKernel;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: return GT_API_cuLaunchKernelEx;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: return GT_API_cuLaunchCooperativeKernel;
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return GT_API_cuGraphLaunch;
	default: return -1;
	}
}

/* A memory call seen by its callback (exit site): count it as the hooks would. */
static void memory_call(unsigned cbid, const CUpti_CallbackData *cb, uint64_t t0, uint64_t t1)
{
	const void *pp = cb->functionParams;
	int r = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
	int api = -1;
	uint64_t bytes = 0, ptr = 0;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2: {
		const cuMemAlloc_v2_params *p = pp;
		api = GT_API_cuMemAlloc;
		bytes = p->bytesize;
		if (!r && p->dptr) {
			ptr = *p->dptr;
			gt_tap_mem_alloc(ptr, bytes);
		}
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2: {
		const cuMemAllocPitch_v2_params *p = pp;
		api = GT_API_cuMemAllocPitch;
		if (!r && p->dptr && p->pPitch) {
			bytes = *p->pPitch * p->Height;
			ptr = *p->dptr;
			gt_tap_mem_alloc(ptr, bytes);
		}
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged: {
		const cuMemAllocManaged_params *p = pp;
		api = GT_API_cuMemAllocManaged;
		bytes = p->bytesize;
		if (!r && p->dptr) {
			ptr = *p->dptr;
			gt_tap_mem_alloc(ptr, bytes);
		}
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz: {
		const cuMemAllocAsync_params *p = pp; /* same layout as the _ptsz params */
		api = GT_API_cuMemAllocAsync;
		bytes = p->bytesize;
		if (!r && p->dptr) {
			ptr = *p->dptr;
			gt_tap_mem_alloc(ptr, bytes);
		}
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2: {
		const cuMemFree_v2_params *p = pp;
		api = GT_API_cuMemFree;
		ptr = p->dptr;
		if (!r)
			gt_tap_mem_free(ptr);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync:
	case CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz: {
		const cuMemFreeAsync_params *p = pp;
		api = GT_API_cuMemFreeAsync;
		ptr = p->dptr;
		if (!r)
			gt_tap_mem_free(ptr);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemCreate: {
		const cuMemCreate_params *p = pp;
		api = GT_API_cuMemCreate;
		bytes = p->size;
		gt_api_vmm(GT_VMM_CREATE, r, 0, bytes, p->handle ? *p->handle : 0);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemRelease: {
		const cuMemRelease_params *p = pp;
		api = GT_API_cuMemRelease;
		gt_api_vmm(GT_VMM_RELEASE, r, 0, 0, p->handle);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemMap: {
		const cuMemMap_params *p = pp;
		api = GT_API_cuMemMap;
		bytes = p->size;
		ptr = p->ptr;
		gt_api_vmm(GT_VMM_MAP, r, ptr, bytes, p->handle);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemUnmap: {
		const cuMemUnmap_params *p = pp;
		api = GT_API_cuMemUnmap;
		bytes = p->size;
		ptr = p->ptr;
		gt_api_vmm(GT_VMM_UNMAP, r, ptr, bytes, 0);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve: {
		const cuMemAddressReserve_params *p = pp;
		api = GT_API_cuMemAddressReserve;
		bytes = p->size;
		ptr = !r && p->ptr ? *p->ptr : 0;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree: {
		const cuMemAddressFree_params *p = pp;
		api = GT_API_cuMemAddressFree;
		bytes = p->size;
		ptr = p->ptr;
		break;
	}
	default:
		return;
	}
	gt_tap_api_done(api, t0, t1, r, bytes, -1, ptr, cb->correlationId);
}

/*
 * In-process, gputap may start after the program allocated memory: a free of a
 * block it never saw would count nothing.  Before such a free, ask the driver
 * for the block's size and count it as in use, so that the free counts.
 */
static void learn_block(uint64_t ptr)
{
	if (!ptr)
		return;
	uint64_t size = gt_ptrtab_remove(&gt_tap.ptrs, ptr);
	if (size) {
		gt_ptrtab_insert(&gt_tap.ptrs, ptr, size); /* known: put it back */
		return;
	}
	typedef CUresult (*range_t)(CUdeviceptr *, size_t *, CUdeviceptr);
	static void *_Atomic fn;
	range_t f = (range_t)atomic_load(&fn);
	if (!f) {
		f = (range_t)gt_real_driver("cuMemGetAddressRange_v2");
		atomic_store(&fn, (void *)f);
	}
	CUdeviceptr base = 0;
	size_t n = 0;
	if (f && f(&base, &n, (CUdeviceptr)ptr) == CUDA_SUCCESS && base == ptr && n &&
	    gt_ptrtab_insert(&gt_tap.ptrs, ptr, n) == 0)
		atomic_fetch_add_explicit(&gt_tap.mem_used, (int64_t)n, memory_order_relaxed);
}

void gt_api_driver_callback(unsigned cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	struct gt_tls *t = &gt_tls;
	if (!atomic_load_explicit(&gt_tap.on, memory_order_relaxed))
		return;
	int launch = launch_api(cbid);
	if (t->guard) { /* inside a hook (which times the call) or the tap's own call: only the range link */
		if (launch >= 0 && cb->callbackSite == CUPTI_API_ENTER)
			on_launch(cb->correlationId);
		return;
	}
	if (cb->callbackSite == CUPTI_API_ENTER) {
		/* the tap launches nothing: a launch inside a hook (guard up) is the program's */
		if (launch >= 0)
			on_launch(cb->correlationId);
		if (cb->correlationData && !gt_api_hooks_live()) /* only the exit below reads it */
			*cb->correlationData = gt_now_ns();
		if (!gt_api_hooks_live() &&
		    (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2 || cbid == CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync ||
		     cbid == CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz)) {
			t->guard++;
			learn_block(((const cuMemFree_v2_params *)cb->functionParams)->dptr); /* dptr first in all three */
			t->guard--;
		}
		return;
	}
	if (gt_api_hooks_live())
		return; /* the hooks count these calls */
	uint64_t t1 = gt_now_ns(), t0 = cb->correlationData ? *cb->correlationData : t1;
	t->guard++;
	if (launch >= 0)
		gt_tap_api_done(launch, t0, t1, cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0, 0, -1, 0,
				cb->correlationId);
	else
		memory_call(cbid, cb, t0, t1);
	t->guard--;
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
	gt_ra_reset(&ra);
	atomic_store(&mem_peak, atomic_load(&gt_tap.mem_used));
	return 0;
}

static const char *name_of(uint32_t id, uint32_t *len, void *arg)
{
	(void)arg;
	return gt_tap.strs.slots ? gt_strtab_get(&gt_tap.strs, id, len) : NULL;
}

static void results(struct gt_jbuf *b)
{
#ifdef GT_HAVE_RMETRICS
	/* first: decoding what range metrics hold also counts (and times) the ranges' kernels when
	 * kernel records are off */
	char *m = gt_rmetrics_results_json();
#endif
	int64_t used = atomic_load(&gt_tap.mem_used);
	int64_t peak = atomic_load(&mem_peak);
	int gpu = atomic_load(&gt_cupti_active);
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
	gt_jb_printf(b, ",\"mem_used_bytes\":%lld,\"mem_peak_bytes\":%lld", (long long)(used > 0 ? used : 0),
		     (long long)(peak > used ? peak : used > 0 ? used : 0));
	gt_jb_printf(b, ",\"kernels_total\":%llu,\"kernels_in_ranges\":%llu",
		     (unsigned long long)atomic_load(&ra.kernels_total), (unsigned long long)atomic_load(&ra.kernels_in_ranges));
	gt_jb_printf(b, ",\"lost\":{\"ranges\":%llu,\"kernels\":%llu},",
		     (unsigned long long)atomic_load(&ra.lost_ranges), (unsigned long long)atomic_load(&ra.lost_links));
	uint32_t *open = calloc(GT_RA_NODES, sizeof(uint32_t));
	if (open && gt_tap.slots) {
		for (unsigned i = 0; i < GT_MAX_THREADS; i++) {
			const struct gt_slot *s = &gt_tap.slots[i];
			if (!atomic_load(&s->used))
				continue;
			int top = s->depth < GT_NEST_MAX ? s->depth : GT_NEST_MAX;
			for (int d = 0; d < top; d++) {
				uint32_t n = s->stack[d].node;
				if (n && n <= GT_RA_NODES)
					open[n - 1]++;
			}
		}
	}
	gt_ra_json(&ra, b, name_of, NULL, open);
	free(open);
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
