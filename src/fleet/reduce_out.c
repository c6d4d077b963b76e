/*
 * fleet/reduce_out.c — the reduction's answers as tables and summary (docs/fleet.md): per
 * collective who was late and by how much; per rank and iteration and per rank the waits, the
 * lateness, what it cost the others and why; the stragglers, costliest first; per iteration the
 * slowest and the late; the outliers; the summary.json object.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "core/sort.h"
#include "fleet/reduce_int.h"
#include "fleet/table.h"

/* ---- JSON -------------------------------------------------------------------------------------- */

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

/* A double as Python's json writes it: the shortest text that reads back the same, "1.0" for an
 * integral value; null when not finite. */
static void jdbl(yajl_gen g, double v)
{
	if (!isfinite(v)) {
		yajl_gen_null(g);
		return;
	}
	char b[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	if (!strpbrk(b, ".en"))
		strcat(b, ".0");
	yajl_gen_number(g, b, strlen(b));
}

static void kd(yajl_gen g, const char *k, double v)
{
	GS(g, k);
	jdbl(g, v);
}

static void ki(yajl_gen g, const char *k, long long v)
{
	GS(g, k);
	yajl_gen_integer(g, v);
}

static void ks(yajl_gen g, const char *k, const char *v)
{
	GS(g, k);
	GS(g, v ? v : "");
}

/* ---- the collectives table --------------------------------------------------------------------- */

static const char *const colls_names[] = {
	"comm", "seq", "iteration", "name", "count", "dtype", "bytes", "algo", "proto", "match", "ranks",
	"arrival_ms", "skew_ms", "wait_ms", "late_rank", "first_rank", "late_ms", "held_ms", "is_late", "late_ranks",
	"late_by_ms", "cause", "duration_ms", "end_spread_ms", "start_ns"};
static const int colls_types[] = {
	FL_STR, FL_I64, FL_I64, FL_STR, FL_I64, FL_STR, FL_I64, FL_STR, FL_STR, FL_STR, FL_LIST_I64,
	FL_LIST_F64, FL_F64, FL_F64, FL_I64, FL_I64, FL_F64, FL_F64, FL_BOOL, FL_LIST_I64,
	FL_LIST_F64, FL_STR, FL_F64, FL_F64, FL_I64};

struct ctrow {
	int64_t g, seq, iteration, count, bytes, late_rank, first_rank, start_ns, n;
	int comm, name, algo, proto, match, dtype, is_late;
	double skew_ms, wait_ms, late_ms, held_ms, duration_ms, end_spread_ms;
	char cause[48], pairname[48];
	int64_t nlate;
};

static int cmp_ct(const void *ctx, int64_t a, int64_t b)
{
	const struct red *r = ((void *const *)ctx)[0];
	const struct ctrow *t = ((void *const *)ctx)[1], *x = &t[a], *y = &t[b];
	(void)r;
	FL_CMP(x->start_ns, y->start_ns);
	FL_CMP(x->comm, y->comm); /* the vocabulary is sorted: its numbers sort as the strings */
	FL_CMP(x->seq, y->seq);
	return 0;
}

static int cmp_rank_in_group(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx;
	FL_CMP(c[a].rank, c[b].rank);
	return 0;
}

/* "SendRecv 0>1" of a two-rank communicator (PyTorch's pair: its ranks 0 and 1 the pair's lower
 * and higher global rank) named in the job's ranks. */
static const char *pair_name(const char *name, const int64_t *ranks, size_t n, char *buf, size_t len)
{
	if (n != 2 || strncmp(name, "SendRecv ", 9) != 0 || strlen(name) != 12)
		return name;
	char a = name[9], b = name[11];
	if (name[10] != '>' || (a != '0' && a != '1') || (b != '0' && b != '1') || a == b)
		return name;
	int64_t lo = ranks[0] < ranks[1] ? ranks[0] : ranks[1], hi = ranks[0] < ranks[1] ? ranks[1] : ranks[0];
	snprintf(buf, len, "SendRecv %lld>%lld", (long long)(a == '0' ? lo : hi), (long long)(a == '0' ? hi : lo));
	return buf;
}

static int colls_table(struct red *r, fl_table *t, struct ctrow **rows_out)
{
	size_t ng = r->ng;
	struct ctrow *ct = fl_xcalloc(r, ng, sizeof(*ct));
	int64_t *o = fl_xcalloc(r, ng, sizeof(int64_t)), *br = fl_xcalloc(r, r->nc, sizeof(int64_t));
	int64_t *idx = fl_xcalloc(r, r->nc, sizeof(int64_t)), *its = fl_xcalloc(r, r->nc, sizeof(int64_t));
	double *v = fl_xcalloc(r, r->nc, sizeof(double)), *tmp = fl_xcalloc(r, r->nc, sizeof(double));
	*rows_out = ct;
	if (r->oom)
		goto out;
	const struct coll *c = r->c;
	size_t nlist = 0, nlate = 0;
	for (size_t g = 0; g < ng; g++) {
		size_t s = (size_t)r->gstart[g], e = (size_t)r->gstart[g + 1];
		struct ctrow *x = &ct[g];
		const struct coll *f = &c[s]; /* the latest arrival */
		x->g = (int64_t)g;
		x->comm = f->comm;
		x->name = f->name;
		x->seq = f->seq;
		x->algo = f->algo;
		x->proto = f->proto;
		x->match = f->match;
		x->n = (int64_t)(e - s);
		double cnt = NAN, byt = NAN, dt = NAN, skew = NAN, amin = NAN, emax = NAN, emin = NAN, wsum = 0;
		int late = 0;
		for (size_t i = s; i < e; i++) {
			cnt = fmax(cnt, (double)c[i].count);
			byt = fmax(byt, (double)c[i].bytes);
			dt = fmax(dt, (double)c[i].dtype);
			skew = fmax(skew, c[i].arrival_ms);
			wsum += c[i].wait_ms;
			amin = fmin(amin, c[i].a_start);
			emax = fmax(emax, c[i].a_end);
			emin = fmin(emin, c[i].a_end);
			late += c[i].late;
			idx[i] = (int64_t)i;
			v[i] = (c[i].a_end - c[i].a_start) / 1e6;
		}
		x->count = fl_i64(cnt);
		x->bytes = fl_i64(byt);
		x->dtype = (int)dt; /* one of the vocabulary's numbers */
		x->skew_ms = skew;
		x->wait_ms = wsum;
		x->is_late = late > 0;
		x->nlate = late;
		nlate += (size_t)late;
		/* the iteration most of its ranks launched it in (of equally many, the lowest) */
		int64_t best_it = -1, best_n = 0;
		for (size_t i = s; i < e; i++)
			its[i - s] = c[i].iteration;
		gt_sort(its, e - s, sizeof(int64_t), gt_cmp_int64);
		for (size_t i = 0; i < e - s;) {
			size_t j = i;
			while (j < e - s && its[j] == its[i])
				j++;
			if ((int64_t)(j - i) > best_n) { /* ascending: of equally many, the lowest */
				best_n = (int64_t)(j - i);
				best_it = its[i];
			}
			i = j;
		}
		x->iteration = best_it;
		x->late_rank = x->n < 2 ? -1 : f->rank;
		x->late_ms = f->late_ms;
		x->held_ms = x->is_late ? f->held_ms : 0.0;
		char cb[48];
		snprintf(x->cause, sizeof(x->cause), "%s", fl_cause_str(f, cb, sizeof(cb)));
		x->first_rank = -1;
		for (size_t i = s; i < e && x->n >= 2; i++)
			if (c[i].a_start == amin) {
				x->first_rank = c[i].rank;
				break;
			}
		x->duration_ms = fl_median_of(v, idx + s, e - s, tmp);
		x->end_spread_ms = (emax - emin) / 1e6;
		x->start_ns = fl_i64(amin);
		nlist += e - s;
	}
	if (fl_table_init(t, ng, colls_names, colls_types, sizeof(colls_types) / sizeof(colls_types[0])))
		goto oom;
	fl_col *col_algo = fl_table_colw(t, "algo"), *col_arrival_ms = fl_table_colw(t, "arrival_ms"), *col_bytes = fl_table_colw(t, "bytes"), *col_cause = fl_table_colw(t, "cause"), *col_comm = fl_table_colw(t, "comm"), *col_count = fl_table_colw(t, "count"), *col_dtype = fl_table_colw(t, "dtype"), *col_duration_ms = fl_table_colw(t, "duration_ms"), *col_end_spread_ms = fl_table_colw(t, "end_spread_ms"), *col_first_rank = fl_table_colw(t, "first_rank"), *col_held_ms = fl_table_colw(t, "held_ms"), *col_is_late = fl_table_colw(t, "is_late"), *col_iteration = fl_table_colw(t, "iteration"), *col_late_by_ms = fl_table_colw(t, "late_by_ms"), *col_late_ms = fl_table_colw(t, "late_ms"), *col_late_rank = fl_table_colw(t, "late_rank"), *col_late_ranks = fl_table_colw(t, "late_ranks"), *col_match = fl_table_colw(t, "match"), *col_name = fl_table_colw(t, "name"), *col_proto = fl_table_colw(t, "proto"), *col_ranks = fl_table_colw(t, "ranks"), *col_seq = fl_table_colw(t, "seq"), *col_skew_ms = fl_table_colw(t, "skew_ms"), *col_start_ns = fl_table_colw(t, "start_ns"), *col_wait_ms = fl_table_colw(t, "wait_ms");
	fl_col *ranks = col_ranks, *arr = col_arrival_ms;
	fl_col *lr = col_late_ranks, *lb = col_late_by_ms;
	ranks->li = malloc((nlist + 1) * sizeof(int64_t));
	arr->f = malloc((nlist + 1) * sizeof(double));
	lr->li = malloc((nlate + 1) * sizeof(int64_t));
	lb->f = malloc((nlate + 1) * sizeof(double));
	if (!ranks->li || !arr->f || !lr->li || !lb->f)
		goto oom;
	/* rows in the table's order: by start, communicator, sequence number */
	void *ctx[2] = {r, ct};
	fl_iota(o, ng);
	fl_msort(o, ng, cmp_ct, ctx);
	size_t pl = 0, pn = 0;
	for (size_t q = 0; q < ng; q++) {
		struct ctrow *x = &ct[o[q]];
		size_t s = (size_t)r->gstart[x->g], e = (size_t)r->gstart[x->g + 1];
		for (size_t i = s; i < e; i++)
			br[i - s] = (int64_t)i;
		fl_msort(br, e - s, cmp_rank_in_group, r->c);
		int64_t *rl = ranks->li + pl;
		for (size_t i = 0; i < e - s; i++) {
			ranks->li[pl] = c[br[i]].rank;
			arr->f[pl++] = c[br[i]].arrival_ms;
		}
		ranks->i[q + 1] = (int64_t)pl;
		arr->i[q + 1] = (int64_t)pl;
		for (size_t i = s; i < e; i++)
			if (c[i].late) {
				lr->li[pn] = c[i].rank;
				lb->f[pn++] = c[i].late_ms;
			}
		lr->i[q + 1] = (int64_t)pn;
		lb->i[q + 1] = (int64_t)pn;
		char pb[48];
		const char *name = pair_name(r->voc[x->name], rl, e - s, pb, sizeof(pb));
		snprintf(x->pairname, sizeof(x->pairname), "%s", name);
		if (fl_table_set_strc(t, col_comm, q, r->voc[x->comm]) || fl_table_set_strc(t, col_name, q, name) ||
		    fl_table_set_strc(t, col_dtype, q, r->voc[x->dtype]) || fl_table_set_strc(t, col_algo, q, r->voc[x->algo]) ||
		    fl_table_set_strc(t, col_proto, q, r->voc[x->proto]) || fl_table_set_strc(t, col_match, q, r->voc[x->match]) ||
		    fl_table_set_strc(t, col_cause, q, x->cause))
			goto oom;
		col_seq->i[q] = x->seq;
		col_iteration->i[q] = x->iteration;
		col_count->i[q] = x->count;
		col_bytes->i[q] = x->bytes;
		col_skew_ms->f[q] = x->skew_ms;
		col_wait_ms->f[q] = x->wait_ms;
		col_late_rank->i[q] = x->late_rank;
		col_first_rank->i[q] = x->first_rank;
		col_late_ms->f[q] = x->late_ms;
		col_held_ms->f[q] = x->held_ms;
		col_is_late->i[q] = x->is_late;
		col_duration_ms->f[q] = x->duration_ms;
		col_end_spread_ms->f[q] = x->end_spread_ms;
		col_start_ns->i[q] = (int64_t)((uint64_t)x->start_ns + (uint64_t)r->base);
	}
	/* the summary's rows in the table's order too */
	struct ctrow *sorted = fl_xcalloc(r, ng, sizeof(*sorted));
	if (!sorted)
		goto out;
	for (size_t q = 0; q < ng; q++)
		sorted[q] = ct[o[q]];
	free(ct);
	*rows_out = sorted;
	goto out;
oom:
	r->oom = 1;
out:
	free(o);
	free(br);
	free(idx);
	free(its);
	free(v);
	free(tmp);
	return r->oom ? -1 : 0;
}

/* ---- the iterations table ---------------------------------------------------------------------- */

static const char *const iters_names[] = {
	"rank", "host", "iteration", "start_ns", "local_start_ns", "span_ms", "busy_ms", "idle_ms", "compute_ms",
	"comm_ms", "exposed_comm_ms", "overlap_ms", "memop_ms", "kernel_sum_ms", "non_compute_ms", "wait_ms",
	"work_ms", "late_ms", "late_collectives", "cost_ms", "waited_for_ms", "cause"};
static const int iters_types[] = {FL_I64, FL_STR, FL_I64, FL_I64, FL_I64, FL_F64, FL_F64, FL_F64, FL_F64,
				  FL_F64, FL_F64, FL_F64, FL_F64, FL_F64, FL_F64, FL_F64,
				  FL_F64, FL_F64, FL_I64, FL_F64, FL_F64, FL_STR};

static int cmp_coll_rank_iter(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx;
	FL_CMP(c[a].rank, c[b].rank);
	FL_CMP(c[a].iteration, c[b].iteration);
	return 0;
}

static int cmp_coll_iter(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx;
	FL_CMP(c[a].iteration, c[b].iteration);
	return 0;
}

/* The collective rows by (rank, iteration), row order within: by rank in buckets (ri follows rank). */
static void sort_rank_iter(struct red *r, int64_t *o)
{
	int64_t *key = malloc((r->nc + 1) * sizeof(int64_t));
	if (key) {
		for (size_t i = 0; i < r->nc; i++)
			key[i] = r->c[i].ri;
		int rc = fl_bucket_sort(o, r->nc, key, r->nr, cmp_coll_iter, r->c);
		free(key);
		if (rc == 0)
			return;
	}
	fl_msort(o, r->nc, cmp_coll_rank_iter, r->c);
}

static double nanmin2(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static double nanmax2(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

static int iters_table(struct red *r, fl_table *t)
{
	size_t n = r->ni;
	int64_t *o = fl_xcalloc(r, r->nc, sizeof(int64_t));
	if (!o)
		return -1;
	fl_iota(o, r->nc);
	sort_rank_iter(r, o);
	/* a merge of the iterations (rank, iteration order) with the collective rows in that order */
	size_t q = 0;
	int64_t nit = 0;
	for (size_t i = 0; i < n; i++) {
		struct iter *it = &r->it[i];
		while (q < r->nc && (r->c[o[q]].rank < it->rank ||
				     (r->c[o[q]].rank == it->rank && r->c[o[q]].iteration < it->iteration)))
			q++;
		double wait = 0, cost = 0, waited = 0, late = NAN;
		int64_t nl = 0, top = -1;
		size_t e = q;
		while (e < r->nc && r->c[o[e]].rank == it->rank && r->c[o[e]].iteration == it->iteration)
			e++;
		/* sums in the collectives' row order (as numpy's bincount: the sort is stable) */
		for (size_t k = q; k < e; k++) {
			const struct coll *c = &r->c[o[k]];
			wait += c->wait_ms;
			cost += c->cost_ms;
			waited += c->waited_ms;
			if (c->late) {
				late = isnan(late) ? c->late_ms : fmax(late, c->late_ms);
				nl++;
				/* the latest late arrival's cause: of equal lateness the first row */
				if (top < 0 || c->late_ms > r->c[top].late_ms)
					top = o[k];
			}
		}
		it->wait_ms = wait;
		it->cost_ms = cost;
		it->waited_ms = waited;
		it->late_ms = isnan(late) ? 0.0 : late;
		it->nlate = nl;
		char cb[48];
		snprintf(it->cause, sizeof(it->cause), "%s", top >= 0 ? fl_cause_str(&r->c[top], cb, sizeof(cb)) : "");
		it->wait_ms = nanmin2(wait, it->w[FL_W_COMM]);
		it->work_ms = nanmax2(it->w[FL_W_SPAN] - it->wait_ms, 0.0);
	}
	r->by_rank_iter = o; /* the ranks table wants the rows in this order too (ri follows rank) */
	/* the number of distinct iterations */
	{
		int64_t *ids = fl_xcalloc(r, n, sizeof(int64_t));
		if (!ids)
			return -1;
		nit = (int64_t)fl_dense_ids_i64(r, r->it, n, ids);
		free(ids);
	}
	r->nit = n ? nit : 0;
	if (fl_table_init(t, n, iters_names, iters_types, sizeof(iters_types) / sizeof(iters_types[0])))
		return r->oom = 1, -1;
	fl_col *col_cause = fl_table_colw(t, "cause"), *col_cost_ms = fl_table_colw(t, "cost_ms"), *col_host = fl_table_colw(t, "host"), *col_iteration = fl_table_colw(t, "iteration"), *col_late_collectives = fl_table_colw(t, "late_collectives"), *col_late_ms = fl_table_colw(t, "late_ms"), *col_local_start_ns = fl_table_colw(t, "local_start_ns"), *col_rank = fl_table_colw(t, "rank"), *col_start_ns = fl_table_colw(t, "start_ns"), *col_wait_ms = fl_table_colw(t, "wait_ms"), *col_waited_for_ms = fl_table_colw(t, "waited_for_ms"), *col_work_ms = fl_table_colw(t, "work_ms");
	fl_col *colw[FL_NWIN];
	for (int q_ = 0; q_ < FL_NWIN; q_++)
		colw[q_] = fl_table_colw(t, fl_window_names[q_]);
	for (size_t i = 0; i < n; i++) {
		struct iter *it = &r->it[i];
		const struct rank *rk = &r->rk[it->ri];
		double co = r->off[rk->clock] / 1e6;
		col_rank->i[i] = it->rank;
		if (fl_table_set_strc(t, col_host, i, rk->host) || fl_table_set_strc(t, col_cause, i, it->cause))
			return r->oom = 1, -1;
		col_iteration->i[i] = it->iteration;
		col_start_ns->i[i] = fl_sub(it->start_ns, fl_i64(nearbyint(co * 1e6)));
		col_local_start_ns->i[i] = it->start_ns;
		for (int k = 0; k < FL_NWIN; k++)
			colw[k]->f[i] = it->w[k];
		col_wait_ms->f[i] = it->wait_ms;
		col_work_ms->f[i] = it->work_ms;
		col_late_ms->f[i] = it->late_ms;
		col_late_collectives->i[i] = it->nlate;
		col_cost_ms->f[i] = it->cost_ms;
		col_waited_for_ms->f[i] = it->waited_ms;
	}
	return 0;
}

/* ---- the ranks table --------------------------------------------------------------------------- */

static const char *const ranks_names[] = {
	"rank", "host", "path", "clock", "label", "gpus", "iterations", "first_ns", "last_ns", "span_ms", "busy_ms",
	"idle_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "overlap_ms", "memop_ms", "kernel_sum_ms",
	"non_compute_ms", "collectives", "wait_ms", "work_ms", "late_count", "last_count", "iterations_late",
	"cost_ms", "waited_for_ms", "max_late_ms", "cause", "pattern", "clock_offset_ms"};
static const int ranks_types[] = {
	FL_I64, FL_STR, FL_STR, FL_STR, FL_STR, FL_I64, FL_I64, FL_I64, FL_I64, FL_F64, FL_F64,
	FL_F64, FL_F64, FL_F64, FL_F64, FL_F64, FL_F64, FL_F64,
	FL_F64, FL_I64, FL_F64, FL_F64, FL_I64, FL_I64, FL_I64,
	FL_F64, FL_F64, FL_F64, FL_STR, FL_STR, FL_F64};

static const char *pattern(int64_t k, int64_t n)
{
	if (k == 0)
		return "";
	if (k == 1)
		return "one-off";
	return (double)k >= fmax(2.0, 0.5 * (double)n) ? "consistent" : "intermittent";
}

static int cmp_coll_ri_iter(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx;
	FL_CMP(c[a].ri, c[b].ri);
	FL_CMP(c[a].iteration, c[b].iteration);
	return 0;
}

struct csum {
	char name[48];
	double sum;
};

static int ranks_table(struct red *r, fl_table *t)
{
	size_t nr = r->nr;
	for (size_t i = 0; i < nr; i++) {
		struct rank *k = &r->rk[i];
		k->collectives = k->late_count = k->last_count = k->iterations_late = k->with_colls = 0;
		k->wait_ms = k->cost_ms = k->waited_ms = 0;
		k->max_late_ms = NAN;
		k->cause[0] = '\0';
	}
	for (size_t i = 0; i < r->nc; i++) {
		const struct coll *c = &r->c[i];
		struct rank *k = &r->rk[c->ri];
		k->collectives++;
		k->wait_ms += c->wait_ms;
		k->late_count += c->late;
		k->last_count += c->pos == 0 && c->n >= 2;
		k->cost_ms += c->cost_ms;
		k->waited_ms += c->waited_ms;
		if (c->late)
			k->max_late_ms = isnan(k->max_late_ms) ? c->late_ms : fmax(k->max_late_ms, c->late_ms);
	}
	/* distinct iterations per rank: with late rows, with any row */
	int64_t *o = r->by_rank_iter; /* the iterations table's order (ri follows rank) */
	struct csum *cs = fl_xcalloc(r, r->nc, sizeof(*cs));
	int sorted = o != NULL;
	r->by_rank_iter = NULL;
	if (!o)
		o = fl_xcalloc(r, r->nc, sizeof(int64_t));
	if (r->oom) {
		free(o);
		free(cs);
		return -1;
	}
	if (!sorted) {
		fl_iota(o, r->nc);
		fl_msort(o, r->nc, cmp_coll_ri_iter, r->c);
	}
	for (size_t q = 0; q < r->nc;) {
		size_t e = q;
		const struct coll *c = &r->c[o[q]];
		int late = 0;
		while (e < r->nc && r->c[o[e]].ri == c->ri && r->c[o[e]].iteration == c->iteration)
			late |= r->c[o[e++]].late;
		if (c->iteration >= 0) {
			r->rk[c->ri].with_colls++;
			r->rk[c->ri].iterations_late += late;
		}
		q = e;
	}
	/* the cause of most of the rank's lateness (of equal sums, the first in sorted order): the
	 * sums in row order */
	for (size_t q = 0; q < r->nc;) {
		size_t e = q;
		int ri = r->c[o[q]].ri;
		while (e < r->nc && r->c[o[e]].ri == ri)
			e++;
		/* this rank's rows are o[q..e) in (iteration, row) order; the sums need row order */
		size_t m = 0, nn = 0;
		for (size_t k = q; k < e; k++)
			if (r->c[o[k]].late)
				o[q + m++] = o[k];
		gt_sort(o + q, m, sizeof(int64_t), gt_cmp_int64);
		for (size_t k = q; k < q + m; k++) {
			char b[48];
			const char *s = fl_cause_str(&r->c[o[k]], b, sizeof(b));
			size_t j = 0;
			while (j < nn && strcmp(cs[j].name, s) != 0)
				j++;
			if (j == nn) {
				snprintf(cs[nn].name, sizeof(cs[nn].name), "%s", s);
				cs[nn++].sum = 0;
			}
			cs[j].sum += r->c[o[k]].late_ms;
		}
		size_t best = 0;
		for (size_t j = 1; j < nn; j++)
			if (cs[j].sum > cs[best].sum || (cs[j].sum == cs[best].sum && strcmp(cs[j].name, cs[best].name) < 0))
				best = j;
		if (nn)
			snprintf(r->rk[ri].cause, sizeof(r->rk[ri].cause), "%s", cs[best].name);
		q = e;
	}
	free(o);
	free(cs);
	for (size_t i = 0; i < nr; i++) {
		struct rank *k = &r->rk[i];
		k->wait_ms = nanmin2(k->wait_ms, k->w[FL_W_COMM]);
		k->work_ms = nanmax2(k->w[FL_W_SPAN] - k->wait_ms, 0.0);
		k->max_late_ms = isnan(k->max_late_ms) ? 0.0 : k->max_late_ms;
		k->pattern = r->nit && k->iterations_late && k->with_colls ? pattern(k->iterations_late, k->with_colls)
									   : pattern(k->late_count, k->collectives);
	}
	/* the part of each rank's cost in the iterations, and that part without its costliest one */
	for (size_t i = 0; i < r->ni; i++) {
		struct rank *k = &r->rk[r->it[i].ri];
		k->in_its += r->it[i].cost_ms;
		k->steady = fmax(k->steady, r->it[i].cost_ms); /* the top, for now */
	}
	for (size_t i = 0; i < nr; i++)
		r->rk[i].steady = r->ni ? fmax(r->rk[i].in_its - r->rk[i].steady, 0.0) : 0.0;
	if (fl_table_init(t, nr, ranks_names, ranks_types, sizeof(ranks_types) / sizeof(ranks_types[0])))
		return r->oom = 1, -1;
	fl_col *col_cause = fl_table_colw(t, "cause"), *col_clock = fl_table_colw(t, "clock"), *col_clock_offset_ms = fl_table_colw(t, "clock_offset_ms"), *col_collectives = fl_table_colw(t, "collectives"), *col_cost_ms = fl_table_colw(t, "cost_ms"), *col_first_ns = fl_table_colw(t, "first_ns"), *col_gpus = fl_table_colw(t, "gpus"), *col_host = fl_table_colw(t, "host"), *col_iterations = fl_table_colw(t, "iterations"), *col_iterations_late = fl_table_colw(t, "iterations_late"), *col_label = fl_table_colw(t, "label"), *col_last_count = fl_table_colw(t, "last_count"), *col_last_ns = fl_table_colw(t, "last_ns"), *col_late_count = fl_table_colw(t, "late_count"), *col_max_late_ms = fl_table_colw(t, "max_late_ms"), *col_path = fl_table_colw(t, "path"), *col_pattern = fl_table_colw(t, "pattern"), *col_rank = fl_table_colw(t, "rank"), *col_wait_ms = fl_table_colw(t, "wait_ms"), *col_waited_for_ms = fl_table_colw(t, "waited_for_ms"), *col_work_ms = fl_table_colw(t, "work_ms");
	fl_col *colw[FL_NWIN];
	for (int q_ = 0; q_ < FL_NWIN; q_++)
		colw[q_] = fl_table_colw(t, fl_window_names[q_]);
	for (size_t i = 0; i < nr; i++) {
		const struct rank *k = &r->rk[i];
		col_rank->i[i] = k->rank;
		if (fl_table_set_strc(t, col_host, i, k->host) || fl_table_set_strc(t, col_path, i, k->path) ||
		    fl_table_set_strc(t, col_clock, i, k->clock_name) || fl_table_set_strc(t, col_label, i, k->label) ||
		    fl_table_set_strc(t, col_cause, i, k->cause) || fl_table_set_strc(t, col_pattern, i, k->pattern))
			return r->oom = 1, -1;
		col_gpus->i[i] = k->gpus;
		col_iterations->i[i] = k->iterations;
		col_first_ns->i[i] = k->first_ns;
		col_last_ns->i[i] = k->last_ns;
		for (int w = 0; w < FL_NWIN; w++)
			colw[w]->f[i] = k->w[w];
		col_collectives->i[i] = k->collectives;
		col_wait_ms->f[i] = k->wait_ms;
		col_work_ms->f[i] = k->work_ms;
		col_late_count->i[i] = k->late_count;
		col_last_count->i[i] = k->last_count;
		col_iterations_late->i[i] = k->iterations_late;
		col_cost_ms->f[i] = k->cost_ms;
		col_waited_for_ms->f[i] = k->waited_ms;
		col_max_late_ms->f[i] = k->max_late_ms;
		col_clock_offset_ms->f[i] = r->off[k->clock] / 1e6;
	}
	return 0;
}

/* median and scale (1.4826 MAD, never 0) of the finite values */
static void robust(const double *v, size_t n, double *tmp, double *med, double *scale)
{
	size_t m = 0;
	double *w = tmp + n;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			w[m++] = v[i];
	*med = m ? fl_median_of(w, NULL, m, tmp) : 0.0;
	for (size_t i = 0; i < m; i++)
		w[i] = fabs(w[i] - *med);
	double mad = m ? fl_median_of(w, NULL, m, tmp) : 0.0;
	*scale = fmax(fmax(1.4826 * mad, 1e-3 * fabs(*med)), 1e-6);
}

/* ---- the summary ------------------------------------------------------------------------------- */

static int cmp_straggler(const void *ctx, int64_t a, int64_t b)
{
	const struct red *r = ctx;
	const struct rank *x = &r->rk[a], *y = &r->rk[b];
	if (r->nit) {
		FL_CMP(-x->steady, -y->steady);
		FL_CMP(-x->in_its, -y->in_its);
	}
	FL_CMP(-x->cost_ms, -y->cost_ms);
	FL_CMP(-x->max_late_ms, -y->max_late_ms);
	FL_CMP(-x->work_ms, -y->work_ms);
	return 0;
}

static void in_iterations(char *b, size_t len, int64_t late, int64_t with, int64_t nit)
{
	if (!nit)
		b[0] = '\0';
	else if (with && with < nit)
		snprintf(b, len, " in %lld of the %lld iterations with collectives (of %lld)", (long long)late,
			 (long long)with, (long long)nit);
	else
		snprintf(b, len, " in %lld of %lld iterations", (long long)late, (long long)nit);
}

static int stragglers(struct red *r, yajl_gen g, const char *key, double *tmp)
{
	size_t nr = r->nr;
	double *work = fl_xcalloc(r, nr, sizeof(double));
	int64_t *pick = fl_xcalloc(r, nr, sizeof(int64_t));
	if (r->oom) {
		free(work);
		free(pick);
		return -1;
	}
	for (size_t i = 0; i < nr; i++)
		work[i] = r->rk[i].work_ms;
	double wmed, wscale;
	robust(work, nr, tmp, &wmed, &wscale);
	size_t np = 0;
	for (size_t i = 0; i < nr; i++) {
		double z = (work[i] - wmed) / wscale;
		int slow = nr >= 3 && z > Z_OUTLIER && work[i] > wmed * (1 + REL_OUTLIER / 2);
		if (r->rk[i].late_count > 0 || slow)
			pick[np++] = (int64_t)i;
	}
	fl_msort(pick, np, cmp_straggler, r);
	GS(g, key);
	yajl_gen_array_open(g);
	for (size_t q = 0; q < np && q < LIST_MAX; q++) {
		const struct rank *k = &r->rk[pick[q]];
		double inside = r->nit ? k->in_its : 0.0, steady = r->nit ? k->steady : 0.0;
		double per = k->iterations_late ? inside / (double)k->iterations_late : k->cost_ms;
		char reason[1024], its[160], part[96] = "", perit[96] = "";
		if (k->late_count) {
			in_iterations(its, sizeof(its), k->iterations_late, k->with_colls, r->nit);
			if (r->nit)
				snprintf(part, sizeof(part), ", %.3f ms of it in the iterations", inside);
			if (k->iterations_late > 1)
				snprintf(perit, sizeof(perit), " (%.3f ms per late iteration)", per);
			snprintf(reason, sizeof(reason),
				 "%s: late at %lld of %lld collectives%s (by up to %.3f ms); the others waited %.3f ms for "
				 "it alone%s%s; cause: %s",
				 k->pattern, (long long)k->late_count, (long long)k->collectives, its, k->max_late_ms,
				 k->cost_ms, part, perit, k->cause[0] ? k->cause : "unclear");
		} else {
			snprintf(reason, sizeof(reason),
				 "never late beyond the noise, but %.3f ms not waiting for others vs %.3f ms median",
				 k->work_ms, wmed);
		}
		yajl_gen_map_open(g);
		ki(g, "rank", k->rank);
		ks(g, "host", k->host);
		kd(g, "cost_ms", k->cost_ms);
		kd(g, "cost_in_iterations_ms", inside);
		kd(g, "steady_cost_ms", steady);
		kd(g, "waited_for_ms", k->waited_ms);
		kd(g, "cost_per_late_iteration_ms", per);
		ki(g, "late_collectives", k->late_count);
		ki(g, "collectives", k->collectives);
		ki(g, "iterations_late", k->iterations_late);
		ki(g, "iterations", r->nit);
		ki(g, "iterations_with_collectives", k->with_colls);
		ks(g, "pattern", k->pattern);
		ks(g, "cause", k->cause);
		kd(g, "max_late_ms", k->max_late_ms);
		kd(g, "work_ms", k->work_ms);
		kd(g, "median_work_ms", wmed);
		ks(g, "reason", reason);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	free(work);
	free(pick);
	return 0;
}

static int cmp_late_first(const void *ctx, int64_t a, int64_t b)
{
	const struct coll *c = ctx;
	FL_CMP(-c[a].cost_ms, -c[b].cost_ms);
	FL_CMP(-c[a].late_ms, -c[b].late_ms);
	FL_CMP(a, b);
	return 0;
}

/* The position of iteration v among the sorted iterations u[0..n), -1 if none. */
static int64_t iter_index(const int64_t *u, size_t n, int64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (u[m] < v)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < n && u[lo] == v ? (int64_t)lo : -1;
}

static const char *const phase_names[] = {"compute", "memory copies", "idle (GPU waiting for the CPU)"};

/* Per iteration: the slowest and the fastest rank, the phase the slowest spent more in than the
 * median rank, and the late arrival that cost most. */
static int per_iteration(struct red *r, yajl_gen g, double *tmp)
{
	GS(g, "per_iteration");
	yajl_gen_array_open(g);
	size_t n = r->ni;
	int64_t *gid = fl_xcalloc(r, n, sizeof(int64_t)), *o = fl_xcalloc(r, n, sizeof(int64_t)),
		*start = fl_xcalloc(r, n + 1, sizeof(int64_t)), *lt = fl_xcalloc(r, r->nc, sizeof(int64_t));
	double *v[4];
	for (int k = 0; k < 4; k++)
		v[k] = fl_xcalloc(r, n, sizeof(double));
	if (r->oom)
		goto out;
	size_t ng = fl_dense_ids_i64(r, r->it, n, gid);
	fl_group_index(gid, n, ng, o, start);
	for (size_t i = 0; i < n; i++) {
		v[0][i] = r->it[i].work_ms;
		v[1][i] = r->it[i].w[FL_W_COMPUTE];
		v[2][i] = r->it[i].w[FL_W_MEMOP];
		v[3][i] = r->it[i].w[FL_W_IDLE];
	}
	size_t nl = 0;
	for (size_t i = 0; i < r->nc; i++)
		if (r->c[i].late)
			lt[nl++] = (int64_t)i;
	fl_msort(lt, nl, cmp_late_first, r->c);
	/* per iteration, in one pass: the first late row in that order, the cost of the late rows (in
	 * row order), the collectives whose first late row is in it */
	int64_t *uit = fl_xcalloc(r, ng, sizeof(int64_t)), *pi_top = fl_xcalloc(r, ng, sizeof(int64_t)),
		*pi_n = fl_xcalloc(r, ng, sizeof(int64_t));
	double *pi_cost = fl_xcalloc(r, ng, sizeof(double));
	if (r->oom) {
		free(uit);
		free(pi_top);
		free(pi_n);
		free(pi_cost);
		goto out;
	}
	for (size_t q = 0; q < ng; q++) {
		uit[q] = r->it[o[start[q]]].iteration;
		pi_top[q] = -1;
	}
#define ITER_AT(v) iter_index(uit, ng, (v))
	for (size_t k = 0; k < nl; k++) {
		int64_t j = ITER_AT(r->c[lt[k]].iteration);
		if (j >= 0 && pi_top[j] < 0)
			pi_top[j] = lt[k];
	}
	int64_t prevk = -1;
	int seen_late = 0;
	for (size_t i = 0; i < r->nc; i++) { /* a collective's rows are contiguous */
		const struct coll *c = &r->c[i];
		if (c->k != prevk) {
			prevk = c->k;
			seen_late = 0;
		}
		if (!c->late)
			continue;
		int64_t j = ITER_AT(c->iteration);
		if (j >= 0) {
			pi_cost[j] += c->cost_ms;
			pi_n[j] += !seen_late;
		}
		seen_late = 1;
	}
#undef ITER_AT
	for (size_t q = 0; q < ng; q++) {
		size_t s = (size_t)start[q], cnt = (size_t)(start[q + 1] - start[q]);
		int64_t iter = r->it[o[s]].iteration;
		double wmax = NAN, wmin = NAN;
		for (size_t k = 0; k < cnt; k++) {
			wmax = fmax(wmax, v[0][o[s + k]]);
			wmin = fmin(wmin, v[0][o[s + k]]);
		}
		int64_t slow = -1, fast = -1;
		for (size_t k = 0; k < cnt; k++) {
			if (slow < 0 && v[0][o[s + k]] == wmax)
				slow = o[s + k];
			if (fast < 0 && v[0][o[s + k]] == wmin)
				fast = o[s + k];
		}
		if (slow < 0)
			slow = (int64_t)n - 1;
		if (fast < 0)
			fast = (int64_t)n - 1;
		double med[4];
		for (int k = 0; k < 4; k++)
			med[k] = fl_median_of(v[k], o + s, cnt, tmp);
		double ph[3] = {v[1][slow] - med[1], v[2][slow] - med[2], v[3][slow] - med[3]};
		int best = 0;
		double top = ph[0];
		for (int k = 1; k < 3; k++) {
			if (isnan(top))
				break;
			if (isnan(ph[k]) || ph[k] > top) {
				top = ph[k];
				best = k;
			}
		}
		/* the late arrival that cost most in this iteration; the late collectives; their cost */
		int64_t lr = -1, ncoll = pi_n[q];
		double lms = 0.0, cost = pi_cost[q];
		char cause[48] = "";
		if (pi_top[q] >= 0) {
			const struct coll *t = &r->c[pi_top[q]];
			char b[48];
			lr = t->rank;
			lms = t->late_ms;
			snprintf(cause, sizeof(cause), "%s", fl_cause_str(t, b, sizeof(b)));
		}
		yajl_gen_map_open(g);
		ki(g, "iteration", iter);
		ki(g, "ranks", (long long)cnt);
		ki(g, "slowest_rank", r->it[slow].rank);
		kd(g, "slowest_ms", v[0][slow]);
		ki(g, "fastest_rank", r->it[fast].rank);
		kd(g, "fastest_ms", v[0][fast]);
		kd(g, "median_ms", med[0]);
		kd(g, "spread_ms", v[0][slow] - v[0][fast]);
		ks(g, "phase", top > 0 ? phase_names[best] : "none");
		kd(g, "phase_excess_ms", isnan(top) ? NAN : fmax(top, 0.0));
		ki(g, "late_rank", lr);
		kd(g, "late_ms", lms);
		ks(g, "cause", cause);
		ki(g, "late_collectives", ncoll);
		kd(g, "cost_ms", cost);
		yajl_gen_map_close(g);
	}
	free(uit);
	free(pi_top);
	free(pi_n);
	free(pi_cost);
out:
	yajl_gen_array_close(g);
	free(gid);
	free(o);
	free(start);
	free(lt);
	for (int k = 0; k < 4; k++)
		free(v[k]);
	return r->oom ? -1 : 0;
}

static int cmp_late_list(const void *ctx, int64_t a, int64_t b)
{
	const struct ctrow *t = ctx;
	FL_CMP(-t[a].held_ms, -t[b].held_ms);
	FL_CMP(-t[a].late_ms, -t[b].late_ms);
	return 0;
}

static int late_list(struct red *r, yajl_gen g, const struct ctrow *ct, const fl_table *tab)
{
	int64_t *o = fl_xcalloc(r, r->ng, sizeof(int64_t));
	if (!o)
		return -1;
	size_t n = 0;
	for (size_t q = 0; q < r->ng; q++)
		if (ct[q].is_late)
			o[n++] = (int64_t)q;
	fl_msort(o, n, cmp_late_list, ct);
	const fl_col *lr = fl_table_col(tab, "late_ranks"), *lb = fl_table_col(tab, "late_by_ms");
	GS(g, "late_collectives");
	yajl_gen_array_open(g);
	for (size_t k = 0; k < n && k < LIST_MAX; k++) {
		const struct ctrow *x = &ct[o[k]];
		yajl_gen_map_open(g);
		ki(g, "iteration", x->iteration);
		ks(g, "comm", r->voc[x->comm]);
		ki(g, "seq", x->seq);
		ks(g, "name", x->pairname);
		ki(g, "count", x->count);
		ks(g, "dtype", r->voc[x->dtype]);
		ki(g, "bytes", x->bytes);
		ki(g, "late_rank", x->late_rank);
		kd(g, "late_ms", x->late_ms);
		kd(g, "held_ms", x->held_ms);
		kd(g, "skew_ms", x->skew_ms);
		ks(g, "cause", x->cause);
		GS(g, "late_ranks");
		yajl_gen_array_open(g);
		for (int64_t j = lr->i[o[k]]; j < lr->i[o[k] + 1] && j < lr->i[o[k]] + 8; j++) {
			yajl_gen_array_open(g);
			yajl_gen_integer(g, lr->li[j]);
			jdbl(g, lb->f[j]);
			yajl_gen_array_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	free(o);
	return (int)n;
}

static int outliers(struct red *r, yajl_gen g, double *tmp)
{
	static const char *const mets[][2] = {
		{"work_ms", "time not waiting for other ranks"}, {"compute_ms", "compute"}, {"idle_ms", "GPU idle"},
		{"memop_ms", "memory copies"}, {"exposed_comm_ms", "exposed communication"},
		{"wait_ms", "waiting in collectives"}};
	GS(g, "outliers");
	yajl_gen_array_open(g);
	size_t nr = r->nr, out = 0;
	double *v = fl_xcalloc(r, nr, sizeof(double));
	if (!v || nr < 3)
		goto done;
	for (size_t m = 0; m < sizeof(mets) / sizeof(mets[0]); m++) {
		for (size_t i = 0; i < nr; i++) {
			const struct rank *k = &r->rk[i];
			v[i] = m == 0 ? k->work_ms : m == 1 ? k->w[FL_W_COMPUTE] : m == 2 ? k->w[FL_W_IDLE]
			       : m == 3 ? k->w[FL_W_MEMOP] : m == 4 ? k->w[FL_W_EXPOSED] : k->wait_ms;
		}
		double med, scale;
		robust(v, nr, tmp, &med, &scale);
		size_t shown = 0;
		for (size_t i = 0; i < nr && shown < LIST_MAX; i++) {
			double z = (v[i] - med) / scale;
			double rel = med != 0 ? fabs(v[i] - med) / med : (v[i] != 0 ? INFINITY : 0.0);
			if (!(fabs(z) > Z_OUTLIER && rel > REL_OUTLIER))
				continue;
			shown++;
			if (out++ >= LIST_MAX)
				continue;
			char reason[256];
			snprintf(reason, sizeof(reason), "%s %s the median: %.3f vs %.3f ms", mets[m][1],
				 v[i] > med ? "above" : "below", v[i], med);
			yajl_gen_map_open(g);
			ki(g, "rank", r->rk[i].rank);
			ks(g, "host", r->rk[i].host);
			ks(g, "gpu", r->rk[i].label);
			ks(g, "metric", mets[m][0]);
			kd(g, "value", v[i]);
			kd(g, "median", med);
			kd(g, "z", z);
			ks(g, "reason", reason);
			yajl_gen_map_close(g);
		}
	}
done:
	yajl_gen_array_close(g);
	free(v);
	return r->oom ? -1 : 0;
}

static void notes(yajl_gen g, const char *key, const struct gt_vec *v, const char *what)
{
	GS(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < v->n; i++) {
		const struct note *n = &GT_VEC_AT(v, struct note, i);
		yajl_gen_map_open(g);
		ks(g, "path", n->path);
		ks(g, what, n->text);
		if (n->label)
			ks(g, "label", n->label);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void clocks(struct red *r, yajl_gen g)
{
	GS(g, "clock");
	yajl_gen_array_open(g);
	int ref = r->nr ? r->rk[0].clock : 0;
	int64_t aref = 0, a = 0;
	int has_ref = r->nr && fl_clock_anchor(r, ref, &aref);
	for (size_t h = 0; h < r->nclk; h++) {
		int has = fl_clock_anchor(r, (int)h, &a);
		yajl_gen_map_open(g);
		ks(g, "host", fl_clock_name(r, (int)h));
		kd(g, "offset_ms", r->off[h] / 1e6);
		ks(g, "source", (int)h == ref ? "reference" : r->fit[h].have ? "collectives"
						     : has && has_ref  ? "run.json"
								       : "none");
		if (has && has_ref)
			kd(g, "anchor_offset_ms", (double)fl_sub(a, aref) / 1e6);
		if (r->fit[h].have) {
			ki(g, "collectives", r->fit[h].n);
			kd(g, "rms_us", r->fit[h].rms_us);
			kd(g, "p95_us", r->fit[h].p95_us);
			kd(g, "max_us", r->fit[h].max_us);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static int cmp_comm_kind(const void *ctx, int64_t a, int64_t b)
{
	const struct ctrow *t = ctx;
	FL_CMP(t[a].comm, t[b].comm);
	return strcmp(t[a].pairname, t[b].pairname);
}

struct mcount {
	int match;
	int64_t n, first;
};

static int cmp_mcount(const void *a, const void *b)
{
	const struct mcount *x = a, *y = b;
	FL_CMP(y->n, x->n);
	FL_CMP(x->first, y->first);
	return 0;
}

int fl_reduce_out(struct red *r, fl_result *out)
{
	struct ctrow *ct = NULL;
	double *tmp = fl_xcalloc(r, 2 * (r->nr + r->nc + r->ni) + 2, sizeof(double));
	struct mcount *mc = fl_xcalloc(r, r->nvoc, sizeof(*mc));
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g)
		r->oom = 1;
	if (r->oom || colls_table(r, &out->collectives, &ct) || iters_table(r, &out->iterations) ||
	    ranks_table(r, &out->ranks))
		goto out;
	/* how the rows were matched, most rows first (of equally many, the first seen) */
	size_t nm = 0;
	for (size_t i = 0; i < r->nc; i++) {
		size_t j = 0;
		while (j < nm && mc[j].match != r->c[i].match)
			j++;
		if (j == nm)
			mc[nm++] = (struct mcount){r->c[i].match, 0, (int64_t)i};
		mc[j].n++;
	}
	gt_sort(mc, nm, sizeof(*mc), cmp_mcount);
	for (size_t j = 0; j < nm; j++)
		if (strcmp(r->voc[mc[j].match], "order") == 0)
			fl_warn(r, "%lld of %zu collective rows matched by order (no NCCL profiler-plugin records or trace "
				   "sequence numbers): right only when every rank issued its collectives in the same order",
				(long long)mc[j].n, r->nc);
	for (size_t h = 0; h < r->nclk; h++)
		/* the 95th percentile, not the rms: a rooted collective whose root does not wait is one far
		 * residual among well-fitted ones */
		if (r->fit[h].have && r->fit[h].p95_us > 1000)
			fl_warn(r, "clock %s: 5 %% of its collectives' ends are more than %.1f ms off the others' after "
				   "alignment: skews and waits on it are uncertain by as much",
				fl_clock_name(r, (int)h), r->fit[h].p95_us / 1e3);
	if (r->ng && r->nr > 1) {
		/* against the other collectives of the communicator, kind by kind */
		size_t shorter = 0;
		int64_t *so = fl_xcalloc(r, r->ng, sizeof(int64_t));
		if (!so)
			goto out;
		fl_iota(so, r->ng);
		fl_msort(so, r->ng, cmp_comm_kind, ct);
		for (size_t a = 0; a < r->ng;) {
			size_t b = a;
			int64_t most = 0;
			while (b < r->ng && cmp_comm_kind(ct, so[a], so[b]) == 0)
				most = ct[so[b++]].n > most ? ct[so[b - 1]].n : most;
			for (size_t q = a; q < b; q++)
				shorter += ct[so[q]].n < most;
			a = b;
		}
		free(so);
		if (shorter)
			fl_warn(r, "%zu collectives were seen on fewer ranks than the others (a rank left out, or traces "
				   "that start or end at different points)",
				shorter);
	}
	yajl_gen_map_open(g);
	ki(g, "schema_version", 2);
	ks(g, "tool", "gputap fleet");
	ki(g, "ranks", (long long)r->nr);
	GS(g, "hosts");
	yajl_gen_array_open(g);
	{
		const char **hs = fl_xcalloc(r, r->nr, sizeof(char *));
		size_t nh = 0;
		for (size_t i = 0; hs && i < r->nr; i++)
			if (r->rk[i].host[0])
				hs[nh++] = r->rk[i].host;
		gt_sort(hs, nh, sizeof(char *), cmp_cstr);
		for (size_t i = 0; i < nh; i++)
			if (!i || strcmp(hs[i], hs[i - 1]) != 0)
				GS(g, hs[i]);
		free(hs);
	}
	yajl_gen_array_close(g);
	ki(g, "clocks", r->nr ? (long long)r->nclk : 0);
	ki(g, "iterations", r->nit);
	ki(g, "collectives", (long long)r->ng);
	GS(g, "collective_rows_by_match");
	yajl_gen_map_open(g);
	for (size_t j = 0; j < nm; j++)
		ki(g, r->voc[mc[j].match], mc[j].n);
	yajl_gen_map_close(g);
	ks(g, "match", !nm ? "none" : nm == 1 ? r->voc[mc[0].match] : "mixed");
	kd(g, "late_threshold_ms", r->thr);
	kd(g, "arrival_noise_ms", r->noise);
	notes(g, "failed", &r->failed, "error");
	notes(g, "skipped", &r->skipped, "reason");
	notes(g, "partial", &r->partial, "reason");
	if (stragglers(r, g, "stragglers", tmp) || stragglers(r, g, "slow_ranks", tmp))
		goto out;
	int nlate = late_list(r, g, ct, &out->collectives);
	if (nlate < 0)
		goto out;
	ki(g, "late_collectives_total", nlate);
	if (outliers(r, g, tmp) || per_iteration(r, g, tmp))
		goto out;
	clocks(r, g);
	GS(g, "warnings");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->warnings.n; i++)
		GS(g, GT_VEC_AT(&r->warnings, struct note, i).text);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || !(out->summary_json = strndup((const char *)buf, len)))
		r->oom = 1;
out:
	if (g)
		yajl_gen_free(g);
	free(ct);
	free(tmp);
	free(mc);
	return r->oom ? -1 : 0;
}
