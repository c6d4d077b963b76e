/*
 * fleet/text.c — the text summary `gputap fleet` prints and writes as summary.txt.
 *
 * Owns: the text and its headline (the result's "text" and "headline"), from summary.json's object
 * and the ranks table: the headline, the late threshold, warnings, inputs left
 * out, stragglers, late collectives, per iteration (the TEXT_ROWS with the most waiting when there
 * are more), per rank medians, clocks (the worst fits) and outliers.  The text is the one the Python
 * package printed before the analysis moved here, byte for byte (users' scripts read it): a value
 * is printed as its JSON text, "%d" of a float truncates, a JSON null is "nan" in a number and
 * "None" in a string, text is cut and padded by characters, sorts are stable, and a median skips
 * NaN (and averages the two middle values of an even count).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "core/jsondepth.h"
#include "core/sort.h"
#include "fleet/fleet.h"

#define TEXT_ROWS 20       /* rows per table; summary.json and the tables hold the rest */

/* ---- the text, growing ------------------------------------------------------------------------- */

typedef struct {
	char *p;
	size_t n, cap;
	int oom;
} tbuf;

static void tb_add(tbuf *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (b->n + len + 1 > cap)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = '\0';
}

static void tb_puts(tbuf *b, const char *s) { tb_add(b, s, strlen(s)); }

static void tb_pad(tbuf *b, size_t n)
{
	for (; n; n--)
		tb_add(b, " ", 1);
}

__attribute__((format(printf, 2, 3))) static void tb_printf(tbuf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		tb_add(b, small, (size_t)n);
		return;
	}
	char *big = malloc((size_t)n + 1);
	if (!big) {
		b->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	tb_add(b, big, (size_t)n);
	free(big);
}

/* ---- cells: Python's %-Ns / %Ns of s[:max], counted in characters -------------------------------- */

static int is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Bytes of the first `max` characters of s (all of it when max < 0); their count in *chars. */
static size_t utf8_prefix(const char *s, long max, size_t *chars)
{
	size_t i = 0, n = 0;
	while (s[i]) {
		if (!is_cont((unsigned char)s[i])) {
			if (max >= 0 && (long)n == max)
				break;
			n++;
		}
		i++;
	}
	*chars = n;
	return i;
}

/* width > 0: right-aligned, < 0: left-aligned (as printf's), 0: as it is. */
static void cell(tbuf *b, int width, const char *s, long max)
{
	size_t chars, len = utf8_prefix(s, max, &chars);
	size_t w = (size_t)(width < 0 ? -width : width);
	if (width > 0 && chars < w)
		tb_pad(b, w - chars);
	tb_add(b, s, len);
	if (width < 0 && chars < w)
		tb_pad(b, w - chars);
}

/* "%*.*f" as Python: a NaN is "nan" whatever its sign bit. */
static void fcell(tbuf *b, int width, int prec, int plus, double v)
{
	if (isnan(v))
		v = fabs(v);
	if (plus)
		tb_printf(b, "%+*.*f", width, prec, v);
	else
		tb_printf(b, "%*.*f", width, prec, v);
}

/* ---- values of the summary --------------------------------------------------------------------- */

static yajl_val get(yajl_val o, const char *key)
{
	if (!YAJL_IS_OBJECT(o))
		return NULL;
	for (size_t i = YAJL_GET_OBJECT(o)->len; i-- > 0;)
		if (strcmp(YAJL_GET_OBJECT(o)->keys[i], key) == 0)
			return YAJL_GET_OBJECT(o)->values[i];
	return NULL;
}

static size_t alen(yajl_val a) { return YAJL_IS_ARRAY(a) ? YAJL_GET_ARRAY(a)->len : 0; }

static yajl_val at(yajl_val a, size_t i) { return i < alen(a) ? YAJL_GET_ARRAY(a)->values[i] : NULL; }

/* A number as Python's float(): null (a NaN summary.json could not hold) and anything else NaN. */
static double num(yajl_val v)
{
	if (YAJL_IS_DOUBLE(v))
		return YAJL_GET_DOUBLE(v);
	if (YAJL_IS_INTEGER(v))
		return (double)YAJL_GET_INTEGER(v);
	if (YAJL_IS_NUMBER(v))
		return strtod(YAJL_GET_NUMBER(v), NULL);
	if (YAJL_IS_TRUE(v))
		return 1;
	if (YAJL_IS_FALSE(v))
		return 0;
	return NAN;
}

/* A whole number of the JSON text (no fraction or exponent). */
static int int_text(yajl_val v)
{
	return YAJL_IS_NUMBER(v) && !strpbrk(YAJL_GET_NUMBER(v), ".eE");
}

/* Python's "%d": an integer as written, a float truncated. */
static const char *dstr(yajl_val v, char *buf, size_t n)
{
	if (int_text(v))
		return YAJL_GET_NUMBER(v);
	if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v))
		return YAJL_IS_TRUE(v) ? "1" : "0";
	double d = num(v);
	if (isnan(d))
		return "nan";
	snprintf(buf, n, "%.0f", trunc(d) + 0.0);
	return buf;
}

static void icell(tbuf *b, int width, yajl_val v)
{
	char buf[400];
	cell(b, width, dstr(v, buf, sizeof(buf)), -1);
}

/* Python's str(): json.dumps wrote numbers as their repr, so their text is theirs. */
static const char *pstr(yajl_val v)
{
	if (YAJL_IS_STRING(v))
		return YAJL_GET_STRING(v);
	if (YAJL_IS_NUMBER(v))
		return YAJL_GET_NUMBER(v);
	if (YAJL_IS_TRUE(v))
		return "True";
	if (YAJL_IS_FALSE(v))
		return "False";
	if (!v || YAJL_IS_NULL(v))
		return "None";
	return YAJL_IS_ARRAY(v) ? "[...]" : "{...}";
}

static int truthy(yajl_val v)
{
	if (YAJL_IS_STRING(v))
		return YAJL_GET_STRING(v)[0] != 0;
	if (YAJL_IS_NUMBER(v))
		return num(v) != 0;
	if (YAJL_IS_ARRAY(v))
		return YAJL_GET_ARRAY(v)->len > 0;
	if (YAJL_IS_OBJECT(v))
		return YAJL_GET_OBJECT(v)->len > 0;
	return YAJL_IS_TRUE(v);
}

/* Python's `v or dflt` of a string. */
static const char *sor(yajl_val v, const char *dflt) { return truthy(v) ? pstr(v) : dflt; }

/* ---- stable sorts ------------------------------------------------------------------------------ */

typedef struct {
	double key;
	size_t idx;
} keyed;

/* Ascending by key, equal keys in their first order (sorted() is stable); NaN last. */
static int keyed_cmp(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	int xn = isnan(x->key), yn = isnan(y->key);
	if (xn != yn)
		return xn - yn;
	if (!xn && x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* ---- sections ---------------------------------------------------------------------------------- */

static void more(tbuf *b, size_t n, size_t shown, const char *where)
{
	if (n > shown)
		tb_printf(b, "  ... %zu more in %s\n", n - shown, where);
}

/* "  ... N more": N from a JSON count (late_collectives_total) */
static void more_v(tbuf *b, yajl_val n, size_t shown, const char *where)
{
	double d = num(n);
	if (d > (double)shown) {
		tb_puts(b, "  ... ");
		if (int_text(n) && YAJL_IS_INTEGER(n))
			tb_printf(b, "%lld", YAJL_GET_INTEGER(n) - (long long)shown);
		else
			fcell(b, 0, 0, 0, trunc(d) - (double)shown);
		tb_printf(b, " more in %s\n", where);
	}
}

static const char *how_matched(const char *k)
{
	if (!strcmp(k, "nccl"))
		return "NCCL's profiler plugin";
	if (!strcmp(k, "trace"))
		return "the trace's sequence numbers";
	if (!strcmp(k, "order"))
		return "order";
	return k;
}

static void headline(tbuf *b, yajl_val s)
{
	yajl_val hosts = get(s, "hosts");
	tb_puts(b, "gputap fleet: ");
	icell(b, 0, get(s, "ranks"));
	if (truthy(hosts))
		tb_printf(b, " ranks on %zu host%s, ", alen(hosts), alen(hosts) == 1 ? "" : "s");
	else
		tb_puts(b, " ranks (the traces do not name their machines: each rank is its own clock), ");
	icell(b, 0, get(s, "iterations"));
	tb_puts(b, " iterations, ");
	icell(b, 0, get(s, "collectives"));
	tb_puts(b, " collectives matched across ranks");
	yajl_val by = get(s, "collective_rows_by_match");
	size_t n = YAJL_IS_OBJECT(by) ? YAJL_GET_OBJECT(by)->len : 0;
	keyed *o = n ? malloc(n * sizeof(*o)) : NULL;
	if (n && !o) {
		b->oom = 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		o[i] = (keyed){-num(YAJL_GET_OBJECT(by)->values[i]), i};
	gt_sort(o, n, sizeof(*o), keyed_cmp);
	for (size_t i = 0; i < n; i++) {
		tb_puts(b, i ? ", " : " (by ");
		tb_puts(b, how_matched(YAJL_GET_OBJECT(by)->keys[o[i].idx]));
		tb_puts(b, " ");
		icell(b, 0, YAJL_GET_OBJECT(by)->values[o[i].idx]);
		tb_puts(b, " rows");
	}
	if (n)
		tb_puts(b, ")");
	tb_puts(b, "\n");
	free(o);
}

/* failed, partial: "  PATH: WHY" each, at most TEXT_ROWS */
static void path_list(tbuf *b, yajl_val l, const char *title, const char *why)
{
	tb_printf(b, "\n%s (%zu):\n", title, alen(l));
	for (size_t i = 0; i < alen(l) && i < TEXT_ROWS; i++)
		tb_printf(b, "  %s: %s\n", pstr(get(at(l, i), "path")), pstr(get(at(l, i), why)));
	more(b, alen(l), TEXT_ROWS, "summary.json");
}

static void skipped(tbuf *b, yajl_val l)
{
	tb_printf(b, "\nSkipped, no GPU work (a launcher) (%zu): ", alen(l));
	for (size_t i = 0; i < alen(l) && i < 5; i++)
		tb_printf(b, "%s%s", i ? ", " : "", pstr(get(at(l, i), "path")));
	tb_puts(b, alen(l) > 5 ? " ...\n" : "\n");
}

static void fraction(tbuf *b, int width, yajl_val x, yajl_val y)
{
	char b1[400], b2[400], t[820];
	snprintf(t, sizeof(t), "%s/%s", dstr(x, b1, sizeof(b1)), dstr(y, b2, sizeof(b2)));
	cell(b, width, t, -1);
}

static void stragglers(tbuf *b, yajl_val s, yajl_val st)
{
	int its = truthy(get(s, "iterations"));
	tb_printf(b, "\nStragglers, costliest first (cost: time the others waited for the rank alone%s):\n",
		  its ? "; ranked by its part in the iterations" : "");
	tb_printf(b, "  %6s %-14s %11s %11s %13s %11s %10s %-12s %-18s %11s\n", "rank", "host", "cost ms", "in its. ms",
		  "per late it.", "late colls", "late its", "pattern", "cause", "max late ms");
	for (size_t i = 0; i < alen(st) && i < TEXT_ROWS; i++) {
		yajl_val x = at(st, i);
		tb_puts(b, "  ");
		icell(b, 6, get(x, "rank"));
		tb_puts(b, " ");
		cell(b, -14, sor(get(x, "host"), "-"), 14);
		tb_puts(b, " ");
		fcell(b, 11, 3, 0, num(get(x, "cost_ms")));
		tb_puts(b, " ");
		if (its)
			fcell(b, 11, 3, 0, num(get(x, "cost_in_iterations_ms")));
		else
			cell(b, 11, "-", -1);
		tb_puts(b, " ");
		fcell(b, 13, 3, 0, num(get(x, "cost_per_late_iteration_ms")));
		tb_puts(b, " ");
		fraction(b, 11, get(x, "late_collectives"), get(x, "collectives"));
		tb_puts(b, " ");
		fraction(b, 10, get(x, "iterations_late"), get(x, "iterations"));
		tb_puts(b, " ");
		cell(b, -12, sor(get(x, "pattern"), "-"), -1);
		tb_puts(b, " ");
		cell(b, -18, sor(get(x, "cause"), "-"), -1);
		tb_puts(b, " ");
		fcell(b, 11, 3, 0, num(get(x, "max_late_ms")));
		tb_puts(b, "\n");
	}
	more(b, alen(st), TEXT_ROWS, "summary.json (stragglers) and ranks.parquet");
}

/* A collective's message: bytes when the records give the data type, else elements ("-" unknown) */
static void size_cell(tbuf *b, int width, yajl_val x)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {{"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0}};
	char t[400], d[400];
	yajl_val by = get(x, "bytes"), n = get(x, "count");
	if (truthy(by)) {
		double v = num(by);
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (v >= units[i].scale) {
				snprintf(t, sizeof(t), "%.1f %s", v / units[i].scale, units[i].unit);
				cell(b, width, t, -1);
				return;
			}
		snprintf(t, sizeof(t), "%s B", dstr(by, d, sizeof(d)));
	} else if (truthy(n)) {
		snprintf(t, sizeof(t), "%s el", dstr(n, d, sizeof(d)));
	} else {
		snprintf(t, sizeof(t), "-");
	}
	cell(b, width, t, -1);
}

static void late_collectives(tbuf *b, yajl_val s, yajl_val lc)
{
	yajl_val total = get(s, "late_collectives_total");
	tb_puts(b, "\nLate collectives, longest hold first (");
	if (total)
		icell(b, 0, total);
	else
		tb_printf(b, "%zu", alen(lc));
	tb_puts(b, " in all; each in collectives.parquet):\n");
	tb_printf(b, "  %5s %-20s %7s %-14s %10s %6s %9s %9s %-18s %s\n", "iter", "comm", "seq", "collective", "size",
		  "rank", "late ms", "held ms", "cause", "also late (rank: ms)");
	for (size_t i = 0; i < alen(lc) && i < TEXT_ROWS; i++) {
		yajl_val x = at(lc, i);
		tb_puts(b, "  ");
		icell(b, 5, get(x, "iteration"));
		tb_puts(b, " ");
		cell(b, -20, pstr(get(x, "comm")), 20);
		tb_puts(b, " ");
		icell(b, 7, get(x, "seq"));
		tb_puts(b, " ");
		cell(b, -14, pstr(get(x, "name")), 14);
		tb_puts(b, " ");
		size_cell(b, 10, x);
		tb_puts(b, " ");
		icell(b, 6, get(x, "late_rank"));
		tb_puts(b, " ");
		fcell(b, 9, 3, 0, num(get(x, "late_ms")));
		tb_puts(b, " ");
		fcell(b, 9, 3, 0, num(get(x, "held_ms")));
		tb_puts(b, " ");
		cell(b, -18, sor(get(x, "cause"), "-"), -1);
		tb_puts(b, " ");
		yajl_val lr = get(x, "late_ranks");
		for (size_t k = 1; k < alen(lr) && k < 4; k++) {
			tb_puts(b, k > 1 ? " " : "");
			icell(b, 0, at(at(lr, k), 0));
			tb_puts(b, ":");
			fcell(b, 0, 3, 0, num(at(at(lr, k), 1)));
		}
		tb_puts(b, "\n");
	}
	if (total)
		more_v(b, total, TEXT_ROWS, "collectives.parquet (is_late)");
	else
		more(b, alen(lc), TEXT_ROWS, "collectives.parquet (is_late)");
}

/* The host of rank r in the ranks table (of two rows of one rank, the last); NULL: none. */
static const char *rank_host(const fl_table *ranks, double r)
{
	const fl_col *rk = ranks ? fl_table_col(ranks, "rank") : NULL, *h = ranks ? fl_table_col(ranks, "host") : NULL;
	if (!rk || !h || h->type != FL_STR || !h->s || (rk->type != FL_I64 && rk->type != FL_F64))
		return NULL;
	for (size_t i = ranks->rows; i-- > 0;) {
		double v = rk->type == FL_I64 ? (rk->i ? (double)rk->i[i] : NAN) : (rk->f ? rk->f[i] : NAN);
		if (v == r)
			return h->s[i];
	}
	return NULL;
}

static void per_iteration(tbuf *b, yajl_val pi, const fl_table *ranks)
{
	size_t n = alen(pi), nshown = n;
	keyed *o = malloc((n ? n : 1) * sizeof(*o));
	if (!o) {
		b->oom = 1;
		return;
	}
	for (size_t i = 0; i < n; i++)
		o[i] = (keyed){-num(get(at(pi, i), "cost_ms")), i};
	if (n > TEXT_ROWS) {
		gt_sort(o, n, sizeof(*o), keyed_cmp);
		nshown = TEXT_ROWS;
		for (size_t i = 0; i < nshown; i++)
			o[i] = (keyed){num(get(at(pi, o[i].idx), "iteration")), o[i].idx};
		gt_sort(o, nshown, sizeof(*o), keyed_cmp);
	}
	tb_puts(b, "\nPer iteration (time not waiting for other ranks, ms)");
	if (n > TEXT_ROWS)
		tb_printf(b, "; the %d with the most waiting", TEXT_ROWS);
	tb_puts(b, ":\n");
	tb_printf(b, "  %5s %6s %-14s %9s %-18s %7s %10s %7s %10s %10s\n", "iter", "late", "host", "late ms", "cause",
		  "slowest", "ms", "fastest", "ms", "spread");
	for (size_t i = 0; i < nshown; i++) {
		yajl_val x = at(pi, o[i].idx), lr = get(x, "late_rank");
		double r = num(lr);
		tb_puts(b, "  ");
		icell(b, 5, get(x, "iteration"));
		tb_puts(b, " ");
		if (r >= 0) {
			const char *h = rank_host(ranks, r);
			cell(b, 6, pstr(lr), -1);
			tb_puts(b, " ");
			cell(b, -14, h && h[0] ? h : "-", 14);
		} else {
			cell(b, 6, "-", -1);
			tb_puts(b, " ");
			cell(b, -14, "-", -1);
		}
		tb_puts(b, " ");
		fcell(b, 9, 3, 0, num(get(x, "late_ms")));
		tb_puts(b, " ");
		cell(b, -18, sor(get(x, "cause"), "-"), -1);
		tb_puts(b, " ");
		icell(b, 7, get(x, "slowest_rank"));
		tb_puts(b, " ");
		fcell(b, 10, 3, 0, num(get(x, "slowest_ms")));
		tb_puts(b, " ");
		icell(b, 7, get(x, "fastest_rank"));
		tb_puts(b, " ");
		fcell(b, 10, 3, 0, num(get(x, "fastest_ms")));
		tb_puts(b, " ");
		fcell(b, 10, 3, 0, num(get(x, "spread_ms")));
		tb_puts(b, "\n");
	}
	more(b, n, nshown, "summary.json (per_iteration) and iterations.parquet");
	free(o);
}

/* np.nanmedian, np.nanmin, np.nanmax of a column (NaN when it has no number) */
static int col_stats(const fl_table *ranks, const char *name, double out[3])
{
	const fl_col *c = fl_table_col(ranks, name);
	out[0] = out[1] = out[2] = NAN;
	double *v = malloc(ranks->rows * sizeof(double));
	if (!v)
		return -1;
	size_t n = 0;
	for (size_t i = 0; c && i < ranks->rows; i++) {
		double x = NAN;
		if (c->type == FL_F64 && c->f)
			x = c->f[i];
		else if ((c->type == FL_I64 || c->type == FL_BOOL) && c->i)
			x = (double)c->i[i];
		if (!isnan(x))
			v[n++] = x;
	}
	gt_sort(v, n, sizeof(double), gt_cmp_double);
	if (n) {
		out[0] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
		out[1] = v[0];
		out[2] = v[n - 1];
	}
	free(v);
	return 0;
}

static void per_rank(tbuf *b, const fl_table *ranks)
{
	static const char *const cols[] = {"span_ms", "busy_ms",         "idle_ms", "compute_ms",
					   "comm_ms", "exposed_comm_ms", "wait_ms", "work_ms"};
	tb_puts(b, "\nPer rank (ms)       median        min        max\n");
	for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
		double st[3];
		if (col_stats(ranks, cols[k], st) < 0) {
			b->oom = 1;
			return;
		}
		tb_printf(b, "  %-16.*s", (int)strlen(cols[k]) - 3, cols[k]);
		for (int j = 0; j < 3; j++) {
			tb_puts(b, " ");
			fcell(b, 10, 3, 0, st[j]);
		}
		tb_puts(b, "\n");
	}
}

static void clocks(tbuf *b, yajl_val cl)
{
	size_t n = alen(cl), nshown = 1;
	keyed *o = malloc(n * sizeof(*o));
	if (!o) {
		b->oom = 1;
		return;
	}
	o[0] = (keyed){0, 0};
	for (size_t i = 1; i < n; i++) {
		yajl_val p = get(at(cl, i), "p95_us");
		o[i] = (keyed){p ? -num(p) : -0.0, i};
	}
	gt_sort(o + 1, n - 1, sizeof(*o), keyed_cmp);
	nshown += n - 1 < TEXT_ROWS / 2 - 1 ? n - 1 : TEXT_ROWS / 2 - 1;
	tb_printf(b,
		  "\nClocks (offset from %s; fit = residual of the collectives' common completion; worst fits):\n",
		  pstr(get(at(cl, 0), "host")));
	for (size_t i = 0; i < nshown; i++) {
		yajl_val c = at(cl, o[i].idx);
		tb_puts(b, "  ");
		cell(b, -20, sor(get(c, "host"), "?"), -1);
		tb_puts(b, " ");
		fcell(b, 12, 3, 1, num(get(c, "offset_ms")));
		tb_puts(b, " ms  ");
		if (get(c, "rms_us")) {
			tb_puts(b, "rms ");
			fcell(b, 0, 1, 0, num(get(c, "rms_us")));
			tb_puts(b, " us, p95 ");
			fcell(b, 0, 1, 0, num(get(c, "p95_us")));
			tb_puts(b, " us over ");
			icell(b, 0, get(c, "collectives"));
			tb_puts(b, " collective ends");
		} else {
			tb_puts(b, pstr(get(c, "source")));
		}
		tb_puts(b, "\n");
	}
	more(b, n, nshown, "summary.json (clock)");
	free(o);
}

static void outliers(tbuf *b, yajl_val l)
{
	tb_puts(b, "\nOutliers:\n");
	for (size_t i = 0; i < alen(l) && i < TEXT_ROWS; i++) {
		yajl_val o = at(l, i);
		tb_puts(b, "  rank ");
		icell(b, 0, get(o, "rank"));
		tb_printf(b, " %s: %s\n", pstr(get(o, "gpu")), pstr(get(o, "reason")));
	}
	more(b, alen(l), TEXT_ROWS, "summary.json (outliers)");
}

static void text(tbuf *b, yajl_val s, const fl_table *ranks)
{
	headline(b, s);
	if (truthy(get(s, "collectives"))) {
		tb_puts(b, "late = arriving more than ");
		fcell(b, 0, 3, 0, num(get(s, "late_threshold_ms")));
		tb_printf(b, " ms after the others (%.0f x their usual scatter of ", FL_LATE_NOISE);
		fcell(b, 0, 3, 0, num(get(s, "arrival_noise_ms")));
		tb_printf(b, " ms, at least %.1f ms)\n", FL_LATE_MIN_MS);
	}
	yajl_val w = get(s, "warnings");
	for (size_t i = 0; truthy(w) && i < alen(w); i++)
		tb_printf(b, "warning: %s\n", pstr(at(w, i)));
	if (truthy(get(s, "failed")))
		path_list(b, get(s, "failed"), "Left out", "error");
	if (truthy(get(s, "partial")))
		path_list(b, get(s, "partial"), "Partial traces, left out of the statistics", "reason");
	if (truthy(get(s, "skipped")))
		skipped(b, get(s, "skipped"));
	if (truthy(get(s, "stragglers")))
		stragglers(b, s, get(s, "stragglers"));
	if (truthy(get(s, "late_collectives")))
		late_collectives(b, s, get(s, "late_collectives"));
	if (truthy(get(s, "per_iteration")))
		per_iteration(b, get(s, "per_iteration"), ranks);
	if (ranks && ranks->rows)
		per_rank(b, ranks);
	if (truthy(get(s, "clock")) && alen(get(s, "clock")) > 1)
		clocks(b, get(s, "clock"));
	if (truthy(get(s, "outliers")))
		outliers(b, get(s, "outliers"));
}

char *fl_text_summary(const char *summary_json, const fl_table *ranks)
{
	if (!summary_json || gt_json_too_deep(summary_json, strlen(summary_json), GT_JSON_MAX_DEPTH))
		return NULL;
	char err[256];
	yajl_val s = yajl_tree_parse(summary_json, err, sizeof(err));
	if (!YAJL_IS_OBJECT(s)) {
		yajl_tree_free(s);
		return NULL;
	}
	tbuf b = {0};
	text(&b, s, ranks);
	yajl_tree_free(s);
	if (b.oom || !b.p) {
		free(b.p);
		return NULL;
	}
	return b.p;
}
