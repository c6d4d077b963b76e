/*
 * core/log.h — diagnostics for the CLI and for the injected library.
 *
 * Owns: the message prefix ("gputap: "), the level set by GPUTAP_LOG,
 * printing, and showing terminal control bytes of input data escaped.  Printing formats into a stack buffer and write(2)s it, so it is
 * safe in the library (no stdio locks, no malloc) and keeps errno intact.
 */
#ifndef GT_LOG_H
#define GT_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum gt_log_level { GT_LOG_QUIET = 0, GT_LOG_ERROR = 1, GT_LOG_WARN = 2, GT_LOG_INFO = 3, GT_LOG_DEBUG = 4 };

extern int gt_log_level; /* default GT_LOG_WARN */

/* Parse a GPUTAP_LOG value ("quiet|error|warn|info|debug" or 0..4); -1 if invalid. */
int gt_log_parse_level(const char *s);

void gt_logv(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void gt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Copy `len` bytes of `src` to `dst` (NUL-terminated, truncated to `cap`) with every byte a
 * terminal would act on written as \xNN: C0 controls (tab and newline kept when `keep_nl`), DEL
 * and C1 controls.  Messages go through it; text outputs use it for names from input files.
 * Returns the length written. */
size_t gt_esc_ctrl(char *dst, size_t cap, const char *src, size_t len, int keep_nl);
/* 1 if `s` holds a byte gt_esc_ctrl would escape (keep_nl = 0). */
int gt_has_ctrl(const char *s);
/* `s` for a terminal: itself, or its escaped copy in `buf` (names from input files in text outputs). */
const char *gt_term_str(const char *s, char *buf, size_t cap);

/* A broken invariant in gputap itself: prints and, in the CLI only, aborts. */
#define GT_BUG(...) gt_bug(__FILE__, __LINE__, __VA_ARGS__)
void gt_bug(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
extern int gt_bug_is_fatal; /* 1 in the CLI, 0 in the library */

#endif
