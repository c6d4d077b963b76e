/*
 * fleet/table.c — the fleet's output tables (fleet.h's fl_table): columns of numbers, strings and
 * lists, made by the reduction, printed by the text summary and written for the Python package.
 */
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "fleet/table.h"

const fl_col *fl_table_col(const fl_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return &t->cols[i];
	return NULL;
}

void fl_table_free(fl_table *t)
{
	for (size_t i = 0; i < t->ncols; i++) {
		free(t->cols[i].i);
		free(t->cols[i].f);
		free(t->cols[i].li);
		free(t->cols[i].s);
	}
	free(t->cols);
	for (size_t i = 0; i < t->npool; i++)
		free(t->pool[i]);
	free(t->pool);
	memset(t, 0, sizeof(*t));
}

int fl_table_init(fl_table *t, size_t rows, const char *const *names, const int *types, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->rows = rows;
	t->cols = calloc(ncols ? ncols : 1, sizeof(fl_col));
	if (!t->cols)
		return -1;
	t->ncols = ncols;
	size_t n = rows ? rows : 1;
	for (size_t c = 0; c < ncols; c++) {
		fl_col *col = &t->cols[c];
		col->name = names[c];
		col->type = types[c];
		switch (col->type) {
		case FL_I64:
		case FL_BOOL:
			col->i = calloc(n, sizeof(int64_t));
			break;
		case FL_F64:
			col->f = calloc(n, sizeof(double));
			break;
		case FL_STR:
			col->s = calloc(n, sizeof(char *));
			break;
		default: /* lists: offsets now, values when set */
			col->i = calloc(n + 1, sizeof(int64_t));
			break;
		}
		if (!col->i && !col->f && !col->s)
			return -1;
	}
	return 0;
}

fl_col *fl_table_colw(fl_table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return &t->cols[i];
	return NULL;
}

char *fl_table_str(fl_table *t, const char *s)
{
	if (t->npool == t->cap_pool) {
		size_t cap = t->cap_pool ? 2 * t->cap_pool : 64;
		char **p = realloc(t->pool, cap * sizeof(char *));
		if (!p)
			return NULL;
		t->pool = p;
		t->cap_pool = cap;
	}
	char *d = strdup(s ? s : "");
	if (!d)
		return NULL;
	t->pool[t->npool++] = d;
	return d;
}

int fl_table_set_strc(fl_table *t, fl_col *c, size_t row, const char *s)
{
	char *d = fl_table_str(t, s);
	if (!c || !d)
		return -1;
	c->s[row] = d;
	return 0;
}
