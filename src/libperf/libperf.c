/* libperf: replay the GEMM configs of a library_trace.csv with cuBLASLt and
 * time every algorithm the library offers.
 *
 * The CUDA driver and cuBLASLt are loaded with dlopen, so gputap needs
 * neither to start; the few entry points used are declared here (their ABI
 * is stable across CUDA 12 and 13).  Each config runs on buffers filled with
 * the byte 0x3C, a small finite non-zero value in every floating type (zeros
 * would run faster than real data).  beta is 0. */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "core/csvio.h"
#include "export/ofile.h"
#include "gpu/probe.h"

#include "liblog/liblog.h"
#include "liblog/libtrace.h"
#include "libperf/libperf.h"
#include "libperf/libperf_cudnn.h"
#include "libperf/libperf_kact.h"
#include "core/sort.h"

const char gt_libperf_header[] = "library,config,calls,status,recorded_algo,timed_as,recorded_us,recorded_tflops,"
				 "best_algo,best_us,best_tflops,gain_pct,saving_us_total,algos_tried,device,"
				 "bytes,algbw_gbps,busbw_gbps,gpus,timing,gpu_ops";

/* ---- CUDA driver (libcuda.so.1): the table is in libperf.h, shared with the NCCL replay ---- */
static struct gt_cu_api cu;
/* the primary context of --device, made current again after each NCCL replay, and its device */
static cu_context main_ctx;
static cu_device main_dev;

/* ---- cuBLASLt ---- */
typedef int lt_status;
typedef void *lt_handle, *lt_desc, *lt_layout, *lt_pref;
typedef struct {
	uint64_t data[8];
} lt_algo;
typedef struct {
	lt_algo algo;
	size_t workspace;
	lt_status state;
	float waves;
	int reserved[4];
} lt_heur;

static struct {
	void *h;
	size_t version;
	lt_status (*create)(lt_handle *);
	lt_status (*destroy)(lt_handle);
	size_t (*get_version)(void);
	lt_status (*desc_create)(lt_desc *, int, int);
	lt_status (*desc_set)(lt_desc, int, const void *, size_t);
	lt_status (*desc_destroy)(lt_desc);
	lt_status (*layout_create)(lt_layout *, int, uint64_t, uint64_t, int64_t);
	lt_status (*layout_set)(lt_layout, int, const void *, size_t);
	lt_status (*layout_destroy)(lt_layout);
	lt_status (*pref_create)(lt_pref *);
	lt_status (*pref_set)(lt_pref, int, const void *, size_t);
	lt_status (*pref_destroy)(lt_pref);
	lt_status (*heuristic)(lt_handle, lt_desc, lt_layout, lt_layout, lt_layout, lt_layout, lt_pref, int, lt_heur *,
			       int *);
	lt_status (*matmul)(lt_handle, lt_desc, const void *, const void *, lt_layout, const void *, lt_layout,
			    const void *, const void *, lt_layout, void *, lt_layout, const lt_algo *, void *, size_t,
			    cu_stream);
	lt_status (*algo_get)(const lt_algo *, int, void *, size_t, size_t *);
} lt;

/* cublasLt.h numbers (stable ABI) */
enum {
	DESC_TRANSA = 3,
	DESC_TRANSB = 4,
	LAYOUT_BATCH_COUNT = 5,
	LAYOUT_STRIDED_BATCH_OFFSET = 6,
	PREF_MAX_WORKSPACE_BYTES = 1,
	ALGO_CONFIG_ID = 0,
};

#ifndef GT_CUDA_HOME
#define GT_CUDA_HOME "/usr/local/cuda"
#endif
#define GT_CUDA_HOME_LIB GT_CUDA_HOME "/lib64"

#define WORKSPACE_BYTES (32u << 20)
#define MAX_CONFIG_BYTES (16ull << 30)

static void *sym(void *h, const char *name, int *missing)
{
	void *p = dlsym(h, name);
	if (!p)
		*missing = 1;
	return p;
}

static const char *cu_err(cu_result r)
{
	const char *s = NULL;
	if (cu.error_name && cu.error_name(r, &s) == 0 && s)
		return s;
	return "CUDA error";
}

/* Load the driver and pick a device; -2 with err when there is no GPU. */
static int load_cuda(int device, char *name, size_t namelen, char *err, size_t errlen)
{
	cu.h = gt_libcuda_open();
	if (!cu.h) {
		snprintf(err, errlen, "libperf needs an NVIDIA GPU: the CUDA driver (libcuda.so.1) cannot be loaded: %s",
			 dlerror());
		return -2;
	}
	int miss = 0;
#define L(field, name) *(void **)&cu.field = sym(cu.h, name, &miss)
	L(init, "cuInit");
	L(device_count, "cuDeviceGetCount");
	L(device_get, "cuDeviceGet");
	L(device_name, "cuDeviceGetName");
	L(ctx_retain, "cuDevicePrimaryCtxRetain");
	L(ctx_release, "cuDevicePrimaryCtxRelease_v2");
	L(ctx_set, "cuCtxSetCurrent");
	L(mem_alloc, "cuMemAlloc_v2");
	L(mem_free, "cuMemFree_v2");
	L(memset8, "cuMemsetD8_v2");
	L(stream_create, "cuStreamCreate");
	L(stream_destroy, "cuStreamDestroy_v2");
	L(stream_sync, "cuStreamSynchronize");
	L(event_create, "cuEventCreate");
	L(event_destroy, "cuEventDestroy_v2");
	L(event_record, "cuEventRecord");
	L(event_sync, "cuEventSynchronize");
	L(error_name, "cuGetErrorName");
	L(ctx_sync, "cuCtxSynchronize");
	*(void **)&cu.host_alloc = dlsym(cu.h, "cuMemHostAlloc");
	*(void **)&cu.host_dev_ptr = dlsym(cu.h, "cuMemHostGetDevicePointer_v2");
	*(void **)&cu.wait_value32 = dlsym(cu.h, "cuStreamWaitValue32_v2");
	*(void **)&cu.memset8_async = dlsym(cu.h, "cuMemsetD8Async");
	*(void **)&cu.device_attr = dlsym(cu.h, "cuDeviceGetAttribute");
	*(void **)&cu.event_elapsed = dlsym(cu.h, "cuEventElapsedTime_v2");
	if (!cu.event_elapsed)
		L(event_elapsed, "cuEventElapsedTime");
#undef L
	if (miss) {
		snprintf(err, errlen, "libperf: the CUDA driver lacks entry points it needs (too old?)");
		return -2;
	}
	int n = 0;
	cu_result r = cu.init(0);
	if (r != 0) {
		snprintf(err, errlen, "libperf needs an NVIDIA GPU: cuInit failed: %s", cu_err(r));
		return -2;
	}
	if ((r = cu.device_count(&n)) != 0 || n == 0) {
		snprintf(err, errlen, "libperf needs an NVIDIA GPU: no CUDA device found");
		return -2;
	}
	if (device < 0 || device >= n) {
		snprintf(err, errlen, "libperf: device %d does not exist (%d device%s)", device, n, n == 1 ? "" : "s");
		return -2;
	}
	cu_device dev;
	cu_context ctx;
	if ((r = cu.device_get(&dev, device)) != 0 || (r = cu.ctx_retain(&ctx, dev)) != 0 ||
	    (r = cu.ctx_set(ctx)) != 0) {
		snprintf(err, errlen, "libperf: cannot use CUDA device %d: %s", device, cu_err(r));
		return -2;
	}
	main_ctx = ctx;
	main_dev = dev;
	if (cu.device_name(name, (int)namelen, dev) != 0)
		snprintf(name, namelen, "device%d", device);
	gt_cfg_sanitize(name, namelen, name);
	return n;
}

static int load_cublaslt(char *err, size_t errlen)
{
	static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
					    GT_CUDA_HOME_LIB "/libcublasLt.so.13", GT_CUDA_HOME_LIB "/libcublasLt.so.12"};
	const char *why = "";
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !lt.h; i++) {
		lt.h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (!lt.h)
			why = dlerror();
	}
	if (!lt.h) {
		snprintf(err, errlen, "libperf: cuBLASLt (libcublasLt.so.13 or .12) cannot be loaded: %s", why);
		return -2;
	}
	int miss = 0;
#define L(field, name) *(void **)&lt.field = sym(lt.h, name, &miss)
	L(create, "cublasLtCreate");
	L(destroy, "cublasLtDestroy");
	L(get_version, "cublasLtGetVersion");
	L(desc_create, "cublasLtMatmulDescCreate");
	L(desc_set, "cublasLtMatmulDescSetAttribute");
	L(desc_destroy, "cublasLtMatmulDescDestroy");
	L(layout_create, "cublasLtMatrixLayoutCreate");
	L(layout_set, "cublasLtMatrixLayoutSetAttribute");
	L(layout_destroy, "cublasLtMatrixLayoutDestroy");
	L(pref_create, "cublasLtMatmulPreferenceCreate");
	L(pref_set, "cublasLtMatmulPreferenceSetAttribute");
	L(pref_destroy, "cublasLtMatmulPreferenceDestroy");
	L(heuristic, "cublasLtMatmulAlgoGetHeuristic");
	L(matmul, "cublasLtMatmul");
	L(algo_get, "cublasLtMatmulAlgoConfigGetAttribute");
#undef L
	if (miss) {
		snprintf(err, errlen, "libperf: cuBLASLt lacks entry points it needs (too old?)");
		return -2;
	}
	lt.version = lt.get_version();
	return 0;
}

/* ---- one GEMM ---- */
struct gemm_result {
	char status[160];
	int recorded_algo;
	const char *timed_as;
	double recorded_us, best_us;
	int best_algo;
	int tried;
	unsigned timing; /* as gt_libperf_row */
	int ops;
	double event_us;
};

static uint64_t layout_elems(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride)
{
	if (rows <= 0 || cols <= 0)
		return 1;
	uint64_t one = (uint64_t)ld * (uint64_t)(cols - 1) + (uint64_t)rows;
	return one + (uint64_t)(batch - 1) * (uint64_t)stride;
}

/* Scalars 1 and 0 in the scale type. */
static int scalars(const char *scale, unsigned char one[16], unsigned char zero[16])
{
	memset(one, 0, 16);
	memset(zero, 0, 16);
	if (strcmp(scale, "R_32F") == 0 || strcmp(scale, "C_32F") == 0) {
		float f = 1.0f;
		memcpy(one, &f, sizeof(f));
	} else if (strcmp(scale, "R_64F") == 0 || strcmp(scale, "C_64F") == 0) {
		double d = 1.0;
		memcpy(one, &d, sizeof(d));
	} else if (strcmp(scale, "R_16F") == 0) {
		one[1] = 0x3c;
	} else if (strcmp(scale, "R_16BF") == 0) {
		one[1] = 0x3f;
		one[0] = 0x80;
	} else if (strcmp(scale, "R_32I") == 0) {
		one[0] = 1;
	} else {
		return -1;
	}
	return 0;
}

/* One cublasLtMatmul with everything it needs, for gt_libperf_time. */
struct matmul_call {
	lt_handle h;
	lt_desc d;
	const lt_algo *algo;
	lt_layout la, lb, lc, ld;
	cu_ptr A, B, C, D, ws;
	const void *one, *zero;
	cu_stream st;
};

static int run_matmul(void *arg)
{
	const struct matmul_call *m = arg;
	return lt.matmul(m->h, m->d, m->one, (void *)m->A, m->la, (void *)m->B, m->lb, m->zero, (void *)m->C, m->lc,
			 (void *)m->D, m->ld, m->algo, (void *)m->ws, WORKSPACE_BYTES, m->st) != 0;
}

/* Time `iters` runs of one algorithm; median in us, or -1 if it failed. */
static double time_algo(lt_handle h, lt_desc d, const lt_algo *algo, lt_layout la, lt_layout lb, lt_layout lc,
			lt_layout ld, cu_ptr A, cu_ptr B, cu_ptr C, cu_ptr D, cu_ptr ws, const void *one,
			const void *zero, cu_stream st, cu_event *ev, float *ms, const struct gt_libperf_opts *o)
{
	struct matmul_call m = {h, d, algo, la, lb, lc, ld, A, B, C, D, ws, one, zero, st};
	return gt_libperf_time(&cu, run_matmul, &m, st, ev, ms, o->iters, o->warmup);
}

static int op_num(char t)
{
	return t == 'N' ? 0 : t == 'T' ? 1 : 2;
}

static void replay_gemm(lt_handle h, const struct gt_gemm_cfg *g, cu_stream st, cu_event *ev, float *ms,
			const struct gt_libperf_opts *o, struct gemm_result *res)
{
	int ta, tb, tc, td, sc;
	int sa = gt_cuda_type_size(g->type_a, &ta), sb = gt_cuda_type_size(g->type_b, &tb);
	int scs = gt_cuda_type_size(g->type_c, &tc), sd = gt_cuda_type_size(g->type_d, &td);
	int ct = gt_cublas_compute_num(g->compute);
	const char *scale = g->scale[0] ? g->scale : "R_32F";
	gt_cuda_type_size(scale, &sc);
	unsigned char one[16], zero[16];
	res->recorded_algo = g->algo;
	res->best_algo = -1;
	res->recorded_us = res->best_us = -1;
	res->event_us = -1;
	res->timed_as = "";
	if (!sa || !sb || !scs || !sd || ct < 0 || sc < 0 || scalars(scale, one, zero) < 0) {
		snprintf(res->status, sizeof(res->status), "skipped: type or compute type not replayable");
		return;
	}
	int64_t ar = g->transa == 'N' ? g->m : g->k, ac = g->transa == 'N' ? g->k : g->m;
	int64_t br = g->transb == 'N' ? g->k : g->n, bc = g->transb == 'N' ? g->n : g->k;
	uint64_t bytes_a = layout_elems(ar, ac, g->lda, g->batch, g->stride_a) * (uint64_t)sa;
	uint64_t bytes_b = layout_elems(br, bc, g->ldb, g->batch, g->stride_b) * (uint64_t)sb;
	uint64_t bytes_c = layout_elems(g->m, g->n, g->ldc, g->batch, g->stride_c) * (uint64_t)scs;
	uint64_t bytes_d = layout_elems(g->m, g->n, g->ldd, g->batch, g->stride_d) * (uint64_t)sd;
	char why[128];
	if (gt_gemm_cfg_check(g, why, sizeof(why)) < 0) {
		snprintf(res->status, sizeof(res->status), "skipped: %s", why);
		return;
	}
	if (bytes_a + bytes_b + bytes_c + bytes_d > MAX_CONFIG_BYTES) {
		snprintf(res->status, sizeof(res->status), "skipped: needs more than 16 GiB");
		return;
	}
	cu_ptr A = 0, B = 0, C = 0, D = 0, ws = 0;
	lt_desc d = NULL;
	lt_layout la = NULL, lb = NULL, lc = NULL, ld = NULL;
	lt_pref pref = NULL;
	lt_heur heur[64];
	int nh = 0;
	int r;
	if ((r = cu.mem_alloc(&A, bytes_a)) || (r = cu.mem_alloc(&B, bytes_b)) || (r = cu.mem_alloc(&C, bytes_c)) ||
	    (r = cu.mem_alloc(&D, bytes_d)) || (r = cu.mem_alloc(&ws, WORKSPACE_BYTES))) {
		snprintf(res->status, sizeof(res->status), "error: cannot allocate %llu bytes: %s",
			 (unsigned long long)(bytes_a + bytes_b + bytes_c + bytes_d), cu_err(r));
		goto out;
	}
	cu.memset8(A, 0x3c, bytes_a);
	cu.memset8(B, 0x3c, bytes_b);
	cu.memset8(C, 0x3c, bytes_c);
	cu.memset8(D, 0, bytes_d);
	/* the memsets run on the legacy stream, which our non-blocking stream does not wait for */
	cu.ctx_sync();
	int opa = op_num(g->transa), opb = op_num(g->transb);
	int32_t batch = (int32_t)g->batch;
	if (lt.desc_create(&d, ct, sc) || lt.desc_set(d, DESC_TRANSA, &opa, sizeof(opa)) ||
	    lt.desc_set(d, DESC_TRANSB, &opb, sizeof(opb)) ||
	    lt.layout_create(&la, ta, (uint64_t)ar, (uint64_t)ac, g->lda) ||
	    lt.layout_create(&lb, tb, (uint64_t)br, (uint64_t)bc, g->ldb) ||
	    lt.layout_create(&lc, tc, (uint64_t)g->m, (uint64_t)g->n, g->ldc) ||
	    lt.layout_create(&ld, td, (uint64_t)g->m, (uint64_t)g->n, g->ldd)) {
		snprintf(res->status, sizeof(res->status), "error: cuBLASLt rejected the descriptors");
		goto out;
	}
	if (g->batch > 1) {
		lt_layout ls[4] = {la, lb, lc, ld};
		int64_t strides[4] = {g->stride_a, g->stride_b, g->stride_c, g->stride_d};
		for (int i = 0; i < 4; i++)
			if (lt.layout_set(ls[i], LAYOUT_BATCH_COUNT, &batch, sizeof(batch)) ||
			    lt.layout_set(ls[i], LAYOUT_STRIDED_BATCH_OFFSET, &strides[i], sizeof(strides[i]))) {
				snprintf(res->status, sizeof(res->status), "error: cuBLASLt rejected the batch");
				goto out;
			}
	}
	uint64_t wsb = WORKSPACE_BYTES;
	int want = o->max_algos > 64 ? 64 : o->max_algos;
	if (lt.pref_create(&pref) || lt.pref_set(pref, PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb)) ||
	    lt.heuristic(h, d, la, lb, lc, ld, pref, want, heur, &nh) || nh <= 0) {
		snprintf(res->status, sizeof(res->status), "error: cuBLASLt offers no algorithm for this config");
		goto out;
	}
	int rec_idx = -1;
	double best = -1;
	for (int i = 0; i < nh; i++) {
		if (heur[i].state != 0)
			continue;
		int id = -1;
		size_t wr = 0;
		lt.algo_get(&heur[i].algo, ALGO_CONFIG_ID, &id, sizeof(id), &wr);
		double us = time_algo(h, d, &heur[i].algo, la, lb, lc, ld, A, B, C, D, ws, one, zero, st,
				      ev, ms, o);
		if (us < 0)
			continue;
		res->tried++;
		int recorded = (rec_idx < 0 && g->algo >= 0 && id == g->algo) || (i == 0 && g->algo < 0);
		if (recorded) {
			rec_idx = i;
			res->recorded_us = us;
		}
		gt_libperf_note_timing(&res->timing, &res->ops, &res->event_us, recorded);
		if (best < 0 || us < best) {
			best = us;
			res->best_algo = id;
		}
	}
	if (res->tried == 0) {
		snprintf(res->status, sizeof(res->status), "error: no offered algorithm ran");
		goto out;
	}
	res->best_us = best;
	if (g->algo < 0) {
		res->timed_as = "heuristic_first";
	} else if (rec_idx >= 0) {
		res->timed_as = "same_algo_id";
	} else {
		/* the recorded algoId was not offered for this config: time the library's own first choice */
		res->timed_as = "heuristic_first_not_offered";
		for (int i = 0; i < nh && res->recorded_us < 0; i++)
			if (heur[i].state == 0) {
				res->recorded_us = time_algo(h, d, &heur[i].algo, la, lb, lc, ld, A, B, C, D, ws, one,
							     zero, st, ev, ms, o);
				if (res->recorded_us >= 0)
					gt_libperf_note_timing(&res->timing, &res->ops, &res->event_us, 1);
			}
	}
	if (strcmp(g->epilogue, "DEFAULT") != 0)
		snprintf(res->status, sizeof(res->status), "ok (epilogue %s not replayed)", g->epilogue);
	else
		snprintf(res->status, sizeof(res->status), "ok");
out:
	if (pref)
		lt.pref_destroy(pref);
	if (la)
		lt.layout_destroy(la);
	if (lb)
		lt.layout_destroy(lb);
	if (lc)
		lt.layout_destroy(lc);
	if (ld)
		lt.layout_destroy(ld);
	if (d)
		lt.desc_destroy(d);
	cu.stream_sync(st);
	cu_ptr bufs[5] = {A, B, C, D, ws};
	for (int i = 0; i < 5; i++)
		if (bufs[i])
			cu.mem_free(bufs[i]);
}

static double gemm_flops(const struct gt_gemm_cfg *g)
{
	double f = 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
	return g->type_a[0] == 'C' ? 4 * f : f;
}


/* v with `prec` decimals, "" when unknown (negative). */
static void fmt_num(char *b, size_t n, double v, int prec)
{
	if (v < 0 || !isfinite(v))
		b[0] = 0;
	else
		snprintf(b, n, "%.*f", prec, v);
}

void gt_libperf_row_init(struct gt_libperf_row *r, enum gt_lib lib, const char *config, uint64_t calls,
			 const char *device)
{
	memset(r, 0, sizeof(*r));
	r->lib = lib;
	r->config = config;
	r->calls = calls;
	r->timed_as = "";
	r->recorded_us = r->best_us = -1;
	r->algbw = r->busbw = -1;
	r->event_us = -1;
	r->device = device ? device : "";
}

void gt_libperf_row_write(FILE *f, const struct gt_libperf_row *r)
{
	char rus[32], rtf[32], bus[32], btf[32], gain[32], save[32];
	int timed = r->recorded_us > 0 && r->best_us > 0;
	fmt_num(rus, sizeof(rus), r->recorded_us, 3);
	fmt_num(bus, sizeof(bus), r->best_us, 3);
	fmt_num(rtf, sizeof(rtf), r->flops > 0 && r->recorded_us > 0 ? r->flops / (r->recorded_us * 1e6) : -1, 2);
	fmt_num(btf, sizeof(btf), r->flops > 0 && r->best_us > 0 ? r->flops / (r->best_us * 1e6) : -1, 2);
	fmt_num(gain, sizeof(gain), timed ? (r->recorded_us / r->best_us - 1.0) * 100.0 : -1, 1);
	fmt_num(save, sizeof(save), timed ? (r->recorded_us - r->best_us) * (double)r->calls : -1, 1);
	char nbytes[32] = "", algbw[32], busbw[32], ngpus[16] = "";
	if (r->bytes)
		snprintf(nbytes, sizeof(nbytes), "%llu", (unsigned long long)r->bytes);
	if (r->gpus)
		snprintf(ngpus, sizeof(ngpus), "%d", r->gpus);
	fmt_num(algbw, sizeof(algbw), r->algbw, 2);
	fmt_num(busbw, sizeof(busbw), r->busbw, 2);
	fprintf(f, "%s,", gt_lib_name(r->lib));
	gt_csv_put(f, r->config);
	fprintf(f, ",%llu,", (unsigned long long)r->calls);
	gt_csv_put(f, r->status);
	fputc(',', f);
	gt_csv_put(f, r->recorded_algo);
	fprintf(f, ",%s,%s,%s,", r->timed_as, rus, rtf);
	gt_csv_put(f, r->best_algo);
	char timing[64], ops[16] = "";
	gt_libperf_timing_names(r->timing, timing, sizeof(timing));
	if (r->ops > 0)
		snprintf(ops, sizeof(ops), "%d", r->ops);
	fprintf(f, ",%s,%s,%s,%s,%d,%s,%s,%s,%s,%s,%s,%s\n", bus, btf, gain, save, r->tried, r->device, nbytes, algbw,
		busbw, ngpus, timing, ops);
}

/* One `gputap libperf` run: what its phases share. */
struct run {
	struct gt_libperf_opts opts;
	char dev[128];
	int ndev;
	cu_stream st;
	cu_event *ev;
	float *ms;
	lt_handle h;
	struct gt_nccl_replayer *nr;
	struct gt_cudnn_replayer *cr;
	int cudnn_said;
	int l2;   /* the L2 cache's bytes, when read */
	int kact; /* timing by kernel activity */
	char kwhy[200], kpath[512];
};

/* cuBLASLt's handle, the stream, the events and their times: 0, or -2 with err. */
static int run_gpu_setup(struct run *R, char *err, size_t errlen)
{
	if (lt.create(&R->h) != 0) {
		snprintf(err, errlen, "libperf: cublasLtCreate failed");
		return -2;
	}
	R->ev = calloc((size_t)R->opts.iters * 2, sizeof(*R->ev));
	R->ms = calloc((size_t)R->opts.iters, sizeof(*R->ms));
	if (!R->ev || !R->ms || cu.stream_create(&R->st, 1 /* non-blocking */) != 0) {
		snprintf(err, errlen, "libperf: cannot create a CUDA stream");
		return -2;
	}
	for (int i = 0; i < R->opts.iters * 2; i++)
		if (cu.event_create(&R->ev[i], 0) != 0) {
			snprintf(err, errlen, "libperf: cannot create CUDA events");
			return -2;
		}
	return 0;
}

/* Twice the L2 cache: writing it before a run evicts what the previous run left there. */
static void run_cache_flush_setup(struct run *R)
{
	if (!R->opts.warm_cache && cu.memset8_async && cu.device_attr &&
	    cu.device_attr(&R->l2, 38 /* CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE */, main_dev) == 0 && R->l2 > 0) {
		if (cu.mem_alloc(&cu.l2_flush, 2 * (size_t)R->l2) == 0)
			cu.l2_flush_bytes = 2 * (size_t)R->l2;
		else
			cu.l2_flush = 0;
	}
}

/* The progress lines before the first config: the device, the libraries, how times are taken. */
static void run_say_plan(const struct run *R, size_t n)
{
	FILE *p = R->opts.progress;
	fprintf(p, "libperf: %zu configs on %s (cuBLASLt %zu), %d timed runs after %d warm-ups\n", n, R->dev,
		lt.version, R->opts.iters, R->opts.warmup);
	char cache[96];
	if (cu.l2_flush)
		snprintf(cache, sizeof(cache), "the L2 cache (%d MiB) flushed before each timed run", R->l2 >> 20);
	else
		snprintf(cache, sizeof(cache), "the L2 cache not flushed%s",
			 R->opts.warm_cache ? " (--warm-cache)" : ": no buffer for it");
	if (R->kact)
		fprintf(p, "libperf: timing: the GPU durations of each run's kernels (CUPTI kernel "
			   "activity, %s); %s\n", R->kpath, cache);
	else
		fprintf(p, "libperf: timing: CUDA events around each run, not kernel activity: %s; %s\n", R->kwhy,
			cache);
}

/* A cuBLAS or cuBLASLt GEMM row. */
static void run_gemm_row(struct run *R, const struct gt_libcall_row *in, struct gt_libperf_row *row)
{
	struct gemm_result r;
	struct gt_gemm_cfg g;
	char e2[256];
	memset(&r, 0, sizeof(r));
	if (gt_gemm_cfg_parse(in->config, &g, e2, sizeof(e2)) < 0) {
		snprintf(row->status, sizeof(row->status), "error: %s", e2);
		return;
	}
	r.recorded_algo = -1;
	replay_gemm(R->h, &g, R->st, R->ev, R->ms, &R->opts, &r);
	snprintf(row->status, sizeof(row->status), "%s", r.status);
	if (r.recorded_algo >= 0)
		snprintf(row->recorded_algo, sizeof(row->recorded_algo), "%d", r.recorded_algo);
	if (r.best_algo >= 0)
		snprintf(row->best_algo, sizeof(row->best_algo), "%d", r.best_algo);
	row->timed_as = r.timed_as;
	row->recorded_us = r.recorded_us;
	row->best_us = r.best_us;
	row->tried = r.tried;
	row->timing = r.timing;
	row->ops = r.ops;
	row->event_us = r.event_us;
	row->flops = gemm_flops(&g);
}

/* An NCCL row (the replayer made at the first). */
static void run_nccl_row(struct run *R, const struct gt_libcall_row *in, struct gt_libperf_row *row)
{
	struct gt_nccl_result nres;
	memset(&nres, 0, sizeof(nres));
	if (!R->nr)
		R->nr = gt_nccl_replayer_new(&cu, R->ndev, R->opts.iters, R->opts.warmup);
	if (R->nr) {
		gt_nccl_replay(R->nr, in->config, &nres);
		cu.ctx_set(main_ctx);
		row->recorded_us = nres.us;
		row->bytes = nres.bytes;
		row->algbw = nres.algbw;
		row->busbw = nres.busbw;
		row->gpus = nres.ranks;
		if (nres.ranks > 0) {
			row->timed_as = "one_process";
			row->tried = 1;
			row->timing = 1u << GT_TIMED_EVENTS;
		}
	} else {
		snprintf(nres.status, sizeof(nres.status), "error: out of memory");
	}
	snprintf(row->status, sizeof(row->status), "%s", nres.status);
}

/* A cuDNN row (the replayer made at the first; why cuDNN cannot be loaded said once). */
static void run_cudnn_row(struct run *R, const struct gt_libcall_row *in, struct gt_libperf_row *row)
{
	if (!R->cr)
		R->cr = gt_cudnn_replayer_new(&cu, R->st, &R->opts);
	if (!R->cr) {
		snprintf(row->status, sizeof(row->status), "error: out of memory");
		return;
	}
	gt_cudnn_replay(R->cr, in->config, row);
	if (!R->cudnn_said && gt_cudnn_replayer_load_error(R->cr)[0] && R->opts.progress) {
		fprintf(R->opts.progress, "libperf: cuDNN rows are not replayed: %s\n", gt_cudnn_replayer_load_error(R->cr));
		R->cudnn_said = 1;
	}
}

/* One config replayed by its library's replay, into `row`. */
static void run_row(struct run *R, const struct gt_libcall_row *in, struct gt_libperf_row *row)
{
	gt_libperf_row_init(row, in->lib, in->config, in->calls, R->dev);
	int is_gemm = (in->lib == GT_LIB_CUBLAS || in->lib == GT_LIB_CUBLASLT) && strncmp(in->config, "op=gemm ", 8) == 0;
	if (is_gemm)
		run_gemm_row(R, in, row);
	else if (in->lib == GT_LIB_NCCL)
		run_nccl_row(R, in, row);
	else if (in->lib == GT_LIB_CUDNN)
		run_cudnn_row(R, in, row);
	else
		snprintf(row->status, sizeof(row->status), "skipped: not a GEMM");
}

/* The progress lines of row i of n. */
static void run_say_row(const struct run *R, const struct gt_libcall_row *in, const struct gt_libperf_row *row,
			size_t i, size_t n)
{
	FILE *p = R->opts.progress;
	char rus[32] = "", bus[32] = "";
	if (row->recorded_us >= 0)
		snprintf(rus, sizeof(rus), "%.3f", row->recorded_us);
	if (row->best_us >= 0)
		snprintf(bus, sizeof(bus), "%.3f", row->best_us);
	fprintf(p, "libperf: [%zu/%zu] %s %.90s%s: %s%s%s%s%s\n", i + 1, n, gt_lib_name(in->lib), in->config,
		strlen(in->config) > 90 ? "..." : "", row->status, rus[0] ? ", recorded " : "", rus,
		bus[0] ? " us, best " : "", bus);
	if (row->busbw >= 0)
		fprintf(p, "libperf:   %s on %d GPUs: %s us, algbw %.2f GB/s, busbw %.2f GB/s\n",
			gt_nccl_replayer_version(R->nr), row->gpus, rus, row->algbw, row->busbw);
	if (in->lib == GT_LIB_CUDNN && row->best_algo[0])
		fprintf(p, "libperf:   %s: recorded engine %s, best %s of %d tried\n", gt_cudnn_replayer_version(R->cr),
			row->recorded_algo[0] ? row->recorded_algo : "-", row->best_algo, row->tried);
	if (row->ops > 0 && row->event_us >= 0)
		fprintf(p,
			"libperf:   recorded: %d GPU operation%s per run, %s us of GPU time; %.3f us "
			"between CUDA events\n",
			row->ops, row->ops == 1 ? "" : "s", rus, row->event_us);
}

/* Everything the run holds on the GPU and in memory given back. */
static void run_teardown(struct run *R)
{
	gt_kact_stop();
	if (cu.l2_flush)
		cu.mem_free(cu.l2_flush);
	cu.l2_flush = 0;
	cu.l2_flush_bytes = 0;
	if (R->ev) {
		for (int i = 0; i < R->opts.iters * 2; i++)
			if (R->ev[i])
				cu.event_destroy(R->ev[i]);
		free(R->ev);
	}
	free(R->ms);
	if (R->st)
		cu.stream_destroy(R->st);
	if (R->h)
		lt.destroy(R->h);
	gt_nccl_replayer_free(R->nr);
	gt_cudnn_replayer_free(R->cr);
}

int gt_libperf_run(const char *in, const char *out, const struct gt_libperf_opts *o, char *err, size_t errlen)
{
	struct run R;
	memset(&R, 0, sizeof(R));
	R.opts = *o;
	if (R.opts.iters <= 0)
		R.opts.iters = 20;
	if (R.opts.warmup < 0)
		R.opts.warmup = 5;
	if (R.opts.max_algos <= 0)
		R.opts.max_algos = 16;
	struct gt_libcalls *t = gt_libcalls_new();
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (gt_libcalls_read_csv(in, t, err, errlen) < 0) {
		gt_libcalls_free(t);
		return -1;
	}
	const struct gt_libcall_row *rows;
	size_t n = gt_libcalls_rows(t, &rows);
	R.ndev = load_cuda(R.opts.device, R.dev, sizeof(R.dev), err, errlen);
	if (R.ndev < 0 || load_cublaslt(err, errlen) < 0) {
		gt_libcalls_free(t);
		return -2;
	}
	FILE *f = NULL;
	struct gt_ofile of = {.f = NULL};
	int rc = run_gpu_setup(&R, err, errlen);
	if (rc < 0)
		goto done;
	/* export/ofile.h: complete or absent, and never renamed over what is not a regular file */
	if (gt_ofile_open_path(&of, out, err, errlen) < 0) {
		rc = -1;
		goto done;
	}
	f = of.f;
	fprintf(f, "%s\n", gt_libperf_header);
	run_cache_flush_setup(&R);
	struct gt_kact_api kapi;
	R.kact = gt_kact_load(&kapi, R.kpath, sizeof(R.kpath), R.kwhy, sizeof(R.kwhy)) == 0 &&
		 gt_kact_start(&kapi, R.kwhy, sizeof(R.kwhy)) == 0;
	if (R.opts.progress)
		run_say_plan(&R, n);
	for (size_t i = 0; i < n; i++) {
		struct gt_libperf_row row;
		run_row(&R, &rows[i], &row);
		gt_libperf_row_write(f, &row);
		if (R.opts.progress)
			run_say_row(&R, &rows[i], &row, i, n);
	}
	if (R.kact) {
		const char *why = "";
		int nf = gt_kact_failures(&why);
		if (nf && R.opts.progress)
			fprintf(R.opts.progress, "libperf: %d timing%s fell back to CUDA events (%s); the rows' timing "
						 "column says which\n",
				nf, nf == 1 ? "" : "s", why);
	}
	f = NULL;
	if (gt_ofile_commit(&of, err, errlen) < 0)
		rc = -1;
done:
	if (f)
		gt_ofile_abort(&of);
	run_teardown(&R);
	gt_libcalls_free(t);
	return rc;
}
