/*
 * fleet/reduce_util.c — the reduction's group arithmetic (reduce_int.h): a stable sort of row
 * indices, medians and quantiles as numpy computes them, rows grouped by a dense id.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sort.h"
#include "fleet/reduce_int.h"

void fl_iota(int64_t *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		o[i] = (int64_t)i;
}

/* A stable insertion sort: short runs, and the fallback without memory. */
static void insertion(int64_t *o, size_t n, fl_cmp_fn cmp, const void *ctx)
{
	for (size_t i = 1; i < n; i++) {
		int64_t x = o[i];
		size_t j = i;
		while (j > 0 && cmp(ctx, o[j - 1], x) > 0) {
			o[j] = o[j - 1];
			j--;
		}
		o[j] = x;
	}
}

static void merge(int64_t *o, int64_t *t, size_t n, fl_cmp_fn cmp, const void *ctx)
{
	if (n < 2)
		return;
	if (n <= 12) {
		insertion(o, n, cmp, ctx);
		return;
	}
	size_t h = n / 2;
	merge(o, t, h, cmp, ctx);
	merge(o + h, t, n - h, cmp, ctx);
	if (cmp(ctx, o[h - 1], o[h]) <= 0)
		return;
	memcpy(t, o, h * sizeof(int64_t));
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		o[k++] = cmp(ctx, o[j], t[i]) < 0 ? o[j++] : t[i++];
	while (i < h)
		o[k++] = t[i++];
}

void fl_msort(int64_t *o, size_t n, fl_cmp_fn cmp, const void *ctx)
{
	if (n < 2)
		return;
	int64_t *t = malloc((n / 2 + 1) * sizeof(int64_t));
	if (!t) { /* no memory for the merge: slow but right */
		insertion(o, n, cmp, ctx);
		return;
	}
	merge(o, t, n, cmp, ctx);
	free(t);
}

static size_t gather(const double *v, const int64_t *idx, size_t n, double *tmp)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		double x = v[idx ? idx[i] : (int64_t)i];
		if (!isnan(x))
			tmp[m++] = x;
	}
	gt_sort(tmp, m, sizeof(double), gt_cmp_double);
	return m;
}

/* The k-th smallest of a[0..n) (a is reordered: below k the smaller ones), Hoare's selection. */
static double select_k(double *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		double piv = a[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (a[i] < piv)
				i++;
			while (a[j] > piv)
				j--;
			if (i <= j) {
				double t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return a[k];
}

double fl_median_of(const double *v, const int64_t *idx, size_t n, double *tmp)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		double x = v[idx ? idx[i] : (int64_t)i];
		if (!isnan(x))
			tmp[m++] = x;
	}
	if (!m)
		return NAN;
	double hi = select_k(tmp, m, m / 2);
	if (m & 1)
		return hi;
	double lo = tmp[0]; /* the largest of those below m / 2 */
	for (size_t i = 1; i < m / 2; i++)
		lo = tmp[i] > lo ? tmp[i] : lo;
	return (lo + hi) / 2;
}

double fl_quantile_of(const double *v, const int64_t *idx, size_t n, double q, double *tmp)
{
	size_t m = gather(v, idx, n, tmp);
	if (!m)
		return NAN;
	double pos = (double)(m - 1) * q;
	size_t lo = (size_t)floor(pos), hi = (size_t)ceil(pos);
	double a = tmp[lo], b = tmp[hi], t = pos - (double)lo, d = b - a;
	return t >= 0.5 ? b - d * (1 - t) : a + d * t; /* numpy's _lerp */
}

void fl_group_index(const int64_t *gid, size_t n, size_t ng, int64_t *o, int64_t *start)
{
	memset(start, 0, (ng + 1) * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		start[gid[i] + 1]++;
	for (size_t g = 0; g < ng; g++)
		start[g + 1] += start[g];
	int64_t *fill = malloc((ng + 1) * sizeof(int64_t));
	if (fill) {
		memcpy(fill, start, (ng + 1) * sizeof(int64_t));
		for (size_t i = 0; i < n; i++)
			o[fill[gid[i]]++] = (int64_t)i;
		free(fill);
		return;
	}
	size_t k = 0; /* no memory: one pass per group */
	for (size_t g = 0; g < ng; g++)
		for (size_t i = 0; i < n; i++)
			if ((size_t)gid[i] == g)
				o[k++] = (int64_t)i;
}

static int cmp_iter_num(const void *ctx, int64_t a, int64_t b)
{
	const struct iter *t = ctx;
	FL_CMP(t[a].iteration, t[b].iteration);
	return 0;
}

size_t fl_dense_ids_i64(struct red *r, const struct iter *it, size_t n, int64_t *gid)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		lo = it[i].iteration < lo ? it[i].iteration : lo;
		hi = it[i].iteration > hi ? it[i].iteration : hi;
	}
	if (n && (uint64_t)hi - (uint64_t)lo <= 4 * n + 1024) { /* small numbers: which are there, no sort */
		int64_t *id = calloc((size_t)((uint64_t)hi - (uint64_t)lo + 1), sizeof(int64_t));
		if (id) {
			for (size_t i = 0; i < n; i++)
				id[fl_sub(it[i].iteration, lo)] = 1;
			int64_t g = 0;
			for (int64_t v = 0; v <= fl_sub(hi, lo); v++)
				id[v] = id[v] ? g++ : -1;
			for (size_t i = 0; i < n; i++)
				gid[i] = id[fl_sub(it[i].iteration, lo)];
			free(id);
			return (size_t)g;
		}
	}
	int64_t *o = fl_xcalloc(r, n, sizeof(int64_t));
	if (!o)
		return 0;
	fl_iota(o, n);
	fl_msort(o, n, cmp_iter_num, it);
	int64_t g = -1;
	for (size_t q = 0; q < n; q++) {
		if (!q || it[o[q]].iteration != it[o[q - 1]].iteration)
			g++;
		gid[o[q]] = g;
	}
	free(o);
	return (size_t)(g + 1);
}

int fl_cmp_iter_task(const void *ctx, int64_t a, int64_t b)
{
	const fl_iterrow *t = ctx;
	FL_CMP(t[a].task, t[b].task);
	return 0;
}

int fl_cmp_coll_task(const void *ctx, int64_t a, int64_t b)
{
	const fl_collrow *t = ctx;
	FL_CMP(t[a].task, t[b].task);
	return 0;
}

int fl_bucket_sort(int64_t *o, size_t n, const int64_t *key, size_t nkeys, fl_cmp_fn cmp, const void *ctx)
{
	int64_t *start = calloc(nkeys + 2, sizeof(int64_t)), *in = malloc((n + 1) * sizeof(int64_t));
	if (!start || !in) {
		free(start);
		free(in);
		return -1;
	}
	memcpy(in, o, n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		start[key[in[i]] + 1]++;
	for (size_t k = 0; k < nkeys; k++)
		start[k + 1] += start[k];
	int64_t *fill = in; /* reused below: o is the output */
	int64_t *pos = malloc((nkeys + 1) * sizeof(int64_t));
	if (!pos) {
		free(start);
		free(in);
		return -1;
	}
	memcpy(pos, start, (nkeys + 1) * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		o[pos[key[fill[i]]]++] = fill[i];
	free(pos);
	free(in);
	if (cmp)
		for (size_t k = 0; k < nkeys; k++)
			fl_msort(o + start[k], (size_t)(start[k + 1] - start[k]), cmp, ctx);
	free(start);
	return 0;
}
