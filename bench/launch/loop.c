/*
 * bench/launch/loop.c — ROUNDS rounds of N launches through the pointers cuGetProcAddress hands
 * out (the CUDA runtime's way), each round ended by a cuStreamSynchronize; prints the median
 * over rounds of the ns per launch, and what one clock_gettime costs on this machine.
 *   loop N ROUNDS [kernel|ex|ptsz]
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef CUresult(CUDAAPI *gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult(CUDAAPI *init_fn)(unsigned int);
typedef CUresult(CUDAAPI *launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				     unsigned, CUstream, void **, void **);
typedef CUresult(CUDAAPI *launchex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult(CUDAAPI *sync_fn)(CUstream);

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: loop N ROUNDS [kernel|ex|ptsz]\n");
		return 2;
	}
	long n = atol(argv[1]);
	int rounds = atoi(argv[2]);
	const char *entry = argc > 3 ? argv[3] : "kernel";
	if (n < 1 || rounds < 1 || rounds > 1000)
		return 2;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	init_fn init = NULL;
	launch_fn lk = NULL;
	launchex_fn lx = NULL;
	sync_fn sync = NULL;
	cuuint64_t fl = strcmp(entry, "ptsz") == 0 ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
	if (!gpa || gpa("cuInit", (void **)&init, 12000, 0, NULL) != CUDA_SUCCESS ||
	    gpa("cuLaunchKernel", (void **)&lk, 12000, fl, NULL) != CUDA_SUCCESS ||
	    gpa("cuLaunchKernelEx", (void **)&lx, 12000, fl, NULL) != CUDA_SUCCESS ||
	    gpa("cuStreamSynchronize", (void **)&sync, 12000, 0, NULL) != CUDA_SUCCESS || init(0) != CUDA_SUCCESS) {
		fprintf(stderr, "loop: no usable libcuda.so.1\n");
		return 2;
	}
	int arg = 1;
	void *kp[] = {&arg};
	CUlaunchConfig cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
	CUfunction f = (CUfunction)(uintptr_t)0x1000;
	int ex = strcmp(entry, "ex") == 0;
	double *per = calloc((size_t)rounds, sizeof(double));
	if (!per)
		return 2;
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();
		if (ex) {
			for (long i = 0; i < n; i++)
				lx(&cfg, f, kp, NULL);
		} else {
			for (long i = 0; i < n; i++)
				lk(f, 1, 1, 1, 32, 1, 1, 0, NULL, kp, NULL);
		}
		per[r] = (now_ns() - t0) / (double)n;
		sync(NULL);
	}
	qsort(per, (size_t)rounds, sizeof(double), cmp);
	double c0 = now_ns();
	struct timespec ts;
	for (int i = 0; i < 1000000; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	double clk = (now_ns() - c0) / 1e6;
	printf("{\"ns_per_launch\":%.2f,\"clock_ns\":%.2f,\"launches\":%ld}\n", per[rounds / 2], clk, n * rounds);
	free(per);
	return 0;
}
