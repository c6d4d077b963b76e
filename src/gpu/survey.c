/* gpu/survey.c — what this machine offers, asked once (gpu/survey.h). */
#include <stdlib.h>
#include <string.h>

#include "gpu/probe.h"
#include "gpu/survey.h"

void gt_gpu_survey(struct gt_gpu_survey *s)
{
	memset(s, 0, sizeof(*s));
	s->nvml_ok = gt_nvml_open(s->nvml_err, sizeof(s->nvml_err)) == 0;
	if (s->nvml_ok) {
		s->ngpu = gt_nvml_device_count();
		gt_nvml_driver_version(s->driver, sizeof(s->driver));
		gt_nvml_version(s->nvml_ver, sizeof(s->nvml_ver));
		s->cuda_nvml = gt_nvml_cuda_driver_version();
		if (s->ngpu > 0 && !(s->gpu = calloc((size_t)s->ngpu, sizeof(*s->gpu))))
			s->ngpu = 0;
		for (int i = 0; i < s->ngpu; i++)
			gt_nvml_static(i, &s->gpu[i]);
	}
	s->cuda_drv = gt_cuda_driver_version();
	s->cupti = gt_cupti_version(s->cupti_path, sizeof(s->cupti_path));
}

void gt_gpu_survey_free(struct gt_gpu_survey *s)
{
	free(s->gpu);
	s->gpu = NULL;
	gt_nvml_close();
}
