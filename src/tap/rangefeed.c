/*
 * The range feed (tap/api.h): the process's one per-range table and what
 * feeds it — public ranges opened and closed, kernels launched and their
 * records, device memory allocated and freed — and the CUPTI driver
 * callbacks it registers with the switchboard (tap/cupti.h): every launch
 * is linked to its range there, and when the driver hooks are not in effect
 * (in-process start) the launches and memory calls are counted there too.
 */
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "tap/api.h"
#include "tap/cupti.h"
#include "tap/rangeagg.h"
#include "tap/tap.h"

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

/* Ranges with a node open now, all threads: 0 spares a range-less thread's launches the search of
 * the other threads (a program without ranges pays nothing for the rule below). */
static _Atomic int ranges_open;

void gt_api_range_open(struct gt_slot *s, int d)
{
	struct gt_nest *n = &s->stack[d];
	n->node = gt_ra_node(&ra, innermost_node(s, d - 1), n->name_id);
	n->peak = atomic_load_explicit(&gt_tap.mem_used, memory_order_relaxed);
	if (n->node)
		atomic_fetch_add_explicit(&ranges_open, 1, memory_order_relaxed);
}

void gt_api_range_close(const struct gt_nest *n, uint64_t end_ns)
{
	atomic_fetch_sub_explicit(&ranges_open, 1, memory_order_relaxed); /* called for a node's range only */
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
	if (!gt_tap.slots || atomic_load_explicit(&ranges_open, memory_order_relaxed) <= 0)
		return 0;
	unsigned slots = atomic_load_explicit(&gt_tap.nslots, memory_order_relaxed); /* the slots ever taken */
	for (unsigned i = 0; i < slots && i < GT_MAX_THREADS && n < max; i++) {
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
static inline void on_launch(uint64_t corr)
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

/* The memory calls' callbacks, when the driver hooks are not in effect (in-process start). */
#define MEM(id) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##id}
static const struct gt_cupti_id mem_cbids[] = {
	MEM(cuMemAlloc_v2),        MEM(cuMemAllocPitch_v2),    MEM(cuMemAllocManaged), MEM(cuMemAllocAsync),
	MEM(cuMemAllocAsync_ptsz), MEM(cuMemFree_v2),          MEM(cuMemFreeAsync),    MEM(cuMemFreeAsync_ptsz),
	MEM(cuMemCreate),          MEM(cuMemRelease),          MEM(cuMemMap),          MEM(cuMemUnmap),
	MEM(cuMemAddressReserve),  MEM(cuMemAddressFree),
};
#undef MEM

static int mem_cbids_wanted(void)
{
	return !gt_api_hooks_live();
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

/* Every driver-API callback that reaches the tap (enter and exit; tap/cupti.h). */
static void driver_callback(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	(void)dom;
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

void gt_api_ranges_reset(void)
{
	gt_ra_reset(&ra);
	atomic_store(&mem_peak, atomic_load(&gt_tap.mem_used));
}

static const char *name_of(uint32_t id, uint32_t *len, void *arg)
{
	(void)arg;
	return gt_tap.strs.slots ? gt_strtab_get(&gt_tap.strs, id, len) : NULL;
}

void gt_api_ranges_json(struct gt_jbuf *b)
{
	int64_t used = atomic_load(&gt_tap.mem_used);
	int64_t peak = atomic_load(&mem_peak);
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
}

/* Launch callbacks: correlation ids for API records, each kernel's range; and the memory calls when
 * the hooks are not in effect. */
static int wanted(void)
{
	unsigned tr = gt_tap.trace;
	return (tr & GT_TR_GPU) && ((tr & GT_TR_API) || !gt_api_hooks_live());
}

static const struct gt_cupti_client cupti_client = {
	.callback = driver_callback,
	.wanted = wanted,
	.launches = 1,
	.ids = mem_cbids,
	.nids = sizeof(mem_cbids) / sizeof(mem_cbids[0]),
	.ids_wanted = mem_cbids_wanted,
	.kernel = gt_api_on_kernel,
};

void gt_api_cupti_init(void)
{
	gt_cupti_register(GT_CUPTI_RANGES, &cupti_client);
}
