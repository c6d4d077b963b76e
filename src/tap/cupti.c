/*
 * The CUPTI switchboard (tap/cupti.h): libcupti is dlopen'ed (never linked),
 * activity records are converted to gputap records, and callbacks are
 * enabled for a few ids only (those the registered clients ask for, the
 * launches', copies' and memsets' correlation, the statically linked
 * runtime's cudaMemcpy*).
 * CUPTI timestamps come from our CLOCK_REALTIME callback, so GPU and host
 * records share one time axis.
 */
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "gpu/probe.h"
#include "tap/cupti.h"
#include "tap/tap.h"

/* The registered clients (tap/cupti.h) by slot, and their callbacks: what the callback reads. */
static const struct gt_cupti_client *_Atomic clients[GT_CUPTI_NSLOTS];
static _Atomic gt_cupti_fn fns[GT_CUPTI_NSLOTS];

void gt_cupti_register(enum gt_cupti_slot slot, const struct gt_cupti_client *c)
{
	if ((unsigned)slot >= GT_CUPTI_NSLOTS || !c)
		return;
	atomic_store_explicit(&clients[slot], c, memory_order_release);
	atomic_store_explicit(&fns[slot], c->callback, memory_order_release);
}

static const struct gt_cupti_client *client(int slot)
{
	return atomic_load_explicit(&clients[slot], memory_order_acquire);
}

/* One slot's callback, from CUPTI's callback: one load, one branch, one call (tap/cupti.h on the
 * cost).  Relaxed: a function's code needs no ordering, and a client turns itself on (its flag in
 * gt_tap) only after it registered. */
static inline __attribute__((always_inline)) void call(int slot, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
							const void *data)
{
	gt_cupti_fn f = atomic_load_explicit(&fns[slot], memory_order_relaxed);
	if (f)
		f(dom, cbid, data);
}


#define GT_CUPTI_FNS(X)                                                                            \
	X(cuptiActivityEnable)                                                                     \
	X(cuptiActivityDisable)                                                                    \
	X(cuptiActivityRegisterCallbacks)                                                          \
	X(cuptiActivityFlushAll)                                                                   \
	X(cuptiActivityGetNextRecord)                                                              \
	X(cuptiActivityGetNumDroppedRecords)                                                       \
	X(cuptiSubscribe)                                                                          \
	X(cuptiUnsubscribe)                                                                        \
	X(cuptiEnableCallback)                                                                     \
	X(cuptiGetResultString)                                                                    \
	X(cuptiGetTimestamp)                                                                       \
	X(cuptiFinalize)

#define GT_CUPTI_PTR(n) __typeof__(&n) n;
static struct {
	void *lib;
	GT_CUPTI_FNS(GT_CUPTI_PTR)
	__typeof__(&cuptiActivityRegisterTimestampCallback) reg_ts;
	CUpti_SubscriberHandle sub;
	int subscribed;
	int64_t ts_offset; /* added to CUPTI timestamps when our clock could not be installed */
	_Atomic int in_own_subscribe;
	_Atomic int yielded;
	int started; /* activity/callbacks set up; 0 again after a capture window's cuptiFinalize */
	int cuinit;  /* CUDA initialised: CUPTI may start */
	uint64_t load_ns; /* the time loading libcupti and its symbols took (said with a window's start) */
} C;

/*
 * Capture windows (tap/capture_tap.c decides when).  CUPTI is started when a
 * window opens and finalized after it closed, once the GPU work launched in it
 * has been delivered: only cuptiFinalize gives the launch path its speed back
 * (disabling the activity kinds leaves two thirds of CUPTI's cost).  Records
 * of work launched after the close are dropped by correlation id.  The
 * finalize runs at the exit of the next driver callback, where no other CUPTI
 * call of that thread is in flight (what CUPTI recommends for a detach).
 */
#define GT_CAP_SPANS 64
static struct {
	_Atomic uint64_t last_corr; /* correlation id of the last launch seen */
	/* correlation ids launched inside windows: [lo, hi], hi = UINT64_MAX while open; GPU records
	 * outside every span were launched between windows (CUPTI delivers them late) */
	_Atomic uint64_t lo[GT_CAP_SPANS], hi[GT_CAP_SPANS];
	_Atomic int nspans;         /* 0 without capture windows: every record is kept */
	_Atomic uint64_t kernels;   /* kernel records kept since the window opened */
	_Atomic int finalize;       /* 1: finalize at the next callback exit */
	_Atomic int windows;        /* capture windows are in effect (gt_cupti_capture_windows) */
	/* CUPTI numbers correlation ids from 1 again after a finalize: ids are offset by the last id
	 * of the earlier CUPTI sessions, so that they stay unique in the trace */
	_Atomic uint64_t era_base;
	pthread_mutex_t mu;         /* flushes by the writer vs the finalize */
} K = {.mu = PTHREAD_MUTEX_INITIALIZER};

static _Atomic uint64_t max_corr; /* the largest id any record carried, for the next session's base */

static uint64_t corr_of(uint32_t id)
{
	return id ? id + atomic_load_explicit(&K.era_base, memory_order_relaxed) : 0;
}

/* corr_of for records (not on a launch path): also keeps the largest id seen */
static uint64_t corr_rec(uint32_t id)
{
	if (!id)
		return 0;
	uint64_t c = corr_of(id);
	uint64_t m = atomic_load_explicit(&max_corr, memory_order_relaxed);
	while (c > m && !atomic_compare_exchange_weak_explicit(&max_corr, &m, c, memory_order_relaxed,
							       memory_order_relaxed)) {
	}
	return c;
}
#undef GT_CUPTI_PTR

/*
 * CUPTI's activity buffers: gt_tap.cupti_nbufs buffers of gt_tap.cupti_buf_bytes
 * (its share of GPUTAP_BUFFER_MB), mapped once when CUPTI starts.  A request
 * takes a free one (a bit in `used`), a completed buffer gives it back; when
 * none is free the request is refused and counted (GT_DROP_CUPTI_NO_BUFFER).
 * Nothing is allocated or freed in CUPTI's callbacks.
 */
static struct {
	unsigned char *mem;
	uint32_t size, n;
	_Atomic uint32_t used; /* bit i: buffer i is with CUPTI */
	uint64_t last_flush_ns;
} B;

static int bufs_map(void)
{
	if (B.mem)
		return 0;
	B.n = gt_tap.cupti_nbufs < 32 ? gt_tap.cupti_nbufs : 32;
	B.size = gt_tap.cupti_buf_bytes;
	if (!B.n || !B.size)
		return -1;
	void *p = mmap(NULL, (size_t)B.n * B.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (p == MAP_FAILED)
		return -1;
	B.mem = p;
	return 0;
}

static uint64_t ts_realtime(void)
{
	return gt_now_ns();
}

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max)
{
	*buffer = NULL;
	*size = 0;
	*max = 0;
	uint32_t used = atomic_load(&B.used);
	for (;;) {
		uint32_t i = 0;
		while (i < B.n && (used >> i & 1u))
			i++;
		if (i >= B.n) {
			atomic_fetch_add(&gt_tap.cupti_no_buffer, 1);
			return;
		}
		if (atomic_compare_exchange_weak(&B.used, &used, used | 1u << i)) {
			*buffer = B.mem + (size_t)i * B.size;
			*size = B.size;
			return;
		}
	}
}

static void buf_release(uint8_t *buffer)
{
	if (!B.mem || buffer < B.mem || buffer >= B.mem + (size_t)B.n * B.size)
		return;
	uint32_t i = (uint32_t)((size_t)(buffer - B.mem) / B.size);
	atomic_fetch_and(&B.used, ~(1u << i));
}

static uint32_t intern_cstr(const char *s)
{
	return s ? gt_strtab_intern(&gt_tap.strs, s, strlen(s)) : 0;
}

static uint64_t ts(uint64_t t)
{
	return t ? (uint64_t)((int64_t)t + C.ts_offset) : 0;
}

/* GPU work launched after a capture window closed (CUPTI still on until the finalize). */
static int after_window(uint64_t corr)
{
	int n = atomic_load_explicit(&K.nspans, memory_order_acquire);
	if (n == 0 || corr == 0)
		return 0;
	for (int i = n - 1; i >= 0; i--)
		if (corr >= atomic_load_explicit(&K.lo[i], memory_order_relaxed) &&
		    corr <= atomic_load_explicit(&K.hi[i], memory_order_relaxed))
			return 0;
	return 1;
}

static void convert(const CUpti_Activity *a)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		/* fields read here sit at the same offsets in Kernel9 (CUDA 12) and Kernel10 (CUDA 13) */
		const CUpti_ActivityKernel10 *k = (const void *)a;
		struct gt_rec_kernel r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_KERNEL;
		r.h.size = sizeof(r);
		r.name_id = intern_cstr(k->name);
		r.device = k->deviceId;
		r.context = k->contextId;
		r.stream = k->streamId;
		r.start_ns = ts(k->start);
		r.end_ns = ts(k->end);
		r.corr_id = corr_rec(k->correlationId);
		r.grid[0] = (uint32_t)k->gridX;
		r.grid[1] = (uint32_t)k->gridY;
		r.grid[2] = (uint32_t)k->gridZ;
		r.block[0] = (uint32_t)k->blockX;
		r.block[1] = (uint32_t)k->blockY;
		r.block[2] = (uint32_t)k->blockZ;
		r.registers = k->registersPerThread;
		r.static_smem = (uint32_t)k->staticSharedMemory;
		r.dynamic_smem = (uint32_t)k->dynamicSharedMemory;
		r.graph_id = k->graphId;
		r.graph_node_id = k->graphNodeId;
		if (after_window(r.corr_id))
			break;
		atomic_fetch_add_explicit(&K.kernels, 1, memory_order_relaxed);
		gt_tap_put(&r, sizeof(r));
		for (int i = 0; i < GT_CUPTI_NSLOTS; i++) {
			const struct gt_cupti_client *c = client(i);
			if (c && c->kernel)
				c->kernel(r.corr_id, r.start_ns, r.end_ns);
		}
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		struct gt_rec_memcpy r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_MEMCPY;
		r.h.size = sizeof(r);
		r.copy_kind = m->copyKind;
		r.src_kind = m->srcKind;
		r.dst_kind = m->dstKind;
		r.flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
		r.device = r.dst_device = m->deviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.start_ns = ts(m->start);
		r.end_ns = ts(m->end);
		r.bytes = m->bytes;
		r.corr_id = corr_rec(m->correlationId);
		r.graph_id = m->graphId;
		if (after_window(r.corr_id))
			break;
		gt_tap_put(&r, sizeof(r));
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = (const void *)a;
		struct gt_rec_memcpy r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_MEMCPY;
		r.h.size = sizeof(r);
		r.copy_kind = m->copyKind;
		r.src_kind = m->srcKind;
		r.dst_kind = m->dstKind;
		r.flags = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
		r.device = m->srcDeviceId;
		r.dst_device = m->dstDeviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.start_ns = ts(m->start);
		r.end_ns = ts(m->end);
		r.bytes = m->bytes;
		r.corr_id = corr_rec(m->correlationId);
		r.graph_id = m->graphId;
		if (after_window(r.corr_id))
			break;
		gt_tap_put(&r, sizeof(r));
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		struct gt_rec_memset r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_MEMSET;
		r.h.size = sizeof(r);
		r.device = m->deviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.value = m->value;
		r.start_ns = ts(m->start);
		r.end_ns = ts(m->end);
		r.bytes = m->bytes;
		r.corr_id = corr_rec(m->correlationId);
		r.graph_id = m->graphId;
		if (after_window(r.corr_id))
			break;
		gt_tap_put(&r, sizeof(r));
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		const CUpti_ActivityMemory4 *m = (const void *)a;
		struct gt_rec_memory r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_MEMORY;
		r.h.size = sizeof(r);
		r.op = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? GT_MEM_FREE
											       : GT_MEM_ALLOC;
		r.mem_kind = (uint8_t)m->memoryKind;
		r.device = m->deviceId;
		r.ts_ns = ts(m->timestamp);
		r.address = m->address;
		r.bytes = m->bytes;
		r.corr_id = corr_rec(m->correlationId);
		r.stream = m->streamId;
		gt_tap_put(&r, sizeof(r));
		break;
	}
	default:
		break;
	}
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)size;
	int saved = gt_tls.guard;
	gt_tls.guard = 1; /* CUPTI may call the driver from here: do not record those calls */
	CUpti_Activity *rec = NULL;
	while (valid && C.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		convert(rec);
	size_t dropped = 0;
	if (C.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		atomic_fetch_add(&gt_tap.cupti_dropped, dropped);
	buf_release(buffer);
	gt_tls.guard = saved;
}

static void capture_finalize(void);

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	(void)ud;
	const CUpti_CallbackData *cb = data;
	struct gt_tls *t = &gt_tls;
	/* the slots in order, unrolled (tap/cupti.h): range metrics see a launch before its range link */
	if (atomic_load_explicit(&gt_tap.rm_active, memory_order_relaxed))
		call(GT_CUPTI_RMETRICS, dom, cbid, data);
	if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
		if (atomic_load_explicit(&gt_tap.pcs_active, memory_order_relaxed))
			call(GT_CUPTI_PCSAMP, dom, cbid, data); /* PC sampling: contexts and modules */
		return;
	}
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (cb->callbackSite == CUPTI_API_ENTER) {
			t->corr = corr_of(cb->correlationId);
			if (atomic_load_explicit(&K.windows, memory_order_relaxed))
				atomic_store_explicit(&K.last_corr, t->corr, memory_order_relaxed);
		} else {
			if (atomic_load_explicit(&K.finalize, memory_order_relaxed))
				capture_finalize();
			if (t->guard)
				return; /* a hook times this call; its range link was made at the entry */
		}
		call(GT_CUPTI_RANGES, dom, cbid, data); /* the range feed: range links; calls the hooks cannot see */
		return;
	}
	if (dom != CUPTI_CB_DOMAIN_RUNTIME_API || t->in_runtime || t->guard || !atomic_load(&gt_tap.on))
		return;
	/* the statically linked runtime's copies (a dynamically linked one is interposed by name) */
	if (cb->callbackSite == CUPTI_API_ENTER) {
		*cb->correlationData = gt_now_ns();
		return;
	}
	uint64_t t1 = gt_now_ns(), t0 = *cb->correlationData;
	int api, kind;
	size_t count;
	if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 || cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000) {
		const cudaMemcpy_v3020_params *p = cb->functionParams;
		api = GT_API_cudaMemcpy;
		count = p->count;
		kind = (int)p->kind;
	} else {
		const cudaMemcpyAsync_v3020_params *p = cb->functionParams;
		api = GT_API_cudaMemcpyAsync;
		count = p->count;
		kind = (int)p->kind;
	}
	int rc = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
	t->guard++;
	gt_tap_api_done(api, t0, t1, rc, count, kind, 0, corr_of(cb->correlationId));
	t->guard--;
}

static void enable_cb(CUpti_CallbackDomain d, CUpti_CallbackId id)
{
	C.cuptiEnableCallback(1, C.sub, d, id);
}

static const CUpti_CallbackId launch_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,            CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

static void enable_launches(void)
{
	for (size_t i = 0; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
		enable_cb(CUPTI_CB_DOMAIN_DRIVER_API, launch_cbids[i]);
}

/* The driver's copies and memsets the hooks record (tap/hook_driver.c), each entry point with its
 * per-thread-stream variant.  A GPU copy or memset carries the correlation id of the driver call that
 * made it, which only the call's callback tells: without these callbacks the call's API record (or
 * that of the runtime call around it, tap/hook_runtime.c) would have none, and its GPU record no
 * launch.  Launches are not among them: their callbacks, and so their cost, stay as they are. */
#define GT_CB2(n, v) CUPTI_DRIVER_TRACE_CBID_##n, CUPTI_DRIVER_TRACE_CBID_##n##_##v,
static const CUpti_CallbackId copy_cbids[] = {
	GT_CB2(cuMemcpyHtoD_v2, ptds) GT_CB2(cuMemcpyDtoH_v2, ptds) GT_CB2(cuMemcpyDtoD_v2, ptds)
	GT_CB2(cuMemcpyHtoDAsync_v2, ptsz) GT_CB2(cuMemcpyDtoHAsync_v2, ptsz) GT_CB2(cuMemcpyDtoDAsync_v2, ptsz)
	GT_CB2(cuMemcpy, ptds) GT_CB2(cuMemcpyAsync, ptsz) GT_CB2(cuMemcpyPeer, ptds) GT_CB2(cuMemcpyPeerAsync, ptsz)
	GT_CB2(cuMemcpy2D_v2, ptds) GT_CB2(cuMemcpy2DUnaligned_v2, ptds) GT_CB2(cuMemcpy2DAsync_v2, ptsz)
	GT_CB2(cuMemcpy3D_v2, ptds) GT_CB2(cuMemcpy3DAsync_v2, ptsz) GT_CB2(cuMemcpy3DPeer, ptds)
	GT_CB2(cuMemcpy3DPeerAsync, ptsz) GT_CB2(cuMemcpyHtoA_v2, ptds) GT_CB2(cuMemcpyAtoH_v2, ptds)
	GT_CB2(cuMemcpyDtoA_v2, ptds) GT_CB2(cuMemcpyAtoD_v2, ptds) GT_CB2(cuMemcpyAtoA_v2, ptds)
	GT_CB2(cuMemcpyHtoAAsync_v2, ptsz) GT_CB2(cuMemcpyAtoHAsync_v2, ptsz)};
static const CUpti_CallbackId memset_cbids[] = {
	GT_CB2(cuMemsetD8_v2, ptds) GT_CB2(cuMemsetD16_v2, ptds) GT_CB2(cuMemsetD32_v2, ptds)
	GT_CB2(cuMemsetD2D8_v2, ptds) GT_CB2(cuMemsetD2D16_v2, ptds) GT_CB2(cuMemsetD2D32_v2, ptds)
	GT_CB2(cuMemsetD8Async, ptsz) GT_CB2(cuMemsetD16Async, ptsz) GT_CB2(cuMemsetD32Async, ptsz)
	GT_CB2(cuMemsetD2D8Async, ptsz) GT_CB2(cuMemsetD2D16Async, ptsz) GT_CB2(cuMemsetD2D32Async, ptsz)};
#undef GT_CB2

/* API records and GPU copies (memsets) both recorded: the copies' (memsets') callbacks, for their ids. */
static void enable_copies(unsigned tr)
{
	if (!(tr & GT_TR_API))
		return;
	if (tr & GT_TR_MEMCPY)
		for (size_t i = 0; i < sizeof(copy_cbids) / sizeof(copy_cbids[0]); i++)
			enable_cb(CUPTI_CB_DOMAIN_DRIVER_API, copy_cbids[i]);
	if (tr & GT_TR_MEMSET)
		for (size_t i = 0; i < sizeof(memset_cbids) / sizeof(memset_cbids[0]); i++)
			enable_cb(CUPTI_CB_DOMAIN_DRIVER_API, memset_cbids[i]);
}

/* A client's callbacks: the launches if it wants them, and its own ids. */
static void enable_client(const struct gt_cupti_client *c)
{
	if (c->launches)
		enable_launches();
	if (!c->ids_wanted || c->ids_wanted())
		for (size_t i = 0; i < c->nids; i++)
			enable_cb(c->ids[i].domain, c->ids[i].id);
}

/* No client turned kernel records off (range metrics per kernel: tap/rmetrics.h). */
static int kernel_records_ok(void)
{
	for (int i = 0; i < GT_CUPTI_NSLOTS; i++) {
		const struct gt_cupti_client *c = client(i);
		if (c && c->kernel_records_ok && !c->kernel_records_ok())
			return 0;
	}
	return 1;
}

static int client_wanted(const struct gt_cupti_client *c)
{
	return c && c->wanted && c->wanted();
}

static int runtime_is_shared(void)
{
	return gt_cudart_loaded(NULL, 0);
}

/* libcupti and its functions, once: 0, or -1 after one warning and a note in the trace. */
static int load_cupti(void)
{
	static int failed;
	if (C.lib)
		return 0;
	if (failed)
		return -1;
	failed = 1;
	uint64_t tl = gt_now_ns();
	void *lib = gt_cupti_open(NULL, 0);
	if (!lib) {
		gt_warn("CUPTI (libcupti.so.13 or .12) not found: GPU activity is not recorded; host-side metrics "
			"are (set CUDA_HOME to the toolkit that has CUPTI)");
		gt_tap_note(GT_NOTE_CUPTI_MISSING, 0, 0);
		return -1;
	}
	int missing = 0;
#define GT_CUPTI_LOAD(n)                                                                           \
	C.n = (__typeof__(&n))gt_real_dlsym(lib, #n);                                              \
	if (!C.n)                                                                                  \
		missing = 1;
	GT_CUPTI_FNS(GT_CUPTI_LOAD)
#undef GT_CUPTI_LOAD
	if (missing) {
		gt_warn("the CUPTI library found lacks functions gputap needs: GPU activity is not recorded");
		gt_tap_note(GT_NOTE_CUPTI_MISSING, 1, 0);
		return -1;
	}
	C.reg_ts = (__typeof__(&cuptiActivityRegisterTimestampCallback))gt_real_dlsym(
		lib, "cuptiActivityRegisterTimestampCallback");
	C.lib = lib;
	C.load_ns = gt_now_ns() - tl;
	failed = 0;
	return 0;
}

/* gputap's own cuptiSubscribe (not taken for another client's by the interposer below). */
static CUptiResult own_subscribe(CUpti_SubscriberHandle *h)
{
	atomic_store(&C.in_own_subscribe, 1);
	CUptiResult r = C.cuptiSubscribe(h, (CUpti_CallbackFunc)on_callback, NULL);
	atomic_store(&C.in_own_subscribe, 0);
	return r;
}

static int start_cupti(void)
{
	unsigned tr = gt_tap.trace;
	int gpu = (tr & GT_TR_GPU) != 0;
	/* A shared CUDA runtime is interposed by name; only a static one needs the runtime callbacks,
	 * and a subscribed CUPTI then checks every runtime call (~5 % of a 4 µs launch on an H100):
	 * by default only when API records are wanted (CUPTI is subscribed for them anyway).  Off,
	 * its copies are counted as the driver calls they make, and the trace says so. */
	int rtcb = gt_tap.cfg.rt_callbacks;
	int static_rt = !runtime_is_shared();
	if (static_rt && !(rtcb > 0 || (rtcb < 0 && (tr & GT_TR_API)))) {
		static _Atomic int noted;
		if (!atomic_exchange(&noted, 1))
			gt_tap_note(GT_NOTE_STATIC_RUNTIME, 0, 0);
		static_rt = 0;
	}
	/* the clients, in slot order: each reads its settings, then says whether it wants callbacks */
	int want[GT_CUPTI_NSLOTS], any = 0;
	for (int i = 0; i < GT_CUPTI_NSLOTS; i++) {
		const struct gt_cupti_client *c = client(i);
		if (c && c->setup)
			c->setup();
		want[i] = client_wanted(c);
		any |= want[i];
	}
	/* launch callbacks for capture windows: a place to finalize */
	int windows = gpu && atomic_load(&K.windows);
	if (!gpu && !static_rt && !windows && !any)
		return 0;
	if (load_cupti() < 0)
		return -1;

	CUptiResult sr = CUPTI_SUCCESS;
	if (!static_rt && !windows && !any)
		goto activity;
	sr = own_subscribe(&C.sub);
	if (sr == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		/* with windows, the window that could not start says it (its name in the trace, one
		 * warning): other windows may have recorded in full, so no "no GPU activity" note */
		if (!atomic_load(&K.windows)) {
			gt_warn("another CUPTI client (nsys, ncu, or a profiler inside the program) is attached to this "
				"process: gputap records no GPU activity; host-side metrics and API records go on");
			gt_tap_note(GT_NOTE_CUPTI_BUSY, 0, (int32_t)sr);
		}
		return -EBUSY;
	}
	if (sr == CUPTI_SUCCESS) {
		C.subscribed = 1;
		if (static_rt) {
			enable_cb(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
			enable_cb(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
			enable_cb(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000);
			enable_cb(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000);
		}
		/* correlation ids for the launches, copies and memsets only (whole domains cost too much) */
		if (windows)
			enable_launches();
		enable_copies(tr);
		for (int i = 0; i < GT_CUPTI_NSLOTS; i++) {
			const struct gt_cupti_client *c = client(i);
			if (want[i] && (!c->subscribed || c->subscribed(C.lib) == 0))
				enable_client(c);
		}
	} else {
		const char *msg = "?";
		C.cuptiGetResultString(sr, &msg);
		char off[160] = "";
		for (int i = 0; i < GT_CUPTI_NSLOTS; i++) {
			const struct gt_cupti_client *c = client(i);
			if (want[i] && c->off)
				strncat(off, c->off, sizeof(off) - strlen(off) - 1);
		}
		gt_warn("cuptiSubscribe failed (%s): statically linked cudaMemcpy calls are not counted%s", msg, off);
		atomic_store(&gt_tap.rm_active, 0);
	}
activity:
	if (!gpu)
		return 0;
	if (!C.reg_ts || C.reg_ts(ts_realtime) != CUPTI_SUCCESS) {
		uint64_t c = 0;
		C.cuptiGetTimestamp(&c);
		C.ts_offset = (int64_t)gt_now_ns() - (int64_t)c;
	}
	if (bufs_map() < 0) {
		gt_warn("cannot reserve CUPTI's activity buffers (%u x %u KiB): GPU activity is not recorded", gt_tap.cupti_nbufs,
			gt_tap.cupti_buf_bytes >> 10);
		gt_tap_note(GT_NOTE_CUPTI_REFUSED, -1, 0);
		return -1;
	}
	CUptiResult rr = C.cuptiActivityRegisterCallbacks(buf_request, buf_complete);
	if (rr != CUPTI_SUCCESS) {
		const char *msg = "?";
		C.cuptiGetResultString(rr, &msg);
		gt_warn("CUPTI refused activity buffers (%s): GPU activity is not recorded", msg);
		gt_tap_note(GT_NOTE_CUPTI_REFUSED, -1, (int32_t)rr);
		return -1;
	}
	static const struct {
		unsigned bit;
		CUpti_ActivityKind kind;
		const char *what;
	} kinds[] = {
		{GT_TR_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels"},
		{GT_TR_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY, "copies"},
		{GT_TR_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, "peer copies"},
		{GT_TR_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET, "memsets"},
		{GT_TR_MEMORY, CUPTI_ACTIVITY_KIND_MEMORY2, "memory allocations"},
	};
	int enabled = 0, wanted = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(tr & kinds[i].bit))
			continue;
		/* range metrics replay kernels: no kernel records then (tap/rmetrics.h) */
		if (kinds[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && !kernel_records_ok())
			continue;
		wanted++;
		CUptiResult er = C.cuptiActivityEnable(kinds[i].kind);
		if (er == CUPTI_SUCCESS) {
			enabled++;
			continue;
		}
		const char *msg = "?";
		C.cuptiGetResultString(er, &msg);
		gt_warn("CUPTI refused to record %s (%s): the trace has none", kinds[i].what, msg);
		gt_tap_note(GT_NOTE_CUPTI_REFUSED, (int32_t)kinds[i].kind, (int32_t)er);
	}
	if (wanted && !enabled)
		return -1;
	atomic_store(&gt_tap.cupti_active, 1);
	return 0;
}

int gt_cupti_start(void)
{
	if (C.started || atomic_load(&C.yielded))
		return atomic_load(&C.yielded) ? -1 : 0;
	int rc = start_cupti();
	if (rc == 0)
		C.started = 1;
	return rc;
}

void gt_cupti_capture_windows(void)
{
	atomic_store(&K.windows, 1);
}

int gt_cupti_capture_open(void)
{
	atomic_store(&K.finalize, 0);
	atomic_store(&K.kernels, 0);
	int n = atomic_load(&K.nspans);
	if (n < GT_CAP_SPANS) {
		atomic_store(&K.lo[n], atomic_load(&K.last_corr) + 1);
		atomic_store(&K.hi[n], UINT64_MAX);
		atomic_store_explicit(&K.nspans, n + 1, memory_order_release);
	} else {
		atomic_store(&K.hi[n - 1], UINT64_MAX); /* out of spans: the last one stretches */
	}
	if (atomic_load(&C.yielded))
		return -1;
	if (!C.cuinit)
		return 0; /* CUPTI starts at cuInit, the window being open */
	pthread_mutex_lock(&K.mu);
	uint64_t t0 = gt_now_ns();
	int was = C.started;
	int rc = gt_cupti_start();
	if (!was && rc == 0)
		gt_info("CUPTI started for a capture window (%.3f ms; loading the library %.3f ms of it)",
			(double)(gt_now_ns() - t0) / 1e6, (double)C.load_ns / 1e6);
	C.load_ns = 0; /* loaded once: later windows only start it */
	pthread_mutex_unlock(&K.mu);
	return rc;
}

void gt_cupti_capture_close(void)
{
	int n = atomic_load(&K.nspans);
	if (n > 0)
		atomic_store(&K.hi[n - 1], atomic_load(&K.last_corr));
}

uint64_t gt_cupti_capture_flush(void)
{
	pthread_mutex_lock(&K.mu);
	/* a default flush: only buffers whose records are all complete (a forced one would hand over
	 * a kernel still running, with no end time, and it would never come again) */
	if (C.started && atomic_load(&gt_tap.cupti_active))
		C.cuptiActivityFlushAll(0);
	pthread_mutex_unlock(&K.mu);
	return atomic_load(&K.kernels);
}

void gt_cupti_capture_request_finalize(void)
{
	if (C.started && C.subscribed)
		atomic_store(&K.finalize, 1);
}

static void capture_finalize(void)
{
	if (pthread_mutex_trylock(&K.mu) != 0)
		return; /* the writer is flushing: the next callback exit tries again */
	if (atomic_exchange(&K.finalize, 0) && C.started) {
		int saved = gt_tls.guard;
		gt_tls.guard = 1;
		if (atomic_load(&gt_tap.cupti_active)) {
			C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
			static const CUpti_ActivityKind kinds[] = {
				CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
				CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2};
			for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
				C.cuptiActivityDisable(kinds[i]);
		}
		uint64_t t0 = gt_now_ns();
		CUptiResult r = C.cuptiFinalize();
		gt_info("CUPTI finalized after a capture window (%.3f ms)", (double)(gt_now_ns() - t0) / 1e6);
		if (r != CUPTI_SUCCESS) {
			const char *msg = "?";
			C.cuptiGetResultString(r, &msg);
			gt_warn("cuptiFinalize failed after a capture window (%s): CUPTI stays on, at its cost", msg);
		} else {
			C.started = 0;
			C.subscribed = 0;
			atomic_store(&gt_tap.cupti_active, 0);
			uint64_t m = atomic_load(&max_corr), l = atomic_load(&K.last_corr);
			atomic_store(&K.era_base, m > l ? m : l); /* the next session counts on */
		}
		gt_tls.guard = saved;
	}
	pthread_mutex_unlock(&K.mu);
}

void gt_cupti_tick(void)
{
	if (!atomic_load(&gt_tap.cupti_active) || atomic_load(&C.yielded))
		return;
	uint64_t now = gt_now_ns();
	if (now - B.last_flush_ns < 100000000ull)
		return;
	B.last_flush_ns = now;
	/* A default flush hands over every buffer whose records are all complete, full or not (what
	 * CUPTI recommends doing periodically); a killed process then loses ~100 ms of GPU records. */
	gt_cupti_capture_flush();
}

void gt_cupti_flush(void)
{
	if (atomic_load(&gt_tap.cupti_active) && C.cuptiActivityFlushAll)
		C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void gt_cupti_stop_for_other_client(void)
{
	if (atomic_exchange(&C.yielded, 1))
		return;
	gt_warn("another CUPTI client (e.g. torch.profiler) is starting in this process: gputap hands CUPTI "
		"over to it and stops recording GPU activity; host-side metrics and API records go on");
	gt_tap_note(GT_NOTE_CUPTI_HANDED_OVER, 0, 0);
	/* what the clients gathered so far is written (range metrics decoded, PC samples) */
	for (int i = 0; i < GT_CUPTI_NSLOTS; i++) {
		const struct gt_cupti_client *c = client(i);
		if (c && c->handed_over)
			c->handed_over();
	}
	if (atomic_load(&gt_tap.cupti_active)) {
		C.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
		C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY2);
		C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
		C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
		atomic_store(&gt_tap.cupti_active, 0);
	}
	if (C.subscribed) {
		C.cuptiUnsubscribe(C.sub);
		C.subscribed = 0;
	}
}

/*
 * A CUPTI client inside the program (torch.profiler's Kineto) subscribes
 * through this name: give CUPTI up first so that it works, then let it in.
 */
GT_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
					      void *userdata)
{
	__typeof__(&cuptiSubscribe) real = C.cuptiSubscribe;
	if (!real)
		real = (__typeof__(&cuptiSubscribe))gt_real_dlsym(RTLD_NEXT, "cuptiSubscribe");
	if (!real)
		return CUPTI_ERROR_NOT_INITIALIZED;
	/* only when gputap holds CUPTI now: outside capture windows (CUPTI not loaded yet, or finalized
	 * after a window) the program's client gets it, and a window that opens meanwhile records
	 * host-side calls only, saying why */
	if (!atomic_load(&C.in_own_subscribe) && (C.subscribed || atomic_load(&gt_tap.cupti_active)))
		gt_cupti_stop_for_other_client();
	return real(subscriber, callback, userdata);
}

int gt_cupti_attach(enum gt_cupti_slot slot)
{
	const struct gt_cupti_client *c = (unsigned)slot < GT_CUPTI_NSLOTS ? client(slot) : NULL;
	if (!c || atomic_load(&C.yielded))
		return -1;
	if (!C.cuinit)
		return 0; /* CUPTI starts at cuInit, the client wanted by then */
	if (!C.started || !C.lib) { /* started with nothing to do: again, for this client */
		C.started = 0;
		return gt_cupti_start();
	}
	if (!C.subscribed) {
		if (own_subscribe(&C.sub) != CUPTI_SUCCESS)
			return -1;
		C.subscribed = 1;
	}
	if (c->subscribed && c->subscribed(C.lib) < 0)
		return -1;
	enable_client(c);
	return 0;
}

void gt_cupti_kernel_records(int on)
{
	if (!atomic_load(&gt_tap.cupti_active) || !(gt_tap.trace & GT_TR_KERNEL))
		return;
	if (on)
		C.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	else
		C.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

int gt_cupti_launch_callbacks(int on)
{
	if (!C.subscribed || client_wanted(client(GT_CUPTI_RMETRICS))) /* range metrics need every launch */
		return -1;
	for (size_t i = 0; i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
		if (C.cuptiEnableCallback(on ? 1 : 0, C.sub, CUPTI_CB_DOMAIN_DRIVER_API, launch_cbids[i]) != CUPTI_SUCCESS)
			return -1;
	return 0;
}

void gt_tap_after_cuinit(void)
{
	static _Atomic int started;
	if (!atomic_load(&gt_tap.on) || atomic_exchange(&started, 1))
		return;
	C.cuinit = 1;
	/* no window open: CUPTI is loaded and set up when one opens, not before.  Its one-time set-up
	 * (the first cuptiSubscribe, 12-16 ms on an H100) would save a window's start that pause, but
	 * CUPTI set up and idle makes every launch 1-5 % dearer until a finalize (bench/launch/winstart.cu
	 * state), which over the run outside the windows costs more than the pause */
	if (atomic_load(&K.windows) && !atomic_load(&gt_tap.cap_live))
		return;
	pthread_mutex_lock(&K.mu);
	gt_cupti_start();
	pthread_mutex_unlock(&K.mu);
}

GT_EXPORT int InitializeInjection(void);
GT_EXPORT int InitializeInjection(void)
{
	gt_tap_init();
	gt_tap_touch(); /* cuInit loads CUPTI's injection: this process uses CUDA */
	int saved = gt_tls.guard;
	gt_tls.guard++;
	gt_tap_after_cuinit();
	gt_tls.guard = saved;
	return 1;
}
