/*
 * export/export.h — turning a binary trace into the files users read.
 *
 * Owns: trace.json (Chrome/Perfetto), the nsys-compatible CSVs
 * (cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum,
 * cuda_api_sum, nvtx_sum, nvtx_gpu_proj_trace), metrics.log/timeline.log
 * rebuilt from a trace, and the end-of-run summary.  Reads traces only
 * through trace/trace_io.h, in one streaming pass.  Every file is written to
 * "<name>.partial" and renamed when complete; on an error no output of that
 * call is left behind as if it were complete.  docs/outputs.md describes
 * every file and column.
 */
#ifndef GT_EXPORT_H
#define GT_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/visit.h"

/* Which outputs gt_export_write_all makes. */
#define GT_EXPORT_JSON 0x1u
#define GT_EXPORT_CSV 0x2u
#define GT_EXPORT_LOGS 0x4u /* the alnair interposer's metrics.log + timeline.log (convert only; the tap writes its own) */
#define GT_EXPORT_ALL (GT_EXPORT_JSON | GT_EXPORT_CSV | GT_EXPORT_LOGS)
#define GT_EXPORT_GTR 0x8u /* the trace itself rewritten in today's compact format (convert only; not in "all") */
#define GT_EXPORT_JSON_GZ 0x10u /* trace.json gzip-compressed as trace.json.gz (instead of trace.json when both are asked) */
#define GT_EXPORT_BY_WINDOW 0x20u /* with JSON/JSON_GZ: one trace.window<N>.json[.gz] per capture window (convert only) */

/* File names inside the output directory.  The CSVs are
 * GT_EXPORT_CSV_PREFIX "_<report>.csv", so "<outdir>/trace" is an nsys CSV
 * prefix for `gputap analyze`. */
#define GT_EXPORT_JSON_NAME "trace.json"
#define GT_EXPORT_JSON_GZ_NAME "trace.json.gz"
#define GT_EXPORT_CSV_PREFIX "trace"

/* Read `trace_path` once and write the outputs selected by `what` into
 * `outdir` (created if missing).  0, or -1 with `err` naming the file.
 * A partial trace (torn tail, .partial file, partial flag) is converted as
 * far as it goes, with one warning on stderr. */
int gt_export_write_all(const char *trace_path, const char *outdir, unsigned what, char *err, size_t errlen);

/* What a conversion saw. */
struct gt_export_info {
	int partial;             /* the trace was partial */
	uint64_t records;        /* records read */
	uint64_t lost;           /* records lost by the tap */
	uint64_t cupti_dropped;  /* records CUPTI dropped */
	uint64_t cupti_no_buffer; /* CUPTI buffer requests refused */
	uint32_t notes;          /* bit (1 << what) for each GT_REC_NOTE */
	uint32_t flags;          /* the header's GT_FILE_* */
	char proc[32];           /* the header's process name */
	char trace_path[4096];   /* the file actually read (maybe "<path>.partial") */
};

/* One warning per note of the trace (CUPTI handed over, refused, ...) and for refused CUPTI buffers. */
/* The warnings a conversion's outcome calls for, each naming the trace: a
 * partial trace, the notes it carries (GT_REC_NOTE), CUPTI's refused
 * buffers.  gputap run and convert print the same. */
void gt_export_warn(const struct gt_export_info *info);

/* gt_export_write_all without the warning: fills `info` (may be NULL). */
int gt_export_convert(const char *trace_path, const char *outdir, unsigned what, struct gt_export_info *info, char *err,
		   size_t errlen);
struct gt_summary;
/* gt_export_convert with other readers in the same pass (`join`, may be NULL:
 * the analysis and the report) and the summary gathered from it (`sum`, may
 * be NULL): the trace is read once for all of them. */
int gt_export_convert_ex(const char *trace_path, const char *outdir, unsigned what, gt_trace_join_fn join, void *join_arg,
		      struct gt_summary *sum, struct gt_export_info *info, char *err, size_t errlen);

/* The summary built while the traces are converted (no pass of its own):
 * attach before a model's pass (launch-hold figures are gathered in it),
 * add after it, print once all are in. */
struct gt_summary;
struct gt_model;
struct gt_summary *gt_summary_new(void);
void gt_summary_attach(struct gt_summary *s, struct gt_model *m);
int gt_summary_add(struct gt_summary *s, const char *trace_path, struct gt_model *m); /* -1 on ENOMEM */
int gt_summary_print(struct gt_summary *s, FILE *f, const char *rundir, char *err, size_t errlen);
void gt_summary_free(struct gt_summary *s);

/* Print the end-of-run summary of one or more traces (several processes):
 * top kernels by GPU time, API time, bytes per copy direction, peak memory,
 * lost records, and where the files are (`rundir`). 0 or -1 with err. */
int gt_export_summary(FILE *f, const char *rundir, const char *const *trace_paths, int ntraces, char *err,
		   size_t errlen);

#endif
