/* run/run.c — one `gputap run`, from the tool stack to the summary.  See run.h. */
#include "run/run.h"

#include "core/capture.h"
#include "gpu/probe.h"
#include "tap/env.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/csvio.h"
#include "core/log.h"
#include "core/memgen.h"
#include "metrics/rmagg.h"
#include "trace/trace_io.h"
#include "liblog/libtrace.h"
#include "export/export.h"
#include "export/ofile.h"
#include "export/pcsamp.h"
#include "report/pcstable.h"
#include "report/rmtable.h"
#include "report/report.h"
#include "run/child.h"
#include "run/postrun.h"
#include "trace/rundir.h"
#include "core/sort.h"

extern char **environ;

/* Traces larger than this get a progress line while they are converted. */
#define GT_BIG_TRACE_BYTES (16ull << 20)

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void warnf(struct gt_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct gt_run *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gt_warn("%s", msg);
	if (r->nwarnings < GT_RUN_MAX_WARN)
		r->warnings[r->nwarnings++] = strdup(msg);
}

int gt_run_default_dir(const char *parent, time_t t, char *out, size_t len)
{
	struct tm tm;
	localtime_r(&t, &tm);
	char base[64];
	strftime(base, sizeof(base), "gputap-%Y%m%d-%H%M%S", &tm);
	for (int i = 1; i < 10000; i++) {
		int n = i == 1 ? snprintf(out, len, "%s/%s", parent, base) : snprintf(out, len, "%s/%s-%d", parent, base, i);
		if (n < 0 || (size_t)n >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (mkdir(out, 0755) == 0) /* the test and the claim in one step */
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

int gt_run_expand_outdir(const char *spec, char *out, size_t len, char *err, size_t errlen)
{
	size_t n = 0;
	for (const char *p = spec; *p; p++) {
		char num[32], name[256];
		const char *add = num;
		size_t alen;
		if (*p != '%') {
			num[0] = *p, num[1] = '\0';
		} else if (p[1] == '%') {
			snprintf(num, sizeof(num), "%%");
			p++;
		} else if (p[1] == 'p') {
			snprintf(num, sizeof(num), "%ld", (long)getpid());
			p++;
		} else if (p[1] == 'h') {
			if (gethostname(name, sizeof(name)) < 0)
				snprintf(name, sizeof(name), "localhost");
			name[sizeof(name) - 1] = '\0';
			add = name;
			p++;
		} else if (p[1] == 'q' && p[2] == '{' && strchr(p + 3, '}')) {
			size_t nl = (size_t)(strchr(p + 3, '}') - (p + 3));
			if (nl == 0 || nl >= sizeof(name)) {
				snprintf(err, errlen, "-o '%s': %%q{NAME} needs the name of an environment variable", spec);
				return -1;
			}
			memcpy(name, p + 3, nl);
			name[nl] = '\0';
			add = getenv(name);
			if (!add) {
				snprintf(err, errlen, "-o '%s': %s is not set in the environment (%%q{%s} is its value)", spec,
					 name, name);
				return -1;
			}
			if (!*add || strchr(add, '/')) {
				snprintf(err, errlen, "-o '%s': %s is '%s': a folder name needs a value without '/'", spec, name,
					 add);
				return -1;
			}
			p += 3 + nl;
		} else {
			snprintf(err, errlen, "-o '%s': unknown placeholder '%%%.1s' (%%q{NAME}, %%h, %%p and %%%% are known)",
				 spec, p[1] ? p + 1 : "");
			return -1;
		}
		alen = strlen(add);
		if (n + alen >= len) {
			snprintf(err, errlen, "-o '%s': the path is too long", spec);
			return -1;
		}
		memcpy(out + n, add, alen);
		n += alen;
	}
	out[n] = '\0';
	if (!n) {
		snprintf(err, errlen, "-o '': expected a directory");
		return -1;
	}
	return 0;
}

int gt_run_claim_dir(const char *dir)
{
	char p[PATH_MAX + 16];
	if (snprintf(p, sizeof(p), "%s/run.json", dir) >= (int)sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int gt_run_find_lib(const char *exe, char *out, size_t len)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", exe ? exe : "");
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		const char *const rel[] = {"libgputap.so", "../lib/libgputap.so", "../lib/gputap/libgputap.so"};
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char cand[PATH_MAX + 64], real[PATH_MAX];
			snprintf(cand, sizeof(cand), "%s/%s", dir, rel[i]);
			if (access(cand, R_OK) == 0 && realpath(cand, real)) {
				snprintf(out, len, "%s", real);
				return 0;
			}
		}
	}
	const char *env = getenv("GPUTAP_LIB");
	char real[PATH_MAX];
	if (env && *env && access(env, R_OK) == 0 && realpath(env, real)) {
		snprintf(out, len, "%s", real);
		return 0;
	}
	return -1;
}

int gt_run_scan_procs(const char *dir, struct gt_run_proc **procs)
{
	*procs = NULL;
	struct gt_rundir_proc *v;
	int n = gt_rundir_procs(dir, &v);
	if (n <= 0)
		return 0;
	if (!(*procs = calloc((size_t)n, sizeof(**procs)))) {
		free(v);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		struct gt_run_proc *pr = &(*procs)[i];
		snprintf(pr->name, sizeof(pr->name), "%s", v[i].name);
		pr->has_trace = v[i].trace[0] != 0;
		pr->partial = v[i].trace_partial; /* the trace's own totals come with its conversion */
	}
	free(v);
	return n;
}

/* What the conversion of each trace saw, into run.json's processes. */
static void procs_from_postrun(struct gt_run *r, const struct gt_postrun *pr)
{
	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t k = 0; k < pr->nprocs; k++) {
			const struct gt_postrun_proc *q = &pr->procs[k];
			struct gt_run_proc *p = &r->procs[i];
			if (strcmp(p->name, q->name) != 0 || !q->converted)
				continue;
			p->partial = q->partial || (q->flags & GT_FILE_PARTIAL) != 0;
			p->lost_records = q->lost;
			p->cupti_dropped = q->cupti_dropped;
			p->records = q->records;
			p->capture = (q->flags & GT_FILE_CAPTURE) != 0;
		}
}

/* The tool list from the options; 0, 1 (help printed) or -1 (message printed). */
static int get_tools(const struct gt_run_opts *o, struct gt_tool_list *l)
{
	char err[1024];
	memset(l, 0, sizeof(*l));
	if (o->tools && strcmp(o->tools, "help") == 0) {
		gt_tool_print_help(stdout);
		return 1;
	}
	if (o->tools && strcmp(o->tools, "none") == 0)
		return 0;
	if (o->tools) {
		if (gt_tools_parse_list(o->tools, l, err, sizeof(err)) < 0)
			goto bad;
	} else if (o->context || o->context_file) {
		char *text = NULL;
		const char *what = "--context";
		if (o->context_file) {
			size_t len;
			if (!(text = gt_read_file(o->context_file, &len))) {
				gt_error("--context-file %s: %s", o->context_file, strerror(errno));
				return -1;
			}
			what = o->context_file;
		}
		int r = gt_tools_parse_context(text ? text : o->context, what, l, err, sizeof(err));
		free(text);
		if (r < 0)
			goto bad;
	}
	if (l->n == 0 && !(o->tools || o->context || o->context_file))
		if (gt_tools_parse_list("kernel_trace", l, err, sizeof(err)) < 0)
			goto bad;
	return 0;
bad:
	gt_error("%s", err);
	return -1;
}

static int is_uint(const char *s);

/* --metrics / --metrics-mode are checked before anything runs (the names themselves by the tap, on the GPU). */
static int check_metrics_opts(const struct gt_run_opts *o)
{
	char err[512];
	struct gt_rm_list l;
	if (o->metrics && strcmp(o->metrics, "default") != 0 &&
	    gt_rm_parse_list(o->metrics, "--metrics", &l, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		return -1;
	}
	if (o->pcsamp && strcmp(o->pcsamp, "default") != 0 && strcmp(o->pcsamp, "on") != 0 &&
	    !(is_uint(o->pcsamp) && strlen(o->pcsamp) <= 2 && atoi(o->pcsamp) >= 5 && atoi(o->pcsamp) <= 31)) {
		gt_error("--pc-sampling=%s: expected a period N of 2^N cycles, 5..31 (default 17)", o->pcsamp);
		return -1;
	}
	if (o->metrics_mode && gt_rm_parse_mode(o->metrics_mode) < 0) {
		gt_error("--metrics-mode '%s': expected auto, kernel or range", o->metrics_mode);
		return -1;
	}
	return 0;
}

static const char *plain_getenv(const char *k)
{
	return getenv(k);
}

static int is_uint(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* The model column of library_trace.csv: the script for "python x.py", else the program. */
static void model_name(char **argv, char *out, size_t len)
{
	const char *p = argv[0];
	const char *b = strrchr(p, '/');
	b = b ? b + 1 : p;
	if (strncmp(b, "python", 6) == 0 && argv[1] && argv[1][0] != '-') {
		b = strrchr(argv[1], '/');
		b = b ? b + 1 : argv[1];
	}
	snprintf(out, len, "%s", b);
	char *dot = strrchr(out, '.');
	if (dot && strcmp(dot, ".py") == 0)
		*dot = '\0';
}

/* Group sampler tools that share DEVICE and SAMPLING_RATE into one thread. */
static int make_samplers(struct gt_run *r)
{
	size_t n = r->plan.nsamplers;
	if (!n)
		return 0;
	r->samplers = calloc(n, sizeof(*r->samplers));
	if (!r->samplers)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct gt_sampler_cfg *c = &r->plan.samplers[i];
		struct gt_run_sampler *g = NULL;
		for (size_t k = 0; k < r->nsamplers; k++) {
			const struct gt_sampler_cfg *c0 = &r->plan.samplers[r->samplers[k].tools[3]];
			if (strcmp(c0->device, c->device) == 0 && c0->period_s == c->period_s &&
			    r->samplers[k].ntools < 3)
				g = &r->samplers[k];
		}
		if (!g) {
			g = &r->samplers[r->nsamplers++];
			g->tools[3] = (int)i; /* slot 3 keeps the config index of the group */
		}
		g->tools[g->ntools++] = c->tool;
		g->s.outputs |= c->mode == GT_SAMPLE_POWER ? GT_SO_POWER : GT_SO_VRAM;
	}
	/* The finest period also writes gpu_samples.csv and samplers/trace.gtr. */
	size_t best = 0;
	for (size_t k = 1; k < r->nsamplers; k++)
		if (r->plan.samplers[r->samplers[k].tools[3]].period_s <
		    r->plan.samplers[r->samplers[best].tools[3]].period_s)
			best = k;
	r->samplers[best].s.outputs |= GT_SO_RICH;
	for (size_t k = 0; k < r->nsamplers; k++)
		snprintf(r->samplers[k].status, sizeof(r->samplers[k].status), "not started");
	return 0;
}

static struct gt_run_sampler *sampler_of_tool(struct gt_run *r, int tool)
{
	for (size_t k = 0; k < r->nsamplers; k++)
		for (int j = 0; j < r->samplers[k].ntools; j++)
			if (r->samplers[k].tools[j] == tool)
				return &r->samplers[k];
	return NULL;
}

static void setup_sampler(struct gt_run *r, int tool)
{
	struct gt_run_sampler *g = sampler_of_tool(r, tool);
	if (!g || g->started || strcmp(g->status, "not started") != 0)
		return;
	const struct gt_sampler_cfg *c = &r->plan.samplers[g->tools[3]];
	char names[128] = "", err[512];
	for (int j = 0; j < g->ntools; j++) {
		size_t l = strlen(names);
		snprintf(names + l, sizeof(names) - l, "%s%s", j ? ", " : "", r->plan.tools.t[g->tools[j]].def->name);
	}
	if (r->nvml_error[0]) {
		snprintf(g->status, sizeof(g->status), "not run: %s", r->nvml_error);
		warnf(r, "%s: %s; the run goes on without %s", names, r->nvml_error,
		      g->ntools > 1 ? "them" : "it");
		return;
	}
	int devs[GT_SAMPLER_MAXDEV];
	int nd = gt_sampler_parse_devices(c->device, gt_nvml_device_count(), devs, GT_SAMPLER_MAXDEV, err,
					  sizeof(err));
	if (nd < 0) {
		snprintf(g->status, sizeof(g->status), "not run: %s", err);
		warnf(r, "%s: %s; the run goes on without %s", names, err, g->ntools > 1 ? "them" : "it");
		return;
	}
	unsigned outputs = g->s.outputs;
	memset(&g->s, 0, sizeof(g->s));
	g->s.memgen = r->memgen;
	const char *et = getenv("GPUTAP_SAMPLE_EVERY_TICK"), *vf = getenv("GPUTAP_SAMPLE_VERIFY");
	g->s.every_tick = et && *et && strcmp(et, "0") != 0;
	g->s.verify = vf && *vf && strcmp(vf, "0") != 0;
	if (gt_sampler_init(&g->s, r->outdir, devs, nd, c->period_s, outputs, r->start_ns, err, sizeof(err)) < 0 ||
	    gt_sampler_start(&g->s) < 0) {
		snprintf(g->status, sizeof(g->status), "not run: %s", err);
		warnf(r, "%s: %s", names, err);
		gt_sampler_stop(&g->s);
		return;
	}
	g->started = 1;
	snprintf(g->status, sizeof(g->status), "ok");
}

static void convert_one(struct gt_run *r, const char *trace, unsigned what)
{
	char err[1024], outdir[4400];
	snprintf(outdir, sizeof(outdir), "%s", trace);
	char *slash = strrchr(outdir, '/');
	if (slash)
		*slash = '\0';
	struct stat st;
	uint64_t size = 0;
	if (stat(trace, &st) == 0)
		size = (uint64_t)st.st_size;
	else {
		char p[4400];
		snprintf(p, sizeof(p), "%s.partial", trace);
		if (stat(p, &st) == 0)
			size = (uint64_t)st.st_size;
	}
	const char *rel = trace + strlen(r->outdir) + 1;
	uint64_t t0 = now_ns();
	if (size >= GT_BIG_TRACE_BYTES)
		fprintf(stderr, "gputap: converting %s (%.0f MiB)...\n", rel, (double)size / 1048576.0);
	if (gt_export_write_all(trace, outdir, what, err, sizeof(err)) < 0)
		warnf(r, "%s", err);
	else if (size >= GT_BIG_TRACE_BYTES)
		fprintf(stderr, "gputap: converted %s in %.1f s\n", rel, (double)(now_ns() - t0) / 1e9);
}

static void postrun_warn(void *arg, const char *msg)
{
	warnf(arg, "%s", msg);
}

static void record_action(struct gt_run *r, enum gt_action_kind k, int tool)
{
	static char texts[64][96];
	if (r->nactions_done >= 64)
		return;
	snprintf(texts[r->nactions_done], sizeof(texts[0]), "%s %s", k == GT_ACT_SETUP ? "setup" : "teardown",
		 r->plan.tools.t[tool].def->name);
	r->actions_done[r->nactions_done] = texts[r->nactions_done];
	r->nactions_done++;
}

static void teardown_sampler(struct gt_run *r, int tool, int last_of_kind)
{
	(void)last_of_kind;
	struct gt_run_sampler *g = sampler_of_tool(r, tool);
	if (g && g->started) {
		gt_sampler_stop(&g->s);
		g->started = 0;
		if (g->s.outputs & GT_SO_RICH) {
			char p[4400];
			snprintf(p, sizeof(p), "%s/" GT_RUN_SAMPLERS "/" GT_PROC_TRACE, r->outdir);
			if (r->json_format)
				convert_one(r, p, r->json_format); /* counters only: no kernel tables */
		}
	}
}

/* The outermost library tool collects every library's logs at once. */
static void teardown_liblog(struct gt_run *r, int tool, int last_of_kind)
{
	(void)tool;
	if (!last_of_kind)
		return;
	char libs[4400], csv[4400], model[256], err[1024];
	snprintf(libs, sizeof(libs), "%s/" GT_RUN_LIBS, r->outdir);
	snprintf(csv, sizeof(csv), "%s/library_trace.csv", r->outdir);
	const char *jobid = strrchr(r->outdir, '/');
	jobid = jobid ? jobid + 1 : r->outdir;
	model_name(r->argv, model, sizeof(model));
	if (gt_libtrace_collect(libs, csv, jobid, model, err, sizeof(err)) < 0)
		warnf(r, "%s", err);
}

/* The tool table's set-ups and tear-downs (run/tools.h: gt_tool_ops).  The tap
 * has neither: its traces are converted in the post-run pass (run/postrun.h). */
const struct gt_tool_ops gt_tool_ops_tap = {NULL, NULL};
const struct gt_tool_ops gt_tool_ops_sampler = {setup_sampler, teardown_sampler};
const struct gt_tool_ops gt_tool_ops_liblog = {NULL, teardown_liblog};

static int prepare_dir(const struct gt_run_opts *o, struct gt_run *r)
{
	char path[PATH_MAX];
	if (o->outdir) {
		char err[PATH_MAX + 256];
		if (gt_run_expand_outdir(o->outdir, path, sizeof(path), err, sizeof(err)) < 0) {
			gt_error("%s", err);
			return 2;
		}
		struct stat st;
		char to[PATH_MAX];
		ssize_t tl;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) < 0 &&
		    (tl = readlink(path, to, sizeof(to) - 1)) >= 0) {
			to[tl] = '\0';
			gt_error("-o %s: is a symbolic link to '%s', which does not exist; create it or choose another "
				 "directory", path, to);
			return 2;
		}
		if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
			gt_error("-o %s: exists and is not a directory", path);
			return 2;
		}
		if (gt_mkdirs(path) < 0) { /* with its parents, as the help says */
			gt_error("cannot create run directory %s: %s", path, strerror(errno));
			return 125;
		}
	} else if (gt_run_default_dir(".", time(NULL), path, sizeof(path)) < 0) {
		gt_error("could not create a run directory gputap-<date>-<time> here: %s", strerror(errno));
		return 125;
	}
	if (gt_run_claim_dir(path) < 0) {
		if (errno == EEXIST)
			gt_error("-o %s: already holds a run (run.json), or another gputap run has just taken it; choose "
				 "another directory or remove it (one per rank under torchrun: -o DIR/rank%%q{RANK})", path);
		else
			gt_error("cannot create %s/run.json: %s", path, strerror(errno));
		return 2;
	}
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		gt_error("%s: %s", path, strerror(errno));
		return 125;
	}
	snprintf(r->outdir, sizeof(r->outdir), "%s", real);
	return 0;
}

/* Undo prepare_dir() when the run is refused before it starts: the claim, then the folder if that
 * left it empty (never anything else). */
static void unclaim_dir(const char *dir)
{
	char p[PATH_MAX + 16];
	struct stat st;
	snprintf(p, sizeof(p), "%s/run.json", dir);
	if (stat(p, &st) == 0 && st.st_size == 0)
		unlink(p);
	rmdir(dir);
}

static void probe_gpus(struct gt_run *r)
{
	if (gt_nvml_open(r->nvml_error, sizeof(r->nvml_error)) < 0)
		return;
	r->ngpu = gt_nvml_device_count();
	if (r->ngpu > GT_RUN_MAX_GPUS)
		r->ngpu = GT_RUN_MAX_GPUS;
	for (int i = 0; i < r->ngpu; i++)
		gt_nvml_static(i, &r->gpu[i]);
	gt_nvml_driver_version(r->driver_version, sizeof(r->driver_version));
	gt_nvml_version(r->nvml_version, sizeof(r->nvml_version));
	r->cuda_driver_version = gt_nvml_cuda_driver_version();
}

static void write_json(struct gt_run *r)
{
	char err[1024];
	if (gt_runjson_write(r, err, sizeof(err)) < 0)
		gt_warn("%s", err);
}

static void free_run(struct gt_run *r)
{
	gt_memgen_remove(r->memgen_name, r->memgen);
	gt_plan_free(&r->plan);
	free(r->exec_argv);
	free(r->samplers);
	free(r->procs);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
}

int gt_run_json_format(const char *v, unsigned *out)
{
	if (!v || strcmp(v, "json") == 0)
		*out = GT_EXPORT_JSON;
	else if (strcmp(v, "gz") == 0 || strcmp(v, "json.gz") == 0)
		*out = GT_EXPORT_JSON_GZ;
	else if (strcmp(v, "none") == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

/* Phase 1: the options that can be refused before anything exists.  0, or the exit status. */
static int check_opts(const struct gt_run_opts *o, struct gt_tool_list *tl)
{
	int t = get_tools(o, tl);
	if (t != 0)
		return t > 0 ? -1 : 2; /* -1: help printed, exit 0 */
	const char *const num_opts[][2] = {{"--buffer-mb", o->buffer_mb}, {"--hold", o->hold}};
	int st = 0;
	for (size_t i = 0; i < 2 && !st; i++)
		if (num_opts[i][1] && !is_uint(num_opts[i][1])) {
			gt_error("%s '%s': expected a whole number", num_opts[i][0], num_opts[i][1]);
			st = 2;
		}
	/* what the tap would only warn about in the command (and then record everything) is a usage
	 * error here, as --tools is */
	unsigned tbits;
	int tmetrics;
	if (!st && o->trace && gt_tap_parse_trace(o->trace, &tbits, &tmetrics) < 0) {
		gt_error("--trace '%s': expected a comma list of api, kernel, memcpy, memset, memory, nvtx, or all, "
			 "or metrics",
			 o->trace);
		st = 2;
	}
	if (!st && o->buffer_mb && (strtoull(o->buffer_mb, NULL, 10) < 1 ||
				    strtoull(o->buffer_mb, NULL, 10) > GT_TAP_MAX_BUFFER_MB)) {
		gt_error("--buffer-mb '%s': expected a whole number of MiB from 1 to %u", o->buffer_mb,
			 GT_TAP_MAX_BUFFER_MB);
		st = 2;
	}
	if (!st && o->hold && strtoull(o->hold, NULL, 10) > (unsigned long long)GT_HOLD_LIMIT) {
		gt_error("--hold '%s': expected 0 (no hold) or the launches per batch, 1 to %ld", o->hold, GT_HOLD_LIMIT);
		st = 2;
	}
	if (!st && check_metrics_opts(o) < 0)
		st = 2;
	unsigned jf;
	if (!st && gt_run_json_format(o->trace_json, &jf) < 0) {
		gt_error("--trace-json '%s': expected json, gz or none", o->trace_json);
		st = 2;
	}
	if (!st && o->capture[0]) {
		struct gt_capture cap;
		char cerr[512];
		if (gt_capture_parse(&cap, o->capture, cerr, sizeof(cerr)) < 0) {
			gt_error("--capture: %s", cerr);
			st = 2;
		}
	}
	if (st)
		gt_tools_free(tl);
	return st;
}

/* Phase 2: the run directory and the plan (the tools' order, wrappers, environment). */
static int plan_run(const struct gt_run_opts *o, struct gt_run *r, struct gt_tool_list *tl)
{
	int st = prepare_dir(o, r);
	if (st) {
		gt_tools_free(tl);
		return st;
	}
	char err[1024];
	if (gt_plan_build(&r->plan, tl, r->outdir, plain_getenv, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		unclaim_dir(r->outdir);
		return 2;
	}
	if (!getcwd(r->cwd, sizeof(r->cwd)))
		r->cwd[0] = '\0';
	gethostname(r->host, sizeof(r->host) - 1);
	struct passwd *pw = getpwuid(getuid());
	snprintf(r->user, sizeof(r->user), "%s", pw ? pw->pw_name : (getenv("USER") ? getenv("USER") : ""));
	return 0;
}

/* Phase 3: what gputap itself sets for the command, on top of the tools' environment. */
static void command_env(const struct gt_run_opts *o, struct gt_run *r)
{
	gt_plan_setenv(&r->plan, "GPUTAP_OUT", r->outdir);
	if (r->plan.has_tap) {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		if (gt_run_find_lib(exe, r->tap_lib, sizeof(r->tap_lib)) == 0) {
			gt_plan_setenv(&r->plan, "LD_PRELOAD", r->tap_lib);
			gt_plan_setenv(&r->plan, "CUDA_INJECTION64_PATH", r->tap_lib);
			gt_plan_setenv(&r->plan, "NVTX_INJECTION64_PATH", r->tap_lib);
			/* NCCL (>= 2.23) loads the tap as its profiler plugin: collectives by communicator and
			 * sequence number, what analyze --collectives and fleet match ranks by.  A plugin the
			 * user chose is kept. */
			if (!getenv("NCCL_PROFILER_PLUGIN") && !gt_plan_getenv(&r->plan, "NCCL_PROFILER_PLUGIN"))
				gt_plan_setenv(&r->plan, "NCCL_PROFILER_PLUGIN", r->tap_lib);
		} else {
			warnf(r, "libgputap.so not found next to %s, in ../lib/ or in $GPUTAP_LIB: "
				 "the command runs without the tap", exe);
		}
	}
	if (o->trace)
		gt_plan_setenv(&r->plan, "GPUTAP_TRACE", o->trace);
	if (o->buffer_mb)
		gt_plan_setenv(&r->plan, "GPUTAP_BUFFER_MB", o->buffer_mb);
	if (o->capture[0]) {
		gt_plan_setenv(&r->plan, "GPUTAP_CAPTURE", o->capture);
		if (!r->plan.has_tap)
			warnf(r, "--capture needs the tap (kernel_trace, api_trace or metrics); it has no effect");
	}
	if (o->hold) {
		gt_plan_setenv(&r->plan, "GPUTAP_HOLD", o->hold);
		if (!r->plan.has_tap)
			warnf(r, "--hold needs the tap (kernel_trace, api_trace or metrics); it has no effect");
	}
	if (o->metrics) {
		gt_plan_setenv(&r->plan, "GPUTAP_METRICS",
			       strcmp(o->metrics, "default") == 0 ? GT_RM_DEFAULT_METRICS : o->metrics);
		const char *tr = gt_plan_getenv(&r->plan, "GPUTAP_TRACE");
		if (tr && !strstr(tr, "nvtx") && strcmp(tr, "metrics") != 0) { /* ranges need the NVTX hooks */
			char trn[256];
			snprintf(trn, sizeof(trn), "%s,nvtx", tr);
			gt_plan_setenv(&r->plan, "GPUTAP_TRACE", trn);
		}
	}
	if (o->metrics_mode)
		gt_plan_setenv(&r->plan, "GPUTAP_METRICS_MODE", o->metrics_mode);
	/* per range with the kernel trace named by the user: the tap keeps kernel records and marks
	 * every value not exact (otherwise it stops them, for exact counters: docs/range-metrics.md) */
	if (o->metrics_mode && gt_rm_parse_mode(o->metrics_mode) == GT_RM_RANGE && (o->tools || o->context || o->context_file))
		for (size_t i = 0; i < r->plan.tools.n; i++)
			if (strcmp(r->plan.tools.t[i].def->name, "kernel_trace") == 0)
				gt_plan_setenv(&r->plan, "GPUTAP_METRICS_KERNEL_TRACE", "1");
	if (o->pcsamp) {
		gt_plan_setenv(&r->plan, "GPUTAP_PCSAMP", o->pcsamp);
		if (!r->plan.has_tap)
			warnf(r, "--pc-sampling needs the tap (kernel_trace, api_trace, pc_sampling); it has no effect");
	}
	if ((o->metrics || o->metrics_mode) && !r->plan.has_tap)
		warnf(r, "--metrics needs the tap (kernel_trace, api_trace, range_metrics); it has no effect");
	if (r->plan.has_liblog) {
		char libs[4400];
		snprintf(libs, sizeof(libs), "%s/" GT_RUN_LIBS, r->outdir);
		if (mkdir(libs, 0755) < 0 && errno != EEXIST)
			warnf(r, "cannot create %s: %s", libs, strerror(errno));
	}
}

/* The vram tool above 10 Hz reads memory when the tap saw an allocation or free (run/sampler.h):
 * the counter it bumps is a shared page named in GPUTAP_MEMGEN.  Without it (no tap, or the page
 * cannot be made) the sampler reads memory at 10 Hz and after every change it saw. */
static void share_memgen(struct gt_run *r)
{
	int vram = 0;
	for (size_t k = 0; k < r->nsamplers; k++)
		vram |= (r->samplers[k].s.outputs & GT_SO_VRAM) != 0;
	if (!vram || !r->plan.has_tap || !r->tap_lib[0])
		return;
	r->memgen = gt_memgen_create(r->memgen_name, sizeof(r->memgen_name));
	if (!r->memgen) {
		gt_debug("no shared allocation counter (%s): vram reads memory at 10 Hz between changes",
			 strerror(errno));
		return;
	}
	gt_plan_setenv(&r->plan, GT_MEMGEN_ENV, r->memgen_name);
}

/* Phase 4: the command line (wrappers, outermost first, then the command), the GPUs, the
 * samplers' grouping, the first run.json.  0 or -ENOMEM. */
static int prepare_command(const struct gt_run_opts *o, struct gt_run *r)
{
	r->exec_argc = r->plan.nwrapper + (size_t)o->argc;
	r->exec_argv = calloc(r->exec_argc + 1, sizeof(char *));
	if (!r->exec_argv)
		return -ENOMEM;
	for (size_t i = 0; i < r->plan.nwrapper; i++)
		r->exec_argv[i] = r->plan.wrapper[i];
	for (int i = 0; i < o->argc; i++)
		r->exec_argv[r->plan.nwrapper + (size_t)i] = o->argv[i];
	probe_gpus(r);
	/* said before the command starts: a run without a driver is an empty run folder */
	if (r->plan.has_tap && !gt_cuda_driver_version()) {
		r->no_driver = 1;
		gt_warn("no NVIDIA driver here (libcuda.so.1 cannot be loaded): the command runs, but no GPU work "
			"can be recorded");
	}
	if (make_samplers(r) < 0)
		return -ENOMEM;
	share_memgen(r);
	write_json(r);
	return 0;
}

/* Phase 5: the tools' set-ups, outermost first; a Ctrl-C stops them (and the command). */
static void setups(struct gt_run *r)
{
	for (size_t i = 0; i < r->plan.nactions; i++) {
		const struct gt_action *a = &r->plan.actions[i];
		if (a->kind != GT_ACT_SETUP)
			continue;
		if (gt_child_pending_signal())
			break; /* Ctrl-C during set-up: no more set-up, and no command */
		record_action(r, a->kind, a->tool);
		const struct gt_tool_ops *ops = gt_tool_ops(r->plan.tools.t[a->tool].def);
		if (ops && ops->setup)
			ops->setup(r, a->tool);
	}
}

/* Phase 6: the command, to its end; then the samplers stop (the samples describe the command)
 * and run.json says it finished. */
static void run_command(struct gt_run *r)
{
	char **envp = gt_env_build(environ, r->plan.env, r->plan.nenv);
	pid_t pid = -1;
	if (envp)
		pid = gt_child_start(r->exec_argv, envp, &r->exec_errno);
	else
		r->exec_errno = ENOMEM;
	if (pid > 0) {
		int ws = gt_child_wait(pid, &r->child_ru);
		r->wstatus = ws < 0 ? 0 : ws;
		r->exit_code = ws < 0 ? 1 : gt_exit_code(ws);
	} else if (r->exec_errno == EINTR && gt_child_pending_signal()) {
		int sig = gt_child_pending_signal();
		r->exit_code = 128 + sig;
		r->forwarded_signal = 0;
		warnf(r, "%s (signal %d) during set-up: the command was not started", strsignal(sig), sig);
	} else {
		r->exit_code = gt_exec_failure_code(r->exec_errno);
		if (r->exec_errno == ENOENT)
			gt_error("%s: command not found", r->exec_argv[0]);
		else
			gt_error("%s: cannot run: %s", r->exec_argv[0], strerror(r->exec_errno));
	}
	r->end_ns = now_ns();
	r->forwarded_signal = gt_child_last_forwarded();
	gt_env_free(envp);
	for (size_t k = 0; k < r->nsamplers; k++)
		if (r->samplers[k].started)
			gt_sampler_request_stop(&r->samplers[k].s);
	r->finished = 1;
	int np = gt_run_scan_procs(r->outdir, &r->procs);
	r->nprocs = np > 0 ? (size_t)np : 0;
	write_json(r);
}

/* Phase 7: the tools' tear-downs, innermost first, each told whether it is the last of its kind. */
static void teardowns(struct gt_run *r)
{
	for (size_t i = 0; i < r->plan.nactions; i++) {
		const struct gt_action *a = &r->plan.actions[i];
		if (a->kind != GT_ACT_TEARDOWN)
			continue;
		record_action(r, a->kind, a->tool);
		const struct gt_tool_def *d = r->plan.tools.t[a->tool].def;
		int last = 1;
		for (size_t j = i + 1; j < r->plan.nactions && last; j++)
			last = !(r->plan.actions[j].kind == GT_ACT_TEARDOWN &&
				 r->plan.tools.t[r->plan.actions[j].tool].def->kind == d->kind);
		const struct gt_tool_ops *ops = gt_tool_ops(d);
		if (ops && ops->teardown)
			ops->teardown(r, a->tool, last);
	}
	write_json(r);
}

static void pcs_warn(void *arg, const char *msg)
{
	warnf(arg, "%s", msg);
}

/* Phase 8: the post-run pass (each trace read once: outputs, report, summary), the range-metric
 * tables, the last run.json and the closing line. */
static void post_run(struct gt_run *r)
{
	gt_pcs_postrun(r->outdir, pcs_warn, r); /* SASS and per-kernel files first: the report reads them */
	struct gt_postrun pr = {
		.dir = r->outdir,
		.formats = r->plan.has_tap ? r->json_format | GT_EXPORT_CSV : 0,
		.report = 1,
		.summary = stderr,
		.warn = postrun_warn,
		.warn_arg = r,
	};
	gt_postrun(&pr);
	procs_from_postrun(r, &pr);
	size_t pr_traces = pr.nprocs;
	gt_info("post-run: %zu traces, %u opened", pr.nprocs, pr.trace_opens);
	gt_postrun_free(&pr);
	gt_rm_tables(stderr, r->outdir, 12, 0);
	gt_pcs_tables(stderr, r->outdir, 10, 0);
	write_json(r);
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "%s", r->outdir);
	if (strncmp(r->outdir, r->cwd, strlen(r->cwd)) == 0 && r->outdir[strlen(r->cwd)] == '/')
		snprintf(rel, sizeof(rel), "%s", r->outdir + strlen(r->cwd) + 1);
	fprintf(stderr, "gputap: run written to %s (exit status %d)%s\n", rel, r->exit_code,
		r->no_driver && !pr_traces ? ": no GPU work recorded (no NVIDIA driver)" : "");
}

int gt_run_execute(const struct gt_run_opts *o)
{
	static struct gt_run run; /* large: keep it off the stack */
	struct gt_run *r = &run;
	memset(r, 0, sizeof(*r));
	r->argv = o->argv;
	r->argc = o->argc;
	if (gt_run_json_format(o->trace_json, &r->json_format) < 0)
		r->json_format = GT_EXPORT_JSON; /* refused in check_opts before anything runs */
	r->start_ns = now_ns();
	struct gt_tool_list tl;
	int st = check_opts(o, &tl);
	if (st)
		return st < 0 ? 0 : st;
	if ((st = plan_run(o, r, &tl)) != 0)
		return st;
	command_env(o, r);
	if (prepare_command(o, r) < 0) {
		gt_error("out of memory");
		free_run(r);
		return 125;
	}
	gt_child_signals_install();
	setups(r);
	run_command(r);
	/* the command's processes are gone: the counter's name goes now (the samplers keep their mapping
	 * until the tear-down), so that a gputap stopped later leaves nothing in /dev/shm */
	gt_memgen_remove(r->memgen_name, NULL);
	r->memgen_name[0] = '\0';
	/* From here a Ctrl-C ends gputap; the traces stay for 'gputap convert'. */
	gt_child_signals_restore();
	teardowns(r);
	post_run(r);
	gt_nvml_close();
	int code = r->exit_code;
	free_run(r);
	return code;
}
