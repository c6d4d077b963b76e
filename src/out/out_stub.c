/* Temporary: replaced by the real writers (out_*.c). */
#include "out/out.h"

#include <stdio.h>

int gt_out_write_all(const char *trace_path, const char *outdir, unsigned what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: converting traces is not built yet", trace_path);
	return -1;
}

int gt_out_summary(FILE *f, const char *rundir, const char *const *trace_paths, int ntraces, char *err,
		   size_t errlen)
{
	snprintf(err, errlen, "summary is not built yet");
	return -1;
}
