// Does starting CUPTI stall the program's launching thread when another thread does the start?
// A capture window starts CUPTI (subscription, launch callbacks, kernel activity: ~17 ms on an H100)
// when it opens, on the thread that opened it.  Here the main thread launches an empty kernel in a
// loop, stamping the time every 100 launches; at launch START it either starts CUPTI itself
// ("inline") or asks a helper thread to ("helper") and goes on launching.  Printed (one JSON line):
// the ns per launch before the start, in the 20,000 launches from it, and after it (CUPTI on), the
// longest gap between two stamps (the stall the program sees), how long the start took, at which
// launch CUPTI was on, and the kernel records whose launch came after the start finished (all must
// arrive).
//   winstart inline|helper [LAUNCHES] [START]     (defaults 200,000 and 60,000)
//   winstart parts                                 each step of the start timed on its own, with
//                                                  the launch cost after each (a subscription alone?)
//   winstart toggle                                first vs later cuptiSubscribe, and the launch cost
//                                                  subscribed with nothing enabled vs unsubscribed
//   winstart state [ROUNDS]                        the launch cost with CUPTI set up (subscribed and
//                                                  unsubscribed once) against CUPTI finalized (or never
//                                                  loaded), alternating: driver and runtime launches
#include <atomic>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bench.cuh"

static std::atomic<uint32_t> first_corr; /* the first launch CUPTI saw */
static std::atomic<long> n_kernel, n_after;
static std::atomic<int> started, go;
static std::atomic<long> launch_no;
static long on_at = -1;
static double start_ms;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)ud, (void)d, (void)id;
	const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
	uint32_t z = 0;
	if (cb->callbackSite == CUPTI_API_ENTER)
		first_corr.compare_exchange_strong(z, cb->correlationId);
}

static void CUPTIAPI buf_req(uint8_t **b, size_t *size, size_t *max)
{
	*size = 8 << 20;
	*b = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI buf_done(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
	(void)c, (void)s, (void)size;
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			n_kernel++;
			if (((CUpti_ActivityKernel9 *)r)->correlationId >= first_corr)
				n_after++;
		}
	free(b);
}

static void start_cupti(void)
{
	double t0 = now_ns();
	CUpti_SubscriberHandle sub;
	if (cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL) != CUPTI_SUCCESS ||
	    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) != CUPTI_SUCCESS ||
	    cuptiActivityRegisterCallbacks(buf_req, buf_done) != CUPTI_SUCCESS ||
	    cuptiActivityRegisterTimestampCallback(realtime_ns) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS) {
		fprintf(stderr, "CUPTI start failed\n");
		exit(3);
	}
	start_ms = (now_ns() - t0) / 1e6;
	on_at = launch_no.load();
	started = 1;
}

static void *helper(void *arg)
{
	(void)arg;
	while (!go.load())
		;
	start_cupti();
	return NULL;
}

static double block_ns(struct nop_launch *l, int n)
{
	double t0 = now_ns();
	for (int i = 0; i < n; i++)
		cuLaunchKernel(l->f, 1, 1, 1, 32, 1, 1, 0, l->s, l->args, NULL);
	cuStreamSynchronize(l->s);
	return (now_ns() - t0) / n;
}

/* Each step of CUPTI's start timed, and the launch cost after it (median of 20 blocks of 2,000). */
static int parts(void)
{
	struct nop_launch l;
	if (nop_setup(&l) < 0)
		return 3;
	CUpti_SubscriberHandle sub;
	const char *name[] = {"none", "subscribe", "callbacks", "buffers", "kernel_activity", "memcpy_memset"};
	printf("{");
	for (int k = 0; k < 6; k++) {
		double t0 = now_ns();
		CUptiResult r = CUPTI_SUCCESS;
		if (k == 1)
			r = cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL);
		else if (k == 2)
			r = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
		else if (k == 3) {
			r = cuptiActivityRegisterCallbacks(buf_req, buf_done);
			if (r == CUPTI_SUCCESS)
				r = cuptiActivityRegisterTimestampCallback(realtime_ns);
		} else if (k == 4)
			r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		else if (k == 5) {
			r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
			if (r == CUPTI_SUCCESS)
				r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
		}
		double ms = (now_ns() - t0) / 1e6;
		if (r != CUPTI_SUCCESS)
			return 4;
		double b[20];
		block_ns(&l, 2000); /* warm */
		for (int i = 0; i < 20; i++)
			b[i] = block_ns(&l, 2000);
		printf("%s\"%s_ms\":%.3f,\"%s_launch_ns\":%.1f", k ? "," : "", name[k], ms, name[k], median(b, 20));
	}
	printf("}\n");
	return 0;
}

/* Is CUPTI's first subscription a one-time cost, and does a subscription with nothing enabled cost
 * the launches over one dropped?  20 blocks before any CUPTI call, then 20 rounds of a block
 * unsubscribed, cuptiSubscribe, a block subscribed (nothing enabled), cuptiUnsubscribe.  Both are
 * states of CUPTI set up, and the pristine blocks run before, not alternating: set up against
 * finalized is `state`. */
static int toggle(void)
{
	struct nop_launch l;
	if (nop_setup(&l) < 0)
		return 3;
	double pristine[20], off[20], on[20], sub_ms[21], unsub_ms[21];
	block_ns(&l, 2000);
	for (int i = 0; i < 20; i++)
		pristine[i] = block_ns(&l, 2000);
	CUpti_SubscriberHandle sub;
	for (int i = 0; i <= 20; i++) {
		if (i > 0)
			off[i - 1] = block_ns(&l, 2000);
		double t0 = now_ns();
		if (cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL) != CUPTI_SUCCESS)
			return 4;
		sub_ms[i] = (now_ns() - t0) / 1e6;
		if (i > 0)
			on[i - 1] = block_ns(&l, 2000);
		t0 = now_ns();
		if (cuptiUnsubscribe(sub) != CUPTI_SUCCESS)
			return 5;
		unsub_ms[i] = (now_ns() - t0) / 1e6;
	}
	double first = sub_ms[0], later[20], ratio[20];
	for (int i = 0; i < 20; i++) {
		later[i] = sub_ms[i + 1];
		ratio[i] = on[i] / off[i];
	}
	double p = median(pristine, 20), o = median(off, 20), n = median(on, 20), r = median(ratio, 20), lat = median(later, 20), u = median(unsub_ms + 1, 20);
	printf("{\"first_subscribe_ms\":%.3f,\"later_subscribe_ms\":%.3f,\"unsubscribe_ms\":%.3f,\"pristine_ns\":%.1f,"
	       "\"unsubscribed_ns\":%.1f,\"subscribed_ns\":%.1f,\"subscribed_over_unsubscribed\":%.4f}\n",
	       first, lat, u, p, o, n, r);
	return 0;
}

static double rt_block_ns(struct nop_launch *l, int n)
{
	double t0 = now_ns();
	for (int i = 0; i < n; i++)
		nop<<<1, 32, 0, (cudaStream_t)l->s>>>(l->d);
	cudaStreamSynchronize((cudaStream_t)l->s);
	return (now_ns() - t0) / n;
}

/* Does CUPTI set up and idle (no subscriber, nothing enabled: what a capture run keeps between
 * windows) cost the launches, against CUPTI finalized?  ROUNDS rounds of: blocks with CUPTI
 * finalized (the first round: never loaded), the set-up (cuptiSubscribe + cuptiUnsubscribe), blocks
 * set up, cuptiFinalize, blocks finalized; each state's blocks a driver and a runtime block, in
 * mirrored order. */
static int state(int rounds)
{
	struct nop_launch l;
	if (nop_setup(&l) < 0 || rounds < 1 || rounds > 1000)
		return 3;
	double *rd = (double *)malloc(sizeof(double) * rounds), *rr = (double *)malloc(sizeof(double) * rounds);
	double *fd = (double *)malloc(sizeof(double) * rounds), *fr = (double *)malloc(sizeof(double) * rounds);
	double first_d = 0, first_r = 0, setup_ms = 0, fin_ms = 0;
	block_ns(&l, 2000);
	rt_block_ns(&l, 2000);
	for (int i = 0; i < rounds; i++) { /* finalized, set up, set up, finalized: drift hits both alike */
		double a = block_ns(&l, 2000), b = rt_block_ns(&l, 2000);
		double t0 = now_ns();
		CUpti_SubscriberHandle sub;
		if (cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL) != CUPTI_SUCCESS || cuptiUnsubscribe(sub) != CUPTI_SUCCESS)
			return 4;
		setup_ms += (now_ns() - t0) / 1e6;
		block_ns(&l, 200);
		double c = block_ns(&l, 2000), d = rt_block_ns(&l, 2000);
		d += rt_block_ns(&l, 2000), c += block_ns(&l, 2000);
		t0 = now_ns();
		if (cuptiFinalize() != CUPTI_SUCCESS)
			return 5;
		fin_ms += (now_ns() - t0) / 1e6;
		block_ns(&l, 200);
		b += rt_block_ns(&l, 2000), a += block_ns(&l, 2000);
		fd[i] = a / 2, fr[i] = b / 2;
		rd[i] = c / a, rr[i] = d / b;
		if (i == 0)
			first_d = c / a, first_r = d / b;
	}
	printf("{\"rounds\":%d,\"finalized_driver_ns\":%.1f,\"finalized_runtime_ns\":%.1f,"
	       "\"set_up_over_finalized_driver\":%.4f,\"set_up_over_finalized_runtime\":%.4f,"
	       "\"first_round_driver\":%.4f,\"first_round_runtime\":%.4f,\"set_up_ms\":%.3f,\"finalize_ms\":%.3f}\n",
	       rounds, median(fd, rounds), median(fr, rounds), median(rd, rounds), median(rr, rounds), first_d, first_r,
	       setup_ms / rounds, fin_ms / rounds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "state") == 0)
		return state(argc > 2 ? atoi(argv[2]) : 20);
	if (argc > 1 && strcmp(argv[1], "parts") == 0)
		return parts();
	if (argc > 1 && strcmp(argv[1], "toggle") == 0)
		return toggle();
	int inl = argc > 1 && strcmp(argv[1], "inline") == 0;
	long n = argc > 2 ? atol(argv[2]) : 200000, start = argc > 3 ? atol(argv[3]) : 60000;
	if (n < start + 40000 || start < 20000 || n % 100)
		return 2;
	struct nop_launch l;
	if (nop_setup(&l) < 0)
		return 3;
	pthread_t th;
	if (!inl)
		pthread_create(&th, NULL, helper, NULL);
	double *stamp = (double *)malloc(sizeof(double) * (n / 100 + 1));
	stamp[0] = now_ns();
	for (long i = 0; i < n; i++) {
		if (i == start) {
			if (inl)
				start_cupti();
			else
				go = 1;
		}
		if (cuLaunchKernel(l.f, 1, 1, 1, 32, 1, 1, 0, l.s, l.args, NULL) != CUDA_SUCCESS)
			return 4;
		launch_no.store(i + 1, std::memory_order_relaxed);
		if ((i + 1) % 100 == 0) {
			stamp[(i + 1) / 100] = now_ns();
			if ((i + 1) % 10000 == 0)
				cuStreamSynchronize(l.s); /* keep the queue short */
		}
	}
	cuStreamSynchronize(l.s);
	if (!inl)
		pthread_join(th, NULL);
	cuptiActivityFlushAll(1);
	double gap = 0;
	for (long k = 1; k <= n / 100; k++)
		if (stamp[k] - stamp[k - 1] > gap)
			gap = stamp[k] - stamp[k - 1];
	long a = start / 100;
	double pre = (stamp[a] - stamp[a - 200]) / 20000, during = (stamp[a + 200] - stamp[a]) / 20000,
	       post = (stamp[n / 100] - stamp[n / 100 - 200]) / 20000;
	long traced = n - (long)on_at;
	printf("{\"mode\":\"%s\",\"pre_ns\":%.1f,\"during_ns\":%.1f,\"post_ns\":%.1f,\"extra_ms\":%.3f,\"max_gap_us\":%.1f,"
	       "\"start_ms\":%.3f,\"on_at\":%ld,\"kernel_records\":%ld,\"records_after_on\":%ld,\"launches_after_on\":%ld}\n",
	       inl ? "inline" : "helper", pre, during, post, (during - post) * 20000 / 1e6, gap / 1e3, start_ms, on_at,
	       (long)n_kernel, (long)n_after, traced);
	return 0;
}
