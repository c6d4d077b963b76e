/*
 * export/export.h — turning a binary trace into the files users read.
 *
 * Owns: trace.json (Chrome/Perfetto), the nsys-compatible CSVs
 * (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum,
 * cuda_api_sum, nvtx_sum, nvtx_gpu_proj_trace), metrics.log/timeline.log
 * rebuilt from a trace, and the end-of-run summary.  Reads traces only
 * through core/trace_io.h, in one streaming pass.  Every file is written to
 * "<name>.partial" and renamed when complete; on an error no output of that
 * call is left behind as if it were complete.  docs/outputs.md describes
 * every file and column.
 */
#ifndef GT_OUT_H
#define GT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Which outputs gt_out_write_all makes. */
#define GT_OUT_JSON 0x1u
#define GT_OUT_CSV 0x2u
#define GT_OUT_LOGS 0x4u /* the alnair interposer's metrics.log + timeline.log (convert only; the tap writes its own) */
#define GT_OUT_ALL (GT_OUT_JSON | GT_OUT_CSV | GT_OUT_LOGS)
#define GT_OUT_GTR 0x8u /* the trace itself rewritten in today's compact format (convert only; not in "all") */

/* File names inside the output directory.  The CSVs are
 * GT_OUT_CSV_PREFIX "_<report>.csv", so "<outdir>/trace" is an nsys CSV
 * prefix for `gputap analyze`. */
#define GT_OUT_JSON_NAME "trace.json"
#define GT_OUT_CSV_PREFIX "trace"

/* Read `trace_path` once and write the outputs selected by `what` into
 * `outdir` (created if missing).  0, or -1 with `err` naming the file.
 * A partial trace (torn tail, .partial file, partial flag) is converted as
 * far as it goes, with one warning on stderr. */
int gt_out_write_all(const char *trace_path, const char *outdir, unsigned what, char *err, size_t errlen);

/* What a conversion saw. */
struct gt_out_info {
	int partial;             /* the trace was partial */
	uint64_t records;        /* records read */
	uint64_t lost;           /* records lost by the tap */
	uint64_t cupti_dropped;  /* records CUPTI dropped */
	uint64_t cupti_no_buffer; /* CUPTI buffer requests refused */
	uint32_t notes;          /* bit (1 << what) for each GT_REC_NOTE */
	char proc[32];           /* the header's process name */
	char trace_path[4096];   /* the file actually read (maybe "<path>.partial") */
};

/* One warning per note of the trace (CUPTI handed over, refused, ...) and for refused CUPTI buffers. */
void gt_out_warn_notes(const struct gt_out_info *info);

/* gt_out_write_all without the warning: fills `info` (may be NULL). */
int gt_out_convert(const char *trace_path, const char *outdir, unsigned what, struct gt_out_info *info, char *err,
		   size_t errlen);

/* Print the end-of-run summary of one or more traces (several processes):
 * top kernels by GPU time, API time, bytes per copy direction, peak memory,
 * lost records, and where the files are (`rundir`). 0 or -1 with err. */
int gt_out_summary(FILE *f, const char *rundir, const char *const *trace_paths, int ntraces, char *err,
		   size_t errlen);

#endif
