/*
 * libtrace/libtrace.h — library call logs (cuBLAS, cuBLASLt, cuDNN, NCCL)
 * turned into library_trace.csv.
 *
 * Owns: the logging variables each library tool sets, the log parsers, the
 * canonical config strings, and library_trace.csv
 * (jobid,created_date,model,library,config,calls).
 */
#ifndef GT_LIBTRACE_H
#define GT_LIBTRACE_H

#include <stddef.h>

/* Parse every library log under `logdir` (all ranks' files) and write
 * `csv_path`.  jobid/model go into their columns.  0 or -1 with err naming
 * the log file and line. */
int gt_libtrace_collect(const char *logdir, const char *csv_path, const char *jobid, const char *model,
			char *err, size_t errlen);

#endif
