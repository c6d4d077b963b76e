#include "core/capture.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* "1.5", "250ms", "2m", "30s" -> ns; -1 on error */
static int parse_secs(const char *s, size_t n, uint64_t *ns)
{
	char buf[64];
	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno || !(v >= 0) || v > 1e7)
		return -1;
	double mul = 1e9;
	if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "m"))
		mul = 60e9;
	else if (*end && strcmp(end, "s"))
		return -1;
	*ns = (uint64_t)(v * mul);
	return 0;
}

static int parse_u64(const char *s, size_t n, uint64_t *v)
{
	if (n == 0 || n > 18)
		return -1;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	*v = x;
	return 0;
}

static int parse_one(struct gt_capture *c, const char *p, size_t n, char *err, size_t errlen)
{
	if (c->n >= GT_CAP_MAX)
		return fail(err, errlen, "too many capture windows at '%.*s' (at most 16)", (int)n, p);
	struct gt_cap_window *w = &c->w[c->n];
	memset(w, 0, sizeof(*w));
	if (n > 5 && !strncmp(p, "nvtx:", 5)) {
		const char *name = p + 5;
		const char *at = memchr(name, '@', n - 5);
		size_t nl = at ? (size_t)(at - name) : n - 5;
		if (nl == 0 || nl >= GT_CAP_NAME_MAX)
			return fail(err, errlen, "capture window '%.*s': the NVTX name is empty or too long", (int)n, p);
		w->kind = GT_CAP_NVTX;
		if (name[nl - 1] == '*') {
			w->prefix = 1;
			nl--;
		}
		memcpy(w->name, name, nl);
		w->first = w->last = 1;
		if (at) {
			const char *r = at + 1, *e = p + n;
			const char *dash = memchr(r, '-', (size_t)(e - r));
			size_t fl = dash ? (size_t)(dash - r) : (size_t)(e - r);
			if (parse_u64(r, fl, &w->first) || w->first == 0)
				return fail(err, errlen, "capture window '%.*s': FIRST must be an occurrence number from 1",
					    (int)n, p);
			w->last = w->first;
			if (dash) {
				size_t ll = (size_t)(e - dash - 1);
				if (ll == 0)
					w->last = 0; /* until the end */
				else if (parse_u64(dash + 1, ll, &w->last) || w->last < w->first)
					return fail(err, errlen,
						    "capture window '%.*s': LAST must be a number not below FIRST", (int)n, p);
			}
		}
	} else if ((n == 15 && !strncmp(p, "cudaProfilerApi", 15)) || (n == 8 && !strncmp(p, "profiler", 8))) {
		w->kind = GT_CAP_PROFILER_API;
	} else if (n > 5 && !strncmp(p, "time:", 5)) {
		const char *d = p + 5, *e = p + n;
		const char *plus = memchr(d, '+', (size_t)(e - d));
		w->kind = GT_CAP_TIME;
		if (parse_secs(d, plus ? (size_t)(plus - d) : (size_t)(e - d), &w->delay_ns) ||
		    (plus && (parse_secs(plus + 1, (size_t)(e - plus - 1), &w->dur_ns) || w->dur_ns == 0)))
			return fail(err, errlen,
				    "capture window '%.*s': DELAY and DURATION are seconds (e.g. time:30+5, time:1.5s+250ms)",
				    (int)n, p);
	} else if (n == 7 && !strncmp(p, "trigger", 7)) {
		w->kind = GT_CAP_TRIGGER;
		w->state = GT_CAP_DONE; /* a placeholder: windows come from `gputap trigger` */
	} else {
		return fail(err, errlen,
			    "capture window '%.*s' is not valid (accepted: nvtx:NAME[@FIRST[-LAST]], "
			    "cudaProfilerApi, time:DELAY[+DURATION], trigger)",
			    (int)n, p);
	}
	c->n++;
	return 0;
}

int gt_capture_parse(struct gt_capture *c, const char *spec, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (err && errlen)
		err[0] = 0;
	if (!spec || !*spec)
		return fail(err, errlen, "capture SPEC is empty");
	const char *p = spec;
	while (*p) {
		while (*p == ' ' || *p == ';')
			p++;
		if (!*p)
			break;
		const char *e = strchr(p, ';');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		while (n && p[n - 1] == ' ')
			n--;
		if (parse_one(c, p, n, err, errlen))
			return -1;
		p += n;
	}
	if (c->n == 0)
		return fail(err, errlen, "capture SPEC '%s' names no window", spec);
	return 0;
}

const char *gt_capture_describe(const struct gt_capture *c, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < c->n && o < len; i++) {
		const struct gt_cap_window *w = &c->w[i];
		const char *sep = o ? ";" : "";
		int k = 0;
		switch (w->kind) {
		case GT_CAP_NVTX:
			if (w->last == 0)
				k = snprintf(buf + o, len - o, "%snvtx:%s%s@%llu-", sep, w->name, w->prefix ? "*" : "",
					     (unsigned long long)w->first);
			else
				k = snprintf(buf + o, len - o, "%snvtx:%s%s@%llu-%llu", sep, w->name, w->prefix ? "*" : "",
					     (unsigned long long)w->first, (unsigned long long)w->last);
			break;
		case GT_CAP_PROFILER_API: k = snprintf(buf + o, len - o, "%scudaProfilerApi", sep); break;
		case GT_CAP_TIME:
			if (w->dur_ns)
				k = snprintf(buf + o, len - o, "%stime:%.9g+%.9g", sep, (double)w->delay_ns / 1e9,
					     (double)w->dur_ns / 1e9);
			else
				k = snprintf(buf + o, len - o, "%stime:%.9g", sep, (double)w->delay_ns / 1e9);
			break;
		case GT_CAP_TRIGGER:
			if (w->opened_ns)
				k = snprintf(buf + o, len - o, "%strigger(%s)", sep,
					     w->iters ? "iterations" : w->dur_ns ? "duration" : "open");
			else
				k = snprintf(buf + o, len - o, "%strigger", sep);
			break;
		default: break;
		}
		if (k < 0)
			break;
		o += (size_t)k;
	}
	if (o >= len && len)
		buf[len - 1] = 0;
	return buf;
}

static int open_w(struct gt_capture *c, struct gt_cap_window *w, uint64_t now)
{
	if (w->kind == GT_CAP_TRIGGER && w->state == GT_CAP_WAITING)
		c->armed--;
	w->state = GT_CAP_OPEN;
	w->opened_ns = now;
	w->closed_ns = 0;
	c->windows_opened++;
	return c->open++ == 0 ? 1 : 0;
}

static int close_w(struct gt_capture *c, struct gt_cap_window *w, uint64_t now, int again)
{
	w->state = again ? GT_CAP_WAITING : GT_CAP_DONE;
	w->closed_ns = now;
	return --c->open == 0 ? -1 : 0;
}

static int name_matches(const struct gt_cap_window *w, const char *name)
{
	if (!name)
		return 0;
	size_t n = strlen(w->name);
	return w->prefix ? strncmp(name, w->name, n) == 0 : strcmp(name, w->name) == 0;
}

int gt_capture_range_open(struct gt_capture *c, const char *name, uint64_t key, int top_level, uint64_t now_ns)
{
	int d = 0;
	for (int i = 0; i < c->n; i++) {
		struct gt_cap_window *w = &c->w[i];
		if (w->kind == GT_CAP_TRIGGER && w->state == GT_CAP_WAITING && top_level) {
			d += open_w(c, w, now_ns); /* an armed `--iterations` trigger starts with a whole iteration */
			continue;
		}
		if (w->kind != GT_CAP_NVTX || w->state == GT_CAP_DONE || !name_matches(w, name))
			continue;
		w->seen++;
		if (w->state == GT_CAP_WAITING && w->seen == w->first)
			d += open_w(c, w, now_ns);
		if (w->state == GT_CAP_OPEN && w->last && w->seen == w->last)
			w->open_key = key;
	}
	return d;
}

int gt_capture_range_close(struct gt_capture *c, uint64_t key, int top_level, uint64_t now_ns)
{
	int d = 0;
	for (int i = 0; i < c->n; i++) {
		struct gt_cap_window *w = &c->w[i];
		if (w->state != GT_CAP_OPEN)
			continue;
		if (w->kind == GT_CAP_NVTX && w->last && w->seen >= w->last && w->open_key == key)
			d += close_w(c, w, now_ns, 0);
		else if (w->kind == GT_CAP_TRIGGER && w->iters && top_level && --w->iters == 0)
			d += close_w(c, w, now_ns, 0);
	}
	return d;
}

int gt_capture_profiler(struct gt_capture *c, int start, uint64_t now_ns)
{
	int d = 0;
	for (int i = 0; i < c->n; i++) {
		struct gt_cap_window *w = &c->w[i];
		if (w->kind != GT_CAP_PROFILER_API)
			continue;
		if (start && w->state == GT_CAP_WAITING) {
			w->repeat++;
			d += open_w(c, w, now_ns);
		} else if (!start && w->state == GT_CAP_OPEN) {
			d += close_w(c, w, now_ns, 1);
		}
	}
	return d;
}

int gt_capture_tick(struct gt_capture *c, uint64_t now_ns)
{
	int d = 0;
	for (int i = 0; i < c->n; i++) {
		struct gt_cap_window *w = &c->w[i];
		if (w->kind == GT_CAP_TIME && w->state == GT_CAP_WAITING && now_ns >= c->start_ns + w->delay_ns)
			d += open_w(c, w, now_ns);
		if ((w->kind == GT_CAP_TIME || w->kind == GT_CAP_TRIGGER) && w->state == GT_CAP_OPEN && w->dur_ns &&
		    now_ns >= w->opened_ns + w->dur_ns)
			d += close_w(c, w, now_ns, 0);
	}
	return d;
}

int gt_capture_trigger(struct gt_capture *c, uint64_t dur_ns, uint64_t iters, uint64_t now_ns)
{
	struct gt_cap_window *w = NULL;
	/* reuse the spec's `trigger` placeholder first, then a new slot */
	for (int i = 0; i < c->n && !w; i++)
		if (c->w[i].kind == GT_CAP_TRIGGER && c->w[i].state == GT_CAP_DONE && !c->w[i].opened_ns &&
		    !c->w[i].closed_ns)
			w = &c->w[i];
	if (!w) {
		if (c->n >= GT_CAP_MAX)
			return -2;
		w = &c->w[c->n++];
		memset(w, 0, sizeof(*w));
		w->kind = GT_CAP_TRIGGER;
	}
	w->dur_ns = dur_ns;
	w->iters = iters;
	w->opened_ns = 0;
	if (iters) {
		w->state = GT_CAP_WAITING; /* armed: opens at the next top-level range */
		c->armed++;
		return 0;
	}
	return open_w(c, w, now_ns);
}

int gt_capture_close_all(struct gt_capture *c, uint64_t now_ns)
{
	int d = 0;
	for (int i = 0; i < c->n; i++)
		if (c->w[i].state == GT_CAP_OPEN)
			d += close_w(c, &c->w[i], now_ns, 0);
	return d;
}

int gt_capture_pending(const struct gt_capture *c)
{
	for (int i = 0; i < c->n; i++) {
		const struct gt_cap_window *w = &c->w[i];
		if (w->state != GT_CAP_DONE || w->kind == GT_CAP_PROFILER_API || w->kind == GT_CAP_TRIGGER)
			return 1;
	}
	return 0;
}
