/*
 * A stand-in for a shared CUDA runtime (libcudart.so.13), for the tap's CPU
 * test of correlation ids (tests/cli/t_tap_corr.sh): cudaMemcpyAsync and
 * cudaMemsetAsync make their driver calls through the pointers
 * cuGetProcAddress hands out, as the real runtime does (cuMemcpyHtoDAsync,
 * cuMemsetD8Async of the stand-in libcuda, tests/fakecuda/libcuda.c).
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stddef.h>

typedef CUresult(CUDAAPI *gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static void *driver(const char *name)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	void *p = NULL;
	if (!gpa || gpa(name, &p, 12000, 0, NULL) != CUDA_SUCCESS)
		return NULL;
	return p;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
	CUresult(CUDAAPI * f)(CUdeviceptr, const void *, size_t, CUstream);
	*(void **)&f = driver("cuMemcpyHtoDAsync");
	if (!f || k != cudaMemcpyHostToDevice)
		return cudaErrorInvalidValue;
	return f((CUdeviceptr)(size_t)dst, src, n, (CUstream)s) == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
}

cudaError_t cudaMemsetAsync(void *dst, int v, size_t n, cudaStream_t s)
{
	CUresult(CUDAAPI * f)(CUdeviceptr, unsigned char, size_t, CUstream);
	*(void **)&f = driver("cuMemsetD8Async");
	if (!f)
		return cudaErrorInvalidValue;
	return f((CUdeviceptr)(size_t)dst, (unsigned char)v, n, (CUstream)s) == CUDA_SUCCESS ? cudaSuccess
												 : cudaErrorUnknown;
}
