/*
 * analyze/emit.h — the pieces every output of an analysis is written with (emit.c).
 *
 * Owns: one CSV row of `gputap analyze --format csv`, a JSON number in ms-style decimals and a JSON
 * integer (for a yajl_gen), and the names a result's rows are printed under (a kind, a rank, a
 * shortened kernel name: declared in analyze/analyze.h, which the report uses too).
 *
 * Invariant: a leaf of the analyzer.  output.c, output_detail.c, the findings and the report call
 * it; it calls nothing of them, so the outputs' arrows run one way.
 */
#ifndef GT_AN_EMIT_H
#define GT_AN_EMIT_H

#include <stdio.h>

#include "analyze/analyze.h"

/* One CSV row (title,section,gpu,iteration,name,metric,value; it < 0: no iteration; a value that is
 * not finite: an empty cell). */
void gt_an_csv_row(FILE *f, const char *title, const char *sec, const char *gpu, long it, const char *name,
		   const char *metric, double v);
/* A JSON key and number (ms with 6 decimals, trailing zeros dropped; null when not finite); `g` is a
 * yajl_gen. */
void gt_an_jnum(void *g, const char *k, double v);
/* A JSON key and integer; `g` is a yajl_gen. */
void gt_an_jint(void *g, const char *k, unsigned long long v);
/* A JSON key and an array of the n strings v; `g` is a yajl_gen. */
void gt_an_jstrs(void *g, const char *k, char *const *v, size_t n);

#endif
