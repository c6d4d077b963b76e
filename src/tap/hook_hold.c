/*
 * Launch hold inside libgputap.so: the process's queue (hold.c) wired to the
 * real driver, to the hooks, to the stubs of the calls that have no hook
 * (holdstub.c) and to the record stream.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "tap/hold.h"
#include "tap/holdstub.h"
#include "tap/tap.h"

struct gt_hold gt_hold_q;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static _Atomic int ready;  /* the queue is set up */
static _Atomic int unsafe; /* a call could not be given a stub: hold nothing */
static uint32_t key_id[GT_HOLD_NREASONS];
static _Atomic int nfail_msgs;

static uint64_t take_corr(void)
{
	uint64_t c = gt_tls.corr;
	gt_tls.corr = 0;
	return c;
}

static int recording(void)
{
	return atomic_load_explicit(&gt_tap.on, memory_order_relaxed) && gt_tap.trace;
}

static void on_released(const struct gt_hold_entry *e, CUresult r, uint64_t corr, uint64_t batch, uint64_t issued)
{
	if (!atomic_load_explicit(&gt_tap.on, memory_order_relaxed))
		return;
	gt_tap_api_record(e->api, e->tid, e->t0, e->queued_ns, 0, 0, -1, 0, corr, GT_API_HELD);
	if (!recording())
		return;
	struct gt_rec_hold h;
	memset(&h, 0, sizeof(h));
	h.h.type = GT_REC_HOLD;
	h.h.size = sizeof(h);
	h.h.tid = e->tid;
	h.kind = GT_HOLD_REC_LAUNCH;
	h.result = (int32_t)r;
	h.start_ns = e->queued_ns;
	h.end_ns = issued;
	h.corr_id = corr;
	h.batch = batch;
	gt_tap_put(&h, sizeof(h));
}

static void on_batch(enum gt_hold_reason why, uint32_t name_id, uint32_t count, uint64_t start, uint64_t end,
		     CUresult first, uint64_t batch)
{
	if (!recording())
		return;
	struct gt_rec_hold h;
	memset(&h, 0, sizeof(h));
	h.h.type = GT_REC_HOLD;
	h.h.size = sizeof(h);
	h.kind = GT_HOLD_REC_RELEASE;
	h.result = (int32_t)first;
	h.start_ns = start;
	h.end_ns = end;
	h.batch = batch;
	h.count = count;
	h.reason_id = key_id[why];
	h.api_id = name_id;
	gt_tap_put(&h, sizeof(h));
}

static void on_failed(const struct gt_hold_entry *e, CUresult r, const char *name)
{
	(void)e;
	if (atomic_fetch_add(&nfail_msgs, 1) < 5)
		gt_warn("a held launch of %s failed when it was issued (CUDA error %d); the call that released it "
			"returns the error",
			name, (int)r);
}

#define GT_HOLD_REAL(field, sym) d.field = (__typeof__(d.field))gt_real_driver(sym)

static void start(void)
{
	if (atomic_load(&unsafe))
		return;
	struct gt_hold_drv d;
	memset(&d, 0, sizeof(d));
	GT_HOLD_REAL(ctx_get_current, "cuCtxGetCurrent");
	GT_HOLD_REAL(ctx_push, "cuCtxPushCurrent_v2");
	GT_HOLD_REAL(ctx_pop, "cuCtxPopCurrent_v2");
	GT_HOLD_REAL(ctx_get_device, "cuCtxGetDevice");
	GT_HOLD_REAL(device_get_attribute, "cuDeviceGetAttribute");
	GT_HOLD_REAL(func_get_param_info, "cuFuncGetParamInfo");
	GT_HOLD_REAL(kernel_get_param_info, "cuKernelGetParamInfo");
	GT_HOLD_REAL(func_get_attribute, "cuFuncGetAttribute");
	GT_HOLD_REAL(kernel_get_attribute, "cuKernelGetAttribute");
	GT_HOLD_REAL(kernel_get_function, "cuKernelGetFunction");
	GT_HOLD_REAL(func_get_name, "cuFuncGetName");
	GT_HOLD_REAL(kernel_get_name, "cuKernelGetName");
	GT_HOLD_REAL(stream_is_capturing, "cuStreamIsCapturing");
	GT_HOLD_REAL(occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
	struct gt_hold_cb cb;
	memset(&cb, 0, sizeof(cb));
	cb.now_ns = gt_now_ns;
	cb.take_corr = take_corr;
	cb.released = on_released;
	cb.batch = on_batch;
	cb.failed = on_failed;
	const struct gt_tap_config *c = &gt_tap.cfg;
	struct gt_hold_config hc = {c->hold, c->hold_max, c->hold_timeout_us, c->hold_kernels, 1};
	char err[256];
	if (gt_hold_init(&gt_hold_q, &hc, &d, &cb, err, sizeof(err)) < 0) {
		gt_warn("launch hold is off: %s", err);
		return;
	}
	if (!d.func_get_param_info && !d.kernel_get_param_info)
		gt_warn("this driver does not report kernel parameter layouts (CUDA 12.4 or newer does): only "
			"launches that pass their arguments through `extra` are held");
	atomic_store(&ready, 1);
	gt_info("launch hold: batches of %ld, at most %ld queued, released after %ld us", gt_hold_q.cfg.n,
		gt_hold_q.cfg.max, gt_hold_q.cfg.timeout_us);
}

static struct gt_hold *queue(void)
{
	if (!atomic_load_explicit(&gt_tap.hold_armed, memory_order_acquire))
		return NULL;
	if (!atomic_load_explicit(&ready, memory_order_acquire))
		pthread_once(&start_once, start);
	return atomic_load_explicit(&ready, memory_order_acquire) ? &gt_hold_q : NULL;
}

/* ---- fork ---- */
static void fork_prepare(void)
{
	if (atomic_load(&ready))
		gt_hold_fork_prepare(&gt_hold_q);
}
static void fork_parent(void)
{
	if (atomic_load(&ready))
		gt_hold_fork_parent(&gt_hold_q);
}
static void fork_child(void)
{
	if (atomic_load(&ready))
		gt_hold_fork_child(&gt_hold_q);
	atomic_store(&gt_tap.hold_armed, 0);
	gt_tap_stamp_update();
}

/* ---- the gates ---- */

void gt_hold_gate_hook(unsigned cls, uint32_t name_id)
{
	if (atomic_load_explicit(&ready, memory_order_acquire))
		gt_hold_before(&gt_hold_q, (enum gt_hold_reason)cls, name_id);
}

static int stub_gate(unsigned cls, uint32_t name_id)
{
	if (!atomic_load_explicit(&ready, memory_order_acquire))
		return 0;
	gt_hold_before(&gt_hold_q, (enum gt_hold_reason)cls, name_id);
	return atomic_load_explicit(&gt_hold_q.pending, memory_order_relaxed) != 0;
}

static int stub_after(int r)
{
	return (int)gt_hold_after(&gt_hold_q, (CUresult)r);
}

/* A driver entry point: "cu" and a capital (cuMemcpy, not cudnnSetStream or cublasCreate),
 * and, for what dlsym found (it also finds other libraries' names, cuFileRead...), defined in
 * libcuda. */
static int driver_entry(const char *symbol, void *real, int from_dlsym)
{
	if (!symbol || strncmp(symbol, "cu", 2) != 0 || symbol[2] < 'A' || symbol[2] > 'Z')
		return 0;
	if (!from_dlsym)
		return 1;
	Dl_info di;
	if (!dladdr(real, &di) || !di.dli_fname)
		return 0;
	const char *base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	return strncmp(base, "libcuda.so", 10) == 0 || strncmp(base, "libcuda_", 8) == 0;
}

void *gt_hold_wrap(const char *symbol, void *real, int from_dlsym)
{
	if (!real || !atomic_load_explicit(&gt_tap.hold_armed, memory_order_acquire) ||
	    !driver_entry(symbol, real, from_dlsym))
		return real;
	enum gt_hold_reason cls = gt_hold_classify(symbol);
	if (cls == GT_HOLD_PASS)
		return real;
	uint32_t id = gt_tap.slots ? gt_strtab_intern(&gt_tap.strs, symbol, strlen(symbol)) : 0;
	void *stub = gt_hold_stub_for(real, cls, id);
	if (stub)
		return stub;
	if (!atomic_exchange(&unsafe, 1)) {
		gt_warn("more than %u driver entry points to watch: launch hold is off for the rest of the run",
			GT_HOLD_NSTUBS);
		if (atomic_load(&ready))
			gt_hold_close(&gt_hold_q); /* releases what is held; nothing more is */
	}
	return real;
}

void gt_hold_note_host(uint64_t ptr, uint64_t bytes)
{
	struct gt_hold *h = queue();
	if (h)
		gt_hold_add_range(h, ptr, bytes);
}

void gt_hold_forget_host(uint64_t ptr)
{
	if (atomic_load_explicit(&ready, memory_order_acquire))
		gt_hold_remove_range(&gt_hold_q, ptr);
}

/* ---- set-up and end ---- */

void gt_hold_setup(void)
{
	const struct gt_tap_config *c = &gt_tap.cfg;
	if (c->hold <= 0)
		return;
	if (!gt_hold_stubs_supported()) {
		gt_warn("GPUTAP_HOLD: launch hold is not available on this processor architecture (x86-64 only); "
			"launches run unchanged");
		return;
	}
	for (int i = 0; i < GT_HOLD_NREASONS; i++)
		key_id[i] = gt_strtab_intern(&gt_tap.strs, gt_hold_reason_keys[i], strlen(gt_hold_reason_keys[i]));
	gt_hook_driver_hold_setup();
	gt_hold_stub_ops.gate = stub_gate;
	gt_hold_stub_ops.after = stub_after;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atomic_store(&gt_tap.hold_armed, 1);
	gt_tap_stamp_update();
}

static void counter(const char *name, double v)
{
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	c.name_id = gt_strtab_intern(&gt_tap.strs, name, strlen(name));
	c.device = UINT32_MAX;
	c.ts_ns = gt_now_ns();
	c.value = v;
	gt_tap_put(&c, sizeof(c));
}

void gt_hold_finish(void)
{
	if (!atomic_load(&ready))
		return;
	struct gt_hold *h = &gt_hold_q;
	gt_hold_close(h);
	if (!atomic_load(&gt_tap.on))
		return;
	char name[96];
	counter("hold.batch", (double)h->cfg.n);
	counter("hold.max", (double)h->cfg.max);
	counter("hold.timeout_us", (double)h->cfg.timeout_us);
	counter("hold.held", (double)atomic_load(&h->st.held));
	counter("hold.not_held", (double)atomic_load(&h->st.passed));
	counter("hold.failed", (double)atomic_load(&h->st.failed));
	counter("hold.releases", (double)atomic_load(&h->st.batches));
	counter("hold.max_batch", (double)atomic_load(&h->st.max_batch));
	for (int i = 0; i < GT_HOLD_NREFUSALS; i++) {
		uint64_t v = atomic_load(&h->st.refused[i]);
		if (!v)
			continue;
		snprintf(name, sizeof(name), "hold.not_held.%s", gt_hold_refusal_keys[i]);
		counter(name, (double)v);
	}
	for (int i = 0; i < GT_HOLD_NREASONS; i++) {
		uint64_t v = atomic_load(&h->st.releases[i]);
		if (!v)
			continue;
		snprintf(name, sizeof(name), "hold.release.%s", gt_hold_reason_keys[i]);
		counter(name, (double)v);
	}
	if (atomic_load(&unsafe))
		counter("hold.off_stubs", 1);
}

/* ---- the launch hooks ---- */

static CUresult launch(struct gt_hold_call *c, int var, int active, int *held)
{
	c->per_thread = var & 1;
	c->by_name = !(var & GT_HOLD_VIA_POINTER);
	c->nested = !active;
	struct gt_slot *s = active ? gt_tap_slot() : NULL;
	c->tid = s ? s->tid : 0;
	int why;
	return gt_hold_launch(&gt_hold_q, c, held, &why);
}

CUresult gt_hold_cuLaunchKernel(void *real, int var, int active, uint64_t t0, int *held, CUfunction f,
				unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
				unsigned sm, CUstream s, void **kp, void **ex)
{
	*held = 0;
	if (!atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed))
		return ((gt_hold_pfn_kernel)real)(f, gx, gy, gz, bx, by, bz, sm, s, kp, ex);
	if (!queue())
		return ((gt_hold_pfn_kernel)real)(f, gx, gy, gz, bx, by, bz, sm, s, kp, ex);
	struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = real, .f = f, .grid = {gx, gy, gz},
				 .block = {bx, by, bz}, .smem = sm, .stream = s, .params = kp, .extra = ex,
				 .api = GT_API_cuLaunchKernel, .t0 = t0};
	return launch(&c, var, active, held);
}

CUresult gt_hold_cuLaunchKernelEx(void *real, int var, int active, uint64_t t0, int *held, const CUlaunchConfig *cf,
				  CUfunction f, void **kp, void **ex)
{
	*held = 0;
	if (!atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed) || !queue())
		return ((gt_hold_pfn_ex)real)(cf, f, kp, ex);
	struct gt_hold_call c = {.form = GT_HOLD_KERNEL_EX, .real = real, .f = f, .cfg = cf, .params = kp,
				 .extra = ex, .api = GT_API_cuLaunchKernelEx, .t0 = t0};
	return launch(&c, var, active, held);
}

CUresult gt_hold_cuLaunchCooperativeKernel(void *real, int var, int active, uint64_t t0, int *held, CUfunction f,
					   unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
					   unsigned bz, unsigned sm, CUstream s, void **kp)
{
	*held = 0;
	if (!atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed) || !queue())
		return ((gt_hold_pfn_coop)real)(f, gx, gy, gz, bx, by, bz, sm, s, kp);
	struct gt_hold_call c = {.form = GT_HOLD_COOP, .real = real, .f = f, .grid = {gx, gy, gz},
				 .block = {bx, by, bz}, .smem = sm, .stream = s, .params = kp,
				 .api = GT_API_cuLaunchCooperativeKernel, .t0 = t0};
	return launch(&c, var, active, held);
}
