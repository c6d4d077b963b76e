/*
 * A program for the tap's CUPTI tests (tests/cli/t_tap_cupti.sh), run with
 * LD_PRELOAD=libgputap.so and GPUTAP_CUPTI_LIB=the fake CUPTI.  It starts the
 * tap's CUPTI side as the CUDA driver would (InitializeInjection), then:
 *   kill N       N kernels run; 400 ms later the process is SIGKILLed
 *   term N       N kernels run; 400 ms later SIGTERM (the tap's handler ends it)
 *   hoard N      CUPTI asks for N buffers and keeps them: prints the bytes it got
 *   handover     the program's own profiler subscribes to CUPTI
 *   clockstep    a cudaMemcpy during which the wall clock steps back 10 s
 *   steps N      N NVTX ranges "step" (through the NVTX injection, the tap), each
 *                250 ms of sleep then 10 launches with their driver callbacks
 *   pcsamp N     PC sampling: a context is created, a module loaded, then N rounds of samples
 *                150 ms apart (the writer drains them); the last round is left for the end
 *   pcsamp-destroy N  the same, then the context is destroyed before the process ends
 *   pcsamp-ranges N  N rounds of: NVTX range "fwd" with 2 launches, "bwd" with 6, then samples
 *   pcsamp-window N  as pcsamp, with a window (gputap_pcsamp_start ... stop) around the even
 *                rounds; prints "window start=R stop=R" (the calls' results) per window
 *   pcsamp-late N    the same without the context-created callback and the module: the
 *                context existed before the tap (FAKE_CUDA_CTX=1)
 *   plain        nothing more
 * It defines clock_gettime (exported) so that `clockstep` can step CLOCK_REALTIME.
 */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long step_ns;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	long r = syscall(SYS_clock_gettime, id, ts);
	if (r == 0 && id == CLOCK_REALTIME && step_ns) {
		long long t = (long long)ts->tv_sec * 1000000000ll + ts->tv_nsec - step_ns;
		ts->tv_sec = (time_t)(t / 1000000000ll);
		ts->tv_nsec = (long)(t % 1000000000ll);
	}
	return (int)r;
}

static void step_back(void)
{
	step_ns = 10000000000ll;
}

static void *fake(const char *name)
{
	void *h = dlopen(getenv("GPUTAP_CUPTI_LIB"), RTLD_NOW); /* the tap's copy (with capture windows it loads it later) */
	void *f = h ? dlsym(h, name) : NULL;
	if (!f) {
		fprintf(stderr, "cupti_client: %s not found (is the fake CUPTI loaded?)\n", name);
		exit(3);
	}
	return f;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
	if (!init || init() != 1) {
		fprintf(stderr, "cupti_client: no InitializeInjection (is libgputap.so preloaded?)\n");
		return 3;
	}
	const char *mode = argv[1];
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
	struct timespec w = {0, 400000000};
	if (!strcmp(mode, "kill") || !strcmp(mode, "term")) {
		((void (*)(unsigned))fake("fake_cupti_kernels"))(n);
		nanosleep(&w, NULL);
		kill(getpid(), !strcmp(mode, "kill") ? SIGKILL : SIGTERM);
		nanosleep(&w, NULL);
		return 4; /* not reached */
	}
	if (!strcmp(mode, "hoard")) {
		size_t got = ((size_t(*)(unsigned))fake("fake_cupti_hoard"))(n);
		printf("hoarded %zu\n", got);
		return 0;
	}
	if (!strcmp(mode, "handover")) {
		/* as a real client (Kineto), with libcupti loaded itself: the tap may not have loaded it */
		dlopen(getenv("GPUTAP_CUPTI_LIB"), RTLD_NOW | RTLD_GLOBAL);
		int (*sub)(void **, void *, void *) = (int (*)(void **, void *, void *))dlsym(RTLD_DEFAULT, "cuptiSubscribe");
		void *h = NULL;
		return sub && sub(&h, NULL, NULL) == 0 ? 0 : 5;
	}
	if (!strcmp(mode, "clockstep")) {
		((void (*)(void (*)(void)))fake("fake_cupti_memcpy"))(step_back);
		step_ns = 0;
		return 0;
	}
	if (!strcmp(mode, "steps")) {
		void (*launch)(unsigned) = (void (*)(unsigned))fake("fake_cupti_launch");
		struct timespec q = {0, 250000000};
		for (unsigned i = 1; i <= n; i++) {
			nvtxRangePushA("step");
			nanosleep(&q, NULL); /* the tap's writer thread wakes meanwhile */
			launch(10);
			nvtxRangePop();
		}
		return 0;
	}
	if (!strcmp(mode, "pcsamp") || !strcmp(mode, "pcsamp-destroy")) {
		void (*ctx)(int) = (void (*)(int))fake("fake_cupti_pcs_context");
		void (*samples)(void) = (void (*)(void))fake("fake_cupti_pcs_samples");
		ctx(0);
		((void (*)(void))fake("fake_cupti_pcs_module"))();
		struct timespec q = {0, 150000000};
		for (unsigned i = 1; i <= n; i++) {
			samples();
			if (i < n)
				nanosleep(&q, NULL);
		}
		if (!strcmp(mode, "pcsamp-destroy"))
			ctx(1);
		return 0;
	}
	if (!strcmp(mode, "pcsamp-window") || !strcmp(mode, "pcsamp-late")) {
		int (*start)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gputap_pcsamp_start");
		int (*stop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gputap_pcsamp_stop");
		void (*samples)(void) = (void (*)(void))fake("fake_cupti_pcs_samples");
		if (!start || !stop) {
			fprintf(stderr, "cupti_client: gputap_pcsamp_start/stop not found\n");
			return 3;
		}
		if (!strcmp(mode, "pcsamp-window")) {
			((void (*)(int))fake("fake_cupti_pcs_context"))(0);
			((void (*)(void))fake("fake_cupti_pcs_module"))();
		}
		struct timespec q = {0, 150000000};
		for (unsigned i = 1; i <= n; i++) {
			int a = 0;
			if (i % 2 == 0)
				a = start();
			samples();
			if (i % 2 == 0)
				printf("window start=%d stop=%d\n", a, stop());
			nanosleep(&q, NULL);
		}
		return 0;
	}
	if (!strcmp(mode, "pcsamp-ranges")) {
		void (*launch)(unsigned) = (void (*)(unsigned))fake("fake_cupti_launch");
		((void (*)(int))fake("fake_cupti_pcs_context"))(0);
		((void (*)(void))fake("fake_cupti_pcs_module"))();
		struct timespec q = {0, 120000000};
		for (unsigned i = 1; i <= n; i++) {
			nvtxRangePushA("fwd");
			launch(2);
			nvtxRangePop();
			nvtxRangePushA("bwd");
			launch(6);
			nvtxRangePop();
			((void (*)(void))fake("fake_cupti_pcs_samples"))();
			nanosleep(&q, NULL);
		}
		return 0;
	}
	return strcmp(mode, "plain") ? 2 : 0;
}
