/*
 * gpu/cuprof.h — CUPTI's Profiler Host and Range Profiler APIs, loaded at
 * run time from libcupti (never linked), for the library's range metrics
 * and for `gputap info --metrics`.
 *
 * Owns: finding libcupti, the table of profiler functions (present from
 * CUDA 12.6 Update 2 on: older CUPTI libraries are refused with a message
 * saying so), and the host-side steps that need no GPU context: chip name,
 * host object, metric validation (which name is unknown), number of
 * replay passes, units, the list of a chip's metrics.
 *
 * Errors: functions return 0 or a negative GT_CUPROF_E* code and write one
 * sentence into err.  GT_CUPROF_EPERM is CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
 * gt_cuprof_perm_help() is the one message that names the fix.
 */
#ifndef GT_GPU_CUPROF_H
#define GT_GPU_CUPROF_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

enum {
	GT_CUPROF_ENOLIB = -1,  /* libcupti not found, or without the Range Profiler */
	GT_CUPROF_ENOGPU = -2,  /* no driver / device */
	GT_CUPROF_EPERM = -3,   /* counters restricted to administrators */
	GT_CUPROF_EINVAL = -4,  /* unknown metric */
	GT_CUPROF_EFAIL = -5,   /* anything else */
};

#define GT_CUPROF_FNS(X)                                                                           \
	X(cuptiGetVersion)                                                                         \
	X(cuptiGetResultString)                                                                    \
	X(cuptiGetDeviceId)                                                                        \
	X(cuptiGetStreamIdEx)                                                                      \
	X(cuptiProfilerInitialize)                                                                 \
	X(cuptiDeviceGetChipName)                                                                  \
	X(cuptiProfilerGetCounterAvailability)                                                     \
	X(cuptiProfilerHostInitialize)                                                             \
	X(cuptiProfilerHostDeinitialize)                                                           \
	X(cuptiProfilerHostConfigAddMetrics)                                                       \
	X(cuptiProfilerHostGetConfigImageSize)                                                     \
	X(cuptiProfilerHostGetConfigImage)                                                         \
	X(cuptiProfilerHostGetNumOfPasses)                                                         \
	X(cuptiProfilerHostGetBaseMetrics)                                                         \
	X(cuptiProfilerHostGetMetricProperties)                                                    \
	X(cuptiProfilerHostEvaluateToGpuValues)                                                    \
	X(cuptiRangeProfilerEnable)                                                                \
	X(cuptiRangeProfilerDisable)                                                               \
	X(cuptiRangeProfilerSetConfig)                                                             \
	X(cuptiRangeProfilerStart)                                                                 \
	X(cuptiRangeProfilerStop)                                                                  \
	X(cuptiRangeProfilerPushRange)                                                             \
	X(cuptiRangeProfilerPopRange)                                                              \
	X(cuptiRangeProfilerDecodeData)                                                            \
	X(cuptiRangeProfilerGetCounterDataSize)                                                    \
	X(cuptiRangeProfilerCounterDataImageInitialize)                                            \
	X(cuptiRangeProfilerGetCounterDataInfo)                                                    \
	X(cuptiRangeProfilerCounterDataGetRangeInfo)

#define GT_CUPROF_PTR(n) __typeof__(&n) n;
struct gt_cuprof {
	void *lib;
	uint32_t version; /* cuptiGetVersion */
	char path[512];
	GT_CUPROF_FNS(GT_CUPROF_PTR)
};
#undef GT_CUPROF_PTR

/* Open the CUPTI of gpu/probe.h's search order (GPUTAP_CUPTI_LIB first; the
 * one the tap loads and `gputap info` names) and resolve every function
 * above.  `resolve` looks a symbol up (NULL = dlsym).  0, or GT_CUPROF_ENOLIB
 * with err saying which CUPTI was found and what it lacks. */
int gt_cuprof_load(struct gt_cuprof *p, void *(*resolve)(void *, const char *), char *err,
		   size_t errlen);
/* "CUPTI_ERROR_..." text of r. */
const char *gt_cuprof_result(const struct gt_cuprof *p, CUptiResult r);
/* Map a CUPTI result to GT_CUPROF_E* (0 for success). */
int gt_cuprof_code(CUptiResult r);
/* The one message for restricted counters: what is wrong and how to fix it. */
const char *gt_cuprof_perm_help(void);

/* CUPTI's profiler initialisation (once) and the chip name of device `dev`. */
int gt_cuprof_chip(struct gt_cuprof *p, int dev, const char **chip, char *err, size_t errlen);
/* A host object for `chip`; `avail` (the counter availability image) may be NULL. */
int gt_cuprof_host(struct gt_cuprof *p, const char *chip, const uint8_t *avail, CUpti_Profiler_Host_Object **host,
		   char *err, size_t errlen);
void gt_cuprof_host_free(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host);
/* Add `names` to a host object's configuration (what gt_cuprof_config does
 * first); an unknown metric gives GT_CUPROF_EINVAL and err names it. */
int gt_cuprof_add_metrics(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *const *names, int n,
			  char *err, size_t errlen);
/* The config image for `names` (malloc'd into *image) and its passes.  An
 * unknown metric gives GT_CUPROF_EINVAL and err names it.  A host object
 * takes metrics once: use a fresh one per config image. */
int gt_cuprof_config(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *const *names, int n,
		     uint8_t **image, size_t *size, int *passes, char *err, size_t errlen);
/* Unit of `metric` as Nsight Compute prints it ("nsecond", "inst", "byte",
 * "%"...), written into unit (empty when CUPTI has none). */
void gt_cuprof_unit(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host, const char *metric, char *unit,
		    size_t len);
/* CUPTI's unit name as Nsight Compute prints it with --print-units base:
 * nanosecond -> ns, instruction -> inst, percent -> %, gpc_cycle -> cycle,
 * l2_sector -> sector, l1tex_request -> request; "a/b" part by part. */
void gt_cuprof_ncu_unit(const char *cupti, char *out, size_t len);
/* The counter availability image of context ctx (malloc'd; its length in *size when size is not NULL). */
int gt_cuprof_availability(struct gt_cuprof *p, CUcontext ctx, uint8_t **image, size_t *size, char *err,
			   size_t errlen);

/* Every base metric of the chip: fn(name, unit, description, type, arg); type
 * is "counter", "ratio" or "throughput".  Returns how many, or < 0. */
int gt_cuprof_list(struct gt_cuprof *p, CUpti_Profiler_Host_Object *host,
		   void (*fn)(const char *name, const char *unit, const char *desc, const char *type, void *arg),
		   void *arg, char *err, size_t errlen);

#endif
