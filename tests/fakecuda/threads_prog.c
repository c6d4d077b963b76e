/*
 * A program of the tap's CPU tests (tests/cli/t_tap_threads.sh): WAVES waves
 * of THREADS threads, each making CALLS cuStreamSynchronize and CALLS
 * cuMemcpyDtoH calls through the pointers cuGetProcAddress hands out (as the
 * CUDA runtime does), on the stand-in libcuda (tests/fakecuda/libcuda.c).
 * Threads of a later wave take the slots of the finished ones.  Prints the
 * number of calls of each kind it made.  With FORK=idle it then forks a child
 * that exits without a CUDA call, with FORK=cuda one that makes one
 * cuStreamSynchronize through the inherited pointer; it waits for the child.
 * With LAUNCHES=1 each thread first launches a kernel before every pair of
 * calls, errno set to a mark before each call and checked after it (the
 * tap must leave the program's errno as it was); a changed errno fails.
 * With BENCH_PASS=1 it makes one cuStreamSynchronize first (the process goes
 * live), then runs the odd waves with gputap_bench_pass(1) (BENCH_PASS=3:
 * gputap_bench_pass(3)) and the even ones with gputap_bench_pass(0), and prints
 * "pass RC" (the calls' first result).
 *   threads_prog THREADS WAVES CALLS
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef CUresult(CUDAAPI *gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult(CUDAAPI *copy_fn)(void *, CUdeviceptr, size_t);
typedef CUresult(CUDAAPI *sync_fn)(CUstream);
typedef CUresult(CUDAAPI *launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				     unsigned, CUstream, void **, void **);

static sync_fn sync_p;
static copy_fn copy_p;
static launch_fn launch_p;
static int calls;

static void *worker(void *arg)
{
	(void)arg;
	char b[8];
	for (int i = 0; i < calls; i++) {
		if (launch_p) {
			int v = i;
			void *kp[] = {&v};
			errno = 4242;
			if (launch_p((CUfunction)(uintptr_t)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, kp, NULL) != CUDA_SUCCESS)
				return (void *)1;
			if (errno != 4242) {
				fprintf(stderr, "threads_prog: errno %d after cuLaunchKernel, was 4242\n", errno);
				return (void *)1;
			}
		}
		if (sync_p(NULL) != CUDA_SUCCESS || copy_p(b, 0, sizeof(b)) != CUDA_SUCCESS)
			return (void *)1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int nt = atoi(argv[1]), waves = atoi(argv[2]);
	calls = atoi(argv[3]);
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!gpa || gpa("cuStreamSynchronize", (void **)&sync_p, 12000, 0, NULL) != CUDA_SUCCESS ||
	    gpa("cuMemcpyDtoH", (void **)&copy_p, 12000, 0, NULL) != CUDA_SUCCESS) {
		fprintf(stderr, "threads_prog: no usable libcuda.so.1\n");
		return 2;
	}
	const char *lc = getenv("LAUNCHES");
	if (lc && *lc == '1' && gpa("cuLaunchKernel", (void **)&launch_p, 12000, 0, NULL) != CUDA_SUCCESS) {
		fprintf(stderr, "threads_prog: no cuLaunchKernel\n");
		return 2;
	}
	pthread_t th[64];
	if (nt < 1 || nt > 64)
		return 2;
	int bad = 0;
	const char *bp = getenv("BENCH_PASS");
	int (*pass)(int) = NULL;
	int pv = bp && (*bp == '1' || *bp == '3') ? *bp - '0' : 0; /* the pass of the odd waves */
	if (pv) {
		if (sync_p(NULL) != CUDA_SUCCESS)
			return 2;
		*(void **)&pass = dlsym(RTLD_DEFAULT, "gputap_bench_pass");
		if (!pass) {
			fprintf(stderr, "threads_prog: no gputap_bench_pass\n");
			return 2;
		}
	}
	int pass_rc = 1;
	for (int w = 0; w < waves; w++) {
		if (pass) {
			int rc = pass(w % 2 ? pv : 0);
			if (pass_rc == 1)
				pass_rc = rc;
		}
		for (int i = 0; i < nt; i++)
			if (pthread_create(&th[i], NULL, worker, NULL) != 0)
				return 3;
		for (int i = 0; i < nt; i++) {
			void *r;
			pthread_join(th[i], &r);
			bad |= r != NULL;
		}
	}
	if (pass) {
		pass(0);
		printf("pass %d\n", pass_rc);
	}
	printf("%d %d\n", nt * waves * calls, nt * waves * calls);
	fflush(stdout);
	const char *fk = getenv("FORK");
	if (fk && *fk) {
		pid_t pid = fork();
		if (pid == 0)
			exit(strcmp(fk, "cuda") == 0 && sync_p(NULL) != CUDA_SUCCESS ? 5 : 0);
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}
	return bad;
}
