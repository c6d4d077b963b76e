/*
 * fleet/reduce.c — the cross-rank answers from every task's rows (docs/fleet.md defines every
 * number): rank numbers and clocks, collectives matched across ranks, each host's clock offset, who
 * arrived late at each collective and by how much, why, and what it cost the others; then the three
 * tables (ranks, iterations, collectives) and the summary (summary.json's object).
 *
 * Everything is per rank, per rank and iteration, or per collective and rank: the traces never get
 * here.  Rows are sorted so that each group (a collective, a rank, an iteration) is contiguous, and
 * every group statistic is one pass over it; ties are broken as a stable sort over the rows' order
 * would, so that the answers do not depend on which batch finished first.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "core/containers.h"
#include "core/sort.h"
#include "fleet/fleet.h"
#include "fleet/reduce_int.h"
#include "fleet/table.h"

void *fl_xcalloc(struct red *r, size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	if (!p)
		r->oom = 1;
	return p;
}

void fl_add_note(struct red *r, struct gt_vec *v, const char *path, const char *text, const char *label)
{
	struct note *n = gt_vec_push(v);
	if (!n) {
		r->oom = 1;
		return;
	}
	n->path = strdup(path ? path : "");
	n->text = strdup(text ? text : "");
	n->label = label ? strdup(label) : NULL;
	if (!n->path || !n->text || (label && !n->label))
		r->oom = 1;
}

void fl_warn(struct red *r, const char *fmt, ...)
{
	char b[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	fl_add_note(r, &r->warnings, "", b, NULL);
}

/* ---- the vocabulary: the collectives' strings, sorted, with "" and "(order)" ----------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int vocab(struct red *r, int **remap)
{
	const fl_rows *w = r->rows;
	size_t n = w->nstrings + 2;
	r->voc = fl_xcalloc(r, n, sizeof(char *));
	*remap = fl_xcalloc(r, w->nstrings + 1, sizeof(int));
	if (r->oom)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < w->nstrings; i++)
		r->voc[k++] = w->strings[i];
	r->voc[k++] = (char *)"";
	r->voc[k++] = (char *)"(order)";
	gt_sort(r->voc, k, sizeof(char *), cmp_str);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || strcmp(r->voc[u - 1], r->voc[i]) != 0)
			r->voc[u++] = r->voc[i];
	r->nvoc = u;
	for (size_t i = 0; i < w->nstrings; i++) {
		char **hit = bsearch(&w->strings[i], r->voc, u, sizeof(char *), cmp_str);
		(*remap)[i] = hit ? (int)(hit - r->voc) : 0;
	}
	const char *e = "", *o = "(order)";
	r->empty = (int)((char **)bsearch(&e, r->voc, u, sizeof(char *), cmp_str) - r->voc);
	r->order = (int)((char **)bsearch(&o, r->voc, u, sizeof(char *), cmp_str) - r->voc);
	return 0;
}

/* ---- statuses, rank numbers, clocks ----------------------------------------------------------- */

static long label_rank(const char *lab)
{
	/* re.match(r"rank(\d+)/", label) */
	if (strncmp(lab, "rank", 4) != 0)
		return -1;
	const char *s = lab + 4, *e = s;
	while (*e >= '0' && *e <= '9')
		e++;
	if (e == s || *e != '/' || e - s > 17)
		return -1;
	return strtol(s, NULL, 10);
}

static int cmp_rankrow_task(const void *a, const void *b)
{
	const fl_rankrow *x = *(const fl_rankrow *const *)a, *y = *(const fl_rankrow *const *)b;
	return x->task < y->task ? -1 : x->task > y->task ? 1 : (x < y ? -1 : x > y);
}

static int cmp_rank_num(const void *ctx, int64_t a, int64_t b)
{
	const struct rank *rk = ctx;
	return rk[a].rank < rk[b].rank ? -1 : rk[a].rank > rk[b].rank;
}

static int prepare_ranks(struct red *r)
{
	const fl_rows *w = r->rows;
	const fl_plan *p = r->p;
	for (size_t i = 0; i < p->nfailed; i++)
		fl_add_note(r, &r->failed, p->failed[i].path, p->failed[i].error, NULL);
	const fl_rankrow **rows = fl_xcalloc(r, w->nranks, sizeof(*rows));
	if (!rows)
		return -1;
	for (size_t i = 0; i < w->nranks; i++)
		rows[i] = &w->ranks[i];
	gt_sort(rows, w->nranks, sizeof(*rows), cmp_rankrow_task);
	size_t ngood = 0;
	for (size_t i = 0; i < w->nranks; i++) {
		const fl_rankrow *x = rows[i];
		if (x->task < 0 || (size_t)x->task >= p->ntasks)
			continue;
		const fl_task *t = &p->tasks[x->task];
		if (x->status == FL_FAILED)
			fl_add_note(r, &r->failed, t->path, x->message, NULL);
		else if (x->status == FL_SKIPPED)
			fl_add_note(r, &r->skipped, t->path, x->message, NULL);
		else if (x->status == FL_PARTIAL)
			fl_add_note(r, &r->partial, t->path, x->message && x->message[0] ? x->message : "the trace is partial",
				 x->label);
		else
			rows[ngood++] = x;
	}
	struct rank *rk = fl_xcalloc(r, ngood, sizeof(*rk));
	int64_t *want = fl_xcalloc(r, ngood, sizeof(int64_t));
	int *got = fl_xcalloc(r, ngood, sizeof(int));
	struct gt_map used = {0};
	if (r->oom)
		goto out;
	for (size_t i = 0; i < ngood; i++) {
		const fl_task *t = &p->tasks[rows[i]->task];
		want[i] = t->rank >= 0 ? t->rank : label_rank(rows[i]->label ? rows[i]->label : "");
	}
	for (size_t i = 0; i < ngood; i++) {
		int fresh = 0;
		if (want[i] < 0)
			continue;
		uint64_t *v = gt_map_put(&used, (uint64_t)want[i] + 1, &fresh);
		if (!v) {
			r->oom = 1;
			goto out;
		}
		if (fresh) {
			got[i] = 1;
			rk[i].rank = want[i];
		}
	}
	int64_t nxt = 0;
	size_t nclash = 0;
	char clash[5][256];
	for (size_t i = 0; i < ngood; i++) {
		if (got[i])
			continue;
		if (want[i] >= 0) {
			if (nclash < 5)
				snprintf(clash[nclash], sizeof(clash[0]), "%s", p->tasks[rows[i]->task].path);
			nclash++;
		}
		while (gt_map_get(&used, (uint64_t)nxt + 1))
			nxt++;
		int fresh;
		if (!gt_map_put(&used, (uint64_t)nxt + 1, &fresh)) {
			r->oom = 1;
			goto out;
		}
		rk[i].rank = nxt;
	}
	if (nclash) {
		char list[1400] = "";
		for (size_t i = 0; i < nclash && i < 5; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", clash[i]);
		fl_warn(r, "%zu inputs claimed a rank number another input has; renumbered: %s", nclash, list);
	}
	for (size_t i = 0; i < ngood; i++) {
		const fl_rankrow *x = rows[i];
		const fl_task *t = &p->tasks[x->task];
		struct rank *k = &rk[i];
		k->task = x->task;
		k->host = t->host ? t->host : "";
		k->path = t->path;
		k->label = x->label ? x->label : "";
		k->has_anchor = t->has_anchor;
		k->anchor = t->anchor_ns;
		k->gpus = x->gpus;
		k->iterations = x->iterations;
		k->first_ns = x->first_ns;
		k->last_ns = x->last_ns;
		memcpy(k->w, x->w, sizeof(k->w));
	}
	/* rank order (stable) */
	int64_t *o = fl_xcalloc(r, ngood, sizeof(int64_t));
	struct rank *sorted = fl_xcalloc(r, ngood, sizeof(*sorted));
	if (r->oom) {
		free(o);
		free(sorted);
		goto out;
	}
	fl_iota(o, ngood);
	fl_msort(o, ngood, cmp_rank_num, rk);
	for (size_t i = 0; i < ngood; i++)
		sorted[i] = rk[o[i]];
	free(o);
	free(rk);
	rk = sorted;
	/* clocks: the host, else the rank's own; numbered in order of their first rank */
	r->off = fl_xcalloc(r, ngood, sizeof(double));
	r->fit = fl_xcalloc(r, ngood, sizeof(struct clockfit));
	size_t nclk = 0;
	for (size_t i = 0; i < ngood && !r->oom; i++) {
		struct rank *k = &rk[i];
		if (k->host[0]) {
			k->clock_name = k->host;
		} else {
			snprintf(k->clockbuf, sizeof(k->clockbuf), "rank%lld", (long long)k->rank);
			k->clock_name = k->clockbuf;
		}
		k->clock = -1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(rk[j].clock_name, k->clock_name) == 0) {
				k->clock = rk[j].clock;
				break;
			}
		if (k->clock < 0)
			k->clock = (int)nclk++;
	}
	r->nclk = nclk;
	r->rk = rk;
	r->nr = ngood;
	rk = NULL;
out:
	free(rk);
	free(rows);
	free(want);
	free(got);
	gt_map_free(&used);
	return r->oom ? -1 : 0;
}

/* A rank's name of its clock, for the clock's number (the first rank of that clock). */
const char *fl_clock_name(const struct red *r, int clk)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->rk[i].clock == clk)
			return r->rk[i].clock_name;
	return "";
}

static int prepare_rows(struct red *r, const int *remap)
{
	const fl_rows *w = r->rows;
	int *of_task = fl_xcalloc(r, r->p->ntasks + 1, sizeof(int));
	if (!of_task)
		return -1;
	for (size_t i = 0; i <= r->p->ntasks; i++)
		of_task[i] = -1;
	for (size_t i = 0; i < r->nr; i++)
		of_task[r->rk[i].task] = (int)i;
#define RI(t) ((t) >= 0 && (size_t)(t) < r->p->ntasks ? of_task[t] : -1)
	size_t ni = 0, nc = 0;
	for (size_t i = 0; i < w->niters; i++)
		ni += RI(w->iters[i].task) >= 0;
	for (size_t i = 0; i < w->ncolls; i++)
		nc += RI(w->colls[i].task) >= 0;
	r->it = fl_xcalloc(r, ni, sizeof(struct iter));
	r->c = fl_xcalloc(r, nc, sizeof(struct coll));
	if (r->oom) {
		free(of_task);
		return -1;
	}
	/* rows in task order, as the ranks' statuses: the answers do not depend on which batch came first */
	int64_t *o = fl_xcalloc(r, w->niters > w->ncolls ? w->niters : w->ncolls, sizeof(int64_t));
	if (!o) {
		free(of_task);
		return -1;
	}
	fl_iota(o, w->niters);
	fl_msort(o, w->niters, fl_cmp_iter_task, w->iters);
	size_t k = 0;
	for (size_t q = 0; q < w->niters; q++) {
		const fl_iterrow *x = &w->iters[o[q]];
		int ri = RI(x->task);
		if (ri < 0)
			continue;
		struct iter *y = &r->it[k++];
		y->ri = ri;
		y->rank = r->rk[ri].rank;
		y->iteration = x->iteration;
		y->start_ns = x->start_ns;
		y->first_ns = x->first_ns;
		y->last_ns = x->last_ns;
		memcpy(y->w, x->w, sizeof(y->w));
	}
	r->ni = k;
	fl_iota(o, w->ncolls);
	fl_msort(o, w->ncolls, fl_cmp_coll_task, w->colls);
	k = 0;
	int64_t base = INT64_MAX;
	for (size_t q = 0; q < w->ncolls; q++) {
		const fl_collrow *x = &w->colls[o[q]];
		int ri = RI(x->task);
		if (ri < 0)
			continue;
		struct coll *y = &r->c[k++];
		y->ri = ri;
		y->rank = r->rk[ri].rank;
		y->clock = r->rk[ri].clock;
#define MAP(f) y->f = x->f >= 0 && (size_t)x->f < w->nstrings ? remap[x->f] : r->empty;
		MAP(comm) MAP(name) MAP(algo) MAP(proto) MAP(match) MAP(dtype)
#undef MAP
		y->device = x->device;
		y->seq = x->seq;
		y->count = x->count;
		y->bytes = x->bytes;
		y->iteration = x->iteration;
		y->start = x->start_ns;
		y->end = x->end_ns;
		y->launch = x->launch_ns;
		if (x->start_ns < base)
			base = x->start_ns;
	}
#undef RI
	r->nc = k;
	r->base = k ? base : 0;
	/* times relative to the first one: a double of ns since the epoch is only good to 256 ns */
	for (size_t i = 0; i < r->nc; i++) {
		struct coll *y = &r->c[i];
		y->start = fl_sub(y->start, r->base);
		y->end = fl_sub(y->end, r->base);
		y->launch_ok = y->launch > 0;
		y->launch = y->launch_ok ? fl_sub(y->launch, r->base) : 0;
	}
	free(o);
	free(of_task);
	return 0;
}

/* ---- matching the collectives across ranks ----------------------------------------------------- */

static int cmp_launch(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	int64_t tx = x->launch_ok ? x->launch : x->start, ty = y->launch_ok ? y->launch : y->start;
	FL_CMP(x->rank, y->rank);
	FL_CMP(x->device, y->device);
	FL_CMP(tx, ty);
	FL_CMP(x->seq, y->seq);
	return 0;
}

static int cmp_launch_in_rank(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	int64_t tx = x->launch_ok ? x->launch : x->start, ty = y->launch_ok ? y->launch : y->start;
	FL_CMP(x->device, y->device);
	FL_CMP(tx, ty);
	FL_CMP(x->seq, y->seq);
	return 0;
}

static int cmp_known(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	FL_CMP(x->ordinal, y->ordinal);
	FL_CMP(x->comm, y->comm);
	FL_CMP(x->name, y->name);
	FL_CMP(x->seq, y->seq);
	return 0;
}

struct kgroup {
	int64_t ordinal, n, first, gidx;
	int name;
};

static int cmp_kgroup(const void *ctx, int64_t a, int64_t b)
{
	const struct kgroup *g = ctx, *x = &g[a], *y = &g[b];
	FL_CMP(x->ordinal, y->ordinal);
	FL_CMP(x->name, y->name);
	FL_CMP(y->n, x->n);
	FL_CMP(x->gidx, y->gidx);
	return 0;
}

static int cmp_key(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	FL_CMP(x->comm, y->comm);
	FL_CMP(x->name, y->name);
	FL_CMP(x->seq, y->seq);
	return 0;
}

/* The rows by (comm, name, seq), stably: three counting sorts, the last key first (the keys are
 * small: numbers into the vocabulary, and sequence numbers).  -1: a key's range is too wide or no
 * memory (o unchanged: the caller sorts by comparison). */
static int radix_key(struct red *r, int64_t *o, size_t n)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		lo = r->c[i].seq < lo ? r->c[i].seq : lo;
		hi = r->c[i].seq > hi ? r->c[i].seq : hi;
	}
	if (!n || (uint64_t)hi - (uint64_t)lo > 4 * n + 1024)
		return -1;
	int64_t *key = malloc(n * sizeof(int64_t)), *keep = malloc(n * sizeof(int64_t));
	int rc = -1;
	if (!key || !keep)
		goto out;
	memcpy(keep, o, n * sizeof(int64_t));
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < n; i++)
			key[i] = pass == 0 ? fl_sub(r->c[i].seq, lo) : pass == 1 ? r->c[i].name : r->c[i].comm;
		if (fl_bucket_sort(o, n, key, pass == 0 ? (size_t)((uint64_t)hi - (uint64_t)lo + 1) : r->nvoc, NULL, NULL)) {
			memcpy(o, keep, n * sizeof(int64_t));
			goto out;
		}
	}
	rc = 0;
out:
	free(key);
	free(keep);
	return rc;
}

static int permute_colls(struct red *r, const int64_t *o, size_t n)
{
	/* into the scratch rows, which then swap with the rows: no fresh memory per permutation */
	if (!r->scratch && !(r->scratch = fl_xcalloc(r, r->nc, sizeof(struct coll))))
		return -1;
	for (size_t i = 0; i < n; i++)
		r->scratch[i] = r->c[o[i]];
	struct coll *c = r->c;
	r->c = r->scratch;
	r->scratch = c;
	r->nc = n;
	return 0;
}

/* o sorted stably by (the rows' key field, then cmp); falls back to one comparison sort. */
static void sort_by(struct red *r, int64_t *o, size_t n, size_t nkeys, int which, fl_cmp_fn rest, fl_cmp_fn all)
{
	int64_t *key = malloc((n + 1) * sizeof(int64_t));
	if (key) {
		for (size_t i = 0; i < n; i++)
			key[i] = which == 0 ? r->c[i].k : r->c[i].ri;
		if (fl_bucket_sort(o, n, key, nkeys, rest, r->c) == 0) {
			free(key);
			return;
		}
		free(key);
	}
	fl_msort(o, n, all, r->c);
}

/* Every row gets a (comm, name, seq) key equal on every rank for one collective: rows from NCCL's
 * profiler plugin or the trace's arguments have it; rows numbered by order take the key of the
 * collective of their kind at the same position in the ranks that have keys (of several, the one
 * most ranks have there; of equally many, the first in sorted order), else their position among the
 * rank's collectives of that kind.  Then k numbers the keys in sorted order. */
static int match_collectives(struct red *r)
{
	size_t n = r->nc;
	if (!n)
		return 0;
	int64_t *o = fl_xcalloc(r, n, sizeof(int64_t));
	if (!o)
		return -1;
	fl_iota(o, n);
	sort_by(r, o, n, r->nr, 1, cmp_launch_in_rank, cmp_launch); /* ri follows rank */
	if (permute_colls(r, o, n)) {
		free(o);
		return -1;
	}
	struct coll *c = r->c;
	int any_unknown = 0, any_known = 0;
	for (size_t i = 0; i < n; i++) {
		c[i].ordinal = (i && c[i].rank == c[i - 1].rank && c[i].device == c[i - 1].device) ? c[i - 1].ordinal + 1 : 0;
		if (c[i].comm == r->empty)
			any_unknown = 1;
		else
			any_known = 1;
	}
	if (any_unknown) {
		/* by_kind: the position among the rank's (and device's) collectives of that name */
		int64_t *cnt = fl_xcalloc(r, r->nvoc, sizeof(int64_t));
		int64_t *by_kind = fl_xcalloc(r, n, sizeof(int64_t));
		if (r->oom) {
			free(cnt);
			free(by_kind);
			free(o);
			return -1;
		}
		size_t s = 0;
		while (s < n) {
			size_t e = s;
			while (e < n && c[e].rank == c[s].rank && c[e].device == c[s].device)
				e++;
			for (size_t i = s; i < e; i++)
				by_kind[i] = cnt[c[i].name]++;
			for (size_t i = s; i < e; i++)
				cnt[c[i].name] = 0;
			s = e;
		}
		free(cnt);
		struct kgroup *best = NULL;
		size_t nbest = 0;
		if (any_known) {
			size_t nk = 0;
			for (size_t i = 0; i < n; i++)
				if (c[i].comm != r->empty)
					o[nk++] = (int64_t)i;
			fl_msort(o, nk, cmp_known, c);
			struct kgroup *g = fl_xcalloc(r, nk, sizeof(*g));
			int64_t *go = fl_xcalloc(r, nk, sizeof(int64_t));
			if (r->oom) {
				free(g);
				free(go);
				free(by_kind);
				free(o);
				return -1;
			}
			size_t ng = 0;
			for (size_t q = 0; q < nk; q++) {
				if (!q || cmp_known(c, o[q - 1], o[q]) != 0) {
					g[ng] = (struct kgroup){c[o[q]].ordinal, 0, o[q], (int64_t)ng, c[o[q]].name};
					ng++;
				}
				g[ng - 1].n++;
			}
			fl_iota(go, ng);
			fl_msort(go, ng, cmp_kgroup, g);
			best = fl_xcalloc(r, ng, sizeof(*best));
			if (!best) {
				free(g);
				free(go);
				free(by_kind);
				free(o);
				return -1;
			}
			for (size_t q = 0; q < ng; q++) {
				const struct kgroup *x = &g[go[q]];
				if (nbest && best[nbest - 1].ordinal == x->ordinal && best[nbest - 1].name == x->name)
					continue;
				best[nbest++] = *x;
			}
			free(g);
			free(go);
		}
		for (size_t i = 0; i < n; i++) {
			if (c[i].comm != r->empty)
				continue;
			/* best is sorted by (ordinal, name) */
			size_t lo = 0, hi = nbest;
			while (lo < hi) {
				size_t m = (lo + hi) / 2;
				if (best[m].ordinal < c[i].ordinal ||
				    (best[m].ordinal == c[i].ordinal && best[m].name < c[i].name))
					lo = m + 1;
				else
					hi = m;
			}
			if (lo < nbest && best[lo].ordinal == c[i].ordinal && best[lo].name == c[i].name) {
				const struct coll *ref = &c[best[lo].first];
				c[i].comm = ref->comm;
				c[i].seq = ref->seq;
			} else {
				c[i].comm = r->order;
				c[i].seq = by_kind[i];
			}
		}
		/* the rows given a key above kept their own comm until all were done: the key's row is a known one */
		free(best);
		free(by_kind);
	}
	/* k: the keys' number in sorted order */
	fl_iota(o, n);
	if (radix_key(r, o, n))
		fl_msort(o, n, cmp_key, c);
	int64_t k = -1;
	for (size_t q = 0; q < n; q++) {
		if (!q || cmp_key(c, o[q - 1], o[q]) != 0)
			k++;
		c[o[q]].k = k;
	}
	r->ng = (size_t)(k + 1);
	free(o);
	return 0;
}

static int cmp_rank_dev(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	FL_CMP(x->rank, y->rank);
	FL_CMP(x->device, y->device);
	return 0;
}

static int cmp_k_rank_dev(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	FL_CMP(x->k, y->k);
	FL_CMP(x->rank, y->rank);
	FL_CMP(x->device, y->device);
	return 0;
}

/* One row per collective and GPU: a second row of a GPU with the same key (a trace that numbers its
 * collectives wrongly) would count that GPU twice; the first in launch order is kept. */
static int once_per_gpu(struct red *r)
{
	size_t n = r->nc;
	if (!n)
		return 0;
	int64_t *o = fl_xcalloc(r, n, sizeof(int64_t));
	char *keep = fl_xcalloc(r, n, 1);
	if (r->oom) {
		free(o);
		free(keep);
		return -1;
	}
	fl_iota(o, n);
	sort_by(r, o, n, r->ng, 0, cmp_rank_dev, cmp_k_rank_dev);
	size_t kept = 0;
	for (size_t q = 0; q < n; q++)
		if (!q || cmp_k_rank_dev(r->c, o[q - 1], o[q]) != 0) {
			keep[o[q]] = 1;
			kept++;
		}
	if (kept < n) {
		size_t j = 0;
		for (size_t i = 0; i < n; i++)
			if (keep[i])
				o[j++] = (int64_t)i;
		permute_colls(r, o, j);
		r->twice = n - kept;
	}
	free(o);
	free(keep);
	return r->oom ? -1 : 0;
}

/* ---- clocks ------------------------------------------------------------------------------------ */

/* Offset of each clock (a host; a rank when its host is unknown) from the lowest rank's, in ns:
 * every rank of a collective completes it at (nearly) the same true time, so per collective the
 * consensus end is the median of the aligned ends, and a clock's offset the median of its ends minus
 * the consensus; three rounds.  The fit: residuals of the aligned ends.  Clocks without shared
 * collectives take the run.json anchors (start of `gputap run` on that host) when there are. */
static int clock_offsets(struct red *r)
{
	size_t nclk = r->nclk, n = r->nc;
	if (!n || nclk < 2)
		return 0;
	/* per collective: seen by two clocks or more? */
	int64_t *o = fl_xcalloc(r, n, sizeof(int64_t));
	int64_t *keys = fl_xcalloc(r, n, sizeof(int64_t));
	int *lo = fl_xcalloc(r, r->ng, sizeof(int)), *hi = fl_xcalloc(r, r->ng, sizeof(int));
	int64_t *firstseen = fl_xcalloc(r, r->ng, sizeof(int64_t));
	double *end = fl_xcalloc(r, n, sizeof(double)), *al = fl_xcalloc(r, n, sizeof(double));
	double *tmp = fl_xcalloc(r, n, sizeof(double)), *cons = fl_xcalloc(r, r->ng, sizeof(double));
	int *dc = fl_xcalloc(r, n, sizeof(int));
	int64_t *clk_o = fl_xcalloc(r, n, sizeof(int64_t)), *clk_start = fl_xcalloc(r, nclk + 1, sizeof(int64_t));
	int64_t *key_start = fl_xcalloc(r, r->ng + 1, sizeof(int64_t)), *key_o = fl_xcalloc(r, n, sizeof(int64_t));
	double *per = fl_xcalloc(r, nclk, sizeof(double));
	if (r->oom)
		goto out;
	for (size_t g = 0; g < r->ng; g++) {
		lo[g] = INT32_MAX;
		hi[g] = -1;
		firstseen[g] = -1;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t g = r->c[i].k;
		if (r->c[i].clock < lo[g])
			lo[g] = r->c[i].clock;
		if (r->c[i].clock > hi[g])
			hi[g] = r->c[i].clock;
	}
	size_t m = 0, nkeys = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t g = r->c[i].k;
		if (lo[g] == hi[g])
			continue;
		if (firstseen[g] < 0)
			firstseen[g] = (int64_t)nkeys++;
		keys[m] = firstseen[g];
		dc[m] = r->c[i].clock;
		end[m] = (double)r->c[i].end;
		m++;
	}
	if (!m)
		goto anchors;
	/* rows by key and by clock (stable: row order within) */
	fl_group_index(keys, m, nkeys, key_o, key_start);
	{
		int64_t *dc64 = fl_xcalloc(r, m, sizeof(int64_t));
		if (!dc64)
			goto out;
		for (size_t i = 0; i < m; i++)
			dc64[i] = dc[i];
		fl_group_index(dc64, m, nclk, clk_o, clk_start);
		free(dc64);
	}
	int ref = r->nr ? r->rk[0].clock : 0;
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < m; i++)
			al[i] = end[i] - r->off[dc[i]];
		for (size_t g = 0; g < nkeys; g++)
			cons[g] = fl_median_of(al, key_o + key_start[g], (size_t)(key_start[g + 1] - key_start[g]), tmp);
		for (size_t i = 0; i < m; i++)
			al[i] = end[i] - cons[keys[i]];
		for (size_t h = 0; h < nclk; h++)
			per[h] = fl_median_of(al, clk_o + clk_start[h], (size_t)(clk_start[h + 1] - clk_start[h]), tmp);
		double base = clk_start[ref + 1] > clk_start[ref] ? per[ref] : 0.0;
		for (size_t h = 0; h < nclk; h++)
			if (clk_start[h + 1] > clk_start[h])
				r->off[h] = per[h] - base;
	}
	for (size_t i = 0; i < m; i++)
		al[i] = end[i] - r->off[dc[i]];
	for (size_t g = 0; g < nkeys; g++)
		cons[g] = fl_median_of(al, key_o + key_start[g], (size_t)(key_start[g + 1] - key_start[g]), tmp);
	for (size_t i = 0; i < m; i++)
		al[i] = fabs(al[i] - cons[keys[i]]);
	for (size_t h = 0; h < nclk; h++) {
		size_t cnt = (size_t)(clk_start[h + 1] - clk_start[h]);
		if (!cnt)
			continue;
		double ss = 0, mx = NAN;
		for (size_t q = 0; q < cnt; q++) {
			double v = al[clk_o[clk_start[h] + q]];
			ss += v * v;
			mx = isnan(mx) || v > mx ? v : mx;
		}
		r->fit[h].have = 1;
		r->fit[h].n = (int64_t)cnt;
		r->fit[h].rms_us = sqrt(ss / (double)cnt) / 1e3;
		r->fit[h].p95_us = fl_quantile_of(al, clk_o + clk_start[h], cnt, 0.95, tmp) / 1e3;
		r->fit[h].max_us = mx / 1e3;
	}
anchors:;
out:
	free(o);
	free(keys);
	free(lo);
	free(hi);
	free(firstseen);
	free(end);
	free(al);
	free(tmp);
	free(cons);
	free(dc);
	free(clk_o);
	free(clk_start);
	free(key_start);
	free(key_o);
	free(per);
	return r->oom ? -1 : 0;
}

/* The clocks' run.json anchors (the first rank's of each clock that has one). */
int fl_clock_anchor(const struct red *r, int clk, int64_t *a)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->rk[i].clock == clk && r->rk[i].has_anchor) {
			*a = r->rk[i].anchor;
			return 1;
		}
	return 0;
}

/* Where the collectives gave no offset: the anchors' (the summary's "source": "run.json"). */
static void anchor_offsets(struct red *r)
{
	if (!r->nr)
		return;
	int ref = r->rk[0].clock;
	int64_t aref = 0, a = 0;
	int has_ref = fl_clock_anchor(r, ref, &aref);
	for (size_t h = 0; h < r->nclk; h++)
		if ((int)h != ref && !r->fit[h].have && has_ref && fl_clock_anchor(r, (int)h, &a))
			r->off[h] = (double)fl_sub(a, aref);
}

/* ---- arrivals ---------------------------------------------------------------------------------- */

static int cmp_latest(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	FL_CMP(-x->a_start, -y->a_start);
	return 0;
}

static int cmp_k_latest(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	FL_CMP(x->k, y->k);
	FL_CMP(-x->a_start, -y->a_start);
	return 0;
}

/* Per row, after aligning the clocks: arrival (kernel start), lateness against the others, wait;
 * rows sorted by collective, the latest arrival first (pos 0). */
static int arrivals(struct red *r)
{
	size_t n = r->nc;
	for (size_t i = 0; i < n; i++) {
		struct coll *c = &r->c[i];
		double o = r->off[c->clock];
		c->a_start = (double)c->start - o;
		c->a_end = (double)c->end - o;
		c->a_launch = c->launch_ok ? (double)c->launch - o : NAN;
	}
	int64_t *o = fl_xcalloc(r, n, sizeof(int64_t));
	r->gstart = fl_xcalloc(r, r->ng + 1, sizeof(int64_t));
	double *tmp = fl_xcalloc(r, n, sizeof(double)), *v = fl_xcalloc(r, n, sizeof(double));
	int64_t *idx = fl_xcalloc(r, n, sizeof(int64_t));
	if (r->oom)
		goto out;
	fl_iota(o, n);
	sort_by(r, o, n, r->ng, 0, cmp_latest, cmp_k_latest);
	if (permute_colls(r, o, n))
		goto out;
	struct coll *c = r->c;
	size_t g = 0;
	for (size_t i = 0; i < n; i++) {
		if (!i || c[i].k != c[i - 1].k)
			r->gstart[g++] = (int64_t)i;
		idx[i] = (int64_t)i;
	}
	r->gstart[g] = (int64_t)n;
	for (size_t q = 0; q < r->ng; q++) {
		size_t s = (size_t)r->gstart[q], e = (size_t)r->gstart[q + 1], cnt = e - s;
		double first = INFINITY, last = -INFINITY, second = NAN;
		for (size_t i = s; i < e; i++) {
			c[i].n = (int64_t)cnt;
			c[i].pos = (int64_t)(i - s);
			v[i] = c[i].a_start;
			first = c[i].a_start < first ? c[i].a_start : first;
			last = c[i].a_start > last ? c[i].a_start : last;
			if (i - s == 1)
				second = c[i].a_start;
		}
		double med = fl_median_of(v, idx + s, cnt, tmp);
		for (size_t i = s; i < e; i++)
			v[i] = c[i].a_launch;
		double lmed = fl_median_of(v, idx + s, cnt, tmp);
		double ref = cnt >= 3 ? med : first;
		for (size_t i = s; i < e; i++) {
			double st = c[i].a_start;
			c[i].late_ms = fmax(st - ref, 0.0) / 1e6;
			double held = last - second;
			c[i].held_ms = (c[i].pos == 0 && cnt >= 2) ? (isnan(held) ? 0.0 : held) / 1e6 : 0.0;
			double dur = fmax(c[i].a_end - st, 0.0);
			c[i].wait_ms = fmin(last - st, dur) / 1e6;
			c[i].arrival_ms = (st - first) / 1e6;
			c[i].dev_ns = fabs(st - med);
			c[i].launch_lag_ms = (c[i].a_launch - lmed) / 1e6;
		}
	}
out:
	free(o);
	free(tmp);
	free(v);
	free(idx);
	return r->oom ? -1 : 0;
}

/* The arrivals' usual scatter (ms): per collective of 3 or more ranks 1.4826 x the median absolute
 * deviation of the arrivals, the median over collectives; with two ranks only, the same scale of the
 * skews of the collectives in the better half. */
static double noise_ms(struct red *r)
{
	size_t n = r->nc;
	double *mad = calloc(r->ng + 1, sizeof(double)), *v = calloc(n + 1, sizeof(double)),
	       *tmp = calloc(n + 1, sizeof(double));
	int64_t *idx = calloc(n + 1, sizeof(int64_t));
	double out = 0.0;
	if (!mad || !v || !tmp || !idx) {
		r->oom = 1;
		goto done;
	}
	size_t nb = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = r->c[i].dev_ns;
		idx[i] = (int64_t)i;
	}
	for (size_t q = 0; q < r->ng; q++) {
		size_t s = (size_t)r->gstart[q], cnt = (size_t)r->gstart[q + 1] - s;
		if (cnt >= 3)
			mad[nb++] = fl_median_of(v, idx + s, cnt, tmp);
	}
	if (nb) {
		for (size_t i = 0; i < nb; i++)
			idx[i] = (int64_t)i;
		out = 1.4826 * fl_median_of(mad, idx, nb, tmp) / 1e6;
		goto done;
	}
	size_t nt = 0;
	for (size_t i = 0; i < n; i++)
		if (r->c[i].pos == 0 && r->c[i].n == 2)
			v[nt++] = r->c[i].held_ms;
	if (nt < 2)
		goto done;
	gt_sort(v, nt, sizeof(double), gt_cmp_double);
	size_t nl = nt / 2 > 2 ? nt / 2 : 2;
	for (size_t i = 0; i < nl; i++)
		idx[i] = (int64_t)i;
	double m = fl_median_of(v, idx, nl, tmp);
	for (size_t i = 0; i < nl; i++)
		mad[i] = fabs(v[i] - m);
	out = 1.4826 * fl_median_of(mad, idx, nl, tmp);
done:
	free(mad);
	free(v);
	free(tmp);
	free(idx);
	return out;
}

/* ---- causes ------------------------------------------------------------------------------------ */

static int cmp_iter_rank(const void *ctx, int64_t a, int64_t b)
{
	const struct iter *t = ctx, *x = &t[a], *y = &t[b];
	FL_CMP(x->rank, y->rank);
	FL_CMP(x->iteration, y->iteration);
	return 0;
}

/* Per rank and iteration, how far above the iteration's median rank it was in each phase: compute,
 * memory copies, host/launch (GPU idle), data loading (GPU idle before the iteration's work). */
static int iteration_excess(struct red *r)
{
	size_t n = r->ni;
	if (!n)
		return 0;
	double *ph[4];
	for (int k = 0; k < 4; k++)
		ph[k] = fl_xcalloc(r, n, sizeof(double));
	int64_t *o = fl_xcalloc(r, n, sizeof(int64_t)), *start = fl_xcalloc(r, n + 1, sizeof(int64_t)),
		*gid = fl_xcalloc(r, n, sizeof(int64_t));
	double *tmp = fl_xcalloc(r, n, sizeof(double));
	if (r->oom)
		goto out;
	struct iter *it = r->it;
	for (size_t i = 0; i < n; i++) {
		int64_t prev = (i && it[i].rank == it[i - 1].rank) ? it[i - 1].last_ns : it[i].start_ns;
		ph[0][i] = it[i].w[FL_W_COMPUTE];
		ph[1][i] = it[i].w[FL_W_MEMOP];
		ph[2][i] = it[i].w[FL_W_IDLE];
		ph[3][i] = fmax((double)fl_sub(it[i].first_ns, prev), 0.0) / 1e6;
	}
	/* groups: the iterations' numbers, in sorted order */
	size_t ng = fl_dense_ids_i64(r, it, n, gid);
	if (r->oom)
		goto out;
	fl_group_index(gid, n, ng, o, start);
	for (int k = 0; k < 4; k++)
		for (size_t g = 0; g < ng; g++) {
			size_t s = (size_t)start[g], cnt = (size_t)(start[g + 1] - start[g]);
			double med = fl_median_of(ph[k], o + s, cnt, tmp);
			for (size_t q = 0; q < cnt; q++)
				it[o[s + q]].excess[k] = ph[k][o[s + q]] - med;
		}
out:
	for (int k = 0; k < 4; k++)
		free(ph[k]);
	free(o);
	free(start);
	free(gid);
	free(tmp);
	return r->oom ? -1 : 0;
}

/* The iteration row of (rank, iteration), -1 if none (iterations sorted by rank, iteration). */
static int64_t find_iter(const struct red *r, int64_t rank, int64_t iteration)
{
	size_t lo = 0, hi = r->ni;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		const struct iter *t = &r->it[m];
		if (t->rank < rank || (t->rank == rank && t->iteration < iteration))
			lo = m + 1;
		else
			hi = m;
	}
	return lo < r->ni && r->it[lo].rank == rank && r->it[lo].iteration == iteration ? (int64_t)lo : -1;
}

/* Cause of each late arrival: the phase of its rank's iteration most above the median rank; a
 * collective the host launched late (by half the lateness or more) is put down to the host (data
 * loading when the GPU sat idle before the iteration's work, else host/launch) — unless the GPU was
 * not idle longer than the median rank's: then the host was waiting for its own GPU's work and that
 * work's phase is the cause. */
static void causes(struct red *r)
{
	for (size_t i = 0; i < r->nc; i++) {
		struct coll *c = &r->c[i];
		c->cause = C_NONE;
		if (!c->late)
			continue;
		double x[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
		int64_t j = find_iter(r, c->rank, c->iteration);
		if (j >= 0)
			for (int k = 0; k < 4; k++)
				x[k] = isnan(r->it[j].excess[k]) ? -INFINITY : r->it[j].excess[k];
		double lm = c->late_ms, lag = c->launch_lag_ms;
		int host = isnan(lag) ? 0 : lag >= 0.5 * lm;
		int idle = fmax(x[2], x[3]) > 0.1 * lm;
		host = host && (idle || !(fmax(x[0], x[1]) > 0.1 * lm));
		if (host)
			x[0] = x[1] = -INFINITY;
		int best = 0;
		for (int k = 1; k < 4; k++)
			if (x[k] > x[best])
				best = k;
		c->cause = x[best] > 0.1 * lm ? best : host ? C_HOST : C_UNCLEAR;
	}
}

static int cmp_rank_dev_start(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx, *x = &c[a], *y = &c[b];
	FL_CMP(x->rank, y->rank);
	FL_CMP(x->device, y->device);
	FL_CMP(x->a_start, y->a_start);
	return 0;
}

struct upstep {
	double t;
	int64_t i, j;
};

static int cmp_upstep(const void *a, const void *b)
{
	const struct upstep *x = a, *y = b;
	FL_CMP(x->t, y->t);
	FL_CMP(x->i, y->i);
	FL_CMP(x->j, y->j);
	return 0;
}

/* Late arrivals that pass on another rank's lateness: since the rank's previous operation among the
 * same ranks as this one (on that GPU), it waited in operations among other ranks at least half as
 * long as it is late here (a pipeline stage that waited for its input; a rank that waited for its
 * tensor-parallel partner).  Per such row the rank it waited for longest there, followed to the
 * start of the chain; -1 for the other rows. */
static int waiting_upstream(struct red *r)
{
	size_t n = r->nc;
	struct coll *c = r->c;
	int any = 0;
	for (size_t i = 0; i < n; i++) {
		c[i].up = -1;
		any |= c[i].late;
	}
	if (!any)
		return 0;
	uint64_t *acc = fl_xcalloc(r, r->ng, sizeof(uint64_t)), *chan = fl_xcalloc(r, n, sizeof(uint64_t));
	int64_t *o = fl_xcalloc(r, n, sizeof(int64_t));
	struct gt_vec todo;
	gt_vec_init(&todo, sizeof(struct upstep));
	if (r->oom)
		goto out;
	for (size_t i = 0; i < n; i++)
		acc[c[i].k] += ((uint64_t)c[i].rank + 1u) * 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < n; i++)
		chan[i] = acc[c[i].k];
	fl_iota(o, n);
	fl_msort(o, n, cmp_rank_dev_start, c);
	size_t a = 0;
	while (a < n) {
		size_t b = a;
		while (b < n && c[o[b]].rank == c[o[a]].rank && c[o[b]].device == c[o[a]].device)
			b++;
		int late = 0, same = 1;
		for (size_t q = a; q < b; q++) {
			late |= c[o[q]].late;
			same &= chan[o[q]] == chan[o[a]];
		}
		if (late && !same) {
			const int64_t *rows = o + a;
			size_t len = b - a;
			/* ranks -> position of the latest row among them so far: a small map per run */
			struct gt_map prev = {0};
			for (size_t k = 0; k < len; k++) {
				int64_t i = rows[k];
				uint64_t key = chan[i] ? chan[i] : 1;
				if (c[i].late) {
					uint64_t *pp = gt_map_get(&prev, key);
					int64_t p = pp ? (int64_t)*pp - 1 : -1;
					double waited = 0, bestw = -INFINITY;
					int64_t bestm = -1;
					for (int64_t m = p + 1; m < (int64_t)k; m++) {
						const struct coll *cm = &c[rows[m]];
						if (chan[rows[m]] != chan[i]) {
							if (!(cm->a_end <= c[i].a_start))
								continue;
							if (p >= 0 && !(cm->a_start >= c[rows[p]].a_end))
								continue;
							waited += cm->wait_ms;
							if (bestm < 0 || cm->wait_ms > bestw) {
								bestw = cm->wait_ms;
								bestm = m;
							}
						}
					}
					if (bestm >= 0 && waited >= 0.5 * c[i].late_ms) {
						struct upstep *u = gt_vec_push(&todo);
						if (!u) {
							r->oom = 1;
							gt_map_free(&prev);
							goto out;
						}
						*u = (struct upstep){c[i].a_start, i, rows[bestm]};
					}
				}
				int fresh;
				uint64_t *slot = gt_map_put(&prev, key, &fresh);
				if (!slot) {
					r->oom = 1;
					gt_map_free(&prev);
					goto out;
				}
				*slot = (uint64_t)k + 1;
			}
			gt_map_free(&prev);
		}
		a = b;
	}
	gt_sort(todo.v, todo.n, sizeof(struct upstep), cmp_upstep);
	for (size_t q = 0; q < todo.n; q++) {
		const struct upstep *u = &GT_VEC_AT(&todo, struct upstep, q);
		int64_t last = r->gstart[c[u->j].k]; /* the collective's latest arrival */
		if (c[last].rank != c[u->i].rank)
			c[u->i].up = c[last].up >= 0 ? c[last].up : c[last].rank;
	}
out:
	free(acc);
	free(chan);
	free(o);
	gt_vec_free(&todo);
	return r->oom ? -1 : 0;
}

/* The cause's words ("" none). */
const char *fl_cause_str(const struct coll *c, char *buf, size_t len)
{
	if (c->up >= 0) {
		snprintf(buf, len, "waiting for rank %lld", (long long)c->up);
		return buf;
	}
	return c->cause == C_NONE ? "" : cause_names[c->cause];
}


static void free_notes(struct gt_vec *v)
{
	for (size_t i = 0; i < v->n; i++) {
		struct note *n = &GT_VEC_AT(v, struct note, i);
		free(n->path);
		free(n->text);
		free(n->label);
	}
	gt_vec_free(v);
}

int fl_reduce(const fl_plan *p, const fl_rows *rows, fl_result *out)
{
	struct red r;
	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	r.p = p;
	r.rows = rows;
	gt_vec_init(&r.failed, sizeof(struct note));
	gt_vec_init(&r.skipped, sizeof(struct note));
	gt_vec_init(&r.partial, sizeof(struct note));
	gt_vec_init(&r.warnings, sizeof(struct note));
	int *remap = NULL, rc = -1;
	if (vocab(&r, &remap) || prepare_ranks(&r) || prepare_rows(&r, remap) || match_collectives(&r) ||
	    once_per_gpu(&r) || clock_offsets(&r))
		goto out;
	anchor_offsets(&r);
	if (r.twice)
		fl_warn(&r, "%zu collective rows left out: their GPU had that collective (communicator, kind, sequence "
			    "number) already; the first launched is kept",
			r.twice);
	if (r.nc) {
		if (arrivals(&r))
			goto out;
		r.noise = noise_ms(&r);
	}
	r.thr = fmax(FL_LATE_MIN_MS, FL_LATE_NOISE * r.noise);
	for (size_t i = 0; i < r.nc; i++)
		r.c[i].late = r.c[i].late_ms > r.thr && r.c[i].n >= 2;
	/* iterations in rank, iteration order: the phases' excess per rank and iteration */
	{
		int64_t *o = fl_xcalloc(&r, r.ni, sizeof(int64_t));
		struct iter *it = fl_xcalloc(&r, r.ni, sizeof(struct iter));
		if (r.oom) {
			free(o);
			free(it);
			goto out;
		}
		fl_iota(o, r.ni);
		fl_msort(o, r.ni, cmp_iter_rank, r.it);
		for (size_t i = 0; i < r.ni; i++)
			it[i] = r.it[o[i]];
		free(o);
		free(r.it);
		r.it = it;
	}
	if (iteration_excess(&r))
		goto out;
	causes(&r);
	if (waiting_upstream(&r))
		goto out;
	for (size_t i = 0; i < r.nc; i++) {
		struct coll *c = &r.c[i];
		/* the job waited for it alone; not for a rank that only passed on another's lateness */
		c->cost_ms = c->late && c->pos == 0 && c->up < 0 ? c->held_ms : 0.0;
		c->waited_ms = c->cost_ms * (double)(c->n - 1);
	}
	rc = fl_reduce_out(&r, out);
out:
	if (r.oom)
		rc = -1;
	free(remap);
	free(r.voc);
	free(r.rk);
	free(r.it);
	free(r.c);
	free(r.gstart);
	free(r.by_rank_iter);
	free(r.scratch);
	free(r.off);
	free(r.fit);
	free_notes(&r.failed);
	free_notes(&r.skipped);
	free_notes(&r.partial);
	free_notes(&r.warnings);
	if (rc)
		fl_result_free(out);
	return rc;
}

void fl_result_free(fl_result *r)
{
	fl_table_free(&r->ranks);
	fl_table_free(&r->iterations);
	fl_table_free(&r->collectives);
	free(r->summary_json);
	r->summary_json = NULL;
}
