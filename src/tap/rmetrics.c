/* Range metrics (see rmetrics.h).  Not measuring yet: the entry points report "off". */
#include <stdio.h>
#include <string.h>

#include "gputap.h"
#include "tap/rmetrics.h"
#include "tap/tap.h"

static char last_error[512];

const char *gt_rmetrics_last_error(void)
{
	return last_error;
}

char *gt_rmetrics_results_json(void)
{
	return NULL; /* range metrics are off */
}

GT_EXPORT int gputap_metrics_enable(const char *metrics, const char *mode)
{
	(void)metrics;
	if (mode && strcmp(mode, "auto") != 0 && strcmp(mode, "kernel") != 0 && strcmp(mode, "range") != 0) {
		snprintf(last_error, sizeof(last_error), "unknown range-metrics mode '%s': expected auto, kernel or range",
			 mode);
		return GPUTAP_EINVAL;
	}
	snprintf(last_error, sizeof(last_error), "range metrics are not available in this build of gputap");
	return GPUTAP_EFAIL;
}
