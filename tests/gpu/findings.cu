// The findings corpus in CUDA C (docs/findings.md, docs/gpu-validation.md): for each finding an
// anti-pattern planted in a step and a twin without it that computes the same result.
//   findings [--steps N] [--only MODE[,MODE...]]
// The modes coal (uncoalesced loads) and occ (low achieved occupancy) are for a run with per-kernel
// counters (gputap run --metrics-mode kernel --metrics ...): tests/gpu/findings.sh runs them so too.
// Every step of MODE/VARIANT is an NVTX range "MODE.VARIANT" (gputap advise --nvtx MODE.VARIANT
// picks it); after the steps one JSON line: mode, variant, median step time (ms, host wall clock, each
// step ends synchronized), and a checksum that must be the same for both variants.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#define CK(x)                                                                                  \
	do {                                                                                   \
		cudaError_t e_ = (x);                                                          \
		if (e_ != cudaSuccess) {                                                       \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                               \
		}                                                                              \
	} while (0)

static double now_ms()
{
	timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__global__ void tiny(float *y, float a) { y[threadIdx.x] = y[threadIdx.x] * a + 1.0f; }

// about `cycles` clock cycles of work on every thread, then one write
__global__ void spin(float *y, long long cycles, float v)
{
	long long t0 = clock64();
	while (clock64() - t0 < cycles) {
	}
	if (blockIdx.x == 0 && threadIdx.x == 0)
		y[0] += v;
}

__global__ void consume(const float *x, float *y, size_t n)
{
	float s = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		s += x[i];
	atomicAdd(y, s);
}

__global__ void work(float *x, size_t n, int reps)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float v = x[i];
		for (int r = 0; r < reps; r++)
			v = v * 0.999f + 0.5f;
		x[i] = v;
	}
}

__global__ void writeall(float *x, size_t n, float v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		x[i] = v + (float)(i & 7);
}

// sums x[(i * stride) mod n] over all i (n a power of two, stride odd: every element once); stride 1
// reads consecutive addresses per warp (coalesced), a large odd stride one 32-byte sector per thread
__global__ void gather(const float *x, unsigned long long *out, size_t n, size_t stride)
{
	unsigned s = 0; // the values are small integers: the sum is exact in any order
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		s += (unsigned)x[(i * stride) & (n - 1)];
	for (int o = 16; o > 0; o /= 2) // one atomic per warp: the loads, not the atomics, bound the kernel
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(out, (unsigned long long)s);
}

static int sms;
static const char *only;
// --only: a comma-separated list of modes (none: every mode)
static bool skip(const char *mode)
{
	if (!only)
		return false;
	size_t n = strlen(mode);
	for (const char *p = only; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, mode, n))
			return false;
		if (!e)
			break;
		p = e + 1;
	}
	return true;
}
static long long spin_cycles(double us)
{
	int khz = 0;
	CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	return (long long)(us * khz / 1e3);
}

static float read_sum(const float *d, size_t n)
{
	std::vector<float> h(n);
	CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
	double s = 0;
	for (float v : h)
		s += v;
	return (float)s;
}

static void report(const char *mode, const char *variant, std::vector<double> &t, double checksum)
{
	std::sort(t.begin(), t.end());
	printf("{\"mode\": \"%s\", \"variant\": \"%s\", \"step_ms\": %.4f, \"steps\": %zu, \"checksum\": %.6g}\n", mode,
	       variant, t[t.size() / 2], t.size(), checksum);
	fflush(stdout);
}

// fill a host buffer as a data loader would: `us` of host work
static void prepare(float *h, size_t n, int step, double us)
{
	double t0 = now_ms();
	size_t i = 0;
	do {
		for (size_t k = 0; k < 4096 && i < n; k++, i++)
			h[i] = (float)((i * 7 + step) % 13);
	} while (i < n);
	while ((now_ms() - t0) * 1e3 < us) {
	}
}

int main(int argc, char **argv)
{
	int steps = 12;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
	}
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	cudaStream_t s, s2;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	cudaEvent_t ev;
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	float *y;
	CK(cudaMalloc(&y, 1 << 20));
	const char *variants[2] = {"planted", "twin"};
	// cycles for the spin kernels, asked once (cudaDeviceGetAttribute inside a step is host work: a gap)
	const long long c100 = spin_cycles(100), c200 = spin_cycles(200), c300 = spin_cycles(300), c1000 = spin_cycles(1000);

	for (int vi = 0; vi < 2; vi++) { // launch-bound: 1500 tiny kernels per step, or one CUDA graph of them
		if (skip("launch"))
			break;
		const char *v = variants[vi];
		char rn[64];
		snprintf(rn, sizeof(rn), "launch.%s", v);
		CK(cudaMemset(y, 0, 4096));
		cudaGraphExec_t ge = NULL;
		if (vi == 1) {
			cudaGraph_t g;
			CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
			for (int k = 0; k < 1500; k++)
				tiny<<<1, 32, 0, s>>>(y, 0.5f);
			CK(cudaStreamEndCapture(s, &g));
			CK(cudaGraphInstantiate(&ge, g, 0));
			CK(cudaGraphDestroy(g));
		}
		std::vector<double> t;
		for (int st = 0; st < steps; st++) {
			nvtxRangePushA(rn);
			double t0 = now_ms();
			if (vi == 0)
				for (int k = 0; k < 1500; k++)
					tiny<<<1, 32, 0, s>>>(y, 0.5f);
			else
				CK(cudaGraphLaunch(ge, s));
			CK(cudaStreamSynchronize(s));
			t.push_back(now_ms() - t0);
			nvtxRangePop();
		}
		if (ge)
			CK(cudaGraphExecDestroy(ge));
		report("launch", v, t, read_sum(y, 32));
	}

	for (int vi = 0; vi < 2; vi++) { // host-sync: a synchronize after each of 30 kernels, or once per step
		if (skip("sync"))
			break;
		const char *v = variants[vi];
		char rn[64];
		snprintf(rn, sizeof(rn), "sync.%s", v);
		CK(cudaMemset(y, 0, 4096));
		std::vector<double> t;
		for (int st = 0; st < steps; st++) {
			nvtxRangePushA(rn);
			double t0 = now_ms();
			for (int k = 0; k < 30; k++) {
				spin<<<sms * 4, 256, 0, s>>>(y, c100, 1.0f);
				if (vi == 0)
					CK(cudaStreamSynchronize(s));
			}
			CK(cudaStreamSynchronize(s));
			t.push_back(now_ms() - t0);
			nvtxRangePop();
		}
		report("sync", v, t, read_sum(y, 1));
	}

	{ // sync-copy: a small result read back with cudaMemcpy after each of 30 kernels, or cudaMemcpyAsync;
	  // on the legacy default stream, as a program without streams has it (cudaMemcpy then waits for the kernel)
		float *hp;
		CK(cudaMallocHost(&hp, 30 * 1024 * sizeof(float)));
		for (int vi = 0; vi < 2 && !skip("synccopy"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "synccopy.%s", v);
			CK(cudaMemset(y, 0, 4096 * 4));
			std::vector<double> t;
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				for (int k = 0; k < 30; k++) {
					spin<<<sms * 4, 256>>>(y, c100, 1.0f);
					if (vi == 0)
						CK(cudaMemcpy(hp + k * 1024, y, 4096, cudaMemcpyDeviceToHost));
					else
						CK(cudaMemcpyAsync(hp + k * 1024, y, 4096, cudaMemcpyDeviceToHost, 0));
				}
				CK(cudaStreamSynchronize(0));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			double cs = 0;
			for (int k = 0; k < 30; k++)
				cs += hp[k * 1024];
			report("synccopy", v, t, cs);
		}
		CK(cudaFreeHost(hp));
	}

	for (int vi = 0; vi < 2; vi++) { // alloc-churn: a 256 MiB scratch buffer freed and allocated mid-step
		if (skip("alloc"))
			break;
		const char *v = variants[vi];
		char rn[64];
		snprintf(rn, sizeof(rn), "alloc.%s", v);
		CK(cudaMemset(y, 0, 4096));
		size_t n = (256u << 20) / sizeof(float);
		float *buf;
		CK(cudaMalloc(&buf, n * sizeof(float)));
		std::vector<double> t;
		for (int st = 0; st < steps; st++) {
			nvtxRangePushA(rn);
			double t0 = now_ms();
			for (int k = 0; k < 8; k++)
				spin<<<sms * 4, 256, 0, s>>>(y, c200, 1.0f);
			if (vi == 0) {
				CK(cudaFree(buf));
				CK(cudaMalloc(&buf, n * sizeof(float)));
			}
			writeall<<<sms * 8, 256, 0, s>>>(buf, 1 << 20, 1.0f);
			for (int k = 0; k < 8; k++)
				spin<<<sms * 4, 256, 0, s>>>(y, c200, 1.0f);
			CK(cudaStreamSynchronize(s));
			t.push_back(now_ms() - t0);
			nvtxRangePop();
		}
		CK(cudaFree(buf));
		report("alloc", v, t, read_sum(y, 1));
	}

	{ // step-gap: 3 ms of host data preparation before each step, or prepared for the next step while the GPU runs
		size_t n = (8u << 20) / sizeof(float);
		float *h[2], *d, *acc;
		CK(cudaMallocHost(&h[0], n * sizeof(float)));
		CK(cudaMallocHost(&h[1], n * sizeof(float)));
		CK(cudaMalloc(&d, n * sizeof(float)));
		CK(cudaMalloc(&acc, 64));
		for (int vi = 0; vi < 2 && !skip("datapre"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "datapre.%s", v);
			CK(cudaMemset(acc, 0, 64));
			CK(cudaMemset(y, 0, 64));
			std::vector<double> t;
			if (vi == 1)
				prepare(h[0], n, 0, 3000);
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				float *cur = h[vi == 1 ? st % 2 : 0];
				if (vi == 0)
					prepare(cur, n, st, 3000);
				// the copy on its own stream (as a prefetching loader's), so that only the gap is planted
				CK(cudaMemcpyAsync(d, cur, n * sizeof(float), cudaMemcpyHostToDevice, s2));
				CK(cudaEventRecord(ev, s2));
				CK(cudaStreamWaitEvent(s, ev, 0));
				consume<<<sms * 4, 256, 0, s>>>(d, acc, n);
				for (int k = 0; k < 25; k++) // 5 ms of GPU work: the next batch's 3 ms hide behind it
					spin<<<sms * 4, 256, 0, s>>>(y, c200, 1.0f);
				if (vi == 1 && st + 1 < steps)
					prepare(h[(st + 1) % 2], n, st + 1, 3000);
				CK(cudaStreamSynchronize(s));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			report("datapre", v, t, read_sum(acc, 1));
		}
		CK(cudaFreeHost(h[0]));
		CK(cudaFreeHost(h[1]));
		CK(cudaFree(d));
		CK(cudaFree(acc));
	}

	{ // pageable-copy: 128 MiB copied in from malloc'd memory, or from pinned memory
		size_t n = (128u << 20) / sizeof(float);
		float *hpg = (float *)malloc(n * sizeof(float)), *hpin, *d, *acc;
		CK(cudaMallocHost(&hpin, n * sizeof(float)));
		for (size_t i = 0; i < n; i++)
			hpg[i] = hpin[i] = (float)(i % 5);
		CK(cudaMalloc(&d, n * sizeof(float)));
		CK(cudaMalloc(&acc, 64));
		for (int vi = 0; vi < 2 && !skip("pageable"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "pageable.%s", v);
			CK(cudaMemset(acc, 0, 64));
			std::vector<double> t;
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				CK(cudaMemcpyAsync(d, vi == 0 ? hpg : hpin, n * sizeof(float), cudaMemcpyHostToDevice, s2));
				CK(cudaEventRecord(ev, s2));
				CK(cudaStreamWaitEvent(s, ev, 0));
				consume<<<sms * 4, 256, 0, s>>>(d, acc, n);
				CK(cudaStreamSynchronize(s));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			report("pageable", v, t, read_sum(acc, 1));
		}
		free(hpg);
		CK(cudaFreeHost(hpin));
		CK(cudaFree(d));
		CK(cudaFree(acc));
	}

	{ // small-grid: the same grid-stride kernel with 8 blocks, or 8 per SM
		size_t n = 4u << 20;
		float *d;
		CK(cudaMalloc(&d, n * sizeof(float)));
		for (int vi = 0; vi < 2 && !skip("grid"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "grid.%s", v);
			CK(cudaMemset(d, 0, n * sizeof(float)));
			std::vector<double> t;
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				work<<<vi == 0 ? 8 : sms * 8, 256, 0, s>>>(d, n, 64);
				CK(cudaStreamSynchronize(s));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			report("grid", v, t, read_sum(d, 1024));
		}
		CK(cudaFree(d));
	}

	{ // copy-compute-serial: 8 chunks copied in and worked on, one stream, or copies on a second stream
		const int C = 8;
		size_t n = (16u << 20) / sizeof(float);
		float *h, *d[2], *acc;
		CK(cudaMallocHost(&h, C * n * sizeof(float)));
		for (size_t i = 0; i < C * n; i++)
			h[i] = (float)(i % 3);
		CK(cudaMalloc(&d[0], n * sizeof(float)));
		CK(cudaMalloc(&d[1], n * sizeof(float)));
		CK(cudaMalloc(&acc, 64));
		cudaEvent_t copied[2], used[2];
		for (int i = 0; i < 2; i++) {
			CK(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
			CK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
		}
		for (int vi = 0; vi < 2 && !skip("serial"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "serial.%s", v);
			CK(cudaMemset(acc, 0, 64));
			std::vector<double> t;
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				for (int c = 0; c < C; c++) {
					float *dc = d[c % 2];
					cudaStream_t cs = vi == 0 ? s : s2;
					if (vi == 1)
						CK(cudaStreamWaitEvent(s2, used[c % 2], 0));
					CK(cudaMemcpyAsync(dc, h + c * n, n * sizeof(float), cudaMemcpyHostToDevice, cs));
					if (vi == 1) {
						CK(cudaEventRecord(copied[c % 2], s2));
						CK(cudaStreamWaitEvent(s, copied[c % 2], 0));
					}
					consume<<<sms * 4, 256, 0, s>>>(dc, acc, n);
					spin<<<sms * 4, 256, 0, s>>>(y, c300, 0.0f);
					if (vi == 1)
						CK(cudaEventRecord(used[c % 2], s));
				}
				CK(cudaStreamSynchronize(s));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			report("serial", v, t, read_sum(acc, 1));
		}
		CK(cudaFreeHost(h));
		CK(cudaFree(d[0]));
		CK(cudaFree(d[1]));
		CK(cudaFree(acc));
	}

	{ // memset: 1 GiB zeroed before a kernel that writes all of it anyway, or not zeroed
		size_t n = (1u << 30) / sizeof(float);
		float *d;
		CK(cudaMalloc(&d, n * sizeof(float)));
		for (int vi = 0; vi < 2 && !skip("memset"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "memset.%s", v);
			std::vector<double> t;
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				if (vi == 0)
					CK(cudaMemsetAsync(d, 0, n * sizeof(float), s));
				writeall<<<sms * 8, 256, 0, s>>>(d, n, 2.0f);
				spin<<<sms * 4, 256, 0, s>>>(y, c1000, 0.0f);
				CK(cudaStreamSynchronize(s));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			report("memset", v, t, read_sum(d, 4096));
		}
		CK(cudaFree(d));
	}
	{ // uncoalesced: the same sum read with a stride of 33 elements (one sector per thread) or consecutively
		size_t n = (128u << 20) / sizeof(float);
		float *d;
		unsigned long long *acc;
		CK(cudaMalloc(&d, n * sizeof(float)));
		CK(cudaMalloc(&acc, sizeof(*acc)));
		writeall<<<sms * 8, 256, 0, s>>>(d, n, 0.0f);
		for (int vi = 0; vi < 2 && !skip("coal"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "coal.%s", v);
			CK(cudaMemsetAsync(acc, 0, sizeof(*acc), s));
			std::vector<double> t;
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				gather<<<sms * 8, 256, 0, s>>>(d, acc, n, vi == 0 ? 33 : 1);
				CK(cudaStreamSynchronize(s));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			unsigned long long h;
			CK(cudaMemcpy(&h, acc, sizeof(h), cudaMemcpyDeviceToHost));
			report("coal", v, t, (double)h);
		}
		CK(cudaFree(d));
		CK(cudaFree(acc));
	}

	{ // low-occupancy: the same coalesced sum by 2 warps per SM (64 threads, shared memory that lets one
	  // block on an SM), or by 8 blocks of 256 threads per SM
		size_t n = (64u << 20) / sizeof(float);
		float *d;
		unsigned long long *acc;
		CK(cudaMalloc(&d, n * sizeof(float)));
		CK(cudaMalloc(&acc, sizeof(*acc)));
		writeall<<<sms * 8, 256, 0, s>>>(d, n, 0.0f);
		int smem = 0;
		CK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
		CK(cudaFuncSetAttribute(gather, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
		for (int vi = 0; vi < 2 && !skip("occ"); vi++) {
			const char *v = variants[vi];
			char rn[64];
			snprintf(rn, sizeof(rn), "occ.%s", v);
			CK(cudaMemsetAsync(acc, 0, sizeof(*acc), s));
			std::vector<double> t;
			for (int st = 0; st < steps; st++) {
				nvtxRangePushA(rn);
				double t0 = now_ms();
				if (vi == 0)
					gather<<<sms, 64, smem, s>>>(d, acc, n, 1);
				else
					gather<<<sms * 8, 256, 0, s>>>(d, acc, n, 1);
				CK(cudaStreamSynchronize(s));
				t.push_back(now_ms() - t0);
				nvtxRangePop();
			}
			unsigned long long h;
			CK(cudaMemcpy(&h, acc, sizeof(h), cudaMemcpyDeviceToHost));
			report("occ", v, t, (double)h);
		}
		CK(cudaFree(d));
		CK(cudaFree(acc));
	}
	CK(cudaFree(y));
	return 0;
}
