/*
 * analyze/input.c — what the readers call while they read (analyze/input.h): notes, source labels,
 * progress, the NVTX ranges seen and kept, the checks of ids and times; and, after the read, the
 * default iteration range picked from the ranges seen.  It calls no reader and nothing of
 * analyze.c.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "analyze/input.h"
#include "core/sort.h"

const char *gt_an_base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

void gt_an_note(struct gt_an_ctx *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **n = realloc(c->notes, (c->nnotes + 1) * sizeof(*n));
	if (!n)
		return;
	c->notes = n;
	if ((n[c->nnotes] = strdup(buf)))
		c->nnotes++;
}

void gt_an_range_seen(struct gt_an_ctx *c, const char *name, double ns, uint64_t count)
{
	if (strncmp(name, "ProfilerStep#", 13) == 0)
		name = "ProfilerStep#N";
	long i = gt_names_get(&c->seen, GT_NK_KERNEL, name, strlen(name));
	if (i < 0)
		return; /* out of memory: only a message would lose a name */
	c->seen.v[i].count += count;
	c->seen.v[i].time_ns += ns;
}

#define MAX_CAND (1u << 20) /* ranges kept for the pick (24 MiB); more: the inputs are read again */

void gt_an_range_at(struct gt_an_ctx *c, int source, const char *name, uint64_t start, uint64_t end)
{
	if (c->cand_off || c->tag || c->nvtx_count || !name[0] || strncmp(name, "ProfilerStep#", 13) == 0)
		return;
	if (c->ncand == MAX_CAND) {
		c->cand_off = 1;
		return;
	}
	if (c->ncand == c->capcand) {
		size_t nc = c->capcand ? c->capcand * 2 : 256;
		struct gt_an_cand *v = realloc(c->cand, nc * sizeof(*v));
		if (!v) {
			c->cand_off = 1;
			return;
		}
		c->cand = v;
		c->capcand = nc;
	}
	long i = gt_names_get(&c->cand_names, GT_NK_KERNEL, name, strlen(name));
	if (i < 0) {
		c->cand_off = 1;
		return;
	}
	c->cand[c->ncand++] = (struct gt_an_cand){start, end < start ? start : end, (uint32_t)i, source};
}

/* The kept ranges named `name` become the iterations, as a second read with --nvtx NAME would
 * make them.  0, or -1 (out of memory). */
int gt_an_apply_cand(struct gt_an_ctx *c, const char *name)
{
	for (size_t i = 0; i < c->ncand; i++) {
		const struct gt_an_cand *k = &c->cand[i];
		if (strcmp(c->cand_names.v[k->name].name, name) != 0)
			continue;
		c->has_nvtx = 1;
		c->nvtx_count++;
		c->nvtx_total_ns += (double)(k->end - k->start);
		if (gt_tl_range(&c->tl, k->source, k->start, k->end) < 0)
			return -1;
	}
	return 0;
}

static int seen_cmp(const void *a, const void *b)
{
	const struct gt_name *x = *(const struct gt_name *const *)a, *y = *(const struct gt_name *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* "a, b, c, ..." of the range names seen in the input just read, most frequent first */
static void seen_list(const struct gt_names *seen, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	const struct gt_name **v = malloc((seen->n + 1) * sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < seen->n; i++)
		v[i] = &seen->v[i];
	gt_sort(v, seen->n, sizeof(*v), seen_cmp);
	for (size_t i = 0; i < seen->n && i <= 8 && o + 1 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, i == 8 ? ", ..." : "%s%.60s", i ? ", " : "", v[i]->name);
	free(v);
}

/* After one input: when the iteration range matched nothing in it, say so and name the ranges it
 * has; keep each name's largest count in one input and its total time, to pick a default. */
void gt_an_input_done(struct gt_an_ctx *c, struct gt_names *all, const char *input, uint64_t matched_before)
{
	if (c->tag_is_windows && c->nvtx_count == matched_before) {
		gt_an_note(c, "no capture window in %s (it was not traced with gputap run --capture)", gt_an_base_name(input));
	} else if (c->tag && c->nvtx_count == matched_before) {
		char list[700];
		seen_list(&c->seen, list, sizeof(list));
		if (list[0])
			gt_an_note(c, "no NVTX range named \"%s\" in %s (ranges seen: %s)", c->tag, gt_an_base_name(input), list);
		else
			gt_an_note(c, "no NVTX range named \"%s\" in %s (it has no NVTX ranges)", c->tag, gt_an_base_name(input));
	}
	for (size_t i = 0; i < c->seen.n; i++) {
		const struct gt_name *e = &c->seen.v[i];
		long k = gt_names_get(all, GT_NK_KERNEL, e->name, strlen(e->name));
		if (k < 0)
			continue;
		if (e->count > all->v[k].count)
			all->v[k].count = e->count;
		all->v[k].time_ns += e->time_ns;
	}
	gt_names_free(&c->seen);
	gt_names_init(&c->seen);
}

/* A warm-up range ("warmup", "Warm-up", "warm_up"...) is never the iterations, however long. */
static int is_warmup(const char *name)
{
	for (const char *p = name; *p; p++)
		if (strncasecmp(p, "warm", 4) == 0)
			return 1;
	return 0;
}

/* With no ProfilerStep#N range: the range name that repeats in an input and covers the most time.
 * Never an empty name (record_function(""), empty NVTX text): it names nothing, and "" is "no pick";
 * never a warm-up range. */
const char *gt_an_default_range(const struct gt_names *all)
{
	const struct gt_name *best = NULL;
	for (size_t i = 0; i < all->n; i++) {
		const struct gt_name *e = &all->v[i];
		if (e->count < 2 || !e->name[0] || strcmp(e->name, "ProfilerStep#N") == 0 || is_warmup(e->name))
			continue;
		if (!best || e->time_ns > best->time_ns ||
		    (e->time_ns == best->time_ns && (e->count > best->count ||
						     (e->count == best->count && strcmp(e->name, best->name) < 0))))
			best = e;
	}
	return best ? best->name : NULL;
}

int gt_an_is_iter_range(const struct gt_an_ctx *c, const char *name)
{
	if (c->tag)
		return strcmp(name, c->tag) == 0;
	if (c->tag_is_profiler_step)
		return strncmp(name, "ProfilerStep#", 13) == 0;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void gt_an_progress(struct gt_an_ctx *c, const char *path, uint64_t done, uint64_t total)
{
	static double t0, last;
	if (!c->progress)
		return;
	double t = now_s();
	if (done == 0 || t0 == 0) {
		t0 = t;
		last = t;
		return;
	}
	if (t - t0 < 1.0 || t - last < 0.5)
		return;
	last = t;
	if (total)
		fprintf(stderr, "\rgputap: reading %s: %3.0f%%", path, 100.0 * (double)done / (double)total);
	else
		fprintf(stderr, "\rgputap: reading %s: %llu records", path, (unsigned long long)done);
	if (done >= total && total)
		fputc('\n', stderr);
}

int gt_an_parse_fixed(const char *s, size_t len, int scale, uint64_t *out)
{
	size_t i = 0;
	uint64_t v = 0;
	int neg = 0;
	if (i < len && s[i] == '-') {
		neg = 1;
		i++;
	}
	if (i == len || s[i] < '0' || s[i] > '9')
		return GT_AN_NAN;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return neg ? GT_AN_NEGATIVE : GT_AN_RANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	int frac = 0;
	uint64_t fv = 0;
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (frac < scale) {
				fv = fv * 10 + (uint64_t)(s[i] - '0');
				frac++;
			}
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) { /* rare: fall back to a double */
		char tmp[64], *end;
		if (len >= sizeof(tmp))
			return GT_AN_NAN;
		memcpy(tmp, s, len);
		tmp[len] = '\0';
		double d = strtod(tmp, &end);
		if (*end)
			return GT_AN_NAN;
		for (int k = 0; k < scale; k++)
			d *= 10;
		if (neg && d != 0)
			return GT_AN_NEGATIVE;
		if (!(d < 18446744073709549568.0)) /* the largest double below 2^64; also inf and nan */
			return GT_AN_RANGE;
		*out = (uint64_t)(d + 0.5);
		return 0;
	}
	if (i != len)
		return GT_AN_NAN;
	for (; frac < scale; frac++)
		fv *= 10;
	uint64_t m = 1;
	for (int k = 0; k < scale; k++)
		m *= 10;
	if (neg && (v || fv))
		return GT_AN_NEGATIVE;
	if (v > (UINT64_MAX - fv) / m)
		return GT_AN_RANGE;
	*out = v * m + fv;
	return 0;
}

int gt_an_parse_id(const char *s, size_t len, int64_t *out)
{
	uint64_t v;
	if (gt_an_parse_fixed(s, len, 0, &v) < 0 || v > GT_AN_MAX_ID)
		return -1;
	/* "3.0" is the id 3, "3.5" is no id */
	for (size_t i = 0; i < len; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
			char tmp[64];
			if (len >= sizeof(tmp))
				return -1;
			memcpy(tmp, s, len);
			tmp[len] = '\0';
			double d = strtod(tmp, NULL);
			if (d != (double)v)
				return -1;
			break;
		}
	*out = (int64_t)v;
	return 0;
}

int gt_an_label(struct gt_an_ctx *c, int source, const char *label, const char *path)
{
	char **p = realloc(c->paths, ((size_t)source + 1) * sizeof(*p));
	if (!p)
		return -1;
	for (size_t i = c->npaths; i <= (size_t)source; i++)
		p[i] = NULL;
	c->paths = p;
	if ((size_t)source + 1 > c->npaths)
		c->npaths = (size_t)source + 1;
	free(p[source]);
	if (!(p[source] = strdup(path)))
		return -1;
	for (int s = 0; s < (int)c->tl.nlabels && s < (int)c->npaths; s++) {
		if (s == source || !c->tl.labels[s] || strcmp(c->tl.labels[s], label) != 0)
			continue;
		/* two inputs claim the same rank (or process): keep both, told apart by their file */
		char both[512];
		snprintf(both, sizeof(both), "%s (%s)", label, gt_an_base_name(path));
		gt_an_note(c, "%s: \"%s\" again (also %s): its rows are labelled \"%s\"", path, label,
			   c->paths[s] ? c->paths[s] : "an earlier input", both);
		return gt_tl_label(&c->tl, source, both);
	}
	return gt_tl_label(&c->tl, source, label);
}
