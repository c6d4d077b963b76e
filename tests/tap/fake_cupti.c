/*
 * A stand-in for libcupti, loaded by the tap through GPUTAP_CUPTI_LIB, for
 * CPU tests of the tap's CUPTI side: activity buffers asked for and given
 * back, kernels delivered when the tap flushes, launches with their driver
 * callbacks, refused activity kinds, a runtime callback, and a log of the
 * flushes, subscriptions (on which thread), unsubscriptions and finalizes it
 * was asked for.  A stand-in driver's copies and memsets come through
 * fake_cupti_driver_call: a correlation id, the driver callbacks only when the
 * tap enabled that callback id (as CUPTI does), and a copy or memset record
 * delivered at the next flush while that activity kind is on.
 *   FAKE_CUPTI_REFUSE=K   cuptiActivityEnable(K) fails (CUPTI_ERROR_NOT_COMPATIBLE)
 *   FAKE_CUPTI_BUSY=1     cuptiSubscribe fails: another client holds CUPTI
 *   FAKE_CUPTI_KERNEL_NAME=N  kernel records are named N (default fake_kernel)
 *   FAKE_CUPTI_LOG=FILE   one line per cuptiActivityFlushAll ("flush FLAG"), per
 *                         cuptiSubscribe ("subscribe main=1|0": on the process's
 *                         main thread or not), cuptiUnsubscribe ("unsubscribe")
 *                         and cuptiFinalize ("finalize")
 * and PC sampling (at the end of this file).
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
static unsigned char pend_op[PEND_MAX]; /* what ran: OP_KERNEL, OP_MEMCPY, OP_MEMSET */
static unsigned pending;
enum { OP_KERNEL, OP_MEMCPY, OP_MEMSET };
/* Every record takes one slot of this size in a buffer (the tap walks them with GetNextRecord). */
#define MAXSZ(a, b) ((a) > (b) ? (a) : (b))
#define REC_SLOT MAXSZ(sizeof(CUpti_ActivityKernel10), MAXSZ(sizeof(CUpti_ActivityMemcpy6), sizeof(CUpti_ActivityMemset4)))
static unsigned char drv_cb[4096]; /* driver callback ids the subscriber enabled */
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
static int cact, sact; /* copy and memset activity enabled */
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	const char *r = getenv("FAKE_CUPTI_REFUSE");
	if (r && atoi(r) == (int)k)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		kact = 1;
	if (k == CUPTI_ACTIVITY_KIND_MEMCPY)
		cact = 1;
	if (k == CUPTI_ACTIVITY_KIND_MEMSET)
		sact = 1;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		kact = 0;
	if (k == CUPTI_ACTIVITY_KIND_MEMCPY)
		cact = 0;
	if (k == CUPTI_ACTIVITY_KIND_MEMSET)
		sact = 0;
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
	static unsigned char ops[PEND_MAX];
	pthread_mutex_lock(&mu);
	unsigned n = pending;
	memcpy(ids, pend, n * sizeof(ids[0]));
	memcpy(ops, pend_op, n);
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
	for (unsigned i = 0; i < n && valid + REC_SLOT <= size; i++) {
		memset(buf + valid, 0, REC_SLOT);
		if (ops[i] == OP_MEMCPY) {
			CUpti_ActivityMemcpy6 m;
			memset(&m, 0, sizeof(m));
			m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
			m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
			m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
			m.bytes = 64;
			m.start = t - 2000 + i;
			m.end = t - 1000 + i;
			m.streamId = 7;
			m.correlationId = ids[i];
			memcpy(buf + valid, &m, sizeof(m));
			valid += REC_SLOT;
			continue;
		}
		if (ops[i] == OP_MEMSET) {
			CUpti_ActivityMemset4 m;
			memset(&m, 0, sizeof(m));
			m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
			m.bytes = 64;
			m.start = t - 2000 + i;
			m.end = t - 1000 + i;
			m.streamId = 7;
			m.correlationId = ids[i];
			memcpy(buf + valid, &m, sizeof(m));
			valid += REC_SLOT;
			continue;
		}
		CUpti_ActivityKernel10 k;
		memset(&k, 0, sizeof(k));
		k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k.name = getenv("FAKE_CUPTI_KERNEL_NAME") ? getenv("FAKE_CUPTI_KERNEL_NAME") : "fake_kernel";
		k.start = t - 2000 + i;
		k.end = t - 1000 + i;
		k.streamId = 7;
		k.correlationId = ids[i];
		k.gridX = k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
		memcpy(buf + valid, &k, sizeof(k));
		valid += REC_SLOT;
	}
	pthread_mutex_unlock(&mu); /* (held through: `ids` is one buffer) */
	done(NULL, 0, buf, size, valid);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + REC_SLOT : buf;
	if (next + REC_SLOT > buf + valid)
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
	(void)h;
	if (d == CUPTI_CB_DOMAIN_DRIVER_API && id < sizeof(drv_cb))
		drv_cb[id] = en != 0;
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API)
		logf_("runtime-callback %u\n", (unsigned)id);
	if (d == CUPTI_CB_DOMAIN_RESOURCE)
		logf_("resource-callback %u\n", (unsigned)id);
	if (d == CUPTI_CB_DOMAIN_DRIVER_API)
		logf_("driver-callback %u\n", (unsigned)id);
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
	kact = cact = sact = 0;
	memset(drv_cb, 0, sizeof(drv_cb));
	subscriber = NULL;
	return CUPTI_SUCCESS;
}

/* ---- driven by the test program ---- */

/* n kernels ran: delivered at the next flush */
EXPORT void fake_cupti_kernels(unsigned n)
{
	pthread_mutex_lock(&mu);
	for (unsigned i = 0; i < n && pending < PEND_MAX; i++) {
		pend_op[pending] = OP_KERNEL;
		pend[pending++] = ++corr; /* (ran while kernel activity was on) */
	}
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
		if (kact && pending < PEND_MAX) { /* recorded only while kernel activity is on */
			pend_op[pending] = OP_KERNEL;
			pend[pending++] = c;
		}
		CUpti_CallbackFunc f = subscriber;
		pthread_mutex_unlock(&mu);
		if (f)
			report_call(f, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel",
				    NULL, c, NULL);
	}
}

/* A stand-in driver's call `cbid` (its entry point `name`) as CUPTI sees it: a correlation id (returned),
 * the subscriber's enter and exit callbacks if it enabled `cbid`, and for op 1 (a copy) or 2 (a
 * memset) the GPU record, delivered at the next flush while that activity kind is on. */
EXPORT unsigned fake_cupti_driver_call(unsigned cbid, const char *name, int op);
EXPORT unsigned fake_cupti_driver_call(unsigned cbid, const char *name, int op)
{
	pthread_mutex_lock(&mu);
	unsigned c = ++corr;
	if (((op == OP_MEMCPY && cact) || (op == OP_MEMSET && sact)) && pending < PEND_MAX) {
		pend_op[pending] = (unsigned char)op;
		pend[pending++] = c;
	}
	CUpti_CallbackFunc f = cbid < sizeof(drv_cb) && drv_cb[cbid] ? subscriber : NULL;
	pthread_mutex_unlock(&mu);
	if (f)
		report_call(f, CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, NULL, c, NULL);
	return c;
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

/* ---- PC sampling (cupti_pcsampling.h) ----
 *   FAKE_CUPTI_PCS_REFUSE=1   cuptiPCSamplingEnable fails (CUPTI_ERROR_NOT_SUPPORTED)
 *   FAKE_CUPTI_PCS_DROP=N     each round of samples also has N samples dropped by the "hardware"
 *   FAKE_CUPTI_PCS_MAXPCS=N   GetData hands over at most N PCs a call (the rest: remainingNumPcs)
 *   FAKE_CUPTI_PCS_REENTER=1  cuptiPCSamplingStart calls the subscriber back on the same thread (a
 *                             module about to be unloaded), as CUPTI may from inside its calls
 *   FAKE_CUDA_CTX=1           the driver stand-ins below report the context as current and as
 *                             device 0's active primary context (a context made before the tap)
 * The log (FAKE_CUPTI_LOG) gets "pcs-enable", "pcs-config PERIOD", "pcs-startstop 0|1" (start/stop
 * control configured), "pcs-start", "pcs-stop", "pcs-getdata N" (PCs handed over), "pcs-disable N",
 * "cuda-retain" (the primary context retained) and "resource-callback ID" for each resource
 * callback enabled.  Samples accrue only while sampling runs: from the configuration without
 * start/stop control, between cuptiPCSamplingStart and Stop with it.
 * Stall reasons: index 3 long_scoreboard, 7 its not_issued part, 9 barrier, 12 selected; a
 * round of samples (fake_cupti_pcs_samples) gives PC 0x10*i (i = 1..8) of _Z6kernelv i samples
 * of long_scoreboard, i/2 of them not issued, and 1 selected; PC 0x40 of _Z5otherv 5 of barrier;
 * and 2 samples of kernels CUPTI gives no PC for. */
#include <cupti_pcsampling.h>
#include "fake_cubin.h"

#define PCS_N 9
static const uint32_t pcs_idx[4] = {3, 7, 9, 12};
static const char *const pcs_names[4] = {
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
	"smsp__pcsamp_warps_issue_stalled_barrier",
	"smsp__pcsamp_warps_issue_stalled_selected",
};
static struct {
	uint64_t off;
	int fn;                /* 0 _Z6kernelv, 1 _Z5otherv */
	uint32_t cnt[4];       /* per pcs_idx */
} pcs_pend[PCS_N];
static int pcs_have[PCS_N];
static uint64_t pcs_total, pcs_dropped, pcs_nonuser;
static CUpti_PCSamplingData *pcs_cfgbuf;
static int pcs_on, pcs_ss, pcs_started;
static char *pcs_fn[2];
static unsigned char fake_cubin[FAKE_CUBIN_MAX];
static size_t fake_cubin_n;
static int is_fake_cubin(const void *p, size_t n)
{
	if (!fake_cubin_n)
		fake_cubin_n = fake_cubin_build(fake_cubin);
	return p && n == fake_cubin_n && memcmp(p, fake_cubin, n) == 0;
}
#define FAKE_CRC 0xabcdULL
#define FAKE_CTX ((CUcontext)0x1234)

EXPORT CUptiResult cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *p)
{
	logf_("pcs-enable%.0u\n", 0);
	if (getenv("FAKE_CUPTI_PCS_REFUSE"))
		return CUPTI_ERROR_NOT_SUPPORTED;
	if (!p || p->ctx != FAKE_CTX)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pcs_on = 1;
	pcs_ss = pcs_started = 0;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
	*p->numStallReasons = 4;
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
	for (size_t i = 0; i < p->numStallReasons && i < 4; i++) {
		p->stallReasonIndex[i] = pcs_idx[i];
		snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s", pcs_names[i]);
	}
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *p)
{
	for (size_t i = 0; i < p->numAttributes; i++) {
		CUpti_PCSamplingConfigurationInfo *c = &p->pPCSamplingConfigurationInfo[i];
		c->attributeStatus = CUPTI_SUCCESS;
		if (c->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL) {
			pcs_ss = c->attributeData.enableStartStopControlData.enableStartStopControl != 0;
			logf_("pcs-startstop %u\n", (unsigned)pcs_ss);
		}
		if (c->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
			pcs_cfgbuf = c->attributeData.samplingDataBufferData.samplingDataBuffer;
		if (c->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD) {
			logf_("pcs-config %u\n", c->attributeData.samplingPeriodData.samplingPeriod);
			if (c->attributeData.samplingPeriodData.samplingPeriod < 5 ||
			    c->attributeData.samplingPeriodData.samplingPeriod > 31)
				c->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
		}
		if (c->attributeType == CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE &&
		    c->attributeData.collectionModeData.collectionMode != CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS)
			c->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
		if (c->attributeStatus != CUPTI_SUCCESS)
			return CUPTI_ERROR_INVALID_PARAMETER;
	}
	return CUPTI_SUCCESS;
}

/* Hand pending PCs over into d (at most FAKE_CUPTI_PCS_MAXPCS, and d's room). */
static size_t pcs_fill(CUpti_PCSamplingData *d)
{
	const char *m = getenv("FAKE_CUPTI_PCS_MAXPCS");
	size_t max = m ? (size_t)atoi(m) : d->collectNumPcs, n = 0, left = 0;
	if (max > d->collectNumPcs)
		max = d->collectNumPcs;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < PCS_N; i++) {
		if (!pcs_have[i])
			continue;
		if (n >= max) {
			left++;
			continue;
		}
		CUpti_PCSamplingPCData *r = &d->pPcData[n++];
		r->cubinCrc = FAKE_CRC;
		r->pcOffset = pcs_pend[i].off;
		r->functionIndex = (uint32_t)pcs_pend[i].fn;
		if (!pcs_fn[pcs_pend[i].fn]) /* CUPTI's strings: one per function, the client frees them */
			pcs_fn[pcs_pend[i].fn] = strdup(pcs_pend[i].fn ? "_Z5otherv" : "_Z6kernelv");
		r->functionName = pcs_fn[pcs_pend[i].fn];
		r->correlationId = 0;
		size_t k = 0;
		for (int j = 0; j < 4; j++)
			if (pcs_pend[i].cnt[j]) {
				r->stallReason[k].pcSamplingStallReasonIndex = pcs_idx[j];
				r->stallReason[k].samples = pcs_pend[i].cnt[j];
				k++;
			}
		r->stallReasonCount = k;
		pcs_have[i] = 0;
		memset(pcs_pend[i].cnt, 0, sizeof(pcs_pend[i].cnt));
	}
	d->totalNumPcs = n;
	d->remainingNumPcs = left;
	d->totalSamples = pcs_total;
	d->droppedSamples = pcs_dropped;
	d->nonUsrKernelsTotalSamples = pcs_nonuser;
	d->hardwareBufferFull = 0;
	d->rangeId = 1;
	pcs_total = pcs_dropped = pcs_nonuser = 0;
	pthread_mutex_unlock(&mu);
	return n;
}

EXPORT CUptiResult cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *p)
{
	if (!pcs_on)
		return CUPTI_ERROR_INVALID_OPERATION;
	size_t n = pcs_fill(p->pcSamplingData);
	if (n)
		logf_("pcs-getdata %u\n", (unsigned)n);
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *p)
{
	(void)p;
	size_t n = pcs_on && pcs_cfgbuf ? pcs_fill(pcs_cfgbuf) : 0;
	logf_("pcs-disable %u\n", (unsigned)n);
	pcs_on = pcs_ss = pcs_started = 0;
	return CUPTI_SUCCESS;
}
/* as CUPTI: only with start/stop control configured, and not twice */
EXPORT CUptiResult cuptiPCSamplingStart(CUpti_PCSamplingStartParams *p)
{
	if (!p || p->ctx != FAKE_CTX || !pcs_on || !pcs_ss || pcs_started)
		return CUPTI_ERROR_INVALID_OPERATION;
	logf_("pcs-start%.0u\n", 0);
	pcs_started = 1;
	if (getenv("FAKE_CUPTI_PCS_REENTER") && subscriber) {
		CUpti_ResourceData rd;
		memset(&rd, 0, sizeof(rd));
		rd.context = FAKE_CTX;
		subscriber(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, &rd);
		logf_("pcs-reentered%.0u\n", 0);
	}
	return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiPCSamplingStop(CUpti_PCSamplingStopParams *p)
{
	if (!p || p->ctx != FAKE_CTX || !pcs_on || !pcs_ss || !pcs_started)
		return CUPTI_ERROR_INVALID_OPERATION;
	logf_("pcs-stop%.0u\n", 0);
	pcs_started = 0;
	return CUPTI_SUCCESS;
}

/* The driver's calls that find the contexts made before the tap (GPUTAP_CUDA_LIB names this file) */
EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
	*c = getenv("FAKE_CUDA_CTX") ? FAKE_CTX : NULL;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGetCount(int *n)
{
	*n = 1;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *d, int i)
{
	*d = i;
	return i == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
	(void)d;
	*flags = 0;
	*active = getenv("FAKE_CUDA_CTX") != NULL;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	(void)d;
	logf_("cuda-retain%.0u\n", 0);
	*c = FAKE_CTX;
	return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	(void)d;
	return CUDA_SUCCESS;
}
EXPORT CUptiResult cuptiGetCubinCrc(CUpti_GetCubinCrcParams *p)
{
	if (!p->cubin || !p->cubinSize)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p->cubinCrc = is_fake_cubin(p->cubin, p->cubinSize) ? FAKE_CRC : 0x9999;
	return CUPTI_SUCCESS;
}
/* The module has line info for _Z6kernelv only: line 10 + offset / 16 of /src/k.cu */
EXPORT CUptiResult cuptiGetSassToSourceCorrelation(CUpti_GetSassToSourceCorrelationParams *p)
{
	if (!is_fake_cubin(p->cubin, p->cubinSize) || strcmp(p->functionName, "_Z6kernelv") != 0)
		return CUPTI_ERROR_UNKNOWN;
	p->fileName = strdup("k.cu");
	p->dirName = strdup("/src");
	p->lineNumber = (uint32_t)(10 + p->pcOffset / 16);
	return CUPTI_SUCCESS;
}

/* The context is created: the resource callback, as the driver makes CUPTI call it. */
EXPORT void fake_cupti_pcs_context(int destroy)
{
	CUpti_ResourceData rd;
	memset(&rd, 0, sizeof(rd));
	rd.context = FAKE_CTX;
	if (subscriber)
		subscriber(NULL, CUPTI_CB_DOMAIN_RESOURCE,
			   destroy ? CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING : CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
}
/* The module is loaded (its cubin handed over) */
EXPORT void fake_cupti_pcs_module(void)
{
	CUpti_ModuleResourceData m;
	memset(&m, 0, sizeof(m));
	m.moduleId = 1;
	is_fake_cubin(NULL, 0); /* built */
	m.pCubin = (const char *)fake_cubin;
	m.cubinSize = fake_cubin_n;
	CUpti_ResourceData rd;
	memset(&rd, 0, sizeof(rd));
	rd.context = FAKE_CTX;
	rd.resourceDescriptor = &m;
	if (subscriber)
		subscriber(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED, &rd);
}
/* One round of samples (see above) */
EXPORT void fake_cupti_pcs_samples(void)
{
	const char *dr = getenv("FAKE_CUPTI_PCS_DROP");
	if (!pcs_on || (pcs_ss && !pcs_started))
		return; /* not sampling now */
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 8; i++) {
		pcs_pend[i].off = 0x10u * (unsigned)(i + 1);
		pcs_pend[i].fn = 0;
		pcs_pend[i].cnt[0] += (uint32_t)(i + 1);
		pcs_pend[i].cnt[1] += (uint32_t)(i + 1) / 2;
		pcs_pend[i].cnt[3] += 1;
		pcs_have[i] = 1;
		pcs_total += (uint64_t)(i + 1) + 1;
	}
	pcs_pend[8].off = 0x40;
	pcs_pend[8].fn = 1;
	pcs_pend[8].cnt[2] += 5;
	pcs_have[8] = 1;
	pcs_total += 5 + 2;
	pcs_nonuser += 2;
	pcs_dropped += dr ? (uint64_t)atoi(dr) : 0;
	pthread_mutex_unlock(&mu);
}
