/*
 * Range metrics (see rmetrics.h): the CUPTI Range Profiler driven from the
 * tap's launch callbacks and range push/pop, feeding core/rmagg.
 *
 * Per-kernel mode: CUPTI auto range, every launch is one CUPTI range; the
 * launch's kernel name, grid, block, stream and innermost range are queued
 * at its launch callback, and the i-th decoded CUPTI range is the i-th
 * queued launch (checked by name when the counts differ).  Launches are
 * serialised by our lock from the launch's enter to its exit callback, so
 * the order is exact with several threads.  One-pass lists use user replay,
 * which with one pass replays nothing (half the cost of kernel replay);
 * lists of several passes use kernel replay (CUPTI saves and restores memory
 * and replays the kernel inside its launch).  Kernel activity records are
 * off while kernels are profiled one by one: CUPTI's kernel tracing adds
 * instructions to every kernel that the counters see (8 per warp and 40 per
 * launch on an H100), and kernel replay breaks their timestamps.  A CUDA
 * graph launch gets a chunk of its own: its kernel nodes' ranges add up to
 * the launch's values.  Launches captured into a graph are not queued.
 *
 * Per-range mode: CUPTI user range, one pass, no replay.  The profiled
 * thread (the first that opens a range) cuts the program into stretches at
 * each of its range boundaries; each stretch is one uniquely named CUPTI
 * range ("s<k>": CUPTI merges ranges of equal names) and counts in the
 * ranges open around it, so nested ranges of any depth come out of one pass
 * and the gaps between ranges give the "(none)" row.
 *
 * No cap: the counter data image holds `cap` ranges; when it is full it is
 * decoded, evaluated, reinitialised and profiling starts again.  CUPTI's
 * dropped ranges are counted.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include "core/log.h"
#include "metrics/rmagg.h"
#include "metrics/rmcache.h"
#include "gpu/cuprof.h"
#include "gputap.h"
#include "tap/api.h"
#include "tap/cupti.h"
#include "tap/rmetrics.h"
#include "tap/tap.h"
#include "trace/rundir.h"

#define RM_MAX_CTX 16
/*
 * CUPTI ranges per counter data image (GPUTAP_METRICS_CHUNK).  Small: the
 * first cuptiRangeProfilerSetConfig + Start of a context costs about 1 ms
 * per range of the image on an H100 (2.2 s at 2,000, 0.18 s at 32), while
 * decoding a full chunk and starting the next costs a few ms.  Per kernel
 * a CUDA graph launch is one chunk with a range per kernel node, hence the
 * larger size there.
 */
#define RM_CAP_KERNEL 128
#define RM_CAP_RANGE 32
#define RM_MAX_IMAGE (256u << 20)


/* Ranges a launch counts in: the launching thread's innermost, or one per other thread with an open range. */
#define RM_OCC_MAX 8

struct pend {
	uint64_t launch;
	uint64_t corr; /* the launch callback's correlation id */
	int64_t occ[RM_OCC_MAX];
	int nocc;
	char *name;
	uint32_t grid[3], block[3], stream, device, tid;
	int graph;
};

/* What the Range Profiler's host side needs for one device. */
struct hostset {
	CUpti_Profiler_Host_Object *host;
	uint8_t *avail; /* the counter availability image: kept as long as the host object made with it */
	uint8_t *config;
	size_t config_size;
	int passes;
};

struct sess {
	CUcontext ctx;
	uint32_t device;
	int state; /* 0 new, 1 running, 2 done, -1 failed */
	struct hostset hs;
	CUpti_RangeProfiler_Object *obj;
	uint8_t *image;
	size_t image_size, cap;
	struct pend *pend; /* per kernel */
	size_t npend;
	int64_t *seg; /* per range: the occurrence each stretch counts in */
	size_t nseg;
	int seg_open;
	uint64_t chunks;
};

static struct {
	pthread_mutex_t mu;
	int wanted;     /* a list was given (GPUTAP_METRICS or gputap_metrics_enable) */
	int configured; /* CUPTI host checks done, mode chosen */
	int off;        /* gave up: the message was printed once */
	int requested;  /* GT_RM_* asked for */
	int records_off; /* kernel records stopped for exact counters (per kernel; per range chosen by auto) */
	int feed_ra;     /* no kernel records flow: range metrics count (and time) the ranges' kernels */
	int dur_metric;  /* index of gpu__time_duration.sum in the list, or -1 */
	int mode;       /* GT_RM_KERNEL / GT_RM_RANGE in effect */
	int debug;          /* GPUTAP_METRICS_DEBUG: print the first ranges of each chunk */
	int kcsv_tried;
	int replay;     /* CUPTI_KernelReplay or CUPTI_UserReplay (per kernel) */
	int passes;
	struct gt_rm_list list;
	const char *names[GT_RM_MAX_METRICS];
	char units[GT_RM_MAX_METRICS][64];
	char why[512];
	struct gt_cuprof P;
	int loaded;
	struct gt_rm_agg agg;
	int agg_ok;
	struct sess sess[RM_MAX_CTX];
	int nsess;
	struct sess *range_sess; /* per range: the profiled context */
	struct hostset pre; /* configure's host side, for the first session on pre_device */
	uint32_t pre_device;
	int cache_warned;
	int graph_warned;
	uint64_t range_tid;      /* per range: the profiled thread (0 = none yet) */
	int64_t range_top;       /* per range: innermost open occurrence of that thread */
	uint64_t launches;
	FILE *kcsv;
	char kcsv_tmp[4400];
	char dir[4200];
	int finished;
	uint64_t foreign_ctx_launches; /* per range: launches on other contexts, not measured */
	double t_stop, t_decode, t_eval, t_restart; /* ms spent in flush, for GPUTAP_LOG=info */
	double first_launch; /* enter time of the first profiled launch (ms), 0 once logged */
	int first_logged;
} R = {.mu = PTHREAD_MUTEX_INITIALIZER, .range_top = -1};

static char last_error[1024];

/* ---- per-thread range stack (occurrence indexes), as the tap's own: per domain pops ---- */

/*
 * Every thread's stack is also in rm_threads (under R.mu), so that a launch
 * on a thread with no open range can count in the ranges open on the others:
 * one attribution rule for kernels, counters and memory (docs/range-metrics.md).
 * Stacks change under R.mu only.
 */
struct rm_stack {
	int depth;
	int slot; /* in rm_threads */
	int64_t occ[GT_NEST_MAX];
	uint32_t dom[GT_NEST_MAX];
};
#define RM_MAX_THREADS 1024
static struct rm_stack *rm_threads[RM_MAX_THREADS];
static int rm_threads_hi; /* slots ever used: the end of the search */
static __thread struct rm_stack *rm_tls __attribute__((tls_model("initial-exec")));
static __thread int rm_holding __attribute__((tls_model("initial-exec")));
static __thread int64_t rm_launch_occ[RM_OCC_MAX] __attribute__((tls_model("initial-exec")));
static __thread int rm_launch_nocc __attribute__((tls_model("initial-exec")));
static __thread int rm_count_at_exit __attribute__((tls_model("initial-exec")));
static pthread_key_t rm_key;
static pthread_once_t rm_key_once = PTHREAD_ONCE_INIT;

static void rm_stack_gone(void *p)
{
	struct rm_stack *st = p;
	pthread_mutex_lock(&R.mu);
	if (st->slot >= 0 && rm_threads[st->slot] == st)
		rm_threads[st->slot] = NULL;
	pthread_mutex_unlock(&R.mu);
	free(st);
}

static void rm_key_make(void)
{
	pthread_key_create(&rm_key, rm_stack_gone);
}

/* This thread's stack, made and registered on first use.  Lock held. */
static struct rm_stack *stack_of_thread(void)
{
	if (!rm_tls) {
		pthread_once(&rm_key_once, rm_key_make);
		rm_tls = calloc(1, sizeof(*rm_tls));
		if (!rm_tls)
			return NULL;
		rm_tls->slot = -1;
		for (int i = 0; i < RM_MAX_THREADS; i++)
			if (!rm_threads[i]) {
				rm_threads[i] = rm_tls;
				rm_tls->slot = i;
				if (i + 1 > rm_threads_hi)
					rm_threads_hi = i + 1;
				break;
			}
		pthread_setspecific(rm_key, rm_tls);
	}
	return rm_tls;
}

static int64_t innermost(const struct rm_stack *st)
{
	if (!st || st->depth <= 0)
		return -1;
	int d = st->depth > GT_NEST_MAX ? GT_NEST_MAX : st->depth;
	return st->occ[d - 1];
}

/*
 * The ranges a launch on this thread counts in: its innermost open range, or,
 * on a thread with none (PyTorch's autograd thread), the innermost range open
 * on each other thread at this moment.  0 = outside every range.  Lock held.
 */
static int launch_ranges(int64_t *out)
{
	int64_t mine = innermost(rm_tls);
	if (mine >= 0) {
		out[0] = mine;
		return 1;
	}
	int n = 0;
	for (int i = 0; i < rm_threads_hi && n < RM_OCC_MAX; i++) {
		const struct rm_stack *st = rm_threads[i];
		int64_t o = st && st != rm_tls ? innermost(st) : -1;
		if (o >= 0)
			out[n++] = o;
	}
	return n;
}

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint32_t my_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* ---- messages ---- */

static void set_error(const char *msg)
{
	snprintf(last_error, sizeof(last_error), "%s", msg);
	gt_api_set_error("%s", msg); /* what gputap_last_error() says */
}

/* Give up range metrics for the rest of the process: one warning, the program runs on. */
static void turn_off(const char *msg)
{
	set_error(msg);
	if (!R.off)
		gt_warn("range metrics: %s", msg);
	R.off = 1;
	atomic_store(&gt_tap.rm_active, 0);
	if (R.records_off) { /* nothing measures counters any more: the kernel trace goes on */
		R.records_off = 0;
		gt_cupti_kernel_records(1);
	}
}

static const char *res(CUptiResult r)
{
	return gt_cuprof_result(&R.P, r);
}

/* ---- configuration (host side: no context needed) ---- */

static int load_cupti(char *err, size_t len)
{
	if (R.loaded)
		return 0;
	int rc = gt_cuprof_load(&R.P, gt_real_dlsym, err, len);
	if (rc == 0)
		R.loaded = 1;
	return rc;
}

static int gt_from_cuprof(int rc)
{
	switch (rc) {
	case GT_CUPROF_ENOGPU: return GPUTAP_ENOGPU;
	case GT_CUPROF_EPERM: return GPUTAP_EPERM;
	case GT_CUPROF_EINVAL: return GPUTAP_EINVAL;
	default: return rc < 0 ? GPUTAP_EFAIL : 0;
	}
}

static void hostset_free(struct hostset *h)
{
	gt_cuprof_host_free(&R.P, h->host);
	free(h->avail);
	free(h->config);
	memset(h, 0, sizeof(*h));
}

static int cache_on(void)
{
	const char *v = getenv("GPUTAP_METRICS_CACHE");
	return !v || !(strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "no") == 0);
}

/*
 * The host side for device dev: chip, counter availability (with a context),
 * host object with the list added (evaluating needs it), and the config
 * image, from the cache when it holds one for this chip, CUPTI, list and
 * availability.  Lock held.
 */
static int host_setup(CUcontext ctx, uint32_t dev, struct hostset *h, char *err, size_t len)
{
	memset(h, 0, sizeof(*h));
	double t0 = mono_ms();
	const char *chip = NULL;
	int rc = gt_cuprof_chip(&R.P, (int)dev, &chip, err, len);
	if (rc < 0)
		return rc;
	double t1 = mono_ms();
	size_t alen = 0;
	if (ctx) {
		rc = gt_cuprof_availability(&R.P, ctx, &h->avail, &alen, err, len);
		if (rc < 0)
			return rc;
	}
	double t2 = mono_ms();
	rc = gt_cuprof_host(&R.P, chip, h->avail, &h->host, err, len);
	if (rc < 0) {
		hostset_free(h);
		return rc;
	}
	double t3 = mono_ms();
	char dir[4096], why[4400];
	uint8_t *key = NULL;
	size_t klen = 0;
	int cached = 0;
	if (cache_on() && gt_rm_cache_dir(dir, sizeof(dir)) == 0)
		klen = gt_rm_cache_key(chip, R.P.version, R.names, R.list.n, h->avail, alen, &key);
	if (klen) {
		int got = gt_rm_cache_load(dir, key, klen, &h->config, &h->config_size, &h->passes, why, sizeof(why));
		if (got < 0 && !R.cache_warned) {
			R.cache_warned = 1;
			gt_warn("range metrics: config image cache ignored (%s); making the image again", why);
		}
		cached = got == 1;
	}
	double ta = mono_ms();
	if (cached) {
		rc = gt_cuprof_add_metrics(&R.P, h->host, R.names, R.list.n, err, len);
		if (rc < 0) {
			free(key);
			hostset_free(h);
			return rc;
		}
	} else {
		rc = gt_cuprof_config(&R.P, h->host, R.names, R.list.n, &h->config, &h->config_size, &h->passes, err,
				      len);
		if (rc < 0) {
			free(key);
			hostset_free(h);
			return rc;
		}
		if (klen && gt_rm_cache_store(dir, key, klen, h->config, h->config_size, h->passes, why, sizeof(why)) < 0)
			gt_info("range metrics: config image not cached: %s", why);
	}
	free(key);
	double t4 = mono_ms();
	gt_info("range metrics: device %u host set-up %.1f ms (profiler init and chip %.1f, counter availability %.1f, "
		"host object %.1f, list and config image %.1f%s%.1f)",
		dev, t4 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3,
		cached ? ", the image from the cache, the list added in " : ", made and stored; cache look-up ", cached ? t4 - ta : ta - t3);
	return 0;
}

/*
 * Validate the list on the chip of ctx's device (device 0 without one), count
 * passes, find units, choose the mode.  With a context the host object and
 * config image are made the way a session needs them (with the counter
 * availability image) and kept for the first session on that device: the
 * host set-up, the costly part, is done once.  Lock held.
 */
static int configure(CUcontext ctx, char *err, size_t len)
{
	if (R.configured)
		return 0;
	int rc = load_cupti(err, len);
	if (rc < 0)
		return gt_from_cuprof(rc);
	uint32_t dev = 0;
	if (ctx && R.P.cuptiGetDeviceId(ctx, &dev) != CUPTI_SUCCESS) {
		dev = 0;
		ctx = NULL;
	}
	struct hostset hs;
	rc = host_setup(ctx, dev, &hs, err, len);
	if (rc < 0)
		return gt_from_cuprof(rc);
	for (int i = 0; i < R.list.n; i++)
		gt_cuprof_unit(&R.P, hs.host, R.names[i], R.units[i], sizeof(R.units[i]));
	int passes = hs.passes;
	if (ctx) {
		R.pre = hs;
		R.pre_device = dev;
	} else {
		hostset_free(&hs);
	}
	R.passes = passes;
	int mode = gt_rm_choose_mode(R.requested, passes, &R.list, R.why, sizeof(R.why));
	if (mode < 0) {
		snprintf(err, len, "%s", R.why);
		return GPUTAP_EINVAL;
	}
	R.mode = mode;
	/* per kernel: one pass needs no replay; several need kernel replay (it restores memory) */
	R.replay = gt_rm_kernel_replay(passes, getenv("GPUTAP_METRICS_REPLAY")) ? CUPTI_KernelReplay : CUPTI_UserReplay;
	const char *units[GT_RM_MAX_METRICS];
	for (int i = 0; i < R.list.n; i++)
		units[i] = R.units[i];
	if (!R.agg_ok) {
		if (gt_rm_agg_init(&R.agg, mode, R.list.n, R.names, units) < 0) {
			snprintf(err, len, "out of memory");
			return GPUTAP_EFAIL;
		}
		R.agg_ok = 1;
	} else if (gt_rm_agg_set_mode(&R.agg, mode, units) < 0) { /* ranges came before CUDA did */
		snprintf(err, len, "out of memory");
		return GPUTAP_EFAIL;
	}
	/*
	 * CUPTI's kernel tracing adds instructions to every kernel (8 per warp and 40 per launch on
	 * an H100) that the counters would count.  So the kernel records stop while counters are
	 * measured, and the values are exact; a user who named both per-range mode and the kernel
	 * trace (GPUTAP_METRICS_KERNEL_TRACE=1, set by `gputap run`) keeps both, and every value says
	 * it is not exact.  Without kernel records the ranges' kernels are counted (and, per kernel, timed by
	 * gpu__time_duration.sum) from here.
	 */
	int ktrace = (gt_tap.trace & GT_TR_KERNEL) != 0;
	const char *keep = getenv("GPUTAP_METRICS_KERNEL_TRACE"); /* `gputap run` sets it when both were named */
	R.records_off = ktrace && (mode == GT_RM_KERNEL || !keep || strcmp(keep, "1") != 0);
	R.feed_ra = !ktrace || R.records_off;
	R.dur_metric = -1;
	for (int i = 0; i < R.list.n; i++)
		if (strcmp(R.names[i], "gpu__time_duration.sum") == 0)
			R.dur_metric = i;
	R.agg.inexact = ktrace && !R.records_off
				? "measured per range with the kernel trace on: CUPTI's kernel tracing adds "
				  "instructions to every kernel (on an H100 8 per warp and 40 per launch), which these "
				  "values include; --metrics-mode auto or kernel measures with kernel records off"
				: NULL;
	R.configured = 1;
	gt_info("range metrics: %s%s, %d metric%s in %d pass%s (%s); CUPTI %u", gt_rm_mode_name(mode),
		mode != GT_RM_KERNEL ? "" : R.replay == CUPTI_KernelReplay ? " (kernel replay)" : " (one pass, no replay)",
		R.list.n, R.list.n == 1 ? "" : "s", passes, passes == 1 ? "" : "es", R.why, R.P.version);
	if (R.records_off)
		gt_info("range metrics: kernel records are not kept (CUPTI's kernel tracing adds instructions the "
			"counters would count%s)%s",
			mode == GT_RM_KERNEL && R.replay == CUPTI_KernelReplay ? ", and kernel replay breaks their timestamps"
										: "",
			mode == GT_RM_KERNEL ? "; kernel_metrics.csv has each kernel's gpu__time_duration.sum" : "");
	else if (R.agg.inexact)
		gt_warn("range metrics: values are not exact: %s", R.agg.inexact);
	return 0;
}

/* ---- sessions (one per context) ---- */

static void sess_release(struct sess *s)
{
	if (s->obj) {
		CUpti_RangeProfiler_Disable_Params dp = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE, NULL, s->obj};
		R.P.cuptiRangeProfilerDisable(&dp);
		s->obj = NULL;
	}
	hostset_free(&s->hs);
	free(s->image);
	for (size_t i = 0; i < s->npend; i++)
		free(s->pend[i].name);
	free(s->pend);
	free(s->seg);
	s->image = NULL;
	s->pend = NULL;
	s->seg = NULL;
	s->npend = s->nseg = 0;
}

static void sess_fail(struct sess *s, const char *what, CUptiResult r)
{
	char msg[512];
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		snprintf(msg, sizeof(msg), "%s", gt_cuprof_perm_help());
	else
		snprintf(msg, sizeof(msg), "%s failed on device %u: %s; range metrics of this context stop here", what,
			 s->device, res(r));
	s->state = -1;
	sess_release(s);
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		turn_off(msg);
	else {
		set_error(msg);
		gt_warn("range metrics: %s", msg);
	}
}

static CUptiResult set_config_and_start(struct sess *s)
{
	CUpti_RangeProfiler_SetConfig_Params sc;
	memset(&sc, 0, sizeof(sc));
	sc.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
	sc.pRangeProfilerObject = s->obj;
	sc.configSize = s->hs.config_size;
	sc.pConfig = s->hs.config;
	sc.counterDataImageSize = s->image_size;
	sc.pCounterDataImage = s->image;
	sc.range = R.mode == GT_RM_KERNEL ? CUPTI_AutoRange : CUPTI_UserRange;
	sc.replayMode = R.mode == GT_RM_KERNEL ? (CUpti_ProfilerReplayMode)R.replay : CUPTI_UserReplay;
	sc.maxRangesPerPass = s->cap;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	CUptiResult r = R.P.cuptiRangeProfilerSetConfig(&sc);
	if (r != CUPTI_SUCCESS)
		return r;
	CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE, NULL, s->obj};
	return R.P.cuptiRangeProfilerStart(&st);
}

static CUptiResult init_image(struct sess *s)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip;
	memset(&ip, 0, sizeof(ip));
	ip.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
	ip.pRangeProfilerObject = s->obj;
	ip.counterDataSize = s->image_size;
	ip.pCounterData = s->image;
	return R.P.cuptiRangeProfilerCounterDataImageInitialize(&ip);
}

static void open_segment(struct sess *s);
static void open_kernel_csv(void);

/* Start profiling context s->ctx (current on this thread).  Lock held. */
static void sess_start(struct sess *s)
{
	char err[512];
	double t0 = mono_ms();
	CUptiResult r = R.P.cuptiGetDeviceId(s->ctx, &s->device);
	if (r != CUPTI_SUCCESS)
		s->device = 0;
	int rc = 0;
	if (R.pre.host && R.pre_device == s->device) { /* made by configure for this device */
		s->hs = R.pre;
		memset(&R.pre, 0, sizeof(R.pre));
	} else {
		rc = host_setup(s->ctx, s->device, &s->hs, err, sizeof(err));
	}
	int passes = s->hs.passes;
	if (rc < 0) {
		s->state = -1;
		sess_release(s);
		if (rc == GT_CUPROF_EPERM)
			turn_off(err);
		else {
			set_error(err);
			gt_warn("range metrics: device %u: %s; its kernels are not measured", s->device, err);
		}
		return;
	}
	if (R.mode == GT_RM_RANGE && passes > 1) {
		s->state = -1;
		sess_release(s);
		turn_off("per-range mode needs a one-pass list on every device");
		return;
	}
	double t1 = mono_ms();
	CUpti_RangeProfiler_Enable_Params ep = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE, NULL, s->ctx, NULL};
	r = R.P.cuptiRangeProfilerEnable(&ep);
	if (r != CUPTI_SUCCESS) {
		sess_fail(s, "cuptiRangeProfilerEnable", r);
		return;
	}
	s->obj = ep.pRangeProfilerObject;
	/* the counter data image: `cap` ranges, smaller if that would be huge */
	const char *ck = getenv("GPUTAP_METRICS_CHUNK");
	if (gt_rm_parse_chunk(ck, R.mode == GT_RM_KERNEL ? RM_CAP_KERNEL : RM_CAP_RANGE, &s->cap) < 0)
		gt_warn("GPUTAP_METRICS_CHUNK=%s is not a number of ranges from 1 to 100000; using %zu", ck, s->cap);
	for (;;) {
		CUpti_RangeProfiler_GetCounterDataSize_Params gp;
		memset(&gp, 0, sizeof(gp));
		gp.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
		gp.pRangeProfilerObject = s->obj;
		gp.pMetricNames = R.names;
		gp.numMetrics = (size_t)R.list.n;
		gp.maxNumOfRanges = s->cap;
		gp.maxNumRangeTreeNodes = (uint32_t)s->cap;
		r = R.P.cuptiRangeProfilerGetCounterDataSize(&gp);
		if (r != CUPTI_SUCCESS) {
			sess_fail(s, "cuptiRangeProfilerGetCounterDataSize", r);
			return;
		}
		if (gp.counterDataSize > RM_MAX_IMAGE && s->cap > 64) {
			s->cap /= 2;
			continue;
		}
		s->image_size = gp.counterDataSize;
		break;
	}
	s->image = malloc(s->image_size);
	if (R.mode == GT_RM_KERNEL)
		s->pend = calloc(s->cap, sizeof(*s->pend));
	else
		s->seg = calloc(s->cap, sizeof(*s->seg));
	if (!s->image || (!s->pend && !s->seg)) {
		s->state = -1;
		sess_release(s);
		gt_warn("range metrics: out of memory for the counter data of device %u", s->device);
		return;
	}
	double t2 = mono_ms();
	r = init_image(s);
	double t3 = mono_ms();
	if (r == CUPTI_SUCCESS)
		r = set_config_and_start(s);
	if (r != CUPTI_SUCCESS) {
		sess_fail(s, "starting the range profiler", r);
		return;
	}
	gt_info("range metrics: device %u session start %.1f ms (host set-up %.1f, enable and counter data size "
		"%.1f, image %.1f, set config and start %.1f)",
		s->device, mono_ms() - t0, t1 - t0, t2 - t1, t3 - t2, mono_ms() - t3);
	s->state = 1;
	if (R.records_off) {
		static int noted;
		gt_cupti_kernel_records(0);
		if (!noted && (gt_tap.trace & GT_TR_KERNEL)) { /* the trace says why it has no kernels */
			noted = 1;
			gt_tap_note(GT_NOTE_KERNELS_FOR_METRICS, 0, 0);
		}
	}
	gt_debug("range metrics: profiling device %u, %zu ranges per chunk (%zu KiB)", s->device, s->cap,
		 s->image_size >> 10);
	if (R.mode == GT_RM_RANGE) {
		/* CUPTI's user ranges are pushed and popped on one thread: the one that starts the session */
		R.range_sess = s;
		R.range_tid = my_tid();
		R.range_top = innermost(rm_tls);
		open_segment(s);
	}
}

static struct sess *sess_find(CUcontext ctx, int create)
{
	for (int i = 0; i < R.nsess; i++)
		if (R.sess[i].ctx == ctx)
			return &R.sess[i];
	if (!create || !ctx || R.nsess == RM_MAX_CTX)
		return NULL;
	if (R.mode == GT_RM_RANGE && R.range_sess)
		return NULL; /* per range: one context is profiled */
	struct sess *s = &R.sess[R.nsess++];
	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	sess_start(s);
	return s;
}

/* ---- decoding a chunk ---- */

static void kernel_row(const struct pend *p, const double *v)
{
	if (!R.kcsv)
		return;
	struct gt_rm_kinfo k;
	memset(&k, 0, sizeof(k));
	k.launch = p->launch;
	k.name = p->name;
	k.range = gt_rm_agg_path(&R.agg, p->nocc ? p->occ[0] : -1);
	memcpy(k.grid, p->grid, sizeof(k.grid));
	memcpy(k.block, p->block, sizeof(k.block));
	k.stream = p->stream;
	k.device = p->device;
	k.tid = p->tid;
	gt_rm_kernel_csv_row(&R.agg, &k, v, R.kcsv);
}

/* Kernel records off: the per-range results (gputap_results_json) learn of a kernel of launch
 * `corr` here, timed by its values `v` (NULL: not measured). */
static void feed_ra(uint64_t corr, const double *v)
{
	if (!R.feed_ra)
		return;
	double ns = v && R.dur_metric >= 0 && isfinite(v[R.dur_metric]) ? v[R.dur_metric] : -1;
	gt_api_on_kernel_counted(corr, ns);
}

static CUptiResult evaluate(struct sess *s, size_t range, double *out)
{
	CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;
	memset(&ev, 0, sizeof(ev));
	ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
	ev.pHostObject = s->hs.host;
	ev.pCounterDataImage = s->image;
	ev.counterDataImageSize = s->image_size;
	ev.rangeIndex = range;
	ev.ppMetricNames = R.names;
	ev.numMetrics = (size_t)R.list.n;
	ev.pMetricValues = out;
	return R.P.cuptiProfilerHostEvaluateToGpuValues(&ev);
}

/* ---- flush, phase by phase ---- */

/* One chunk's values as CUPTI decoded them. */
struct chunk {
	size_t nr;      /* ranges decoded */
	size_t dropped; /* ranges CUPTI dropped (past the chunk's capacity) */
	int nm;         /* metrics per range */
	double *vals;   /* nr rows of nm values, NAN where a range could not be evaluated */
	char **names;   /* nr range names ("a/b/s3"), NULL where unknown */
	double *nanrow; /* nm NANs: the row of a launch without a range */
};

/* The open stretch closed, the profiler stopped and its data decoded.  0, or -1: the session failed
 * (sess_fail said why).  *t_decoded: when the decode ended (ms). */
static int stop_and_decode(struct sess *s, size_t *dropped, double *t_decoded)
{
	CUptiResult r;
	if (s->seg_open) {
		CUpti_RangeProfiler_PopRange_Params pp = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE, NULL, s->obj};
		R.P.cuptiRangeProfilerPopRange(&pp);
		s->seg_open = 0;
	}
	CUpti_RangeProfiler_Stop_Params sp;
	memset(&sp, 0, sizeof(sp));
	sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
	sp.pRangeProfilerObject = s->obj;
	double f0 = mono_ms();
	r = R.P.cuptiRangeProfilerStop(&sp);
	double f1 = mono_ms();
	R.t_stop += f1 - f0;
	if (r != CUPTI_SUCCESS) {
		sess_fail(s, "cuptiRangeProfilerStop", r);
		return -1;
	}
	if (!sp.isAllPassSubmitted)
		gt_warn("range metrics: CUPTI wants more passes than were made (pass %zu); values may be incomplete",
			sp.passIndex);
	CUpti_RangeProfiler_DecodeData_Params dp;
	memset(&dp, 0, sizeof(dp));
	dp.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
	dp.pRangeProfilerObject = s->obj;
	r = R.P.cuptiRangeProfilerDecodeData(&dp);
	double f2 = mono_ms();
	R.t_decode += f2 - f1;
	if (r != CUPTI_SUCCESS) {
		sess_fail(s, "cuptiRangeProfilerDecodeData", r);
		return -1;
	}
	R.agg.dropped_ranges += dp.numOfRangeDropped;
	*dropped = dp.numOfRangeDropped;
	*t_decoded = f2;
	return 0;
}

/* Each decoded range's name and values (evaluated from the counter image); t0: when the decode
 * ended, for the evaluation's time. */
static void read_ranges(struct sess *s, struct chunk *c, double t0)
{
	CUpti_RangeProfiler_GetCounterDataInfo_Params ip;
	memset(&ip, 0, sizeof(ip));
	ip.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
	ip.pCounterDataImage = s->image;
	ip.counterDataImageSize = s->image_size;
	CUptiResult r = R.P.cuptiRangeProfilerGetCounterDataInfo(&ip);
	size_t nr = r == CUPTI_SUCCESS ? ip.numTotalRanges : 0;
	int nm = R.list.n;
	double *vals = malloc((nr + 1) * (size_t)nm * sizeof(double));
	char **names = calloc(nr + 1, sizeof(char *));
	if (!vals || !names) {
		gt_warn("range metrics: out of memory decoding %zu ranges", nr);
		nr = 0;
	}
	for (size_t i = 0; i < nr; i++) {
		CUpti_RangeProfiler_CounterData_GetRangeInfo_Params gp;
		memset(&gp, 0, sizeof(gp));
		gp.structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE;
		gp.pCounterDataImage = s->image;
		gp.counterDataImageSize = s->image_size;
		gp.rangeIndex = i;
		gp.rangeDelimiter = "/";
		if (R.P.cuptiRangeProfilerCounterDataGetRangeInfo(&gp) == CUPTI_SUCCESS && gp.rangeName)
			names[i] = strdup(gp.rangeName);
		if (evaluate(s, i, &vals[i * (size_t)nm]) != CUPTI_SUCCESS)
			for (int m = 0; m < nm; m++)
				vals[i * (size_t)nm + (size_t)m] = NAN;
	}
	R.t_eval += mono_ms() - t0;
	if (R.debug)
		gt_warn("range metrics debug: chunk %llu: %zu ranges for %zu launches, %zu stretches, %zu dropped",
			(unsigned long long)s->chunks, nr, s->npend, s->nseg, c->dropped);
	if (R.debug)
		for (size_t i = 0; i < nr && i < 8; i++)
			gt_warn("range metrics debug: chunk %llu range %zu '%s' %s=%g", (unsigned long long)s->chunks, i,
				names[i] ? names[i] : "?", R.names[0], vals[i * (size_t)nm]);
	double *nanrow = malloc((size_t)nm * sizeof(double));
	if (nanrow)
		for (int m = 0; m < nm; m++)
			nanrow[m] = NAN;
	c->nr = nr;
	c->nm = nm;
	c->vals = vals;
	c->names = names;
	c->nanrow = nanrow;
}

static void chunk_free(struct chunk *c)
{
	for (size_t i = 0; c->names && i < c->nr; i++)
		free(c->names[i]);
	free(c->names);
	free(c->vals);
	free(c->nanrow);
}

/* Kernel mode, one graph launch: its nodes' values add up (metrics that do not add: only with one
 * node) into one row. */
static void graph_row(struct sess *s, const struct chunk *c)
{
	size_t nr = c->nr;
	int nm = c->nm;
	double *vals = c->vals;
	struct pend *p = &s->pend[0];
	double *v = vals ? vals : c->nanrow;
	/* nodes beyond the chunk's ranges were dropped: a partial sum would pass for the whole */
	size_t lost = c->dropped;
	/* the results count each kernel node, timed by its own value (before the sum overwrites row 0) */
	for (size_t i = 0; R.feed_ra && i < nr + lost; i++)
		feed_ra(p->corr, i < nr && vals ? &vals[i * (size_t)nm] : NULL);
	for (int m = 0; vals && m < nm; m++) {
		double t = 0;
		for (size_t i = 0; i < nr; i++)
			t += vals[i * (size_t)nm + (size_t)m];
		v[m] = nr == 0 || lost || (nr > 1 && !gt_rm_metric_additive(R.names[m])) ? NAN : t;
	}
	if (nr == 0 || lost)
		R.agg.unmeasured++;
	if (lost && !R.graph_warned) {
		R.graph_warned = 1;
		gt_warn("range metrics: a CUDA graph launch ran more kernels than a chunk holds (%zu ranges): "
			"its row has no values; set GPUTAP_METRICS_CHUNK above the graph's kernel count",
			s->cap);
	}
	for (size_t i = 1; i < nr + lost; i++)
		gt_rm_agg_kernel_set(&R.agg, p->occ, p->nocc); /* the launch counted one kernel, the graph held more */
	if (v)
		gt_rm_agg_sample_set(&R.agg, p->occ, p->nocc, v);
	char nm_[64];
	snprintf(nm_, sizeof(nm_), "(CUDA graph, %zu kernels)", nr + lost);
	free(p->name);
	p->name = strdup(nm_);
	kernel_row(p, v);
	free(p->name);
	s->npend = 0;
}

/* Kernel mode: each pending launch matched to its range by name and order, then counted and
 * written. */
static void kernel_rows(struct sess *s, const struct chunk *c)
{
	size_t nr = c->nr;
	const char **ln = calloc(s->npend + 1, sizeof(char *));
	int64_t *map = calloc(s->npend + 1, sizeof(int64_t));
	if (ln && map && (nr || !s->npend)) {
		for (size_t i = 0; i < s->npend; i++)
			ln[i] = s->pend[i].name;
		gt_rm_align(ln, s->npend, (const char *const *)c->names, nr, map);
	} else if (map) {
		for (size_t i = 0; i < s->npend; i++)
			map[i] = -1;
	}
	for (size_t i = 0; i < s->npend; i++) {
		const double *v = map && map[i] >= 0 ? &c->vals[(size_t)map[i] * (size_t)c->nm] : c->nanrow;
		if (!map || map[i] < 0)
			R.agg.unmeasured++;
		if (v)
			gt_rm_agg_sample_set(&R.agg, s->pend[i].occ, s->pend[i].nocc, v);
		feed_ra(s->pend[i].corr, v);
		kernel_row(&s->pend[i], v);
		free(s->pend[i].name);
	}
	s->npend = 0;
	free(ln);
	free(map);
}

/* Range mode: each range named "<...>/s<k>" is stretch k of the chunk. */
static void range_rows(struct sess *s, const struct chunk *c)
{
	for (size_t i = 0; i < c->nr; i++) {
		const char *n = c->names[i] ? strrchr(c->names[i], '/') : NULL;
		n = n ? n + 1 : c->names[i];
		char *end = NULL;
		unsigned long k = n && n[0] == 's' ? strtoul(n + 1, &end, 10) : (unsigned long)-1;
		if (!end || *end || k >= s->nseg)
			continue;
		gt_rm_agg_sample(&R.agg, s->seg[k], &c->vals[i * (size_t)c->nm]);
	}
	s->nseg = 0;
}

/* Stop, decode, evaluate, hand the values out; restart when `restart`.  Lock held. */
static void flush(struct sess *s, int restart)
{
	if (s->state != 1)
		return;
	int guard = gt_tls.guard;
	gt_tls.guard = 1; /* CUPTI's own driver calls are not the program's */
	struct chunk c = {0};
	double t_decoded;
	if (stop_and_decode(s, &c.dropped, &t_decoded) == 0) {
		read_ranges(s, &c, t_decoded);
		if (R.mode == GT_RM_KERNEL && !R.kcsv_tried) {
			R.kcsv_tried = 1;
			open_kernel_csv();
			if (R.kcsv)
				gt_rm_kernel_csv_header(&R.agg, R.kcsv);
		}
		if (R.mode == GT_RM_KERNEL && s->npend == 1 && s->pend[0].graph)
			graph_row(s, &c);
		else if (R.mode == GT_RM_KERNEL)
			kernel_rows(s, &c);
		else
			range_rows(s, &c);
		chunk_free(&c);
		s->chunks++;
		if (restart) {
			double f3 = mono_ms();
			CUptiResult r = init_image(s);
			if (r == CUPTI_SUCCESS)
				r = set_config_and_start(s);
			R.t_restart += mono_ms() - f3;
			if (r != CUPTI_SUCCESS)
				sess_fail(s, "restarting the range profiler", r);
		}
	}
	gt_tls.guard = guard;
}

/* Per range: a new stretch of the profiled context, counted in the profiled thread's innermost range. */
static void open_segment(struct sess *s)
{
	if (s->state != 1)
		return;
	int guard = gt_tls.guard;
	gt_tls.guard = 1;
	if (s->seg_open) {
		CUpti_RangeProfiler_PopRange_Params pp = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE, NULL, s->obj};
		R.P.cuptiRangeProfilerPopRange(&pp);
		s->seg_open = 0;
	}
	if (s->nseg >= s->cap)
		flush(s, 1);
	if (s->state == 1) {
		char name[32];
		snprintf(name, sizeof(name), "s%zu", s->nseg);
		CUpti_RangeProfiler_PushRange_Params pp = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE, NULL, s->obj,
							   name};
		CUptiResult r = R.P.cuptiRangeProfilerPushRange(&pp);
		if (r != CUPTI_SUCCESS) {
			sess_fail(s, "cuptiRangeProfilerPushRange", r);
		} else {
			s->seg[s->nseg++] = R.range_top;
			s->seg_open = 1;
		}
	}
	gt_tls.guard = guard;
}

/* ---- hooks ---- */

static CUcontext current_ctx(void)
{
	static CUresult(CUDAAPI * get)(CUcontext *);
	if (!get)
		*(void **)&get = gt_real_driver("cuCtxGetCurrent");
	CUcontext c = NULL;
	if (!get || get(&c) != CUDA_SUCCESS)
		return NULL;
	return c;
}

/* Per range: the profiled thread moved to another range. Lock held. */
static void range_boundary(void)
{
	struct sess *s = R.range_sess;
	if (s)
		open_segment(s);
}

/* A range opens on this thread.  Lock held. */
static void push_locked(const char *name, uint32_t len, uint32_t domain)
{
	struct rm_stack *st = stack_of_thread();
	if (!st)
		return;
	int64_t parent = innermost(st);
	int d = st->depth++;
	if (d >= GT_NEST_MAX)
		return;
	int64_t occ = -1;
	if (!R.agg_ok && !R.off) {
		/* ranges before CUDA starts: kept; the mode and units are set when it does */
		if (gt_rm_agg_init(&R.agg, GT_RM_KERNEL, R.list.n, R.names, NULL) == 0)
			R.agg_ok = 1;
	}
	if (R.agg_ok)
		occ = gt_rm_agg_open(&R.agg, parent, name, len);
	st->occ[d] = occ;
	st->dom[d] = domain;
	if (R.range_tid == my_tid()) {
		R.range_top = occ;
		if (R.configured && R.mode == GT_RM_RANGE && atomic_load(&gt_tap.rm_active))
			range_boundary();
	}
}

/* NCCL's own NVTX ranges (its domain, "NCCL": one per call it makes) are the library's, not the
 * program's: not ranges here (in range mode each would also cut the program's range at a profiler
 * boundary).  The kernels NCCL launches count in the program's ranges open around them. */
static int library_domain(uint32_t domain)
{
	static _Atomic uint32_t nccl; /* its id once seen */
	if (!domain)
		return 0;
	uint32_t known = atomic_load_explicit(&nccl, memory_order_relaxed);
	if (known)
		return domain == known;
	uint32_t len = 0;
	const char *name = gt_strtab_get(&gt_tap.strs, domain, &len);
	if (!name || len != 4 || memcmp(name, "NCCL", 4) != 0)
		return 0;
	atomic_store_explicit(&nccl, domain, memory_order_relaxed);
	return 1;
}

void gt_rm_push(uint32_t name_id, uint32_t domain)
{
	if (library_domain(domain))
		return;
	uint32_t len = 0;
	const char *name = gt_strtab_get(&gt_tap.strs, name_id, &len);
	if (!name) {
		name = "(unnamed)";
		len = 9;
	}
	pthread_mutex_lock(&R.mu);
	push_locked(name, len, domain);
	pthread_mutex_unlock(&R.mu);
}

void gt_rm_pop(uint32_t domain)
{
	if (library_domain(domain))
		return;
	pthread_mutex_lock(&R.mu);
	struct rm_stack *st = rm_tls;
	if (!st || st->depth <= 0)
		goto out;
	if (st->depth > GT_NEST_MAX) {
		st->depth--;
		goto out;
	}
	int d = st->depth - 1;
	while (d >= 0 && st->dom[d] != domain)
		d--;
	if (d < 0)
		goto out;
	int64_t occ = st->occ[d];
	memmove(&st->occ[d], &st->occ[d + 1], (size_t)(st->depth - 1 - d) * sizeof(st->occ[0]));
	memmove(&st->dom[d], &st->dom[d + 1], (size_t)(st->depth - 1 - d) * sizeof(st->dom[0]));
	st->depth--;
	if (R.agg_ok)
		gt_rm_agg_close(&R.agg, occ);
	if (R.range_tid && R.range_tid == my_tid()) {
		R.range_top = innermost(st);
		if (R.configured && R.mode == GT_RM_RANGE && atomic_load(&gt_tap.rm_active))
			range_boundary();
	}
out:
	pthread_mutex_unlock(&R.mu);
}

/*
 * Range metrics start while ranges are open (gputap_metrics_enable inside a
 * range, the Python package's init under `with nvtx.range(...)`): the calling
 * thread's open ranges, as the tap keeps them, open here too, in their order.
 * Lock held.
 */
static void adopt_open_ranges(void)
{
	struct gt_slot *sl = gt_tap_slot();
	if (!sl || (rm_tls && rm_tls->depth > 0))
		return;
	int depth = sl->depth < GT_NEST_MAX ? sl->depth : GT_NEST_MAX;
	for (int d = 0; d < depth; d++) {
		if (library_domain(sl->stack[d].domain_id))
			continue;
		uint32_t len = 0;
		const char *name = gt_strtab_get(&gt_tap.strs, sl->stack[d].name_id, &len);
		if (!name) {
			name = "(unnamed)";
			len = 9;
		}
		push_locked(name, len, sl->stack[d].domain_id);
	}
}

static int is_launch(CUpti_CallbackId id)
{
	switch (id) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
	case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return 1;
	default: return 0;
	}
}

static int is_ptsz(CUpti_CallbackId id)
{
	return id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
	       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz ||
	       id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

static int is_graph(CUpti_CallbackId id)
{
	return id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || id == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

/* Grid, block and stream of a launch, from its parameters (p may be NULL: the stream only). */
static CUstream launch_shape(CUpti_CallbackId id, const CUpti_CallbackData *cb, struct pend *p)
{
	struct pend scratch;
	if (!p)
		p = &scratch;
	CUstream stream = NULL;
	const void *fp = cb->functionParams;
	switch (id) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *a = fp;
		p->grid[0] = a->gridDimX, p->grid[1] = a->gridDimY, p->grid[2] = a->gridDimZ;
		p->block[0] = a->blockDimX, p->block[1] = a->blockDimY, p->block[2] = a->blockDimZ;
		stream = a->hStream;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *a = fp;
		if (a->config) {
			p->grid[0] = a->config->gridDimX, p->grid[1] = a->config->gridDimY, p->grid[2] = a->config->gridDimZ;
			p->block[0] = a->config->blockDimX, p->block[1] = a->config->blockDimY;
			p->block[2] = a->config->blockDimZ;
			stream = a->config->hStream;
		}
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *a = fp;
		p->grid[0] = a->gridDimX, p->grid[1] = a->gridDimY, p->grid[2] = a->gridDimZ;
		p->block[0] = a->blockDimX, p->block[1] = a->blockDimY, p->block[2] = a->blockDimZ;
		stream = a->hStream;
		break;
	}
	default: {
		const cuGraphLaunch_params *a = fp;
		stream = a->hStream;
		break;
	}
	}
	if (!stream && is_ptsz(id))
		stream = CU_STREAM_PER_THREAD;
	return stream;
}

static uint32_t stream_id(CUcontext ctx, CUstream stream, CUpti_CallbackId id)
{
	uint32_t sid = 0;
	if (R.P.cuptiGetStreamIdEx(ctx, stream == CU_STREAM_PER_THREAD ? NULL : stream, (uint8_t)is_ptsz(id), &sid) !=
	    CUPTI_SUCCESS)
		sid = 0;
	return sid;
}

/* A launch into a stream being captured only records a graph node: no kernel runs now. */
static int capturing(CUstream stream)
{
	static CUresult(CUDAAPI * fn)(CUstream, CUstreamCaptureStatus *);
	if (!fn)
		*(void **)&fn = gt_real_driver("cuStreamIsCapturing");
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	return fn && fn(stream, &cs) == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

static void on_launch(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
	if (cb->callbackSite == CUPTI_API_EXIT) {
		if (rm_count_at_exit) {
			/* per range, kernel records off: counted once launched (its range link is made by now) */
			rm_count_at_exit = 0;
			if (!cb->functionReturnValue || *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS)
				gt_api_on_kernel_counted(cb->correlationId, -1);
		}
		if (!rm_holding)
			return;
		struct sess *s = sess_find(cb->context, 0);
		CUresult rc = cb->functionReturnValue ? *(const CUresult *)cb->functionReturnValue : CUDA_SUCCESS;
		if (rc != CUDA_SUCCESS) {
			if (rm_holding == 2 && s && s->npend)
				free(s->pend[--s->npend].name); /* not launched: no range will come for it */
		} else {
			gt_rm_agg_kernel_set(&R.agg, rm_launch_occ, rm_launch_nocc);
			if (rm_holding == 1)
				R.agg.unmeasured++; /* its context is not profiled */
			if (rm_holding == 1 && R.feed_ra)
				gt_api_on_kernel_counted(cb->correlationId, -1);
		}
		rm_holding = 0;
		if (R.first_launch > 0 && !R.first_logged) {
			R.first_logged = 1;
			gt_info("range metrics: first launch %.1f ms (set-up included)", mono_ms() - R.first_launch);
		}
		pthread_mutex_unlock(&R.mu);
		return;
	}
	if (rm_holding)
		return;
	pthread_mutex_lock(&R.mu);
	if (!atomic_load(&gt_tap.rm_active)) {
		pthread_mutex_unlock(&R.mu);
		return;
	}
	int guard = gt_tls.guard;
	gt_tls.guard = 1;
	if (!R.first_logged && R.first_launch == 0)
		R.first_launch = mono_ms();
	if (!R.configured) {
		char err[512];
		int rc = configure(cb->context, err, sizeof(err));
		if (rc < 0) {
			turn_off(err);
			gt_tls.guard = guard;
			pthread_mutex_unlock(&R.mu);
			return;
		}
	}
	if (capturing(launch_shape(id, cb, NULL))) {
		gt_tls.guard = guard;
		pthread_mutex_unlock(&R.mu);
		return;
	}
	struct sess *s = sess_find(cb->context, 1);
	int64_t occ[RM_OCC_MAX];
	int nocc = launch_ranges(occ);
	R.launches++;
	if (R.mode == GT_RM_RANGE) {
		if (!s)
			R.foreign_ctx_launches++; /* another context: per range profiles one */
		else if (s->state != 1)
			R.agg.unmeasured++; /* its session failed */
		gt_rm_agg_kernel_set(&R.agg, occ, nocc);
		rm_count_at_exit = R.feed_ra;
		if (!R.first_logged) {
			R.first_logged = 1;
			gt_info("range metrics: first launch's set-up %.1f ms", mono_ms() - R.first_launch);
		}
		gt_tls.guard = guard;
		pthread_mutex_unlock(&R.mu);
		return;
	}
	int queued = 0;
	int graph = is_graph(id);
	if (s && s->state == 1) {
		/* a graph launch is a chunk of its own: CUPTI makes a range per kernel node */
		if (s->npend >= s->cap || (s->npend && (graph || s->pend[s->npend - 1].graph)))
			flush(s, 1);
		if (s->state == 1) {
			struct pend *p = &s->pend[s->npend++];
			memset(p, 0, sizeof(*p));
			p->launch = R.launches;
			p->corr = cb->correlationId;
			memcpy(p->occ, occ, sizeof(occ));
			p->nocc = nocc;
			p->tid = my_tid();
			p->device = s->device;
			p->graph = graph;
			p->name = strdup(graph ? "(CUDA graph)" : cb->symbolName ? cb->symbolName : "?");
			p->stream = stream_id(cb->context, launch_shape(id, cb, p), id);
			queued = 1;
		}
	}
	gt_tls.guard = guard;
	if (!atomic_load(&gt_tap.rm_active)) {
		/* turned off meanwhile (a start or restart refused): the exit callback will not come here */
		gt_rm_agg_kernel_set(&R.agg, occ, nocc);
		if (queued && s->npend)
			free(s->pend[--s->npend].name);
		pthread_mutex_unlock(&R.mu);
		return;
	}
	/* held until the exit callback: launches are profiled one at a time, in this order */
	memcpy(rm_launch_occ, occ, sizeof(occ));
	rm_launch_nocc = nocc;
	rm_holding = queued ? 2 : 1;
}

void gt_rm_callback(CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data)
{
	if (dom == CUPTI_CB_DOMAIN_DRIVER_API && is_launch(id)) {
		on_launch(id, data);
		return;
	}
	if (dom == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
		const CUpti_ResourceData *rd = data;
		pthread_mutex_lock(&R.mu);
		struct sess *s = sess_find(rd->context, 0);
		if (s && s->state == 1) {
			flush(s, 0);
			sess_release(s);
			s->state = 2;
		}
		if (s)
			s->ctx = NULL; /* a new context may get the same handle */
		if (s == R.range_sess)
			R.range_sess = NULL;
		pthread_mutex_unlock(&R.mu);
	}
}

int gt_rm_wanted(void)
{
	return R.wanted && !R.off;
}

int gt_rm_kernel_records_ok(void)
{
	return !(R.configured && R.records_off);
}

/* ---- set-up from the environment or from the program ---- */

static int take_list(const char *metrics, const char *mode, const char *what, char *err, size_t len)
{
	int m = gt_rm_parse_mode(mode);
	if (m < 0) {
		snprintf(err, len, "unknown range-metrics mode '%s': expected auto, kernel or range", mode);
		return GPUTAP_EINVAL;
	}
	struct gt_rm_list l;
	if (gt_rm_parse_list(metrics, what, &l, err, len) < 0)
		return GPUTAP_EINVAL;
	/* per kernel the kernel records are off: each kernel's GPU time comes from its counters */
	int per_kernel = m == GT_RM_KERNEL, has_dur = 0;
	for (int i = 0; i < l.n; i++) {
		has_dur |= strcmp(l.name[i], "gpu__time_duration.sum") == 0;
		per_kernel |= m == GT_RM_AUTO && !gt_rm_metric_additive(l.name[i]);
	}
	if (per_kernel && !has_dur && l.n < GT_RM_MAX_METRICS)
		snprintf(l.name[l.n++], sizeof(l.name[0]), "%s", "gpu__time_duration.sum");
	R.list = l;
	for (int i = 0; i < l.n; i++)
		R.names[i] = R.list.name[i];
	R.requested = m;
	R.debug = getenv("GPUTAP_METRICS_DEBUG") != NULL;
	return 0;
}

static void open_kernel_csv(void)
{
	if (!gt_tap.cfg.out_dir || R.kcsv)
		return;
	snprintf(R.dir, sizeof(R.dir), "%s/%s", gt_tap.cfg.out_dir, gt_tap.proc);
	mkdir(R.dir, 0755); /* the tap made it already; harmless if so */
	snprintf(R.kcsv_tmp, sizeof(R.kcsv_tmp), "%s/.kernel_metrics.csv.%d.tmp", R.dir, (int)getpid());
	R.kcsv = fopen(R.kcsv_tmp, "we");
}

/* Contexts about to go away (and every launch: .launches). */
static const struct gt_cupti_id cupti_ids[] = {
	{CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING},
};

static const struct gt_cupti_client cupti_client = {
	.callback = gt_rm_callback,
	.off = ", range metrics are off",
	.setup = gt_rm_init_env,
	.wanted = gt_rm_wanted,
	.launches = 1,
	.ids = cupti_ids,
	.nids = sizeof(cupti_ids) / sizeof(cupti_ids[0]),
	.kernel_records_ok = gt_rm_kernel_records_ok,
	.handed_over = gt_rm_finish, /* range metrics so far are decoded and written */
};

void gt_rm_init_env(void)
{
	gt_cupti_register(GT_CUPTI_RMETRICS, &cupti_client); /* before anything turns gt_tap.rm_active on */
	const char *v = gt_tap.cfg.metrics;
	if (!v || R.wanted)
		return;
	char err[512];
	pthread_mutex_lock(&R.mu);
	if (take_list(v, gt_tap.cfg.metrics_mode, "GPUTAP_METRICS", err, sizeof(err)) < 0) {
		pthread_mutex_unlock(&R.mu);
		turn_off(err);
		return;
	}
	R.wanted = 1;
	atomic_store(&gt_tap.rm_active, 1);
	pthread_mutex_unlock(&R.mu);
}

GT_EXPORT int gputap_metrics_enable(const char *metrics, const char *mode)
{
	char err[512];
	gt_tap_init();
	gt_tap_touch();
	if (!atomic_load(&gt_tap.on)) {
		set_error("gputap is not recording in this process: call gputap_start() first (or run under gputap run)");
		return GPUTAP_EFAIL;
	}
	pthread_mutex_lock(&R.mu);
	if (R.configured || R.wanted) {
		pthread_mutex_unlock(&R.mu);
		set_error("range metrics are already on in this process (one list per process)");
		return GPUTAP_EFAIL;
	}
	int rc = take_list(metrics, mode, "gputap_metrics_enable", err, sizeof(err));
	if (rc == 0) {
		/* CUDA must be up to know the GPU: cuInit is idempotent and the program needs it anyway */
		CUresult(CUDAAPI * init)(unsigned) = NULL;
		*(void **)&init = gt_real_driver("cuInit");
		if (!init || init(0) != CUDA_SUCCESS) {
			snprintf(err, sizeof(err), "CUDA could not be initialised (no driver or no GPU)");
			rc = GPUTAP_ENOGPU;
		}
	}
	/* with a current context this checks the privilege too; without one that comes at the first launch */
	if (rc == 0)
		rc = configure(current_ctx(), err, sizeof(err));
	if (rc < 0) {
		R.configured = 0;
		pthread_mutex_unlock(&R.mu);
		set_error(err);
		return rc;
	}
	R.wanted = 1;
	atomic_store(&gt_tap.rm_active, 1);
	adopt_open_ranges();
	pthread_mutex_unlock(&R.mu);
	if (gt_cupti_attach(GT_CUPTI_RMETRICS) < 0) {
		atomic_store(&gt_tap.rm_active, 0);
		R.wanted = 0;
		set_error("CUPTI callbacks could not be enabled (another CUPTI client holds this process)");
		return GPUTAP_EBUSY;
	}
	set_error("");
	return 0;
}

const char *gt_rmetrics_last_error(void)
{
	return last_error;
}

/* Decode what every context measured so far (lock held). */
static void flush_all(int restart)
{
	for (int i = 0; i < R.nsess; i++)
		if (R.sess[i].state == 1) {
			flush(&R.sess[i], restart);
			if (restart && R.mode == GT_RM_RANGE && &R.sess[i] == R.range_sess)
				open_segment(&R.sess[i]);
		}
}

char *gt_rmetrics_results_json(void)
{
	pthread_mutex_lock(&R.mu);
	if (!R.wanted || !R.agg_ok) {
		pthread_mutex_unlock(&R.mu);
		return NULL;
	}
	if (!R.finished && current_ctx())
		flush_all(1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		gt_rm_agg_write_json(&R.agg,
				     R.mode == GT_RM_KERNEL ? (R.replay == CUPTI_KernelReplay ? "kernel" : "none") : "none",
				     f);
		if (fclose(f) != 0) {
			free(buf);
			buf = NULL;
		}
	}
	pthread_mutex_unlock(&R.mu);
	return buf;
}

static void write_file(const char *name, int json)
{
	char path[4400], tmp[4400];
	snprintf(path, sizeof(path), "%s/%s", R.dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d.tmp", R.dir, name, (int)getpid());
	FILE *f = fopen(tmp, "we");
	if (!f) {
		gt_warn("range metrics: cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	int rc = json ? gt_rm_agg_write_json(&R.agg, R.mode == GT_RM_KERNEL && R.replay == CUPTI_KernelReplay ? "kernel" : "none", f)
		      : gt_rm_agg_write_csv(&R.agg, f);
	if (json)
		fputc('\n', f);
	if (fclose(f) != 0 || rc < 0) {
		gt_warn("range metrics: cannot write %s", path);
		unlink(tmp);
		return;
	}
	if (rename(tmp, path) < 0)
		unlink(tmp);
}

/* End of the process (the tap's final flush), or CUPTI handed to another client. */
void gt_rm_finish(void)
{
	pthread_mutex_lock(&R.mu);
	if (R.finished || !R.wanted) {
		pthread_mutex_unlock(&R.mu);
		return;
	}
	R.finished = 1;
	atomic_store(&gt_tap.rm_active, 0);
	flush_all(0);
	gt_info("range metrics: %llu launches; stop %.1f ms, decode %.1f ms, evaluate %.1f ms, restart %.1f ms",
		(unsigned long long)R.launches, R.t_stop, R.t_decode, R.t_eval, R.t_restart);
	hostset_free(&R.pre); /* configured, never used */
	for (int i = 0; i < R.nsess; i++)
		if (R.sess[i].state == 1) {
			sess_release(&R.sess[i]);
			R.sess[i].state = 2;
		}
	/* turned off with nothing measured (counters refused at the start): the warning said why */
	if (R.agg_ok && R.configured && gt_tap.cfg.out_dir && !(R.off && !R.agg.samples)) {
		if (!R.dir[0])
			snprintf(R.dir, sizeof(R.dir), "%s/%s", gt_tap.cfg.out_dir, gt_tap.proc);
		write_file(GT_PROC_RANGE_METRICS, 0);
		write_file("range_metrics.json", 1);
		if (R.kcsv) {
			char path[4400];
			snprintf(path, sizeof(path), "%s/" GT_PROC_KERNEL_METRICS, R.dir);
			if (fclose(R.kcsv) == 0 && rename(R.kcsv_tmp, path) == 0)
				R.kcsv = NULL;
			else
				unlink(R.kcsv_tmp);
			R.kcsv = NULL;
		}
		if (R.agg.dropped_ranges || R.agg.unmeasured)
			gt_warn("range metrics: %llu CUPTI ranges dropped, %llu launches without values",
				(unsigned long long)R.agg.dropped_ranges, (unsigned long long)R.agg.unmeasured);
		if (R.mode == GT_RM_RANGE && R.foreign_ctx_launches)
			gt_warn("range metrics: %llu launches on other devices were counted, not measured (per-range "
				"mode profiles one context)",
				(unsigned long long)R.foreign_ctx_launches);
	} else if (R.kcsv) {
		fclose(R.kcsv);
		unlink(R.kcsv_tmp);
		R.kcsv = NULL;
	}
	pthread_mutex_unlock(&R.mu);
}
