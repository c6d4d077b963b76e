/*
 * A stand-in for libcupti, loaded by the tap through GPUTAP_CUPTI_LIB, for
 * CPU tests of the tap's CUPTI side: activity buffers asked for and given
 * back, kernels delivered when the tap flushes, launches with their driver
 * callbacks, refused activity kinds, a runtime callback, and a log of the
 * flushes, subscriptions (on which thread), unsubscriptions and finalizes it
 * was asked for.
 *   FAKE_CUPTI_REFUSE=K   cuptiActivityEnable(K) fails (CUPTI_ERROR_NOT_COMPATIBLE)
 *   FAKE_CUPTI_BUSY=1     cuptiSubscribe fails: another client holds CUPTI
 *   FAKE_CUPTI_LOG=FILE   one line per cuptiActivityFlushAll ("flush FLAG"), per
 *                         cuptiSubscribe ("subscribe main=1|0": on the process's
 *                         main thread or not), cuptiUnsubscribe ("unsubscribe")
 *                         and cuptiFinalize ("finalize")
 * The test program drives it through the fake_cupti_* functions.
 */
#include <cupti.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc done;
static CUpti_CallbackFunc subscriber;
static CUpti_TimestampCallbackFunc tsfn;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
#define PEND_MAX 65536
static unsigned pend[PEND_MAX]; /* correlation ids of kernels "run" and not yet delivered */
static unsigned pending;
static unsigned corr = 100;

static void logf_(const char *fmt, unsigned v)
{
	const char *p = getenv("FAKE_CUPTI_LOG");
	if (!p)
		return;
	char line[64];
	int n = snprintf(line, sizeof(line), fmt, v);
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) < 0) {
		}
		close(fd);
	}
}

static uint64_t now(void)
{
	if (tsfn)
		return tsfn();
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
	*v = 130001;
	return CUPTI_SUCCESS;
}
static int kact; /* kernel activity enabled: launches make kernel records */
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	const char *r = getenv("FAKE_CUPTI_REFUSE");
	if (r && atoi(r) == (int)k)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		kact = 1;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		kact = 0;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
						  CUpti_BuffersCallbackCompleteFunc c)
{
	req = r;
	done = c;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	tsfn = f;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	logf_("flush %u\n", flag);
	static unsigned ids[PEND_MAX];
	pthread_mutex_lock(&mu);
	unsigned n = pending;
	memcpy(ids, pend, n * sizeof(ids[0]));
	pending = 0;
	if (!n || !req || !done) {
		pthread_mutex_unlock(&mu);
		return CUPTI_SUCCESS;
	}
	uint8_t *buf = NULL;
	size_t size = 0, max = 0;
	req(&buf, &size, &max);
	if (!buf) {
		pthread_mutex_unlock(&mu);
		return CUPTI_SUCCESS;
	}
	size_t valid = 0;
	uint64_t t = now();
	for (unsigned i = 0; i < n && valid + sizeof(CUpti_ActivityKernel10) <= size; i++) {
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.name = "fake_kernel";
		k.start = t - 2000 + i;
		k.end = t - 1000 + i;
		k.streamId = 7;
		k.correlationId = ids[i];
		k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
		memcpy(buf + valid, &k, sizeof(k));
		valid += sizeof(k);
	}
	pthread_mutex_unlock(&mu); /* (held through: `ids` is one buffer) */
	done(NULL, 0, buf, size, valid);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + sizeof(CUpti_ActivityKernel10) : buf;
	if (next + sizeof(CUpti_ActivityKernel10) > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)next;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
	(void)c, (void)s;
	*n = 0;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *ud)
{
	(void)ud;
	logf_("subscribe main=%u\n", (unsigned)(syscall(SYS_gettid) == getpid()));
	if (getenv("FAKE_CUPTI_BUSY"))
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	*h = (CUpti_SubscriberHandle)&subscriber;
	subscriber = f;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	(void)h;
	logf_("unsubscribe%.0u\n", 0); /* (%.0u of 0 prints nothing) */
	subscriber = NULL;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle h, CUpti_CallbackDomain d,
				       CUpti_CallbackId id)
{
	(void)en, (void)h;
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API)
		logf_("runtime-callback %u\n", (unsigned)id);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_ERROR_NOT_COMPATIBLE ? "CUPTI_ERROR_NOT_COMPATIBLE" : "fake";
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
	*t = now();
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiFinalize(void)
{
	logf_("finalize%.0u\n", 0);
	kact = 0;
	subscriber = NULL;
	return CUPTI_SUCCESS;
}

/* ---- driven by the test program ---- */

/* n kernels ran: delivered at the next flush */
EXPORT void fake_cupti_kernels(unsigned n)
{
	pthread_mutex_lock(&mu);
	for (unsigned i = 0; i < n && pending < PEND_MAX; i++)
		pend[pending++] = ++corr; /* (ran while kernel activity was on) */
	pthread_mutex_unlock(&mu);
}

/* One API call as CUPTI reports it to subscriber f: enter, between() if given, exit. */
static void report_call(CUpti_CallbackFunc f, CUpti_CallbackDomain dom, CUpti_CallbackId id, const char *name,
			const void *params, uint32_t corr_id, void (*between)(void))
{
	uint64_t cdata = 0;
	int ret = 0;
	CUpti_CallbackData cb;
	memset(&cb, 0, sizeof(cb));
	cb.callbackSite = CUPTI_API_ENTER;
	cb.functionName = name;
	cb.functionParams = params;
	cb.functionReturnValue = &ret;
	cb.correlationData = &cdata;
	cb.correlationId = corr_id;
	f(NULL, dom, id, &cb);
	if (between)
		between();
	cb.callbackSite = CUPTI_API_EXIT;
	f(NULL, dom, id, &cb);
}

/* n launches of a kernel: each with its driver callbacks (enter, exit) when a subscriber is there,
 * and its kernel delivered at the next flush */
EXPORT void fake_cupti_launch(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		unsigned c = ++corr;
		if (kact && pending < PEND_MAX) /* recorded only while kernel activity is on */
			pend[pending++] = c;
		CUpti_CallbackFunc f = subscriber;
		pthread_mutex_unlock(&mu);
		if (f)
			report_call(f, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel",
				    NULL, c, NULL);
	}
}

/* CUPTI keeps asking for buffers without giving any back: how many bytes it got */
EXPORT size_t fake_cupti_hoard(unsigned n)
{
	size_t total = 0;
	for (unsigned i = 0; i < n && req; i++) {
		uint8_t *b = NULL;
		size_t size = 0, max = 0;
		req(&b, &size, &max);
		if (b)
			total += size;
	}
	return total;
}

/* A statically linked runtime's cudaMemcpy as CUPTI reports it: enter, between(), exit. */
EXPORT void fake_cupti_memcpy(void (*between)(void))
{
	if (!subscriber)
		return;
	cudaMemcpy_v3020_params p = {NULL, NULL, 4096, cudaMemcpyHostToDevice};
	report_call(subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy", &p, 5,
		    between);
}
