/*
 * core/csvio.h — the small CSV and file helpers every module shares.
 *
 * Owns: RFC 4180 quoting of one field on output, splitting one CSV record in
 * place on input (no embedded newlines: every CSV gputap reads line by line
 * is of that kind), reading a whole small file, and checking UTF-8.  Large inputs are
 * streamed by their readers, never through gt_read_file.
 */
#ifndef GT_CSVIO_H
#define GT_CSVIO_H

#include <stddef.h>
#include <stdio.h>

/* Write `s` as one CSV field: quoted (with doubled quotes) only when it holds
 * a comma, a quote, CR or LF.  NULL writes an empty field. */
void gt_csv_put(FILE *f, const char *s);
/* Split one CSV record in place: fields[] point into `s`.  Returns the number
 * of fields (at most `max`), or -1 on a stray quote. */
int gt_csv_split(char *s, char **fields, int max);
/* Read a whole file into a malloc'd, NUL-terminated buffer; NULL with errno set. */
char *gt_read_file(const char *path, size_t *len);

/* 1 if s[0..n) is well-formed UTF-8 (no overlong 2-byte forms), else 0. */
int gt_utf8_valid(const unsigned char *s, size_t n);

#endif
