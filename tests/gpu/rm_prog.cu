// A CUDA program that knows its kernels, for range-metrics checks and the benchmark.
//
//   rm_prog [--iters N] [--per N] [--n ELEMS] [--flat] [--threads] [--graph] [--outer] [--bare]
//           [--manifest FILE]
//
// Before any range: one scale kernel (-> "(none)").  Then N iterations of the
// NVTX range "iter", each holding (unless --flat) "phase_a" with `per` scale
// kernels on stream 1 and "phase_b" with `per` add kernels on stream 2, and
// `per` busy kernels (1..4 loops, so their instruction counts differ) directly
// inside "iter" on stream 1.  With --flat the three kinds go directly into
// "iter" (the benchmark's shape: per x 3 kernels per range on two streams).
// --threads: a second thread launches `per` busy kernels in its own range
// "worker" while the main thread runs.  --graph: a CUDA graph of three
// kernels, launched twice inside the range "graph".  --outer: the range "main"
// is opened before the first CUDA call and closed at the end (everything is
// inside it).  --bare: after the iterations, the main thread opens "bare" and a
// thread with no range of its own launches `per` busy kernels in it (they count
// in "bare": the range open on the other thread).
// The scale kernel updates its buffer in place: the printed checksum proves
// the results unchanged under kernel replay.  --manifest writes one line per
// launch of the main thread: "<index> <kernel> <range path>".
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void k_scale(float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * a + 1.0f;
}

__global__ void k_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void k_busy(float *y, int n, int loops)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = y[i];
	for (int k = 0; k < loops * 8; k++)
		v = v * 0.999f + 0.5f;
	y[i] = v;
}

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static FILE *manifest;
static int launch_index;
static char path[256]; /* "iter#2/phase_a#2": each range with its occurrence */
static struct {
	char path[256];
	int count;
} seen[64];

static void note(const char *kernel)
{
	launch_index++;
	if (manifest)
		fprintf(manifest, "%d %s %s\n", launch_index, kernel, path[0] ? path : "(none)");
}

/* occurrence of `p` (a path without occurrence numbers), counted per path */
static int occurrence(const char *p)
{
	for (int i = 0; i < 64; i++) {
		if (!seen[i].path[0]) {
			snprintf(seen[i].path, sizeof(seen[i].path), "%s", p);
			return seen[i].count = 1;
		}
		if (!strcmp(seen[i].path, p))
			return ++seen[i].count;
	}
	return 0;
}

static void push(const char *name)
{
	nvtxRangePushA(name);
	char plain[256] = "";
	for (const char *q = path; *q; q++) /* drop the #N parts */
		if (*q == '#')
			while (q[1] && q[1] != '/')
				q++;
		else
			strncat(plain, q, 1);
	size_t l = strlen(plain);
	snprintf(plain + l, sizeof(plain) - l, "%s%s", l ? "/" : "", name);
	l = strlen(path);
	snprintf(path + l, sizeof(path) - l, "%s%s#%d", l ? "/" : "", name, occurrence(plain));
}

static void pop(void)
{
	nvtxRangePop();
	char *s = strrchr(path, '/');
	if (s)
		*s = 0;
	else
		path[0] = 0;
}

struct worker_arg {
	float *y;
	int n, per;
};

/* --bare: launches with no range of its own on this thread */
static void *bare_worker(void *p)
{
	struct worker_arg *w = (struct worker_arg *)p;
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int k = 0; k < w->per; k++) {
		k_busy<<<(w->n + 255) / 256, 256, 0, s>>>(w->y, w->n, 3);
		note("k_busy");
	}
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	return NULL;
}

static void *worker(void *p)
{
	struct worker_arg *w = (struct worker_arg *)p;
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	nvtxRangePushA("worker");
	for (int k = 0; k < w->per; k++)
		k_busy<<<(w->n + 255) / 256, 256, 0, s>>>(w->y, w->n, 2);
	CK(cudaStreamSynchronize(s));
	nvtxRangePop();
	CK(cudaStreamDestroy(s));
	return NULL;
}

int main(int argc, char **argv)
{
	int iters = 3, per = 2, n = 1 << 20, flat = 0, threads = 0, graph = 0, outer = 0, bare = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--per") && i + 1 < argc)
			per = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--flat"))
			flat = 1;
		else if (!strcmp(argv[i], "--threads"))
			threads = 1;
		else if (!strcmp(argv[i], "--graph"))
			graph = 1;
		else if (!strcmp(argv[i], "--outer"))
			outer = 1;
		else if (!strcmp(argv[i], "--bare"))
			bare = 1;
		else if (!strcmp(argv[i], "--manifest") && i + 1 < argc)
			manifest = fopen(argv[++i], "w");
		else {
			fprintf(stderr, "usage: rm_prog [--iters N] [--per N] [--n N] [--flat] [--threads] [--graph] "
					"[--outer] [--bare] [--manifest F]\n");
			return 2;
		}
	}
	if (outer)
		push("main"); /* before the first CUDA call */
	float *x, *a, *b, *c, *y, *wy;
	size_t bytes = (size_t)n * sizeof(float);
	CK(cudaMalloc(&x, bytes));
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMalloc(&c, bytes));
	CK(cudaMalloc(&y, bytes));
	CK(cudaMalloc(&wy, bytes));
	float *h = (float *)malloc(bytes);
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 1000) * 0.001f;
	CK(cudaMemcpy(x, h, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, h, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(y, h, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(wy, h, bytes, cudaMemcpyHostToDevice));
	cudaStream_t s1, s2;
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	int grid = (n + 255) / 256;
	CK(cudaDeviceSynchronize());

	k_scale<<<grid, 256, 0, s1>>>(x, n, 1.0001f);
	note("k_scale");
	pthread_t th;
	struct worker_arg wa = {wy, n, per};
	if (threads)
		pthread_create(&th, NULL, worker, &wa);
	for (int it = 0; it < iters; it++) {
		push("iter");
		if (!flat)
			push("phase_a");
		for (int k = 0; k < per; k++) {
			k_scale<<<grid, 256, 0, s1>>>(x, n, 1.0001f);
			note("k_scale");
		}
		if (!flat) {
			pop();
			push("phase_b");
		}
		for (int k = 0; k < per; k++) {
			k_add<<<grid, 256, 0, s2>>>(a, b, c, n);
			note("k_add");
		}
		if (!flat)
			pop();
		for (int k = 0; k < per; k++) {
			k_busy<<<grid, 256, 0, s1>>>(y, n, 1 + (k + it) % 4);
			note("k_busy");
		}
		CK(cudaStreamSynchronize(s1));
		CK(cudaStreamSynchronize(s2));
		pop();
	}
	/* before the capture: a global-mode capture forbids the worker's synchronize */
	if (threads)
		pthread_join(th, NULL);
	if (bare) {
		pthread_t bt;
		struct worker_arg ba = {wy, n, per};
		push("bare");
		pthread_create(&bt, NULL, bare_worker, &ba);
		pthread_join(bt, NULL);
		pop();
	}
	if (graph) {
		cudaGraph_t g;
		cudaGraphExec_t ge;
		CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
		k_scale<<<grid, 256, 0, s1>>>(x, n, 1.0001f);
		k_add<<<grid, 256, 0, s1>>>(a, b, c, n);
		k_busy<<<grid, 256, 0, s1>>>(y, n, 3);
		CK(cudaStreamEndCapture(s1, &g));
		CK(cudaGraphInstantiate(&ge, g, 0));
		push("graph");
		for (int r = 0; r < 2; r++) {
			CK(cudaGraphLaunch(ge, s1));
			note("graph(k_scale,k_add,k_busy)");
		}
		CK(cudaStreamSynchronize(s1));
		pop();
		CK(cudaGraphExecDestroy(ge));
		CK(cudaGraphDestroy(g));
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(h, x, bytes, cudaMemcpyDeviceToHost));
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += h[i];
	if (outer)
		pop();
	printf("launches %d checksum %.6f\n", launch_index, sum);
	if (manifest)
		fclose(manifest);
	return 0;
}
