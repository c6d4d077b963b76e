/*
 * A program of the CPU tests of launch hold (tests/cli/t_tap_hold.sh): it
 * takes its driver entry points from cuGetProcAddress as the CUDA runtime
 * does, launches with arguments on the stack that it overwrites at once,
 * mixes in an event record (a call without a hook of its own), a copy and a
 * synchronisation (hooked calls), a per-thread-stream launch, then waits
 * without any CUDA call for a launch to reach the (fake) GPU.  It prints
 * what the driver received, in order.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef CUresult(CUDAAPI *gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult(CUDAAPI *launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				     unsigned, CUstream, void **, void **);
typedef CUresult(CUDAAPI *record_fn)(CUevent, CUstream);
typedef CUresult(CUDAAPI *copy_fn)(void *, CUdeviceptr, size_t);
typedef CUresult(CUDAAPI *sync_fn)(CUstream);
typedef size_t (*log_fn)(char *, size_t);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "no libcuda.so.1: %s\n", dlerror());
		return 2;
	}
	gpa_fn gpa = (gpa_fn)dlsym(h, "cuGetProcAddress_v2");
	log_fn get_log = (log_fn)dlsym(h, "fake_log");
	launch_fn launch = NULL, launch_pt = NULL;
	record_fn record = NULL;
	copy_fn copy = NULL;
	sync_fn sync = NULL;
	if (!gpa || !get_log || gpa("cuLaunchKernel", (void **)&launch, 12000, 0, NULL) ||
	    gpa("cuLaunchKernel", (void **)&launch_pt, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL) ||
	    gpa("cuEventRecord", (void **)&record, 12000, 0, NULL) ||
	    gpa("cuMemcpyDtoH", (void **)&copy, 12000, 0, NULL) || gpa("cuStreamSynchronize", (void **)&sync, 12000, 0, NULL)) {
		fprintf(stderr, "entry points missing\n");
		return 2;
	}
	CUfunction k = (CUfunction)(uintptr_t)0x1000;
	CUstream s = (CUstream)(uintptr_t)0x5;
	int bad = 0;
	for (int i = 0; i < 20; i++) {
		int v = i;
		long w = 1000 + i;
		void *args[] = {&v, &w};
		bad |= launch(k, 1, 1, 1, 32, 1, 1, 0, s, args, NULL) != CUDA_SUCCESS;
		v = -1; /* the caller's stack changes at once */
		w = -1;
		if (i == 9)
			bad |= record((CUevent)(uintptr_t)0x9, s) != CUDA_SUCCESS;
		if (i == 14)
			bad |= copy(NULL, 0, 0) != CUDA_SUCCESS;
		if (i == 16) {
			int p = 100;
			void *pa[] = {&p, &w};
			bad |= launch_pt(k, 1, 1, 1, 32, 1, 1, 0, NULL, pa, NULL) != CUDA_SUCCESS; /* per-thread stream */
		}
	}
	/* a kernel the host then waits for, with no CUDA call: only the timer can release it */
	int v = 99;
	long w = 0;
	void *args[] = {&v, &w};
	bad |= launch(k, 1, 1, 1, 32, 1, 1, 0, s, args, NULL) != CUDA_SUCCESS;
	char buf[8192];
	double t0 = now();
	int seen = 0;
	while (!seen && now() - t0 < 10.0) {
		get_log(buf, sizeof(buf));
		seen = strstr(buf, "L99") != NULL;
	}
	/* a bad launch: the driver's own error, in order */
	CUresult r = launch(k, 0, 1, 1, 32, 1, 1, 0, s, args, NULL);
	bad |= sync(s) != CUDA_SUCCESS;
	get_log(buf, sizeof(buf));
	printf("%s\n", buf);
	printf("waited-launch %s, bad-launch %d, errors %d\n", seen ? "ran" : "stuck", (int)r, bad);
	fprintf(stderr, "waited %.3f ms\n", (now() - t0) * 1e3);
	return seen ? 0 : 3;
}
