/*
 * fleet/table.h — making the fleet's tables (table.c); reading them is fleet.h's fl_table_col.
 *
 * Owns: a table of `rows` rows with these columns, each zeroed (numbers 0, strings NULL, lists
 * empty: their offsets all 0); strings kept in the table's pool.  Used by the reduction only.
 */
#ifndef GT_FLEET_TABLE_H
#define GT_FLEET_TABLE_H

#include "fleet/fleet.h"

int fl_table_init(fl_table *t, size_t rows, const char *const *names, const int *types, size_t ncols);
/* The column of that name, to fill in. */
fl_col *fl_table_colw(fl_table *t, const char *name);
/* A copy of s in the table's pool (NULL: out of memory). */
char *fl_table_str(fl_table *t, const char *s);
/* Row `row` of string column c is a copy of s; 0 or -1. */
int fl_table_set_strc(fl_table *t, fl_col *c, size_t row, const char *s);

#endif
