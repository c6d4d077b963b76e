// What CUPTI charges per launch for each way of learning a launch's correlation id, with kernel
// activity on throughout (the full trace's floor).  One process, blocks of N cuLaunchKernel calls
// alternating between the ways (the order rotates every round; each block ends in a stream
// synchronize), medians over rounds of each way's ns per launch and of its ratio to "kact":
//   kact   kernel activity only (subscribed, no callback enabled)
//   cb     + the launch callbacks (enter and exit; the callback stores the id in a thread-local)
//   api    + driver-API activity records for the launch alone (cuptiActivityEnableDriverApi), no
//          callback: the id arrives in a record with the calling thread and its start/end times
//   ext    + an external correlation id pushed before and popped after each launch, no callback:
//          CUPTI pairs it with its own id in an EXTERNAL_CORRELATION record (that kind is enabled
//          during these blocks only); only when asked (a third argument "ext")
// Also counted: kernel records whose CUPTI id is one more than the previous kernel record's (does
// CUPTI number launches consecutively when nothing else asks for ids?).
// The timestamp callback is registered in every way, as the tap registers it.  Records are counted
// (kernels must equal launches; callbacks, API and external records the launches of their blocks).
//   corr [ROUNDS] [N] [ext]  (defaults 100 rounds of 2,000 launches; kact, cb, api)
#include <cupti.h>
#include <stdio.h>
#include <string.h>

#include "bench.cuh"

static __thread uint32_t last_corr;
static long n_cb, n_cb_zero; /* enter callbacks seen, and those without an id (one thread launches) */
static long n_kernel, n_api, n_ext, n_next, n_zero;
static uint32_t prev_kcorr;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)ud, (void)d, (void)id;
	const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		last_corr = cb->correlationId;
		n_cb++;
		n_cb_zero += cb->correlationId == 0;
	}
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
	while (cuptiActivityGetNextRecord(b, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			uint32_t c = ((CUpti_ActivityKernel10 *)r)->correlationId;
			n_kernel++;
			n_next += c == prev_kcorr + 1;
			n_zero += c == 0;
			prev_kcorr = c;
		} else if (r->kind == CUPTI_ACTIVITY_KIND_DRIVER)
			n_api++;
		else if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
			n_ext++;
	}
	free(b);
}

#define CK(x)                                                                                      \
	do {                                                                                       \
		if ((x) != 0) {                                                                    \
			fprintf(stderr, "%s failed\n", #x);                                        \
			return 3;                                                                  \
		}                                                                                  \
	} while (0)

enum { KACT, CB, API, EXT, NWAYS };

/* A way on or off, touching only what it uses: switching the driver-API record of a cbid off also
 * switched its launch callback off (CUPTI 13.0: callbacks fired for a third of the launches when
 * every way was set before every block). */
static CUptiResult set_way(int w, int on, CUpti_SubscriberHandle sub)
{
	switch (w) {
	case CB:
		return cuptiEnableCallback(on, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
	case API:
		return cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, on);
	case EXT:
		return on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
			  : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
	}
	return CUPTI_SUCCESS;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100, n = argc > 2 ? atoi(argv[2]) : 2000;
	if (rounds < 1 || n < 1)
		return 2;
	CUpti_SubscriberHandle sub;
	CK(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_cb, NULL));
	CK(cuptiActivityRegisterCallbacks(buf_req, buf_done));
	CK(cuptiActivityRegisterTimestampCallback(realtime_ns));
	CK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	struct nop_launch l;
	CK(nop_setup(&l));
	const char *name[NWAYS] = {"kact", "cb", "api", "ext"};
	int NW = argc > 3 && strcmp(argv[3], "ext") == 0 ? NWAYS : EXT;
	double *t[NWAYS], *ratio[NWAYS];
	for (int w = 0; w < NW; w++) {
		t[w] = (double *)malloc(sizeof(double) * rounds);
		ratio[w] = (double *)malloc(sizeof(double) * rounds);
	}
	long launches = 0, api_launches = 0, ext_launches = 0, cb_launches = 0;
	uint64_t popped = 0;
	for (int r = -1; r < rounds; r++) { /* round -1 warms every way */
		for (int k = 0; k < NW; k++) {
			int w = (k + (r < 0 ? 0 : r)) % NW;
			CK(set_way(w, 1, sub));
			double t0 = now_ns();
			if (w == EXT)
				for (int i = 0; i < n; i++) {
					CK(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
										   (uint64_t)launches + i + 1));
					CK(cuLaunchKernel(l.f, 1, 1, 1, 32, 1, 1, 0, l.s, l.args, NULL));
					CK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
										  &popped));
				}
			else
				for (int i = 0; i < n; i++)
					CK(cuLaunchKernel(l.f, 1, 1, 1, 32, 1, 1, 0, l.s, l.args, NULL));
			CK(cuStreamSynchronize(l.s));
			double dt = (now_ns() - t0) / n;
			CK(set_way(w, 0, sub));
			launches += n;
			api_launches += w == API ? n : 0;
			ext_launches += w == EXT ? n : 0;
			cb_launches += w == CB ? n : 0;
			if (r >= 0)
				t[w][r] = dt;
		}
		if (r >= 0)
			for (int w = 0; w < NW; w++)
				ratio[w][r] = t[w][r] / t[KACT][r];
	}
	CK(cuptiActivityFlushAll(1));
	printf("{\"launches\":%ld,\"kernel_records\":%ld,\"api_launches\":%ld,\"api_records\":%ld,\"last_corr\":%u,"
	       "\"ext_launches\":%ld,\"ext_records\":%ld,\"kernel_corr_next\":%ld,\"kernel_corr_zero\":%ld,\"cb_launches\":%ld,"
	       "\"callbacks\":%ld,\"callbacks_without_id\":%ld",
	       launches, n_kernel, api_launches, n_api, last_corr, ext_launches, n_ext, n_next, n_zero, cb_launches, n_cb,
	       n_cb_zero);
	for (int w = 0; w < NW; w++) {
		double nsv = median(t[w], rounds), rv = median(ratio[w], rounds);
		printf(",\"%s_ns\":%.1f,\"%s_ratio\":%.4f", name[w], nsv, name[w], rv);
	}
	printf(",\"rounds\":%d,\"n\":%d}\n", rounds, n);
	return 0;
}
