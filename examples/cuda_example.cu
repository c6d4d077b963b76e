// cuda_example.cu — a small CUDA program that knows what it did.
//
// Host-to-device copies, kernels on two streams, nested NVTX ranges,
// device-to-host copies, frees; at the end one JSON line on stdout with the
// kernel count per name, bytes per copy direction, bytes allocated and the
// NVTX ranges opened, so a test can compare a recording against it.
//
//   cuda_example [--iters N] [--threads T] [--fork] [--marks M] [--sleep-ms S] [--timing]
//     --iters N    kernel rounds (default 10): each launches scale on stream 1, add on stream 2
//     --threads T  T host threads each launch `spin` N times at once (default 0)
//     --fork       fork a child that opens NVTX ranges and exits (no CUDA in the child)
//     --marks M    M NVTX marks (for record-loss accounting)
//     --sleep-ms S sleep between rounds (for signal tests)
//     --timing     a second JSON line: wall µs per round of the compute loop (benchmarks)
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern "C" __global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

extern "C" __global__ void add(float *x, const float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += y[i];
}

extern "C" __global__ void spin(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

static int nranges;
static char ranges_json[1 << 20];
static size_t rj;
static int depth;

static void push(const char *name)
{
	if (rj + 128 < sizeof(ranges_json))
		rj += snprintf(ranges_json + rj, sizeof(ranges_json) - rj, "%s{\"name\":\"%s\",\"level\":%d}",
			       nranges ? "," : "", name, depth);
	nranges++;
	depth++;
	nvtxRangePushA(name);
}

static void pop(void)
{
	depth--;
	nvtxRangePop();
}

struct thr {
	int iters, n;
	float *d;
};

static void *thread_main(void *arg)
{
	struct thr *t = (struct thr *)arg;
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < t->iters; i++)
		spin<<<(t->n + 255) / 256, 256, 0, s>>>(t->d, t->n);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	return NULL;
}

int main(int argc, char **argv)
{
	int iters = 10, threads = 0, do_fork = 0, marks = 0, sleep_ms = 0, timing = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--fork"))
			do_fork = 1;
		else if (!strcmp(argv[i], "--marks") && i + 1 < argc)
			marks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--timing"))
			timing = 1;
		else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
			sleep_ms = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--iters N] [--threads T] [--fork] [--marks M] [--sleep-ms S] [--timing]\n", argv[0]);
			return 2;
		}
	}
	const int n = 1 << 20;
	const size_t bytes = n * sizeof(float);
	unsigned long long h2d = 0, d2h = 0, alloc = 0;
	float *h = (float *)malloc(bytes), *h2 = (float *)malloc(bytes);
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 97);

	push("example");
	push("setup");
	float *da, *db;
	CK(cudaMalloc(&da, bytes));
	CK(cudaMalloc(&db, bytes));
	alloc += 2 * bytes;
	cudaStream_t s1, s2;
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	pop();

	push("copy_in");
	CK(cudaMemcpy(da, h, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(db, h, bytes, cudaMemcpyHostToDevice));
	h2d += 2 * bytes;
	pop();

	int nscale = 0, nadd = 0;
	struct timespec c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &c0);
	push("compute");
	for (int it = 0; it < iters; it++) {
		push("round");
		scale<<<(n + 255) / 256, 256, 0, s1>>>(da, 1.0001f, n);
		nscale++;
		add<<<(n + 255) / 256, 256, 0, s2>>>(db, da, n);
		nadd++;
		pop();
		if (sleep_ms)
			usleep(sleep_ms * 1000);
	}
	CK(cudaStreamSynchronize(s1));
	CK(cudaStreamSynchronize(s2));
	pop();
	clock_gettime(CLOCK_MONOTONIC, &c1);

	int nspin = 0;
	if (threads > 0) {
		push("threads");
		pthread_t tid[64];
		struct thr arg[64];
		float *dt[64];
		if (threads > 64)
			threads = 64;
		for (int i = 0; i < threads; i++) {
			CK(cudaMalloc(&dt[i], bytes));
			alloc += bytes;
			arg[i] = (struct thr){iters, n, dt[i]};
		}
		for (int i = 0; i < threads; i++)
			pthread_create(&tid[i], NULL, thread_main, &arg[i]);
		for (int i = 0; i < threads; i++)
			pthread_join(tid[i], NULL);
		for (int i = 0; i < threads; i++)
			CK(cudaFree(dt[i]));
		nspin = threads * iters;
		pop();
	}

	push("copy_out");
	CK(cudaMemcpy(h2, db, bytes, cudaMemcpyDeviceToHost));
	d2h += bytes;
	pop();

	for (int i = 0; i < marks; i++)
		nvtxMarkA("mark");

	int child_status = -1;
	if (do_fork) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			nvtxRangePushA("child");
			nvtxRangePushA("child_inner");
			nvtxRangePop();
			nvtxRangePop();
			exit(0);
		}
		int st = 0;
		waitpid(p, &st, 0);
		child_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	}

	push("teardown");
	CK(cudaFree(da));
	CK(cudaFree(db));
	CK(cudaStreamDestroy(s1));
	CK(cudaStreamDestroy(s2));
	pop();
	pop(); /* example */

	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += h2[i];
	printf("{\"kernels\":{\"scale\":%d,\"add\":%d,\"spin\":%d},\"h2d_bytes\":%llu,\"d2h_bytes\":%llu,"
	       "\"alloc_bytes\":%llu,\"memcpy_calls\":{\"h2d\":2,\"d2h\":1},\"nvtx_ranges\":[%s],\"marks\":%d,"
	       "\"child_status\":%d,\"pid\":%d,\"checksum\":%.6e}\n",
	       nscale, nadd, nspin, h2d, d2h, alloc, ranges_json, marks, child_status, (int)getpid(), sum);
	if (timing) /* a second line, only when asked: the first stays identical run to run */
		printf("{\"us_per_round\":%.3f}\n",
		       ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / 1e3 / (iters ? iters : 1));
	free(h);
	free(h2);
	return 0;
}
