/*
 * analyze/analyze.c — gt_an_run(): recognise each input, hand it to its reader, then turn the name
 * table into the class tables and the timeline into per-GPU, per-iteration numbers.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/an_internal.h"
#include "analyze/input.h"
#include "analyze/findings.h"
#include "trace/rundir.h"
#include "core/log.h"
#include "core/sort.h"

static int has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

/* nsys summary file names, newest first */
static const char *const kern_sfx[] = {"_cuda_gpu_kern_sum.csv", "_gpukernsum.csv", NULL};
static const char *const mem_sfx[] = {"_cuda_gpu_mem_time_sum.csv", "_gpumemtimesum.csv", NULL};
static const char *const nvtx_sfx[] = {"_nvtx_gpu_proj_trace.csv", "_nvtx_sum.csv", "_nvtxppsum.csv",
				       "_nvtx_pushpop_sum.csv", NULL};

static char *with_first_existing(const char *prefix, const char *const *sfx)
{
	char p[4200];
	for (const char *const *s = sfx; *s; s++) {
		snprintf(p, sizeof(p), "%s%s", prefix, *s);
		if (access(p, F_OK) == 0)
			return strdup(p);
	}
	return NULL;
}

/* The prefix of an nsys summary CSV set from a prefix or one of its files (the suffix cut). */
static void csv_prefix(const char *in, char *prefix, size_t cap)
{
	snprintf(prefix, cap, "%s", in);
	const char *const *all[] = {kern_sfx, mem_sfx, nvtx_sfx};
	for (size_t k = 0; k < 3; k++)
		for (const char *const *s = all[k]; *s; s++)
			if (has_suffix(prefix, *s))
				prefix[strlen(prefix) - strlen(*s)] = '\0';
}

/* A CSV input: a prefix, or one of the files (its siblings are found from its prefix). */
static int read_csv_input(struct gt_an_ctx *c, const char *in, char *err, size_t errlen)
{
	char prefix[4096];
	csv_prefix(in, prefix, sizeof(prefix));
	char *kern = with_first_existing(prefix, kern_sfx);
	if (!kern) {
		snprintf(err, errlen, "%s: no such file, and no %s%s (nor an older %s%s) next to it", in, prefix,
			 kern_sfx[0], prefix, kern_sfx[1]);
		return -1;
	}
	char *mem = with_first_existing(prefix, mem_sfx), *nvtx = with_first_existing(prefix, nvtx_sfx);
	int rc = gt_an_read_nsys_csv(c, kern, nvtx, mem, err, errlen);
	free(kern);
	free(mem);
	free(nvtx);
	return rc;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The plain files (`dirs`: the folders) of `dir` (not below) that `want` takes, by name: paths
 * (malloc'd, each too) into *out.  How many, or -1 (err says why). */
static int list_entries(const char *dir, int (*want)(const char *dir, const char *name), int dirs, char ***out,
			char *err, size_t errlen)
{
	*out = NULL;
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char p[4200];
		struct stat st;
		if (e->d_name[0] == '.' || !want(dir, e->d_name))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (stat(p, &st) < 0 || !(dirs ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
			continue;
		if (n == cap) {
			char **nv = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*nv));
			if (!nv) {
				rc = -1;
				break;
			}
			names = nv;
		}
		if (!(names[n] = strdup(p))) {
			rc = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (rc < 0) {
		snprintf(err, errlen, "%s: out of memory", dir);
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return -1;
	}
	if (n)
		gt_sort(names, n, sizeof(*names), str_cmp);
	*out = names;
	return (int)n;
}

static int list_files(const char *dir, int (*want)(const char *dir, const char *name), char ***out, char *err,
		      size_t errlen)
{
	return list_entries(dir, want, 0, out, err, errlen);
}

static void free_files(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int is_kineto_name(const char *dir, const char *name)
{
	(void)dir;
	return has_suffix(name, ".json") || has_suffix(name, ".json.gz");
}

/* a trace, or a .partial whose finished twin is not beside it */
static int is_gtr_name(const char *dir, const char *name)
{
	if (has_suffix(name, ".gtr"))
		return 1;
	if (!has_suffix(name, ".gtr.partial"))
		return 0;
	char done[4200];
	snprintf(done, sizeof(done), "%s/%.*s", dir, (int)(strlen(name) - strlen(".partial")), name);
	return access(done, F_OK) != 0;
}

static int is_kern_csv_name(const char *dir, const char *name)
{
	(void)dir;
	for (const char *const *sfx = kern_sfx; *sfx; sfx++)
		if (has_suffix(name, *sfx))
			return 1;
	return 0;
}

/* A folder of PyTorch profiler (Kineto) traces, HTA's usual input: every plain *.json and *.json.gz
 * file in it (not below), by name, one rank each.  How many were read (0: none there), or -1. */
static int read_kineto_folder(struct gt_an_ctx *c, const char *dir, char *err, size_t errlen)
{
	char **names;
	int n = list_files(dir, is_kineto_name, &names, err, errlen), rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = gt_an_read_kineto(c, names[i], err, errlen);
	free_files(names, n);
	return n < 0 || rc < 0 ? -1 : n;
}

/* A folder holding gputap traces itself (`trace.gtr` copied out of a run, or several `*.gtr`): each,
 * by name, as if named; a `.partial` only where its finished twin is not there.  How many were read
 * (0: none), or -1. */
static int read_gtr_folder(struct gt_an_ctx *c, const char *dir, char *err, size_t errlen)
{
	char **names;
	int n = list_files(dir, is_gtr_name, &names, err, errlen), rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = gt_an_read_gtr(c, names[i], NULL, err, errlen);
	free_files(names, n);
	return n < 0 || rc < 0 ? -1 : n;
}

/* A folder of nsys summary CSVs (the nsys-CSV analyzer's inputs, often beside its config.json): each
 * kernel summary in it (by name) is one input, as if named, its siblings found from its prefix; a
 * GPU Performance Analyzer config there is pointed to, not read.  How many were read (0: none), or -1. */
static int read_csv_folder(struct gt_an_ctx *c, const char *dir, char *err, size_t errlen)
{
	char **names, cfg[4200];
	int n = list_files(dir, is_kern_csv_name, &names, err, errlen), rc = 0;
	snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
	if (n > 0 && access(cfg, F_OK) == 0)
		gt_an_note(c,
			   "%s: read as nsys summary CSVs; its config.json is not read (gputap analyze --config %s "
			   "takes its inputs, iterations and kernel classes)",
			   dir, cfg);
	for (int i = 0; i < n && rc == 0; i++) {
		c->cand_off = 1; /* as read_input does for a named CSV */
		rc = read_csv_input(c, names[i], err, errlen);
	}
	free_files(names, n);
	return n < 0 || rc < 0 ? -1 : n;
}

static int is_run_name(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return gt_rundir_is_run(p);
}

static int read_rundir(struct gt_an_ctx *c, const char *dir, char *err, size_t errlen);

/* A folder of gputap runs (one per machine of a job, as `gputap fleet` takes it): each run in it, by
 * name, as if each were named.  How many were read (0: none there), or -1. */
static int read_runs_folder(struct gt_an_ctx *c, const char *dir, char *err, size_t errlen)
{
	char **names;
	int n = list_entries(dir, is_run_name, 1, &names, err, errlen), rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		rc = read_rundir(c, names[i], err, errlen);
	free_files(names, n);
	return n < 0 || rc < 0 ? -1 : n;
}

/* A folder: a gputap run directory (trace/rundir.h says what one is), else a folder of gputap runs,
 * else of gputap traces, else of nsys summary CSVs, else of Kineto traces. */
static int read_rundir(struct gt_an_ctx *c, const char *dir, char *err, size_t errlen)
{
	struct gt_rundir_proc *procs;
	int n = gt_rundir_procs(dir, &procs);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	int found = 0, rc = 0;
	for (int i = 0; i < n && rc == 0; i++)
		if (procs[i].trace[0]) {
			found++;
			rc = gt_an_read_gtr(c, procs[i].trace, procs[i].name, err, errlen);
		}
	free(procs);
	if (rc < 0 || found)
		return rc;
	if (gt_rundir_is_run(dir)) {
		snprintf(err, errlen,
			 "%s: a gputap run with no <proc>/trace.gtr in it: no process of the command used CUDA, or "
			 "nothing could be recorded (no NVIDIA driver?): nothing to analyze",
			 dir);
		return -1;
	}
	int k = read_runs_folder(c, dir, err, errlen);
	if (k != 0)
		return k > 0 ? 0 : -1;
	k = read_gtr_folder(c, dir, err, errlen);
	if (k != 0)
		return k > 0 ? 0 : -1;
	k = read_csv_folder(c, dir, err, errlen);
	if (k != 0)
		return k > 0 ? 0 : -1;
	k = read_kineto_folder(c, dir, err, errlen);
	if (k == 0)
		snprintf(err, errlen,
			 "%s: not a gputap run directory (no run.json, no <proc>/trace.gtr), no gputap runs, traces "
			 "or nsys summary CSVs, and no PyTorch profiler traces (*.json, *.json.gz) in it",
			 dir);
	return k > 0 ? 0 : -1;
}

static int run_nsys_export(struct gt_an_ctx *c, const char *rep, char *err, size_t errlen)
{
	const char *path = getenv("PATH");
	int found = 0;
	if (path) {
		char *dup = strdup(path), *save = NULL;
		for (char *d = dup ? strtok_r(dup, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
			char p[4200];
			snprintf(p, sizeof(p), "%s/nsys", d);
			if (access(p, X_OK) == 0) {
				found = 1;
				break;
			}
		}
		free(dup);
	}
	if (!found) {
		snprintf(err, errlen,
			 "%s: reading an .nsys-rep needs Nsight Systems' 'nsys' on PATH, and there is none; run "
			 "'nsys export --type sqlite %s' where nsys is installed and analyze the .sqlite file",
			 rep, rep);
		return -2;
	}
	char tmpl[] = "/tmp/gputap-nsys-XXXXXX";
	if (!mkdtemp(tmpl)) {
		snprintf(err, errlen, "cannot create a temporary folder: %s", strerror(errno));
		return -1;
	}
	char out[256], cmd[9000];
	snprintf(out, sizeof(out), "%s/report.sqlite", tmpl);
	/* quote the report path for the shell */
	char q[8200];
	size_t o = 0;
	q[o++] = '\'';
	for (const char *s = rep; *s && o + 5 < sizeof(q); s++) {
		if (*s == '\'') {
			memcpy(q + o, "'\\''", 4);
			o += 4;
		} else {
			q[o++] = *s;
		}
	}
	q[o++] = '\'';
	q[o] = '\0';
	snprintf(cmd, sizeof(cmd), "nsys export --type sqlite --force-overwrite true -o '%s' %s >/dev/null 2>&1", out, q);
	int st = system(cmd);
	int rc;
	if (st != 0 || access(out, R_OK) != 0) {
		snprintf(err, errlen, "%s: 'nsys export --type sqlite' failed (status %d)", rep, st);
		rc = -1;
	} else {
		rc = gt_an_read_sqlite(c, out, err, errlen);
		if (rc == 0 && gt_an_label(c, c->nsources - 1, gt_an_base_name(rep), rep) < 0) {
			snprintf(err, errlen, "%s: out of memory", rep);
			rc = -1;
		}
	}
	unlink(out);
	rmdir(tmpl);
	return rc;
}

static int read_input(struct gt_an_ctx *c, const char *in, char *err, size_t errlen)
{
	struct stat st;
	if (stat(in, &st) == 0 && S_ISDIR(st.st_mode))
		return read_rundir(c, in, err, errlen);
	if (has_suffix(in, ".gtr") || has_suffix(in, ".gtr.partial"))
		return gt_an_read_gtr(c, in, NULL, err, errlen);
	if (has_suffix(in, ".sqlite") || has_suffix(in, ".db"))
		return gt_an_read_sqlite(c, in, err, errlen);
	if (has_suffix(in, ".nsys-rep") || has_suffix(in, ".qdrep"))
		return run_nsys_export(c, in, err, errlen);
	if (has_suffix(in, ".json") || has_suffix(in, ".json.gz") || has_suffix(in, ".pt.trace.json"))
		return gt_an_read_kineto(c, in, err, errlen);
	if (has_suffix(in, ".csv") || access(in, F_OK) != 0) {
		c->cand_off = 1; /* summaries: the ranges' counts come from rows, read again for the pick */
		return read_csv_input(c, in, err, errlen);
	}
	/* an unknown file: sniff its first bytes */
	FILE *f = fopen(in, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", in, strerror(errno));
		return -1;
	}
	unsigned char b[16] = {0};
	size_t n = fread(b, 1, sizeof(b), f);
	fclose(f);
	if (n >= 8 && memcmp(b, "GPUTAPTR", 8) == 0)
		return gt_an_read_gtr(c, in, NULL, err, errlen);
	if (n >= 15 && memcmp(b, "SQLite format 3", 15) == 0)
		return gt_an_read_sqlite(c, in, err, errlen);
	size_t bom = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;
	if (n >= 2 && ((b[0] == 0x1f && b[1] == 0x8b) || b[bom] == '{' || b[bom] == '['))
		return gt_an_read_kineto(c, in, err, errlen);
	snprintf(err, errlen, "%s: not a format gputap analyze reads (nsys CSV/SQLite/.nsys-rep, Kineto JSON, "
			      "gputap run directory or trace.gtr)", in);
	return -1;
}

/* ---- from names to tables ---- */

static int name_time_cmp(const void *a, const void *b)
{
	const struct gt_name *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static struct gt_an_stat *stat_find(struct gt_an_stat **v, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].name, name) == 0)
			return &(*v)[i];
	struct gt_an_stat *nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return NULL;
	*v = nv;
	memset(&nv[*n], 0, sizeof(nv[*n]));
	if (!(nv[*n].name = strdup(name)))
		return NULL;
	return &nv[(*n)++];
}

static void stat_add(struct gt_an_stat *s, double t, uint64_t n, uint64_t div)
{
	s->time_ns += t;
	s->count += n;
	s->time_per_iter_ns += t / (double)div;
	s->count_per_iter += n / div;
}

static int summarize(struct gt_an_ctx *c, struct gt_an_result *r)
{
	const struct gt_an_map *m = c->map;
	uint64_t div = (uint64_t)r->iters * (uint64_t)r->gpus;
	if (div == 0)
		div = 1;
	size_t nc = gt_an_map_nclasses(m);
	r->classes = calloc(nc, sizeof(*r->classes));
	if (!r->classes)
		return -1;
	for (size_t i = 0; i < nc; i++)
		if (!(r->classes[i].name = strdup(gt_an_map_class(m, i))))
			return -1;
	r->nclasses = nc;
	size_t namb = 0;
	const char *amb_name = NULL, *ak1 = NULL, *ak2 = NULL;
	for (size_t i = 0; i < c->names.n; i++) {
		const struct gt_name *e = &c->names.v[i];
		if (e->kind == GT_NK_MEMOP) {
			struct gt_an_stat *s = stat_find(&r->memops, &r->nmemops, e->name);
			if (!s)
				return -1;
			stat_add(s, e->time_ns, e->count, div);
			continue;
		}
		if (e->cat == GT_CAT_COMM) {
			char coll[128];
			gt_an_nccl_collective(e->name, coll, sizeof(coll));
			struct gt_an_stat *s = stat_find(&r->nccl, &r->nnccl, coll);
			if (!s)
				return -1;
			stat_add(s, e->time_ns, e->count, div);
			r->nccl_time_ns += e->time_ns;
			r->nccl_count += e->count;
			r->nccl_time_per_iter_ns += e->time_ns / (double)div;
			r->nccl_count_per_iter += e->count / div;
			continue;
		}
		const char *k1, *k2;
		size_t ci = gt_an_map_classify(m, e->name, &k1, &k2);
		if (k1 && namb++ == 0) {
			amb_name = e->name;
			ak1 = k1;
			ak2 = k2;
		}
		stat_add(&r->classes[ci], e->time_ns, e->count, div);
	}
	for (size_t i = 0; i < r->nclasses; i++) {
		r->kernel_time_ns += r->classes[i].time_ns;
		r->kernel_time_per_iter_ns += r->classes[i].time_per_iter_ns;
		r->kernel_count += r->classes[i].count;
		r->kernel_count_per_iter += r->classes[i].count_per_iter;
	}
	if (namb && !c->default_map) /* the default map's order is its documented rule */
		gt_an_note(c,
			   "%zu kernel name(s) match keys of two classes; the first key in map order wins, e.g. "
			   "\"%.80s\" matches \"%s\" and \"%s\"",
			   namb, amb_name, ak1, ak2);
	return 0;
}

void gt_an_free(struct gt_an_result *r)
{
	if (!r)
		return;
	gt_fd_list_free(r->findings);
	struct gt_an_stat *tabs[] = {r->classes, r->nccl, r->memops};
	size_t ns[] = {r->nclasses, r->nnccl, r->nmemops};
	for (int t = 0; t < 3; t++) {
		for (size_t i = 0; i < ns[t]; i++)
			free(tabs[t][i].name);
		free(tabs[t]);
	}
	for (size_t i = 0; i < r->ngpu; i++)
		free(r->gpu[i].iters);
	for (size_t i = 0; i < r->nstreams; i++)
		free(r->streams[i].queue_series);
	free(r->streams);
	for (size_t i = 0; i < r->nkernels; i++)
		free(r->kernels[i].name);
	free(r->kernels);
	for (size_t i = 0; i < r->nmembw; i++) {
		free(r->membw[i].series);
		free(r->membw[i].peak_series);
	}
	free(r->membw);
	for (size_t i = 0; i < r->niterk; i++)
		free(r->iterk[i].name);
	free(r->iterk);
	free(r->gpu);
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	free(r->colls);
	for (size_t i = 0; i < r->ncoll_labels; i++)
		free(r->coll_labels[i]);
	free(r->coll_labels);
	free(r->title);
	free(r->nvtx_tag);
	free(r);
}

/* Inputs (processes) without any GPU work have no row: say so once, only when asked for detail
 * (a launcher such as torchrun has the tap preloaded but does no GPU work: not worth a warning). */
static void report_skipped(struct gt_an_ctx *c)
{
	if (!c->progress && gt_log_level < GT_LOG_INFO)
		return;
	char list[512] = "";
	size_t len = 0;
	int n = 0;
	for (int s = 0; s < c->nsources; s++) {
		int any = 0;
		for (size_t i = 0; i < c->tl.ngpus && !any; i++)
			any = c->tl.gpus[i].source == s;
		if (any)
			continue;
		const char *lab = (size_t)s < c->tl.nlabels && c->tl.labels[s] ? c->tl.labels[s] : "?";
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", n ? ", " : "", lab);
		n++;
	}
	if (n)
		fprintf(stderr, "gputap: %d input(s) with no GPU work, left out of the per-GPU tables: %s\n", n, list);
}

/* ---- one analysis, phase by phase ---- */

/* The context of one analysis from its options; `keep_cand`: keep the ranges that may become the
 * iterations while reading.  0, or -1 with err. */
static int ctx_open(struct gt_an_ctx *c, const struct gt_an_opts *o, int keep_cand, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	c->tag = o->nvtx_tag && o->nvtx_tag[0] ? o->nvtx_tag : NULL;
	c->tag_is_profiler_step = c->tag == NULL;
	c->tag_is_windows = c->tag && strcmp(c->tag, GT_AN_WINDOWS_TAG) == 0;
	c->progress = o->progress;
	c->cand_off = !keep_cand || o->csv_kern;
	gt_names_init(&c->cand_names);
	gt_names_init(&c->names);
	gt_names_init(&c->seen);
	if ((o->collectives && !(c->colls = gt_colls_new())) || (o->findings && !(c->fd = gt_fd_new())) ||
	    gt_tl_init(&c->tl, 0) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->map = o->map;
	if (!c->map) {
		if (gt_an_map_default(&c->default_map, err, errlen) < 0)
			return -1;
		c->map = c->default_map;
	}
	return 0;
}

static void ctx_close(struct gt_an_ctx *c)
{
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	for (size_t i = 0; i < c->npaths; i++)
		free(c->paths[i]);
	free(c->paths);
	gt_an_map_free(c->default_map);
	gt_names_free(&c->names);
	gt_names_free(&c->seen);
	gt_names_free(&c->cand_names);
	free(c->cand);
	gt_tl_free(&c->tl);
	gt_colls_free(c->colls);
	gt_fd_free(c->fd);
}

/* Every input into the context (the config's nsys CSVs first); each name's ranges per input into
 * `seen_all`.  0, or a reader's negative status with err. */
/* Whether inputs[i] is a file of an nsys summary CSV set one of inputs[0..i) already names (a kernel,
 * memory or NVTX summary of the same prefix). */
static int csv_set_named_before(const char *const *inputs, int i)
{
	if (!has_suffix(inputs[i], ".csv"))
		return 0;
	char a[4096], b[4096];
	csv_prefix(inputs[i], a, sizeof(a));
	if (!strcmp(a, inputs[i]))
		return 0; /* no set's suffix: a file of its own */
	for (int j = 0; j < i; j++) {
		if (!has_suffix(inputs[j], ".csv"))
			continue;
		csv_prefix(inputs[j], b, sizeof(b));
		if (!strcmp(a, b))
			return 1;
	}
	return 0;
}

static int read_inputs(struct gt_an_ctx *c, const char *const *inputs, int ninputs, struct gt_names *seen_all,
		       char *err, size_t errlen)
{
	const struct gt_an_opts *o = c->o;
	if (o->csv_kern) {
		if (gt_an_read_nsys_csv(c, o->csv_kern, o->csv_nvtx, o->csv_mem, err, errlen) < 0)
			return -1;
		if (o->csv_nvtx && c->has_nvtx)
			gt_an_input_done(c, seen_all, o->csv_nvtx, 0);
	}
	for (int i = 0; i < ninputs; i++) {
		if (csv_set_named_before(inputs, i))
			continue; /* `*.csv`: the set's files name it once each; it is read once */
		uint64_t m0 = c->nvtx_count;
		int k = read_input(c, inputs[i], err, errlen);
		if (k < 0)
			return k;
		gt_an_input_done(c, seen_all, inputs[i], m0);
	}
	return 0;
}

/* Nothing to analyze is an error naming the input, never a table of zeros (which would read as "the
 * GPU did nothing").  1 (err says why) when no op was read, else 0. */
static int no_gpu_work(const struct gt_an_ctx *c, const char *const *inputs, int ninputs, char *err, size_t errlen)
{
	const struct gt_an_opts *o = c->o;
	uint64_t nops = 0;
	for (size_t i = 0; i < c->names.n; i++)
		nops += c->names.v[i].count;
	if (nops)
		return 0;
	const char *why = NULL; /* a reader's own account (a Kineto trace lists its categories) */
	for (size_t i = 0; i < c->nnotes && !why && ninputs == 1; i++)
		if (strstr(c->notes[i], "no GPU activity"))
			why = c->notes[i];
	if (why)
		snprintf(err, errlen, "%s", why);
	else if (ninputs == 1 || (o->csv_kern && ninputs == 0))
		snprintf(err, errlen, "%s: no GPU activity: no kernel, memcpy or memset in it: nothing to analyze",
			 ninputs ? inputs[0] : o->csv_kern);
	else
		snprintf(err, errlen, "no GPU activity: no kernel, memcpy or memset in any of the %d inputs: "
				      "nothing to analyze", ninputs + (o->csv_kern != NULL));
	return 1;
}

/* With no tag, no --iters and no iteration range read: the default range into `pick` ("" when there
 * is none).  When its ranges were kept while reading they become the iterations now, the tag then
 * `picked` (which outlives the analysis).  1: the caller reads again with `pick`; 0: go on; -1: out
 * of memory (err says). */
static int pick_range(struct gt_an_ctx *c, const struct gt_names *seen_all, char *pick, size_t picklen,
		      char *picked, size_t pickedlen, char *err, size_t errlen)
{
	const struct gt_an_opts *o = c->o;
	const int none = !c->tag && !c->nvtx_count && !o->iters && !o->csv_kern;
	/* several capture windows: the units the user chose; else the range that repeats */
	const char *d = none && c->windows_seen >= 2 ? GT_AN_WINDOWS_TAG : none ? gt_an_default_range(seen_all) : NULL;
	snprintf(pick, picklen, "%s", d ? d : "");
	if (d && strcmp(d, GT_AN_WINDOWS_TAG) != 0 && !c->cand_off && strlen(d) < pickedlen) {
		/* the ranges were kept while reading: no second read */
		snprintf(picked, pickedlen, "%s", d);
		if (gt_an_apply_cand(c, picked) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		c->tag = picked;
		c->tag_is_profiler_step = 0;
	} else if (d) { /* the caller runs again with it */
		return 1;
	}
	if (!c->tag && !c->nvtx_count && !o->iters && !o->csv_kern)
		gt_an_note(c, "no iterations: no ProfilerStep#N range and no NVTX range that repeats in an "
			      "input; the tables cover the whole run (--nvtx TAG or --iters N sets iterations)");
	return 0;
}

/* How many iterations and GPUs the per-iteration columns divide by, and where the iterations come
 * from.  Returns the most iteration ranges of one source (0: none). */
static size_t count_iterations(const struct gt_an_ctx *c, struct gt_an_result *r)
{
	const struct gt_an_opts *o = c->o;
	size_t max_ranges = 0;
	if (c->tl.nranges) {
		size_t *per = calloc((size_t)c->nsources + 1, sizeof(size_t));
		if (per) {
			for (size_t i = 0; i < c->tl.nranges; i++)
				if (c->tl.ranges[i].source <= c->nsources && ++per[c->tl.ranges[i].source] > max_ranges)
					max_ranges = per[c->tl.ranges[i].source];
			free(per);
		}
	}
	if (o->iters > 0) {
		r->iters = o->iters;
		snprintf(r->iter_source, sizeof(r->iter_source), "%s", o->csv_kern ? "config" : "--iters");
	} else if (max_ranges) {
		r->iters = (int)max_ranges;
		snprintf(r->iter_source, sizeof(r->iter_source), "%s",
			 !c->tag ? "profiler-step" : c->tag_is_windows ? "capture-windows" : "nvtx");
	} else if (!c->has_tl && c->nvtx_count) {
		r->iters = (int)c->nvtx_count;
		snprintf(r->iter_source, sizeof(r->iter_source), "nvtx");
	} else {
		r->iters = 1;
		snprintf(r->iter_source, sizeof(r->iter_source), "none");
	}
	r->gpus = o->gpus > 0 ? o->gpus : (c->has_tl && c->tl.ngpus ? (int)c->tl.ngpus : 1);
	return max_ranges;
}

/* The sweep of the timeline (inputs with one): per GPU and iteration, the per-op analyses, the
 * collectives.  0, or -1 with err. */
static int finish_timeline(struct gt_an_ctx *c, struct gt_an_result *r, size_t max_ranges, char *err, size_t errlen)
{
	const struct gt_an_opts *o = c->o;
	c->tl.names = &c->names;
	c->tl.launched_only = o->launched_only;
	c->tl.without_last_step = o->without_last_step;
	c->tl.ranges_are_steps = !c->tag;
	if (!o->no_detail && !(c->tl.dt = gt_dt_new(o, c->tl.ngpus, &c->names))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->tl.fd = c->fd;
	if (c->tl.launches_past_sources)
		gt_an_note(c, "%llu API calls of the traces past the 65,535th are left out of the launch statistics "
			      "and of the NCCL collectives' matching: analyze at most 65,535 traces at once (gputap "
			      "fleet takes any number)",
			   (unsigned long long)c->tl.launches_past_sources);
	if (gt_tl_finish(&c->tl, r, max_ranges ? 0 : o->iters, err, errlen) < 0)
		return -1;
	/* nsys sorts kernels by total time; do the same for names read from timelines (after the
	 * sweep: the ops refer to the names by index) */
	gt_sort(c->names.v, c->names.n, sizeof(*c->names.v), name_time_cmp);
	r->by_launch_event = c->tl.by_launch_event;
	r->by_launch_range = c->tl.by_launch_range;
	c->tl.hta.sync_events = c->hta_sync;
	c->tl.hta.cpu_stream_events = c->hta_cpu_stream;
	r->hta = c->tl.hta;
	r->launched_only = o->launched_only;
	r->all_rows = o->all_rows;
	r->without_last_step = o->without_last_step;
	r->has_timeline = 1;
	r->ops_by_launch = c->tl.by_launch;
	r->ops_outside = c->tl.outside;
	r->ops_by_time = c->tl.by_time;
	if (c->tl.nvtx_projected)
		c->nvtx_total_ns = c->tl.nvtx_total_ns;
	if (c->colls && gt_colls_finish(c->colls, &c->tl, r) < 0) {
		snprintf(err, errlen, "%s", c->tl.err[0] ? c->tl.err : "out of memory");
		return -1;
	}
	report_skipped(c);
	return 0;
}

/* The class tables, the NVTX figures, the title and the findings into r.  0, or -1 with err. */
static int fill_result(struct gt_an_ctx *c, const char *const *inputs, int ninputs, struct gt_an_result *r,
		       char *err, size_t errlen)
{
	const struct gt_an_opts *o = c->o;
	snprintf(r->nvtx_time, sizeof(r->nvtx_time), "%s",
		 c->tl.nvtx_projected == 1 ? "gpu-projection" : c->tl.nvtx_projected == 2 ? "mixed" : "cpu-range");
	if (summarize(c, r) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->has_mem = c->has_mem;
	r->has_nvtx = c->has_nvtx;
	r->nvtx_count = c->nvtx_count;
	r->nvtx_total_ns = c->nvtx_total_ns;
	r->nvtx_tag = strdup(c->tag ? c->tag : "ProfilerStep#N");
	r->title = strdup(o->title ? o->title : ninputs > 0 ? gt_an_base_name(inputs[0]) : "nsys");
	if (c->has_nvtx && c->nvtx_count && !c->has_tl && (uint64_t)r->iters != c->nvtx_count)
		gt_an_note(c, "%llu NVTX ranges \"%s\" but %d iterations: per-iteration numbers may be off",
			   (unsigned long long)c->nvtx_count, r->nvtx_tag, r->iters);
	if (c->fd && ninputs == 1) /* a run directory's GPUs (run.json) */
		gt_fd_rundir(c->fd, inputs[0]);
	if (o->findings &&
	    !(r->findings = c->has_tl ? gt_fd_finish(c->fd, r)
				      : gt_fd_none("the input has no timeline (nsys summary CSVs): no gaps, calls or copies"))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (r->findings && ninputs == 1) /* a run's per-kernel counters (findings_counters.c) */
		gt_fd_counters(r->findings, r, inputs[0]);
	r->notes = c->notes;
	r->nnotes = c->nnotes;
	c->notes = NULL;
	c->nnotes = 0;
	return 0;
}

/* One analysis.  `pick` (when not NULL): with no tag, no --iters and no iteration range found, the
 * default range to run again with ("" when there is none). */
static int an_run(const char *const *inputs, int ninputs, const struct gt_an_opts *o, struct gt_an_result **out,
		  char *err, size_t errlen, char *pick, size_t picklen)
{
	struct gt_an_ctx c;
	struct gt_names seen_all;
	char picked[1024] = ""; /* the range picked at the end of the read, when its ranges were kept */
	gt_names_init(&seen_all);
	int rc = -1;
	memset(&c, 0, sizeof(c));
	struct gt_an_result *r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (ctx_open(&c, o, pick != NULL, err, errlen) < 0)
		goto out;
	if ((rc = read_inputs(&c, inputs, ninputs, &seen_all, err, errlen)) < 0)
		goto out;
	rc = -1;
	if (no_gpu_work(&c, inputs, ninputs, err, errlen))
		goto out;
	if (pick && (rc = pick_range(&c, &seen_all, pick, picklen, picked, sizeof(picked), err, errlen)) != 0) {
		rc = rc > 0 ? 0 : -1; /* 1: the caller reads again, with no result */
		goto out;
	}
	rc = -1;
	size_t max_ranges = count_iterations(&c, r);
	if (c.has_tl && finish_timeline(&c, r, max_ranges, err, errlen) < 0)
		goto out;
	if (fill_result(&c, inputs, ninputs, r, err, errlen) < 0)
		goto out;
	*out = r;
	r = NULL;
	rc = 0;
out:
	ctx_close(&c);
	gt_names_free(&seen_all);
	gt_an_free(r);
	return rc;
}

int gt_an_run(const char *const *inputs, int ninputs, const struct gt_an_opts *o, struct gt_an_result **out,
	      char *err, size_t errlen)
{
	char pick[1024];
	*out = NULL;
	pick[0] = '\0';
	int rc = an_run(inputs, ninputs, o, out, err, errlen, pick, sizeof(pick));
	if (rc < 0 || !pick[0])
		return rc;
	/* No ProfilerStep#N: the range that repeats and covers the most time marks the iterations.  Its
	 * ranges were kept while reading (then *out is set); else (capture windows, summaries, too many
	 * ranges) the inputs are read once more. */
	if (!*out) {
		struct gt_an_opts o2 = *o;
		o2.nvtx_tag = pick;
		rc = an_run(inputs, ninputs, &o2, out, err, errlen, NULL, 0);
		if (rc < 0)
			return rc;
	}
	struct gt_an_result *r = *out;
	char **n = realloc(r->notes, (r->nnotes + 1) * sizeof(*n));
	if (!n)
		return 0;
	r->notes = n;
	memmove(n + 1, n, r->nnotes * sizeof(*n));
	char buf[1400];
	if (strcmp(pick, GT_AN_WINDOWS_TAG) == 0)
		snprintf(buf, sizeof(buf),
			 "no ProfilerStep#N range: iterations are the %llu capture windows of the trace (gputap run "
			 "--capture); --nvtx TAG chooses an NVTX range instead",
			 (unsigned long long)r->nvtx_count);
	else
		snprintf(buf, sizeof(buf),
			 "no ProfilerStep#N range: iterations are the NVTX range \"%s\" (%llu ranges), the range that "
			 "repeats and covers the most time; --nvtx TAG chooses another",
			 pick, (unsigned long long)r->nvtx_count);
	if ((n[0] = strdup(buf)))
		r->nnotes++;
	else
		memmove(n, n + 1, r->nnotes * sizeof(*n));
	return 0;
}
