/*
 * fleet/task.c — one analyzer run over a batch of tasks: `EXE analyze --format columns --collectives [--nvtx TAG] PATH...` as a
 * child process, its binary columns (docs/analyze.md "Columns output") split per task by each
 * GPU's "source".
 *
 * A rank of one GPU takes that GPU's iterations as they are; a rank of several GPUs per iteration
 * the first start, the last end and the sums of the GPUs that have it.  Iteration window numbers
 * are rounded to 1e-6 ms as numpy's round does (x * 1e6 rounded half to even, / 1e6); a rank row's
 * are the sums of its GPUs' totals.  An input the analyzer refuses is named in its error (else each
 * input of the batch runs alone) and taken out, the rest run again; a process without GPU work is
 * "skipped", a trace the analyzer calls partial "partial".
 *
 * Owns: the child (posix_spawn, no shell; its stdout and stderr read through pipes with poll, so
 * neither blocks; the pipes close on exec, so that the children other threads start at the same
 * time do not hold them) and the reading of its output.  No state outside the call: threads may
 * run batches at once, each into its own rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "core/jsondepth.h"
#include "fleet/fleet.h"

extern char **environ;

#define TIMEOUT_S 3600 /* a batch analysed longer than an hour is stuck: failed */
#define NO_GPU "no GPU activity"
#define SKIP_REASON "no GPU work in this process (e.g. a launcher)"
#define NOT_FOUND                                                                                            \
	"the gputap command was not found on this worker (set GPUTAP, put gputap on PATH, or pip install "   \
	"the gputap package there)"

static const char COLUMNS_MAGIC[] = "gputap-columns 1\n";

/* ---- text ------------------------------------------------------------------------------------ */

struct buf {
	char *s;
	size_t n, cap;
};

static int buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 256;
		while (nc < b->n + n + 1)
			nc *= 2;
		char *ns = realloc(b->s, nc);
		if (!ns)
			return -1;
		b->s = ns;
		b->cap = nc;
	}
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = '\0';
	return 0;
}

static int buf_str(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static int buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	return n < 0 ? -1 : buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Python's repr() of a str (quote_bytes 0) or of bytes (1): quotes chosen as Python does. */
static int py_repr(struct buf *b, const unsigned char *s, size_t n, int bytes)
{
	int sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
	char q = sq && !dq ? '"' : '\'';
	if ((bytes && buf_str(b, "b")) || buf_add(b, &q, 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		int rc;
		if (c == '\\' || c == (unsigned char)q)
			rc = buf_printf(b, "\\%c", c);
		else if (c == '\t')
			rc = buf_str(b, "\\t");
		else if (c == '\n')
			rc = buf_str(b, "\\n");
		else if (c == '\r')
			rc = buf_str(b, "\\r");
		else if (c < 0x20 || c == 0x7f || (bytes && c > 0x7f))
			rc = buf_printf(b, "\\x%02x", c);
		else
			rc = buf_add(b, &c, 1);
		if (rc)
			return -1;
	}
	return buf_add(b, &q, 1);
}

/* bytes.decode("utf-8", "replace"): each ill-formed part one U+FFFD (NUL bytes left out). */
static int utf8_replace(struct buf *b, const unsigned char *s, size_t n)
{
	static const unsigned char FFFD[] = {0xEF, 0xBF, 0xBD};
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c < 0x80) {
			if (c && buf_add(b, &c, 1))
				return -1;
			i++;
			continue;
		}
		size_t need = c >= 0xC2 && c <= 0xDF   ? 1
			      : c >= 0xE0 && c <= 0xEF ? 2
			      : c >= 0xF0 && c <= 0xF4 ? 3
						       : 0;
		size_t k = 1;
		for (; k <= need && i + k < n; k++) {
			unsigned char lo = 0x80, hi = 0xBF, d = s[i + k];
			if (k == 1) {
				lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
				hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
			}
			if (d < lo || d > hi)
				break;
		}
		if (need && k == need + 1) {
			if (buf_add(b, s + i, k))
				return -1;
		} else if (buf_add(b, FFFD, 3)) {
			return -1;
		}
		i += k;
	}
	return b->s || !buf_add(b, "", 0) ? 0 : -1;
}

static int starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* Python's str.strip() and str.splitlines() boundaries, for the ASCII ones. */
static int py_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}
static int py_linebreak(unsigned char c)
{
	return c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e);
}

/* The error: stderr decoded, stripped, its lines without warnings and with the
 * "gputap: error: " prefix taken off, the last three joined with "; ". */
static char *error_message(const char *exe, const unsigned char *err, size_t nerr, int status)
{
	struct buf text = {0}, out = {0};
	if (utf8_replace(&text, err, nerr))
		return NULL;
	char *s = text.s, *e = text.s + text.n;
	while (s < e && py_space((unsigned char)*s))
		s++;
	while (e > s && py_space((unsigned char)e[-1]))
		e--;
	*e = '\0';
	/* the lines, kept in place (each ends at its break, written over with NULs) */
	size_t nl = 0, cap = 16;
	char **line = malloc(cap * sizeof(*line));
	int format_old = 0;
	for (char *p = s; line && p < e;) {
		char *q = p;
		while (q < e && !py_linebreak((unsigned char)*q))
			q++;
		char *next = q < e && q[0] == '\r' && q + 1 < e && q[1] == '\n' ? q + 2 : q < e ? q + 1 : q;
		*q = '\0';
		if (!starts_with(p, "gputap: warning: ")) {
			if (starts_with(p, "gputap: error: "))
				p += strlen("gputap: error: ");
			if (nl == cap) {
				char **nv = realloc(line, (cap *= 2) * sizeof(*nv));
				if (!nv) {
					free(line);
					line = NULL;
					break;
				}
				line = nv;
			}
			line[nl++] = p;
			format_old |= strstr(p, "--format is") != NULL;
		}
		p = next;
	}
	int rc = line ? 0 : -1;
	if (!rc && status == 2 && format_old)
		rc =
		    buf_printf(&out, "%s", "") || buf_str(&out, exe) ||
		    buf_str(&out,
			    " does not write --format columns: a gputap older than this package; install the "
			    "same gputap on every worker");
	else if (!rc && nl)
		for (size_t i = nl > 3 ? nl - 3 : 0; !rc && i < nl; i++)
			rc = (i > (nl > 3 ? nl - 3 : 0) && buf_str(&out, "; ")) || buf_str(&out, line[i]);
	if (!rc && !out.n)
		rc = buf_printf(&out, "the analyzer failed with status %d", status);
	free(line);
	free(text.s);
	if (rc) {
		free(out.s);
		return NULL;
	}
	return out.s;
}

/* ---- the child ------------------------------------------------------------------------------- */

struct child {
	struct buf out, err;
	int status;    /* exit status, or -signal */
	int spawn_err; /* errno when it did not start */
	int timed_out;
};

static int exe_found(const char *exe)
{
	if (!exe || !*exe)
		return 0;
	if (strchr(exe, '/'))
		return access(exe, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *q = strchr(p, ':');
		size_t n = q ? (size_t)(q - p) : strlen(p);
		char cand[4096];
		if (snprintf(cand, sizeof(cand), "%.*s%s%s", (int)n, p, n ? "/" : "", exe) <
			(int)sizeof(cand) &&
		    access(cand, X_OK) == 0)
			return 1;
		if (!q)
			return 0;
		p = q;
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs argv, its output in c.  0, or -1 out of memory (the child, if started, is waited for). */
static int run_child(char *const *argv, struct child *c)
{
	memset(c, 0, sizeof(*c));
	int po[2] = {-1, -1}, pe[2] = {-1, -1};
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		c->spawn_err = errno;
		for (int i = 0; i < 2; i++)
			if (po[i] >= 0)
				close(po[i]);
		return 0;
	}
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int rc = posix_spawn_file_actions_init(&fa);
	if (!rc && !(rc = posix_spawn_file_actions_adddup2(&fa, po[1], 1)) &&
	    !(rc = posix_spawn_file_actions_adddup2(&fa, pe[1], 2)))
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (rc) {
		c->spawn_err = rc;
		close(po[0]);
		close(pe[0]);
		return 0;
	}
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	struct buf *dst[2] = {&c->out, &c->err};
	int open_n = 2, oom = 0;
	double deadline = now_s() + TIMEOUT_S;
	char chunk[65536];
	while (open_n) {
		double left = deadline - now_s();
		if (left <= 0) {
			c->timed_out = 1;
			kill(pid, SIGKILL);
			break;
		}
		int n = poll(fds, 2, left > 3600.0 ? 3600000 : (int)(left * 1000) + 1);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; n > 0 && i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t r = read(fds[i].fd, chunk, sizeof(chunk));
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r > 0 && !oom && buf_add(dst[i], chunk, (size_t)r))
				oom = 1; /* read on, so that the child can finish */
			if (r <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_n--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	c->status = WIFSIGNALED(st) ? -WTERMSIG(st) : WEXITSTATUS(st);
	return oom ? -1 : 0;
}

/* ---- the columns ----------------------------------------------------------------------------- */

struct col {
	const char *name;
	int f8;
	const unsigned char *at;
};

struct table {
	size_t rows, ncols;
	struct col *cols;
};

struct parsed {
	char *keep; /* the output the columns point into */
	yajl_val hdr;
	int big;
	struct table it, co;
};

static void parsed_free(struct parsed *p)
{
	free(p->it.cols);
	free(p->co.cols);
	yajl_tree_free(p->hdr);
}

static yajl_val jget(yajl_val o, const char *k)
{
	const char *path[] = {k, NULL};
	return YAJL_IS_OBJECT(o) ? yajl_tree_get(o, path, yajl_t_any) : NULL;
}

static uint64_t raw64(const struct parsed *p, const unsigned char *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (p->big ? 8 * (7 - i) : 8 * i);
	return v;
}

static int64_t geti(const struct parsed *p, const struct col *c, size_t i)
{
	uint64_t u = raw64(p, c->at + 8 * i);
	if (c->f8) {
		double d;
		memcpy(&d, &u, sizeof(d));
		return d != d || fabs(d) >= 9.2e18 ? INT64_MIN : (int64_t)d;
	}
	return (int64_t)u;
}

static double getf(const struct parsed *p, const struct col *c, size_t i)
{
	uint64_t u = raw64(p, c->at + 8 * i);
	if (!c->f8)
		return (double)(int64_t)u;
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

static const struct col *tcol(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name))
			return &t->cols[i];
	return NULL;
}

/* The analyzer's columns: 0, or -1 with the message in *why (1: out of memory). */
static int parse_columns(const unsigned char *out, size_t len, struct parsed *p, struct buf *why)
{
	memset(p, 0, sizeof(*p));
	size_t ml = sizeof(COLUMNS_MAGIC) - 1;
	if (len < ml || memcmp(out, COLUMNS_MAGIC, ml)) {
		return buf_str(why, "not the analyzer's columns (first bytes ") ||
			       py_repr(why, out, len < 20 ? len : 20, 1) || buf_str(why, ")")
			   ? 1
			   : -1;
	}
	const unsigned char *nl = memchr(out + ml, '\n', len - ml);
	if (!nl)
		return buf_str(why, "subsection not found") ? 1 : -1;
	size_t hl = (size_t)(nl - out) - ml;
	char *text = strndup((const char *)out + ml, hl);
	if (!text)
		return 1;
	char yerr[256] = "nests too deep";
	p->hdr =
	    gt_json_too_deep(text, strlen(text), GT_JSON_MAX_DEPTH) ? NULL : yajl_tree_parse(text, yerr, sizeof(yerr));
	free(text);
	if (!p->hdr) {
		char *e = strchr(yerr, '\n');
		if (e)
			*e = '\0';
		return buf_printf(why, "bad header: %s", yerr) ? 1 : -1;
	}
	yajl_val bo = jget(p->hdr, "byteorder"), tables = jget(p->hdr, "tables");
	if (!YAJL_IS_STRING(bo) || (strcmp(bo->u.string, "little") && strcmp(bo->u.string, "big")))
		return buf_str(why, bo ? "unknown byteorder" : "'byteorder'") ? 1 : -1;
	p->big = !strcmp(bo->u.string, "big");
	size_t pos = (size_t)(nl - out) + 1;
	static const char *const TNAME[2] = {"iterations", "collectives"};
	struct table *tt[2] = {&p->it, &p->co};
	for (int t = 0; t < 2; t++) {
		yajl_val spec = jget(tables, TNAME[t]), rows = jget(spec, "rows"),
			 cols = jget(spec, "columns");
		if (!YAJL_IS_INTEGER(rows) || YAJL_GET_INTEGER(rows) < 0 || !YAJL_IS_ARRAY(cols))
			return buf_printf(why, "'%s': rows and columns", TNAME[t]) ? 1 : -1;
		size_t n = (size_t)YAJL_GET_INTEGER(rows);
		tt[t]->rows = n;
		tt[t]->cols = calloc(cols->u.array.len + 1, sizeof(struct col));
		if (!tt[t]->cols)
			return 1;
		for (size_t i = 0; i < cols->u.array.len; i++) {
			yajl_val c = cols->u.array.values[i];
			const char *name =
			    YAJL_IS_ARRAY(c) && c->u.array.len == 2 && YAJL_IS_STRING(c->u.array.values[0])
				? c->u.array.values[0]->u.string
				: NULL;
			const char *typ = name && YAJL_IS_STRING(c->u.array.values[1])
					      ? c->u.array.values[1]->u.string
					      : "";
			if (!name)
				return buf_printf(why, "'%s': column %zu", TNAME[t], i) ? 1 : -1;
			int known = !strcmp(typ, "i8") || !strcmp(typ, "f8");
			if (!known || n > (len - pos) / 8) {
				if (buf_printf(why, "column %s.%s: ", TNAME[t], name))
					return 1;
				return (known ? buf_str(why, "cut short")
					      : buf_str(why, "unknown type ") ||
						    py_repr(why, (const unsigned char *)typ, strlen(typ), 0))
					   ? 1
					   : -1;
			}
			tt[t]->cols[tt[t]->ncols++] = (struct col){name, typ[0] == 'f', out + pos};
			pos += 8 * n;
		}
	}
	if (pos != len)
		return buf_printf(why, "%zu bytes after the columns", len - pos) ? 1 : -1;
	return 0;
}

/* ---- one run's rows, per task ---------------------------------------------------------------- */

static double round6(double x)
{
	return rint(x * 1e6) / 1e6;
} /* numpy's round(x, 6) */

static int64_t jint_or(yajl_val o, const char *k, int64_t dflt)
{
	yajl_val v = jget(o, k);
	return YAJL_IS_INTEGER(v)  ? (int64_t)YAJL_GET_INTEGER(v)
	       : YAJL_IS_DOUBLE(v) ? (int64_t)YAJL_GET_DOUBLE(v)
				   : dflt;
}

static double jnum0(yajl_val o, const char *k)
{
	yajl_val v = jget(o, k);
	return YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : 0.0;
}

static const char *jstr_or(yajl_val o, const char *k, const char *dflt)
{
	yajl_val v = jget(o, k);
	return YAJL_IS_STRING(v) ? v->u.string : dflt;
}


struct batch {
	const char *exe;
	const fl_plan *p;
	fl_rows *out;
};

static int task_no(const struct batch *b, int i)
{
	return b->p->tasks[i].index;
}

static int fail(struct batch *b, int i, int status, const char *msg)
{
	return fl_rows_fail(b->out, task_no(b, i), status, msg);
}

/* The columns this needs, looked up once. */
struct need {
	const struct col *gpu, *start, *first, *last, *w[FL_NWIN];
	const struct col *src, *ci[15];
};

static const char *const COLL_NAMES[15] = {"comm",	"name",	    "algo",   "proto",	   "match",
					   "dtype",	"device",   "seq",    "count",	   "bytes",
					   "iteration", "start_ns", "end_ns", "launch_ns", "source"};

/* The columns _collect reads; 0, or -1 with the missing one named in why. */
static int need_cols(const struct parsed *pr, struct need *nd, struct buf *why)
{
	const char *miss = NULL;
	if (!(nd->gpu = tcol(&pr->it, "gpu")))
		miss = "gpu";
	else if (!(nd->start = tcol(&pr->it, "start_ns")))
		miss = "start_ns";
	else if (!(nd->first = tcol(&pr->it, "first_ns")))
		miss = "first_ns";
	else if (!(nd->last = tcol(&pr->it, "last_ns")))
		miss = "last_ns";
	for (int k = 0; !miss && k < FL_NWIN; k++)
		if (!(nd->w[k] = tcol(&pr->it, fl_window_names[k])))
			miss = fl_window_names[k];
	for (int k = 0; !miss && k < 15; k++)
		if (!(nd->ci[k] = tcol(&pr->co, COLL_NAMES[k])))
			miss = COLL_NAMES[k];
	nd->src = miss ? NULL : nd->ci[14];
	if (!miss)
		return 0;
	buf_printf(why, "'%s'", miss);
	return -1;
}

/* the rows of one analyzer result over the tasks part[0..n).  0, -1 out of
 * memory, 1 with why set: the output does not hold together (the batch is then retried as an error). */
static int collect(struct batch *b, const struct parsed *pr, const int *part, size_t n, struct buf *why)
{
	fl_rows *out = b->out;
	struct need nd;
	if (need_cols(pr, &nd, why))
		return 1;
	yajl_val gv = jget(pr->hdr, "gpus"), notes = jget(pr->hdr, "notes");
	size_t ng = YAJL_IS_ARRAY(gv) ? gv->u.array.len : 0;
	int64_t *src = calloc(ng + 1, sizeof(*src)), *nrow = calloc(ng + 1, sizeof(*nrow));
	size_t *start = calloc(ng + 1, sizeof(*start));
	int *mine = calloc(ng + 1, sizeof(*mine));
	int rc = -1;
	if (!src || !nrow || !start || !mine)
		goto done;
	for (size_t i = 0; i < ng; i++) {
		yajl_val g = gv->u.array.values[i];
		src[i] = jint_or(g, "source", 0);
		nrow[i] = jint_or(g, "iterations", 0);
		if (nrow[i] < 0 || (uint64_t)nrow[i] > pr->it.rows - start[i]) {
			rc = 1;
			buf_str(why, "the GPUs' iterations do not match the iterations table");
			goto done;
		}
		start[i + 1] = start[i] + (size_t)nrow[i];
	}
	if (start[ng] != pr->it.rows) {
		rc = 1;
		buf_str(why, "the GPUs' iterations do not match the iterations table");
		goto done;
	}
	for (size_t r = 0; r < pr->it.rows; r++) {
		int64_t g = geti(pr, nd.gpu, r);
		if (g < 0 || (uint64_t)g >= ng || r < start[g] || r >= start[g + 1]) {
			rc = 1;
			buf_printf(why, "iteration row %zu: gpu out of order", r);
			goto done;
		}
	}
	size_t nstr = 0;
	yajl_val strs = jget(jget(jget(pr->hdr, "tables"), "collectives"), "strings");
	if (YAJL_IS_ARRAY(strs))
		nstr = strs->u.array.len;
	for (size_t r = 0; r < pr->co.rows; r++)
		for (int k = 0; k < 6; k++) {
			int64_t v = geti(pr, nd.ci[k], r);
			if (v < 0 || (uint64_t)v > nstr) {
				rc = 1;
				buf_printf(why, "collective %zu: string %s out of range", r, COLL_NAMES[k]);
				goto done;
			}
		}
	/* one GPU per source everywhere (the usual case): the iterations table as it is */
	int one_each = 1;
	for (size_t i = 0; i < ng && one_each; i++)
		for (size_t j = 0; j < i && one_each; j++)
			one_each = src[i] != src[j];
	if (one_each)
		for (size_t r = 0; r < pr->it.rows; r++) {
			int64_t g = geti(pr, nd.gpu, r), s = src[g];
			if (s < 0 || (uint64_t)s >= n)
				continue;
			fl_iterrow *k = fl_rows_iter_push(out);
			if (!k)
				goto done;
			k->task = task_no(b, part[s]);
			k->iteration = (int64_t)(r - start[g]);
			k->start_ns = geti(pr, nd.start, r);
			k->first_ns = geti(pr, nd.first, r);
			k->last_ns = geti(pr, nd.last, r);
			for (int w = 0; w < FL_NWIN; w++)
				k->w[w] = round6(getf(pr, nd.w[w], r));
		}
	const char *isrc = jstr_or(pr->hdr, "iteration_source", "");
	for (size_t s = 0; s < n; s++) {
		const char *path = b->p->tasks[part[s]].path;
		size_t pl = strlen(path), nm = 0;
		for (size_t i = 0; i < ng; i++)
			if (src[i] == (int64_t)s)
				mine[nm++] = (int)i;
		int status = FL_OK;
		const char *msg = "";
		for (size_t i = 0; YAJL_IS_ARRAY(notes) && i < notes->u.array.len; i++) {
			const char *note = YAJL_IS_STRING(notes->u.array.values[i])
					       ? notes->u.array.values[i]->u.string
					       : "";
			if (!strncmp(note, path, pl) && note[pl] == ':' && strstr(note, "partial")) {
				status = FL_PARTIAL;
				msg = strlen(note) > pl + 2 ? note + pl + 2 : "";
				break;
			}
		}
		if (status == FL_OK && pl >= 8 && !strcmp(path + pl - 8, ".partial")) {
			status = FL_PARTIAL;
			msg = "the trace is partial";
		}
		if (!nm) {
			if (fail(b, part[s], status == FL_OK ? FL_SKIPPED : status, *msg ? msg : SKIP_REASON))
				goto done;
			continue;
		}
		/* the rank row: the labels joined, the totals summed */
		struct buf label = {0};
		int64_t nit = 0, first = 0, last = 0;
		double w[FL_NWIN] = {0};
		for (size_t m = 0; m < nm; m++) {
			yajl_val g = gv->u.array.values[mine[m]], tot = jget(g, "total");
			if ((m && buf_str(&label, ",")) || buf_str(&label, jstr_or(g, "label", ""))) {
				free(label.s);
				goto done;
			}
			nit = nrow[mine[m]] > nit ? nrow[mine[m]] : nit;
			int64_t f = jint_or(tot, "first_ns", 0), l = jint_or(tot, "last_ns", 0);
			first = !m || f < first ? f : first;
			last = !m || l > last ? l : last;
			for (int k = 0; k < FL_NWIN; k++)
				w[k] += jnum0(tot, fl_window_names[k]);
		}
		int frc = fl_rows_fail(out, task_no(b, part[s]), status, msg);
		if (!frc) {
			fl_rankrow *k = &out->ranks[out->nranks - 1];
			free(k->label);
			free(k->iteration_source);
			k->label = label.s ? label.s : strdup("");
			k->iteration_source = strdup(isrc);
			label.s = NULL;
			frc = !k->label || !k->iteration_source;
			k->gpus = (int)nm;
			k->iterations = nit;
			k->first_ns = first;
			k->last_ns = last;
			memcpy(k->w, w, sizeof(w));
		}
		free(label.s);
		if (frc)
			goto done;
		if (nit == 0 || one_each)
			continue;
		/* several GPUs: per iteration the first start, the last end, the sums of those that have it
		 */
		for (int64_t j = 0; j < nit; j++) {
			fl_iterrow *row = fl_rows_iter_push(out);
			if (!row)
				goto done;
			row->task = task_no(b, part[s]);
			row->iteration = j;
			int any = 0;
			for (size_t m = 0; m < nm; m++) {
				int g = mine[m];
				if (j >= nrow[g])
					continue;
				size_t r = start[g] + (size_t)j;
				int64_t st = geti(pr, nd.start, r), fi = geti(pr, nd.first, r),
					la = geti(pr, nd.last, r);
				row->start_ns = !any || st < row->start_ns ? st : row->start_ns;
				row->first_ns = !any || fi < row->first_ns ? fi : row->first_ns;
				row->last_ns = !any || la > row->last_ns ? la : row->last_ns;
				for (int k = 0; k < FL_NWIN; k++)
					row->w[k] += getf(pr, nd.w[k], r);
				any = 1;
			}
			for (int k = 0; k < FL_NWIN; k++)
				row->w[k] = round6(row->w[k]);
		}
	}
	/* the collectives: string numbers into the rows' strings */
	int *remap = malloc((nstr + 1) * sizeof(*remap));
	if (!remap)
		goto done;
	for (size_t i = 0; i < nstr; i++) {
		yajl_val v = strs->u.array.values[i];
		if ((remap[i] = fl_rows_intern(out, YAJL_IS_STRING(v) ? v->u.string : "")) < 0) {
			free(remap);
			goto done;
		}
	}
	remap[nstr] = 0;
	for (size_t r = 0; r < pr->co.rows; r++) {
		int64_t s = geti(pr, nd.src, r);
		if (s < 0 || (uint64_t)s >= n)
			continue;
		fl_collrow *c = fl_rows_coll_push(out);
		if (!c) {
			free(remap);
			goto done;
		}
		c->task = task_no(b, part[s]);
		int sv[6];
		for (int k = 0; k < 6; k++)
			sv[k] = remap[geti(pr, nd.ci[k], r)];
		c->comm = sv[0];
		c->name = sv[1];
		c->algo = sv[2];
		c->proto = sv[3];
		c->match = sv[4];
		c->dtype = sv[5];
		c->device = geti(pr, nd.ci[6], r);
		c->seq = geti(pr, nd.ci[7], r);
		c->count = geti(pr, nd.ci[8], r);
		c->bytes = geti(pr, nd.ci[9], r);
		c->iteration = geti(pr, nd.ci[10], r);
		c->start_ns = geti(pr, nd.ci[11], r);
		c->end_ns = geti(pr, nd.ci[12], r);
		c->launch_ns = geti(pr, nd.ci[13], r);
	}
	free(remap);
	rc = 0;
done:
	free(src);
	free(nrow);
	free(start);
	free(mine);
	return rc;
}

/* ---- the batch ------------------------------------------------------------------------------- */

/* the task whose path the error names ("PATH: ..." or "... PATH: ..."); -1. */
static int named(const char *msg, const fl_plan *p, const int *part, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *path = p->tasks[part[i]].path;
		size_t pl = strlen(path);
		if (!strncmp(msg, path, pl) && msg[pl] == ':')
			return (int)i;
		for (const char *s = strstr(msg, path); s; s = strstr(s + 1, path))
			if (s > msg && s[-1] == ' ' && s[pl] == ':')
				return (int)i;
	}
	return -1;
}

/* the analyzer over the paths of part[0..n); its parsed output (0), or why it gave
 * none in *err (1).  -1: out of memory. */
static int run_batch(struct batch *b, const int *part, size_t n, const char *nvtx, struct parsed *pr,
		     char **err)
{
	*err = NULL;
	const char **argv = calloc(n + 9, sizeof(*argv));
	if (!argv)
		return -1;
	size_t a = 0;
	argv[a++] = b->exe;
	argv[a++] = "analyze";
	argv[a++] = "--format";
	argv[a++] = "columns";
	argv[a++] = "--collectives";
	if (nvtx && *nvtx) {
		argv[a++] = "--nvtx";
		argv[a++] = nvtx;
	}
	for (size_t i = 0; i < n; i++)
		argv[a++] = b->p->tasks[part[i]].path;
	struct child c;
	int rc = run_child((char *const *)(uintptr_t)argv, &c);
	struct buf why = {0};
	if (rc) {
		/* out of memory */
	} else if (c.spawn_err || c.timed_out) {
		rc = buf_str(&why, "the analyzer could not run: ");
		if (c.spawn_err) {
			char eb[256];
			rc = rc ||
			     buf_printf(&why, "[Errno %d] %s: ", c.spawn_err,
					strerror_r(c.spawn_err, eb, sizeof(eb))) ||
			     py_repr(&why, (const unsigned char *)b->exe, strlen(b->exe), 0);
		} else {
			rc = rc || buf_str(&why, "Command '[");
			for (size_t i = 0; !rc && i < a; i++)
				rc = (i && buf_str(&why, ", ")) ||
				     py_repr(&why, (const unsigned char *)argv[i], strlen(argv[i]), 0);
			rc = rc || buf_printf(&why, "]' timed out after %d seconds", TIMEOUT_S);
		}
		rc = rc ? -1 : 1;
	} else if (c.status < 0) {
		rc = buf_printf(&why, "the analyzer was killed (signal %d)", -c.status) ? -1 : 1;
	} else if (c.status != 0) {
		why.s = error_message(b->exe, (const unsigned char *)c.err.s, c.err.n, c.status);
		rc = why.s ? 1 : -1;
	} else {
		struct buf pw = {0};
		int prc = parse_columns((const unsigned char *)c.out.s, c.out.n, pr, &pw);
		if (prc == 0) {
			rc = 0;
		} else {
			parsed_free(pr);
			rc = prc > 0 || buf_str(&why, "unreadable analyzer output: ") ||
				     buf_str(&why, pw.s ? pw.s : "")
				 ? -1
				 : 1;
		}
		free(pw.s);
	}
	/* the parsed columns point into the output: kept with them */
	if (rc == 0) {
		pr->keep = c.out.s;
		c.out.s = NULL;
	}
	free(c.out.s);
	free(c.err.s);
	free(argv);
	if (rc == 1)
		*err = why.s;
	else
		free(why.s);
	return rc;
}

/* A stack of parts still to run. */
struct queue {
	int **part;
	size_t *n;
	size_t len, cap;
};

static int queue_push(struct queue *q, const int *part, size_t n)
{
	if (q->len == q->cap) {
		size_t nc = q->cap ? q->cap * 2 : 8;
		int **np = realloc(q->part, nc * sizeof(*np));
		if (!np)
			return -1;
		q->part = np;
		size_t *nn = realloc(q->n, nc * sizeof(*nn));
		if (!nn)
			return -1;
		q->n = nn;
		q->cap = nc;
	}
	int *c = malloc((n ? n : 1) * sizeof(*c));
	if (!c)
		return -1;
	memcpy(c, part, n * sizeof(*c));
	q->part[q->len] = c;
	q->n[q->len++] = n;
	return 0;
}

/* One part of the queue through the analyzer: its rows, or what it refused taken out. */
static int run_part(struct batch *b, struct queue *q, const int *part, size_t n, const char *nvtx)
{
	struct parsed pr;
	memset(&pr, 0, sizeof(pr));
	char *err = NULL;
	int rc = run_batch(b, part, n, nvtx, &pr, &err);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		struct buf why = {0};
		int crc = collect(b, &pr, part, n, &why);
		free(pr.keep);
		parsed_free(&pr);
		if (crc <= 0) {
			free(why.s);
			return crc;
		}
		/* output that does not hold together: as an unreadable output */
		struct buf e = {0};
		int orc = buf_str(&e, "unreadable analyzer output: ") || buf_str(&e, why.s ? why.s : "");
		free(why.s);
		if (orc) {
			free(e.s);
			return -1;
		}
		err = e.s;
	}
	int bad = n > 1 ? named(err, b->p, part, n) : 0;
	rc = 0;
	if (bad < 0) {
		for (size_t i = 0; i < n && !rc; i++)
			rc = queue_push(q, &part[i], 1);
		free(err);
		return rc ? -1 : 0;
	}
	const char *path = b->p->tasks[part[bad]].path, *m = err;
	size_t pl = strlen(path);
	if (!strncmp(err, path, pl) && err[pl] == ':')
		m = strlen(err) >= pl + 2 ? err + pl + 2 : "";
	rc = strstr(m, NO_GPU) ? fail(b, part[bad], FL_SKIPPED, SKIP_REASON)
			       : fail(b, part[bad], FL_FAILED, m);
	free(err);
	if (rc)
		return -1;
	if (n > 1) {
		int *rest = malloc((n - 1) * sizeof(*rest));
		if (!rest)
			return -1;
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if ((int)i != bad)
				rest[k++] = part[i];
		rc = queue_push(q, rest, k);
		free(rest);
	}
	return rc ? -1 : 0;
}

int fl_task_run(const char *exe, const fl_plan *p, const int *idx, size_t n, const char *nvtx, fl_rows *out)
{
	struct batch b = {exe, p, out};
	int found = exe_found(exe);
	int *todo = malloc((n ? n : 1) * sizeof(*todo));
	if (!todo)
		return -1;
	size_t nt = 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct stat st;
		const char *path = p->tasks[idx[i]].path;
		if (!found)
			rc = fail(&b, idx[i], FL_FAILED, NOT_FOUND);
		else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rc = fail(&b, idx[i], FL_FAILED, "no trace.gtr in this rank folder");
		else if (stat(path, &st) != 0)
			rc = fail(&b, idx[i], FL_FAILED, "no such file");
		else
			todo[nt++] = idx[i];
	}
	struct queue q = {0};
	if (!rc && nt)
		rc = queue_push(&q, todo, nt);
	free(todo);
	while (!rc && q.len) {
		q.len--;
		int *part = q.part[q.len];
		rc = run_part(&b, &q, part, q.n[q.len], nvtx);
		free(part);
	}
	for (size_t i = 0; i < q.len; i++)
		free(q.part[i]);
	free(q.part);
	free(q.n);
	return rc ? -1 : 0;
}
