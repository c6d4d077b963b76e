// Shared by the launch micro-benchmarks (bench/launch/*.cu, bench/overhead/inproc.cu): an empty
// kernel ready to launch through the driver, a monotonic clock in ns, CLOCK_REALTIME in ns (the
// timestamp source the tap gives CUPTI), and the median of an array.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__global__ void nop(int *x)
{
	if (x == nullptr)
		x[0] = 1;
}

// The empty kernel, a stream and its argument: launch with
// cuLaunchKernel(l.f, 1, 1, 1, 32, 1, 1, 0, l.s, l.args, NULL).
struct nop_launch {
	CUfunction f;
	CUstream s;
	int *d;
	void *args[1];
};

// 0, or -1 when CUDA cannot set it up.
static int nop_setup(struct nop_launch *l)
{
	cudaStream_t s;
	if (cudaMalloc(&l->d, 4) != cudaSuccess || cudaGetFuncBySymbol(&l->f, (const void *)nop) != cudaSuccess ||
	    cudaStreamCreate(&s) != cudaSuccess)
		return -1;
	l->s = (CUstream)s;
	l->args[0] = &l->d;
	return 0;
}

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// The median of v[0..n) (sorts v).
static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
