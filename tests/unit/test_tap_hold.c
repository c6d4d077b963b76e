/*
 * Launch hold against a fake driver: the queue (order, bounds, the timer),
 * the release rules of the trigger table, the copy of every launch form's
 * arguments, the launches that are never held, errors at release, contexts,
 * and the stubs that carry calls without a hook of their own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tap/hold.h"
#include "tap/holdstub.h"
#include "test.h"

/* ---- the fake driver ---- */

#define NFUNC 8
#define LOGCAP 8192
#define PAYLOAD 40000

struct fake_fn {
	int kernel; /* a CUkernel handle (else CUfunction) */
	int nparams;
	size_t off[8], size[8];
	int max_threads, max_smem;
	const char *name;
	CUresult fail; /* what launching it returns */
	int no_layout;
};

struct logent {
	int form;
	CUfunction f;
	CUcontext ctx;
	CUstream stream;
	unsigned grid[3], block[3], smem;
	unsigned nattrs;
	CUlaunchAttribute attrs[4];
	size_t plen;
	unsigned char *payload;
};

static struct {
	struct fake_fn fn[NFUNC];
	struct logent log[LOGCAP];
	_Atomic int nlog;
	pthread_mutex_t mu;
	CUstream capturing;      /* a stream in capture */
	int pushes, pops;
	int occupancy;           /* blocks per SM */
	int fail_on;             /* a launch whose first int argument is this fails with fail_code */
	CUresult fail_code;
	int nbatches;
	enum gt_hold_reason last_why;
	uint64_t released, last_batch;
	CUresult last_first;
} F = {.mu = PTHREAD_MUTEX_INITIALIZER};

static __thread CUcontext cur_ctx;
static __thread CUcontext ctx_stack[8];
static __thread int ctx_depth;

#define CTX_A ((CUcontext)0xA000)
#define CTX_B ((CUcontext)0xB000)

static CUfunction fh(int i)
{
	return (CUfunction)(uintptr_t)(0x1000 + 16 * i);
}

static struct fake_fn *fn_of(CUfunction f)
{
	uintptr_t v = (uintptr_t)f;
	if (v < 0x1000 || (v - 0x1000) % 16 || (v - 0x1000) / 16 >= NFUNC)
		return NULL;
	return &F.fn[(v - 0x1000) / 16];
}

static CUresult CUDAAPI f_ctx_get_current(CUcontext *c)
{
	*c = ctx_depth ? ctx_stack[ctx_depth - 1] : cur_ctx;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_ctx_push(CUcontext c)
{
	ctx_stack[ctx_depth++] = c;
	F.pushes++;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_ctx_pop(CUcontext *c)
{
	*c = ctx_stack[--ctx_depth];
	F.pops++;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_ctx_get_device(CUdevice *d)
{
	*d = 0;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_dev_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = 1; break;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}
static CUresult param_info(CUfunction f, int kernel, size_t i, size_t *off, size_t *size)
{
	struct fake_fn *fn = fn_of(f);
	if (!fn || fn->kernel != kernel)
		return CUDA_ERROR_INVALID_HANDLE;
	if (fn->no_layout)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((int)i >= fn->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*off = fn->off[i];
	*size = fn->size[i];
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_func_param(CUfunction f, size_t i, size_t *o, size_t *s)
{
	return param_info(f, 0, i, o, s);
}
static CUresult CUDAAPI f_kernel_param(CUkernel k, size_t i, size_t *o, size_t *s)
{
	return param_info((CUfunction)k, 1, i, o, s);
}
static CUresult attr(CUfunction f, int kernel, CUfunction_attribute a, int *v)
{
	struct fake_fn *fn = fn_of(f);
	if (!fn || fn->kernel != kernel)
		return CUDA_ERROR_INVALID_HANDLE;
	if (a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
		*v = fn->max_threads;
	else if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
		*v = fn->max_smem;
	else
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_func_attr(int *v, CUfunction_attribute a, CUfunction f)
{
	return attr(f, 0, a, v);
}
static CUresult CUDAAPI f_kernel_attr(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	(void)d;
	return attr((CUfunction)k, 1, a, v);
}
static CUresult CUDAAPI f_kernel_func(CUfunction *out, CUkernel k)
{
	*out = (CUfunction)k;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_func_name(const char **n, CUfunction f)
{
	struct fake_fn *fn = fn_of(f);
	if (!fn || fn->kernel)
		return CUDA_ERROR_INVALID_HANDLE;
	*n = fn->name;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_kernel_name(const char **n, CUkernel k)
{
	struct fake_fn *fn = fn_of((CUfunction)k);
	if (!fn || !fn->kernel)
		return CUDA_ERROR_INVALID_HANDLE;
	*n = fn->name;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_capturing(CUstream s, CUstreamCaptureStatus *st)
{
	if (F.capturing && (s == NULL || s == CU_STREAM_LEGACY))
		return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	*st = F.capturing && s == F.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_occupancy(int *n, CUfunction f, int bs, size_t sm)
{
	(void)f;
	(void)bs;
	(void)sm;
	*n = F.occupancy;
	return CUDA_SUCCESS;
}

/* what the driver reads at the moment of the launch */
static struct logent *log_start(int form, CUfunction f, CUstream s)
{
	pthread_mutex_lock(&F.mu);
	int i = atomic_load(&F.nlog);
	struct logent *e = i < LOGCAP ? &F.log[i] : NULL;
	if (e) {
		memset(e, 0, sizeof(*e));
		e->form = form;
		e->f = f;
		e->stream = s;
		f_ctx_get_current(&e->ctx);
	}
	return e;
}
static void log_end(void)
{
	atomic_fetch_add(&F.nlog, 1);
	pthread_mutex_unlock(&F.mu);
}
static void read_args(struct logent *e, CUfunction f, void **kp, void **ex)
{
	struct fake_fn *fn = fn_of(f);
	if (kp && fn) {
		size_t total = 0;
		for (int i = 0; i < fn->nparams; i++)
			total += fn->size[i];
		e->payload = malloc(total ? total : 1);
		for (int i = 0; i < fn->nparams && kp[i]; i++) { /* the driver would refuse a NULL */
			memcpy(e->payload + e->plen, kp[i], fn->size[i]);
			e->plen += fn->size[i];
		}
	} else if (ex) {
		void *buf = NULL;
		size_t n = 0;
		for (int i = 0; ex[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (ex[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = ex[i + 1];
			if (ex[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				n = *(size_t *)ex[i + 1];
		}
		e->payload = malloc(n ? n : 1);
		memcpy(e->payload, buf, n);
		e->plen = n;
	}
}
static CUresult CUDAAPI fake_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				    unsigned bz, unsigned sm, CUstream s, void **kp, void **ex)
{
	struct logent *e = log_start(GT_HOLD_KERNEL, f, s);
	if (e) {
		unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
		memcpy(e->grid, g, sizeof(g));
		memcpy(e->block, b, sizeof(b));
		e->smem = sm;
		read_args(e, f, kp, ex);
	}
	int first = -1;
	if (e && e->plen >= 4)
		memcpy(&first, e->payload, 4);
	log_end();
	struct fake_fn *fn = fn_of(f);
	if (fn && F.fail_code && first == F.fail_on)
		return F.fail_code;
	return fn ? fn->fail : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult CUDAAPI fake_launch_ex(const CUlaunchConfig *c, CUfunction f, void **kp, void **ex)
{
	struct logent *e = log_start(GT_HOLD_KERNEL_EX, f, c->hStream);
	if (e) {
		unsigned g[3] = {c->gridDimX, c->gridDimY, c->gridDimZ}, b[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
		memcpy(e->grid, g, sizeof(g));
		memcpy(e->block, b, sizeof(b));
		e->smem = c->sharedMemBytes;
		e->nattrs = c->numAttrs;
		memcpy(e->attrs, c->attrs, (c->numAttrs < 4 ? c->numAttrs : 4) * sizeof(CUlaunchAttribute));
		read_args(e, f, kp, ex);
	}
	log_end();
	struct fake_fn *fn = fn_of(f);
	return fn ? fn->fail : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult CUDAAPI fake_launch_coop(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
					 unsigned by, unsigned bz, unsigned sm, CUstream s, void **kp)
{
	CUresult r = fake_launch(f, gx, gy, gz, bx, by, bz, sm, s, kp, NULL);
	F.log[atomic_load(&F.nlog) - 1].form = GT_HOLD_COOP;
	return r;
}

static void on_batch(enum gt_hold_reason why, uint32_t name_id, uint32_t count, uint64_t s, uint64_t e,
		     CUresult first, uint64_t batch)
{
	(void)name_id;
	(void)s;
	(void)e;
	F.nbatches++;
	F.last_why = why;
	F.released += count;
	F.last_batch = batch;
	F.last_first = first;
}

static struct gt_hold_drv fake_drv(void)
{
	struct gt_hold_drv d = {f_ctx_get_current, f_ctx_push,   f_ctx_pop,     f_ctx_get_device, f_dev_attr,
				f_func_param,      f_kernel_param, f_func_attr, f_kernel_attr,    f_kernel_func,
				f_func_name,       f_kernel_name,  f_capturing, f_occupancy};
	return d;
}

static void reset_fake(void)
{
	for (int i = 0; i < atomic_load(&F.nlog); i++)
		free(F.log[i].payload);
	atomic_store(&F.nlog, 0);
	memset(F.fn, 0, sizeof(F.fn));
	for (int i = 0; i < NFUNC; i++) {
		F.fn[i].max_threads = 1024;
		F.fn[i].max_smem = 48 * 1024;
		F.fn[i].name = "kern";
	}
	/* fn 0: (int, float*, long) */
	F.fn[0].nparams = 3;
	F.fn[0].off[0] = 0, F.fn[0].size[0] = 4;
	F.fn[0].off[1] = 8, F.fn[0].size[1] = 8;
	F.fn[0].off[2] = 16, F.fn[0].size[2] = 8;
	/* fn 1: a CUkernel handle taking (int) */
	F.fn[1].kernel = 1;
	F.fn[1].nparams = 1;
	F.fn[1].size[0] = 4;
	F.fn[1].name = "library_kernel";
	/* fn 4: fn 0 with a register-limited block size; fn 5: fn 0 without a layout */
	F.fn[4] = F.fn[0];
	F.fn[4].max_threads = 256;
	F.fn[5] = F.fn[0];
	F.fn[5].no_layout = 1;
	F.fail_on = -1;
	F.fail_code = CUDA_SUCCESS;
	F.capturing = NULL;
	F.pushes = F.pops = F.nbatches = 0;
	F.released = F.last_batch = 0;
	F.last_first = CUDA_SUCCESS;
	F.occupancy = 2;
	cur_ctx = CTX_A;
	ctx_depth = 0;
}

static int start(struct gt_hold *h, long n, long max, long timeout_us, int timer)
{
	reset_fake();
	struct gt_hold_config cfg = {n, max, timeout_us, NULL, timer};
	struct gt_hold_drv d = fake_drv();
	struct gt_hold_cb cb;
	memset(&cb, 0, sizeof(cb));
	cb.batch = on_batch;
	char err[128];
	return gt_hold_init(h, &cfg, &d, &cb, err, sizeof(err));
}

static void stop(struct gt_hold *h)
{
	gt_hold_close(h);
	gt_hold_free(h);
}

/* a cuLaunchKernel call of fn 0 with (v, ptr, v*10) from stack variables */
static CUresult launch0(struct gt_hold *h, int v, CUstream s, int *held)
{
	int a = v;
	float *p = (float *)(uintptr_t)(0x7000000 + 16u * (unsigned)v);
	long c = 10L * v;
	void *kp[3] = {&a, &p, &c};
	struct gt_hold_call call = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(0), .grid = {4, 1, 1},
				    .block = {128, 1, 1}, .stream = s, .params = kp};
	int why;
	CUresult r = gt_hold_launch(h, &call, held, &why);
	/* the caller reuses its stack at once */
	a = -1;
	p = NULL;
	c = -1;
	memset(kp, 0, sizeof(kp));
	return r;
}

static int payload_int(int i)
{
	int v;
	memcpy(&v, F.log[i].payload, 4);
	return v;
}

/* ---- the queue ---- */

TEST(hold_queue_order_batches_and_copies)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 4, 64, 1000000, 0), 0);
	int held;
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ_INT(launch0(&h, i, (CUstream)0x55, &held), CUDA_SUCCESS);
		ASSERT_EQ_INT(held, 1);
		/* released once 4 are queued, not before */
		ASSERT_EQ_INT(atomic_load(&F.nlog), (i + 1) / 4 * 4);
	}
	ASSERT_EQ_INT(atomic_load(&h.nq), 2);
	gt_hold_before(&h, GT_HOLD_COPY, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 10);
	ASSERT_EQ_INT(atomic_load(&h.nq), 0);
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ_INT(payload_int(i), i);
		uint64_t p, c;
		memcpy(&p, F.log[i].payload + 4, 8);
		memcpy(&c, F.log[i].payload + 12, 8);
		ASSERT_EQ_U64(p, 0x7000000u + 16u * (unsigned)i);
		ASSERT_EQ_U64(c, 10u * (unsigned)i);
		ASSERT(F.log[i].stream == (CUstream)0x55);
		ASSERT_EQ_INT(F.log[i].grid[0], 4);
		ASSERT_EQ_INT(F.log[i].block[0], 128);
	}
	ASSERT_EQ_INT(F.nbatches, 3);
	ASSERT_EQ_INT(F.last_why, GT_HOLD_COPY);
	ASSERT_EQ_U64(atomic_load(&h.st.releases[GT_HOLD_FULL]), 2);
	ASSERT_EQ_U64(atomic_load(&h.st.releases[GT_HOLD_COPY]), 1);
	ASSERT_EQ_U64(atomic_load(&h.st.held), 10);
	ASSERT_EQ_U64(atomic_load(&h.st.max_batch), 4);
	stop(&h);
}

TEST(hold_one_releases_every_launch_at_once)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 1, 64, 1000, 0), 0);
	int held;
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ_INT(launch0(&h, i, NULL, &held), CUDA_SUCCESS);
		ASSERT_EQ_INT(held, 1);
		ASSERT_EQ_INT(atomic_load(&F.nlog), i + 1);
		ASSERT_EQ_INT(payload_int(i), i);
	}
	ASSERT_EQ_U64(atomic_load(&h.st.held), 5);
	stop(&h);
}

TEST(hold_bound_by_argument_space)
{
	/* 32,000-byte arguments (a __grid_constant__ struct): the arena of 256 KiB takes 7 */
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 64, 64, 1000000, 0), 0);
	F.fn[2].nparams = 2;
	F.fn[2].size[0] = 32000;
	F.fn[2].off[1] = 32000;
	F.fn[2].size[1] = 4;
	static unsigned char big[32000];
	int held;
	for (int i = 0; i < 20; i++) {
		memset(big, i + 1, sizeof(big));
		int tail = 1000 + i;
		void *kp[2] = {big, &tail};
		struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(2),
					 .grid = {1, 1, 1}, .block = {32, 1, 1}, .params = kp};
		int why;
		ASSERT_EQ_INT(gt_hold_launch(&h, &c, &held, &why), CUDA_SUCCESS);
		ASSERT_EQ_INT(held, 1);
		memset(big, 0, sizeof(big));
	}
	gt_hold_release(&h, GT_HOLD_REQUEST, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 20);
	ASSERT(atomic_load(&h.st.releases[GT_HOLD_BYTES]) >= 2);
	for (int i = 0; i < 20; i++) {
		ASSERT_EQ_INT(F.log[i].plen, 32004);
		ASSERT_EQ_INT(F.log[i].payload[0], i + 1);
		ASSERT_EQ_INT(F.log[i].payload[31999], i + 1);
		int tail;
		memcpy(&tail, F.log[i].payload + 32000, 4);
		ASSERT_EQ_INT(tail, 1000 + i);
	}
	stop(&h);
}

TEST(hold_bound_by_queue_max)
{
	struct gt_hold h;
	/* a batch larger than the bound is cut to it */
	ASSERT_EQ_INT(start(&h, 500, 8, 1000000, 0), 0);
	ASSERT_EQ_INT(h.cfg.n, 8);
	int held;
	for (int i = 0; i < 17; i++)
		launch0(&h, i, NULL, &held);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 16);
	ASSERT_EQ_INT(atomic_load(&h.nq), 1);
	stop(&h);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 17); /* close releases */
	ASSERT_EQ_U64(atomic_load(&h.st.releases[GT_HOLD_EXIT]), 1);
}

TEST(hold_timer_by_hand)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 16, 64, 500, 0), 0);
	int held;
	launch0(&h, 1, NULL, &held);
	uint64_t q = h.q[0].mono_ns;
	ASSERT_EQ_INT(gt_hold_tick(&h, q + 499000), 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 0);
	ASSERT_EQ_INT(gt_hold_tick(&h, q + 500000), 1);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 1);
	ASSERT_EQ_U64(atomic_load(&h.st.releases[GT_HOLD_TIMER]), 1);
	ASSERT_EQ_INT(gt_hold_tick(&h, q + 10000000), 0); /* empty */
	stop(&h);
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

TEST(hold_timer_thread_releases_a_waiting_launch)
{
	/* a program that spins on memory a held kernel would write is delayed, never stuck */
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 64, 64, 2000, 1), 0);
	for (int round = 0; round < 3; round++) {
		int held;
		uint64_t t0 = mono();
		launch0(&h, round, NULL, &held);
		ASSERT_EQ_INT(held, 1);
		while (atomic_load(&F.nlog) == round && mono() - t0 < 2000000000ull)
			usleep(100);
		uint64_t waited = mono() - t0;
		ASSERT_EQ_INT(atomic_load(&F.nlog), round + 1);
		ASSERT(waited >= 1900000u);    /* not before the timeout */
		ASSERT(waited < 1000000000u);  /* and soon after it */
	}
	ASSERT_EQ_U64(atomic_load(&h.st.releases[GT_HOLD_TIMER]), 3);
	stop(&h);
}

/* ---- every launch form ---- */

TEST(hold_extra_launch_copies_the_buffer)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held, why;
	for (int i = 0; i < 3; i++) {
		unsigned char buf[24];
		memset(buf, 0x40 + i, sizeof(buf));
		size_t size = sizeof(buf);
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
				 CU_LAUNCH_PARAM_END};
		struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(0),
					 .grid = {1, 1, 1}, .block = {1, 1, 1}, .extra = extra};
		ASSERT_EQ_INT(gt_hold_launch(&h, &c, &held, &why), CUDA_SUCCESS);
		ASSERT_EQ_INT(held, 1);
		memset(buf, 0, sizeof(buf));
		size = 0;
		extra[1] = NULL;
	}
	gt_hold_before(&h, GT_HOLD_SYNC, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 3);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ_INT(F.log[i].plen, 24);
		ASSERT_EQ_INT(F.log[i].payload[0], 0x40 + i);
		ASSERT_EQ_INT(F.log[i].payload[23], 0x40 + i);
	}
	/* a key this build does not know: issued at once, after what was held */
	launch0(&h, 7, NULL, &held);
	unsigned char buf[8] = {0};
	size_t size = 8;
	void *odd[] = {(void *)(uintptr_t)0x77, NULL, CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
		       CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
	struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(0),
				 .grid = {1, 1, 1}, .block = {1, 1, 1}, .extra = odd};
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(held, 0);
	ASSERT_EQ_INT(why, GT_HOLD_NO_ARGS);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 5);
	ASSERT_EQ_INT(payload_int(3), 7);
	/* a buffer of another size than the parameters (the driver says LAUNCH_OUT_OF_RESOURCES) */
	unsigned char pad[32] = {0};
	size = 32;
	void *wrong[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, pad, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
	c.extra = wrong;
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(why, GT_HOLD_NO_CHECK);
	/* no layout from the driver: the size cannot be checked */
	size = 24;
	c.f = fh(5);
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(why, GT_HOLD_NO_LAYOUT);
	stop(&h);
}

TEST(hold_launch_ex_copies_config_and_attributes)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held, why;
	for (int i = 0; i < 2; i++) {
		CUlaunchAttribute at[2];
		memset(at, 0, sizeof(at));
		at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
		at[0].value.priority = 3 + i;
		at[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		at[1].value.clusterDim.x = 2;
		at[1].value.clusterDim.y = 1;
		at[1].value.clusterDim.z = 1;
		CUlaunchConfig cfg = {8, 1, 1, 64, 1, 1, 256, (CUstream)0x99, at, 2};
		int a = 50 + i;
		float *p = NULL;
		long l = 0;
		void *kp[3] = {&a, &p, &l};
		struct gt_hold_call c = {.form = GT_HOLD_KERNEL_EX, .real = (void *)fake_launch_ex, .f = fh(0),
					 .cfg = &cfg, .params = kp};
		ASSERT_EQ_INT(gt_hold_launch(&h, &c, &held, &why), CUDA_SUCCESS);
		ASSERT_EQ_INT(held, 1);
		memset(at, 0xff, sizeof(at));
		memset(&cfg, 0, sizeof(cfg));
		a = -1;
	}
	gt_hold_before(&h, GT_HOLD_EVENT, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 2);
	for (int i = 0; i < 2; i++) {
		struct logent *e = &F.log[i];
		ASSERT_EQ_INT(e->form, GT_HOLD_KERNEL_EX);
		ASSERT_EQ_INT(e->grid[0], 8);
		ASSERT_EQ_INT(e->block[0], 64);
		ASSERT_EQ_INT(e->smem, 256);
		ASSERT(e->stream == (CUstream)0x99);
		ASSERT_EQ_INT(e->nattrs, 2);
		ASSERT_EQ_INT(e->attrs[0].id, CU_LAUNCH_ATTRIBUTE_PRIORITY);
		ASSERT_EQ_INT(e->attrs[0].value.priority, 3 + i);
		ASSERT_EQ_INT(e->attrs[1].value.clusterDim.x, 2);
		ASSERT_EQ_INT(payload_int(i), 50 + i);
	}
	/* attributes that are not held */
	static const int refused[] = {CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT,
				      CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE,
				      CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, 99};
	for (size_t k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		CUlaunchAttribute at;
		memset(&at, 0, sizeof(at));
		at.id = (CUlaunchAttributeID)refused[k];
		CUlaunchConfig cfg = {1, 1, 1, 32, 1, 1, 0, NULL, &at, 1};
		int a = 0;
		long a8 = 0, b8 = 0;
		void *kp[3] = {&a, &a8, &b8};
		struct gt_hold_call c = {.form = GT_HOLD_KERNEL_EX, .real = (void *)fake_launch_ex, .f = fh(0),
					 .cfg = &cfg, .params = kp};
		gt_hold_launch(&h, &c, &held, &why);
		ASSERT_EQ_INT(held, 0);
		ASSERT_EQ_INT(why, GT_HOLD_NO_ATTRIBUTE);
	}
	/* a cluster that does not divide the grid would fail: not held, the driver answers */
	CUlaunchAttribute at;
	memset(&at, 0, sizeof(at));
	at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at.value.clusterDim.x = 3;
	at.value.clusterDim.y = at.value.clusterDim.z = 1;
	CUlaunchConfig cfg = {8, 1, 1, 32, 1, 1, 0, NULL, &at, 1};
	int a = 0;
	long a8 = 0, b8 = 0;
	void *kp[3] = {&a, &a8, &b8};
	struct gt_hold_call c = {.form = GT_HOLD_KERNEL_EX, .real = (void *)fake_launch_ex, .f = fh(0), .cfg = &cfg,
				 .params = kp};
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(why, GT_HOLD_NO_CHECK);
	stop(&h);
}

TEST(hold_cooperative_launch)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held, why, a = 5;
	long a8 = 0, b8 = 0;
	void *kp[3] = {&a, &a8, &b8};
	/* 2 blocks per SM x 132 SMs = 264 co-resident blocks */
	struct gt_hold_call c = {.form = GT_HOLD_COOP, .real = (void *)fake_launch_coop, .f = fh(0),
				 .grid = {264, 1, 1}, .block = {256, 1, 1}, .params = kp};
	ASSERT_EQ_INT(gt_hold_launch(&h, &c, &held, &why), CUDA_SUCCESS);
	ASSERT_EQ_INT(held, 1);
	c.grid[0] = 265;
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(held, 0);
	ASSERT_EQ_INT(why, GT_HOLD_NO_COOPERATIVE);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 2);
	ASSERT_EQ_INT(F.log[0].form, GT_HOLD_COOP);
	ASSERT_EQ_INT(F.log[0].grid[0], 264);
	ASSERT_EQ_INT(F.log[1].grid[0], 265);
	stop(&h);
}

TEST(hold_kernel_handles_use_the_kernel_layout)
{
	/* the runtime hands the driver CUkernel handles in the CUfunction slot */
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held, why;
	for (int i = 0; i < 3; i++) {
		int v = 100 + i;
		void *kp[1] = {&v};
		struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(1),
					 .grid = {1, 1, 1}, .block = {32, 1, 1}, .params = kp};
		ASSERT_EQ_INT(gt_hold_launch(&h, &c, &held, &why), CUDA_SUCCESS);
		ASSERT_EQ_INT(held, 1);
		v = 0;
	}
	gt_hold_before(&h, GT_HOLD_SYNC, 0);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ_INT(payload_int(i), 100 + i);
	/* a kernel with no parameters and no arguments is held too */
	F.fn[3].nparams = 0;
	struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(3), .grid = {1, 1, 1},
				 .block = {1, 1, 1}};
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(held, 1);
	stop(&h);
}

/* ---- launches that are never held ---- */

struct refusal_case {
	const char *what;
	int expect;
	void (*setup)(struct gt_hold_call *c, void **kp);
};

static void r_ptsz_null(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->per_thread = 1;
	c->stream = NULL;
}
static void r_per_thread_handle(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->stream = CU_STREAM_PER_THREAD;
}
static void r_capturing(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	F.capturing = (CUstream)0x77;
	c->stream = (CUstream)0x77;
}
static void r_legacy_during_capture(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	F.capturing = (CUstream)0x77;
	c->stream = NULL;
}
static void r_by_name(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->by_name = 1;
}
static void r_nested(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->nested = 1;
}
static void r_no_context(struct gt_hold_call *c, void **kp)
{
	(void)c;
	(void)kp;
	cur_ctx = NULL;
}
static void r_block_too_big(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->block[0] = 1024;
	c->block[1] = 2;
}
static void r_register_limited(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->f = fh(4); /* cuFuncGetAttribute says 256 threads (a register-heavy kernel) */
	c->block[0] = 512;
}
static void r_smem(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->smem = 48 * 1024 + 1;
}
static void r_zero_grid(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->grid[1] = 0;
}
static void r_both(struct gt_hold_call *c, void **kp)
{
	static void *ex[] = {CU_LAUNCH_PARAM_END};
	(void)kp;
	c->extra = ex;
}
static void r_null_param(struct gt_hold_call *c, void **kp)
{
	(void)c;
	kp[1] = NULL;
}
static void r_no_args(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->params = NULL;
}
static void r_no_layout(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->f = fh(5);
}
static void r_host_memory(struct gt_hold_call *c, void **kp)
{
	(void)c;
	(void)kp; /* kp[1] points at 0x7000000 + 16 */
}
static void r_bad_handle(struct gt_hold_call *c, void **kp)
{
	(void)kp;
	c->f = (CUfunction)(uintptr_t)0xdead;
}

TEST(hold_refused_launches_keep_their_place)
{
	static const struct refusal_case cases[] = {
		{"per-thread stream (_ptsz, NULL)", GT_HOLD_NO_PER_THREAD, r_ptsz_null},
		{"CU_STREAM_PER_THREAD", GT_HOLD_NO_PER_THREAD, r_per_thread_handle},
		{"capturing stream", GT_HOLD_NO_CAPTURE, r_capturing},
		{"legacy stream during a capture", GT_HOLD_NO_CAPTURE, r_legacy_during_capture},
		{"called by name", GT_HOLD_NO_BY_NAME, r_by_name},
		{"nested", GT_HOLD_NO_NESTED, r_nested},
		{"no current context", GT_HOLD_NO_CHECK, r_no_context},
		{"block over the device limit", GT_HOLD_NO_CHECK, r_block_too_big},
		{"block over the kernel's limit", GT_HOLD_NO_CHECK, r_register_limited},
		{"dynamic shared memory", GT_HOLD_NO_CHECK, r_smem},
		{"zero grid", GT_HOLD_NO_CHECK, r_zero_grid},
		{"kernelParams and extra", GT_HOLD_NO_ARGS, r_both},
		{"a NULL parameter", GT_HOLD_NO_ARGS, r_null_param},
		{"no arguments for a kernel that takes some", GT_HOLD_NO_ARGS, r_no_args},
		{"no layout", GT_HOLD_NO_LAYOUT, r_no_layout},
		{"pinned memory argument", GT_HOLD_NO_HOST_MEMORY, r_host_memory},
		{"not a function", GT_HOLD_NO_CHECK, r_bad_handle},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct gt_hold h;
		ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
		int held, why;
		launch0(&h, 1, (CUstream)0x33, &held);
		launch0(&h, 2, (CUstream)0x33, &held);
		if (cases[k].setup == r_host_memory)
			gt_hold_add_range(&h, 0x7000000, 4096);
		ASSERT_EQ_INT(atomic_load(&F.nlog), 0);
		int a = 3;
		float *p = (float *)(uintptr_t)(0x7000000 + 16);
		long l = 30;
		void *kp[3] = {&a, &p, &l};
		struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(0),
					 .grid = {1, 1, 1}, .block = {32, 1, 1}, .stream = (CUstream)0x44, .params = kp};
		cases[k].setup(&c, kp);
		gt_hold_launch(&h, &c, &held, &why);
		if (held || why != cases[k].expect)
			GT_FAIL_AT("%s: held %d, refusal %d, expected %d", cases[k].what, held, why, cases[k].expect);
		/* issued at once, after the two held before it */
		ASSERT_EQ_INT(atomic_load(&F.nlog), 3);
		ASSERT_EQ_INT(payload_int(0), 1);
		ASSERT_EQ_INT(payload_int(1), 2);
		ASSERT(F.log[2].f == c.f);
		ASSERT_EQ_U64(atomic_load(&h.st.refused[cases[k].expect]), 1);
		ASSERT_EQ_U64(atomic_load(&h.st.releases[GT_HOLD_LAUNCH]), 1);
		F.capturing = NULL;
		cur_ctx = CTX_A;
		stop(&h);
	}
}

TEST(hold_host_ranges_come_and_go)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held;
	gt_hold_add_range(&h, 0x7000000 + 16 * 5, 16);
	gt_hold_add_range(&h, 0x9000000, 1 << 20);
	launch0(&h, 4, NULL, &held);
	ASSERT_EQ_INT(held, 1);
	launch0(&h, 5, NULL, &held); /* its pointer argument is in the first range */
	ASSERT_EQ_INT(held, 0);
	gt_hold_remove_range(&h, 0x7000000 + 16 * 5);
	launch0(&h, 5, NULL, &held);
	ASSERT_EQ_INT(held, 1);
	ASSERT_EQ_INT(h.nranges, 1);
	stop(&h);
}

TEST(hold_kernel_name_filter)
{
	ASSERT_EQ_INT(gt_hold_name_matches("gemm,relu", "_Z9relu_kernPf"), 1);
	ASSERT_EQ_INT(gt_hold_name_matches("gemm,relu", "softmax"), 0);
	ASSERT_EQ_INT(gt_hold_name_matches(NULL, "x"), 1);
	ASSERT_EQ_INT(gt_hold_name_matches(",", "x"), 0);
	struct gt_hold h;
	reset_fake();
	struct gt_hold_config cfg = {8, 64, 1000000, "library", 0};
	struct gt_hold_drv d = fake_drv();
	char err[64];
	ASSERT_EQ_INT(gt_hold_init(&h, &cfg, &d, NULL, err, sizeof(err)), 0);
	int held, why, v = 1;
	launch0(&h, 1, NULL, &held); /* "kern" */
	ASSERT_EQ_INT(held, 0);
	ASSERT_EQ_U64(atomic_load(&h.st.refused[GT_HOLD_NO_FILTER]), 1);
	void *kp[1] = {&v};
	struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(1), .grid = {1, 1, 1},
				 .block = {1, 1, 1}, .params = kp};
	gt_hold_launch(&h, &c, &held, &why); /* "library_kernel" */
	ASSERT_EQ_INT(held, 1);
	stop(&h);
}

/* ---- errors ---- */

TEST(hold_error_at_release_is_returned_by_the_releasing_call)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held;
	F.fail_on = 2; /* the second launch fails when it is issued */
	F.fail_code = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	launch0(&h, 1, NULL, &held);
	launch0(&h, 2, NULL, &held);
	ASSERT_EQ_INT(held, 1);
	launch0(&h, 3, NULL, &held);
	gt_hold_before(&h, GT_HOLD_COPY, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 3);
	ASSERT_EQ_INT(F.last_first, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	/* the copy itself succeeded: it returns the held launch's error, once */
	ASSERT_EQ_INT(gt_hold_after(&h, CUDA_SUCCESS), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	ASSERT_EQ_INT(gt_hold_after(&h, CUDA_SUCCESS), CUDA_SUCCESS);
	ASSERT_EQ_U64(atomic_load(&h.st.failed), 1);
	/* a launch whose call releases the batch returns the error itself */
	stop(&h);
	ASSERT_EQ_INT(start(&h, 2, 64, 1000000, 0), 0);
	F.fn[0].fail = CUDA_ERROR_INVALID_VALUE;
	launch0(&h, 1, NULL, &held);
	ASSERT_EQ_INT(launch0(&h, 2, NULL, &held), CUDA_ERROR_INVALID_VALUE);
	ASSERT_EQ_INT(held, 1);
	ASSERT_EQ_INT(gt_hold_after(&h, CUDA_SUCCESS), CUDA_SUCCESS);
	/* the call's own error wins and the held one waits for the next */
	launch0(&h, 3, NULL, &held);
	gt_hold_before(&h, GT_HOLD_SYNC, 0);
	ASSERT_EQ_INT(gt_hold_after(&h, CUDA_ERROR_ILLEGAL_ADDRESS), CUDA_ERROR_ILLEGAL_ADDRESS);
	ASSERT_EQ_INT(gt_hold_after(&h, CUDA_SUCCESS), CUDA_ERROR_INVALID_VALUE);
	stop(&h);
}

/* ---- contexts ---- */

TEST(hold_release_makes_each_launch_context_current)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held;
	cur_ctx = CTX_A;
	launch0(&h, 1, NULL, &held);
	cur_ctx = CTX_B;
	launch0(&h, 2, NULL, &held);
	launch0(&h, 3, NULL, &held);
	cur_ctx = CTX_A;
	launch0(&h, 4, NULL, &held);
	ASSERT_EQ_INT(held, 1);
	gt_hold_before(&h, GT_HOLD_SYNC, 0); /* released from context A */
	ASSERT(F.log[0].ctx == CTX_A);
	ASSERT(F.log[1].ctx == CTX_B);
	ASSERT(F.log[2].ctx == CTX_B);
	ASSERT(F.log[3].ctx == CTX_A);
	ASSERT_EQ_INT(F.pushes, 1);
	ASSERT_EQ_INT(F.pops, 1);
	ASSERT_EQ_INT(ctx_depth, 0);
	stop(&h);
}

struct thread_arg {
	struct gt_hold *h;
	int id;
};

static void *launcher(void *arg)
{
	struct thread_arg *a = arg;
	cur_ctx = CTX_A;
	for (int i = 0; i < 500; i++) {
		int held;
		launch0(a->h, a->id * 1000 + i, (CUstream)(uintptr_t)(0x100 + a->id), &held);
		if (i % 97 == 0)
			gt_hold_before(a->h, GT_HOLD_EVENT, 0);
	}
	return NULL;
}

TEST(hold_many_threads_keep_per_thread_order)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 16, 64, 200, 1), 0);
	pthread_t t[4];
	struct thread_arg args[4];
	for (int i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){&h, i};
		pthread_create(&t[i], NULL, launcher, &args[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	gt_hold_release(&h, GT_HOLD_REQUEST, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 2000);
	int next[4] = {0};
	for (int i = 0; i < 2000; i++) {
		int v = payload_int(i), who = v / 1000;
		ASSERT(who >= 0 && who < 4);
		ASSERT_EQ_INT(v % 1000, next[who]);
		ASSERT(F.log[i].stream == (CUstream)(uintptr_t)(0x100 + who));
		next[who]++;
	}
	ASSERT_EQ_U64(atomic_load(&h.st.held), 2000);
	stop(&h);
}

TEST(hold_state_changes_are_seen_by_later_checks)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
	int held, why, a = 0;
	long a8 = 0, b8 = 0;
	void *kp[3] = {&a, &a8, &b8};
	struct gt_hold_call c = {.form = GT_HOLD_KERNEL, .real = (void *)fake_launch, .f = fh(0), .grid = {1, 1, 1},
				 .block = {32, 1, 1}, .smem = 100 * 1024, .params = kp};
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(why, GT_HOLD_NO_CHECK);
	/* cudaFuncSetAttribute(MaxDynamicSharedMemorySize): class STATE drops the cached limits */
	F.fn[0].max_smem = 200 * 1024;
	ASSERT_EQ_INT(gt_hold_classify("cuFuncSetAttribute"), GT_HOLD_STATE);
	gt_hold_before(&h, GT_HOLD_STATE, 0);
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(held, 1);
	/* a module unload drops the layouts: a handle reused by a new module is asked again */
	gt_hold_before(&h, GT_HOLD_UNLOAD, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 2);
	F.fn[0].nparams = 1;
	int v = 9;
	void *kp1[1] = {&v};
	c.params = kp1;
	c.smem = 0;
	gt_hold_launch(&h, &c, &held, &why);
	ASSERT_EQ_INT(held, 1);
	gt_hold_release(&h, GT_HOLD_REQUEST, 0);
	ASSERT_EQ_INT(F.log[2].plen, 4);
	ASSERT_EQ_INT(payload_int(2), 9);
	stop(&h);
}

TEST(hold_closed_queue_passes_launches_through)
{
	struct gt_hold h;
	ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 1), 0);
	int held;
	launch0(&h, 1, NULL, &held);
	gt_hold_close(&h);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 1);
	ASSERT_EQ_INT(launch0(&h, 2, NULL, &held), CUDA_SUCCESS);
	ASSERT_EQ_INT(held, 0);
	ASSERT_EQ_INT(atomic_load(&F.nlog), 2);
	gt_hold_close(&h); /* twice: nothing */
	gt_hold_free(&h);
}

/* ---- the trigger table ---- */

TEST(hold_release_rules_table)
{
	/* every rule of the table, against the queue: a PASS call leaves the
	 * launch held, any other releases it first, under its own class */
	for (size_t i = 0; i < gt_hold_nrules; i++) {
		char name[128];
		snprintf(name, sizeof(name), "%s", gt_hold_rules[i].pattern);
		size_t n = strlen(name);
		if (n && name[n - 1] == '*')
			snprintf(name + n - 1, sizeof(name) - n + 1, "Anything");
		enum gt_hold_reason want = (enum gt_hold_reason)gt_hold_rules[i].reason;
		enum gt_hold_reason got = gt_hold_classify(name);
		if (got != want)
			GT_FAIL_AT("%s: class %s, rule says %s", name, gt_hold_reason_names[got],
				   gt_hold_reason_names[want]);
		struct gt_hold h;
		ASSERT_EQ_INT(start(&h, 8, 64, 1000000, 0), 0);
		int held;
		launch0(&h, 1, NULL, &held);
		gt_hold_before(&h, got, 7);
		if (want == GT_HOLD_PASS) {
			if (atomic_load(&F.nlog) != 0)
				GT_FAIL_AT("%s released the queue", name);
		} else if (atomic_load(&F.nlog) != 1 || F.last_why != want) {
			GT_FAIL_AT("%s: %d launches issued, release class %d", name, atomic_load(&F.nlog), F.last_why);
		}
		stop(&h);
	}
}

TEST(hold_trigger_names)
{
	/* the calls of the research note's table, as cuGetProcAddress and dlsym name them */
	static const struct {
		const char *name;
		enum gt_hold_reason want;
	} t[] = {
		{"cuMemcpyHtoD", GT_HOLD_COPY},
		{"cuMemcpyDtoH_v2", GT_HOLD_COPY},
		{"cuMemcpyDtoHAsync_v2_ptsz", GT_HOLD_COPY},
		{"cuMemcpy3DPeerAsync", GT_HOLD_COPY},
		{"cuMemcpyBatchAsync", GT_HOLD_COPY},
		{"cuMemsetD8_v2_ptds", GT_HOLD_MEMSET},
		{"cuMemsetD2D32Async", GT_HOLD_MEMSET},
		{"cuEventRecord", GT_HOLD_EVENT},
		{"cuEventRecordWithFlags_ptsz", GT_HOLD_EVENT},
		{"cuStreamWaitEvent", GT_HOLD_WAIT},
		{"cuStreamSynchronize", GT_HOLD_SYNC},
		{"cuStreamQuery_ptsz", GT_HOLD_SYNC},
		{"cuCtxSynchronize_v2", GT_HOLD_SYNC},
		{"cuStreamWaitValue32_v2", GT_HOLD_MEMOP},
		{"cuStreamBatchMemOp_v2", GT_HOLD_MEMOP},
		{"cuLaunchHostFunc", GT_HOLD_HOSTFN},
		{"cuStreamAddCallback", GT_HOLD_HOSTFN},
		{"cuGraphLaunch", GT_HOLD_GRAPH},
		{"cuGraphUpload", GT_HOLD_GRAPH},
		{"cuMemAllocAsync", GT_HOLD_ASYNC_ALLOC},
		{"cuMemFreeAsync", GT_HOLD_ASYNC_ALLOC},
		{"cuMemPrefetchAsync_v2", GT_HOLD_UNIFIED},
		{"cuMemAdvise_v2", GT_HOLD_UNIFIED},
		{"cuMemFree_v2", GT_HOLD_FREE},
		{"cuMemFreeHost", GT_HOLD_FREE},
		{"cuMemUnmap", GT_HOLD_FREE},
		{"cuStreamDestroy_v2", GT_HOLD_DESTROY},
		{"cuEventDestroy_v2", GT_HOLD_DESTROY},
		{"cuModuleUnload", GT_HOLD_UNLOAD},
		{"cuLibraryUnload", GT_HOLD_UNLOAD},
		{"cuCtxDestroy_v2", GT_HOLD_CONTEXT},
		{"cuDevicePrimaryCtxRelease_v2", GT_HOLD_CONTEXT},
		{"cuStreamBeginCapture_v2", GT_HOLD_CAPTURE},
		{"cuStreamBeginCaptureToGraph", GT_HOLD_CAPTURE},
		{"cuStreamEndCapture", GT_HOLD_CAPTURE},
		{"cuFuncSetAttribute", GT_HOLD_STATE},
		{"cuCtxSetLimit", GT_HOLD_STATE},
		{"cuStreamSetAttribute_ptsz", GT_HOLD_STATE},
		{"cuProfilerStart", GT_HOLD_PROFILER},
		{"cuLaunchGrid", GT_HOLD_OLD_LAUNCH},
		{"cuLaunchCooperativeKernelMultiDevice", GT_HOLD_OLD_LAUNCH},
		{"cuSignalExternalSemaphoresAsync", GT_HOLD_INTEROP},
		/* never release */
		{"cuCtxGetCurrent", GT_HOLD_PASS},
		{"cuCtxSetCurrent", GT_HOLD_PASS},
		{"cuCtxPushCurrent_v2", GT_HOLD_PASS},
		{"cuStreamGetCaptureInfo_v3", GT_HOLD_PASS},
		{"cuStreamIsCapturing", GT_HOLD_PASS},
		{"cuStreamCreate", GT_HOLD_PASS},
		{"cuEventCreate", GT_HOLD_PASS},
		{"cuEventQuery", GT_HOLD_PASS},
		{"cuEventSynchronize", GT_HOLD_PASS},
		{"cuEventElapsedTime_v2", GT_HOLD_PASS},
		{"cuPointerGetAttribute", GT_HOLD_PASS},
		{"cuMemGetInfo_v2", GT_HOLD_PASS},
		{"cuMemAlloc_v2", GT_HOLD_PASS},
		{"cuMemHostAlloc", GT_HOLD_PASS},
		{"cuFuncGetAttribute", GT_HOLD_PASS},
		{"cuKernelGetFunction", GT_HOLD_PASS},
		{"cuLibraryGetKernel", GT_HOLD_PASS},
		{"cuModuleGetFunction", GT_HOLD_PASS},
		{"cuDeviceGetAttribute", GT_HOLD_PASS},
		{"cuOccupancyMaxActiveBlocksPerMultiprocessor", GT_HOLD_PASS},
		{"cuGraphAddKernelNode_v2", GT_HOLD_PASS},
		{"cuGraphInstantiateWithFlags", GT_HOLD_PASS},
		/* unknown: released first, to be safe */
		{"cuSomethingNew", GT_HOLD_OTHER},
		{"cuGraphExecUpdate_v2", GT_HOLD_OTHER},
		{"cuMemPoolSetAttribute", GT_HOLD_OTHER},
		{"", GT_HOLD_OTHER},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		enum gt_hold_reason got = gt_hold_classify(t[i].name);
		if (got != t[i].want)
			GT_FAIL_AT("%s: %s, expected %s", t[i].name, gt_hold_reason_names[got],
				   gt_hold_reason_names[t[i].want]);
	}
	ASSERT_EQ_INT(gt_hold_classify(NULL), GT_HOLD_OTHER);
	ASSERT_EQ_INT(gt_hold_reason_invalidates(GT_HOLD_UNLOAD), 1);
	ASSERT_EQ_INT(gt_hold_reason_invalidates(GT_HOLD_COPY), 0);
}

TEST(hold_names_and_keys_are_complete)
{
	for (int i = 0; i < GT_HOLD_NREASONS; i++)
		ASSERT(gt_hold_reason_names[i] && gt_hold_reason_keys[i] && gt_hold_reason_keys[i][0]);
	for (int i = 0; i < GT_HOLD_NREFUSALS; i++)
		ASSERT(gt_hold_refusal_names[i] && gt_hold_refusal_keys[i] && gt_hold_refusal_keys[i][0]);
	ASSERT_EQ_STR(gt_hold_reason_keys[GT_HOLD_OTHER], "other");
	ASSERT_EQ_STR(gt_hold_refusal_keys[GT_HOLD_NO_CLOSED], "closed");
}

/* ---- the stubs ---- */

static int gate_calls, gate_pending;
static unsigned gate_cls;
static uint32_t gate_name;
static int stub_gate(unsigned cls, uint32_t name)
{
	gate_calls++;
	gate_cls = cls;
	gate_name = name;
	return gate_pending;
}
static int stub_after(int r)
{
	return r == 0 ? 999 : r;
}
static long many(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j, long k, long l,
		 long m, long n)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j + 11 * k + 12 * l + 13 * m +
	       14 * n;
}
static double mixed(double x, int k, double y, float z)
{
	return x * k + y + z;
}
static int zero14(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j, long k, long l,
		  long m, long n)
{
	return (int)(a + b + c + d + e + f + g + h + i + j + k + l + m + n - 105);
}

TEST(hold_stubs_pass_every_argument)
{
	if (!gt_hold_stubs_supported())
		return;
	gt_hold_stub_ops.gate = stub_gate;
	gt_hold_stub_ops.after = stub_after;
	typedef long (*many_fn)(long, long, long, long, long, long, long, long, long, long, long, long, long, long);
	many_fn s = (many_fn)gt_hold_stub_for((void *)many, GT_HOLD_COPY, 42);
	ASSERT(s != NULL && (void *)s != (void *)many);
	ASSERT(gt_hold_is_stub((void *)s));
	ASSERT((void *)gt_hold_stub_for((void *)many, GT_HOLD_SYNC, 1) == (void *)s); /* one stub per function */
	ASSERT(gt_hold_stub_for((void *)s, GT_HOLD_SYNC, 1) == (void *)s);
	errno = 1234;
	ASSERT_EQ_INT(s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14), many(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14));
	ASSERT_EQ_INT(errno, 1234);
	ASSERT_EQ_INT(gate_cls, GT_HOLD_COPY);
	ASSERT_EQ_U64(gate_name, 42);
	typedef double (*mixed_fn)(double, int, double, float);
	mixed_fn m = (mixed_fn)gt_hold_stub_for((void *)mixed, GT_HOLD_EVENT, 43);
	ASSERT_NEAR(m(1.5, 3, 0.25, 0.5f), 5.25, 1e-12);
	/* an error is pending: the real function runs, then `after` picks the result */
	typedef int (*zero_fn)(long, long, long, long, long, long, long, long, long, long, long, long, long, long);
	zero_fn z = (zero_fn)gt_hold_stub_for((void *)zero14, GT_HOLD_SYNC, 44);
	gate_pending = 1;
	int calls = gate_calls;
	ASSERT_EQ_INT(z(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14), 999); /* real returned 0 */
	ASSERT_EQ_INT(z(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15), 1);   /* real's error wins */
	ASSERT_EQ_INT(gate_calls, calls + 2);
	gate_pending = 0;
	ASSERT_EQ_INT(z(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14), 0);
	gt_hold_stub_ops.gate = NULL;
	gt_hold_stub_ops.after = NULL;
}

TEST(hold_stub_pool_is_bounded)
{
	if (!gt_hold_stubs_supported())
		return;
	unsigned used = gt_hold_stubs_used();
	void *last = NULL;
	for (unsigned i = used; i < GT_HOLD_NSTUBS; i++) {
		last = gt_hold_stub_for((void *)(uintptr_t)(0x100000 + 16 * i), GT_HOLD_OTHER, 0);
		ASSERT(last != NULL);
	}
	ASSERT_EQ_INT(gt_hold_stubs_used(), GT_HOLD_NSTUBS);
	ASSERT(gt_hold_stub_for((void *)(uintptr_t)0x9999990, GT_HOLD_OTHER, 0) == NULL);
	/* a function already given a stub still gets it */
	ASSERT(gt_hold_stub_for((void *)(uintptr_t)(0x100000 + 16 * (GT_HOLD_NSTUBS - 1)), GT_HOLD_OTHER, 0) == last);
}
