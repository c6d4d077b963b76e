// What CUPTI charges per launch for each way of learning a launch's correlation id, with kernel
// activity on throughout (the full trace's floor).  One process, blocks of N cuLaunchKernel calls
// alternating between the ways (the order rotates every round; each block ends in a stream
// synchronize), medians over rounds of each way's ns per launch and of its ratio to "kact":
//   kact   kernel activity only (subscribed, no callback enabled)
//   cb     + the launch callbacks (enter and exit; the callback stores the id in a thread-local)
//   api    + driver-API activity records for the launch alone (cuptiActivityEnableDriverApi), no
//          callback: the id arrives in a record with the calling thread and its start/end times
// The timestamp callback is registered in every way, as the tap registers it.  Records are counted
// (kernels must equal launches; API records must equal the launches made in "api" blocks).
//   corr [ROUNDS] [N]        (defaults 100 rounds of 2,000 launches)
#include <cupti.h>
#include <stdio.h>
#include <string.h>

#include "bench.cuh"

static __thread uint32_t last_corr;
static long n_kernel, n_api;

static void CUPTIAPI on_cb(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	(void)ud, (void)d, (void)id;
	const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
	if (cb->callbackSite == CUPTI_API_ENTER)
		last_corr = cb->correlationId;
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
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			n_kernel++;
		else if (r->kind == CUPTI_ACTIVITY_KIND_DRIVER)
			n_api++;
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
	enum { KACT, CB, API, NW };
	const char *name[NW] = {"kact", "cb", "api"};
	double *t[NW], *ratio[NW];
	for (int w = 0; w < NW; w++) {
		t[w] = (double *)malloc(sizeof(double) * rounds);
		ratio[w] = (double *)malloc(sizeof(double) * rounds);
	}
	long launches = 0, api_launches = 0;
	for (int r = -1; r < rounds; r++) { /* round -1 warms every way */
		for (int k = 0; k < NW; k++) {
			int w = (k + (r < 0 ? 0 : r)) % NW;
			CK(cuptiEnableCallback(w == CB, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
			CK(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, w == API));
			double t0 = now_ns();
			for (int i = 0; i < n; i++)
				CK(cuLaunchKernel(l.f, 1, 1, 1, 32, 1, 1, 0, l.s, l.args, NULL));
			CK(cuStreamSynchronize(l.s));
			double dt = (now_ns() - t0) / n;
			launches += n;
			api_launches += w == API ? n : 0;
			if (r >= 0)
				t[w][r] = dt;
		}
		if (r >= 0)
			for (int w = 0; w < NW; w++)
				ratio[w][r] = t[w][r] / t[KACT][r];
	}
	CK(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0));
	CK(cuptiActivityFlushAll(1));
	printf("{\"launches\":%ld,\"kernel_records\":%ld,\"api_launches\":%ld,\"api_records\":%ld,\"last_corr\":%u", launches,
	       n_kernel, api_launches, n_api, last_corr);
	for (int w = 0; w < NW; w++) {
		double nsv = median(t[w], rounds), rv = median(ratio[w], rounds);
		printf(",\"%s_ns\":%.1f,\"%s_ratio\":%.4f", name[w], nsv, name[w], rv);
	}
	printf(",\"rounds\":%d,\"n\":%d}\n", rounds, n);
	return 0;
}
