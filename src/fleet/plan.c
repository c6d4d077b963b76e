/*
 * fleet/plan.c — what `gputap fleet` is given, turned into one task per rank, and the tasks grouped
 * into batches for one analyzer run each: the tasks in a stable order (the inputs' order, each
 * folder's entries by length then name), with their labels, ranks, hosts and clock anchors.
 *
 * An input may be a gputap run folder (run.json and <proc>/trace.gtr per process: one task per
 * <proc>, its host and clock anchor from run.json), a rank folder or a trace.gtr (one task), a
 * Kineto .json[.gz], an nsys .sqlite or .nsys-rep (one task each), or a folder of these, two levels
 * deep at most.  A folder named like a rank (rank<R>, pid<P>) without a trace is still a task, so
 * that the analysis names it as failed.  Paths are made absolute as os.path.abspath does (no link
 * resolved); the same file named twice (a link, a path with ..) is one task.
 *
 * Owns: the plan (fl_plan: tasks and failed inputs), its batches and its JSON form.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>
#include <zlib.h>

#include "core/csvio.h" /* gt_read_file */
#include "core/jsondepth.h"
#include "core/sort.h"
#include "fleet/fleet.h"

#define KINETO_HEAD 65536

static const char *const TRACE_SUFFIXES[] = {".json",	  ".json.gz", ".sqlite",
					     ".nsys-rep", ".gtr",     ".gtr.partial"};
static const char *const LABEL_SUFFIXES[] = {".json.gz", ".json", ".sqlite", ".nsys-rep"};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char NO_TRACE[] = "no trace found (run folders, rank folders, trace.gtr, Kineto .json[.gz], "
			       "nsys .sqlite/.nsys-rep)";

/* ---- paths, as posixpath does them ---------------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static int has_trace_suffix(const char *s)
{
	for (size_t i = 0; i < NELEM(TRACE_SUFFIXES); i++)
		if (ends_with(s, TRACE_SUFFIXES[i]))
			return 1;
	return 0;
}

/* posixpath.normpath: "." and ".." resolved in the text, "//" kept at the start (POSIX leaves it to
 * the system), three or more slashes there one. */
static char *normpath(const char *p)
{
	if (!*p)
		return strdup(".");
	size_t n = strlen(p);
	int lead = p[0] == '/' ? (p[1] == '/' && p[2] != '/' ? 2 : 1) : 0;
	char *out = malloc(n + 2), **comp = malloc((n / 2 + 2) * sizeof(*comp));
	char *work = strdup(p);
	if (!out || !comp || !work) {
		free(out);
		free(comp);
		free(work);
		return NULL;
	}
	size_t nc = 0;
	for (char *save = NULL, *tok = strtok_r(work, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strcmp(tok, "."))
			continue;
		if (!strcmp(tok, "..") && (lead || (nc && strcmp(comp[nc - 1], "..")))) {
			if (nc)
				nc--;
			continue;
		}
		comp[nc++] = tok;
	}
	size_t o = 0;
	for (int i = 0; i < lead; i++)
		out[o++] = '/';
	for (size_t i = 0; i < nc; i++) {
		if (i)
			out[o++] = '/';
		size_t l = strlen(comp[i]);
		memcpy(out + o, comp[i], l);
		o += l;
	}
	if (!o)
		out[o++] = '.';
	out[o] = '\0';
	free(comp);
	free(work);
	return out;
}

/* os.path.abspath: joined to the working folder when relative, then normpath. */
char *fl_abspath(const char *p)
{
	if (p[0] == '/')
		return normpath(p);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return normpath(p);
	size_t a = strlen(cwd), b = strlen(p);
	char *j = malloc(a + b + 2);
	if (!j)
		return NULL;
	memcpy(j, cwd, a);
	j[a] = '/';
	memcpy(j + a + 1, p, b + 1);
	if (!b)
		j[a] = '\0';
	char *r = normpath(j);
	free(j);
	return r;
}

/* os.path.join(a, b) for a name b. */
static char *pjoin(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	char *j = malloc(n + m + 2);
	if (!j)
		return NULL;
	memcpy(j, a, n);
	size_t o = n;
	if (n && a[n - 1] != '/')
		j[o++] = '/';
	memcpy(j + o, b, m + 1);
	return j;
}

static const char *basename_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* posixpath.dirname: the head, its trailing slashes taken off unless it is all slashes. */
static char *dirname_of(const char *p)
{
	const char *s = strrchr(p, '/');
	size_t n = s ? (size_t)(s - p) + 1 : 0, all = 1;
	for (size_t i = 0; i < n; i++)
		all &= p[i] == '/';
	if (n && !all)
		while (n && p[n - 1] == '/')
			n--;
	return strndup(p, n);
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* re.search(r"rank(\d+)", name): the number after the first "rank" followed by a digit; -1: none. */
static long rank_of(const char *name)
{
	for (const char *s = strstr(name, "rank"); s; s = strstr(s + 1, "rank"))
		if (isdigit((unsigned char)s[4])) {
			long v = 0;
			for (const char *d = s + 4; isdigit((unsigned char)*d); d++)
				v = v > (LONG_MAX - 9) / 10 ? LONG_MAX : v * 10 + (*d - '0');
			return v;
		}
	return -1;
}

/* re.fullmatch(r"(rank\d+|pid\d+)", name) */
static int proc_name(const char *name)
{
	const char *d = !strncmp(name, "rank", 4) ? name + 4 : !strncmp(name, "pid", 3) ? name + 3 : NULL;
	if (!d || !*d)
		return 0;
	for (; *d; d++)
		if (!isdigit((unsigned char)*d))
			return 0;
	return 1;
}

/* A .json[.gz] found in a folder counts only when its first 64 KiB look like a trace; a file that
 * cannot be read counts (the analyzer says what is wrong with it). */
static int looks_like_kineto(const char *p)
{
	static const char *const KEYS[] = {"\"traceEvents\"", "\"schemaVersion\"", "\"distributedInfo\""};
	char *head = malloc(KINETO_HEAD);
	if (!head)
		return 1;
	size_t n = 0;
	int unreadable = 0;
	if (ends_with(p, ".gz")) {
		gzFile z = gzopen(p, "rb");
		if (!z) {
			free(head);
			return 1;
		}
		while (n < KINETO_HEAD) {
			int r = gzread(z, head + n, (unsigned)(KINETO_HEAD - n));
			if (r <= 0) {
				int zerr = Z_OK;
				gzerror(z, &zerr);
				unreadable = r < 0 || (zerr != Z_OK && zerr != Z_STREAM_END);
				break;
			}
			n += (size_t)r;
		}
		if (n && gzdirect(z))
			unreadable = 1; /* not gzip: Python's gzip refuses it */
		gzclose(z);
	} else {
		FILE *f = fopen(p, "rb");
		if (!f) {
			free(head);
			return 1;
		}
		n = fread(head, 1, KINETO_HEAD, f);
		unreadable = ferror(f);
		fclose(f);
	}
	int yes = unreadable;
	for (size_t k = 0; !yes && k < NELEM(KEYS); k++)
		yes = memmem(head, n, KEYS[k], strlen(KEYS[k])) != NULL;
	free(head);
	return yes;
}

/* ---- run.json -------------------------------------------------------------------------------- */

struct run_info {
	int present;  /* a JSON object with at least one key (Python: a true dict) */
	char *host;   /* "host" when a string */
	int has_host; /* "host" there and not null */
	int has_anchor;
	int64_t anchor_ns;
};

static void run_free(struct run_info *r)
{
	free(r->host);
	memset(r, 0, sizeof(*r));
}

/* The folder's run.json: present when it is a non-empty JSON object (anything else: none). */
static int read_run_json(const char *dir, struct run_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	char *p = pjoin(dir, "run.json");
	if (!p)
		return -1;
	size_t len = 0;
	char *text = gt_read_file(p, &len);
	free(p);
	if (!text || memchr(text, '\0', len) || gt_json_too_deep(text, len, GT_JSON_MAX_DEPTH)) {
		free(text);
		return 0;
	}
	char yerr[128];
	yajl_val v = yajl_tree_parse(text, yerr, sizeof(yerr));
	free(text);
	if (!v)
		return 0;
	if (YAJL_IS_OBJECT(v) && v->u.object.len) {
		ri->present = 1;
		/* json.load keeps the last of keys given twice */
		for (size_t i = 0; i < v->u.object.len; i++) {
			const char *k = v->u.object.keys[i];
			yajl_val x = v->u.object.values[i];
			if (!strcmp(k, "host")) {
				free(ri->host);
				ri->host = NULL;
				ri->has_host = x && !YAJL_IS_NULL(x);
				if (YAJL_IS_STRING(x) && !(ri->host = strdup(x->u.string))) {
					yajl_tree_free(v);
					return -1;
				}
			} else if (!strcmp(k, "start_ns")) {
				ri->has_anchor = YAJL_IS_INTEGER(x) || YAJL_IS_DOUBLE(x);
				ri->anchor_ns = YAJL_IS_INTEGER(x)  ? (int64_t)YAJL_GET_INTEGER(x)
						: YAJL_IS_DOUBLE(x) ? (int64_t)YAJL_GET_DOUBLE(x)
								    : 0;
			}
		}
	}
	yajl_tree_free(v);
	return 0;
}

/* ---- the walk -------------------------------------------------------------------------------- */

/* What tells two inputs apart: the file (device, inode), else the resolved path. */
struct seen {
	struct seen_key {
		dev_t dev;
		ino_t ino;
		char *path;
	} * k;
	size_t n, cap;
	size_t *slot; /* index + 1 into k; 0: empty */
	size_t nslot;
};

static uint64_t key_hash(const struct seen_key *k)
{
	uint64_t h = 1469598103934665603ull;
	if (k->path) {
		for (const unsigned char *s = (const unsigned char *)k->path; *s; s++)
			h = (h ^ *s) * 1099511628211ull;
		return h;
	}
	h = (h ^ (uint64_t)k->dev) * 1099511628211ull;
	h = (h ^ (uint64_t)k->ino) * 1099511628211ull;
	return h ^ (h >> 29);
}

static int key_eq(const struct seen_key *a, const struct seen_key *b)
{
	if (!a->path != !b->path)
		return 0;
	return a->path ? !strcmp(a->path, b->path) : a->dev == b->dev && a->ino == b->ino;
}

static int seen_grow(struct seen *s)
{
	size_t ns = s->nslot ? s->nslot * 2 : 64;
	size_t *slot = calloc(ns, sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		size_t h = (size_t)key_hash(&s->k[i]) & (ns - 1);
		while (slot[h])
			h = (h + 1) & (ns - 1);
		slot[h] = i + 1;
	}
	free(s->slot);
	s->slot = slot;
	s->nslot = ns;
	return 0;
}

/* 1: new (k kept: its path now the set's), 0: seen before, -1: out of memory. */
static int seen_add(struct seen *s, struct seen_key *k)
{
	if ((s->n + 1) * 2 > s->nslot && seen_grow(s))
		return -1;
	size_t h = (size_t)key_hash(k) & (s->nslot - 1);
	for (; s->slot[h]; h = (h + 1) & (s->nslot - 1))
		if (key_eq(&s->k[s->slot[h] - 1], k))
			return 0;
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 32;
		struct seen_key *nk = realloc(s->k, nc * sizeof(*nk));
		if (!nk)
			return -1;
		s->k = nk;
		s->cap = nc;
	}
	s->k[s->n] = *k;
	s->slot[h] = ++s->n;
	return 1;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->k[i].path);
	free(s->k);
	free(s->slot);
}

struct walk {
	fl_plan *p;
	size_t cap_tasks, cap_failed;
	struct seen seen;
};

static void task_free(fl_task *t)
{
	free(t->path);
	free(t->label);
	free(t->host);
}

/* Adding a task: t (owned) becomes a task unless its file is one already.  st: the file's stat
 * when the caller has it.  0 or -1. */
static int add_task(struct walk *w, fl_task *t, const struct stat *st)
{
	struct stat own;
	struct seen_key k = {0, 0, NULL};
	if (st || stat(t->path, &own) == 0) {
		if (!st)
			st = &own;
		k.dev = st->st_dev;
		k.ino = st->st_ino;
		t->size = (int64_t)st->st_size;
	} else {
		char *rp = realpath(t->path, NULL);
		k.path = rp ? rp : strdup(t->path);
		if (!k.path) {
			task_free(t);
			return -1;
		}
	}
	int isnew = seen_add(&w->seen, &k);
	if (isnew <= 0) {
		free(k.path);
		task_free(t);
		return isnew;
	}
	fl_plan *p = w->p;
	if (p->ntasks == w->cap_tasks) {
		size_t nc = w->cap_tasks ? w->cap_tasks * 2 : 16;
		fl_task *nt = realloc(p->tasks, nc * sizeof(*nt));
		if (!nt) {
			task_free(t);
			return -1;
		}
		p->tasks = nt;
		w->cap_tasks = nc;
	}
	t->index = (int)p->ntasks;
	p->tasks[p->ntasks++] = *t;
	return 0;
}

static int add_failed(struct walk *w, const char *path, const char *error)
{
	fl_plan *p = w->p;
	if (p->nfailed == w->cap_failed) {
		size_t nc = w->cap_failed ? w->cap_failed * 2 : 8;
		fl_failed *nf = realloc(p->failed, nc * sizeof(*nf));
		if (!nf)
			return -1;
		p->failed = nf;
		w->cap_failed = nc;
	}
	fl_failed *f = &p->failed[p->nfailed];
	f->path = strdup(path);
	f->error = strdup(error);
	if (!f->path || !f->error) {
		free(f->path);
		free(f->error);
		return -1;
	}
	p->nfailed++;
	return 0;
}

/* A new task (strings copied; host NULL: none). */
static int make_task(fl_task *t, const char *path, const char *label, const struct run_info *ri,
		     int with_host)
{
	memset(t, 0, sizeof(*t));
	t->size = -1;
	t->path = strdup(path);
	t->label = strdup(label);
	t->rank = rank_of(label);
	if (ri && ri->present) {
		if (with_host && ri->host)
			t->host = strdup(ri->host);
		t->has_anchor = ri->has_anchor;
		t->anchor_ns = ri->anchor_ns;
	}
	if (!t->path || !t->label || (with_host && ri && ri->present && ri->host && !t->host)) {
		task_free(t);
		return -1;
	}
	return 0;
}

/* The folder's trace (trace.gtr, else trace.gtr.partial) and its stat; NULL: none. */
static char *trace_stat(const char *dir, struct stat *st, int *oom)
{
	static const char *const NAMES[] = {"trace.gtr", "trace.gtr.partial"};
	for (size_t i = 0; i < NELEM(NAMES); i++) {
		char *p = pjoin(dir, NAMES[i]);
		if (!p) {
			*oom = 1;
			return NULL;
		}
		if (stat(p, st) == 0)
			return p;
		free(p);
	}
	return NULL;
}

/* A process folder's task (its trace, else the folder itself); st: the
 * trace's stat when found by the caller. */
static int proc_task(struct walk *w, const char *pdir, const struct run_info *ri, const char *trace,
		     const struct stat *st)
{
	int oom = 0;
	struct stat own;
	char *found = NULL;
	if (!trace) {
		found = trace_stat(pdir, &own, &oom);
		if (oom)
			return -1;
	}
	fl_task t;
	int rc = make_task(&t, trace ? trace : found ? found : pdir, basename_of(pdir), ri, 1);
	free(found);
	return rc ? rc : add_task(w, &t, st);
}

/* Names in a folder, sorted by (length in characters, name); NULL with *n 0 when unreadable. */
static size_t u8len(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static int cmp_name(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t lx = u8len(x), ly = u8len(y);
	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int list_dir(const char *p, char ***out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	DIR *d = opendir(p);
	if (!d)
		return 0;
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nv = realloc(v, nc * sizeof(*nv));
			if (!nv)
				goto oom;
			v = nv;
			cap = nc;
		}
		if (!(v[n] = strdup(e->d_name)))
			goto oom;
		n++;
	}
	closedir(d);
	gt_sort(v, n, sizeof(*v), cmp_name);
	*out = v;
	*nout = n;
	return 0;
oom:
	closedir(d);
	names_free(v, n);
	return -1;
}

static int walk(struct walk *w, const char *p, int depth);

/* A file: a trace by its name, or (given by itself) whatever it is. */
static int walk_file(struct walk *w, const char *p, int depth)
{
	const char *base = basename_of(p);
	fl_task t;
	if (!has_trace_suffix(base)) {
		if (depth != 0)
			return 0;
		return make_task(&t, p, base, NULL, 0) ? -1 : add_task(w, &t, NULL);
	}
	int gtr = !strncmp(base, "trace.gtr", 9);
	char *dir = dirname_of(p), *up = dir ? dirname_of(dir) : NULL;
	struct run_info ri;
	if (!up || read_run_json(up, &ri)) {
		free(dir);
		free(up);
		return -1;
	}
	char *label = strdup(gtr ? basename_of(dir) : base);
	free(dir);
	free(up);
	if (!label) {
		run_free(&ri);
		return -1;
	}
	for (size_t i = 0; i < NELEM(LABEL_SUFFIXES); i++)
		if (ends_with(label, LABEL_SUFFIXES[i]))
			label[strlen(label) - strlen(LABEL_SUFFIXES[i])] = '\0';
	int rc = make_task(&t, p, label, &ri, gtr);
	free(label);
	run_free(&ri);
	return rc ? rc : add_task(w, &t, NULL);
}

/* A run folder (run.json, or process folders with a trace): one task per process folder. */
static int walk_run(struct walk *w, const char *p, const struct run_info *ri, char **names, size_t n,
		    char **found, struct stat *fst)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(names[i], "samplers"))
			continue;
		char *sub = pjoin(p, names[i]);
		if (!sub)
			return -1;
		int rc = 0;
		if (found[i] || (proc_name(names[i]) && is_dir(sub)))
			rc = proc_task(w, sub, ri, found[i], found[i] ? &fst[i] : NULL);
		free(sub);
		if (rc)
			return rc;
	}
	return 0;
}

static int walk_dir(struct walk *w, const char *p, int depth)
{
	struct run_info ri;
	char **names;
	size_t n;
	if (read_run_json(p, &ri))
		return -1;
	if (list_dir(p, &names, &n)) {
		run_free(&ri);
		return -1;
	}
	char **found = calloc(n ? n : 1, sizeof(*found));
	struct stat *fst = calloc(n ? n : 1, sizeof(*fst));
	int rc = found && fst ? 0 : -1, any = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		char *sub = pjoin(p, names[i]);
		int oom = !sub;
		if (sub)
			found[i] = trace_stat(sub, &fst[i], &oom);
		free(sub);
		rc = oom ? -1 : 0;
		any |= found[i] != NULL;
	}
	if (!rc) {
		if (ri.present || any) {
			rc = walk_run(w, p, &ri, names, n, found, fst);
		} else {
			struct stat st;
			int oom = 0;
			char *own = trace_stat(p, &st, &oom);
			if (oom) {
				rc = -1;
			} else if (own || proc_name(basename_of(p))) {
				char *up = dirname_of(p);
				struct run_info pri;
				rc = !up || read_run_json(up, &pri) ? -1 : proc_task(w, p, &pri, NULL, NULL);
				if (up)
					run_free(&pri);
				free(up);
			} else if (depth < 2) {
				for (size_t i = 0; !rc && i < n; i++) {
					char *sub = pjoin(p, names[i]);
					if (!sub) {
						rc = -1;
						break;
					}
					const char *e = names[i];
					if (is_dir(sub) ||
					    (has_trace_suffix(e) &&
					     !((ends_with(e, ".json") || ends_with(e, ".json.gz")) &&
					       !looks_like_kineto(sub))))
						rc = walk(w, sub, depth + 1);
					free(sub);
				}
			}
			free(own);
		}
	}
	for (size_t i = 0; found && i < n; i++)
		free(found[i]);
	free(found);
	free(fst);
	names_free(names, n);
	run_free(&ri);
	return rc;
}

static int walk(struct walk *w, const char *p, int depth)
{
	if (is_file(p))
		return walk_file(w, p, depth);
	if (!is_dir(p))
		return add_failed(w, p, "no such file or folder");
	return walk_dir(w, p, depth);
}

int fl_plan_expand(fl_plan *p, char *const *inputs, int n)
{
	memset(p, 0, sizeof(*p));
	struct walk w = {p, 0, 0, {0}};
	int rc = 0;
	for (int i = 0; !rc && i < n; i++) {
		size_t before = p->ntasks + p->nfailed;
		char *abs = fl_abspath(inputs[i]);
		rc = abs ? walk(&w, abs, 0) : -1;
		free(abs);
		if (!rc && p->ntasks + p->nfailed == before)
			rc = add_failed(&w, inputs[i], NO_TRACE);
	}
	seen_free(&w.seen);
	if (rc)
		fl_plan_free(p);
	return rc;
}

void fl_plan_free(fl_plan *p)
{
	for (size_t i = 0; i < p->ntasks; i++)
		task_free(&p->tasks[i]);
	for (size_t i = 0; i < p->nfailed; i++) {
		free(p->failed[i].path);
		free(p->failed[i].error);
	}
	free(p->tasks);
	free(p->failed);
	memset(p, 0, sizeof(*p));
}

/* ---- batches --------------------------------------------------------------------------------- */

/* The format a batch holds one of: "gtr" when ".gtr" is in the name, else os.path.splitext's
 * extension (a name's leading dots are no extension). */
static const char *kind_of(const char *path, size_t *len)
{
	const char *base = basename_of(path);
	if (strstr(base, ".gtr")) {
		*len = 3;
		return "gtr";
	}
	const char *dot = strrchr(base, '.');
	const char *s = base;
	while (s < dot && *s == '.')
		s++;
	if (!dot || s == dot) {
		*len = 0;
		return "";
	}
	*len = strlen(dot);
	return dot;
}

struct group {
	const char *host, *kind;
	size_t kindlen;
	int *task;
	size_t n, cap;
};

int fl_plan_batches(const fl_plan *p, int workers, int max_ranks, int64_t max_bytes, int by_host,
		    fl_batch **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	size_t n = p->ntasks;
	int64_t w4 = 4 * (int64_t)(workers > 0 ? workers : 1);
	if (w4 < 1)
		w4 = 1;
	int64_t per = ((int64_t)n + w4 - 1) / w4;
	if (per > max_ranks)
		per = max_ranks;
	if (per < 1)
		per = 1;
	struct group *g = NULL;
	size_t ng = 0;
	int rc = -1;
	fl_batch *b = NULL;
	size_t nb = 0, capb = 0;
	for (size_t i = 0; i < n; i++) {
		const fl_task *t = &p->tasks[i];
		const char *host = by_host && t->host ? t->host : "";
		size_t kl;
		const char *kind = kind_of(t->path, &kl);
		size_t j = 0;
		while (j < ng &&
		       !(strcmp(g[j].host, host) == 0 && g[j].kindlen == kl && !memcmp(g[j].kind, kind, kl)))
			j++;
		if (j == ng) {
			struct group *ngr = realloc(g, (ng + 1) * sizeof(*g));
			if (!ngr)
				goto done;
			g = ngr;
			g[ng++] = (struct group){host, kind, kl, NULL, 0, 0};
		}
		if (g[j].n == g[j].cap) {
			size_t nc = g[j].cap ? g[j].cap * 2 : 8;
			int *nt = realloc(g[j].task, nc * sizeof(*nt));
			if (!nt)
				goto done;
			g[j].task = nt;
			g[j].cap = nc;
		}
		g[j].task[g[j].n++] = (int)i;
	}
	for (size_t j = 0; j < ng; j++) {
		size_t start = 0;
		int64_t size = 0;
		for (size_t k = 0; k <= g[j].n; k++) {
			int64_t bytes = 0;
			if (k < g[j].n) {
				const fl_task *t = &p->tasks[g[j].task[k]];
				struct stat st;
				bytes = t->size >= 0		  ? t->size
					: stat(t->path, &st) == 0 ? (int64_t)st.st_size
								  : 0;
			}
			if (k > start &&
			    (k == g[j].n || (int64_t)(k - start) >= per || size + bytes > max_bytes)) {
				if (nb == capb) {
					size_t nc = capb ? capb * 2 : 8;
					fl_batch *nbv = realloc(b, nc * sizeof(*nbv));
					if (!nbv)
						goto done;
					b = nbv;
					capb = nc;
				}
				b[nb].n = k - start;
				b[nb].task = malloc(b[nb].n * sizeof(int));
				if (!b[nb].task)
					goto done;
				memcpy(b[nb].task, g[j].task + start, b[nb].n * sizeof(int));
				nb++;
				start = k;
				size = 0;
			}
			size += bytes;
		}
	}
	*out = b;
	*nout = nb;
	b = NULL;
	rc = 0;
done:
	fl_batches_free(b, nb);
	for (size_t j = 0; j < ng; j++)
		free(g[j].task);
	free(g);
	return rc;
}

void fl_batches_free(fl_batch *b, size_t n)
{
	for (size_t i = 0; b && i < n; i++)
		free(b[i].task);
	free(b);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static void jstr_or_null(yajl_gen g, const char *k, const char *v)
{
	GS(g, k);
	if (v)
		GS(g, v);
	else
		yajl_gen_null(g);
}

static void jint_or_null(yajl_gen g, const char *k, int has, long long v)
{
	GS(g, k);
	if (has)
		yajl_gen_integer(g, v);
	else
		yajl_gen_null(g);
}

char *fl_plan_json(const fl_plan *p)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g)
		return NULL;
	yajl_gen_map_open(g);
	GS(g, "tasks");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < p->ntasks; i++) {
		const fl_task *t = &p->tasks[i];
		yajl_gen_map_open(g);
		jstr_or_null(g, "path", t->path);
		jstr_or_null(g, "label", t->label);
		jint_or_null(g, "rank", t->rank >= 0, t->rank);
		jstr_or_null(g, "host", t->host);
		jint_or_null(g, "anchor_ns", t->has_anchor, t->anchor_ns);
		jint_or_null(g, "size", t->size >= 0, t->size);
		jint_or_null(g, "index", 1, t->index);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "failed");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < p->nfailed; i++) {
		yajl_gen_map_open(g);
		jstr_or_null(g, "path", p->failed[i].path);
		jstr_or_null(g, "error", p->failed[i].error);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	const unsigned char *buf;
	size_t len;
	char *out = NULL;
	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok && (out = malloc(len + 1))) {
		memcpy(out, buf, len);
		out[len] = '\0';
	}
	yajl_gen_free(g);
	return out;
}

static yajl_val jget(yajl_val o, const char *k)
{
	const char *path[] = {k, NULL};
	return yajl_tree_get(o, path, yajl_t_any);
}

/* A string member (NULL: absent or null; *bad: another type). */
static char *jdup_str(yajl_val o, const char *k, int required, int *bad, int *oom)
{
	yajl_val v = jget(o, k);
	if (!v || YAJL_IS_NULL(v)) {
		*bad |= required;
		return NULL;
	}
	if (!YAJL_IS_STRING(v)) {
		*bad = 1;
		return NULL;
	}
	char *s = strdup(v->u.string);
	*oom |= !s;
	return s;
}

/* An integer member: 1 with *out set, 0 absent or null, -1 another type. */
static int jint(yajl_val o, const char *k, int64_t *out)
{
	yajl_val v = jget(o, k);
	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_INTEGER(v))
		return -1;
	*out = (int64_t)YAJL_GET_INTEGER(v);
	return 1;
}

int fl_plan_from_json(fl_plan *p, const char *json, size_t len, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	char *text = strndup(json, len);
	if (!text) {
		snprintf(err, errlen, "plan: out of memory");
		return -1;
	}
	char yerr[256];
	yajl_val root =
	    gt_json_too_deep(text, strlen(text), GT_JSON_MAX_DEPTH) ? NULL : yajl_tree_parse(text, yerr, sizeof(yerr));
	free(text);
	if (!root || !YAJL_IS_OBJECT(root)) {
		snprintf(err, errlen, "plan: not a JSON object");
		yajl_tree_free(root);
		return -1;
	}
	yajl_val tasks = jget(root, "tasks"), failed = jget(root, "failed");
	if (!YAJL_IS_ARRAY(tasks) || !YAJL_IS_ARRAY(failed)) {
		snprintf(err, errlen, "plan: \"tasks\" and \"failed\" must be lists");
		yajl_tree_free(root);
		return -1;
	}
	size_t nt = tasks->u.array.len, nf = failed->u.array.len;
	p->tasks = calloc(nt ? nt : 1, sizeof(*p->tasks));
	p->failed = calloc(nf ? nf : 1, sizeof(*p->failed));
	int oom = !p->tasks || !p->failed, bad = 0;
	for (size_t i = 0; !oom && i < nt; i++) {
		yajl_val o = tasks->u.array.values[i];
		fl_task *t = &p->tasks[i];
		bad = !YAJL_IS_OBJECT(o);
		int64_t rank = -1, size = -1, index = (int64_t)i, anchor = 0;
		if (!bad) {
			t->path = jdup_str(o, "path", 1, &bad, &oom);
			t->label = jdup_str(o, "label", 1, &bad, &oom);
			t->host = jdup_str(o, "host", 0, &bad, &oom);
			int a = jint(o, "anchor_ns", &anchor);
			bad |= jint(o, "rank", &rank) < 0 || jint(o, "size", &size) < 0 ||
			       jint(o, "index", &index) < 0 || a < 0;
			t->has_anchor = a > 0;
		}
		p->ntasks = i + 1;
		if (bad || oom) {
			if (!oom)
				snprintf(
				    err, errlen,
				    "plan: task %zu: needs a string path and label; rank, host, anchor_ns, "
				    "size and index null or of their type",
				    i);
			break;
		}
		t->rank = (long)rank;
		t->size = size;
		t->index = (int)index;
		t->anchor_ns = t->has_anchor ? anchor : 0;
	}
	int bad_task = bad;
	bad = 0;
	for (size_t i = 0; !oom && !bad_task && i < nf; i++) {
		yajl_val o = failed->u.array.values[i];
		if (!YAJL_IS_OBJECT(o)) {
			bad = 1;
			break;
		}
		p->failed[i].path = jdup_str(o, "path", 1, &bad, &oom);
		p->failed[i].error = jdup_str(o, "error", 1, &bad, &oom);
		p->nfailed = i + 1;
		if (bad)
			break;
	}
	if (bad)
		snprintf(err, errlen, "plan: failed input %zu: needs a string path and error",
			 p->nfailed ? p->nfailed - 1 : 0);
	int rc = oom || bad || bad_task ? -1 : 0;
	if (oom)
		snprintf(err, errlen, "plan: out of memory");
	yajl_tree_free(root);
	if (rc)
		fl_plan_free(p);
	return rc;
}
