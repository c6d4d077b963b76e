// hold_check.cu — a CUDA program whose printed result must not change under
// launch hold (gputap run --hold N).  Every line it prints is a function of
// what the GPU computed, so a run without gputap, a run under gputap without
// hold and runs with hold 1, 2, 8, 64 must print the same bytes.
//
//   hold_check MODE [--iters N]
//     mixed    several streams (blocking and non-blocking), the legacy default stream,
//              events, copies between kernels, in-place updates, stack arguments
//              overwritten after each launch (8 bytes, a 4 KB struct, a 32,000-byte
//              __grid_constant__ struct), an `extra`-packed driver launch, a CUkernel
//              handle launched through the driver, cuLaunchKernelEx and
//              cudaLaunchKernelEx with attributes, a cooperative launch, memsets,
//              stream-ordered allocation, host functions, frees, the per-thread stream,
//              and the launch errors of bad configurations (codes printed)
//     threads  8 host threads launching on their own streams and on the legacy stream,
//              one thread waiting on another's event
//     graph    launches before, during and after a stream capture; the graph replayed
//              between eager launches
//     spin     the host spins on host-mapped memory that a kernel writes: once with the
//              pointer as an argument, once hidden in device memory (only the timer can
//              release that one); prints how long each wait took on stderr
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)
#define CKD(call)                                                                                  \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		if (r_ != CUDA_SUCCESS) {                                                          \
			fprintf(stderr, "%s:%d: %s: CUDA error %d\n", __FILE__, __LINE__, #call, (int)r_); \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

#define N (1 << 16)
#define TPB 256
#define GRID (N / TPB)

struct Affine {
	uint32_t mul, add;
};
struct Big { // 4 KB by value
	uint32_t w[1024];
};
struct Huge { // 32,000 bytes: a __grid_constant__ parameter (CUDA 12.1+)
	uint32_t w[8000];
};

__global__ void k_affine(uint32_t *x, int n, Affine p)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * p.mul + p.add;
}
__global__ void k_mix(uint32_t *b, const uint32_t *a, int n, uint32_t k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] = (b[i] ^ (a[i] + k)) * 2654435761u;
}
__global__ void k_inc(uint32_t *c, int n, uint32_t k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] += k + (uint32_t)i;
}
__global__ void k_add(uint32_t *a, const uint32_t *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += c[i];
}
__global__ void k_big(uint32_t *out, int n, Big big)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = out[i] * 3u + big.w[i % 1024];
}
__global__ void k_huge(uint32_t *out, int n, const __grid_constant__ Huge h)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = out[i] * 5u + h.w[(i * 7) % 8000] + h.w[7999];
}
__global__ void k_coop(uint32_t *x, int n, uint32_t k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	for (; i < n; i += gridDim.x * blockDim.x)
		x[i] = x[i] * 7u + k;
}
__global__ void k_fill(uint32_t *x, int n, uint32_t v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = v + (uint32_t)i;
}
__global__ void k_setflag(volatile int *flag, int v)
{
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		__threadfence_system();
		*flag = v;
	}
}
__global__ void k_setflag_indirect(int *const *where, int v)
{
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		volatile int *flag = *where;
		__threadfence_system();
		*flag = v;
	}
}
__global__ void k_smem(uint32_t *x)
{
	extern __shared__ uint32_t s[];
	s[threadIdx.x] = threadIdx.x;
	__syncthreads();
	x[threadIdx.x] += s[threadIdx.x];
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static uint64_t dev_hash(uint64_t h, const uint32_t *d, size_t n)
{
	uint32_t *tmp = (uint32_t *)malloc(n * 4);
	CK(cudaMemcpy(tmp, d, n * 4, cudaMemcpyDeviceToHost));
	h = fnv(h, tmp, n * 4);
	free(tmp);
	return h;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* driver entry points, the way libraries get them (through cuGetProcAddress) */
static CUresult(CUDAAPI *p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
					   unsigned, CUstream, void **, void **);
static CUresult(CUDAAPI *p_cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);

static void *entry(const char *name)
{
	void *p = NULL;
	cudaDriverEntryPointQueryResult q;
	CK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q));
	if (!p || q != cudaDriverEntryPointSuccess) {
		fprintf(stderr, "no driver entry point %s\n", name);
		exit(2);
	}
	return p;
}

struct HostRec {
	uint32_t *src;
	uint32_t seen[64];
	int n;
};
static void CUDART_CB host_fn(void *arg)
{
	HostRec *r = (HostRec *)arg;
	if (r->n < 64)
		r->seen[r->n++] = r->src[0];
}

/* ---------------- mixed ---------------- */
static int mode_mixed(int iters)
{
	p_cuLaunchKernel = (decltype(p_cuLaunchKernel))entry("cuLaunchKernel");
	p_cuLaunchKernelEx = (decltype(p_cuLaunchKernelEx))entry("cuLaunchKernelEx");
	uint32_t *a, *b, *c, *d, *e, *big, *huge, *co;
	CK(cudaMalloc(&a, N * 4));
	CK(cudaMalloc(&b, N * 4));
	CK(cudaMalloc(&c, N * 4));
	CK(cudaMalloc(&d, N * 4));
	CK(cudaMalloc(&e, N * 4));
	CK(cudaMalloc(&big, N * 4));
	CK(cudaMalloc(&huge, N * 4));
	CK(cudaMalloc(&co, N * 4));
	cudaStream_t s1, s2, s3;
	CK(cudaStreamCreate(&s1));
	CK(cudaStreamCreate(&s2));
	CK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
	/* every buffer is written by one stream at a time: the events order the rest */
	cudaEvent_t e1, e2, e3, eD, eA, eP, eC;
	cudaEvent_t *evs[] = {&e1, &e2, &e3, &eD, &eA, &eP, &eC};
	for (int i = 0; i < 7; i++)
		CK(cudaEventCreateWithFlags(evs[i], cudaEventDisableTiming));
	k_fill<<<GRID, TPB>>>(a, N, 1);
	k_fill<<<GRID, TPB>>>(b, N, 2);
	k_fill<<<GRID, TPB>>>(c, N, 3);
	k_fill<<<GRID, TPB>>>(d, N, 4);
	k_fill<<<GRID, TPB>>>(e, N, 5);
	CK(cudaMemset(big, 0, N * 4));
	CK(cudaMemset(huge, 0, N * 4));
	CK(cudaMemset(co, 0, N * 4));
	uint32_t *pinned;
	CK(cudaHostAlloc((void **)&pinned, N * 4, cudaHostAllocDefault));
	HostRec rec;
	memset(&rec, 0, sizeof(rec));
	CK(cudaHostAlloc((void **)&rec.src, 64, cudaHostAllocDefault));
	cudaFunction_t f_affine;
	CK(cudaGetFuncBySymbol(&f_affine, (const void *)k_affine));
	cudaKernel_t k_inc_handle;
	CK(cudaGetKernel(&k_inc_handle, (const void *)k_inc));
	uint64_t host_h = 1469598103934665603ull;
	int launch_errors = 0;
	static Huge hg;
	for (int it = 0; it < iters; it++) {
		{
			Affine p = {(uint32_t)it * 3u + 1u, (uint32_t)it};
			k_affine<<<GRID, TPB, 0, s1>>>(a, N, p);
			p.mul = 0xdeadu; /* the caller's arguments change at once */
			p.add = 0xbeefu;
		}
		CK(cudaEventRecord(e1, s1));
		CK(cudaStreamWaitEvent(s2, e1, 0));
		k_mix<<<GRID, TPB, 0, s2>>>(b, a, N, (uint32_t)it);
		k_inc<<<GRID, TPB>>>(c, N, (uint32_t)it); /* legacy stream: after s1 and s2 */
		k_add<<<GRID, TPB, 0, s1>>>(a, c, N);     /* after the legacy launch */
		/* a device-to-device copy between kernels, then an in-place update of the copy */
		CK(cudaMemcpyAsync(d, b, N * 4, cudaMemcpyDeviceToDevice, s2));
		{
			Affine p = {5u, (uint32_t)it};
			k_affine<<<GRID, TPB, 0, s2>>>(d, N, p);
			memset(&p, 0xff, sizeof(p));
		}
		/* a 4 KB struct by value */
		{
			Big bg;
			for (int i = 0; i < 1024; i++)
				bg.w[i] = (uint32_t)(i * 31 + it);
			k_big<<<GRID, TPB, 0, s2>>>(big, N, bg);
			memset(&bg, 0, sizeof(bg));
		}
		/* 32,000 bytes of __grid_constant__ arguments */
		for (int i = 0; i < 8000; i++)
			hg.w[i] = (uint32_t)(i * 17 + it * 3);
		k_huge<<<GRID, TPB, 0, s1>>>(huge, N, hg);
		memset(&hg, 0, sizeof(hg));
		/* a cooperative launch */
		{
			uint32_t *x = co;
			int n = N;
			uint32_t k = (uint32_t)it;
			void *args[] = {&x, &n, &k};
			CK(cudaLaunchCooperativeKernel((void *)k_coop, dim3(64), dim3(TPB), args, 0, s1));
			k = 0;
		}
		/* the per-thread default stream (never held) updates co after s1, and s1 waits for it */
		CK(cudaEventRecord(eC, s1));
		CK(cudaStreamWaitEvent(cudaStreamPerThread, eC, 0));
		k_inc<<<GRID, TPB, 0, cudaStreamPerThread>>>(co, N, (uint32_t)it);
		CK(cudaEventRecord(eP, cudaStreamPerThread));
		CK(cudaStreamWaitEvent(s1, eP, 0));
		/* a memset the next kernel reads, a stream-ordered allocation */
		{
			uint32_t *t;
			CK(cudaMallocAsync(&t, N * 4, s2));
			CK(cudaMemsetAsync(t, it & 0xff, N * 4, s2));
			k_add<<<GRID, TPB, 0, s2>>>(t, d, N);
			k_add<<<GRID, TPB, 0, s2>>>(d, t, N);
			CK(cudaFreeAsync(t, s2));
		}
		/* the non-blocking stream s3 reads d (s2's) and writes e (read by s1): wait for both */
		CK(cudaEventRecord(eD, s2));
		CK(cudaStreamWaitEvent(s3, eD, 0));
		CK(cudaStreamWaitEvent(s3, eA, 0));
		/* an extra-packed driver launch of k_affine (how NCCL passes every kernel's arguments) */
		{
			struct {
				uint32_t *x;
				int n;
				Affine p;
			} packed;
			memset(&packed, 0, sizeof(packed));
			packed.x = e;
			packed.n = N;
			packed.p.mul = 3u;
			packed.p.add = (uint32_t)it * 11u;
			/* the size of the kernel's parameters (20 bytes), not of the padded struct */
			size_t sz = offsetof(__typeof__(packed), p) + sizeof(Affine);
			void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
					 CU_LAUNCH_PARAM_END};
			CKD(p_cuLaunchKernel((CUfunction)f_affine, GRID, 1, 1, TPB, 1, 1, 0, (CUstream)s3, NULL, extra));
			memset(&packed, 0, sizeof(packed));
			sz = 0;
		}
		/* a CUkernel handle through the driver, on the legacy stream */
		{
			uint32_t k = (uint32_t)it + 100u;
			int n = N;
			uint32_t *x = c;
			void *args[] = {&x, &n, &k};
			CKD(p_cuLaunchKernel((CUfunction)k_inc_handle, GRID, 1, 1, TPB, 1, 1, 0, NULL, args, NULL));
			k = 0;
			x = NULL;
		}
		/* cuLaunchKernelEx with attributes (priority, a cluster of 2), arguments and attributes on the stack */
		{
			CUlaunchAttribute at[2];
			memset(at, 0, sizeof(at));
			at[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
			at[0].value.priority = 0;
			at[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
			at[1].value.clusterDim.x = 2;
			at[1].value.clusterDim.y = 1;
			at[1].value.clusterDim.z = 1;
			CUlaunchConfig cfg;
			memset(&cfg, 0, sizeof(cfg));
			cfg.gridDimX = GRID;
			cfg.gridDimY = cfg.gridDimZ = 1;
			cfg.blockDimX = TPB;
			cfg.blockDimY = cfg.blockDimZ = 1;
			cfg.hStream = (CUstream)s3;
			cfg.attrs = at;
			cfg.numAttrs = 2;
			uint32_t *x = e;
			int n = N;
			Affine p = {7u, (uint32_t)it};
			void *args[] = {&x, &n, &p};
			CKD(p_cuLaunchKernelEx(&cfg, (CUfunction)f_affine, args, NULL));
			memset(at, 0xff, sizeof(at));
			memset(&cfg, 0, sizeof(cfg));
			p.mul = 0;
		}
		/* the runtime's cudaLaunchKernelEx with an attribute */
		{
			cudaLaunchAttribute at[1];
			at[0].id = cudaLaunchAttributePriority;
			at[0].val.priority = 0;
			cudaLaunchConfig_t cfg = {};
			cfg.gridDim = dim3(GRID);
			cfg.blockDim = dim3(TPB);
			cfg.stream = s3;
			cfg.attrs = at;
			cfg.numAttrs = 1;
			CK(cudaLaunchKernelEx(&cfg, k_mix, e, (const uint32_t *)d, N, (uint32_t)it));
		}
		CK(cudaEventRecord(e3, s3));
		CK(cudaStreamWaitEvent(s2, e3, 0)); /* s2 writes d again next round */
		/* a host function reads what a copy brought back */
		CK(cudaMemcpyAsync(rec.src, a, 16, cudaMemcpyDeviceToHost, s1));
		CK(cudaLaunchHostFunc(s1, host_fn, &rec));
		/* s1 reads e after s3 wrote it; s3 writes it again next round after this read */
		CK(cudaStreamWaitEvent(s1, e3, 0));
		k_add<<<GRID, TPB, 0, s1>>>(a, e, N);
		CK(cudaEventRecord(eA, s1));
		if (it % 4 == 3) {
			CK(cudaMemcpyAsync(pinned, a, N * 4, cudaMemcpyDeviceToHost, s1));
			CK(cudaStreamSynchronize(s1));
			host_h = fnv(host_h, pinned, N * 4);
		}
		if (it % 5 == 4) { /* a free that must wait for the kernels using the memory */
			uint32_t *t;
			CK(cudaMalloc(&t, N * 4));
			k_fill<<<GRID, TPB, 0, s2>>>(t, N, (uint32_t)it);
			k_add<<<GRID, TPB, 0, s2>>>(b, t, N);
			CK(cudaFree(t));
		}
		CK(cudaEventRecord(e2, s2));
		if (cudaEventQuery(e2) == cudaErrorInvalidResourceHandle)
			launch_errors++;
		if (cudaGetLastError() != cudaSuccess)
			launch_errors++;
	}
	/* errors of bad configurations: the same code from the same call */
	k_affine<<<GRID, 2048, 0, s1>>>(a, N, Affine{1, 1});
	int err_block = (int)cudaGetLastError();
	k_smem<<<1, 32, 300 * 1024, s1>>>(a);
	int err_smem = (int)cudaGetLastError();
	k_affine<<<dim3(1, 70000), TPB, 0, s1>>>(a, N, Affine{1, 1});
	int err_grid = (int)cudaGetLastError();
	CK(cudaDeviceSynchronize());
	uint64_t h = 1469598103934665603ull;
	h = dev_hash(h, a, N);
	h = dev_hash(h, b, N);
	h = dev_hash(h, c, N);
	h = dev_hash(h, d, N);
	h = dev_hash(h, e, N);
	h = dev_hash(h, big, N);
	h = dev_hash(h, huge, N);
	h = dev_hash(h, co, N);
	h = fnv(h, rec.seen, sizeof(rec.seen));
	printf("mixed iters=%d checksum=%016llx host=%016llx hostfn=%d errors=%d block=%d smem=%d grid=%d\n", iters,
	       (unsigned long long)h, (unsigned long long)host_h, rec.n, launch_errors, err_block, err_smem, err_grid);
	return 0;
}

/* ---------------- threads ---------------- */
#define NTHREADS 8
struct Shared {
	cudaEvent_t ev[NTHREADS];
	pthread_barrier_t bar;
	uint64_t h[NTHREADS];
	int iters;
};
static Shared S;

static void *thread_main(void *arg)
{
	int id = (int)(intptr_t)arg;
	cudaStream_t s;
	CK(cudaStreamCreate(&s));
	uint32_t *x, *y;
	CK(cudaMalloc(&x, N * 4));
	CK(cudaMalloc(&y, N * 4));
	k_fill<<<GRID, TPB, 0, s>>>(x, N, (uint32_t)id);
	k_fill<<<GRID, TPB, 0, s>>>(y, N, (uint32_t)id * 7u);
	uint32_t *host = (uint32_t *)malloc(N * 4);
	uint64_t h = 1469598103934665603ull;
	pthread_barrier_wait(&S.bar);
	for (int it = 0; it < S.iters; it++) {
		Affine p = {(uint32_t)(id + it) | 1u, (uint32_t)it};
		k_affine<<<GRID, TPB, 0, s>>>(x, N, p);
		p.mul = 0;
		k_mix<<<GRID, TPB, 0, s>>>(y, x, N, (uint32_t)it);
		if (id == 0 && it % 3 == 0) /* the legacy stream, from one thread */
			k_inc<<<GRID, TPB>>>(y, N, (uint32_t)it);
		CK(cudaEventRecord(S.ev[id], s));
		if (it % 10 == 9) {
			CK(cudaMemcpyAsync(host, y, N * 4, cudaMemcpyDeviceToHost, s));
			CK(cudaStreamSynchronize(s));
			h = fnv(h, host, N * 4);
		}
	}
	pthread_barrier_wait(&S.bar);
	/* thread id waits for the work of thread id+1 through its event */
	CK(cudaEventSynchronize(S.ev[(id + 1) % NTHREADS]));
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(host, y, N * 4, cudaMemcpyDeviceToHost));
	h = fnv(h, host, N * 4);
	S.h[id] = h;
	free(host);
	CK(cudaFree(x));
	CK(cudaFree(y));
	CK(cudaStreamDestroy(s));
	return NULL;
}

static int mode_threads(int iters)
{
	S.iters = iters;
	CK(cudaFree(0));
	for (int i = 0; i < NTHREADS; i++)
		CK(cudaEventCreateWithFlags(&S.ev[i], cudaEventDisableTiming));
	pthread_barrier_init(&S.bar, NULL, NTHREADS);
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < NTHREADS; i++)
		h = fnv(h, &S.h[i], 8);
	printf("threads n=%d iters=%d checksum=%016llx\n", NTHREADS, iters, (unsigned long long)h);
	return 0;
}

/* ---------------- graph ---------------- */
static int mode_graph(int iters)
{
	uint32_t *a, *b;
	CK(cudaMalloc(&a, N * 4));
	CK(cudaMalloc(&b, N * 4));
	cudaStream_t s, other;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
	k_fill<<<GRID, TPB, 0, s>>>(a, N, 9);
	k_fill<<<GRID, TPB, 0, other>>>(b, N, 10);
	/* launches queued before the capture must run before it, not in the graph */
	for (int i = 0; i < 5; i++) {
		Affine p = {3u, (uint32_t)i};
		k_affine<<<GRID, TPB, 0, s>>>(a, N, p);
		p.add = 0;
	}
	cudaGraph_t g;
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
	for (int i = 0; i < 6; i++) {
		Affine p = {(uint32_t)i * 2u + 1u, 77u};
		k_affine<<<GRID, TPB, 0, s>>>(a, N, p);
		p.mul = 0;
		k_mix<<<GRID, TPB, 0, s>>>(a, a, N, (uint32_t)i);
		/* another stream runs eagerly during the capture */
		Affine q = {5u, (uint32_t)i};
		k_affine<<<GRID, TPB, 0, other>>>(b, N, q);
		q.mul = 0;
	}
	CK(cudaStreamEndCapture(s, &g));
	cudaEvent_t done;
	CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
	CK(cudaEventRecord(done, other));
	CK(cudaStreamWaitEvent(s, done, 0)); /* the replays read b */
	cudaGraphExec_t ge;
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (int r = 0; r < iters; r++) {
		Affine p = {(uint32_t)r | 1u, 1u};
		k_affine<<<GRID, TPB, 0, s>>>(a, N, p);
		CK(cudaGraphLaunch(ge, s));
		k_add<<<GRID, TPB, 0, s>>>(a, b, N);
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamSynchronize(other));
	size_t nodes = 0;
	CK(cudaGraphGetNodes(g, NULL, &nodes));
	uint64_t h = 1469598103934665603ull;
	h = dev_hash(h, a, N);
	h = dev_hash(h, b, N);
	printf("graph replays=%d nodes=%zu checksum=%016llx\n", iters, nodes, (unsigned long long)h);
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	return 0;
}

/* ---------------- spin ---------------- */
static int spin_until(volatile int *flag, int v, double *waited)
{
	double t0 = now_s();
	while (*flag != v) {
		if (now_s() - t0 > 20.0)
			return -1;
	}
	*waited = now_s() - t0;
	return 0;
}

static int mode_spin(int iters)
{
	int *flag, *dflag;
	CK(cudaHostAlloc((void **)&flag, sizeof(int), cudaHostAllocMapped));
	CK(cudaHostGetDevicePointer((void **)&dflag, flag, 0));
	int **where;
	CK(cudaMalloc(&where, sizeof(int *)));
	CK(cudaMemcpy(where, &dflag, sizeof(int *), cudaMemcpyHostToDevice));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	*flag = 0;
	double w1 = 0, w2 = 0, worst = 0;
	int ok = 0;
	for (int i = 1; i <= iters; i++) {
		/* the pointer is an argument: seen as host memory, not held */
		k_setflag<<<1, 32, 0, s>>>(dflag, 2 * i - 1);
		if (spin_until(flag, 2 * i - 1, &w1) < 0) {
			printf("spin stuck (direct) at %d\n", i);
			return 3;
		}
		/* the pointer is in device memory: only the timer can release it */
		k_setflag_indirect<<<1, 32, 0, s>>>(where, 2 * i);
		if (spin_until(flag, 2 * i, &w2) < 0) {
			printf("spin stuck (indirect) at %d\n", i);
			return 3;
		}
		if (w1 > worst)
			worst = w1;
		if (w2 > worst)
			worst = w2;
		ok++;
	}
	CK(cudaStreamSynchronize(s));
	printf("spin rounds=%d ok=%d flag=%d\n", iters, ok, *flag);
	fprintf(stderr, "spin: longest wait %.3f ms\n", worst * 1e3);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mixed";
	int iters = 0;
	for (int i = 2; i + 1 < argc; i++)
		if (strcmp(argv[i], "--iters") == 0)
			iters = atoi(argv[i + 1]);
	if (strcmp(mode, "mixed") == 0)
		return mode_mixed(iters ? iters : 24);
	if (strcmp(mode, "threads") == 0)
		return mode_threads(iters ? iters : 60);
	if (strcmp(mode, "graph") == 0)
		return mode_graph(iters ? iters : 20);
	if (strcmp(mode, "spin") == 0)
		return mode_spin(iters ? iters : 20);
	fprintf(stderr, "usage: hold_check mixed|threads|graph|spin [--iters N]\n");
	return 2;
}
