/*
 * analyze/emit.c — the pieces every output of an analysis is written with (analyze/emit.h): a CSV
 * row, a JSON number or integer, and the names a result's rows are printed under.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "analyze/emit.h"
#include "core/csvio.h"

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

/* ms with 6 decimals (= ns), trailing zeros dropped: stable text, no binary noise */
void gt_an_jnum(void *gen, const char *k, double v)
{
	yajl_gen g = gen;
	char b[64];
	GS(g, k);
	if (!isfinite(v)) { /* JSON has no inf/nan */
		yajl_gen_null(g);
		return;
	}
	snprintf(b, sizeof(b), fabs(v) < 1e15 ? "%.6f" : "%.17g", v);
	size_t n = strlen(b);
	if (strchr(b, '.') && !strchr(b, 'e'))
		while (n > 1 && b[n - 1] == '0' && b[n - 2] != '.')
			b[--n] = '\0';
	yajl_gen_number(g, b, n);
}

void gt_an_jint(void *gen, const char *k, unsigned long long v)
{
	yajl_gen g = gen;
	GS(g, k);
	yajl_gen_integer(g, (long long)v);
}

void gt_an_jstrs(void *gen, const char *k, char *const *v, size_t n)
{
	yajl_gen g = gen;
	GS(g, k);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++)
		GS(g, v[i]);
	yajl_gen_array_close(g);
}

void gt_an_csv_row(FILE *f, const char *title, const char *sec, const char *gpu, long it, const char *name,
		   const char *metric, double v)
{
	gt_csv_put(f, title);
	fprintf(f, ",%s,", sec);
	gt_csv_put(f, gpu);
	if (it >= 0)
		fprintf(f, ",%ld,", it);
	else
		fputs(",,", f);
	gt_csv_put(f, name);
	if (isfinite(v))
		fprintf(f, ",%s,%.6f\n", metric, v);
	else /* unknown: an empty cell, never 0 */
		fprintf(f, ",%s,\n", metric);
}

static const char *const kind_names[] = {"compute", "communication", "memory"};

const char *gt_an_kind_name(int cat) { return cat >= 0 && cat < 3 ? kind_names[cat] : "other"; }

void gt_an_short_name(const char *name, size_t width, char *buf, size_t len)
{
	size_t n = strlen(name);
	if (width < 32)
		width = 32;
	if (n <= width) {
		snprintf(buf, len, "%s", name);
		return;
	}
	/* the start, the end (templates differ in either) and a hash of the whole: two names never
	 * look the same once shortened */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	size_t tail = 12, head = width - tail - 3 - 8;
	while (head > 0 && ((unsigned char)name[head] & 0xc0) == 0x80) /* whole UTF-8 characters */
		head--;
	const char *t = name + n - tail;
	while (*t && ((unsigned char)*t & 0xc0) == 0x80)
		t++;
	snprintf(buf, len, "%.*s...%s ~%06x", (int)head, name, t, (unsigned)(h & 0xffffffu));
}

void gt_an_source_label(const struct gt_an_result *r, int source, char *buf, size_t len)
{
	for (size_t i = 0; i < r->ngpu; i++)
		if (r->gpu[i].source == source) {
			snprintf(buf, len, "%s", r->gpu[i].label);
			char *s = strrchr(buf, '/');
			if (s)
				*s = '\0';
			return;
		}
	snprintf(buf, len, "rank%d", source);
}
