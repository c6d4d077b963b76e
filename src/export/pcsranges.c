/*
 * PC samples per NVTX range (see pcsamp.h, gt_pcs_ranges).  Continuous
 * sampling gives no launch id: a kernel's samples are split over the ranges
 * its launches were made in, in proportion to its GPU time in each.  A
 * launch's range is the innermost push/pop range (NVTX or gputap's own) open
 * on the launching thread when the launch was made; its name is the path of
 * the ranges around it ("step/forward").  One pass over the process's trace.
 */
#include "export/pcsamp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/containers.h"
#include "core/csvio.h"
#include "core/sort.h"
#include "trace/visit.h"

struct rg {
	uint32_t tid;
	uint64_t s, e, id, parent;
	uint32_t name; /* index into names */
};
struct launch {
	uint32_t tid;
	uint64_t t;
};
struct kern {
	uint64_t corr, ns;
	uint32_t name;
};

struct rctx {
	struct gt_pcs_data *d;
	char **names;
	size_t nnames, capnames;
	struct gt_map name_of; /* string id + 1 -> names index + 1 */
	struct rg *rg;
	size_t nrg, caprg;
	struct launch *ln;
	size_t nln, capln;
	struct gt_map corr_ln; /* corr -> ln index + 1 */
	struct kern *k;
	size_t nk, capk;
	int oom;
};

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 256;
	void *t = realloc(*p, nc * size);
	if (!t)
		return -ENOMEM;
	*p = t;
	*cap = nc;
	return 0;
}

/* Our index of the trace's string `id`, copied the first time. */
static int name_idx(struct rctx *c, const struct gt_trace_reader *r, uint32_t id, uint32_t *out)
{
	int is_new = 0;
	uint64_t *v = gt_map_put(&c->name_of, (uint64_t)id + 1, &is_new);
	if (!v)
		return -ENOMEM;
	if (is_new) {
		if (grow((void **)&c->names, &c->capnames, c->nnames, sizeof(*c->names)) < 0 ||
		    !(c->names[c->nnames] = strdup(gt_tr_str(r, id))))
			return -ENOMEM;
		*v = ++c->nnames;
	}
	*out = (uint32_t)(*v - 1);
	return 0;
}

static int on_range(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_range *g)
{
	struct rctx *c = ctx;
	if (g->kind != GT_RANGE_PUSHPOP && g->kind != GT_RANGE_USER)
		return 0;
	if (grow((void **)&c->rg, &c->caprg, c->nrg, sizeof(*c->rg)) < 0)
		return -1;
	struct rg *x = &c->rg[c->nrg];
	if (name_idx(c, r, g->name_id, &x->name) < 0)
		return -1;
	x->tid = g->h.tid;
	x->s = g->start_ns;
	x->e = g->end_ns;
	x->id = g->range_id;
	x->parent = g->parent_id;
	c->nrg++;
	return 0;
}

static int on_api(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_api *a)
{
	struct rctx *c = ctx;
	(void)r;
	if (!a->corr_id)
		return 0;
	int is_new = 0;
	uint64_t *v = gt_map_put(&c->corr_ln, a->corr_id, &is_new);
	if (!v || grow((void **)&c->ln, &c->capln, c->nln, sizeof(*c->ln)) < 0)
		return -1;
	if (!is_new)
		return 0;
	c->ln[c->nln] = (struct launch){a->h.tid, a->start_ns};
	*v = ++c->nln;
	return 0;
}

static int on_kernel(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_kernel *k)
{
	struct rctx *c = ctx;
	if (grow((void **)&c->k, &c->capk, c->nk, sizeof(*c->k)) < 0)
		return -1;
	struct kern *x = &c->k[c->nk];
	if (name_idx(c, r, k->name_id, &x->name) < 0)
		return -1;
	x->corr = k->corr_id;
	x->ns = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
	c->nk++;
	return 0;
}

static int by_tid_start(const void *x, const void *y)
{
	const struct rg *a = x, *b = y;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return a->e > b->e ? -1 : a->e < b->e; /* the outer one first */
}

/* The innermost range of thread tid open at t, or NULL. */
static const struct rg *innermost(const struct rctx *c, uint32_t tid, uint64_t t)
{
	size_t lo = 0, hi = c->nrg;
	while (lo < hi) { /* first range after (tid, t) */
		size_t mid = (lo + hi) / 2;
		const struct rg *m = &c->rg[mid];
		if (m->tid < tid || (m->tid == tid && m->s <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 4096; steps++) {
		const struct rg *m = &c->rg[i];
		if (m->tid != tid)
			break;
		if (m->e >= t)
			return m;
	}
	return NULL;
}

/* The innermost range of any other thread open at t (a framework that launches from worker threads:
 * PyTorch's backward pass runs on its autograd thread while the step's range is open on the main
 * thread), or NULL. */
static const struct rg *innermost_other(const struct rctx *c, uint32_t tid, uint64_t t)
{
	const struct rg *best = NULL;
	int depth = -1;
	for (size_t i = 0; i < c->nrg;) {
		uint32_t u = c->rg[i].tid;
		size_t j = i;
		while (j < c->nrg && c->rg[j].tid == u)
			j++;
		if (u != tid) {
			const struct rg *m = innermost(c, u, t);
			int dpt = 0;
			for (const struct rg *x = m; x && x->parent && dpt < 64; dpt++) {
				const struct rg *p = NULL;
				for (size_t k = i; k < j && !p; k++)
					if (c->rg[k].id == x->parent)
						p = &c->rg[k];
				x = p;
			}
			if (m && dpt > depth) {
				best = m;
				depth = dpt;
			}
		}
		i = j;
	}
	return best;
}

/* "outer/inner" of range m (its parents found by id). */
static void path_of(const struct rctx *c, const struct gt_map *by_id, const struct rg *m, char *buf, size_t cap)
{
	const struct rg *chain[16];
	int n = 0;
	while (m && n < 16) {
		chain[n++] = m;
		uint64_t *p = m->parent ? gt_map_get(by_id, m->parent) : NULL;
		m = p ? &c->rg[*p - 1] : NULL;
	}
	size_t len = 0;
	buf[0] = '\0';
	while (n-- > 0 && len < cap)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "/" : "", c->names[chain[n]->name]);
}

static int by_range_kernel(const void *x, const void *y)
{
	const struct gt_pcs_range_row *a = x, *b = y;
	int r = strcmp(a->range, b->range);
	return r ? r : strcmp(a->kernel, b->kernel);
}

static int on_end(void *ctx, const struct gt_trace_reader *r)
{
	struct rctx *c = ctx;
	struct gt_pcs_data *d = c->d;
	(void)r;
	if (!c->nrg)
		return 0; /* no ranges: nothing to split by */
	gt_sort(c->rg, c->nrg, sizeof(*c->rg), by_tid_start);
	struct gt_map by_id = {0};
	for (size_t i = 0; i < c->nrg; i++) {
		int is_new;
		uint64_t *v = gt_map_put(&by_id, c->rg[i].id, &is_new);
		if (!v) {
			gt_map_free(&by_id);
			return -1;
		}
		*v = i + 1;
	}
	int rc = 0;
	for (size_t i = 0; i < c->nk && rc == 0; i++) {
		const struct kern *k = &c->k[i];
		const char *kn = c->names[k->name];
		const struct gt_pcs_kernel *pk = NULL;
		for (size_t j = 0; j < d->nk && !pk; j++)
			if (strcmp(d->k[j].name, kn) == 0)
				pk = &d->k[j];
		if (!pk)
			continue; /* no samples */
		uint64_t *li = k->corr ? gt_map_get(&c->corr_ln, k->corr) : NULL;
		const struct rg *m = li ? innermost(c, c->ln[*li - 1].tid, c->ln[*li - 1].t) : NULL;
		const struct rg *o = li && !m ? innermost_other(c, c->ln[*li - 1].tid, c->ln[*li - 1].t) : NULL;
		char path[1024];
		if (m) {
			path_of(c, &by_id, m, path, sizeof(path));
		} else if (o) {
			path_of(c, &by_id, o, path, sizeof(path) - 16);
			size_t n = strlen(path);
			snprintf(path + n, sizeof(path) - n, " (other thread)");
		} else {
			snprintf(path, sizeof(path), "(none)");
		}
		struct gt_pcs_range_row *w = NULL;
		for (size_t j = d->nrr; j-- > 0 && !w;)
			if (strcmp(d->rr[j].kernel, kn) == 0 && strcmp(d->rr[j].range, path) == 0)
				w = &d->rr[j];
		if (!w) {
			if (grow((void **)&d->rr, &d->caprr, d->nrr, sizeof(*d->rr)) < 0) {
				rc = -1;
				break;
			}
			w = &d->rr[d->nrr];
			memset(w, 0, sizeof(*w));
			w->kernel = pk->name;
			if (!(w->range = strdup(path))) {
				rc = -1;
				break;
			}
			d->nrr++;
		}
		w->gpu_ns += k->ns;
		w->launches++;
	}
	gt_map_free(&by_id);
	/* each kernel's samples over its rows, by GPU time */
	for (size_t j = 0; j < d->nk; j++) {
		uint64_t tot = 0;
		for (size_t i = 0; i < d->nrr; i++)
			if (d->rr[i].kernel == d->k[j].name)
				tot += d->rr[i].gpu_ns;
		for (size_t i = 0; i < d->nrr; i++)
			if (d->rr[i].kernel == d->k[j].name)
				d->rr[i].samples = tot ? (double)d->k[j].samples * (double)d->rr[i].gpu_ns / (double)tot : 0;
	}
	gt_sort(d->rr, d->nrr, sizeof(*d->rr), by_range_kernel);
	return rc;
}

static void rctx_free(struct rctx *c)
{
	for (size_t i = 0; i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c->rg);
	free(c->ln);
	free(c->k);
	gt_map_free(&c->name_of);
	gt_map_free(&c->corr_ln);
}

static void on_release(void *ctx)
{
	(void)ctx; /* freed by gt_pcs_ranges */
}

static const struct gt_trace_ops ops = {
	.api = on_api, .kernel = on_kernel, .range = on_range, .end = on_end, .release = on_release,
};

static int join(void *arg, const struct gt_trace_reader *r, struct gt_trace_visitor *v, size_t *nv)
{
	(void)r;
	v[*nv].ops = &ops;
	v[*nv].ctx = arg;
	(*nv)++;
	return 0;
}

int gt_pcs_ranges(struct gt_pcs_data *d, const char *trace, char *err, size_t errlen)
{
	struct rctx c;
	memset(&c, 0, sizeof(c));
	c.d = d;
	err[0] = '\0';
	int rc = gt_trace_feed_plain(NULL, trace, join, &c, err, errlen);
	rctx_free(&c);
	return rc;
}

int gt_pcs_write_ranges(const struct gt_pcs_data *d, FILE *f)
{
	fputs("range,kernel,launches,gpu_time_ns,samples\n", f);
	for (size_t i = 0; i < d->nrr; i++) {
		const struct gt_pcs_range_row *w = &d->rr[i];
		gt_csv_put(f, w->range);
		fputc(',', f);
		gt_csv_put(f, w->kernel);
		fprintf(f, ",%llu,%llu,%.1f\n", (unsigned long long)w->launches, (unsigned long long)w->gpu_ns, w->samples);
	}
	return ferror(f) ? -1 : 0;
}
