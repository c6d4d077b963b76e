/*
 * fleet/rows.c — the rows of the tasks (fl_rows: per task a rank row, its iterations and its
 * collectives), their table of strings, and their wire format: what one analyzer batch gives back,
 * written by whoever ran it and read by whoever reduces (many batches' blocks concatenated).
 *
 * Wire format, one block:
 *
 *   line 1   "gputap-fleet-rows 1"
 *   line 2   one JSON object: {"byteorder": "little", "strings": [...], "texts": [...], "tables":
 *            {"ranks": T, "iterations": T, "collectives": T}}, each T {"rows": N, "columns":
 *            [[name, "i8" | "f8"], ...]} with the columns below, in this order
 *   then     the ranks', then the iterations', then the collectives' columns, column after column,
 *            each N x 8 bytes, little-endian: "i8" a signed 64-bit integer, "f8" an IEEE double
 *
 *   ranks        task, status (0 ok, 1 failed, 2 skipped, 3 partial), gpus, iterations, first_ns,
 *                last_ns, message, label, iteration_source (numbers into "texts"), then the window
 *                numbers span_ms .. non_compute_ms (f8, fl_window_names' order)
 *   iterations   task, iteration, start_ns, first_ns, last_ns, the window numbers (f8)
 *   collectives  task, comm, name, algo, proto, match, dtype (numbers into "strings"), device, seq,
 *                count, bytes, iteration, start_ns, end_ns, launch_ns
 *
 * "strings" is the rows' table of strings as it is (string 0 is ""), so the collectives' numbers
 * are the rows' own; "texts" holds the ranks' messages and labels, each once.  Blocks follow each
 * other with nothing between; a reader appends every block's rows and maps its string numbers into
 * its own table.
 *
 * Owns: fl_rows (growing arrays, the string table and its hash index) and the wire format.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "core/jsondepth.h"
#include "fleet/fleet.h"

#define FL_W_NAME(e, s) s,
const char *const fl_window_names[FL_NWIN] = {FL_WINDOW(FL_W_NAME)};
#undef FL_W_NAME
const char *const fl_status_names[4] = {"ok", "failed", "skipped", "partial"};

static const char MAGIC[] = "gputap-fleet-rows 1\n";
#define MAGIC_LEN (sizeof(MAGIC) - 1)

/* ---- string -> number: open addressing over the numbers ------------------------------------- */

struct strindex {
	size_t *slot; /* number + 1; 0: empty */
	size_t cap;   /* a power of two */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 31);
}

/* The slot of s among strs[]: where it is, or the empty one it would go to. */
static size_t ix_find(const struct strindex *ix, char *const *strs, const char *s)
{
	size_t h = (size_t)str_hash(s) & (ix->cap - 1);
	while (ix->slot[h] && strcmp(strs[ix->slot[h] - 1], s))
		h = (h + 1) & (ix->cap - 1);
	return h;
}

static int ix_grow(struct strindex *ix, char *const *strs, size_t n)
{
	size_t cap = ix->cap ? ix->cap : 64;
	while (cap < 2 * (n + 1))
		cap *= 2;
	if (cap == ix->cap)
		return 0;
	size_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -1;
	struct strindex nx = {slot, cap};
	for (size_t i = 0; i < n; i++)
		slot[ix_find(&nx, strs, strs[i])] = i + 1;
	free(ix->slot);
	*ix = nx;
	return 0;
}

/* The number of s in the table v[0..n), added (a copy) when new; -1: out of memory. */
static long tab_intern(char ***v, size_t *n, size_t *cap, struct strindex *ix, const char *s)
{
	if (ix_grow(ix, *v, *n))
		return -1;
	size_t h = ix_find(ix, *v, s);
	if (ix->slot[h])
		return (long)ix->slot[h] - 1;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	char *c = strdup(s);
	if (!c)
		return -1;
	(*v)[*n] = c;
	ix->slot[h] = ++*n;
	return (long)*n - 1;
}

/* ---- the rows -------------------------------------------------------------------------------- */

void fl_rows_init(fl_rows *r)
{
	memset(r, 0, sizeof(*r));
	fl_rows_intern(r, ""); /* string 0; tried again by the next intern when memory ran out */
}

void fl_rows_free(fl_rows *r)
{
	for (size_t i = 0; i < r->nranks; i++) {
		free(r->ranks[i].message);
		free(r->ranks[i].label);
		free(r->ranks[i].iteration_source);
	}
	for (size_t i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	free(r->ranks);
	free(r->iters);
	free(r->colls);
	free(r->strings);
	struct strindex *ix = r->index;
	if (ix)
		free(ix->slot);
	free(ix);
	memset(r, 0, sizeof(*r));
}

int fl_rows_intern(fl_rows *r, const char *s)
{
	if (!r->index && !(r->index = calloc(1, sizeof(struct strindex))))
		return -1;
	if (!r->nstrings && *s && fl_rows_intern(r, "") < 0)
		return -1;
	long k = tab_intern(&r->strings, &r->nstrings, &r->cap_strings, r->index, s);
	return k < 0 || k > INT32_MAX ? -1 : (int)k;
}

/* Room for one more zeroed row at the end of a growing array; NULL: out of memory. */
#define PUSH_FN(fn, T, arr, n, cap)                                                                          \
	static T *fn(fl_rows *r)                                                                             \
	{                                                                                                    \
		if (r->n == r->cap) {                                                                        \
			size_t nc = r->cap ? r->cap * 2 : 16;                                                \
			T *nv = realloc(r->arr, nc * sizeof(*nv));                                           \
			if (!nv)                                                                             \
				return NULL;                                                                 \
			r->arr = nv;                                                                         \
			r->cap = nc;                                                                         \
		}                                                                                            \
		T *at = &r->arr[r->n++];                                                                     \
		memset(at, 0, sizeof(*at));                                                                  \
		return at;                                                                                   \
	}
PUSH_FN(rank_push, fl_rankrow, ranks, nranks, cap_ranks)
PUSH_FN(iter_push, fl_iterrow, iters, niters, cap_iters)
PUSH_FN(coll_push, fl_collrow, colls, ncolls, cap_colls)

fl_iterrow *fl_rows_iter_push(fl_rows *r) { return iter_push(r); }
fl_collrow *fl_rows_coll_push(fl_rows *r) { return coll_push(r); }
#undef PUSH_FN

/* A rank row with copies of the three texts; NULL: out of memory (nothing added). */
static fl_rankrow *rank_add(fl_rows *r, const char *message, const char *label, const char *isrc)
{
	char *m = strdup(message), *l = strdup(label), *s = strdup(isrc);
	fl_rankrow *k = m && l && s ? rank_push(r) : NULL;
	if (!k) {
		free(m);
		free(l);
		free(s);
		return NULL;
	}
	k->message = m;
	k->label = l;
	k->iteration_source = s;
	return k;
}

int fl_rows_fail(fl_rows *r, int task, int status, const char *message)
{
	fl_rankrow *k = rank_add(r, message ? message : "", "", "");
	if (!k)
		return -1;
	k->task = task;
	k->status = status;
	return 0;
}

/* The numbers of src's strings in dst; NULL: out of memory. */
static int *map_strings(fl_rows *dst, char *const *strs, size_t n)
{
	int *map = malloc((n ? n : 1) * sizeof(*map));
	for (size_t i = 0; map && i < n; i++)
		if ((map[i] = fl_rows_intern(dst, strs[i])) < 0) {
			free(map);
			return NULL;
		}
	return map;
}

static void coll_map(fl_collrow *c, const int *map)
{
#define FL_MAP(n) c->n = map[c->n];
	FL_COLL_STR(FL_MAP)
#undef FL_MAP
}

int fl_rows_append(fl_rows *dst, const fl_rows *src)
{
	int *map = map_strings(dst, src->strings, src->nstrings);
	if (!map)
		return -1;
	int rc = -1;
	for (size_t i = 0; i < src->nranks; i++) {
		const fl_rankrow *s = &src->ranks[i];
		fl_rankrow *k = rank_add(dst, s->message ? s->message : "", s->label ? s->label : "",
					 s->iteration_source ? s->iteration_source : "");
		if (!k)
			goto done;
		char *m = k->message, *l = k->label, *is = k->iteration_source;
		*k = *s;
		k->message = m;
		k->label = l;
		k->iteration_source = is;
	}
	for (size_t i = 0; i < src->niters; i++) {
		fl_iterrow *k = iter_push(dst);
		if (!k)
			goto done;
		*k = src->iters[i];
	}
	for (size_t i = 0; i < src->ncolls; i++) {
		fl_collrow *k = coll_push(dst);
		if (!k)
			goto done;
		*k = src->colls[i];
		coll_map(k, map);
	}
	rc = 0;
done:
	free(map);
	return rc;
}

/* ---- the columns of the wire format ---------------------------------------------------------- */

enum { RK_TASK, RK_STATUS, RK_GPUS, RK_ITERS, RK_FIRST, RK_LAST, RK_MSG, RK_LABEL, RK_ISRC, RK_NINT };
static const char *const RANK_INT[RK_NINT] = {"task",	 "status",  "gpus",  "iterations",	"first_ns",
					      "last_ns", "message", "label", "iteration_source"};
enum { IT_TASK, IT_ITER, IT_START, IT_FIRST, IT_LAST, IT_NINT };
static const char *const ITER_INT[IT_NINT] = {"task", "iteration", "start_ns", "first_ns", "last_ns"};
#define FL_CN(n) #n,
static const char *const COLL_INT[] = {
    "task",	FL_COLL_STR(FL_CN) "device", "seq", "count", "bytes", "iteration", "start_ns", "end_ns",
    "launch_ns"};
#undef FL_CN
#define COLL_NINT (sizeof(COLL_INT) / sizeof(COLL_INT[0]))
#define NSTRCOL 6

/* Cell col of a collective, in COLL_INT's order. */
static int64_t coll_get(const fl_collrow *c, size_t col)
{
	switch (col) {
	case 0:
		return c->task;
	case 1:
		return c->comm;
	case 2:
		return c->name;
	case 3:
		return c->algo;
	case 4:
		return c->proto;
	case 5:
		return c->match;
	case 6:
		return c->dtype;
	case 7:
		return c->device;
	case 8:
		return c->seq;
	case 9:
		return c->count;
	case 10:
		return c->bytes;
	case 11:
		return c->iteration;
	case 12:
		return c->start_ns;
	case 13:
		return c->end_ns;
	default:
		return c->launch_ns;
	}
}

static void coll_set(fl_collrow *c, size_t col, int64_t v)
{
	switch (col) {
	case 0:
		c->task = (int)v;
		break;
	case 1:
		c->comm = (int)v;
		break;
	case 2:
		c->name = (int)v;
		break;
	case 3:
		c->algo = (int)v;
		break;
	case 4:
		c->proto = (int)v;
		break;
	case 5:
		c->match = (int)v;
		break;
	case 6:
		c->dtype = (int)v;
		break;
	case 7:
		c->device = v;
		break;
	case 8:
		c->seq = v;
		break;
	case 9:
		c->count = v;
		break;
	case 10:
		c->bytes = v;
		break;
	case 11:
		c->iteration = v;
		break;
	case 12:
		c->start_ns = v;
		break;
	case 13:
		c->end_ns = v;
		break;
	default:
		c->launch_ns = v;
		break;
	}
}

static void put64(unsigned char *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *b)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static uint64_t f2u(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static double u2f(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* ---- writing --------------------------------------------------------------------------------- */

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static void jtable(yajl_gen g, const char *name, size_t rows, const char *const *ints, size_t nint, int wins)
{
	GS(g, name);
	yajl_gen_map_open(g);
	GS(g, "rows");
	yajl_gen_integer(g, (long long)rows);
	GS(g, "columns");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < nint + (wins ? FL_NWIN : 0); i++) {
		yajl_gen_array_open(g);
		GS(g, i < nint ? ints[i] : fl_window_names[i - nint]);
		GS(g, i < nint ? "i8" : "f8");
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

/* Writes n cells of column col (get(row, col) each) as 8-byte little-endian words. */
static int write_col(FILE *f, size_t n, uint64_t (*get)(const void *, size_t, size_t), const void *rows,
		     size_t col)
{
	unsigned char buf[8 * 512];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		put64(buf + 8 * k++, get(rows, i, col));
		if (k == 512 || i + 1 == n) {
			if (fwrite(buf, 8, k, f) != k)
				return -1;
			k = 0;
		}
	}
	return 0;
}

struct rank_view {
	const fl_rows *r;
	const int *text; /* per rank row 3 text numbers */
};

static uint64_t rank_cell(const void *v, size_t i, size_t col)
{
	const struct rank_view *rv = v;
	const fl_rankrow *k = &rv->r->ranks[i];
	switch (col) {
	case RK_TASK:
		return (uint64_t)(int64_t)k->task;
	case RK_STATUS:
		return (uint64_t)(int64_t)k->status;
	case RK_GPUS:
		return (uint64_t)(int64_t)k->gpus;
	case RK_ITERS:
		return (uint64_t)k->iterations;
	case RK_FIRST:
		return (uint64_t)k->first_ns;
	case RK_LAST:
		return (uint64_t)k->last_ns;
	case RK_MSG:
	case RK_LABEL:
	case RK_ISRC:
		return (uint64_t)(int64_t)rv->text[3 * i + (col - RK_MSG)];
	default:
		return f2u(k->w[col - RK_NINT]);
	}
}

static uint64_t iter_cell(const void *v, size_t i, size_t col)
{
	const fl_iterrow *k = &((const fl_rows *)v)->iters[i];
	switch (col) {
	case IT_TASK:
		return (uint64_t)(int64_t)k->task;
	case IT_ITER:
		return (uint64_t)k->iteration;
	case IT_START:
		return (uint64_t)k->start_ns;
	case IT_FIRST:
		return (uint64_t)k->first_ns;
	case IT_LAST:
		return (uint64_t)k->last_ns;
	default:
		return f2u(k->w[col - IT_NINT]);
	}
}

static uint64_t coll_cell(const void *v, size_t i, size_t col)
{
	return (uint64_t)coll_get(&((const fl_rows *)v)->colls[i], col);
}

int fl_rows_write(const fl_rows *r, FILE *f)
{
	/* the ranks' texts, each once */
	char **texts = NULL;
	size_t ntexts = 0, captexts = 0;
	struct strindex tix = {NULL, 0};
	int *text = malloc((r->nranks ? r->nranks : 1) * 3 * sizeof(*text));
	int rc = -1;
	yajl_gen g = NULL;
	if (!text)
		goto done;
	for (size_t i = 0; i < r->nranks; i++) {
		const char *s[3] = {r->ranks[i].message, r->ranks[i].label, r->ranks[i].iteration_source};
		for (int j = 0; j < 3; j++) {
			long k = tab_intern(&texts, &ntexts, &captexts, &tix, s[j] ? s[j] : "");
			if (k < 0)
				goto done;
			text[3 * i + j] = (int)k;
		}
	}
	if (!(g = yajl_gen_alloc(NULL)))
		goto done;
	yajl_gen_map_open(g);
	GS(g, "byteorder");
	GS(g, "little");
	GS(g, "strings");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->nstrings; i++)
		GS(g, r->strings[i]);
	if (!r->nstrings)
		GS(g, "");
	yajl_gen_array_close(g);
	GS(g, "texts");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < ntexts; i++)
		GS(g, texts[i]);
	yajl_gen_array_close(g);
	GS(g, "tables");
	yajl_gen_map_open(g);
	jtable(g, "ranks", r->nranks, RANK_INT, RK_NINT, 1);
	jtable(g, "iterations", r->niters, ITER_INT, IT_NINT, 1);
	jtable(g, "collectives", r->ncolls, COLL_INT, COLL_NINT, 0);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok ||
	    fwrite(MAGIC, 1, MAGIC_LEN, f) != MAGIC_LEN || fwrite(buf, 1, len, f) != len ||
	    fputc('\n', f) == EOF)
		goto done;
	struct rank_view rv = {r, text};
	for (size_t c = 0; c < RK_NINT + FL_NWIN; c++)
		if (write_col(f, r->nranks, rank_cell, &rv, c))
			goto done;
	for (size_t c = 0; c < IT_NINT + FL_NWIN; c++)
		if (write_col(f, r->niters, iter_cell, r, c))
			goto done;
	for (size_t c = 0; c < COLL_NINT; c++)
		if (write_col(f, r->ncolls, coll_cell, r, c))
			goto done;
	rc = 0;
done:
	if (g)
		yajl_gen_free(g);
	for (size_t i = 0; i < ntexts; i++)
		free(texts[i]);
	free(texts);
	free(tix.slot);
	free(text);
	return rc;
}

/* ---- reading --------------------------------------------------------------------------------- */

static yajl_val jget(yajl_val o, const char *k)
{
	const char *path[] = {k, NULL};
	return YAJL_IS_OBJECT(o) ? yajl_tree_get(o, path, yajl_t_any) : NULL;
}

/* The table's row count when its columns are the expected ones; -1 otherwise. */
static long long check_table(yajl_val tables, const char *name, const char *const *ints, size_t nint,
			     int wins)
{
	yajl_val t = jget(tables, name), rows = jget(t, "rows"), cols = jget(t, "columns");
	if (!YAJL_IS_INTEGER(rows) || YAJL_GET_INTEGER(rows) < 0 || !YAJL_IS_ARRAY(cols) ||
	    cols->u.array.len != nint + (wins ? FL_NWIN : 0))
		return -1;
	for (size_t i = 0; i < cols->u.array.len; i++) {
		yajl_val c = cols->u.array.values[i];
		const char *want = i < nint ? ints[i] : fl_window_names[i - nint];
		if (!YAJL_IS_ARRAY(c) || c->u.array.len != 2 || !YAJL_IS_STRING(c->u.array.values[0]) ||
		    !YAJL_IS_STRING(c->u.array.values[1]) || strcmp(c->u.array.values[0]->u.string, want) ||
		    strcmp(c->u.array.values[1]->u.string, i < nint ? "i8" : "f8"))
			return -1;
	}
	return YAJL_GET_INTEGER(rows);
}

static int all_strings(yajl_val a)
{
	if (!YAJL_IS_ARRAY(a))
		return 0;
	for (size_t i = 0; i < a->u.array.len; i++)
		if (!YAJL_IS_STRING(a->u.array.values[i]))
			return 0;
	return 1;
}

/* One block at buf[0..len): appended to r, *used its bytes.  0, or -1 with err. */
static int read_block(fl_rows *r, const unsigned char *buf, size_t len, int block, size_t *used, char *err,
		      size_t errlen)
{
	size_t m = len < MAGIC_LEN ? len : MAGIC_LEN;
	if (memcmp(buf, MAGIC, m)) {
		snprintf(err, errlen, "rows block %d: not a rows block", block);
		return -1;
	}
	const unsigned char *nl = len > MAGIC_LEN ? memchr(buf + MAGIC_LEN, '\n', len - MAGIC_LEN) : NULL;
	if (!nl) {
		snprintf(err, errlen, "rows block %d: cut short", block);
		return -1;
	}
	size_t hlen = (size_t)(nl - buf) - MAGIC_LEN;
	char *htext = strndup((const char *)buf + MAGIC_LEN, hlen); /* to a NUL at most: its own length below */
	if (!htext) {
		snprintf(err, errlen, "rows block %d: out of memory", block);
		return -1;
	}
	char yerr[256] = "nests too deep";
	yajl_val h = gt_json_too_deep(htext, strlen(htext), GT_JSON_MAX_DEPTH)
			 ? NULL
			 : yajl_tree_parse(htext, yerr, sizeof(yerr));
	free(htext);
	int rc = -1;
	int *smap = NULL;
	yajl_val bo = jget(h, "byteorder"), strs = jget(h, "strings"), texts = jget(h, "texts"),
		 tables = jget(h, "tables");
	long long nr = -1, ni = -1, nc = -1;
	if (!h || !YAJL_IS_OBJECT(h)) {
		snprintf(err, errlen, "rows block %d: bad header (%s)", block, h ? "not an object" : yerr);
		goto done;
	}
	if (!YAJL_IS_STRING(bo) || strcmp(bo->u.string, "little") || !all_strings(strs) ||
	    !strs->u.array.len || !all_strings(texts) ||
	    (nr = check_table(tables, "ranks", RANK_INT, RK_NINT, 1)) < 0 ||
	    (ni = check_table(tables, "iterations", ITER_INT, IT_NINT, 1)) < 0 ||
	    (nc = check_table(tables, "collectives", COLL_INT, COLL_NINT, 0)) < 0) {
		snprintf(err, errlen,
			 "rows block %d: bad header (byteorder, strings, texts or a table's rows and "
			 "columns)",
			 block);
		goto done;
	}
	const unsigned char *col = nl + 1;
	size_t avail = len - (size_t)(col - buf);
	unsigned long long cells = 0;
	const unsigned long long lim = avail / 8 + 1;
	if ((unsigned long long)nr > lim || (unsigned long long)ni > lim || (unsigned long long)nc > lim ||
	    (cells = (unsigned long long)nr * (RK_NINT + FL_NWIN) +
		     (unsigned long long)ni * (IT_NINT + FL_NWIN) + (unsigned long long)nc * COLL_NINT) >
		avail / 8) {
		snprintf(err, errlen, "rows block %d: cut short", block);
		goto done;
	}
	size_t nstr = strs->u.array.len, ntext = texts->u.array.len;
	const unsigned char *rk = col, *it = rk + 8 * (size_t)nr * (RK_NINT + FL_NWIN),
			    *co = it + 8 * (size_t)ni * (IT_NINT + FL_NWIN);
#define CELL(base, n, c, i) get64((base) + 8 * ((size_t)(c) * (size_t)(n) + (i)))
	/* every number that points somewhere, checked before a row is added */
	for (size_t i = 0; i < (size_t)nr; i++) {
		uint64_t st = CELL(rk, nr, RK_STATUS, i);
		int ok = st < 4;
		for (int c = RK_MSG; c <= RK_ISRC; c++)
			ok &= CELL(rk, nr, c, i) < ntext;
		if (!ok) {
			snprintf(err, errlen,
				 "rows block %d: rank row %zu: status or text number out of range", block, i);
			goto done;
		}
	}
	for (size_t i = 0; i < (size_t)nc; i++)
		for (int c = 1; c <= NSTRCOL; c++)
			if (CELL(co, nc, c, i) >= nstr) {
				snprintf(err, errlen,
					 "rows block %d: collective %zu: string number out of range", block,
					 i);
				goto done;
			}
	smap = malloc(nstr * sizeof(*smap));
	if (!smap)
		goto oom;
	for (size_t i = 0; i < nstr; i++)
		if ((smap[i] = fl_rows_intern(r, strs->u.array.values[i]->u.string)) < 0)
			goto oom;
	for (size_t i = 0; i < (size_t)nr; i++) {
		yajl_val *tv = texts->u.array.values;
		fl_rankrow *k =
		    rank_add(r, tv[CELL(rk, nr, RK_MSG, i)]->u.string,
			     tv[CELL(rk, nr, RK_LABEL, i)]->u.string, tv[CELL(rk, nr, RK_ISRC, i)]->u.string);
		if (!k)
			goto oom;
		k->task = (int)(int64_t)CELL(rk, nr, RK_TASK, i);
		k->status = (int)CELL(rk, nr, RK_STATUS, i);
		k->gpus = (int)(int64_t)CELL(rk, nr, RK_GPUS, i);
		k->iterations = (int64_t)CELL(rk, nr, RK_ITERS, i);
		k->first_ns = (int64_t)CELL(rk, nr, RK_FIRST, i);
		k->last_ns = (int64_t)CELL(rk, nr, RK_LAST, i);
		for (int w = 0; w < FL_NWIN; w++)
			k->w[w] = u2f(CELL(rk, nr, RK_NINT + w, i));
	}
	for (size_t i = 0; i < (size_t)ni; i++) {
		fl_iterrow *k = iter_push(r);
		if (!k)
			goto oom;
		k->task = (int)(int64_t)CELL(it, ni, IT_TASK, i);
		k->iteration = (int64_t)CELL(it, ni, IT_ITER, i);
		k->start_ns = (int64_t)CELL(it, ni, IT_START, i);
		k->first_ns = (int64_t)CELL(it, ni, IT_FIRST, i);
		k->last_ns = (int64_t)CELL(it, ni, IT_LAST, i);
		for (int w = 0; w < FL_NWIN; w++)
			k->w[w] = u2f(CELL(it, ni, IT_NINT + w, i));
	}
	for (size_t i = 0; i < (size_t)nc; i++) {
		fl_collrow *k = coll_push(r);
		if (!k)
			goto oom;
		for (size_t c = 0; c < COLL_NINT; c++) {
			int64_t v = (int64_t)CELL(co, nc, c, i);
			coll_set(k, c, c >= 1 && c <= NSTRCOL ? smap[v] : v);
		}
	}
#undef CELL
	*used = (size_t)(col - buf) + 8 * (size_t)cells;
	rc = 0;
	goto done;
oom:
	snprintf(err, errlen, "rows block %d: out of memory", block);
done:
	free(smap);
	yajl_tree_free(h);
	return rc;
}

int fl_rows_read(fl_rows *r, const unsigned char *buf, size_t len, char *err, size_t errlen)
{
	size_t pos = 0;
	for (int block = 1; pos < len; block++) {
		size_t used = 0;
		if (read_block(r, buf + pos, len - pos, block, &used, err, errlen))
			return -1;
		pos += used;
	}
	return 0;
}
