/*
 * analyze/sqlite.c — an nsys SQLite export (`nsys export --type sqlite`).
 *
 * Tables used (each may be absent): CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId,
 * demangledName/shortName -> StringIds), CUPTI_ACTIVITY_KIND_MEMCPY (copyKind), ..._MEMSET,
 * NVTX_EVENTS (text or textId -> StringIds), CUPTI_ACTIVITY_KIND_RUNTIME (start, correlationId: the
 * launches, matched with the GPU tables' correlationId).  Rows are iterated one at a time; the engine
 * sorts.  One file = one source, named by the file; its deviceIds are its GPUs.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "analyze/an_internal.h"
#include "analyze/input.h"
#include "analyze/findings.h"

static int has_table(sqlite3 *db, const char *t)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static int has_column(sqlite3 *db, const char *t, const char *col)
{
	char sql[256];
	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", t);
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (!yes && sqlite3_step(st) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(st, 1);
		yes = n && strcmp(n, col) == 0;
	}
	sqlite3_finalize(st);
	return yes;
}

/* value of a name column: text as is, an integer through StringIds */
static void name_expr(char *buf, size_t len, const char *col, int strings)
{
	if (strings)
		snprintf(buf, len,
			 "CASE WHEN typeof(%s) = 'integer' THEN (SELECT value FROM StringIds WHERE id = %s) ELSE %s END",
			 col, col, col);
	else
		snprintf(buf, len, "%s", col);
}

struct sq {
	struct gt_an_ctx *c;
	sqlite3 *db;
	const char *path;
	int source;
	char *err;
	size_t errlen;
	uint64_t rows, total_rows;
};

static int col_u64(struct sq *q, sqlite3_stmt *st, int i, const char *table, uint64_t row, const char *what,
		   uint64_t *out)
{
	if (sqlite3_column_type(st, i) != SQLITE_INTEGER) {
		snprintf(q->err, q->errlen, "%s: table %s row %llu: %s is not an integer", q->path, table,
			 (unsigned long long)row, what);
		return -1;
	}
	sqlite3_int64 v = sqlite3_column_int64(st, i);
	if (v < 0) {
		snprintf(q->err, q->errlen, "%s: table %s row %llu: %s %lld is negative", q->path, table,
			 (unsigned long long)row, what, (long long)v);
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

/* a device id column: kept exact (GT_AN_MAX_ID) or refused */
static int col_id(struct sq *q, sqlite3_stmt *st, int i, const char *table, uint64_t row, const char *what,
		  int *out)
{
	if (sqlite3_column_type(st, i) != SQLITE_INTEGER) {
		snprintf(q->err, q->errlen, "%s: table %s row %llu: %s is not an integer", q->path, table,
			 (unsigned long long)row, what);
		return -1;
	}
	sqlite3_int64 v = sqlite3_column_int64(st, i);
	if (v < 0 || v > GT_AN_MAX_ID) {
		snprintf(q->err, q->errlen, "%s: table %s row %llu: %s %lld is not a device id (" GT_AN_ID_RANGE ")",
			 q->path, table, (unsigned long long)row, what, (long long)v);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* nsys's memory kinds (ENUM_CUDA_MEM_KIND: 0 pageable, 1 pinned, 2 device, 3 array, 4 managed) as
 * CUPTI's (findings.h: 1 pageable, 2 pinned, 3 device, 4 array, 5 managed; 0 unknown) */
static int nsys_memkind(sqlite3_stmt *st, int col)
{
	if (col < 0 || sqlite3_column_type(st, col) != SQLITE_INTEGER)
		return 0;
	sqlite3_int64 v = sqlite3_column_int64(st, col);
	return v >= 0 && v <= 4 ? (int)v + 1 : 0;
}

static uint64_t col_or0(sqlite3_stmt *st, int col)
{
	if (col < 0 || sqlite3_column_type(st, col) != SQLITE_INTEGER)
		return 0;
	sqlite3_int64 v = sqlite3_column_int64(st, col);
	return v > 0 ? (uint64_t)v : 0;
}

/* One GPU op for the findings: its grid, stream, bytes and memory kinds (the columns xc names, -1 absent). */
static int sq_findings(struct sq *q, sqlite3_stmt *st, const int *xc, int kind, int copykind, int dev, uint64_t s,
		       uint64_t e, uint64_t corr, long ni)
{
	struct gt_an_ctx *c = q->c;
	uint32_t stream = (uint32_t)col_or0(st, xc[6]);
	uint64_t bytes = col_or0(st, xc[7]);
	if (copykind)
		return gt_fd_memcpy(c->fd, q->source, dev, stream, s, e, bytes, corr, (int)col_or0(st, 3),
				    nsys_memkind(st, xc[8]), nsys_memkind(st, xc[9]));
	if (kind == GT_NK_MEMOP)
		return gt_fd_memset(c->fd, q->source, dev, stream, s, e, bytes, corr);
	uint32_t grid[3], block[3];
	for (int i = 0; i < 3; i++) {
		uint64_t g = col_or0(st, xc[i]), b = col_or0(st, xc[3 + i]);
		grid[i] = g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
		block[i] = b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
	}
	return gt_fd_kernel(c->fd, q->source, dev, stream, (uint32_t)ni, c->names.v[ni].name, s, e,
			    xc[0] >= 0 ? grid : NULL, xc[3] >= 0 ? block : NULL);
}

/* The columns of `table` the findings read, as ", a, b" (those it has); "" without findings. */
static void fd_columns(struct sq *q, const char *table, char *buf, size_t len)
{
	static const char *const cols[] = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
					   "streamId", "bytes", "srcKind", "dstKind"};
	size_t k = 0;
	buf[0] = '\0';
	if (!q->c->fd)
		return;
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]) && k < len; i++)
		if (has_column(q->db, table, cols[i]))
			k += (size_t)snprintf(buf + k, len - k, ", %s", cols[i]);
}

/* The GPUs' SM counts and compute capabilities for the findings (TARGET_INFO_GPU, if there). */
static void sq_devices(struct sq *q)
{
	sqlite3_stmt *st;
	if (!q->c->fd || !has_table(q->db, "TARGET_INFO_GPU") || !has_column(q->db, "TARGET_INFO_GPU", "smCount") ||
	    sqlite3_prepare_v2(q->db, "SELECT * FROM TARGET_INFO_GPU", -1, &st, NULL) != SQLITE_OK)
		return;
	int ci = -1, cs = -1, cma = -1, cmi = -1;
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const char *n = sqlite3_column_name(st, i);
		if (!strcmp(n, "id"))
			ci = i;
		else if (!strcmp(n, "smCount"))
			cs = i;
		else if (!strcmp(n, "computeMajor"))
			cma = i;
		else if (!strcmp(n, "computeMinor"))
			cmi = i;
	}
	while (ci >= 0 && sqlite3_step(st) == SQLITE_ROW) {
		uint64_t id = col_or0(st, ci);
		if (id <= GT_AN_MAX_ID)
			gt_fd_device(q->c->fd, q->source, (int)id, (unsigned)col_or0(st, cs), (unsigned)col_or0(st, cma),
				     (unsigned)col_or0(st, cmi));
	}
	sqlite3_finalize(st);
}

/* SELECT start, end, deviceId, name [, correlationId] */
static int read_gpu_table(struct sq *q, const char *table, const char *sql, int kind, int copykind)
{
	int corr_col = -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(q->err, q->errlen, "%s: table %s: %s", q->path, table, sqlite3_errmsg(q->db));
		return -1;
	}
	struct gt_an_ctx *c = q->c;
	uint64_t row = 0;
	int rc;
	long last_dev = -1, last_g = -1;
	/* for the findings (analyze/findings.h): grid, block, stream, bytes, the copies' memory kinds */
	static const char *const xnames[] = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
					     "streamId", "bytes", "srcKind", "dstKind"};
	int xc[10];
	for (int i = 0; i < 10; i++)
		xc[i] = -1;
	for (int i = 0; i < sqlite3_column_count(st); i++) {
		if (strcmp(sqlite3_column_name(st, i), "correlationId") == 0)
			corr_col = i;
		for (int j = 0; j < 10; j++)
			if (strcmp(sqlite3_column_name(st, i), xnames[j]) == 0)
				xc[j] = i;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row++;
		uint64_t s, e;
		int dev;
		if (col_u64(q, st, 0, table, row, "start", &s) < 0 || col_u64(q, st, 1, table, row, "end", &e) < 0 ||
		    col_id(q, st, 2, table, row, "deviceId", &dev) < 0)
			goto fail;
		const char *nm;
		size_t nl;
		if (copykind) {
			uint64_t ck = (uint64_t)sqlite3_column_int64(st, 3);
			nm = gt_an_copykind_name((unsigned)(ck > 255 ? 0 : ck));
			nl = strlen(nm);
		} else if (kind == GT_NK_MEMOP) {
			nm = "[CUDA memset]";
			nl = 13;
		} else {
			nm = (const char *)sqlite3_column_text(st, 3);
			nl = (size_t)sqlite3_column_bytes(st, 3);
			if (!nm) {
				nm = "(unnamed kernel)";
				nl = strlen(nm);
			}
		}
		long ni = gt_names_get(&c->names, kind, nm, nl);
		long g = dev == last_dev ? last_g : gt_tl_gpu(&c->tl, q->source, dev);
		if (ni < 0 || g < 0) {
			snprintf(q->err, q->errlen, "%s: table %s row %llu: out of memory", q->path, table,
				 (unsigned long long)row);
			goto fail;
		}
		last_dev = dev;
		last_g = g;
		c->names.v[ni].time_ns += (double)(e > s ? e - s : 0);
		c->names.v[ni].count++;
		sqlite3_int64 corr = corr_col >= 0 ? sqlite3_column_int64(st, corr_col) : 0;
		/* the stream when the findings asked for it (the per-stream analyses have it too then) */
		if (gt_tl_op(&c->tl, (uint32_t)g, s, e, c->names.v[ni].cat, corr > 0 ? (uint64_t)corr : 0, (uint32_t)ni,
			     (uint32_t)col_or0(st, xc[6]), 0) < 0) {
			snprintf(q->err, q->errlen, "%s: %s", q->path, c->tl.err);
			goto fail;
		}
		if (c->fd && sq_findings(q, st, xc, kind, copykind, dev, s, e, corr > 0 ? (uint64_t)corr : 0, ni) < 0) {
			snprintf(q->err, q->errlen, "%s: out of memory", q->path);
			goto fail;
		}
		if (c->colls && c->names.v[ni].cat == GT_CAT_COMM &&
		    gt_colls_kernel(c->colls, q->source, dev, s, e, corr > 0 ? (uint64_t)corr : 0,
				    c->names.v[ni].name, NULL, GT_SEQ_UNKNOWN, 0, NULL) < 0) {
			snprintf(q->err, q->errlen, "%s: out of memory", q->path);
			goto fail;
		}
		if ((++q->rows & 0xfffff) == 0)
			gt_an_progress(c, q->path, q->rows, q->total_rows);
	}
	if (rc != SQLITE_DONE) {
		snprintf(q->err, q->errlen, "%s: table %s row %llu: %s", q->path, table, (unsigned long long)row + 1,
			 sqlite3_errmsg(q->db));
		goto fail;
	}
	sqlite3_finalize(st);
	return 0;
fail:
	sqlite3_finalize(st);
	return -1;
}

static int read_nvtx(struct sq *q, int strings)
{
	struct gt_an_ctx *c = q->c;
	int has_text = has_column(q->db, "NVTX_EVENTS", "text"), has_id = has_column(q->db, "NVTX_EVENTS", "textId");
	char expr[512], sql[1024];
	if (has_text && has_id && strings)
		snprintf(expr, sizeof(expr), "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))");
	else if (has_text)
		snprintf(expr, sizeof(expr), "text");
	else if (has_id && strings)
		snprintf(expr, sizeof(expr), "(SELECT value FROM StringIds WHERE id = textId)");
	else
		return 0;
	snprintf(sql, sizeof(sql), "SELECT start, end, %s FROM NVTX_EVENTS WHERE end IS NOT NULL", expr);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(q->err, q->errlen, "%s: table NVTX_EVENTS: %s", q->path, sqlite3_errmsg(q->db));
		return -1;
	}
	uint64_t row = 0;
	int rc;
	c->has_nvtx = 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row++;
		const char *t = (const char *)sqlite3_column_text(st, 2);
		if (!t)
			continue;
		uint64_t s, e;
		if (col_u64(q, st, 0, "NVTX_EVENTS", row, "start", &s) < 0 ||
		    col_u64(q, st, 1, "NVTX_EVENTS", row, "end", &e) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
		gt_an_range_seen(c, t, (double)(e > s ? e - s : 0), 1);
		gt_an_range_at(c, q->source, t, s, e);
		if (!gt_an_is_iter_range(c, t))
			continue;
		c->nvtx_count++;
		c->nvtx_total_ns += (double)(e > s ? e - s : 0);
		if (gt_tl_range(&c->tl, q->source, s, e) < 0) {
			snprintf(q->err, q->errlen, "%s: out of memory", q->path);
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(q->err, q->errlen, "%s: table NVTX_EVENTS row %llu: %s", q->path, (unsigned long long)row + 1,
			 sqlite3_errmsg(q->db));
		return -1;
	}
	return 0;
}

/* The launches: every runtime call's start and correlation id.  Ids are per process, so an export of
 * several processes keeps placing ops by time (with a note). */
static int read_launches(struct sq *q)
{
	const char *t = "CUPTI_ACTIVITY_KIND_RUNTIME";
	if (!has_table(q->db, t) || !has_column(q->db, t, "correlationId") || !has_column(q->db, t, "start"))
		return 0;
	sqlite3_stmt *st;
	if (has_column(q->db, t, "globalTid") &&
	    sqlite3_prepare_v2(q->db, "SELECT COUNT(DISTINCT globalTid >> 24) FROM CUPTI_ACTIVITY_KIND_RUNTIME", -1,
			       &st, NULL) == SQLITE_OK) {
		sqlite3_int64 np = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_finalize(st);
		if (np > 1) {
			gt_an_note(q->c,
				   "%s: runtime calls of %lld processes in one export: GPU work is put into iterations "
				   "by its GPU time, not by its launch",
				   q->path, (long long)np);
			return 0;
		}
	}
	/* with findings: each call's end and name (nameId -> StringIds, looked up once per name) */
	int ends = has_column(q->db, t, "end");
	int named = q->c->fd && ends && has_column(q->db, t, "nameId") && has_table(q->db, "StringIds");
	sqlite3_stmt *ns = NULL;
	if (named && sqlite3_prepare_v2(q->db, "SELECT value FROM StringIds WHERE id = ?", -1, &ns, NULL) != SQLITE_OK)
		named = 0;
	struct {
		sqlite3_int64 id;
		char name[64];
	} last = {-1, ""};
	if (sqlite3_prepare_v2(q->db,
			       named  ? "SELECT start, correlationId, end, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
			       : ends ? "SELECT start, correlationId, end FROM CUPTI_ACTIVITY_KIND_RUNTIME"
				      : "SELECT start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(ns);
		snprintf(q->err, q->errlen, "%s: table %s: %s", q->path, t, sqlite3_errmsg(q->db));
		return -1;
	}
	uint64_t row = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row++;
		uint64_t s, corr;
		if (col_u64(q, st, 0, t, row, "start", &s) < 0) {
			sqlite3_finalize(st);
			sqlite3_finalize(ns);
			return -1;
		}
		corr = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? (uint64_t)sqlite3_column_int64(st, 1) : 0;
		/* the call's end too: when the host was late to launch (launch delays, the findings' gaps) */
		uint64_t end = ends ? col_or0(st, 2) : 0;
		if (gt_tl_launch2(&q->c->tl, q->source, s, end > s ? end : s, corr, NULL, 0) < 0) {
			snprintf(q->err, q->errlen, "%s: %s", q->path, q->c->tl.err[0] ? q->c->tl.err : "out of memory");
			sqlite3_finalize(st);
			sqlite3_finalize(ns);
			return -1;
		}
		if (named && sqlite3_column_type(st, 3) == SQLITE_INTEGER) {
			sqlite3_int64 id = sqlite3_column_int64(st, 3);
			if (id != last.id) { /* calls of one name come in runs; the findings cache the kind by id */
				last.id = id;
				last.name[0] = '\0';
				sqlite3_reset(ns);
				sqlite3_bind_int64(ns, 1, id);
				if (sqlite3_step(ns) == SQLITE_ROW && sqlite3_column_text(ns, 0))
					snprintf(last.name, sizeof(last.name), "%s", (const char *)sqlite3_column_text(ns, 0));
			}
			if (id >= 0 && id <= UINT32_MAX && last.name[0] &&
			    gt_fd_api_id(q->c->fd, q->source, (uint32_t)id, last.name, s, end > s ? end : s) < 0) {
				snprintf(q->err, q->errlen, "%s: out of memory", q->path);
				sqlite3_finalize(st);
				sqlite3_finalize(ns);
				return -1;
			}
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(ns);
	if (rc != SQLITE_DONE) {
		snprintf(q->err, q->errlen, "%s: table %s row %llu: %s", q->path, t, (unsigned long long)row + 1,
			 sqlite3_errmsg(q->db));
		return -1;
	}
	return 0;
}

static uint64_t count_rows(sqlite3 *db, const char *t)
{
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT max(rowid) FROM %s", t);
	sqlite3_stmt *st;
	uint64_t n = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			n = (uint64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return n;
}

/* The tables read here; nsys writes each as a table, never a view (a view runs a query of the
 * file's own, which may never end). */
static const char *const read_tables[] = {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					  "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME"};

/* A bound on the engine's work, whatever the file holds (analyze.h): SQLite calls this every
 * PROGRESS_STEP virtual-machine instructions of one step (a row, or a statement's whole work before
 * its first row: a sort, a count, a view's query); past the budget, counted over the file, the
 * statement stops (SQLITE_INTERRUPT) and the read fails. */
#define PROGRESS_STEP 1000
uint64_t gt_an_sqlite_steps = 1000000000, gt_an_sqlite_steps_per_byte = 20000;
struct budget {
	uint64_t calls, max_calls;
};

static int over_budget(void *arg)
{
	struct budget *b = arg;
	return ++b->calls > b->max_calls;
}

int gt_an_read_sqlite(struct gt_an_ctx *c, const char *path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -1;
	}
	struct sq q = {c, db, path, 0, err, errlen, 0, 0};
	int rc = -1;
	/* every read is bounded (gt_an_sqlite_steps): seconds of work, plus some per byte of the file */
	struct stat sb;
	struct budget bud = {0, gt_an_sqlite_steps / PROGRESS_STEP};
	if (stat(path, &sb) == 0 && sb.st_size > 0)
		bud.max_calls += (uint64_t)sb.st_size * gt_an_sqlite_steps_per_byte / PROGRESS_STEP;
	sqlite3_progress_handler(db, PROGRESS_STEP, over_budget, &bud);
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 24); /* no value (a name) of more than 16 MiB */
	/* a file that is not a database fails here, on the first read */
	if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: not an SQLite database: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	for (size_t i = 0; i < sizeof(read_tables) / sizeof(read_tables[0]); i++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, "SELECT type FROM sqlite_master WHERE name = ? AND type <> 'table'", -1, &st,
				       NULL) != SQLITE_OK)
			continue;
		sqlite3_bind_text(st, 1, read_tables[i], -1, SQLITE_STATIC);
		int other = sqlite3_step(st) == SQLITE_ROW;
		if (other)
			snprintf(err, errlen, "%s: %s is a %s, not a table: an nsys export holds only tables; not read", path,
				 read_tables[i], (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		if (other)
			goto out;
	}
	int strings = has_table(db, "StringIds");
	int hk = has_table(db, "CUPTI_ACTIVITY_KIND_KERNEL"), hc = has_table(db, "CUPTI_ACTIVITY_KIND_MEMCPY"),
	    hs = has_table(db, "CUPTI_ACTIVITY_KIND_MEMSET");
	if (!hk && !hc && !hs && !has_table(db, "NVTX_EVENTS")) {
		snprintf(err, errlen, "%s: no CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET or NVTX_EVENTS table "
				      "(not an nsys export?)", path);
		goto out;
	}
	q.source = c->nsources++;
	c->has_tl = 1;
	q.total_rows = (hk ? count_rows(db, "CUPTI_ACTIVITY_KIND_KERNEL") : 0) +
		       (hc ? count_rows(db, "CUPTI_ACTIVITY_KIND_MEMCPY") : 0);
	gt_an_progress(c, path, 0, q.total_rows);
	char sql[1024], expr[512];
	if (hk) {
		const char *col = has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "demangledName") ? "demangledName"
				  : has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "shortName")   ? "shortName"
												: NULL;
		if (!col) {
			snprintf(err, errlen, "%s: table CUPTI_ACTIVITY_KIND_KERNEL has no demangledName or shortName column",
				 path);
			goto out;
		}
		name_expr(expr, sizeof(expr), col, strings);
		char xcols[256];
		fd_columns(&q, "CUPTI_ACTIVITY_KIND_KERNEL", xcols, sizeof(xcols));
		snprintf(sql, sizeof(sql), "SELECT start, end, deviceId, %s%s%s FROM CUPTI_ACTIVITY_KIND_KERNEL", expr,
			 has_column(db, "CUPTI_ACTIVITY_KIND_KERNEL", "correlationId") ? ", correlationId" : "", xcols);
		if (read_gpu_table(&q, "CUPTI_ACTIVITY_KIND_KERNEL", sql, GT_NK_KERNEL, 0) < 0)
			goto out;
	}
	if (hc) {
		c->has_mem = 1;
		char xcols[256];
		fd_columns(&q, "CUPTI_ACTIVITY_KIND_MEMCPY", xcols, sizeof(xcols));
		snprintf(sql, sizeof(sql), "SELECT start, end, deviceId, copyKind%s%s FROM CUPTI_ACTIVITY_KIND_MEMCPY",
			 has_column(db, "CUPTI_ACTIVITY_KIND_MEMCPY", "correlationId") ? ", correlationId" : "", xcols);
		if (read_gpu_table(&q, "CUPTI_ACTIVITY_KIND_MEMCPY", sql, GT_NK_MEMOP, 1) < 0)
			goto out;
	}
	if (hs) {
		c->has_mem = 1;
		char xcols[256];
		fd_columns(&q, "CUPTI_ACTIVITY_KIND_MEMSET", xcols, sizeof(xcols));
		snprintf(sql, sizeof(sql), "SELECT start, end, deviceId, NULL%s%s FROM CUPTI_ACTIVITY_KIND_MEMSET",
			 has_column(db, "CUPTI_ACTIVITY_KIND_MEMSET", "correlationId") ? ", correlationId" : "", xcols);
		if (read_gpu_table(&q, "CUPTI_ACTIVITY_KIND_MEMSET", sql, GT_NK_MEMOP, 0) < 0)
			goto out;
	}
	if (has_table(db, "NVTX_EVENTS") && read_nvtx(&q, strings) < 0)
		goto out;
	if (read_launches(&q) < 0)
		goto out;
	sq_devices(&q);
	const char *b = strrchr(path, '/');
	if (gt_an_label(c, q.source, b && b[1] ? b + 1 : path, path) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	rc = 0;
out:
	if (bud.calls > bud.max_calls) /* a statement was stopped: what was read is not the whole file */
		rc = -1;
	if (rc < 0 && bud.calls > bud.max_calls)
		snprintf(err, errlen, "%s: stopped after %llu SQLite instructions without the end of a table (a query "
				      "of the file that does not end?): not an nsys export",
			 path, (unsigned long long)(bud.max_calls + 1) * PROGRESS_STEP);
	sqlite3_close(db);
	return rc;
}
