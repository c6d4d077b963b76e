/* metrics/rmagg.c — range metrics without CUPTI.  See rmagg.h. */
#include "metrics/rmagg.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/csvio.h"
#include "core/demangle.h"
#include "core/number.h"

/* ---- metric lists and modes ---- */

static int metric_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

int gt_rm_parse_list(const char *s, const char *what, struct gt_rm_list *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!s || !*s)
		s = GT_RM_DEFAULT_METRICS;
	const char *p = s;
	while (*p) {
		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		const char *b = p;
		while (*p && *p != ',' && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		size_t n = (size_t)(p - b);
		int ok = n < GT_RM_NAME_MAX;
		for (size_t i = 0; ok && i < n; i++)
			ok = metric_char(b[i]);
		/* Nsight Compute names are unit__counter.rollup: one "__", a letter first */
		const char *dd = ok ? strstr(b, "__") : NULL;
		if (ok && (!dd || dd >= b + n || dd == b || !((b[0] >= 'a' && b[0] <= 'z') || (b[0] >= 'A' && b[0] <= 'Z'))))
			ok = 0;
		if (!ok) {
			snprintf(err, errlen,
				 "%s: '%.*s' is not a metric name (names look like smsp__inst_executed.sum; "
				 "'gputap info --metrics' lists this GPU's)",
				 what, (int)(n > 80 ? 80 : n), b);
			return -1;
		}
		int dup = 0;
		for (int i = 0; i < out->n; i++)
			if (strlen(out->name[i]) == n && strncmp(out->name[i], b, n) == 0)
				dup = 1;
		if (dup)
			continue;
		if (out->n == GT_RM_MAX_METRICS) {
			snprintf(err, errlen, "%s: more than %d metrics", what, GT_RM_MAX_METRICS);
			return -1;
		}
		memcpy(out->name[out->n], b, n);
		out->name[out->n][n] = '\0';
		out->n++;
	}
	if (out->n == 0) {
		snprintf(err, errlen, "%s: no metric named", what);
		return -1;
	}
	return 0;
}

int gt_rm_parse_mode(const char *s)
{
	if (!s || !*s || strcmp(s, "auto") == 0)
		return GT_RM_AUTO;
	if (strcmp(s, "kernel") == 0 || strcmp(s, "per-kernel") == 0)
		return GT_RM_KERNEL;
	if (strcmp(s, "range") == 0 || strcmp(s, "per-range") == 0)
		return GT_RM_RANGE;
	return -1;
}

int gt_rm_kernel_replay(int passes, const char *replay)
{
	return passes != 1 || (replay && strcmp(replay, "kernel") == 0);
}

int gt_rm_parse_chunk(const char *s, size_t def, size_t *cap)
{
	*cap = def;
	if (!s || !*s)
		return 0;
	long v;
	if (gt_parse_long(s, 1, 100000, &v) < 0)
		return -1;
	*cap = (size_t)v;
	return 0;
}

const char *gt_rm_mode_name(int mode)
{
	return mode == GT_RM_KERNEL ? "per-kernel" : mode == GT_RM_RANGE ? "per-range" : "auto";
}

int gt_rm_metric_additive(const char *m)
{
	const char *dot = strchr(m, '.');
	return dot && strcmp(dot, ".sum") == 0;
}

int gt_rm_choose_mode(int requested, int passes, const struct gt_rm_list *l, char *why, size_t len)
{
	const char *nonadd = NULL;
	for (int i = 0; i < l->n && !nonadd; i++)
		if (!gt_rm_metric_additive(l->name[i]))
			nonadd = l->name[i];
	if (requested == GT_RM_KERNEL) {
		snprintf(why, len, "per-kernel, as asked");
		return GT_RM_KERNEL;
	}
	if (requested == GT_RM_RANGE) {
		if (passes > 1) {
			snprintf(why, len,
				 "per-range mode measures in one pass and this list needs %d; use fewer metrics or "
				 "per-kernel mode",
				 passes);
			return -1;
		}
		if (nonadd)
			snprintf(why, len,
				 "per-range, as asked; %s does not add up over pieces of work, so it has values only "
				 "for ranges measured in one piece (no range boundary inside)",
				 nonadd);
		else
			snprintf(why, len, "per-range, as asked");
		return GT_RM_RANGE;
	}
	if (passes > 1) {
		snprintf(why, len, "per-kernel: the list needs %d passes, which only kernel replay can make", passes);
		return GT_RM_KERNEL;
	}
	if (nonadd) {
		snprintf(why, len, "per-kernel: %s cannot be summed over a range's pieces of work", nonadd);
		return GT_RM_KERNEL;
	}
	snprintf(why, len, "per-range: one pass of additive metrics (per-kernel values: mode kernel)");
	return GT_RM_RANGE;
}

/* ---- the aggregate ---- */

int gt_rm_agg_init(struct gt_rm_agg *a, int mode, int nmetrics, const char *const *names,
		   const char *const *units)
{
	memset(a, 0, sizeof(*a));
	a->mode = mode;
	a->none = -1;
	if (nmetrics < 0 || nmetrics > GT_RM_MAX_METRICS)
		return -EINVAL;
	a->nmetrics = nmetrics;
	for (int i = 0; i < nmetrics; i++) {
		a->metric[i] = strdup(names[i]);
		a->unit[i] = strdup(units && units[i] ? units[i] : "");
		if (!a->metric[i] || !a->unit[i]) {
			gt_rm_agg_free(a);
			return -ENOMEM;
		}
	}
	return 0;
}

int gt_rm_agg_set_mode(struct gt_rm_agg *a, int mode, const char *const *units)
{
	a->mode = mode;
	for (int i = 0; i < a->nmetrics; i++) {
		char *u = strdup(units && units[i] ? units[i] : "");
		if (!u)
			return -ENOMEM;
		free(a->unit[i]);
		a->unit[i] = u;
	}
	return 0;
}

void gt_rm_agg_free(struct gt_rm_agg *a)
{
	for (int i = 0; i < a->nmetrics; i++) {
		free(a->metric[i]);
		free(a->unit[i]);
	}
	for (size_t i = 0; i < a->npaths; i++)
		free(a->paths[i].path);
	free(a->paths);
	free(a->hash);
	free(a->occs);
	free(a->stats);
	memset(a, 0, sizeof(*a));
	a->none = -1;
}

static uint64_t hash_key(int32_t parent, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uint32_t)parent;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return h ? h : 1;
}

static int path_matches(const struct gt_rm_path *p, int32_t parent, const char *name, size_t len)
{
	return p->parent == parent && strlen(p->name) == len && memcmp(p->name, name, len) == 0;
}

static int rehash(struct gt_rm_agg *a, size_t cap)
{
	int32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -1;
	for (size_t i = 0; i < a->npaths; i++) {
		const struct gt_rm_path *p = &a->paths[i];
		size_t k = hash_key(p->parent, p->name, strlen(p->name)) & (cap - 1);
		while (h[k])
			k = (k + 1) & (cap - 1);
		h[k] = (int32_t)i + 1;
	}
	free(a->hash);
	a->hash = h;
	a->hash_cap = cap;
	return 0;
}

/* Index of path (parent, name), created when new; -1 when out of memory. */
static int32_t path_of(struct gt_rm_agg *a, int32_t parent, const char *name, size_t len)
{
	if (a->hash_cap == 0 && rehash(a, 64) < 0)
		return -1;
	size_t k = hash_key(parent, name, len) & (a->hash_cap - 1);
	while (a->hash[k]) {
		int32_t i = a->hash[k] - 1;
		if (path_matches(&a->paths[i], parent, name, len))
			return i;
		k = (k + 1) & (a->hash_cap - 1);
	}
	if (a->npaths >= INT32_MAX - 1)
		return -1;
	if (a->npaths == a->cap_paths) {
		size_t nc = a->cap_paths ? 2 * a->cap_paths : 16;
		struct gt_rm_path *np = realloc(a->paths, nc * sizeof(*np));
		if (!np)
			return -1;
		a->paths = np;
		a->cap_paths = nc;
	}
	const char *ppath = parent >= 0 ? a->paths[parent].path : NULL;
	size_t plen = ppath ? strlen(ppath) + 1 : 0;
	char *txt = malloc(plen + len + 1);
	if (!txt)
		return -1;
	if (ppath) {
		memcpy(txt, ppath, plen - 1);
		txt[plen - 1] = '/';
	}
	memcpy(txt + plen, name, len);
	txt[plen + len] = '\0';
	struct gt_rm_path *p = &a->paths[a->npaths];
	p->path = txt;
	p->name = txt + plen;
	p->level = parent >= 0 ? a->paths[parent].level + 1 : 0;
	p->parent = parent;
	p->occurrences = 0;
	int32_t idx = (int32_t)a->npaths++;
	a->hash[k] = idx + 1;
	if (2 * a->npaths > a->hash_cap)
		rehash(a, 2 * a->hash_cap); /* on failure the table stays valid, only fuller */
	return idx;
}

int64_t gt_rm_agg_open(struct gt_rm_agg *a, int64_t parent, const char *name, size_t len)
{
	if (parent >= (int64_t)a->noccs)
		parent = -1;
	int32_t pp = parent >= 0 ? a->occs[parent].path : -1;
	int32_t path = path_of(a, pp, name ? name : "", name ? len : 0);
	if (path < 0)
		goto oom;
	if (a->noccs == a->cap_occs) {
		size_t nc = a->cap_occs ? 2 * a->cap_occs : 64;
		struct gt_rm_occ *no = realloc(a->occs, nc * sizeof(*no));
		if (!no)
			goto oom;
		a->occs = no;
		struct gt_rm_stat *ns = realloc(a->stats, nc * (size_t)(a->nmetrics ? a->nmetrics : 1) * sizeof(*ns));
		if (!ns)
			goto oom;
		a->stats = ns;
		a->cap_occs = nc;
	}
	size_t i = a->noccs++;
	struct gt_rm_occ *o = &a->occs[i];
	o->path = path;
	o->parent = (int32_t)parent;
	o->occurrence = ++a->paths[path].occurrences;
	o->kernels = 0;
	o->open = 1;
	for (int m = 0; m < a->nmetrics; m++)
		a->stats[i * (size_t)a->nmetrics + (size_t)m] = (struct gt_rm_stat){0, -INFINITY, INFINITY, 0};
	return (int64_t)i;
oom:
	a->oom = 1;
	return -1;
}

void gt_rm_agg_close(struct gt_rm_agg *a, int64_t occ)
{
	if (occ >= 0 && occ < (int64_t)a->noccs)
		a->occs[occ].open = 0;
}

/* "(none)": a top-level range of its own, opened once. */
static int64_t resolve(struct gt_rm_agg *a, int64_t occ)
{
	if (occ >= 0 && occ < (int64_t)a->noccs)
		return occ;
	if (a->none < 0) {
		a->none = gt_rm_agg_open(a, -1, GT_RM_NONE, strlen(GT_RM_NONE));
		if (a->none >= 0)
			a->occs[a->none].open = 0;
	}
	return a->none;
}

void gt_rm_agg_kernel(struct gt_rm_agg *a, int64_t occ)
{
	gt_rm_agg_kernel_set(a, &occ, 1);
}

void gt_rm_agg_sample(struct gt_rm_agg *a, int64_t occ, const double *v)
{
	gt_rm_agg_sample_set(a, &occ, 1, v);
}

/* Each occurrence of the set and each one around them, once (the chains may share ancestors). */
static size_t set_closure(struct gt_rm_agg *a, const int64_t *occ, int n, int64_t *out, size_t max)
{
	size_t k = 0;
	if (n <= 0) {
		int64_t o = resolve(a, -1);
		for (; o >= 0 && k < max; o = a->occs[o].parent)
			out[k++] = o;
		return k;
	}
	for (int i = 0; i < n; i++) {
		for (int64_t o = resolve(a, occ[i]); o >= 0 && k < max; o = a->occs[o].parent) {
			int seen = 0;
			for (size_t j = 0; j < k && !seen; j++)
				seen = out[j] == o;
			if (seen)
				break; /* this one and those around it are in already */
			out[k++] = o;
		}
	}
	return k;
}

#define SET_MAX 512

void gt_rm_agg_kernel_set(struct gt_rm_agg *a, const int64_t *occ, int n)
{
	int64_t all[SET_MAX];
	size_t k = set_closure(a, occ, n, all, SET_MAX);
	a->kernels++;
	for (size_t i = 0; i < k; i++)
		a->occs[all[i]].kernels++;
}

void gt_rm_agg_sample_set(struct gt_rm_agg *a, const int64_t *occ, int n, const double *v)
{
	int64_t all[SET_MAX];
	size_t k = set_closure(a, occ, n, all, SET_MAX);
	a->samples++;
	for (size_t i = 0; i < k; i++) {
		struct gt_rm_stat *st = &a->stats[(size_t)all[i] * (size_t)a->nmetrics];
		for (int m = 0; m < a->nmetrics; m++) {
			if (isnan(v[m]))
				continue;
			st[m].sum += v[m];
			if (v[m] > st[m].max)
				st[m].max = v[m];
			if (v[m] < st[m].min)
				st[m].min = v[m];
			st[m].n++;
		}
	}
}

const char *gt_rm_agg_path(const struct gt_rm_agg *a, int64_t occ)
{
	if (occ < 0 || occ >= (int64_t)a->noccs)
		return GT_RM_NONE;
	return a->paths[a->occs[occ].path].path;
}

void gt_rm_agg_occ_stat(const struct gt_rm_agg *a, size_t occ, int metric, struct gt_rm_stat *out)
{
	*out = a->stats[occ * (size_t)a->nmetrics + (size_t)metric];
}

static void fold(int mode, struct gt_rm_stat *r, const struct gt_rm_stat *s)
{
	if (!s->n)
		return;
	if (mode == GT_RM_KERNEL) {
		r->sum += s->sum;
		r->max = s->max > r->max ? s->max : r->max;
		r->min = s->min < r->min ? s->min : r->min;
		r->n += s->n;
	} else { /* over the occurrences' values */
		r->sum += s->sum;
		r->max = s->sum > r->max ? s->sum : r->max;
		r->min = s->sum < r->min ? s->sum : r->min;
		r->n++;
	}
}

void gt_rm_agg_path_stat(const struct gt_rm_agg *a, size_t path, int metric, struct gt_rm_stat *out,
			 uint64_t *kernels)
{
	struct gt_rm_stat r = {0, -INFINITY, INFINITY, 0};
	uint64_t k = 0;
	for (size_t i = 0; i < a->noccs; i++) {
		if (a->occs[i].path != (int32_t)path)
			continue;
		k += a->occs[i].kernels;
		if (metric >= 0 && metric < a->nmetrics)
			fold(a->mode, &r, &a->stats[i * (size_t)a->nmetrics + (size_t)metric]);
	}
	*out = r;
	if (kernels)
		*kernels = k;
}

/* Every path's reductions and kernels in one sweep, and the occurrences grouped by path
 * (first[p]..first[p+1] in order[]), so that writers stay linear in the number of rows. */
struct by_path {
	struct gt_rm_stat *st; /* npaths * nmetrics */
	uint64_t *kernels;
	size_t *first, *order;
};

static void by_path_free(struct by_path *b)
{
	free(b->st);
	free(b->kernels);
	free(b->first);
	free(b->order);
}

static int by_path_build(const struct gt_rm_agg *a, struct by_path *b)
{
	size_t nm = (size_t)a->nmetrics;
	b->st = malloc((a->npaths * nm + 1) * sizeof(*b->st));
	b->kernels = calloc(a->npaths + 1, sizeof(*b->kernels));
	b->first = calloc(a->npaths + 2, sizeof(*b->first));
	b->order = malloc((a->noccs + 1) * sizeof(*b->order));
	if (!b->st || !b->kernels || !b->first || !b->order) {
		by_path_free(b);
		return -1;
	}
	for (size_t i = 0; i < a->npaths * nm; i++)
		b->st[i] = (struct gt_rm_stat){0, -INFINITY, INFINITY, 0};
	for (size_t i = 0; i < a->noccs; i++) {
		size_t p = (size_t)a->occs[i].path;
		b->first[p + 2]++;
		b->kernels[p] += a->occs[i].kernels;
		for (size_t m = 0; m < nm; m++)
			fold(a->mode, &b->st[p * nm + m], &a->stats[i * nm + m]);
	}
	for (size_t p = 0; p < a->npaths; p++)
		b->first[p + 2] += b->first[p + 1];
	for (size_t i = 0; i < a->noccs; i++)
		b->order[b->first[(size_t)a->occs[i].path + 1]++] = i;
	return 0;
}

/* ---- writers ---- */

/* %.17g keeps every bit; integral values print without exponent up to 2^53. */
static void put_num(FILE *f, double v)
{
	if (!isfinite(v))
		return;
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.17g", v);
}

struct red {
	int has[4];
	double v[4]; /* sum, max, mean, min */
};

/* Occurrence rows of per-range mode have only the value (no kernels to reduce over). */
static struct red reduce(const struct gt_rm_stat *s, int value_only)
{
	struct red r;
	memset(&r, 0, sizeof(r));
	if (!s->n)
		return r;
	r.has[0] = 1;
	r.v[0] = s->sum;
	if (value_only)
		return r;
	r.has[1] = r.has[2] = r.has[3] = 1;
	r.v[1] = s->max;
	r.v[2] = s->sum / (double)s->n;
	r.v[3] = s->min;
	return r;
}

static void csv_row(const struct gt_rm_agg *a, FILE *f, const struct gt_rm_path *p, const char *occ, uint64_t kernels,
		    int m, const struct red *r)
{
	gt_csv_put(f, gt_rm_mode_name(a->mode));
	fputc(',', f);
	gt_csv_put(f, p->path);
	fputc(',', f);
	gt_csv_put(f, p->name);
	fprintf(f, ",%" PRIu32 ",%s,%" PRIu64 ",", p->level, occ, kernels);
	gt_csv_put(f, a->metric[m]);
	fputc(',', f);
	gt_csv_put(f, a->unit[m]);
	for (int k = 0; k < 4; k++) {
		fputc(',', f);
		if (r->has[k])
			put_num(f, r->v[k]);
	}
	fputc(',', f);
	if (a->inexact) {
		char why[300];
		snprintf(why, sizeof(why), "no: %s", a->inexact);
		gt_csv_put(f, why);
	} else {
		fputs("yes", f);
	}
	fputc('\n', f);
}

int gt_rm_agg_write_csv(const struct gt_rm_agg *a, FILE *f)
{
	struct by_path bp;
	if (by_path_build(a, &bp) < 0)
		return -1;
	size_t nm = (size_t)a->nmetrics;
	fputs("mode,path,name,level,occurrence,kernels,metric,unit,sum,max,mean,min,exact\n", f);
	int value_only = a->mode == GT_RM_RANGE;
	for (size_t p = 0; p < a->npaths; p++) {
		const struct gt_rm_path *pp = &a->paths[p];
		for (size_t m = 0; m < nm; m++) {
			struct red r = reduce(&bp.st[p * nm + m], 0);
			csv_row(a, f, pp, "all", bp.kernels[p], (int)m, &r);
		}
		for (size_t k = bp.first[p]; k < bp.first[p + 1]; k++) {
			size_t i = bp.order[k];
			char occ[32];
			snprintf(occ, sizeof(occ), "%" PRIu64, a->occs[i].occurrence);
			for (size_t m = 0; m < nm; m++) {
				struct red r = reduce(&a->stats[i * nm + m], value_only);
				csv_row(a, f, pp, occ, a->occs[i].kernels, (int)m, &r);
			}
		}
	}
	by_path_free(&bp);
	return ferror(f) ? -1 : 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_val(FILE *f, int has, double v)
{
	if (has && isfinite(v))
		put_num(f, v);
	else
		fputs("null", f);
}

static void json_values(const struct gt_rm_agg *a, FILE *f, const struct red *r)
{
	static const char *const keys[4] = {"sum", "max", "mean", "min"};
	fputs("\"values\":{", f);
	for (int m = 0; m < a->nmetrics; m++) {
		if (m)
			fputc(',', f);
		json_str(f, a->metric[m]);
		fputs(":{", f);
		for (int k = 0; k < 4; k++) {
			fprintf(f, "%s\"%s\":", k ? "," : "", keys[k]);
			json_val(f, r[m].has[k], r[m].v[k]);
		}
		if (a->inexact)
			fputs(",\"exact\":false", f);
		fputc('}', f);
	}
	fputc('}', f);
}

int gt_rm_agg_write_json(const struct gt_rm_agg *a, const char *replay, FILE *f)
{
	struct red r[GT_RM_MAX_METRICS];
	fputs("{\"mode\":", f);
	json_str(f, gt_rm_mode_name(a->mode));
	if (replay) {
		fputs(",\"replay\":", f);
		json_str(f, replay);
	}
	fputs(",\"exact\":", f);
	fputs(a->inexact ? "false" : "true", f);
	if (a->inexact) {
		fputs(",\"inexact\":", f);
		json_str(f, a->inexact);
	}
	fputs(",\"metrics\":[", f);
	for (int m = 0; m < a->nmetrics; m++) {
		fputs(m ? ",{\"name\":" : "{\"name\":", f);
		json_str(f, a->metric[m]);
		fputs(",\"unit\":", f);
		json_str(f, a->unit[m]);
		fputc('}', f);
	}
	fputs("],\"ranges\":[", f);
	for (size_t i = 0; i < a->noccs; i++) {
		const struct gt_rm_occ *o = &a->occs[i];
		const struct gt_rm_path *p = &a->paths[o->path];
		fputs(i ? ",{\"path\":" : "{\"path\":", f);
		json_str(f, p->path);
		fputs(",\"name\":", f);
		json_str(f, p->name);
		fprintf(f, ",\"level\":%" PRIu32 ",\"occurrence\":%" PRIu64 ",\"kernels\":%" PRIu64 ",\"open\":%s,",
			p->level, o->occurrence, o->kernels, o->open ? "true" : "false");
		for (int m = 0; m < a->nmetrics; m++)
			r[m] = reduce(&a->stats[i * (size_t)a->nmetrics + (size_t)m], a->mode == GT_RM_RANGE);
		json_values(a, f, r);
		fputc('}', f);
	}
	fputs("],\"by_name\":[", f);
	struct by_path bp;
	int ok = by_path_build(a, &bp) == 0;
	size_t nm = (size_t)a->nmetrics;
	for (size_t p = 0; ok && p < a->npaths; p++) {
		const struct gt_rm_path *pp = &a->paths[p];
		for (size_t m = 0; m < nm; m++)
			r[m] = reduce(&bp.st[p * nm + m], 0);
		fputs(p ? ",{\"path\":" : "{\"path\":", f);
		json_str(f, pp->path);
		fputs(",\"name\":", f);
		json_str(f, pp->name);
		fprintf(f, ",\"level\":%" PRIu32 ",\"occurrences\":%" PRIu64 ",\"kernels\":%" PRIu64 ",", pp->level,
			pp->occurrences, bp.kernels[p]);
		json_values(a, f, r);
		fputc('}', f);
	}
	if (ok)
		by_path_free(&bp);
	fprintf(f,
		"],\"dropped_ranges\":%" PRIu64 ",\"kernels\":%" PRIu64 ",\"unmeasured_kernels\":%" PRIu64
		",\"partial\":%s}",
		a->dropped_ranges, a->kernels, a->unmeasured, a->oom || !ok ? "true" : "false");
	return ferror(f) ? -1 : 0;
}

int gt_rm_kernel_csv_header(const struct gt_rm_agg *a, FILE *f)
{
	fputs("launch,kernel,range,grid,block,stream,device,thread", f);
	for (int m = 0; m < a->nmetrics; m++) {
		char col[GT_RM_NAME_MAX + 64];
		if (a->unit[m][0])
			snprintf(col, sizeof(col), "%s (%s)", a->metric[m], a->unit[m]);
		else
			snprintf(col, sizeof(col), "%s", a->metric[m]);
		fputc(',', f);
		gt_csv_put(f, col);
	}
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

int gt_rm_kernel_csv_row(const struct gt_rm_agg *a, const struct gt_rm_kinfo *k, const double *v, FILE *f)
{
	char buf[1024];
	fprintf(f, "%" PRIu64 ",", k->launch);
	gt_csv_put(f, gt_demangle_to(k->name ? k->name : "", buf, sizeof(buf)));
	fputc(',', f);
	gt_csv_put(f, k->range ? k->range : GT_RM_NONE);
	fprintf(f, ",\"%u,%u,%u\",\"%u,%u,%u\",%u,%u,%u", k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
		k->block[2], k->stream, k->device, k->tid);
	for (int m = 0; m < a->nmetrics; m++) {
		fputc(',', f);
		if (v && !isnan(v[m]))
			put_num(f, v[m]);
	}
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

/* ---- matching ranges to launches ---- */

/* The function's name alone: no "void ", no parameter list, no template arguments, no scope. */
static size_t base_name(const char *s, const char **out)
{
	if (strncmp(s, "void ", 5) == 0)
		s += 5;
	size_t n = strlen(s);
	const char *paren = strchr(s, '(');
	if (paren)
		n = (size_t)(paren - s);
	const char *lt = memchr(s, '<', n);
	if (lt)
		n = (size_t)(lt - s);
	const char *b = s;
	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == ':' && s[i + 1] == ':')
			b = s + i + 2;
	*out = b;
	return n - (size_t)(b - s);
}

static int names_match(const char *launch, const char *range)
{
	if (!launch || !range)
		return 0;
	if (strcmp(launch, range) == 0)
		return 1;
	char buf[2048];
	const char *d = gt_demangle_to(launch, buf, sizeof(buf));
	if (strcmp(d, range) == 0)
		return 1;
	const char *bl, *br;
	size_t nl = base_name(d, &bl), nr = base_name(range, &br);
	return nl && nl == nr && memcmp(bl, br, nl) == 0;
}

/* Auto-range names are the range's index in its chunk ("0", "1", ...): then a gap is a dropped range. */
static int numeric_names(const char *const *range, size_t nrange, size_t nlaunch)
{
	long prev = -1;
	for (size_t k = 0; k < nrange; k++) {
		const char *r = range[k];
		char *end = NULL;
		if (!r || !*r || *r < '0' || *r > '9')
			return 0;
		long v = strtol(r, &end, 10);
		if (*end || v <= prev || (size_t)v >= nlaunch)
			return 0;
		prev = v;
	}
	return 1;
}

size_t gt_rm_align(const char *const *launch, size_t nlaunch, const char *const *range, size_t nrange,
		   int64_t *map)
{
	if (nlaunch == nrange) {
		for (size_t i = 0; i < nlaunch; i++)
			map[i] = (int64_t)i;
		return nlaunch;
	}
	if (nrange && numeric_names(range, nrange, nlaunch)) {
		for (size_t i = 0; i < nlaunch; i++)
			map[i] = -1;
		for (size_t k = 0; k < nrange; k++)
			map[strtol(range[k], NULL, 10)] = (int64_t)k;
		return nrange;
	}
	size_t matched = 0, j = 0;
	for (size_t i = 0; i < nlaunch; i++) {
		map[i] = -1;
		for (size_t k = j; k < nrange && k < j + 64; k++) {
			if (names_match(launch[i], range[k])) {
				map[i] = (int64_t)k;
				j = k + 1;
				matched++;
				break;
			}
		}
	}
	return matched;
}
