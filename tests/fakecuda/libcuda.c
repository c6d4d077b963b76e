/*
 * A stand-in for libcuda.so.1, for the CPU tests of launch hold
 * (tests/cli/t_tap_hold.sh): the few driver entry points a program and the
 * hold queue use, handed out through cuGetProcAddress as the real driver
 * does.  Every launch, copy, event record and synchronisation appends a
 * word to a log the program reads (fake_log), so the test sees the order
 * and the arguments the "GPU" received.
 *   L<v>  cuLaunchKernel of kernel 1 with first argument v   (P<v> from _ptsz)
 *   E     cuEventRecord       C  cuMemcpyDtoH     S  cuStreamSynchronize
 * With FAKE_SYNC_US=N each cuStreamSynchronize also sleeps N microseconds.
 * cuMemsetD8Async (word Z) and cuMemcpyHtoDAsync (word H) also report to the
 * stand-in CUPTI when the tap loaded it (GPUTAP_CUPTI_LIB, tests/tap/fake_cupti.c)
 * as the real driver reports to CUPTI: callbacks, a correlation id, a GPU record.
 * cuMemAlloc / cuMemFree hand out and take back addresses (no memory behind them;
 * tests/fakecuda/alloc_prog.c, the vram sampler's allocation counter).
 */
#include <cuda.h>
#include <cupti_driver_cbid.h>
#include <dlfcn.h>
#include "procaddr.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char log_buf[8192];
static size_t log_len;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread CUcontext stack[8];
static __thread int depth = -1;

#define KERNEL ((CUfunction)(uintptr_t)0x1000)
#define CTX ((CUcontext)(uintptr_t)0xC0)

static void put(const char *w)
{
	pthread_mutex_lock(&mu);
	int n = snprintf(log_buf + log_len, sizeof(log_buf) - log_len, "%s%s", log_len ? " " : "", w);
	if (n > 0 && log_len + (size_t)n < sizeof(log_buf))
		log_len += (size_t)n;
	pthread_mutex_unlock(&mu);
}

size_t fake_log(char *buf, size_t cap);
size_t fake_log(char *buf, size_t cap)
{
	pthread_mutex_lock(&mu);
	snprintf(buf, cap, "%s", log_buf);
	size_t n = log_len;
	pthread_mutex_unlock(&mu);
	return n;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *c)
{
	*c = depth >= 0 ? stack[depth] : CTX; /* the program's thread and the timer: one context */
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext c)
{
	stack[++depth] = c;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *c)
{
	*c = stack[depth--];
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice *d)
{
	*d = 0;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; return CUDA_SUCCESS;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = 1; return CUDA_SUCCESS;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
}
/* kernel 1 takes (int v, long w) */
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	if (f != KERNEL)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= 2)
		return CUDA_ERROR_INVALID_VALUE;
	*off = i ? 8 : 0;
	*size = i ? 8 : 4;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	if (f != KERNEL)
		return CUDA_ERROR_INVALID_HANDLE;
	*v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 48 * 1024;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	(void)v, (void)a, (void)k, (void)d;
	return CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction f)
{
	*name = f == KERNEL ? "fake_kernel" : "?";
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	(void)s;
	*st = CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

static CUresult launch(const char *p, CUfunction f, unsigned gx, void **kp)
{
	if (f != KERNEL || !kp || !kp[0] || !gx)
		return CUDA_ERROR_INVALID_VALUE;
	char w[32];
	snprintf(w, sizeof(w), "%s%d", p, *(const int *)kp[0]);
	put(w);
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				unsigned bz, unsigned sm, CUstream s, void **kp, void **ex)
{
	(void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sm, (void)s, (void)ex;
	return launch("L", f, gx, kp);
}
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				     unsigned bz, unsigned sm, CUstream s, void **kp, void **ex)
{
	(void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sm, (void)s, (void)ex;
	return launch("P", f, gx, kp);
}
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s)
{
	(void)e, (void)s;
	put("E");
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	(void)d, (void)s, (void)n;
	put("C");
	return CUDA_SUCCESS;
}
/* FAKE_SYNC_US=N: a synchronisation takes N microseconds (a call of known length) */
CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
	(void)s;
	put("S");
	const char *us = getenv("FAKE_SYNC_US");
	long n = us ? atol(us) : 0;
	if (n > 0) {
		struct timespec d = {n / 1000000, (n % 1000000) * 1000};
		nanosleep(&d, NULL);
	}
	return CUDA_SUCCESS;
}

/* The stand-in CUPTI's view of driver call `cbid` (op 1 a copy, 2 a memset), if it is loaded. */
static void cupti_call(unsigned cbid, const char *name, int op)
{
	static unsigned (*fn)(unsigned, const char *, int);
	if (!fn) {
		const char *p = getenv("GPUTAP_CUPTI_LIB");
		void *h = p ? dlopen(p, RTLD_NOW | RTLD_NOLOAD) : NULL;
		if (h)
			*(void **)&fn = dlsym(h, "fake_cupti_driver_call");
	}
	if (fn)
		fn(cbid, name, op);
}
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	(void)d, (void)v, (void)n, (void)s;
	put("Z");
	cupti_call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, "cuMemsetD8Async", 2);
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
	(void)d, (void)h, (void)n, (void)s;
	put("H");
	cupti_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", 1);
	return CUDA_SUCCESS;
}

static uintptr_t next_ptr = 0x7f0000000000u;
CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *d, size_t n)
{
	pthread_mutex_lock(&mu);
	*d = (CUdeviceptr)next_ptr;
	next_ptr += (n + 0xfffu) & ~(uintptr_t)0xfffu;
	pthread_mutex_unlock(&mu);
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemFree_v2(CUdeviceptr d)
{
	(void)d;
	return CUDA_SUCCESS;
}

static const struct fake_entry entries[] = {
	{"cuMemAlloc", (void *)cuMemAlloc_v2, NULL},
	{"cuMemFree", (void *)cuMemFree_v2, NULL},
	{"cuCtxGetCurrent", (void *)cuCtxGetCurrent, NULL},
	{"cuCtxPushCurrent", (void *)cuCtxPushCurrent_v2, NULL},
	{"cuCtxPopCurrent", (void *)cuCtxPopCurrent_v2, NULL},
	{"cuLaunchKernel", (void *)cuLaunchKernel, (void *)cuLaunchKernel_ptsz},
	{"cuEventRecord", (void *)cuEventRecord, NULL},
	{"cuMemcpyDtoH", (void *)cuMemcpyDtoH_v2, NULL},
	{"cuMemsetD8Async", (void *)cuMemsetD8Async, NULL},
	{"cuMemcpyHtoDAsync", (void *)cuMemcpyHtoDAsync_v2, NULL},
	{"cuStreamSynchronize", (void *)cuStreamSynchronize, NULL},
	{"cuStreamIsCapturing", (void *)cuStreamIsCapturing, NULL},
};

FAKE_DEFINE_GET_PROC_ADDRESS(entries)
