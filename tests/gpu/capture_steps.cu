// A loop of NVTX "step" ranges, K tiny in-place kernels each; optional cudaProfilerStart/Stop around
// steps P..Q and a ~50 ms kernel at the end of step L (it ends after the window that launched it).
// Prints the checksum, the kernels it launched in steps [A..B] and the loop's time per kernel;
// with --phases N also the time per kernel of each N-th of the loop (host time from one phase's
// first launch to the next phase's: what a capture window costs before, inside and after it).
//   capture_steps ITERS K [--profiler P Q] [--long L] [--count A B] [--phases N]
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__global__ void bump(float *x, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + v;
}

__global__ void spin(long long cycles, float *x)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
	x[0] += 1.0f;
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

#define CK(c)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (c);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			return 2;                                                                  \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int iters = atoi(argv[1]), k = atoi(argv[2]);
	int p0 = -1, p1 = -1, longstep = -1, a = -1, b = -1, phases = 0;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--profiler") && i + 2 < argc) {
			p0 = atoi(argv[++i]);
			p1 = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--long") && i + 1 < argc) {
			longstep = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--phases") && i + 1 < argc) {
			phases = atoi(argv[++i]);
			if (phases < 1 || phases > iters)
				phases = 0;
		} else if (!strcmp(argv[i], "--count") && i + 2 < argc) {
			a = atoi(argv[++i]);
			b = atoi(argv[++i]);
		}
	}
	const int n = 1 << 12;
	float *x;
	CK(cudaMalloc(&x, n * sizeof(float)));
	CK(cudaMemset(x, 0, n * sizeof(float)));
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	bump<<<(n + 255) / 256, 256, 0, s>>>(x, n, 1.0f); /* warm-up, outside every step */
	CK(cudaStreamSynchronize(s));
	long counted = 0;
	double *pt = (double *)calloc((size_t)phases + 1, sizeof(double));
	int ph = 0;
	double t0 = now_us();
	for (int it = 1; it <= iters; it++) {
		if (phases && (long)(it - 1) * phases >= (long)ph * iters)
			pt[ph++] = now_us();
		if (it == p0)
			cudaProfilerStart();
		nvtxRangePushA("step");
		for (int j = 0; j < k; j++)
			bump<<<(n + 255) / 256, 256, 0, s>>>(x, n, (float)(j % 7));
		int extra = 0;
		if (it == longstep) {
			spin<<<1, 1, 0, s>>>(100000000LL, x); /* ~50 ms at ~2 GHz */
			extra = 1;
		}
		nvtxRangePop();
		if (it == p1)
			cudaProfilerStop();
		if (it >= a && it <= b)
			counted += k + extra;
	}
	if (phases)
		pt[ph] = now_us();
	CK(cudaStreamSynchronize(s));
	double t1 = now_us();
	float *h = (float *)malloc(n * sizeof(float));
	CK(cudaMemcpy(h, x, n * sizeof(float), cudaMemcpyDeviceToHost));
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += h[i];
	printf("{\"checksum\":%.6f,\"counted\":%ld,\"us_per_kernel\":%.4f", sum, counted,
	       (t1 - t0) / ((double)iters * k));
	if (phases) { /* phase p covers steps [p*iters/N, (p+1)*iters/N) */
		printf(",\"phases\":[");
		for (int p = 0; p < ph; p++) {
			long s0 = ((long)p * iters + phases - 1) / phases, s1 = ((long)(p + 1) * iters + phases - 1) / phases;
			printf("%s%.4f", p ? "," : "", (pt[p + 1] - pt[p]) / ((double)(s1 - s0) * k));
		}
		printf("]");
	}
	printf("}\n");
	return 0;
}
