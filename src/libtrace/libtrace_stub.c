/* Temporary: replaced by the real parsers (libtrace_*.c). */
#include "libtrace/libtrace.h"

#include <stdio.h>

int gt_libtrace_collect(const char *logdir, const char *csv_path, const char *jobid, const char *model,
			char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: library log parsing is not built yet", logdir);
	return -1;
}
