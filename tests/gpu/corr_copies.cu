// Copies and memsets through the CUDA runtime and the driver, for tests/gpu/corr.sh: every GPU copy
// and memset record of a trace must carry the correlation id of an API record, as kernels do.
//   corr_copies check N   N rounds of: cudaMemsetAsync, cuMemsetD8Async, cuMemsetD32Async,
//                         cudaMemcpyAsync H2D, cuMemcpyHtoDAsync, cudaMemcpyAsync D2H,
//                         cuMemcpyDtoHAsync, a kernel; then cudaMemset and cudaMemcpy (blocking)
//   corr_copies time N    host time of one call (ns, the median of 5 batches of N calls, a stream
//                         synchronisation after each batch) of a kernel launch, cudaMemsetAsync,
//                         cuMemsetD8Async and cudaMemcpyAsync H2D of 64 bytes: "time NAME NS"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

#define CK(x)                                                                                       \
	do {                                                                                        \
		if ((x) != 0) {                                                                     \
			fprintf(stderr, "corr_copies: %s failed at line %d\n", #x, __LINE__);       \
			exit(1);                                                                    \
		}                                                                                   \
	} while (0)

__global__ void bump(int *p) { p[threadIdx.x] += 1; }

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int n = atoi(argv[2]);
	const size_t bytes = 1 << 20;
	char *d = nullptr, *h = nullptr;
	cudaStream_t s;
	CK(cudaMalloc(&d, bytes));
	CK(cudaMallocHost(&h, bytes));
	CK(cudaStreamCreate(&s));
	memset(h, 3, bytes);
	if (!strcmp(argv[1], "check")) {
		for (int i = 0; i < n; i++) {
			CK(cudaMemsetAsync(d, 0, bytes, s));
			CK(cuMemsetD8Async((CUdeviceptr)d, 1, bytes, (CUstream)s));
			CK(cuMemsetD32Async((CUdeviceptr)d, 2, bytes / 4, (CUstream)s));
			CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
			CK(cuMemcpyHtoDAsync((CUdeviceptr)d, h, bytes, (CUstream)s));
			CK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
			CK(cuMemcpyDtoHAsync(h, (CUdeviceptr)d, bytes, (CUstream)s));
			bump<<<1, 32, 0, s>>>((int *)d);
			CK(cudaGetLastError());
		}
		CK(cudaStreamSynchronize(s));
		CK(cudaMemset(d, 0, bytes));
		CK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
		printf("done %d %d\n", n, (int)h[0]);
		return 0;
	}
	if (strcmp(argv[1], "time"))
		return 2;
	const char *names[4] = {"launch", "cudaMemsetAsync", "cuMemsetD8Async", "cudaMemcpyAsync"};
	for (int op = 0; op < 4; op++) {
		double b[5];
		for (int rep = 0; rep < 6; rep++) {
			auto t0 = std::chrono::steady_clock::now();
			for (int i = 0; i < n; i++) {
				switch (op) {
				case 0: bump<<<1, 32, 0, s>>>((int *)d); break;
				case 1: CK(cudaMemsetAsync(d, 0, 64, s)); break;
				case 2: CK(cuMemsetD8Async((CUdeviceptr)d, 1, 64, (CUstream)s)); break;
				default: CK(cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, s)); break;
				}
			}
			auto t1 = std::chrono::steady_clock::now();
			CK(cudaStreamSynchronize(s));
			if (rep) /* the first batch warms up */
				b[rep - 1] = std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
		}
		std::sort(b, b + 5);
		printf("time %s %.0f\n", names[op], b[2]);
	}
	return 0;
}
