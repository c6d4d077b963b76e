/*
 * liblog/liblog.h — what the per-library log parsers share (internal).
 *
 * Owns: the parser interface (detect a line of its library, feed lines one
 * at a time, finish at end of file), the per-file context that counts and
 * reports bad lines, and small text helpers.  The parsers (liblog_*.c) call
 * only parse.c (the helpers, the call table) and libconfig.c (the canonical
 * configs); libtrace.c drives them: the arrows run one way.  Lines handed to a parser are
 * NUL-terminated without their line end; a parser keeps only what identifies
 * a call, so memory stays bounded whatever the log's size.
 */
#ifndef GT_LIBLOG_H
#define GT_LIBLOG_H

#include <stddef.h>
#include <stdint.h>

#include "liblog/libtrace.h"

struct gt_liblog_ctx {
	const char *file;
	struct gt_libcalls *t;
	struct gt_liblog_stats *st;
	int failed; /* out of memory: stop */
};

struct gt_liblog_ops {
	enum gt_lib lib;
	/* 1 if `line` is unmistakably from this library's log */
	int (*detect)(const char *line);
	void *(*open)(void);
	void (*line)(void *state, struct gt_liblog_ctx *c, const char *line, uint64_t lineno);
	void (*finish)(void *state, struct gt_liblog_ctx *c);
	void (*close)(void *state);
};

extern const struct gt_liblog_ops gt_liblog_nccl, gt_liblog_cublaslt, gt_liblog_cublas, gt_liblog_cudnn;

/* gt_liblog_parse_buf with the parser of `lib` forced (GT_LIB_UNKNOWN:
 * detect by content); for tests and fuzzing of one parser. */
int gt_liblog_parse_buf_as(enum gt_lib lib, const char *name, const char *buf, size_t len, struct gt_libcalls *t,
			   struct gt_liblog_stats *st);

/* Count a bad line and warn about the first few of the file (GT_LIBLOG_BAD_SHOWN). */
#define GT_LIBLOG_BAD_SHOWN 5
void gt_liblog_bad(struct gt_liblog_ctx *c, uint64_t lineno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Record one call of `config`. */
void gt_liblog_call(struct gt_liblog_ctx *c, const char *config);

/* Copy the value of `key=` in `s` (a key starts the text or follows a space,
 * '[' or ';'; the value ends at a space, ']', ';' or ',') into out.  1 if
 * found.  `end` bounds the search (NULL: to the NUL). */
int gt_kv_get(const char *s, const char *end, const char *key, char *out, size_t outlen);
/* Same, parsed as a signed integer (decimal or 0x hex); 1 if found and valid. */
int gt_kv_int(const char *s, const char *end, const char *key, int64_t *v);
/* Strict integer parse of the whole string. 0 or -1. */
int gt_parse_i64(const char *s, int64_t *v);
/* Copy `src` with every char outside [A-Za-z0-9_.:+-] replaced by '_' (so a
 * value never breaks the config grammar or the CSV). */
void gt_cfg_sanitize(char *dst, size_t len, const char *src);

/* Append to a bounded buffer; sets *overflow when it did not fit. */
struct gt_sbuf {
	char *p;
	size_t len, cap;
	int overflow;
};
void gt_sbuf_printf(struct gt_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
