/*
 * PC sampling (see pcsamp.h): CUPTI's PC Sampling API in continuous mode.
 *
 * The call sequence per context (cupti_pcsampling.h): cuptiPCSamplingEnable,
 * the stall reasons (GetNumStallReasons, GetStallReasons), then the
 * configuration (period, all reasons, buffers, continuous mode; start/stop
 * control only in window mode: without it sampling runs from the enable, with
 * it only between cuptiPCSamplingStart and Stop, which gputap_pcsamp_start()
 * and gputap_pcsamp_stop() call on the program's thread), cuptiPCSamplingGetData while the
 * program runs (every 100 ms from the writer thread, and when a module is
 * about to be unloaded: PCs stay unique only between loads), and at the end
 * cuptiPCSamplingDisable, which copies what is left into the configured
 * buffer.  Continuous mode gives no correlation id: samples are per function
 * (kernel) and PC, not per launch.
 */
#include "tap/pcsamp.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>
#include <cupti_pcsampling.h>

#include "core/log.h"
#include "gputap.h"
#include "tap/api.h"
#include "tap/capture_tap.h"
#include "tap/cupti.h"
#include "tap/pcsamp_agg.h"
#include "tap/tap.h"

#define GT_PCS_FNS(X)                                                                              \
	X(cuptiPCSamplingEnable)                                                                   \
	X(cuptiPCSamplingDisable)                                                                  \
	X(cuptiPCSamplingGetData)                                                                  \
	X(cuptiPCSamplingStart)                                                                    \
	X(cuptiPCSamplingStop)                                                                     \
	X(cuptiPCSamplingSetConfigurationAttribute)                                                \
	X(cuptiPCSamplingGetNumStallReasons)                                                       \
	X(cuptiPCSamplingGetStallReasons)                                                          \
	X(cuptiGetSassToSourceCorrelation)                                                         \
	X(cuptiGetCubinCrc)                                                                        \
	X(cuptiGetResultString)

#define MAX_CTX 32
#define BUF_PCS 4096                    /* PCs per GetData buffer */
#define SOURCE_BUDGET_NS 5000000000ull  /* source lines looked up at the end for at most 5 s */


struct pcs_ctx {
	CUcontext ctx;
	int on;
	int started; /* window mode: between cuptiPCSamplingStart and Stop */
	int startstop; /* configured with start/stop control */
	size_t nreason;
	uint32_t *ridx; /* the reasons configured (kept while sampling) */
	CUpti_PCSamplingData cfg, get; /* Disable's buffer, GetData's buffer */
};

struct cubin {
	uint64_t crc;
	size_t size;
	char *data;
	uint32_t found, failed; /* source-line lookups in it */
};

#define GT_PCS_PTR(n) __typeof__(&n) n;
static struct {
	pthread_mutex_t mu; /* CUPTI's PC sampling calls, the contexts, the aggregate */
	int read, wanted, loaded, finished;
	pid_t pid; /* the process that started sampling: a fork child inherits this state, never CUPTI */
	uint32_t period;
	size_t hwbuf, scratch;
	GT_PCS_FNS(GT_PCS_PTR)
	struct pcs_ctx ctx[MAX_CTX];
	int nctx;
	uint64_t ctx_over; /* contexts beyond MAX_CTX: not sampled */
	struct gt_pcs_agg agg;
	uint64_t getdata_calls, getdata_ns, getdata_errors;
	/* CUPTI's function-name strings: shared by the records of one function, the client's to free
	 * once no record uses them (at the end) */
	char **names;
	size_t nnames, names_cap;
	int said_error;
	/* windows (gputap_pcsamp_start/stop): contexts configured with start/stop control */
	int window;         /* window mode */
	int running;        /* a window is open */
	uint64_t windows;   /* windows opened */
	uint64_t before_windows; /* samples of the whole-run sampling dropped when windows began */
	int late_ctx;       /* contexts found at a window call, created before sampling started */
	uint64_t mod_missing; /* sampled modules without a cubin (at the end) */
	/* cubins, keyed by CRC (own lock: a module loads on the program's thread) */
	pthread_mutex_t cmu;
	struct cubin *cub;
	size_t ncub, cubcap, cub_bytes, cub_cap;
	uint64_t cub_skipped, cub_skipped_bytes;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .cmu = PTHREAD_MUTEX_INITIALIZER};
#undef GT_PCS_PTR
/* this thread holds P.mu in a window call: a resource callback CUPTI or the driver makes on it
 * meanwhile returns at once (P.mu is not recursive) */
static __thread int held_here;

int gt_pcs_parse_period(const char *s)
{
	if (!s || !*s || strcmp(s, "default") == 0 || strcmp(s, "on") == 0 || strcmp(s, "1") == 0)
		return GT_PCS_PERIOD_DEFAULT;
	char *end = NULL;
	long v = strtol(s, &end, 10);
	if (end == s || *end || s[0] < '0' || s[0] > '9' || v < GT_PCS_PERIOD_MIN || v > GT_PCS_PERIOD_MAX)
		return -1;
	return (int)v;
}

static size_t env_mb(const char *name, size_t def, size_t max)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end = NULL;
	unsigned long n = strtoul(v, &end, 10);
	if (end == v || *end || v[0] < '0' || v[0] > '9' || n < 1 || n > max) {
		gt_warn("%s='%s': expected 1..%zu (MiB); %zu is used", name, v, max, def);
		return def;
	}
	return n;
}

int gt_pcs_wanted(void)
{
	if (P.read)
		return P.wanted;
	P.read = 1;
	const char *v = getenv("GPUTAP_PCSAMP");
	if (!v || strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || (!*v))
		return 0;
	int p = gt_pcs_parse_period(v);
	if (p < 0) {
		gt_warn("GPUTAP_PCSAMP='%s': expected on, default or a period N of 2^N cycles (%d..%d); %d is used", v,
			GT_PCS_PERIOD_MIN, GT_PCS_PERIOD_MAX, GT_PCS_PERIOD_DEFAULT);
		p = GT_PCS_PERIOD_DEFAULT;
	}
	if (gt_capture_tap_mode()) {
		gt_warn("PC sampling does not work with capture windows (CUPTI is finalized between windows): "
			"GPUTAP_PCSAMP is ignored");
		return 0;
	}
	P.period = (uint32_t)p;
	P.hwbuf = env_mb("GPUTAP_PCSAMP_HWBUF_MB", 128, 4096) << 20;
	P.scratch = env_mb("GPUTAP_PCSAMP_SCRATCH_MB", 4, 1024) << 20;
	P.cub_cap = env_mb("GPUTAP_PCSAMP_CUBIN_MB", 256, 65536) << 20;
	const char *w = getenv("GPUTAP_PCSAMP_WINDOW");
	P.window = w && *w && strcmp(w, "0") != 0 && strcmp(w, "off") != 0;
	gt_pcs_agg_init(&P.agg);
	P.wanted = 1;
	return 1;
}

static const char *rstr(CUptiResult r)
{
	const char *m = "?";
	if (P.cuptiGetResultString)
		P.cuptiGetResultString(r, &m);
	return m;
}

int gt_pcs_start(void *lib)
{
	if (!P.wanted)
		return -1;
	if (P.loaded)
		return 0;
	int missing = 0;
#define GT_PCS_LOAD(n)                                                                             \
	P.n = (__typeof__(&n))gt_real_dlsym(lib, #n);                                              \
	if (!P.n)                                                                                  \
		missing = 1;
	GT_PCS_FNS(GT_PCS_LOAD)
#undef GT_PCS_LOAD
	if (missing) {
		gt_warn("the CUPTI library found has no PC Sampling API (cupti_pcsampling.h): PC sampling is off");
		P.wanted = 0;
		return -1;
	}
	P.loaded = 1;
	P.pid = getpid();
	gt_info("PC sampling: period 2^%u cycles, hardware buffer %zu MiB, scratch %zu MiB", P.period, P.hwbuf >> 20,
		P.scratch >> 20);
	atomic_store(&gt_tap.pcs_active, 1);
	return 0;
}

static void buf_free(CUpti_PCSamplingData *d)
{
	if (d->pPcData)
		for (size_t i = 0; i < d->collectNumPcs; i++)
			free(d->pPcData[i].stallReason);
	free(d->pPcData);
	memset(d, 0, sizeof(*d));
}

static int buf_init(CUpti_PCSamplingData *d, size_t npcs, size_t nreason)
{
	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	d->collectNumPcs = npcs;
	d->pPcData = calloc(npcs, sizeof(*d->pPcData));
	if (!d->pPcData)
		return -ENOMEM;
	for (size_t i = 0; i < npcs; i++) {
		d->pPcData[i].size = sizeof(d->pPcData[i]);
		d->pPcData[i].stallReason = calloc(nreason ? nreason : 1, sizeof(CUpti_PCSamplingStallReason));
		if (!d->pPcData[i].stallReason) {
			buf_free(d);
			return -ENOMEM;
		}
	}
	return 0;
}

static void say_error(const char *what, CUptiResult r)
{
	P.getdata_errors++;
	if (P.said_error++ == 0)
		gt_warn("PC sampling: %s failed (%s)%s", what, rstr(r),
			r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ? ": it needs access to GPU performance counters" : "");
}

/* Stall reasons of `c` named in the aggregate; its buffers sized for them.  0 or -1. */
static int ctx_reasons(struct pcs_ctx *c, uint32_t **idx_out)
{
	size_t n = 0;
	CUpti_PCSamplingGetNumStallReasonsParams np = {0};
	np.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
	np.ctx = c->ctx;
	np.numStallReasons = &n;
	CUptiResult r = P.cuptiPCSamplingGetNumStallReasons(&np);
	if (r != CUPTI_SUCCESS || n == 0) {
		say_error("cuptiPCSamplingGetNumStallReasons", r);
		return -1;
	}
	uint32_t *idx = calloc(n, sizeof(*idx));
	char **names = calloc(n, sizeof(*names));
	int rc = -1;
	if (!idx || !names)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!(names[i] = calloc(1, CUPTI_STALL_REASON_STRING_SIZE)))
			goto out;
	CUpti_PCSamplingGetStallReasonsParams sp = {0};
	sp.size = CUpti_PCSamplingGetStallReasonsParamsSize;
	sp.ctx = c->ctx;
	sp.numStallReasons = n;
	sp.stallReasonIndex = idx;
	sp.stallReasons = names;
	r = P.cuptiPCSamplingGetStallReasons(&sp);
	if (r != CUPTI_SUCCESS) {
		say_error("cuptiPCSamplingGetStallReasons", r);
		goto out;
	}
	if (gt_pcs_agg_reasons(&P.agg, n, idx, names) < 0)
		goto out;
	c->nreason = n;
	*idx_out = idx;
	idx = NULL;
	rc = 0;
out:
	if (names)
		for (size_t i = 0; i < n; i++)
			free(names[i]);
	free(names);
	free(idx);
	return rc;
}

/* Enable and configure PC sampling on a context (under P.mu): a new slot, or the slot it had
 * (disabled: destroyed, or re-enabled for windows).  1 when enabled, else 0. */
static int ctx_enable(CUcontext ctx)
{
	struct pcs_ctx *c = NULL;
	for (int i = 0; i < P.nctx && !c; i++)
		if (P.ctx[i].ctx == ctx && !P.ctx[i].on)
			c = &P.ctx[i];
	int fresh = !c;
	if (fresh) {
		if (P.nctx >= MAX_CTX) {
			if (P.ctx_over++ == 0)
				gt_warn("PC sampling: more than %d CUDA contexts; later ones are not sampled", MAX_CTX);
			return 0;
		}
		c = &P.ctx[P.nctx];
	} else {
		buf_free(&c->cfg);
		buf_free(&c->get);
		free(c->ridx);
	}
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	CUpti_PCSamplingEnableParams ep = {0};
	ep.size = CUpti_PCSamplingEnableParamsSize;
	ep.ctx = ctx;
	CUptiResult r = P.cuptiPCSamplingEnable(&ep);
	if (r != CUPTI_SUCCESS) {
		say_error("cuptiPCSamplingEnable", r);
		return 0;
	}
	uint32_t *idx = NULL;
	if (ctx_reasons(c, &idx) < 0 || buf_init(&c->cfg, BUF_PCS, c->nreason) < 0 ||
	    buf_init(&c->get, BUF_PCS, c->nreason) < 0)
		goto fail;
	CUpti_PCSamplingConfigurationInfo ci[8];
	memset(ci, 0, sizeof(ci));
	int k = 0;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	ci[k++].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
	ci[k++].attributeData.samplingPeriodData.samplingPeriod = P.period;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	ci[k].attributeData.stallReasonData.stallReasonCount = c->nreason;
	ci[k++].attributeData.stallReasonData.pStallReasonIndex = idx;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	ci[k++].attributeData.scratchBufferSizeData.scratchBufferSize = P.scratch;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
	ci[k++].attributeData.hardwareBufferSizeData.hardwareBufferSize = P.hwbuf;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	ci[k++].attributeData.enableStartStopControlData.enableStartStopControl = P.window ? 1 : 0;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
	ci[k++].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
	ci[k].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	ci[k++].attributeData.samplingDataBufferData.samplingDataBuffer = &c->cfg;
	CUpti_PCSamplingConfigurationInfoParams cp = {0};
	cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
	cp.ctx = ctx;
	cp.numAttributes = (size_t)k;
	cp.pPCSamplingConfigurationInfo = ci;
	r = P.cuptiPCSamplingSetConfigurationAttribute(&cp);
	c->ridx = idx;
	idx = NULL;
	if (r != CUPTI_SUCCESS) {
		for (int i = 0; i < k; i++)
			if (ci[i].attributeStatus != CUPTI_SUCCESS)
				gt_warn("PC sampling: CUPTI refused configuration attribute %d (%s)", (int)ci[i].attributeType,
					rstr(ci[i].attributeStatus));
		say_error("cuptiPCSamplingSetConfigurationAttribute", r);
		goto fail;
	}
	c->on = 1;
	c->startstop = P.window;
	if (fresh)
		P.nctx++;
	gt_info("PC sampling enabled on context %p (%zu stall reasons%s)", (void *)ctx, c->nreason,
		P.window ? ", started only in windows" : "");
	return 1;
fail:
	free(idx);
	free(c->ridx);
	c->ridx = NULL;
	buf_free(&c->cfg);
	buf_free(&c->get);
	CUpti_PCSamplingDisableParams dp = {0};
	dp.size = CUpti_PCSamplingDisableParamsSize;
	dp.ctx = ctx;
	P.cuptiPCSamplingDisable(&dp);
	c->ctx = fresh ? NULL : ctx;
	return 0;
}

/* CUPTI's name strings of a buffer, each kept once to be freed at the end. */
static void keep_names(const CUpti_PCSamplingData *d)
{
	const char *last = NULL;
	for (size_t i = 0; d->pPcData && i < d->totalNumPcs && i < d->collectNumPcs; i++) {
		char *n = d->pPcData[i].functionName;
		if (!n || n == last) /* a function's PCs come together */
			continue;
		last = n;
		int seen = 0;
		for (size_t j = P.nnames; j-- > 0 && !seen;)
			seen = P.names[j] == n;
		if (seen)
			continue;
		if (P.nnames == P.names_cap) {
			size_t nc = P.names_cap ? P.names_cap * 2 : 256;
			char **t = realloc(P.names, nc * sizeof(*t));
			if (!t)
				return; /* not freed at the end: a small leak, never a double free */
			P.names = t;
			P.names_cap = nc;
		}
		P.names[P.nnames++] = n;
	}
}

static void decode(const CUpti_PCSamplingData *d)
{
	gt_pcs_agg_add(&P.agg, d);
	keep_names(d);
}

/* Everything CUPTI has for `c` now (under P.mu). */
static void ctx_drain(struct pcs_ctx *c)
{
	uint64_t t0 = gt_now_ns();
	for (int round = 0; round < 256; round++) {
		c->get.totalNumPcs = 0;
		c->get.remainingNumPcs = 0;
		CUpti_PCSamplingGetDataParams gp = {0};
		gp.size = CUpti_PCSamplingGetDataParamsSize;
		gp.ctx = c->ctx;
		gp.pcSamplingData = &c->get;
		CUptiResult r = P.cuptiPCSamplingGetData(&gp);
		P.getdata_calls++;
		if (r == CUPTI_ERROR_OUT_OF_MEMORY) {
			P.agg.hw_full++; /* the hardware buffer filled: samples lost, counted by CUPTI as dropped */
		} else if (r != CUPTI_SUCCESS) {
			say_error("cuptiPCSamplingGetData", r);
			break;
		}
		decode(&c->get);
		if (c->get.remainingNumPcs == 0 || r != CUPTI_SUCCESS)
			break;
	}
	P.getdata_ns += gt_now_ns() - t0;
}

/* Stop a context's sampling (start/stop control) if it runs; its samples stay to be drained. */
static void ctx_stop(struct pcs_ctx *c)
{
	if (!c->started)
		return;
	CUpti_PCSamplingStopParams sp = {0};
	sp.size = CUpti_PCSamplingStopParamsSize;
	sp.ctx = c->ctx;
	CUptiResult r = P.cuptiPCSamplingStop(&sp);
	if (r != CUPTI_SUCCESS)
		say_error("cuptiPCSamplingStop", r);
	c->started = 0;
}

static void ctx_disable(struct pcs_ctx *c)
{
	ctx_stop(c);
	ctx_drain(c);
	c->cfg.totalNumPcs = 0;
	CUpti_PCSamplingDisableParams dp = {0};
	dp.size = CUpti_PCSamplingDisableParamsSize;
	dp.ctx = c->ctx;
	CUptiResult r = P.cuptiPCSamplingDisable(&dp);
	if (r != CUPTI_SUCCESS)
		say_error("cuptiPCSamplingDisable", r);
	else if (c->cfg.totalNumPcs)
		decode(&c->cfg); /* what was left, copied at the disable */
	c->on = 0;
}

static void keep_cubin(const CUpti_ModuleResourceData *m)
{
	if (!m || !m->pCubin || !m->cubinSize)
		return;
	CUpti_GetCubinCrcParams cp = {0};
	cp.size = CUpti_GetCubinCrcParamsSize;
	cp.cubin = m->pCubin;
	cp.cubinSize = m->cubinSize;
	if (P.cuptiGetCubinCrc(&cp) != CUPTI_SUCCESS)
		return;
	pthread_mutex_lock(&P.cmu);
	for (size_t i = 0; i < P.ncub; i++)
		if (P.cub[i].crc == cp.cubinCrc)
			goto out;
	if (P.cub_bytes + m->cubinSize > P.cub_cap) {
		P.cub_skipped++;
		P.cub_skipped_bytes += m->cubinSize;
		goto out;
	}
	if (P.ncub == P.cubcap) {
		size_t nc = P.cubcap ? P.cubcap * 2 : 64;
		struct cubin *t = realloc(P.cub, nc * sizeof(*t));
		if (!t)
			goto out;
		P.cub = t;
		P.cubcap = nc;
	}
	char *d = malloc(m->cubinSize);
	if (!d)
		goto out;
	memcpy(d, m->pCubin, m->cubinSize);
	P.cub[P.ncub++] = (struct cubin){cp.cubinCrc, m->cubinSize, d, 0, 0};
	P.cub_bytes += m->cubinSize;
out:
	pthread_mutex_unlock(&P.cmu);
}

void gt_pcs_resource(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data)
{
	(void)dom; /* resource callbacks only (tap/cupti.h) */
	const CUpti_ResourceData *rd = data;
	if (!atomic_load(&gt_tap.pcs_active) || !rd || getpid() != P.pid || held_here)
		return;
	int saved = gt_tls.guard;
	gt_tls.guard++;
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
		pthread_mutex_lock(&P.mu);
		if (!P.finished)
			ctx_enable(rd->context);
		pthread_mutex_unlock(&P.mu);
		break;
	case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
		pthread_mutex_lock(&P.mu);
		for (int i = 0; i < P.nctx; i++)
			if (P.ctx[i].on && P.ctx[i].ctx == rd->context)
				ctx_disable(&P.ctx[i]);
		pthread_mutex_unlock(&P.mu);
		break;
	case CUPTI_CBID_RESOURCE_MODULE_LOADED:
		keep_cubin(rd->resourceDescriptor);
		break;
	case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
		pthread_mutex_lock(&P.mu);
		for (int i = 0; i < P.nctx; i++)
			if (P.ctx[i].on && P.ctx[i].ctx == rd->context)
				ctx_drain(&P.ctx[i]);
		pthread_mutex_unlock(&P.mu);
		break;
	default:
		break;
	}
	gt_tls.guard = saved;
}

void gt_pcs_tick(void)
{
	static uint64_t last; /* the writer thread's only */
	if (!atomic_load(&gt_tap.pcs_active) || getpid() != P.pid)
		return;
	uint64_t now = gt_now_ns();
	if (now - last < 100000000ull)
		return;
	last = now;
	int saved = gt_tls.guard;
	gt_tls.guard++;
	pthread_mutex_lock(&P.mu);
	for (int i = 0; i < P.nctx; i++)
		if (P.ctx[i].on)
			ctx_drain(&P.ctx[i]);
	pthread_mutex_unlock(&P.mu);
	gt_tls.guard = saved;
}

/* ---- windows: gputap_pcsamp_start / gputap_pcsamp_stop (the program's thread, never a callback) ---- */

/* The contexts that exist now: the calling thread's current one and every device's active primary
 * context, through the driver's own entry points (nothing is created: an inactive primary context
 * is not retained).  Called without P.mu: the driver may call back. */
static int existing_contexts(CUcontext *out, int max)
{
	typedef CUresult (*getcur_t)(CUcontext *);
	typedef CUresult (*count_t)(int *);
	typedef CUresult (*devget_t)(CUdevice *, int);
	typedef CUresult (*state_t)(CUdevice, unsigned *, int *);
	typedef CUresult (*retain_t)(CUcontext *, CUdevice);
	typedef CUresult (*release_t)(CUdevice);
	getcur_t getcur = (getcur_t)gt_real_driver("cuCtxGetCurrent");
	count_t count = (count_t)gt_real_driver("cuDeviceGetCount");
	devget_t get = (devget_t)gt_real_driver("cuDeviceGet");
	state_t state = (state_t)gt_real_driver("cuDevicePrimaryCtxGetState");
	retain_t retain = (retain_t)gt_real_driver("cuDevicePrimaryCtxRetain");
	release_t release = (release_t)gt_real_driver("cuDevicePrimaryCtxRelease_v2");
	int n = 0;
	CUcontext cur = NULL;
	if (getcur && getcur(&cur) == CUDA_SUCCESS && cur)
		out[n++] = cur;
	int ndev = 0;
	if (!count || !get || !state || !retain || !release || count(&ndev) != CUDA_SUCCESS)
		return n;
	for (int d = 0; d < ndev && n < max; d++) {
		CUdevice dev;
		unsigned flags = 0;
		int active = 0;
		CUcontext pc = NULL;
		if (get(&dev, d) != CUDA_SUCCESS || state(dev, &flags, &active) != CUDA_SUCCESS || !active ||
		    retain(&pc, dev) != CUDA_SUCCESS)
			continue;
		release(dev); /* it stays active: the program holds it */
		int seen = 0;
		for (int i = 0; i < n && !seen; i++)
			seen = out[i] == pc;
		if (pc && !seen)
			out[n++] = pc;
	}
	return n;
}

/* Windows from now on (under P.mu): every context sampled so far is disabled (its samples,
 * taken outside any window, are dropped) and enabled again with start/stop control. */
static void to_windows(void)
{
	CUcontext again[MAX_CTX];
	int n = 0;
	for (int i = 0; i < P.nctx; i++)
		if (P.ctx[i].on) {
			ctx_disable(&P.ctx[i]);
			again[n++] = P.ctx[i].ctx;
		}
	P.before_windows += gt_pcs_agg_samples(&P.agg);
	gt_pcs_agg_free(&P.agg);
	gt_pcs_agg_init(&P.agg);
	P.window = 1;
	for (int i = 0; i < n; i++)
		ctx_enable(again[i]);
	if (P.before_windows)
		gt_info("PC sampling: windows from now on; %" PRIu64 " samples taken before are dropped", P.before_windows);
}

/* Open (on = 1) or close a window on every sampled context.  The number of contexts sampling
 * in windows, or GPUTAP_EINVAL when PC sampling is not on in this process. */
static int window(int on)
{
	if (!P.loaded || getpid() != P.pid || !atomic_load(&gt_tap.pcs_active)) {
		gt_api_set_error("PC sampling is not on in this process: run under `gputap run --pc-sampling` or set "
				 "GPUTAP_PCSAMP before gputap starts");
		return GPUTAP_EINVAL;
	}
	int saved = gt_tls.guard;
	gt_tls.guard++;
	CUcontext now[MAX_CTX];
	int nnow = existing_contexts(now, MAX_CTX);
	pthread_mutex_lock(&P.mu);
	held_here = 1;
	int rc = 0;
	if (P.finished) {
		gt_api_set_error("PC sampling has ended in this process");
		rc = GPUTAP_EINVAL;
		goto out;
	}
	if (!P.window)
		to_windows();
	for (int j = 0; j < nnow; j++) { /* contexts CUPTI never reported created: before sampling started */
		int known = 0;
		for (int i = 0; i < P.nctx && !known; i++)
			known = P.ctx[i].on && P.ctx[i].ctx == now[j];
		if (!known && ctx_enable(now[j]))
			P.late_ctx++;
	}
	for (int i = 0; i < P.nctx; i++) {
		struct pcs_ctx *c = &P.ctx[i];
		if (!c->on || !c->startstop)
			continue;
		if (on && !c->started) {
			CUpti_PCSamplingStartParams sp = {0};
			sp.size = CUpti_PCSamplingStartParamsSize;
			sp.ctx = c->ctx;
			CUptiResult r = P.cuptiPCSamplingStart(&sp);
			if (r != CUPTI_SUCCESS) {
				say_error("cuptiPCSamplingStart", r);
				continue;
			}
			c->started = 1;
		} else if (!on && c->started) {
			ctx_stop(c);
			ctx_drain(c); /* PCs are unique within a window only */
		}
		rc++;
	}
	if (on && !P.running)
		P.windows++;
	P.running = on;
out:
	held_here = 0;
	pthread_mutex_unlock(&P.mu);
	gt_tls.guard = saved;
	return rc;
}

GT_EXPORT int gputap_pcsamp_start(void)
{
	return window(1);
}

GT_EXPORT int gputap_pcsamp_stop(void)
{
	return window(0);
}

static struct cubin *cubin_of(uint64_t crc)
{
	for (size_t i = 0; i < P.ncub; i++)
		if (P.cub[i].crc == crc)
			return &P.cub[i];
	return NULL;
}

/* Source lines of the sampled PCs whose module was kept; counts of those found and not. */
static void source_lines(uint64_t *found, uint64_t *none, uint64_t *no_cubin, uint64_t *over_budget)
{
	uint64_t t0 = gt_now_ns();
	for (size_t i = 0; i < P.agg.npc; i++) {
		struct gt_pcs_pc *p = &P.agg.pc[i];
		struct cubin *cb = cubin_of(p->crc);
		if (!cb) {
			(*no_cubin)++;
			continue;
		}
		if (!cb->found && cb->failed >= 16) { /* built without line info (a framework's kernels) */
			(*none)++;
			continue;
		}
		if (gt_now_ns() - t0 > SOURCE_BUDGET_NS) {
			(*over_budget)++;
			continue;
		}
		CUpti_GetSassToSourceCorrelationParams sp = {0};
		sp.size = CUpti_GetSassToSourceCorrelationParamsSize;
		sp.cubin = cb->data;
		sp.cubinSize = cb->size;
		sp.functionName = P.agg.fn[p->fn];
		sp.pcOffset = p->off;
		if (P.cuptiGetSassToSourceCorrelation(&sp) == CUPTI_SUCCESS && sp.fileName && sp.lineNumber) {
			char path[4096];
			if (sp.dirName && sp.dirName[0] && sp.fileName[0] != '/')
				snprintf(path, sizeof(path), "%s/%s", sp.dirName, sp.fileName);
			else
				snprintf(path, sizeof(path), "%s", sp.fileName);
			gt_pcs_agg_set_source(&P.agg, p, path, sp.lineNumber);
			(*found)++;
			cb->found++;
		} else {
			(*none)++;
			cb->failed++;
		}
		free(sp.fileName);
		free(sp.dirName);
	}
}

/* Modules (CRCs) with samples and no cubin kept (under P.mu and P.cmu). */
static uint64_t modules_without_cubin(void)
{
	uint64_t n = 0;
	for (size_t i = 0; i < P.agg.npc; i++) {
		uint64_t crc = P.agg.pc[i].crc;
		if (cubin_of(crc))
			continue;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = P.agg.pc[j].crc == crc;
		n += !seen;
	}
	return n;
}

static int write_atomic(const char *dir, const char *name, int (*fn)(FILE *, void *), void *arg)
{
	char path[4400], tmp[4400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", dir, name, (int)getpid());
	FILE *f = fopen(tmp, "we");
	if (!f) {
		gt_warn("PC sampling: cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	int rc = fn(f, arg);
	if (fclose(f) != 0 || rc < 0 || rename(tmp, path) < 0) {
		gt_warn("PC sampling: cannot write %s", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int put_csv(FILE *f, void *arg)
{
	(void)arg;
	return gt_pcs_agg_write_csv(&P.agg, f);
}

static int put_totals(FILE *f, void *arg)
{
	return gt_pcs_agg_write_totals(&P.agg, arg, f);
}

static int put_cubin(FILE *f, void *arg)
{
	const struct cubin *c = arg;
	return fwrite(c->data, 1, c->size, f) == c->size ? 0 : -1;
}

static void write_files(uint64_t found, uint64_t none, uint64_t no_cubin, uint64_t over)
{
	if (!gt_tap.cfg.out_dir || !gt_tap.proc[0])
		return;
	char dir[4200], cdir[4300];
	snprintf(dir, sizeof(dir), "%s/%s", gt_tap.cfg.out_dir, gt_tap.proc);
	write_atomic(dir, "pc_samples.csv", put_csv, NULL);
	/* the modules that have samples, for the SASS after the run */
	snprintf(cdir, sizeof(cdir), "%s/pcsamp", dir);
	uint64_t written = 0;
	for (size_t i = 0; i < P.ncub; i++) {
		int used = 0;
		for (size_t j = 0; j < P.agg.npc && !used; j++)
			used = P.agg.pc[j].crc == P.cub[i].crc;
		if (!used)
			continue;
		if (!written && mkdir(cdir, 0755) < 0 && errno != EEXIST)
			break;
		char name[64];
		snprintf(name, sizeof(name), "%016" PRIx64 ".cubin", P.cub[i].crc);
		if (write_atomic(cdir, name, put_cubin, &P.cub[i]) == 0)
			written++;
	}
	char extra[2048];
	snprintf(extra, sizeof(extra),
		 "period_log2_cycles,%u\nhardware_buffer_bytes,%zu\nscratch_buffer_bytes,%zu\ncontexts,%d\n"
		 "contexts_not_sampled,%" PRIu64 "\ngetdata_calls,%" PRIu64 "\ngetdata_ms,%.3f\ngetdata_errors,%" PRIu64
		 "\nmodules_kept,%zu\nmodules_not_kept,%" PRIu64 "\nmodules_written,%" PRIu64
		 "\npcs_with_line,%" PRIu64 "\npcs_without_line,%" PRIu64 "\npcs_without_module,%" PRIu64
		 "\npcs_over_time_budget,%" PRIu64 "\nwindow_mode,%d\nwindows,%" PRIu64 "\nsamples_before_windows,%" PRIu64
		 "\ncontexts_found_at_window,%d\nmodules_without_cubin,%" PRIu64 "\n",
		 P.period, P.hwbuf, P.scratch, P.nctx, P.ctx_over, P.getdata_calls, (double)P.getdata_ns / 1e6,
		 P.getdata_errors, P.ncub, P.cub_skipped, written, found, none, no_cubin, over, P.window, P.windows,
		 P.before_windows, P.late_ctx, P.mod_missing);
	write_atomic(dir, "pc_sampling_totals.csv", put_totals, extra);
}

void gt_pcs_finish(void)
{
	if (!P.wanted || (P.loaded && getpid() != P.pid)) /* a fork child: the parent's sampling, not ours */
		return;
	int saved = gt_tls.guard;
	gt_tls.guard++;
	pthread_mutex_lock(&P.mu);
	if (P.finished || !P.loaded) {
		pthread_mutex_unlock(&P.mu);
		gt_tls.guard = saved;
		return;
	}
	P.finished = 1;
	atomic_store(&gt_tap.pcs_active, 0);
	uint64_t t0 = gt_now_ns();
	for (int i = 0; i < P.nctx; i++)
		if (P.ctx[i].on)
			ctx_disable(&P.ctx[i]);
	uint64_t t1 = gt_now_ns();
	pthread_mutex_lock(&P.cmu);
	uint64_t found = 0, none = 0, no_cubin = 0, over = 0;
	source_lines(&found, &none, &no_cubin, &over);
	P.mod_missing = modules_without_cubin();
	if (P.mod_missing) { /* a warning where contexts were found made before gputap started */
		char m[400];
		snprintf(m, sizeof(m),
			 "PC sampling: %" PRIu64 " sampled modules have no cubin (loaded before gputap started, or over "
			 "GPUTAP_PCSAMP_CUBIN_MB): their %" PRIu64 " PCs keep function + offset, without source line or SASS",
			 P.mod_missing, no_cubin);
		if (P.late_ctx)
			gt_warn("%s", m);
		else
			gt_info("%s", m);
	}
	uint64_t t2 = gt_now_ns();
	write_files(found, none, no_cubin, over);
	gt_info("PC sampling: %" PRIu64 " samples at %zu PCs (%" PRIu64 " dropped); drain %.1f ms, source lines %.1f ms, "
		"files %.1f ms",
		gt_pcs_agg_samples(&P.agg), P.agg.npc, P.agg.dropped, (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
		(double)(gt_now_ns() - t2) / 1e6);
	if (P.agg.dropped || P.agg.hw_full)
		gt_warn("PC sampling: %" PRIu64 " samples dropped by the hardware (buffer full %" PRIu64
			" times): a longer period (--pc-sampling=N, N > %u) or GPUTAP_PCSAMP_HWBUF_MB loses fewer",
			P.agg.dropped, P.agg.hw_full, P.period);
	for (size_t i = 0; i < P.ncub; i++)
		free(P.cub[i].data);
	free(P.cub);
	P.cub = NULL;
	P.ncub = 0;
	pthread_mutex_unlock(&P.cmu);
	for (int i = 0; i < P.nctx; i++) {
		buf_free(&P.ctx[i].cfg);
		buf_free(&P.ctx[i].get);
		free(P.ctx[i].ridx);
		P.ctx[i].ridx = NULL;
	}
	for (size_t i = 0; i < P.nnames; i++)
		free(P.names[i]);
	free(P.names);
	P.names = NULL;
	P.nnames = 0;
	gt_pcs_agg_free(&P.agg);
	pthread_mutex_unlock(&P.mu);
	gt_tls.guard = saved;
}

/* contexts to sample, modules whose cubins give SASS and source lines: no launch callback */
static const struct gt_cupti_id cupti_ids[] = {
	{CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED},
	{CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING},
	{CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED},
	{CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING},
};

static const struct gt_cupti_client cupti_client = {
	.callback = gt_pcs_resource,
	.off = ", PC sampling is off",
	.wanted = gt_pcs_wanted,
	.subscribed = gt_pcs_start,
	.ids = cupti_ids,
	.nids = sizeof(cupti_ids) / sizeof(cupti_ids[0]),
	.handed_over = gt_pcs_finish, /* the PC samples so far */
};

void gt_pcs_init(void)
{
	gt_cupti_register(GT_CUPTI_PCSAMP, &cupti_client);
}
