/* What launch hold did, from traces: see export/holdstat.h. */
#include "export/holdstat.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/sort.h"

void gt_holdstat_init(struct gt_holdstat *s)
{
	memset(s, 0, sizeof(*s));
	gt_vec_init(&s->sizes, sizeof(uint32_t));
	gt_vec_init(&s->lat_held, sizeof(double));
	gt_vec_init(&s->lat_rel, sizeof(double));
	gt_vec_init(&s->lat_not, sizeof(double));
}

static void maps_free(struct gt_holdstat *s)
{
	gt_map_free(&s->api_end);
	gt_map_free(&s->held_issue);
	gt_map_free(&s->kstart);
	memset(&s->api_end, 0, sizeof(s->api_end));
	memset(&s->held_issue, 0, sizeof(s->held_issue));
	memset(&s->kstart, 0, sizeof(s->kstart));
}

void gt_holdstat_free(struct gt_holdstat *s)
{
	maps_free(s);
	gt_vec_free(&s->sizes);
	gt_vec_free(&s->lat_held);
	gt_vec_free(&s->lat_rel);
	gt_vec_free(&s->lat_not);
}

static void trigger(struct gt_holdstat *s, const char *name)
{
	for (int i = 0; i < s->ntrig; i++)
		if (strcmp(s->trig[i].name, name) == 0) {
			s->trig[i].n++;
			return;
		}
	if (s->ntrig == GT_HOLDSTAT_TRIGGERS) {
		s->trig_other++;
		return;
	}
	snprintf(s->trig[s->ntrig].name, sizeof(s->trig[0].name), "%s", name);
	s->trig[s->ntrig++].n = 1;
}

static int is_launch(const char *n)
{
	return strcmp(n, "cuLaunchKernel") == 0 || strcmp(n, "cuLaunchKernelEx") == 0 ||
	       strcmp(n, "cuLaunchCooperativeKernel") == 0;
}

static int put(struct gt_map *m, uint64_t k, uint64_t v, int keep_first)
{
	int is_new = 0;
	uint64_t *p = gt_map_put(m, k, &is_new);
	if (!p)
		return -1;
	if (is_new || !keep_first)
		*p = v;
	return 0;
}

static void counter(struct gt_holdstat *s, const char *name, double v)
{
	uint64_t u = v > 0 ? (uint64_t)v : 0;
	if (strcmp(name, "batch") == 0)
		s->batch = (long)v > s->batch ? (long)v : s->batch;
	else if (strcmp(name, "timeout_us") == 0)
		s->timeout_us = (long)v;
	else if (strcmp(name, "held") == 0)
		s->held += u;
	else if (strcmp(name, "not_held") == 0)
		s->not_held += u;
	else if (strcmp(name, "failed") == 0)
		s->failed += u;
	else if (strncmp(name, "not_held.", 9) == 0) {
		int k = gt_hold_refusal_of_key(name + 9);
		if (k >= 0)
			s->refused[k] += u;
	}
}

static int hs_hold(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_hold *x)
{
	struct gt_holdstat *s = ctx;
	s->seen = s->collecting = 1;
	if (x->kind == GT_HOLD_REC_LAUNCH)
		return x->corr_id ? put(&s->held_issue, x->corr_id, x->end_ns, 0) : 0;
	if (x->kind != GT_HOLD_REC_RELEASE)
		return 0;
	s->releases++;
	s->released += x->count;
	if (x->count > s->max_batch)
		s->max_batch = x->count;
	uint32_t *z = gt_vec_push(&s->sizes);
	if (!z)
		return -1;
	*z = x->count;
	const char *api = x->api_id ? gt_tr_str(r, x->api_id) : "";
	int k = gt_hold_reason_of_key(gt_tr_str(r, x->reason_id));
	trigger(s, api[0] ? api : k >= 0 ? gt_hold_reason_names[k] : gt_tr_str(r, x->reason_id));
	return 0;
}

static int hs_counter(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_counter *c)
{
	struct gt_holdstat *s = ctx;
	const char *n = gt_tr_str(r, c->name_id);
	if (strncmp(n, "hold.", 5) != 0)
		return 0;
	s->seen = 1;
	counter(s, n + 5, c->value);
	return 0;
}

static int hs_api(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_api *a)
{
	struct gt_holdstat *s = ctx;
	if (a->flags & GT_API_HELD)
		s->seen = s->collecting = 1;
	if (!s->collecting || !a->corr_id || !is_launch(gt_tr_str(r, a->name_id)))
		return 0;
	return put(&s->api_end, a->corr_id, a->end_ns, 0);
}

static int hs_kernel(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_kernel *k)
{
	(void)r;
	struct gt_holdstat *s = ctx;
	if (!s->collecting || !k->corr_id)
		return 0;
	return put(&s->kstart, k->corr_id, k->start_ns, 1);
}

const struct gt_trace_ops gt_holdstat_ops = {.api = hs_api, .kernel = hs_kernel, .counter = hs_counter, .hold = hs_hold};

static int push_us(struct gt_vec *v, uint64_t later, uint64_t earlier)
{
	double *d = gt_vec_push(v);
	if (!d)
		return -1;
	*d = ((double)later - (double)earlier) / 1e3;
	return 0;
}

int gt_holdstat_end_trace(struct gt_holdstat *s)
{
	int rc = 0;
	for (size_t i = 0; i < s->api_end.cap && rc == 0; i++) {
		uint64_t corr = s->api_end.keys ? s->api_end.keys[i] : 0;
		if (!corr)
			continue;
		uint64_t *ks = gt_map_get(&s->kstart, corr);
		if (!ks)
			continue;
		uint64_t end = s->api_end.vals[i];
		uint64_t *issued = gt_map_get(&s->held_issue, corr);
		if (issued) {
			rc = push_us(&s->lat_held, *ks, end);
			if (rc == 0)
				rc = push_us(&s->lat_rel, *ks, *issued);
		} else {
			rc = push_us(&s->lat_not, *ks, end);
		}
	}
	maps_free(s);
	s->collecting = 0;
	return rc;
}

double gt_holdstat_at(const struct gt_vec *v, double q)
{
	if (!v->n)
		return 0;
	size_t i = (size_t)(q * (double)(v->n - 1) + 0.5);
	return GT_VEC_AT(v, double, i < v->n ? i : v->n - 1);
}

static void lat(FILE *f, const char *what, const struct gt_vec *v)
{
	if (v->n)
		fprintf(f, "%s %.1f (%.1f)", what, gt_holdstat_at(v, 0.5), gt_holdstat_at(v, 0.95));
}

static int cmp_trig(const void *a, const void *b)
{
	const struct gt_holdstat_trig *x = a, *y = b;
	return x->n > y->n ? -1 : x->n < y->n;
}

void gt_holdstat_sort(struct gt_holdstat *s)
{
	gt_sort(s->trig, (size_t)s->ntrig, sizeof(s->trig[0]), cmp_trig);
	gt_sort(s->sizes.v, s->sizes.n, sizeof(uint32_t), gt_cmp_u32);
	struct gt_vec *v[] = {&s->lat_held, &s->lat_rel, &s->lat_not};
	for (int i = 0; i < 3; i++)
		gt_sort(v[i]->v, v[i]->n, sizeof(double), gt_cmp_double);
}

/* items separated by ", ", wrapped at 78 columns with an indent of 4 */
struct line {
	FILE *f;
	int col, n;
};

static void item(struct line *l, const char *text)
{
	int len = (int)strlen(text);
	if (l->n && l->col + 2 + len > 78) {
		fputs(",\n    ", l->f);
		l->col = 4;
	} else if (l->n) {
		fputs(", ", l->f);
		l->col += 2;
	}
	fputs(text, l->f);
	l->col += len;
	l->n++;
}

void gt_holdstat_print(FILE *f, const struct gt_holdstat *s)
{
	if (!s->seen)
		return;
	char b[160];
	fprintf(f, "\nLaunch hold");
	if (s->batch)
		fprintf(f, " (batches of %ld, released after %ld us at most)", s->batch, s->timeout_us);
	int n = snprintf(b, sizeof(b), "  launches held %" PRIu64 ", not held %" PRIu64, s->held, s->not_held);
	fprintf(f, "\n%s", b);
	struct line l = {f, n, 0};
	for (int i = 0; i < GT_HOLD_NREFUSALS; i++) {
		if (!s->refused[i])
			continue;
		snprintf(b, sizeof(b), "%s%s %" PRIu64, l.n ? "" : ": ", gt_hold_refusal_names[i], s->refused[i]);
		item(&l, b);
	}
	n = snprintf(b, sizeof(b), "  releases %" PRIu64, s->releases);
	fprintf(f, "\n%s", b);
	l = (struct line){f, n, 0};
	uint64_t more = s->trig_other;
	for (int i = 0; i < s->ntrig; i++) {
		if (i >= 8) {
			more += s->trig[i].n;
			continue;
		}
		snprintf(b, sizeof(b), "%s%s %" PRIu64, l.n ? "" : ": ", s->trig[i].name, s->trig[i].n);
		item(&l, b);
	}
	if (more) {
		snprintf(b, sizeof(b), "others %" PRIu64, more);
		item(&l, b);
	}
	fputc('\n', f);
	if (s->sizes.n)
		fprintf(f, "  batch size median %u, max %" PRIu64 "; failed when issued %" PRIu64 "\n",
			GT_VEC_AT(&s->sizes, uint32_t, s->sizes.n / 2), s->max_batch, s->failed);
	if (s->lat_held.n || s->lat_not.n) {
		fputs("  launch to kernel start, us, median (p95):\n   ", f);
		lat(f, " held", &s->lat_held);
		lat(f, ", from their release", &s->lat_rel);
		lat(f, s->lat_held.n ? "; not held" : " not held", &s->lat_not);
		fputc('\n', f);
	}
}
