/*
 * core/log.h — diagnostics for the CLI and for the injected library.
 *
 * Owns: the message prefix ("gputap: "), the level set by GPUTAP_LOG, and
 * printing.  Printing formats into a stack buffer and write(2)s it, so it is
 * safe in the library (no stdio locks, no malloc) and keeps errno intact.
 */
#ifndef GT_LOG_H
#define GT_LOG_H

#include <stdarg.h>

enum gt_log_level { GT_LOG_QUIET = 0, GT_LOG_ERROR = 1, GT_LOG_WARN = 2, GT_LOG_INFO = 3, GT_LOG_DEBUG = 4 };

extern int gt_log_level; /* default GT_LOG_WARN */

/* Parse a GPUTAP_LOG value ("quiet|error|warn|info|debug" or 0..4); -1 if invalid. */
int gt_log_parse_level(const char *s);

void gt_logv(int level, const char *fmt, va_list ap);
void gt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A broken invariant in gputap itself: prints and, in the CLI only, aborts. */
#define GT_BUG(...) gt_bug(__FILE__, __LINE__, __VA_ARGS__)
void gt_bug(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
extern int gt_bug_is_fatal; /* 1 in the CLI, 0 in the library */

#endif
