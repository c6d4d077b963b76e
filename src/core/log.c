#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gt_log_level = GT_LOG_WARN;
int gt_bug_is_fatal = 1;

int gt_log_parse_level(const char *s)
{
	static const char *const names[] = {"quiet", "error", "warn", "info", "debug"};
	if (!s || !*s)
		return -1;
	if (s[0] >= '0' && s[0] <= '4' && s[1] == '\0')
		return s[0] - '0';
	for (int i = 0; i < 5; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static void emit(const char *prefix, const char *fmt, va_list ap)
{
	int saved = errno;
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "gputap: %s", prefix);
	if (n < 0)
		n = 0;
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	size_t len = (size_t)n + (m > 0 ? (size_t)m : 0);
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	if (len == 0 || buf[len - 1] != '\n')
		buf[len++] = '\n';
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(2, buf + off, len - off);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			break;
		}
		off += (size_t)w;
	}
	errno = saved;
}

void gt_logv(int level, const char *fmt, va_list ap)
{
	static const char *const pfx[] = {"", "error: ", "warning: ", "", "debug: "};
	if (level > gt_log_level || level < GT_LOG_ERROR)
		return;
	emit(pfx[level], fmt, ap);
}

#define GT_LOG_FN(fn, lvl)                                                                         \
	void fn(const char *fmt, ...)                                                              \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		gt_logv(lvl, fmt, ap);                                                             \
		va_end(ap);                                                                        \
	}
GT_LOG_FN(gt_error, GT_LOG_ERROR)
GT_LOG_FN(gt_warn, GT_LOG_WARN)
GT_LOG_FN(gt_info, GT_LOG_INFO)
GT_LOG_FN(gt_debug, GT_LOG_DEBUG)

void gt_bug(const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char where[64];
	snprintf(where, sizeof(where), "BUG at %s:%d: ", file, line);
	gt_error("%s%s", where, msg);
	if (gt_bug_is_fatal)
		abort();
}
