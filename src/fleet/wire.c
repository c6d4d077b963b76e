/*
 * fleet/wire.c — the fleet's result as the Python package reads it (gputap.fleet: its DataFrames,
 * Parquet files and report):
 *
 *   line 1   "gputap-fleet-result 1"
 *   line 2   one JSON object: {"byteorder": "little", "summary": {...summary.json's object},
 *            "headline": "...", "text": "...the text summary...", "tables": {"ranks": T,
 *            "iterations": T, "collectives": T}}, each T {"rows": N, "columns": [[name, type],
 *            ...], "strings": [...]}
 *   then     each table's columns in that order, column after column, 8-byte little-endian numbers:
 *            "i8" N integers, "f8" N doubles, "b1" N integers 0/1, "str" N integers into the
 *            table's "strings", "list_i8"/"list_f8" N + 1 offsets (integers) then offsets[N]
 *            values (integers / doubles): row i's list is values[offsets[i] .. offsets[i+1])
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "fleet/fleet.h"

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static const char *const type_names[] = {"i8", "f8", "str", "b1", "list_i8", "list_f8"};

/* Strings of a table: each distinct one once (the rows' table of strings, fl_rows_intern: "" is
 * string 0); ids[row] per string column. */
struct strs {
	fl_rows pool;
	int64_t *ids;
};

static void put64(FILE *f, const void *p, size_t n)
{
	/* little-endian hosts only (x86_64, aarch64): the bytes as they are */
	fwrite(p, 8, n, f);
}

static int table_header(yajl_gen g, const fl_table *t, struct strs *ss)
{
	yajl_gen_map_open(g);
	GS(g, "rows");
	yajl_gen_integer(g, (long long)t->rows);
	GS(g, "columns");
	yajl_gen_array_open(g);
	for (size_t c = 0; c < t->ncols; c++) {
		yajl_gen_array_open(g);
		GS(g, t->cols[c].name);
		GS(g, type_names[t->cols[c].type]);
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "strings");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ss->pool.nstrings; i++)
		GS(g, ss->pool.strings[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return 0;
}

/* One table's strings: ids per string column (ss->ids: rows per string column, in column order). */
static int table_strings(const fl_table *t, struct strs *ss)
{
	size_t nstr = 0;
	for (size_t c = 0; c < t->ncols; c++)
		nstr += t->cols[c].type == FL_STR;
	fl_rows_init(&ss->pool);
	ss->ids = calloc(nstr * t->rows + 1, sizeof(int64_t));
	if (!ss->ids)
		return -1;
	size_t k = 0;
	for (size_t c = 0; c < t->ncols; c++) {
		if (t->cols[c].type != FL_STR)
			continue;
		for (size_t i = 0; i < t->rows; i++) {
			int id = fl_rows_intern(&ss->pool, t->cols[c].s[i] ? t->cols[c].s[i] : "");
			if (id < 0)
				return -1;
			ss->ids[k++] = id;
		}
	}
	return 0;
}

static void table_body(FILE *f, const fl_table *t, const struct strs *ss)
{
	size_t k = 0;
	for (size_t c = 0; c < t->ncols; c++) {
		const fl_col *col = &t->cols[c];
		switch (col->type) {
		case FL_I64:
		case FL_BOOL:
			put64(f, col->i, t->rows);
			break;
		case FL_F64:
			put64(f, col->f, t->rows);
			break;
		case FL_STR:
			put64(f, ss->ids + k, t->rows);
			k += t->rows;
			break;
		case FL_LIST_I64:
			put64(f, col->i, t->rows + 1);
			put64(f, col->li, (size_t)col->i[t->rows]);
			break;
		default:
			put64(f, col->i, t->rows + 1);
			put64(f, col->f, (size_t)col->i[t->rows]);
			break;
		}
	}
}

int fl_result_write(const fl_result *r, FILE *f)
{
	const fl_table *tabs[3] = {&r->ranks, &r->iterations, &r->collectives};
	static const char *const names[3] = {"ranks", "iterations", "collectives"};
	struct strs ss[3];
	memset(ss, 0, sizeof(ss));
	char *text = fl_text_summary(r->summary_json, &r->ranks);
	yajl_gen g = yajl_gen_alloc(NULL);
	int rc = -1;
	if (!text || !g)
		goto out;
	for (int t = 0; t < 3; t++)
		if (table_strings(tabs[t], &ss[t]))
			goto out;
	yajl_gen_map_open(g);
	GS(g, "byteorder");
	GS(g, "little");
	GS(g, "summary");
	yajl_gen_number(g, r->summary_json, strlen(r->summary_json)); /* already JSON: put in as it is */
	GS(g, "headline");
	char *nl = strchr(text, '\n');
	yajl_gen_string(g, (const unsigned char *)text, nl ? (size_t)(nl - text) : strlen(text));
	GS(g, "text");
	GS(g, text);
	GS(g, "tables");
	yajl_gen_map_open(g);
	for (int t = 0; t < 3; t++) {
		GS(g, names[t]);
		table_header(g, tabs[t], &ss[t]);
	}
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok)
		goto out;
	fputs("gputap-fleet-result 1\n", f);
	fwrite(buf, 1, len, f);
	fputc('\n', f);
	for (int t = 0; t < 3; t++)
		table_body(f, tabs[t], &ss[t]);
	rc = ferror(f) ? -1 : 0;
out:
	for (int t = 0; t < 3; t++) {
		fl_rows_free(&ss[t].pool);
		free(ss[t].ids);
	}
	if (g)
		yajl_gen_free(g);
	free(text);
	return rc;
}
