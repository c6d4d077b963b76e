// The three kernels of pcsamp_kernels.cuh, each launched ITERS times, for `gputap run --pc-sampling`
// and ncu alike (tests/gpu/pcsamp.sh).  usage: pcsamp_prog [ITERS] [mem,fma,sync]
// Each kernel runs inside an NVTX range of its name.  Prints each kernel's mean time (events).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nvtx3/nvToolsExt.h>

#include "pcsamp_kernels.cuh"

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                    \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20;
	const char *which = argc > 2 ? argv[2] : "mem,fma,sync";
	size_t n = (size_t)16 << 20; // float4s: 256 MiB each way
	float4 *a, *b;
	float *o;
	CK(cudaMalloc(&a, n * sizeof(float4)));
	CK(cudaMalloc(&b, n * sizeof(float4)));
	CK(cudaMalloc(&o, (size_t)132 * 16 * 256 * sizeof(float)));
	CK(cudaMemset(a, 0, n * sizeof(float4)));
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	const char *names[3] = {"mem", "fma", "sync"};
	for (int k = 0; k < 3; k++) {
		if (!strstr(which, names[k]))
			continue;
		nvtxRangePushA(names[k]);
		float first = 0;
		for (int i = 0; i < iters; i++) {
			if (i <= 1)
				CK(cudaEventRecord(e0)); /* the first launch timed alone, then the others */
			if (k == 0)
				k_mem<<<132 * 8, 256>>>(a, b, n);
			else if (k == 1)
				k_fma<<<132 * 8, 256>>>(o, 2000, 0.9999f, 0.001f);
			else
				k_sync<<<132 * 16, 256>>>(o, 400, 64);
			if (i == 0) {
				CK(cudaEventRecord(e1));
				CK(cudaEventSynchronize(e1));
				CK(cudaEventElapsedTime(&first, e0, e1));
			}
		}
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		nvtxRangePop();
		float ms = 0;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		printf("k_%s %d launches: the first %.3f ms, the others %.4f ms each\n", names[k], iters, first,
		       iters > 1 ? ms / (iters - 1) : 0.0);
	}
	CK(cudaGetLastError());
	cudaFree(a);
	cudaFree(b);
	cudaFree(o);
	return 0;
}
