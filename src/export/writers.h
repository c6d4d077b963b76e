/*
 * export/writers.h — the writers behind gt_export_write_all, one per format.
 *
 * Owns: the text of each output (nsys CSVs, trace.json, the alnair interposer's logs, the
 * terminal summary) given a model built by export/model.h.  Writers that take a
 * FILE * only format; the caller owns the file (export/ofile.h) and turns a
 * write error into a failed commit.
 */
#ifndef GT_EXPORT_WRITERS_H
#define GT_EXPORT_WRITERS_H

#include <stdio.h>

#include "export/model.h"

/* One CSV field, quoted as Python's csv module (and so nsys) quotes it:
 * only when it holds a comma, a quote or a line break; invalid UTF-8 is
 * replaced by U+FFFD. */
void gt_csv_field(FILE *f, const char *s);
/* "%.1f" of x rounded half away from zero (SQLite's round(x, 1), which nsys uses) */
void gt_fmt1(char *buf, size_t cap, double x);

void gt_csv_kern_sum(FILE *f, const struct gt_model *m);
void gt_csv_mem_time_sum(FILE *f, const struct gt_model *m);
void gt_csv_mem_size_sum(FILE *f, const struct gt_model *m);
void gt_csv_api_sum(FILE *f, const struct gt_model *m);
void gt_csv_nvtx_sum(FILE *f, const struct gt_model *m);
/* -1 on ENOMEM */
int gt_csv_nvtx_proj_trace(FILE *f, const struct gt_model *m);

/* Every CSV as `outdir/<prefix>_<report>.csv`.  0 or -1 with err. */
int gt_csv_write_all(const struct gt_model *m, const char *outdir, const char *prefix, char *err, size_t errlen);

/* trace.json, streamed during the pass: begin before gt_model_run (installs
 * a hook), end after it. */
struct gt_json;
struct gt_json *gt_json_begin(FILE *f, struct gt_model *m, int hook_slot);
/* The same, split by capture window: `n` files, file k for what starts in [lo[k], lo[k+1]) (the
 * first also for what starts before lo[0]; lo ascending).  Each file is a whole trace: every track
 * name, otherData with capture_window k+1 of n.  A range, a flow or a held launch stays in the file
 * of its start.  NULL on ENOMEM. */
struct gt_json *gt_json_begin_split(FILE *const *outs, const uint64_t *lo, size_t n, struct gt_model *m,
				    int hook_slot);
/* Writes the events kept until the end (ranges, counters of memory, flows,
 * track names) and the metadata; frees j.  -1 on ENOMEM. */
int gt_json_end(struct gt_json *j, struct gt_model *m);
/* Free j without writing (the pass failed). */
void gt_json_abandon(struct gt_json *j);
/* Escape one string as a JSON string literal (quotes included). */
void gt_json_str(FILE *f, const char *s);

/* timeline.log streamed during the pass; metrics.log after it. */
void gt_alnair_timeline_hook(struct gt_model *m, FILE *f, int hook_slot);
int gt_alnair_metrics(FILE *f, const struct gt_model *m); /* -1 on ENOMEM */

/* A kernel name for a `width`-column table: without "void ", then without
 * its parameter list when too long, then with its middle cut ("..."). */
void gt_export_short_name(char *buf, size_t cap, const char *name, size_t width);

#endif
