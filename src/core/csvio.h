/*
 * core/csvio.h — the small CSV and file helpers every module shares.
 *
 * Owns: RFC 4180 quoting of one field on output, splitting one CSV record in
 * place on input (no embedded newlines: the CSVs gputap writes itself and
 * reads line by line), the streaming reader of CSVs written by other tools
 * (nsys), reading a whole small file, and checking UTF-8.  The one CSV module.  Large inputs are
 * streamed by their readers, never through gt_read_file.
 */
#ifndef GT_CSVIO_H
#define GT_CSVIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Write `s` as one CSV field: quoted (with doubled quotes) only when it holds
 * a comma, a quote, CR or LF.  NULL writes an empty field. */
void gt_csv_put(FILE *f, const char *s);
/* Split one CSV record in place: fields[] point into `s`.  Returns the number
 * of fields (at most `max`), or -1 on a stray quote. */
int gt_csv_split(char *s, char **fields, int max);
/* Open a plain file for reading ("rb", close-on-exec) without ever blocking in open(): a FIFO, a
 * device or a socket in place of a file is refused with errno ENODEV (which gt_plain_error words),
 * a folder with EISDIR.  NULL with errno set. */
FILE *gt_fopen_plain(const char *path);
/* What gt_fopen_plain's errno means, for messages: "is a folder, not a file", "not a plain file (a
 * FIFO, a device or a socket)", else strerror(e). */
const char *gt_plain_error(int e);
/* getline(3) that keeps at most `max` bytes of a line: the rest of a longer one is read and dropped
 * (*cut set), so that a file with a 1 GB line costs `max` bytes of memory, not 1 GB.  The length
 * kept (the '\n' included when kept), or -1 at the end of the file or on an error (errno). */
ssize_t gt_getline_max(char **line, size_t *cap, FILE *f, size_t max, int *cut);
/* Read a whole file into a malloc'd, NUL-terminated buffer; NULL with errno set. */
char *gt_read_file(const char *path, size_t *len);

/* 1 if s[0..n) is well-formed UTF-8 (no overlong 2-byte forms), else 0. */
int gt_utf8_valid(const unsigned char *s, size_t n);

/* An RFC 4180 reader: quoted fields with commas, doubled quotes and line
 * breaks, CRLF or LF, a UTF-8 byte-order mark; rejects invalid UTF-8 and a
 * quote left open, naming the file and line.  One row in memory at a time. */
struct gt_csv {
	FILE *f;
	const char *path;
	long line;      /* line where the current row starts (1-based) */
	long next_line;
	char *buf;      /* row text, fields point into it */
	size_t cap;
	char **fields;
	size_t nfields, fcap;
	int first;
};
int gt_csv_open(struct gt_csv *c, const char *path, char *err, size_t errlen);
/* 1 row read, 0 end of file, -1 error (err set). Fields are NUL-terminated, unquoted. */
int gt_csv_next(struct gt_csv *c, char *err, size_t errlen);
void gt_csv_close(struct gt_csv *c);

#endif
