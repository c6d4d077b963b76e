/*
 * What the log parsers call (liblog/liblog.h): the call table they add to
 * and the text helpers, in a file of its own so that the parsers and their
 * driver (libtrace.c) both depend on it and not on each other.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/sort.h"
#include "liblog/liblog.h"

int gt_liblog_verbose = 1;

/* ---- call table: open addressing on (lib, config) ---- */
struct entry {
	char *config; /* NULL: empty slot */
	uint64_t hash;
	uint64_t calls;
	enum gt_lib lib;
};
struct gt_libcalls {
	struct entry *slots;
	size_t cap, used;
	struct gt_libcall_row *rows;
};

static uint64_t hash_cfg(enum gt_lib lib, const char *s)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)lib;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct gt_libcalls *gt_libcalls_new(void)
{
	struct gt_libcalls *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cap = 64;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void gt_libcalls_free(struct gt_libcalls *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].config);
	free(t->slots);
	free(t->rows);
	free(t);
}

static int grow(struct gt_libcalls *t)
{
	size_t ncap = t->cap * 2;
	struct entry *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].config)
			continue;
		size_t j = t->slots[i].hash & (ncap - 1);
		while (ns[j].config)
			j = (j + 1) & (ncap - 1);
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

int gt_libcalls_add(struct gt_libcalls *t, enum gt_lib lib, const char *config, uint64_t n)
{
	if ((t->used + 1) * 4 > t->cap * 3 && grow(t) < 0)
		return -ENOMEM;
	uint64_t h = hash_cfg(lib, config);
	size_t j = h & (t->cap - 1);
	while (t->slots[j].config) {
		struct entry *e = &t->slots[j];
		if (e->hash == h && e->lib == lib && strcmp(e->config, config) == 0) {
			e->calls += n;
			return 0;
		}
		j = (j + 1) & (t->cap - 1);
	}
	char *c = strdup(config);
	if (!c)
		return -ENOMEM;
	t->slots[j] = (struct entry){c, h, n, lib};
	t->used++;
	free(t->rows);
	t->rows = NULL;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct gt_libcall_row *x = a, *y = b;
	if (x->lib != y->lib)
		return x->lib < y->lib ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->config, y->config);
}

size_t gt_libcalls_rows(struct gt_libcalls *t, const struct gt_libcall_row **rows)
{
	free(t->rows);
	t->rows = calloc(t->used ? t->used : 1, sizeof(*t->rows));
	if (!t->rows) {
		*rows = NULL;
		return 0;
	}
	size_t n = 0;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].config)
			t->rows[n++] = (struct gt_libcall_row){t->slots[i].lib, t->slots[i].config, t->slots[i].calls};
	gt_sort(t->rows, n, sizeof(*t->rows), row_cmp);
	*rows = t->rows;
	return n;
}

/* ---- helpers shared by the parsers ---- */
void gt_liblog_bad(struct gt_liblog_ctx *c, uint64_t lineno, const char *fmt, ...)
{
	c->st->bad++;
	if (!gt_liblog_verbose || c->st->bad > GT_LIBLOG_BAD_SHOWN)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gt_warn("%s:%llu: %s", c->file, (unsigned long long)lineno, msg);
}

void gt_liblog_call(struct gt_liblog_ctx *c, const char *config)
{
	if (c->failed)
		return;
	if (gt_libcalls_add(c->t, c->st->lib, config, 1) < 0) {
		c->failed = 1;
		return;
	}
	c->st->calls++;
}

static int is_key_start(const char *s, const char *p)
{
	return p == s || p[-1] == ' ' || p[-1] == '[' || p[-1] == ';' || p[-1] == '\t' || p[-1] == ',';
}

int gt_kv_get(const char *s, const char *end, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	if (!end)
		end = s + strlen(s);
	for (const char *p = s; p + kl < end; p++) {
		p = memchr(p, key[0], (size_t)(end - p));
		if (!p || p + kl >= end)
			return 0;
		if (memcmp(p, key, kl) == 0 && p[kl] == '=' && is_key_start(s, p)) {
			const char *v = p + kl + 1, *e = v;
			while (e < end && *e && *e != ' ' && *e != ']' && *e != ';' && *e != ',' && *e != '\t')
				e++;
			size_t n = (size_t)(e - v);
			if (outlen == 0)
				return 1;
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, v, n);
			out[n] = 0;
			return 1;
		}
	}
	return 0;
}

int gt_parse_i64(const char *s, int64_t *v)
{
	if (!s || !*s)
		return -1;
	char *e;
	errno = 0;
	long long x = strtoll(s, &e, 0);
	if (errno || *e)
		return -1;
	*v = x;
	return 0;
}

int gt_kv_int(const char *s, const char *end, const char *key, int64_t *v)
{
	char buf[32];
	if (!gt_kv_get(s, end, key, buf, sizeof(buf)))
		return 0;
	return gt_parse_i64(buf, v) == 0;
}

void gt_cfg_sanitize(char *dst, size_t len, const char *src)
{
	size_t i = 0;
	if (len == 0)
		return;
	for (; src[i] && i + 1 < len; i++) {
		unsigned char ch = (unsigned char)src[i];
		dst[i] = (char)(isalnum(ch) || strchr("_.:+-", ch) ? ch : '_');
	}
	dst[i] = 0;
}

void gt_sbuf_printf(struct gt_sbuf *b, const char *fmt, ...)
{
	if (b->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len) {
		b->overflow = 1;
		b->p[b->len] = 0;
		return;
	}
	b->len += (size_t)n;
}
