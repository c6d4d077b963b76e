// The tap's own cost per kernel launch, measured inside one process so that the machine's drift
// (±10-30 % between runs on shared hosts) cancels: blocks of N launches alternate between the
// cuLaunchKernel the program gets from the driver (cuGetProcAddress: the tap's hook when the tap is
// loaded) and libcuda's own cuLaunchKernel (found in libcuda's dynamic symbol table, never through
// the tap), in A B B A order, each block ending in a stream synchronize.  Prints one JSON line: ns per
// launch of each path (median over blocks), the median of the per-pair ratios hooked/real, and the
// hooked launches made (the tap's metrics.log must count exactly these).
//   inproc [PAIRS] [N]        (defaults 200 pairs of 2,000 launches)
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

extern "C" void *gt_elf_lookup(const char *lib, const char *name); /* src/tap/dlsym_find.c */

#include "../launch/bench.cuh"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      CUstream, void **, void **);

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 200, n = argc > 2 ? atoi(argv[2]) : 2000;
	if (pairs < 1 || n < 1)
		return 2;
	int *d;
	if (cudaMalloc(&d, 4) != cudaSuccess)
		return 3;
	CUfunction f;
	if (cudaGetFuncBySymbol(&f, (const void *)nop) != cudaSuccess)
		return 3;
	cudaStream_t s;
	cudaStreamCreate(&s);
	void *hooked = NULL;
	CUdriverProcAddressQueryResult q;
	if (cuGetProcAddress("cuLaunchKernel", &hooked, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || !hooked)
		return 4;
	void *real = gt_elf_lookup("libcuda.so", "cuLaunchKernel");
	if (!real)
		return 5;
	void *args[] = {&d};
	launch_fn fn[2] = {(launch_fn)real, (launch_fn)hooked};
	for (int w = 0; w < 2; w++) /* warm both paths */
		for (int i = 0; i < n; i++)
			fn[w](f, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, NULL);
	cudaStreamSynchronize(s);
	double *t[2], *ratio = (double *)malloc(sizeof(double) * pairs);
	t[0] = (double *)malloc(sizeof(double) * pairs);
	t[1] = (double *)malloc(sizeof(double) * pairs);
	long hooked_launches = n; /* the warm-up */
	for (int p = 0; p < pairs; p++) {
		for (int k = 0; k < 2; k++) {
			int which = (p & 1) ? 1 - k : k; /* A B, then B A */
			double t0 = now_ns();
			for (int i = 0; i < n; i++)
				fn[which](f, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, NULL);
			if (cudaStreamSynchronize(s) != cudaSuccess)
				return 6;
			t[which][p] = (now_ns() - t0) / n;
			if (which)
				hooked_launches += n;
		}
		ratio[p] = t[1][p] / t[0][p];
	}
	double r = median(ratio, pairs), a = median(t[0], pairs), b = median(t[1], pairs);
	printf("{\"same_entry\":%d,\"real_ns\":%.1f,\"hooked_ns\":%.1f,\"paired_ratio\":%.4f,\"paired_extra_ns\":%.1f,"
	       "\"hooked_launches\":%ld,\"pairs\":%d,\"n\":%d}\n",
	       real == hooked, a, b, r, (r - 1) * a, hooked_launches, pairs, n);
	return 0;
}
