/*
 * A program for the range-metrics tests of the library (tests/cli/t_rmetrics_tap.sh),
 * run with LD_PRELOAD=libgputap.so, NVTX_INJECTION64_PATH=libgputap.so and
 * GPUTAP_CUPTI_LIB=the stand-in CUPTI (tests/tap/fake_cupti.c with
 * tests/tap/fake_rangeprof.c).  It starts the tap's CUPTI side as the CUDA
 * driver would (InitializeInjection), opens NVTX ranges (through the NVTX
 * injection, the tap) and launches kernels through the stand-in
 * (fake_rp_launch: the driver callbacks of each launch, and its counter
 * values in the current CUPTI range).  Scenarios (kernel: launches x inst, ns):
 *   early     "outer" opened before CUDA starts; then inner: k1 3 x 100, 1000;
 *             back in outer: k2 2 x 10, 50
 *   autograd  the main thread opens step/backward and launches k0 1 x 5, 5; a
 *             second thread with no range launches kb 4 x 1000, 100; a third
 *             thread in its own range "worker" launches kc 2 x 7, 3; then, while
 *             the third is in "worker2", the second launches kd 2 x 50, 20;
 *             after step: kz 1 x 1, 1 outside every range
 *   threads   the main thread launches k0 1 x 1, 1 outside every range; then two
 *             threads, at the same time, twice: A step/a1: ka 2 x 1, 10, then in
 *             step: ka 1 x 2, 10; B b/b1/b2: kb 3 x 10, 100
 *   plain     inside "r": k 5 x 100, 1000 (with RM_MID=1, gputap_results_json() once
 *             more after the first 2 launches, inside "r")
 *   graph     inside "g": k 1 x 10, 10; a CUDA graph launch of 3 kernels x 100, 20;
 *             k 1 x 10, 10
 *   destroy   inside "r": k 3 x 100, 1000; the context is destroyed and made again;
 *             k 2 x 10, 50
 *   nccl      inside "step": NCCL's own NVTX range (domain "NCCL", "ncclAllReduce") around
 *             kn 2 x 100, 1000; then k 1 x 10, 10 (always NVTX ranges)
 * Ranges are NVTX's, or with RM_API=gputap gputap_range_push/pop (which the
 * per-range results of gputap_results_json follow too).  With RM_LIBCUDA=PATH
 * a stand-in libcuda (tests/fakecuda) is loaded first: a current context for
 * the tap to see.  With RM_RESULTS=FILE, gputap_results_json() at the end
 * (every range closed, 300 ms after the last launch: the tap's periodic flush
 * has delivered the kernel records) is written to FILE.
 */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*launch_fn)(const char *kernel, unsigned n, double inst, double ns);
static launch_fn launch;

static void *fake(const char *name)
{
	void *h = dlopen(getenv("GPUTAP_CUPTI_LIB"), RTLD_NOW);
	void *f = h ? dlsym(h, name) : NULL;
	if (!f) {
		fprintf(stderr, "rm_client: %s not found (is the stand-in CUPTI loaded?)\n", name);
		exit(3);
	}
	return f;
}

static int (*api_push)(const char *);
static int (*api_pop)(void);

static void push(const char *name)
{
	if (api_push)
		api_push(name);
	else
		nvtxRangePushA(name);
}

static void pop(void)
{
	if (api_pop)
		api_pop();
	else
		nvtxRangePop();
}

static void start_cuda(void)
{
	int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
	if (!init || init() != 1) {
		fprintf(stderr, "rm_client: no InitializeInjection (is libgputap.so preloaded?)\n");
		exit(3);
	}
	launch = (launch_fn)fake("fake_rp_launch");
}

static int results(void)
{
	const char *path = getenv("RM_RESULTS");
	if (!path)
		return 0;
	struct timespec w = {0, 300000000};
	nanosleep(&w, NULL);
	long (*fn)(char *, unsigned long) = (long (*)(char *, unsigned long))dlsym(RTLD_DEFAULT, "gputap_results_json");
	if (!fn)
		return 4;
	/* as documented: again with a larger buffer while the return value >= cap (the document may
	 * grow between calls: the first one decodes what range metrics held) */
	unsigned long cap = 4096;
	char *buf = NULL;
	for (;;) {
		char *b = realloc(buf, cap);
		if (!b) {
			free(buf);
			return 4;
		}
		buf = b;
		long n = fn(buf, cap);
		if (n < 0) {
			free(buf);
			return 4;
		}
		if ((unsigned long)n < cap)
			break;
		cap = (unsigned long)n + 1;
	}
	FILE *f = fopen(path, "w");
	int rc = !f || fputs(buf, f) < 0;
	if (f && fclose(f) != 0)
		rc = 1;
	free(buf);
	return rc ? 4 : 0;
}

/* ---- a sequence of steps between threads ---- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage;

static void wait_for(int s)
{
	pthread_mutex_lock(&mu);
	while (stage < s)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void go(int s)
{
	pthread_mutex_lock(&mu);
	stage = s;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void *autograd_thread(void *arg)
{
	(void)arg;
	wait_for(1);
	launch("kb", 4, 1000, 100); /* no range of its own: counts in step/backward */
	go(2);
	wait_for(4);
	launch("kd", 2, 50, 20); /* in step/backward and in worker2 */
	go(5);
	return NULL;
}

static void *worker_thread(void *arg)
{
	(void)arg;
	wait_for(2);
	push("worker");
	launch("kc", 2, 7, 3);
	pop();
	push("worker2");
	go(4);
	wait_for(5);
	pop();
	go(6);
	return NULL;
}

static int autograd(void)
{
	start_cuda();
	pthread_t b, c;
	if (pthread_create(&b, NULL, autograd_thread, NULL) || pthread_create(&c, NULL, worker_thread, NULL))
		return 5;
	push("step");
	push("backward");
	launch("k0", 1, 5, 5);
	go(1);
	wait_for(6);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	pop();
	pop();
	launch("kz", 1, 1, 1);
	return results();
}

static pthread_barrier_t bar;

static void *thread_a(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		push("step");
		push("a1");
		pthread_barrier_wait(&bar);
		launch("ka", 2, 1, 10);
		pthread_barrier_wait(&bar);
		pop();
		launch("ka", 1, 2, 10);
		pop();
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		push("b");
		push("b1");
		push("b2");
		pthread_barrier_wait(&bar);
		launch("kb", 3, 10, 100);
		pthread_barrier_wait(&bar);
		pop();
		pop();
		pop();
	}
	return NULL;
}

static int threads(void)
{
	start_cuda();
	launch("k0", 1, 1, 1); /* this thread uses the GPU first */
	pthread_t a, b;
	if (pthread_barrier_init(&bar, NULL, 2) || pthread_create(&a, NULL, thread_a, NULL) ||
	    pthread_create(&b, NULL, thread_b, NULL))
		return 5;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return results();
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	const char *cuda = getenv("RM_LIBCUDA");
	if (cuda && !dlopen(cuda, RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "rm_client: %s\n", dlerror());
		return 3;
	}
	const char *api = getenv("RM_API");
	if (api && !strcmp(api, "gputap")) {
		*(void **)&api_push = dlsym(RTLD_DEFAULT, "gputap_range_push");
		*(void **)&api_pop = dlsym(RTLD_DEFAULT, "gputap_range_pop");
		if (!api_push || !api_pop)
			return 3;
	}
	if (!strcmp(mode, "early")) {
		push("outer"); /* before CUDA starts: the tap's first call is NVTX's */
		start_cuda();
		push("inner");
		launch("k1", 3, 100, 1000);
		pop();
		launch("k2", 2, 10, 50);
		pop();
		return results();
	}
	if (!strcmp(mode, "autograd"))
		return autograd();
	if (!strcmp(mode, "threads"))
		return threads();
	if (!strcmp(mode, "graph")) {
		start_cuda();
		void (*graph)(unsigned, unsigned, double, double) =
			(void (*)(unsigned, unsigned, double, double))fake("fake_rp_graph");
		push("g");
		launch("k", 1, 10, 10);
		graph(1, 3, 100, 20);
		launch("k", 1, 10, 10);
		pop();
		return results();
	}
	if (!strcmp(mode, "destroy")) {
		start_cuda();
		void (*context)(int) = (void (*)(int))fake("fake_rp_context");
		push("r");
		launch("k", 3, 100, 1000);
		context(1);
		context(0);
		launch("k", 2, 10, 50);
		pop();
		return results();
	}
	if (!strcmp(mode, "nccl")) {
		start_cuda();
		nvtxDomainHandle_t nccl = nvtxDomainCreateA("NCCL");
		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof(a));
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_ASCII;
		a.message.ascii = "ncclAllReduce";
		nvtxRangePushA("step");
		nvtxDomainRangePushEx(nccl, &a);
		launch("kn", 2, 100, 1000);
		nvtxDomainRangePop(nccl);
		launch("k", 1, 10, 10);
		nvtxRangePop();
		return results();
	}
	if (!strcmp(mode, "plain")) {
		start_cuda();
		push("r");
		if (getenv("RM_MID")) {
			launch("k", 2, 100, 1000);
			if (results())
				return 4;
			launch("k", 3, 100, 1000);
		} else {
			launch("k", 5, 100, 1000);
		}
		pop();
		return results();
	}
	return 2;
}
