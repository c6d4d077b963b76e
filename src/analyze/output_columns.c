/*
 * analyze/output_columns.c — `gputap analyze --format columns`: a result's per-GPU iterations and its
 * collectives as binary columns, for programs that read many ranks (`gputap fleet`): no number is
 * printed and parsed again.  Layout (docs/analyze.md, "Columns"):
 *
 *   line 1   "gputap-columns 1"
 *   line 2   one JSON object: byteorder, the result's iteration_source, notes and GPUs (label, source,
 *            device, iterations, total: the window object of the JSON format), and per table its rows
 *            and columns ([name, "i8" | "f8"]); string columns are "i8" numbers into the table's
 *            "strings"
 *   then     the columns of "iterations", then those of "collectives", each rows x 8 bytes, in the
 *            machine's byte order (the header says which)
 *
 * Owns nothing but the layout: the numbers are the JSON format's (ms as x / 1e6 of the ns).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "analyze/an_internal.h"
#include "analyze/emit.h"

#define MS(ns) ((ns) / 1e6)
#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

/* The iteration columns: which GPU (its index in "gpus"), then the window's numbers. */
static const char *const ITER_COLS[][2] = {
	{"gpu", "i8"},	      {"start_ns", "i8"},    {"end_ns", "i8"},		{"first_ns", "i8"},
	{"last_ns", "i8"},    {"span_ms", "f8"},     {"busy_ms", "f8"},		{"idle_ms", "f8"},
	{"kernel_sum_ms", "f8"}, {"kernels", "i8"},  {"memops", "i8"},		{"compute_ms", "f8"},
	{"comm_ms", "f8"},    {"overlap_ms", "f8"},  {"exposed_comm_ms", "f8"}, {"memop_ms", "f8"},
	{"non_compute_ms", "f8"},
};
#define NITER_COLS (sizeof(ITER_COLS) / sizeof(ITER_COLS[0]))

static const char *const COLL_COLS[][2] = {
	{"source", "i8"}, {"device", "i8"}, {"seq", "i8"},	{"count", "i8"},    {"bytes", "i8"},
	{"iteration", "i8"}, {"start_ns", "i8"}, {"end_ns", "i8"}, {"launch_ns", "i8"}, {"comm", "i8"},
	{"name", "i8"},	  {"algo", "i8"},   {"proto", "i8"},	{"dtype", "i8"},    {"match", "i8"},
};
#define NCOLL_COLS (sizeof(COLL_COLS) / sizeof(COLL_COLS[0]))

/* One column of 8-byte values. */
union cell {
	int64_t i;
	double f;
};

static int64_t clamp_src(int v) { return v < 0 ? 0 : v; }

/* The collectives' columns, column after column (rows x NCOLL_COLS cells), and their strings, each
 * once, in the analyzer's name table (the kind is unused here: 0). */
static union cell *coll_columns(const struct gt_an_result *r, struct gt_names *st)
{
	size_t n = r->has_colls ? r->ncolls : 0;
	union cell *c = malloc((n ? n : 1) * NCOLL_COLS * sizeof(*c));
	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct gt_an_coll *k = &r->colls[i];
		const char *strs[] = {k->comm, k->name, k->algo, k->proto, k->dtype, k->match};
		int64_t v[] = {clamp_src(k->source), clamp_src(k->device), (int64_t)k->seq, (int64_t)k->count,
			       (int64_t)k->bytes, k->iteration < 0 ? -1 : (int64_t)k->iteration, (int64_t)k->start_ns,
			       (int64_t)k->end_ns, (int64_t)k->launch_ns};
		size_t col = 0;
		for (; col < sizeof(v) / sizeof(v[0]); col++)
			c[col * n + i].i = v[col];
		for (size_t s = 0; s < sizeof(strs) / sizeof(strs[0]); s++, col++) {
			long id = gt_names_get(st, 0, strs[s], strlen(strs[s]));
			if (id < 0) {
				free(c);
				return NULL;
			}
			c[col * n + i].i = id;
		}
	}
	return c;
}

static size_t iter_rows(const struct gt_an_result *r)
{
	size_t n = 0;
	for (size_t i = 0; r->has_timeline && i < r->ngpu; i++)
		n += r->gpu[i].niters;
	return n;
}

/* The iterations' columns (rows x NITER_COLS cells). */
static union cell *iter_columns(const struct gt_an_result *r, size_t n)
{
	union cell *c = malloc((n ? n : 1) * NITER_COLS * sizeof(*c));
	if (!c)
		return NULL;
	size_t row = 0;
	for (size_t g = 0; r->has_timeline && g < r->ngpu; g++)
		for (size_t j = 0; j < r->gpu[g].niters; j++, row++) {
			const struct gt_an_window *w = &r->gpu[g].iters[j];
			union cell v[NITER_COLS];
			v[0].i = (int64_t)g;
			v[1].i = (int64_t)w->start_ns;
			v[2].i = (int64_t)w->end_ns;
			v[3].i = (int64_t)w->first_ns;
			v[4].i = (int64_t)w->last_ns;
			v[5].f = MS(w->span_ns);
			v[6].f = MS(w->busy_ns);
			v[7].f = MS(w->idle_ns);
			v[8].f = MS(w->kernel_ns);
			v[9].i = (int64_t)w->kernels;
			v[10].i = (int64_t)w->memops;
			v[11].f = MS(w->compute_ns);
			v[12].f = MS(w->comm_ns);
			v[13].f = MS(w->overlap_ns);
			v[14].f = MS(w->exposed_ns);
			v[15].f = MS(w->memop_ns);
			v[16].f = MS(w->non_compute_ns);
			for (size_t k = 0; k < NITER_COLS; k++)
				c[k * n + row] = v[k];
		}
	return c;
}

static void jcols(yajl_gen g, const char *name, size_t rows, const char *const (*cols)[2], size_t ncols,
		  const struct gt_names *st)
{
	GS(g, name);
	yajl_gen_map_open(g);
	gt_an_jint(g, "rows", rows);
	GS(g, "columns");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ncols; i++) {
		yajl_gen_array_open(g);
		GS(g, cols[i][0]);
		GS(g, cols[i][1]);
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
	if (st) {
		GS(g, "strings");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < st->n; i++)
			GS(g, st->v[i].name);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

static int header(const struct gt_an_result *r, size_t nit, size_t ncoll, const struct gt_names *st, FILE *f)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g)
		return -1;
	const uint16_t one = 1;
	yajl_gen_map_open(g);
	gt_an_jint(g, "schema_version", 1);
	GS(g, "byteorder");
	GS(g, *(const unsigned char *)&one ? "little" : "big");
	GS(g, "iteration_source");
	GS(g, r->iter_source);
	gt_an_jstrs(g, "notes", r->notes, r->nnotes);
	GS(g, "gpus");
	yajl_gen_array_open(g);
	for (size_t i = 0; r->has_timeline && i < r->ngpu; i++) {
		yajl_gen_map_open(g);
		GS(g, "label");
		GS(g, r->gpu[i].label);
		gt_an_jint(g, "source", (unsigned)r->gpu[i].source);
		gt_an_jint(g, "device", (unsigned)r->gpu[i].device);
		gt_an_jint(g, "iterations", r->gpu[i].niters);
		GS(g, "total");
		gt_an_json_window(g, &r->gpu[i].total);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "tables");
	yajl_gen_map_open(g);
	jcols(g, "iterations", nit, ITER_COLS, NITER_COLS, NULL);
	jcols(g, "collectives", ncoll, COLL_COLS, NCOLL_COLS, st);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	int rc = 0;
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || fputs("gputap-columns 1\n", f) < 0 ||
	    fwrite(buf, 1, len, f) != len || fputc('\n', f) == EOF)
		rc = -1;
	yajl_gen_free(g);
	return rc;
}

int gt_an_print_columns(const struct gt_an_result *r, FILE *f)
{
	struct gt_names st;
	gt_names_init(&st);
	size_t nit = iter_rows(r), ncoll = r->has_colls ? r->ncolls : 0;
	union cell *it = iter_columns(r, nit), *co = coll_columns(r, &st);
	int rc = -1;
	if (it && co && header(r, nit, ncoll, &st, f) == 0 && fwrite(it, sizeof(*it), nit * NITER_COLS, f) ==
	    nit * NITER_COLS && fwrite(co, sizeof(*co), ncoll * NCOLL_COLS, f) == ncoll * NCOLL_COLS)
		rc = 0;
	free(it);
	free(co);
	gt_names_free(&st);
	return rc;
}
