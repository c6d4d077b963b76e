/*
 * gpu/survey.h — what this machine offers, asked once: NVML, its GPUs, the driver, the CUDA version
 * it supports and the CUPTI gputap would load (gputap info).
 *
 * Owns: the order of the questions (NVML first, then the driver through libcuda without a context,
 * then CUPTI by gpu/probe.h's search order) and the facts of each GPU NVML lists.  Printing is the
 * command's.  CLI only: it opens NVML and closes it again in gt_gpu_survey_free.
 */
#ifndef GT_GPU_SURVEY_H
#define GT_GPU_SURVEY_H

#include "gpu/nvml.h"

struct gt_gpu_survey {
	int nvml_ok;               /* NVML loaded and initialised */
	char nvml_err[256];        /* else why not, in one sentence */
	int ngpu;                  /* GPUs NVML lists */
	struct gt_gpu_static *gpu; /* their facts (ngpu; NULL when none or out of memory: ngpu is then 0) */
	char driver[96], nvml_ver[96]; /* "" unknown */
	int cuda_nvml;             /* the CUDA version the driver supports, as NVML says (0 unknown) */
	int cuda_drv;              /* the same from cuDriverGetVersion (0: libcuda not loadable) */
	unsigned cupti;            /* cuptiGetVersion (0: no CUPTI found) */
	char cupti_path[512];      /* the CUPTI library found */
};

/* Ask everything; never fails (what cannot be asked stays 0 / ""). */
void gt_gpu_survey(struct gt_gpu_survey *s);
void gt_gpu_survey_free(struct gt_gpu_survey *s);

#endif
