/*
 * A program of the vram sampler's CPU test (tests/cli/t_run_samplers.sh), run by `gputap run` with
 * the tap and the stand-in libcuda (tests/fakecuda/libcuda.c): after a first wait, N times an
 * allocation and a free, each followed by a pause, through the driver entry points the tap
 * interposes.  Prints how many descriptors it had open at the start and at the end (the tap must
 * leave none of its own behind) and the allocation counter's name it was given (GPUTAP_MEMGEN), then
 * "done".
 *   alloc_prog N PAUSE_MS
 */
#include <cuda.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef CUresult(CUDAAPI *gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	long ms = argc > 2 ? atol(argv[2]) : 150;
	int fds0 = open_fds();
	/* as the CUDA runtime finds them: the driver's cuGetProcAddress (which the tap hands its hooks through) */
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	CUresult(CUDAAPI * alloc)(CUdeviceptr *, size_t) = NULL;
	CUresult(CUDAAPI * release)(CUdeviceptr) = NULL;
	if (!gpa || gpa("cuMemAlloc", (void **)&alloc, 12000, 0, NULL) != CUDA_SUCCESS ||
	    gpa("cuMemFree", (void **)&release, 12000, 0, NULL) != CUDA_SUCCESS || !alloc || !release) {
		fprintf(stderr, "alloc_prog: no usable libcuda.so.1\n");
		return 2;
	}
	pause_ms(ms * 2);
	for (int i = 0; i < n; i++) {
		CUdeviceptr p;
		if (alloc(&p, 1u << 20) != CUDA_SUCCESS)
			return 1;
		pause_ms(ms);
		if (release(p) != CUDA_SUCCESS)
			return 1;
		pause_ms(ms);
	}
	const char *gen = getenv("GPUTAP_MEMGEN");
	printf("fds %d %d\nmemgen %s\ndone\n", fds0, open_fds(), gen ? gen : "-");
	return 0;
}
