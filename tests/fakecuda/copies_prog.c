/*
 * A program of the tap's CPU test of correlation ids (tests/cli/t_tap_corr.sh),
 * run with the tap preloaded, the stand-in CUPTI (GPUTAP_CUPTI_LIB) and the
 * stand-in libcuda and CUDA runtime (tests/fakecuda/): it starts the tap's
 * CUPTI side as the driver does (InitializeInjection), then N times each:
 * cuMemsetD8Async and cuMemcpyHtoDAsync through the pointers cuGetProcAddress
 * hands out, and the runtime's cudaMemsetAsync and cudaMemcpyAsync (which
 * make those driver calls themselves).  Prints "done".
 *   copies_prog N
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef CUresult(CUDAAPI *gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
	if (!init || init() != 1) {
		fprintf(stderr, "copies_prog: no InitializeInjection (is libgputap.so preloaded?)\n");
		return 3;
	}
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	CUresult(CUDAAPI * memset8)(CUdeviceptr, unsigned char, size_t, CUstream) = NULL;
	CUresult(CUDAAPI * h2d)(CUdeviceptr, const void *, size_t, CUstream) = NULL;
	if (!gpa || gpa("cuMemsetD8Async", (void **)&memset8, 12000, 0, NULL) != CUDA_SUCCESS ||
	    gpa("cuMemcpyHtoDAsync", (void **)&h2d, 12000, 0, NULL) != CUDA_SUCCESS) {
		fprintf(stderr, "copies_prog: no usable libcuda.so.1\n");
		return 2;
	}
	char buf[64] = {0};
	void *dev = (void *)(size_t)0x10000;
	for (int i = 0; i < n; i++) {
		if (memset8((CUdeviceptr)(size_t)dev, 0, sizeof(buf), NULL) != CUDA_SUCCESS ||
		    h2d((CUdeviceptr)(size_t)dev, buf, sizeof(buf), NULL) != CUDA_SUCCESS ||
		    cudaMemsetAsync(dev, 0, sizeof(buf), NULL) != cudaSuccess ||
		    cudaMemcpyAsync(dev, buf, sizeof(buf), cudaMemcpyHostToDevice, NULL) != cudaSuccess) {
			fprintf(stderr, "copies_prog: a call failed\n");
			return 1;
		}
	}
	printf("done\n");
	return 0;
}
