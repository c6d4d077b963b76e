#include "core/log.h"
#include "core/fdio.h"

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

/* A byte sequence a terminal acts on: C0 controls but tab and newline, DEL, and C1 controls
 * (U+0080..U+009F, encoded C2 80..C2 9F); its length, 0 for anything else. */
static size_t ctrl_len(const unsigned char *s, size_t left, int keep_nl)
{
	if (s[0] < 0x20)
		return keep_nl && (s[0] == '\n' || s[0] == '\t') ? 0 : 1;
	if (s[0] == 0x7f)
		return 1;
	if (s[0] == 0xc2 && left > 1 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;
	return 0;
}

size_t gt_esc_ctrl(char *dst, size_t cap, const char *src, size_t len, int keep_nl)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;
	if (cap == 0)
		return 0;
	for (size_t i = 0; i < len;) {
		size_t k = ctrl_len(s + i, len - i, keep_nl);
		if (!k) {
			if (o + 1 >= cap)
				break;
			dst[o++] = (char)s[i++];
			continue;
		}
		for (size_t j = 0; j < k; j++, i++) {
			if (o + 4 >= cap)
				goto out;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[s[i] >> 4];
			dst[o++] = hex[s[i] & 15];
		}
	}
out:
	dst[o] = '\0';
	return o;
}

const char *gt_term_str(const char *s, char *buf, size_t cap)
{
	if (!gt_has_ctrl(s))
		return s;
	gt_esc_ctrl(buf, cap, s, strlen(s), 0);
	return buf;
}

int gt_has_ctrl(const char *s)
{
	for (size_t i = 0, n = strlen(s); i < n; i++)
		if (ctrl_len((const unsigned char *)s + i, n - i, 0))
			return 1;
	return 0;
}

__attribute__((format(printf, 2, 0))) static void emit(const char *prefix, const char *fmt, va_list ap)
{
	int saved = errno;
	char raw[1024], buf[1024];
	int n = snprintf(buf, sizeof(buf), "gputap: %s", prefix);
	if (n < 0)
		n = 0;
	int m = vsnprintf(raw, sizeof(raw), fmt, ap);
	size_t rl = m < 0 ? 0 : (size_t)m < sizeof(raw) ? (size_t)m : sizeof(raw) - 1;
	/* messages quote names and lines of input files: never hand their control bytes to a terminal */
	size_t len = (size_t)n + gt_esc_ctrl(buf + n, sizeof(buf) - (size_t)n, raw, rl, 1);
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	if (len == 0 || buf[len - 1] != '\n')
		buf[len++] = '\n';
	(void)gt_write_all(2, buf, len); /* a message that cannot be written is dropped */
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

__attribute__((format(printf, 3, 4))) void gt_bug(const char *file, int line, const char *fmt, ...)
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
