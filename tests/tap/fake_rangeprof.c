/*
 * A stand-in for CUPTI's Profiler Host and Range Profiler APIs (the functions
 * of src/gpu/cuprof.h), for CPU tests of range metrics through the real
 * library (tests/cli/t_rmetrics_tap.sh).  It is linked into one stand-in
 * libcupti together with tests/tap/fake_cupti.c, which is compiled with five
 * of its functions renamed so that this file can wrap them:
 *   -DcuptiSubscribe=fake_base_cuptiSubscribe
 *   -DcuptiActivityEnable=fake_base_cuptiActivityEnable
 *   -DcuptiActivityDisable=fake_base_cuptiActivityDisable
 *   -DcuptiActivityRegisterCallbacks=fake_base_cuptiActivityRegisterCallbacks
 *   -DcuptiActivityFlushAll=fake_base_cuptiActivityFlushAll
 *
 * The model.  Two counters and two derived ones:
 *   smsp__inst_executed.sum (inst), gpu__time_duration.sum (ns),
 *   dram__bytes_read.sum = 4 x inst, dram__bytes_write.sum = 2 x inst (byte),
 *   sm__throughput.avg.pct_of_peak_sustained_elapsed = 50 (%, not additive).
 * fake_rp_launch(kernel, n, inst, ns) makes n launches of `kernel`, each as
 * the driver reports it: through fake_cupti_launch (correlation ids from
 * fake_cupti), with the context, parameters and kernel name a real CUPTI
 * gives, and the kernel "runs" between the enter and the exit callback: it
 * adds inst and ns to the current CUPTI range of the started profiler (auto
 * range: a range of its own, named by its index in the image; user range:
 * the innermost pushed range; none pushed: not counted), and it makes a
 * kernel record (delivered at the next flush) when kernel activity is
 * enabled at that moment.  Ranges live in a table keyed by the counter data
 * image's address; a user range pushed with the name of one already in the
 * image adds to it (CUPTI merges ranges of equal names); ranges beyond
 * maxRangesPerPass are dropped and counted.  fake_rp_graph(n, nodes, inst,
 * ns) makes n CUDA graph launches (cuGraphLaunch callbacks) of `nodes`
 * kernels each: every node is a kernel as above (its own auto range, its own
 * kernel record with the launch's correlation id).  fake_rp_context(destroy)
 * reports the context being created or destroyed (resource callbacks); a
 * context made after a destroyed one gets the same handle.
 *   FAKE_RP_PASSES=N   the config image needs N passes (default 1)
 *   FAKE_RP_EPERM=F    F (availability, enable or start) fails with
 *                      CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: counters restricted
 *                      to administrators
 *   FAKE_RP_LOG=FILE   one line per activity enable/disable ("enable K",
 *                      "disable K"), per profiler configuration ("config auto
 *                      REPLAY" or "config user REPLAY"), per decode ("decode
 *                      RANGES DROPPED"), per delivery of kernel records
 *                      ("records N") and per error the stand-in refuses
 *                      ("error WHAT": a misuse of the API by the caller)
 */
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
/* CUPTI's functions that fake_cupti.c lacks today: weak, so that fake_cupti.c may gain them */
#define EXPORT_WEAK __attribute__((visibility("default"), weak))

/* fake_cupti.c's functions, renamed when it is compiled for this stand-in */
CUptiResult fake_base_cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *ud);
CUptiResult fake_base_cuptiActivityEnable(CUpti_ActivityKind k);
CUptiResult fake_base_cuptiActivityDisable(CUpti_ActivityKind k);
CUptiResult fake_base_cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
						     CUpti_BuffersCallbackCompleteFunc c);
CUptiResult fake_base_cuptiActivityFlushAll(uint32_t flag);
void fake_cupti_launch(unsigned n);
/* driven by the test program */
EXPORT void fake_rp_kernel(double inst, double ns);
EXPORT void fake_rp_launch(const char *kernel, unsigned n, double inst, double ns);
EXPORT void fake_rp_graph(unsigned n, unsigned nodes, double inst, double ns);
EXPORT void fake_rp_context(int destroy);

#define FAKE_CTX ((CUcontext)(uintptr_t)0xC0)

/* FAKE_RP_EPERM names `what`: counters are restricted to administrators there */
static int eperm(const char *what)
{
	const char *v = getenv("FAKE_RP_EPERM");
	return v && strcmp(v, what) == 0;
}
#define FAKE_FUNC ((CUfunction)(uintptr_t)0x1000)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	const char *p = getenv("FAKE_RP_LOG");
	if (!p)
		return;
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, (size_t)n) < 0) {
		}
		close(fd);
	}
}

/* ---- metrics ---- */

#define NM 5
static const struct {
	const char *name, *base, *unit, *desc;
	CUpti_MetricType type;
} metrics[NM] = {
	{"gpu__time_duration.sum", "gpu__time_duration", "nanosecond", "kernel duration", CUPTI_METRIC_TYPE_COUNTER},
	{"smsp__inst_executed.sum", "smsp__inst_executed", "instruction", "warp instructions executed",
	 CUPTI_METRIC_TYPE_COUNTER},
	{"dram__bytes_read.sum", "dram__bytes_read", "byte", "bytes read from DRAM", CUPTI_METRIC_TYPE_COUNTER},
	{"dram__bytes_write.sum", "dram__bytes_write", "byte", "bytes written to DRAM", CUPTI_METRIC_TYPE_COUNTER},
	{"sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm__throughput", "percent", "SM throughput",
	 CUPTI_METRIC_TYPE_THROUGHPUT},
};

static int metric_full(const char *name)
{
	for (int i = 0; name && i < NM; i++)
		if (strcmp(metrics[i].name, name) == 0)
			return i;
	return -1;
}

/* a full name or a base name */
static int metric_any(const char *name)
{
	int i = metric_full(name);
	for (int k = 0; name && i < 0 && k < NM; k++)
		if (strcmp(metrics[k].base, name) == 0)
			i = k;
	return i;
}

/* ---- counter data images: ranges by the image's address ---- */

struct range {
	char name[64];
	double inst, ns;
};

struct image {
	const uint8_t *p;
	struct range *r;
	size_t n, cap;
	size_t dropped;
};

#define MAX_IMAGES 32
static struct image images[MAX_IMAGES];

static struct image *image_of(const uint8_t *p, int create)
{
	struct image *freeslot = NULL;
	for (int i = 0; i < MAX_IMAGES; i++) {
		if (images[i].p == p && p)
			return &images[i];
		if (!images[i].p && !freeslot)
			freeslot = &images[i];
	}
	if (!create || !freeslot || !p)
		return NULL;
	memset(freeslot, 0, sizeof(*freeslot));
	freeslot->p = p;
	return freeslot;
}

/* index of a new range named `name` in `im`, or -1 when dropped */
static long image_add(struct image *im, const char *name, size_t maxr, int merge)
{
	for (size_t i = 0; merge && i < im->n; i++)
		if (strcmp(im->r[i].name, name) == 0)
			return (long)i;
	if (im->n >= maxr) {
		im->dropped++;
		return -1;
	}
	if (im->n == im->cap) {
		size_t c = im->cap ? im->cap * 2 : 64;
		struct range *r = realloc(im->r, c * sizeof(*r));
		if (!r) {
			im->dropped++;
			return -1;
		}
		im->r = r;
		im->cap = c;
	}
	struct range *x = &im->r[im->n];
	memset(x, 0, sizeof(*x));
	snprintf(x->name, sizeof(x->name), "%s", name);
	return (long)im->n++;
}

/* ---- range profiler objects ---- */

#define MAX_STACK 16
struct CUpti_RangeProfiler_Object {
	CUcontext ctx;
	int configured, started, user, replay;
	size_t maxr;
	uint8_t *image;
	int depth;
	long stack[MAX_STACK];
};

#define MAX_OBJS 16
static struct CUpti_RangeProfiler_Object *objs[MAX_OBJS];

struct CUpti_Profiler_Host_Object {
	char chip[32];
	int nadded;
};

static int live_obj(const CUpti_RangeProfiler_Object *o)
{
	for (int i = 0; o && i < MAX_OBJS; i++)
		if (objs[i] == o)
			return 1;
	return 0;
}

/* ---- what a kernel does ---- */

struct krec {
	uint32_t corr;
	const char *name;
	uint64_t ns;
};
#define MAX_RECS 65536
static struct krec recs[MAX_RECS];
static unsigned nrecs;
static int kact; /* kernel activity enabled (kept here: fake_cupti's own stays off) */
static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc done;

/* One kernel ran on the GPU: its values go to the current CUPTI range.  Lock held. */
static void kernel_ran(double inst, double ns)
{
	for (int i = 0; i < MAX_OBJS; i++) {
		struct CUpti_RangeProfiler_Object *o = objs[i];
		if (!o || !o->started || o->ctx != FAKE_CTX)
			continue;
		struct image *im = image_of(o->image, 0);
		if (!im)
			continue;
		long k = -1;
		if (!o->user) {
			char nm[32];
			snprintf(nm, sizeof(nm), "%zu", im->n);
			k = image_add(im, nm, o->maxr, 0);
		} else if (o->depth > 0) {
			k = o->stack[o->depth - 1];
		}
		if (k >= 0) {
			im->r[k].inst += inst;
			im->r[k].ns += ns;
		}
	}
}

/* A kernel ran outside any launch callback (a test's own use): its values only. */
EXPORT void fake_rp_kernel(double inst, double ns)
{
	pthread_mutex_lock(&mu);
	kernel_ran(inst, ns);
	pthread_mutex_unlock(&mu);
}

/* ---- launches with their callbacks ---- */

static CUpti_CallbackFunc tap_cb; /* the subscriber's own callback */
static __thread struct {
	int on;
	unsigned nodes; /* a graph launch of this many kernels, or 0 */
	const char *kernel;
	double inst, ns;
} cur;

/* fake_cupti's subscriber: a launch of fake_rp_launch gets what the real driver's callbacks carry */
static void CUPTIAPI tramp(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data)
{
	pthread_mutex_lock(&mu);
	CUpti_CallbackFunc f = tap_cb;
	pthread_mutex_unlock(&mu);
	if (!f)
		return;
	if (!cur.on || dom != CUPTI_CB_DOMAIN_DRIVER_API || id != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
		f(ud, dom, id, data);
		return;
	}
	const CUpti_CallbackData *cb = data;
	cuGraphLaunch_params g = {(CUgraphExec)(uintptr_t)0x2000, NULL};
	cuLaunchKernel_params p;
	memset(&p, 0, sizeof(p));
	p.f = FAKE_FUNC;
	p.gridDimX = 64, p.gridDimY = 1, p.gridDimZ = 1;
	p.blockDimX = 128, p.blockDimY = 1, p.blockDimZ = 1;
	p.hStream = NULL;
	CUpti_CallbackData d = *cb;
	d.context = FAKE_CTX;
	d.contextUid = 1;
	d.functionParams = &p;
	d.symbolName = cur.kernel;
	if (cur.nodes) {
		id = CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch;
		d.functionName = "cuGraphLaunch";
		d.functionParams = &g;
		d.symbolName = NULL;
	}
	f(ud, dom, id, &d);
	if (cb->callbackSite != CUPTI_API_ENTER)
		return;
	/* the kernels run now: after the enter callback (which may have stopped kernel records) */
	pthread_mutex_lock(&mu);
	for (unsigned k = 0; k < (cur.nodes ? cur.nodes : 1); k++) {
		kernel_ran(cur.inst, cur.ns);
		if (kact && nrecs < MAX_RECS)
			recs[nrecs++] = (struct krec){cb->correlationId, cur.kernel, (uint64_t)cur.ns};
	}
	pthread_mutex_unlock(&mu);
}

/* n launches of `kernel`, each adding inst and ns to the current CUPTI range */
EXPORT void fake_rp_launch(const char *kernel, unsigned n, double inst, double ns)
{
	cur.kernel = kernel;
	cur.inst = inst;
	cur.ns = ns;
	for (unsigned i = 0; i < n; i++) {
		cur.on = 1;
		fake_cupti_launch(1);
		cur.on = 0;
	}
}

/* n CUDA graph launches of `nodes` kernels each, every kernel adding inst and ns */
EXPORT void fake_rp_graph(unsigned n, unsigned nodes, double inst, double ns)
{
	cur.kernel = "graph_node";
	cur.inst = inst;
	cur.ns = ns;
	for (unsigned i = 0; i < n; i++) {
		cur.on = 1;
		cur.nodes = nodes ? nodes : 1;
		fake_cupti_launch(1);
		cur.on = 0;
		cur.nodes = 0;
	}
}

/* The context is created (0) or about to be destroyed (1): the resource callback */
EXPORT void fake_rp_context(int destroy)
{
	pthread_mutex_lock(&mu);
	CUpti_CallbackFunc f = tap_cb;
	pthread_mutex_unlock(&mu);
	CUpti_ResourceData rd;
	memset(&rd, 0, sizeof(rd));
	rd.context = FAKE_CTX;
	if (f)
		f(NULL, CUPTI_CB_DOMAIN_RESOURCE,
		  destroy ? CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING : CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
}

/* ---- fake_cupti's functions wrapped ---- */

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *ud)
{
	CUptiResult r = fake_base_cuptiSubscribe(h, tramp, ud);
	pthread_mutex_lock(&mu);
	tap_cb = r == CUPTI_SUCCESS ? f : NULL;
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	CUptiResult r = fake_base_cuptiActivityEnable(k); /* FAKE_CUPTI_REFUSE */
	if (r == CUPTI_SUCCESS && k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
		fake_base_cuptiActivityDisable(k); /* kernel records come from here */
		pthread_mutex_lock(&mu);
		kact = 1;
		pthread_mutex_unlock(&mu);
	}
	if (r == CUPTI_SUCCESS)
		logf_("enable %d\n", (int)k);
	return r;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
		pthread_mutex_lock(&mu);
		kact = 0;
		pthread_mutex_unlock(&mu);
	}
	logf_("disable %d\n", (int)k);
	return fake_base_cuptiActivityDisable(k);
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r, CUpti_BuffersCallbackCompleteFunc c)
{
	pthread_mutex_lock(&mu);
	req = r;
	done = c;
	pthread_mutex_unlock(&mu);
	return fake_base_cuptiActivityRegisterCallbacks(r, c);
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	CUptiResult r = fake_base_cuptiActivityFlushAll(flag);
	static struct krec out[MAX_RECS];
	static pthread_mutex_t fmu = PTHREAD_MUTEX_INITIALIZER; /* one flush at a time: `out` is one buffer */
	pthread_mutex_lock(&fmu);
	pthread_mutex_lock(&mu);
	unsigned n = nrecs;
	memcpy(out, recs, n * sizeof(out[0]));
	nrecs = 0;
	CUpti_BuffersCallbackRequestFunc rq = req;
	CUpti_BuffersCallbackCompleteFunc dn = done;
	pthread_mutex_unlock(&mu);
	for (unsigned i = 0; i < n && rq && dn;) {
		uint8_t *buf = NULL;
		size_t size = 0, max = 0;
		rq(&buf, &size, &max);
		if (!buf)
			break;
		size_t valid = 0;
		uint64_t t = 0;
		cuptiGetTimestamp(&t);
		for (; i < n && valid + sizeof(CUpti_ActivityKernel10) <= size; i++) {
			CUpti_ActivityKernel10 k;
			memset(&k, 0, sizeof(k));
			k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			k.name = out[i].name ? out[i].name : "fake_kernel";
			k.end = t - 1000 - (uint64_t)(n - i) * 10000;
			k.start = k.end - out[i].ns;
			k.streamId = 7;
			k.correlationId = out[i].corr;
			k.gridX = 64, k.gridY = k.gridZ = 1;
			k.blockX = 128, k.blockY = k.blockZ = 1;
			memcpy(buf + valid, &k, sizeof(k));
			valid += sizeof(k);
		}
		logf_("records %zu\n", valid / sizeof(CUpti_ActivityKernel10));
		dn(NULL, 0, buf, size, valid);
		if (!valid)
			break;
	}
	pthread_mutex_unlock(&fmu);
	return r;
}

/* ---- what fake_cupti does not have ---- */

EXPORT_WEAK CUptiResult cuptiGetDeviceId(CUcontext ctx, uint32_t *dev)
{
	if (!ctx || !dev)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*dev = 0;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiGetStreamIdEx(CUcontext ctx, CUstream s, uint8_t per_thread, uint32_t *id)
{
	(void)ctx, (void)s;
	*id = per_thread ? 8 : 7;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
	return p && p->structSize ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT_WEAK CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
	if (!p || p->deviceIndex != 0)
		return CUPTI_ERROR_INVALID_DEVICE;
	p->pChipName = "GH100";
	return CUPTI_SUCCESS;
}

#define AVAIL_SIZE 48
EXPORT_WEAK CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p)
{
	if (!p || !p->ctx)
		return CUPTI_ERROR_INVALID_CONTEXT;
	if (eperm("availability"))
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	if (p->pCounterAvailabilityImage)
		memset(p->pCounterAvailabilityImage, 0xA5,
		       p->counterAvailabilityImageSize < AVAIL_SIZE ? p->counterAvailabilityImageSize : AVAIL_SIZE);
	p->counterAvailabilityImageSize = AVAIL_SIZE;
	return CUPTI_SUCCESS;
}

/* ---- profiler host ---- */

EXPORT_WEAK CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
	if (!p || !p->pChipName || p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER)
		return CUPTI_ERROR_INVALID_PARAMETER;
	struct CUpti_Profiler_Host_Object *h = calloc(1, sizeof(*h));
	if (!h)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	snprintf(h->chip, sizeof(h->chip), "%s", p->pChipName);
	p->pHostObject = h;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
	if (!p || !p->pHostObject)
		return CUPTI_ERROR_INVALID_PARAMETER;
	free(p->pHostObject);
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
	if (!p || !p->pHostObject || !p->ppMetricNames)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < p->numMetrics; i++)
		if (metric_full(p->ppMetricNames[i]) < 0)
			return CUPTI_ERROR_INVALID_METRIC_NAME;
	p->pHostObject->nadded += (int)p->numMetrics;
	return CUPTI_SUCCESS;
}

#define CONFIG_SIZE 96
EXPORT_WEAK CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
	if (!p || !p->pHostObject || !p->pHostObject->nadded)
		return CUPTI_ERROR_INVALID_OPERATION;
	p->configImageSize = CONFIG_SIZE;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
	if (!p || !p->pConfigImage || p->configImageSize < CONFIG_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	memset(p->pConfigImage, 0x5A, CONFIG_SIZE);
	p->pConfigImage[0] = (uint8_t)p->pHostObject->nadded;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
	if (!p || !p->pConfigImage || p->configImageSize != CONFIG_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *v = getenv("FAKE_RP_PASSES");
	p->numOfPasses = v && atoi(v) > 0 ? (size_t)atoi(v) : 1;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params *p)
{
	static const char *names[CUPTI_METRIC_TYPE__COUNT][NM];
	if (!p || p->metricType >= CUPTI_METRIC_TYPE__COUNT)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&mu);
	size_t n = 0;
	for (int i = 0; i < NM; i++)
		if (metrics[i].type == p->metricType)
			names[p->metricType][n++] = metrics[i].base;
	pthread_mutex_unlock(&mu);
	p->ppMetricNames = names[p->metricType];
	p->numMetrics = n;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params *p)
{
	int i = p ? metric_any(p->pMetricName) : -1;
	if (i < 0)
		return CUPTI_ERROR_INVALID_METRIC_NAME;
	p->pDescription = metrics[i].desc;
	p->pHwUnit = "gpu";
	p->pDimUnit = metrics[i].unit;
	p->metricType = metrics[i].type;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
	if (!p || !p->pHostObject || !p->pMetricValues || !p->ppMetricNames)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&mu);
	struct image *im = image_of(p->pCounterDataImage, 0);
	CUptiResult r = CUPTI_SUCCESS;
	if (!im || p->rangeIndex >= im->n) {
		logf_("error evaluate range %zu of %zu\n", p->rangeIndex, im ? im->n : 0);
		r = CUPTI_ERROR_INVALID_PARAMETER;
	}
	for (size_t m = 0; r == CUPTI_SUCCESS && m < p->numMetrics; m++) {
		const struct range *x = &im->r[p->rangeIndex];
		switch (metric_full(p->ppMetricNames[m])) {
		case 0: p->pMetricValues[m] = x->ns; break;
		case 1: p->pMetricValues[m] = x->inst; break;
		case 2: p->pMetricValues[m] = 4 * x->inst; break;
		case 3: p->pMetricValues[m] = 2 * x->inst; break;
		case 4: p->pMetricValues[m] = 50; break;
		default: r = CUPTI_ERROR_INVALID_METRIC_NAME;
		}
	}
	pthread_mutex_unlock(&mu);
	return r;
}

/* ---- range profiler ---- */

EXPORT_WEAK CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p)
{
	if (!p || p->ctx != FAKE_CTX)
		return CUPTI_ERROR_INVALID_CONTEXT;
	if (eperm("enable"))
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	struct CUpti_RangeProfiler_Object *o = calloc(1, sizeof(*o));
	if (!o)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	o->ctx = p->ctx;
	pthread_mutex_lock(&mu);
	int i = 0;
	while (i < MAX_OBJS && objs[i])
		i++;
	if (i < MAX_OBJS)
		objs[i] = o;
	pthread_mutex_unlock(&mu);
	if (i == MAX_OBJS) {
		free(o);
		return CUPTI_ERROR_OUT_OF_MEMORY;
	}
	p->pRangeProfilerObject = o;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p)
{
	CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&mu);
	for (int i = 0; p && i < MAX_OBJS; i++)
		if (objs[i] && objs[i] == p->pRangeProfilerObject) {
			free(objs[i]);
			objs[i] = NULL;
			r = CUPTI_SUCCESS;
		}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p)
{
	if (!p || !p->numMetrics || !p->maxNumOfRanges || p->maxNumRangeTreeNodes < p->maxNumOfRanges)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < p->numMetrics; i++)
		if (metric_full(p->pMetricNames[i]) < 0)
			return CUPTI_ERROR_INVALID_METRIC_NAME;
	p->counterDataSize = 1024 + p->maxNumOfRanges * 64;
	return CUPTI_SUCCESS;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p)
{
	if (!p || !p->pCounterData || p->counterDataSize < 1024)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&mu);
	struct image *im = image_of(p->pCounterData, 1);
	if (im) {
		im->n = 0;
		im->dropped = 0;
	}
	pthread_mutex_unlock(&mu);
	memset(p->pCounterData, 0, 64);
	return im ? CUPTI_SUCCESS : CUPTI_ERROR_OUT_OF_MEMORY;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct CUpti_RangeProfiler_Object *o = p ? p->pRangeProfilerObject : NULL;
	if (!live_obj(o) || !p->pConfig || p->configSize != CONFIG_SIZE || !image_of(p->pCounterDataImage, 0) ||
	    !p->maxRangesPerPass) {
		r = CUPTI_ERROR_INVALID_PARAMETER;
	} else if (o->started) {
		logf_("error set config while started\n");
		r = CUPTI_ERROR_INVALID_OPERATION;
	} else {
		o->configured = 1;
		o->user = p->range == CUPTI_UserRange;
		o->replay = (int)p->replayMode;
		o->maxr = p->maxRangesPerPass;
		o->image = p->pCounterDataImage;
		logf_("config %s %s\n", o->user ? "user" : "auto", o->replay == CUPTI_KernelReplay ? "kernel" : "user");
	}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct CUpti_RangeProfiler_Object *o = p ? p->pRangeProfilerObject : NULL;
	if (!live_obj(o) || !o->configured || o->started)
		r = CUPTI_ERROR_INVALID_OPERATION;
	else if (eperm("start"))
		r = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	else {
		o->started = 1;
		o->depth = 0;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct CUpti_RangeProfiler_Object *o = p ? p->pRangeProfilerObject : NULL;
	if (!live_obj(o) || !o->started) {
		r = CUPTI_ERROR_INVALID_OPERATION;
	} else if (o->depth) {
		logf_("error stop with %d ranges pushed\n", o->depth);
		r = CUPTI_ERROR_INVALID_OPERATION;
	} else {
		o->started = 0;
		o->configured = 0; /* the next start needs a configuration again */
		p->passIndex = 0;
		p->targetNestingLevel = 1;
		p->isAllPassSubmitted = 1;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct CUpti_RangeProfiler_Object *o = p ? p->pRangeProfilerObject : NULL;
	struct image *im = live_obj(o) ? image_of(o->image, 0) : NULL;
	if (!im || !o->started || !o->user || !p->pRangeName || o->depth >= MAX_STACK) {
		logf_("error push\n");
		r = CUPTI_ERROR_INVALID_OPERATION;
	} else {
		o->stack[o->depth++] = image_add(im, p->pRangeName, o->maxr, 1);
	}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct CUpti_RangeProfiler_Object *o = p ? p->pRangeProfilerObject : NULL;
	if (!live_obj(o) || !o->started || !o->user || o->depth <= 0) {
		logf_("error pop\n");
		r = CUPTI_ERROR_INVALID_OPERATION;
	} else {
		o->depth--;
	}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct CUpti_RangeProfiler_Object *o = p ? p->pRangeProfilerObject : NULL;
	struct image *im = live_obj(o) ? image_of(o->image, 0) : NULL;
	if (!im || o->started) {
		r = CUPTI_ERROR_INVALID_OPERATION;
	} else {
		p->numOfRangeDropped = im->dropped;
		logf_("decode %zu %zu\n", im->n, im->dropped);
	}
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct image *im = p ? image_of(p->pCounterDataImage, 0) : NULL;
	if (!im)
		r = CUPTI_ERROR_INVALID_PARAMETER;
	else
		p->numTotalRanges = im->n;
	pthread_mutex_unlock(&mu);
	return r;
}

EXPORT_WEAK CUptiResult cuptiRangeProfilerCounterDataGetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params *p)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&mu);
	struct image *im = p ? image_of(p->pCounterDataImage, 0) : NULL;
	if (!im || p->rangeIndex >= im->n)
		r = CUPTI_ERROR_INVALID_PARAMETER;
	else
		p->rangeName = im->r[p->rangeIndex].name;
	pthread_mutex_unlock(&mu);
	return r;
}
