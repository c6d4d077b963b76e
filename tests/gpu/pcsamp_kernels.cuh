// Three kernels with one known bottleneck each, for PC sampling checks against Nsight Compute
// (tests/gpu/pcsamp.sh).  Built with -lineinfo; each statement that matters is on its own line,
// so that the hottest source line names it.
#pragma once
#include <cuda_runtime.h>

// memory-bound: a streaming copy-scale, each thread waiting on its global loads
__global__ void k_mem(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		float4 v = a[i];
		b[i] = make_float4(v.x * 2.f, v.y * 2.f, v.z * 2.f, v.w * 2.f);
	}
}

// compute-bound: eight independent FMA chains per thread
__global__ void k_fma(float *out, int iters, float m, float c)
{
	float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6,
	      x7 = x0 + 7;
	for (int i = 0; i < iters; i++) {
		x0 = fmaf(x0, m, c); x1 = fmaf(x1, m, c); x2 = fmaf(x2, m, c); x3 = fmaf(x3, m, c);
		x4 = fmaf(x4, m, c); x5 = fmaf(x5, m, c); x6 = fmaf(x6, m, c); x7 = fmaf(x7, m, c);
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

// barrier-bound: one warp of each block works while the others wait at __syncthreads
__global__ void k_sync(float *out, int rounds, int work)
{
	float x = threadIdx.x;
	for (int r = 0; r < rounds; r++) {
		if (threadIdx.x < 32)
			for (int k = 0; k < work; k++)
				x = fmaf(x, 0.999f, 0.5f);
		__syncthreads();
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
