/* gpu/cuprof.c — CUPTI Profiler Host and Range Profiler, loaded at run time.  See cuprof.h. */
#include "gpu/cuprof.h"

#include "gpu/probe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gt_cuprof_load(struct gt_cuprof *p, void *(*resolve)(void *, const char *), char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	if (!resolve)
		resolve = dlsym;
	p->lib = gt_cupti_open(p->path, sizeof(p->path)); /* the CUPTI the tap and gputap info find */
	if (!p->lib) {
		snprintf(err, errlen,
			 "CUPTI (libcupti.so.13 or .12) not found: range metrics need it (set CUDA_HOME to the toolkit "
			 "that has CUPTI)");
		return GT_CUPROF_ENOLIB;
	}
	const char *missing = NULL;
#define GT_CUPROF_LOAD(n)                                                                          \
	p->n = (__typeof__(&n))resolve(p->lib, #n);                                                \
	if (!p->n && !missing)                                                                     \
		missing = #n;
	GT_CUPROF_FNS(GT_CUPROF_LOAD)
#undef GT_CUPROF_LOAD
	if (p->cuptiGetVersion)
		p->cuptiGetVersion(&p->version);
	if (missing) {
		snprintf(err, errlen,
			 "the CUPTI library %s (API version %u) has no %s: range metrics need the Range Profiler of "
			 "CUDA 12.6 Update 2 or newer",
			 p->path, p->version, missing);
		return GT_CUPROF_ENOLIB;
	}
	return 0;
}

const char *gt_cuprof_result(const struct gt_cuprof *p, CUptiResult r)
{
	const char *s = NULL;
	if (p && p->cuptiGetResultString && p->cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "CUPTI error";
}

int gt_cuprof_code(CUptiResult r)
{
	switch (r) {
	case CUPTI_SUCCESS: return 0;
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: return GT_CUPROF_EPERM;
	case CUPTI_ERROR_INVALID_METRIC_NAME: return GT_CUPROF_EINVAL;
	case CUPTI_ERROR_INVALID_DEVICE: return GT_CUPROF_ENOGPU;
	default: return GT_CUPROF_EFAIL;
	}
}

const char *gt_cuprof_perm_help(void)
{
	return "GPU performance counters are restricted to administrators on this machine "
	       "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, NVreg_RestrictProfilingToAdminUsers=1): run as root or with "
	       "CAP_SYS_ADMIN (CAP_PERFMON on driver R565+), or set 'options nvidia "
	       "NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/ and reload the driver; range metrics are "
	       "off, the rest of the recording goes on";
}

static int fail(const struct gt_cuprof *p, CUptiResult r, const char *what, char *err, size_t errlen)
{
	int c = gt_cuprof_code(r);
	if (c == GT_CUPROF_EPERM)
		snprintf(err, errlen, "%s", gt_cuprof_perm_help());
	else
		snprintf(err, errlen, "%s failed: %s", what, gt_cuprof_result(p, r));
	return c ? c : GT_CUPROF_EFAIL;
}

int gt_cuprof_chip(struct gt_cuprof *p, int dev, const char **chip, char *err, size_t errlen)
{
	CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE, NULL};
	CUptiResult r = p->cuptiProfilerInitialize(&ip);
	if (r != CUPTI_SUCCESS)
		return fail(p, r, "cuptiProfilerInitialize", err, errlen);
	CUpti_Device_GetChipName_Params cp;
	memset(&cp, 0, sizeof(cp));
	cp.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
	cp.deviceIndex = (size_t)dev;
	r = p->cuptiDeviceGetChipName(&cp);
	if (r != CUPTI_SUCCESS)
		return fail(p, r, "cuptiDeviceGetChipName", err, errlen);
	*chip = cp.pChipName;
	return 0;
}

int gt_cuprof_host(struct gt_cuprof *p, const char *chip, const uint8_t *avail, CUpti_Profiler_Host_Object **host,
		   char *err, size_t errlen)
{
	CUpti_Profiler_Host_Initialize_Params hp;
	memset(&hp, 0, sizeof(hp));
	hp.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
	hp.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hp.pChipName = chip;
	hp.pCounterAvailabilityImage = avail;
	CUptiResult r = p->cuptiProfilerHostInitialize(&hp);
	if (r != CUPTI_SUCCESS)
		return fail(p, r, "cuptiProfilerHostInitialize", err, errlen);
	*host = hp.pHostObject;
	return 0;
}

void gt_cuprof_host_free(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host)
{
	if (!host)
		return;
	CUpti_Profiler_Host_Deinitialize_Params dp;
	memset(&dp, 0, sizeof(dp));
	dp.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
	dp.pHostObject = host;
	p->cuptiProfilerHostDeinitialize(&dp);
}

static CUptiResult add_metrics(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *const *names,
			       int n)
{
	CUpti_Profiler_Host_ConfigAddMetrics_Params ap;
	memset(&ap, 0, sizeof(ap));
	ap.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
	ap.pHostObject = host;
	const char *list[64];
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		list[i] = names[i];
	ap.ppMetricNames = list;
	ap.numMetrics = (size_t)n;
	return p->cuptiProfilerHostConfigAddMetrics(&ap);
}

int gt_cuprof_add_metrics(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *const *names, int n,
			  char *err, size_t errlen)
{
	CUptiResult r = add_metrics(p, host, names, n);
	if (r != CUPTI_SUCCESS) {
		/* which one: the first name the chip's metric properties do not know */
		for (int i = 0; i < n; i++) {
			CUpti_Profiler_Host_GetMetricProperties_Params mp;
			memset(&mp, 0, sizeof(mp));
			mp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
			mp.pHostObject = host;
			mp.pMetricName = names[i];
			if (p->cuptiProfilerHostGetMetricProperties(&mp) != CUPTI_SUCCESS) {
				snprintf(err, errlen,
					 "unknown metric '%s' for this GPU (%s); 'gputap info --metrics' lists the "
					 "metrics it has",
					 names[i], gt_cuprof_result(p, r));
				return GT_CUPROF_EINVAL;
			}
		}
		return fail(p, r, "cuptiProfilerHostConfigAddMetrics", err, errlen);
	}
	return 0;
}

int gt_cuprof_config(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *const *names, int n,
		     uint8_t **image, size_t *size, int *passes, char *err, size_t errlen)
{
	*image = NULL;
	int rc = gt_cuprof_add_metrics(p, host, names, n, err, errlen);
	if (rc < 0)
		return rc;
	CUptiResult r;
	CUpti_Profiler_Host_GetConfigImageSize_Params sp;
	memset(&sp, 0, sizeof(sp));
	sp.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
	sp.pHostObject = host;
	r = p->cuptiProfilerHostGetConfigImageSize(&sp);
	if (r != CUPTI_SUCCESS)
		return fail(p, r, "cuptiProfilerHostGetConfigImageSize", err, errlen);
	uint8_t *img = malloc(sp.configImageSize ? sp.configImageSize : 1);
	if (!img) {
		snprintf(err, errlen, "out of memory for the config image");
		return GT_CUPROF_EFAIL;
	}
	CUpti_Profiler_Host_GetConfigImage_Params gp;
	memset(&gp, 0, sizeof(gp));
	gp.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
	gp.pHostObject = host;
	gp.configImageSize = sp.configImageSize;
	gp.pConfigImage = img;
	r = p->cuptiProfilerHostGetConfigImage(&gp);
	if (r != CUPTI_SUCCESS) {
		free(img);
		return fail(p, r, "cuptiProfilerHostGetConfigImage", err, errlen);
	}
	CUpti_Profiler_Host_GetNumOfPasses_Params np;
	memset(&np, 0, sizeof(np));
	np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
	np.configImageSize = sp.configImageSize;
	np.pConfigImage = img;
	r = p->cuptiProfilerHostGetNumOfPasses(&np);
	if (r != CUPTI_SUCCESS) {
		free(img);
		return fail(p, r, "cuptiProfilerHostGetNumOfPasses", err, errlen);
	}
	*image = img;
	*size = sp.configImageSize;
	*passes = (int)np.numOfPasses;
	return 0;
}

static void ncu_word(const char *w, size_t n, char *out, size_t len)
{
	static const struct {
		const char *cupti, *ncu;
	} words[] = {{"nanosecond", "ns"}, {"microsecond", "us"}, {"millisecond", "ms"}, {"second", "s"},
		     {"instruction", "inst"}, {"percent", "%"}};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].cupti) == n && strncmp(w, words[i].cupti, n) == 0) {
			snprintf(out, len, "%s", words[i].ncu);
			return;
		}
	/* hardware-unit prefixes: gpc_cycle, l2_sector, l1tex_request, lrc_req ... */
	static const char *const kinds[] = {"cycle", "sector", "request", "wavefront", "tag"};
	const char *us = memchr(w, '_', n);
	if (us) {
		size_t rest = n - (size_t)(us + 1 - w);
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (strlen(kinds[i]) == rest && strncmp(us + 1, kinds[i], rest) == 0) {
				snprintf(out, len, "%s", kinds[i]);
				return;
			}
		if (rest == 3 && strncmp(us + 1, "req", 3) == 0) {
			snprintf(out, len, "request");
			return;
		}
	}
	snprintf(out, len, "%.*s", (int)n, w);
}

void gt_cuprof_ncu_unit(const char *cupti, char *out, size_t len)
{
	size_t k = 0;
	if (len)
		out[0] = '\0';
	for (const char *p = cupti; len && k < len - 1;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char w[64];
		ncu_word(p, n, w, sizeof(w));
		k += (size_t)snprintf(out + k, len - k, "%s%s", k ? "/" : "", w);
		if (!slash || k >= len)
			break;
		p = slash + 1;
	}
}

static int props(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *metric,
		 CUpti_Profiler_Host_GetMetricProperties_Params *mp)
{
	memset(mp, 0, sizeof(*mp));
	mp->structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
	mp->pHostObject = host;
	mp->pMetricName = metric;
	return p->cuptiProfilerHostGetMetricProperties(mp) == CUPTI_SUCCESS ? 0 : -1;
}

void gt_cuprof_unit(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *metric, char *unit,
		    size_t len)
{
	CUpti_Profiler_Host_GetMetricProperties_Params mp;
	unit[0] = '\0';
	int ok = props(p, host, metric, &mp) == 0;
	if (!ok) { /* some versions know only the base name: "smsp__inst_executed" of ".sum" */
		char base[256];
		snprintf(base, sizeof(base), "%s", metric);
		char *dot = strchr(base, '.');
		if (dot)
			*dot = '\0';
		ok = props(p, host, base, &mp) == 0;
	}
	if (!ok)
		return;
	/* percentages are "%" in Nsight Compute whatever the counter's own unit */
	char u[128];
	gt_cuprof_ncu_unit(mp.pDimUnit ? mp.pDimUnit : "", u, sizeof(u));
	if (strstr(metric, ".pct_of_peak") || strstr(metric, ".pct"))
		snprintf(unit, len, "%%");
	else if (strstr(metric, ".per_second"))
		snprintf(unit, len, "%s/s", u);
	else if (strstr(metric, ".per_cycle"))
		snprintf(unit, len, "%s/cycle", u);
	else
		snprintf(unit, len, "%s", u);
}

int gt_cuprof_availability(struct gt_cuprof *p, CUcontext ctx, uint8_t **image, size_t *size, char *err,
			   size_t errlen)
{
	*image = NULL;
	if (size)
		*size = 0;
	CUpti_Profiler_GetCounterAvailability_Params ap;
	memset(&ap, 0, sizeof(ap));
	ap.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
	ap.ctx = ctx;
	CUptiResult r = p->cuptiProfilerGetCounterAvailability(&ap);
	if (r != CUPTI_SUCCESS)
		return fail(p, r, "cuptiProfilerGetCounterAvailability", err, errlen);
	uint8_t *img = malloc(ap.counterAvailabilityImageSize ? ap.counterAvailabilityImageSize : 1);
	if (!img) {
		snprintf(err, errlen, "out of memory for the counter availability image");
		return GT_CUPROF_EFAIL;
	}
	ap.pCounterAvailabilityImage = img;
	r = p->cuptiProfilerGetCounterAvailability(&ap);
	if (r != CUPTI_SUCCESS) {
		free(img);
		return fail(p, r, "cuptiProfilerGetCounterAvailability", err, errlen);
	}
	*image = img;
	if (size)
		*size = ap.counterAvailabilityImageSize;
	return 0;
}

int gt_cuprof_list(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host,
		   void (*fn)(const char *name, const char *unit, const char *desc, const char *type, void *arg),
		   void *arg, char *err, size_t errlen)
{
	static const struct {
		CUpti_MetricType t;
		const char *name;
	} types[] = {{CUPTI_METRIC_TYPE_COUNTER, "counter"},
		     {CUPTI_METRIC_TYPE_RATIO, "ratio"},
		     {CUPTI_METRIC_TYPE_THROUGHPUT, "throughput"}};
	int total = 0;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		CUpti_Profiler_Host_GetBaseMetrics_Params bp;
		memset(&bp, 0, sizeof(bp));
		bp.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
		bp.pHostObject = host;
		bp.metricType = types[t].t;
		CUptiResult r = p->cuptiProfilerHostGetBaseMetrics(&bp);
		if (r != CUPTI_SUCCESS)
			return fail(p, r, "cuptiProfilerHostGetBaseMetrics", err, errlen);
		for (size_t i = 0; i < bp.numMetrics; i++) {
			CUpti_Profiler_Host_GetMetricProperties_Params mp;
			const char *unit = "", *desc = "";
			if (props(p, host, bp.ppMetricNames[i], &mp) == 0) {
				unit = mp.pDimUnit ? mp.pDimUnit : "";
				desc = mp.pDescription ? mp.pDescription : "";
			}
			fn(bp.ppMetricNames[i], unit, desc, types[t].name, arg);
			total++;
		}
	}
	return total;
}
