/*
 * gputap fleet — the ranks of a job reduced to one answer (fleet/fleet.h does the work).
 *
 * On this machine without -o the command is C only: the plan, --workers analyzer processes at a time
 * (threads wait for them), the reduction and the text.  With -o (Parquet files, report.html) or a
 * Dask cluster it runs the Python package (`python3 -m gputap.fleet`), which calls this command
 * back for the parts in C: `--plan` (the tasks), `--task` (one batch's rows, on a worker),
 * `--reduce PLAN` (the rows of every batch on stdin) and `--result` (all of it on this machine);
 * docs/fleet.md describes them.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "core/csvio.h" /* gt_read_file */
#include "core/log.h"
#include "fleet/fleet.h"
#include "metrics/rmcache.h" /* gputap's cache folder */

const char cmd_fleet_help[] =
	"NAME\n"
	"    gputap fleet - analyse the ranks of a large job at once, on this machine or a Dask cluster\n"
	"\n"
	"SYNOPSIS\n"
	"    gputap fleet [-o DIR] [--scheduler ADDR | --scheduler-file F] [--workers N] [--nvtx TAG]\n"
	"                 [--quiet] INPUT...\n"
	"\n"
	"DESCRIPTION\n"
	"    Analyses the ranks on this machine (--workers analyzer processes at a time, by default;\n"
	"    without -o gputap does it all, no Python) or on a Dask cluster (an existing scheduler\n"
	"    with --scheduler or --scheduler-file, or the one named by DASK_SCHEDULER_ADDRESS unless\n"
	"    --workers is given); each task runs one\n"
	"    'gputap analyze' over a few ranks of one machine, on the worker that can read their\n"
	"    files, so memory per worker is bounded by the largest rank.  The results come back as\n"
	"    rows of binary columns and are reduced, in C, into: the stragglers\n"
	"    (for each rank, how long the others waited for it alone in collectives, in total and\n"
	"    per iteration, whether its lateness is consistent or one-off, and its cause: compute,\n"
	"    memory copies, host/launch or data loading, or waiting for rank N when it passes on\n"
	"    another's lateness (a pipeline stage, a process group's partner); costliest first by\n"
	"    what it costs every step); for each collective and iteration who was late and by how\n"
	"    much, with the message size; per rank busy, idle, compute and communication (the\n"
	"    numbers of 'gputap analyze'); each machine's clock offset, fitted on the collectives'\n"
	"    common completion.  Collectives are matched across ranks by communicator and sequence\n"
	"    number from NCCL's profiler plugin (sends and receives by their pair), else the trace's\n"
	"    arguments, else by order; the output says which.  Progress goes to stderr; a rank whose\n"
	"    files are missing or broken is named and left out, a partial trace is named and left\n"
	"    out of the statistics, a process without GPU work (a launcher) is skipped.\n"
	"\n"
	"    INPUT: gputap run folders (one task per <proc>), rank folders, trace.gtr files,\n"
	"    PyTorch-profiler traces (.json, .json.gz), nsys exports (.sqlite, .nsys-rep), or folders\n"
	"    holding these.\n"
	"\n"
	"OPTIONS\n"
	"    -o, --output DIR       write ranks.parquet, iterations.parquet, collectives.parquet,\n"
	"                           summary.json, summary.txt and report.html into DIR\n"
	"    --scheduler ADDR       an existing Dask scheduler, e.g. tcp://head:8786\n"
	"    --scheduler-file F     the scheduler file of an existing Dask cluster\n"
	"    --workers N            analyzer processes at a time on this machine\n"
	"                           (default: min(4, CPUs)); given, it wins over DASK_SCHEDULER_ADDRESS\n"
	"    --nvtx TAG             the NVTX range that marks one iteration (as 'gputap analyze --nvtx')\n"
	"    --gputap PATH          the gputap command the workers run (default: this one)\n"
	"    --quiet                no progress on stderr\n"
	"    -h, --help             this text\n"
	"\n"
	"    The text summary goes to standard output.  docs/fleet.md defines every number and column.\n"
	"\n"
	"REQUIREMENTS\n"
	"    On this machine without -o: gputap alone (no Python).  With -o or a Dask cluster: the Python\n"
	"    package with its fleet extra: pip install './python[fleet]' (dask.distributed, numpy,\n"
	"    pyarrow, pandas), on this machine and on every worker; gputap on each worker's PATH (or\n"
	"    GPUTAP).  GPUTAP_PYTHON names the Python interpreter; the 'gputap' command pip installs\n"
	"    sets it to its own interpreter; otherwise the package's own interpreter when this binary\n"
	"    is the one inside an installed package, else python3 from PATH.\n"
	"\n"
	"EXIT STATUS\n"
	"    0; 1 when no rank could be analysed, the cluster was lost (no worker left for\n"
	"    GPUTAP_FLEET_LOST_AFTER seconds, 60 by default, or the scheduler gone) or the Python\n"
	"    package is missing; 2 for a usage error.\n"
	"\n"
	"EXAMPLES\n"
	"    gputap fleet -o fleet-out job/node*/\n"
	"    gputap fleet --scheduler tcp://head:8786 -o out /shared/job/rank*.json.gz\n";

/* The repository's python/ folder next to this binary (build/gputap -> ../python), for running
 * from a build tree without installing the package; NULL if there is none. */
static int package_dir(const char *exe, char *buf, size_t len)
{
	char d[PATH_MAX];
	snprintf(d, sizeof(d), "%s", exe);
	char *slash = strrchr(d, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	const char *tries[] = {"/../python", "/../../python", "/../share/gputap/python"};
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		char p[PATH_MAX + 64];
		struct stat st;
		snprintf(p, sizeof(p), "%s%s/gputap/fleet/__main__.py", d, tries[i]);
		if (stat(p, &st) == 0) {
			snprintf(buf, len, "%s%s", d, tries[i]);
			return 0;
		}
	}
	return -1;
}

/* The interpreter of the Python package this binary was installed with: pip puts it in
 * <prefix>/lib/pythonX.Y/site-packages/gputap/_bin/gputap, and that prefix's bin/python3 is the
 * interpreter that has the package (a venv's, whichever python3 comes first on PATH).  -1 if this
 * binary is not inside an installed package. */
static int package_python(const char *exe, char *buf, size_t len)
{
	char d[PATH_MAX];
	snprintf(d, sizeof(d), "%s", exe);
	for (int up = 0; up < 6; up++) { /* gputap, _bin, gputap, site-packages, pythonX.Y, lib */
		static const char *const want[] = {NULL, "/_bin", "/gputap", NULL, NULL, NULL};
		char *slash = strrchr(d, '/');
		if (!slash || (want[up] && strcmp(slash, want[up]) != 0))
			return -1;
		if (up == 3 && !strstr(slash, "-packages"))
			return -1;
		*slash = '\0';
	}
	struct stat st;
	snprintf(buf, len, "%s/bin/python3", d);
	return stat(buf, &st) == 0 ? 0 : -1;
}

/* What the interpreter runs: the command, or what to install when the package does not import (one
 * interpreter start: importing the fleet extra alone takes a second). */
static char boot[] =
	"import sys\n"
	"try:\n"
	"    from gputap.fleet.__main__ import main\n"
	"except ImportError as e:\n"
	"    sys.stderr.write(\"gputap: error: fleet needs the gputap Python package with its fleet extra \"\n"
	"                     \"(dask.distributed, pandas, pyarrow): pip install './python[fleet]'.  %s said: %s\\n\"\n"
	"                     % (sys.executable, e))\n"
	"    sys.exit(1)\n"
	"sys.exit(main(sys.argv[1:]))\n";

static int run_python(int argc, char **argv)
{
	const char *py = getenv("GPUTAP_PYTHON");
	char exe[PATH_MAX], own_py[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if ((!py || !py[0]) && n > 0) {
		exe[n] = '\0';
		if (package_python(exe, own_py, sizeof(own_py)) == 0)
			py = own_py;
	}
	if (!py || !py[0])
		py = "python3";
	if (n > 0) {
		exe[n] = '\0';
		if (!getenv("GPUTAP"))
			setenv("GPUTAP", exe, 1); /* the workers on this machine run this same gputap */
		char pkg[PATH_MAX];
		if (package_dir(exe, pkg, sizeof(pkg)) == 0) {
			const char *old = getenv("PYTHONPATH");
			char *pp = malloc(strlen(pkg) + (old ? strlen(old) : 0) + 2);
			if (pp) {
				sprintf(pp, "%s%s%s", pkg, old && old[0] ? ":" : "", old ? old : "");
				setenv("PYTHONPATH", pp, 1);
				free(pp);
			}
		}
	}
	/* The client's numpy does no linear algebra: a BLAS that starts a thread per core as it loads
	 * (OpenBLAS) makes numpy's import the largest part of fleet's start on many-core machines.
	 * What the user set is kept. */
	static const char *const one_thread[] = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"};
	for (size_t i = 0; i < sizeof(one_thread) / sizeof(one_thread[0]); i++)
		setenv(one_thread[i], "1", 0);
	/* Python's bytecode: where PYTHONDONTWRITEBYTECODE keeps it from being written (containers set it,
	 * and a package tree made so has no __pycache__), every fleet run compiles numpy again — 0.23 s of
	 * a 0.63 s run on a 16-core machine.  The client keeps its bytecode in gputap's own cache folder
	 * instead (PYTHONPYCACHEPREFIX): still nothing written beside the user's sources, as they asked.
	 * A PYTHONPYCACHEPREFIX the user set is kept, and so is their setting then. */
	const char *dw = getenv("PYTHONDONTWRITEBYTECODE");
	char pyc[PATH_MAX];
	if (dw && dw[0] && !getenv("PYTHONPYCACHEPREFIX") && gt_rm_cache_dir(pyc, sizeof(pyc) - 16) == 0) {
		strcat(pyc, "/pycache");
		setenv("PYTHONPYCACHEPREFIX", pyc, 1);
		unsetenv("PYTHONDONTWRITEBYTECODE");
	}
	char **args = calloc((size_t)argc + 3, sizeof(char *));
	if (!args) {
		gt_error("out of memory");
		return 1;
	}
	char a0[PATH_MAX], a1[] = "-c";
	snprintf(a0, sizeof(a0), "%s", py);
	args[0] = a0;
	args[1] = a1;
	args[2] = boot;
	for (int i = 1; i < argc; i++)
		args[i + 2] = argv[i];
	fflush(stdout);
	execvp(py, args);
	gt_error("fleet needs the gputap Python package with its fleet extra (dask.distributed, pandas, pyarrow): "
		 "pip install './python[fleet]'.  Cannot run %s: %s",
		 py, strerror(errno));
	free(args);
	return 1;
}

/* ---- this machine, in C -------------------------------------------------------------------------- */

struct pool {
	const char *exe, *nvtx;
	const fl_plan *p;
	const fl_batch *b;
	size_t nb;
	fl_rows *all; /* every batch's rows, appended as each finishes */
	atomic_size_t next;
	pthread_mutex_t mu;
	size_t done, failed, total;
	int quiet, tty, oom;
	struct timespec t0;
};

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* "gputap fleet: 512/1024 ranks analysed, 2 failed (1.3 s)": on a terminal one line rewritten, else
 * a line every tenth of the ranks and at the end. */
static void progress(struct pool *w, int final)
{
	if (w->quiet)
		return;
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "gputap fleet: %zu/%zu ranks analysed", w->done, w->total);
	if (w->failed)
		n += snprintf(msg + n, sizeof(msg) - (size_t)n, ", %zu failed", w->failed);
	snprintf(msg + n, sizeof(msg) - (size_t)n, " (%.1f s)", since(&w->t0));
	size_t step = w->total / 10 ? w->total / 10 : 1;
	if (w->tty)
		fprintf(stderr, "\r%s%s", msg, final ? "\n" : "");
	else if (final || (w->done < w->total && w->done % step == 0))
		fprintf(stderr, "%s\n", msg);
	fflush(stderr);
}

static void *pool_worker(void *arg)
{
	struct pool *w = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&w->next, 1);
		if (i >= w->nb)
			return NULL;
		fl_rows mine;
		fl_rows_init(&mine);
		int rc = fl_task_run(w->exe, w->p, w->b[i].task, w->b[i].n, w->nvtx, &mine);
		pthread_mutex_lock(&w->mu);
		/* into the job's rows at once, in the order batches finish: the reduction sorts them by
		 * task, so the answers do not depend on it, and a batch's rows are not held twice */
		w->oom |= rc != 0 || fl_rows_append(w->all, &mine) != 0;
		w->done += w->b[i].n;
		for (size_t k = 0; k < mine.nranks; k++)
			w->failed += mine.ranks[k].status == FL_FAILED;
		progress(w, 0);
		pthread_mutex_unlock(&w->mu);
		fl_rows_free(&mine);
	}
}

/* Every batch of the plan, `workers` analyzer processes at a time; their rows into *all. */
static int run_batches(const char *exe, const char *nvtx, const fl_plan *p, int workers, int quiet, fl_rows *all,
		       size_t *ntasks)
{
	fl_batch *b = NULL;
	size_t nb = 0;
	if (fl_plan_batches(p, workers, 256, (int64_t)32 << 20, 0, &b, &nb))
		return -1;
	struct pool w = {.exe = exe, .nvtx = nvtx, .p = p, .b = b, .nb = nb, .all = all, .total = p->ntasks,
			 .quiet = quiet, .tty = isatty(2)};
	atomic_init(&w.next, 0);
	pthread_mutex_init(&w.mu, NULL);
	clock_gettime(CLOCK_MONOTONIC, &w.t0);
	pthread_t *th = calloc((size_t)workers, sizeof(pthread_t));
	int started = 0;
	if (p->ntasks)
		progress(&w, 0);
	for (int i = 0; th && i < workers && (size_t)i < nb; i++) {
		if (pthread_create(&th[i], NULL, pool_worker, &w) != 0)
			break;
		started++;
	}
	if (!started && nb)
		pool_worker(&w); /* no thread could start: this one does the work */
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (p->ntasks)
		progress(&w, 1);
	*ntasks = nb;
	free(th);
	fl_batches_free(b, nb);
	pthread_mutex_destroy(&w.mu);
	return w.oom ? -1 : 0;
}

/* The summary with what only the command knows: the inputs (absolute), the cluster, the tasks. */
static char *summary_with_run(const char *summary, char **inputs, int ninputs, int workers, size_t ntasks)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g)
		return NULL;
	/* the members to add, as a JSON object whose braces are dropped */
	yajl_gen_map_open(g);
	yajl_gen_string(g, (const unsigned char *)"inputs", 6);
	yajl_gen_array_open(g);
	for (int i = 0; i < ninputs; i++) {
		char *abs = fl_abspath(inputs[i]);
		const char *v = abs ? abs : inputs[i];
		yajl_gen_string(g, (const unsigned char *)v, strlen(v));
		free(abs);
	}
	yajl_gen_array_close(g);
	yajl_gen_string(g, (const unsigned char *)"cluster", 7);
	yajl_gen_map_open(g);
	yajl_gen_string(g, (const unsigned char *)"kind", 4);
	yajl_gen_string(g, (const unsigned char *)"local", 5);
	yajl_gen_string(g, (const unsigned char *)"workers", 7);
	yajl_gen_integer(g, workers);
	yajl_gen_map_close(g);
	yajl_gen_string(g, (const unsigned char *)"tasks", 5);
	yajl_gen_integer(g, (long long)ntasks);
	yajl_gen_map_close(g);
	const unsigned char *add;
	size_t alen, slen = strlen(summary);
	char *out = NULL;
	if (yajl_gen_get_buf(g, &add, &alen) == yajl_gen_status_ok && slen >= 2 && (out = malloc(slen + alen + 1))) {
		/* the summary without its closing brace, a comma, the members without their opening brace */
		memcpy(out, summary, slen - 1);
		out[slen - 1] = ',';
		memcpy(out + slen, add + 1, alen - 1);
		out[slen + alen - 1] = '\0';
	}
	yajl_gen_free(g);
	return out;
}

/* The whole analysis on this machine: the text (result == 0) or the result for the Python package
 * (result == 1) on stdout. */
static int run_local(char **inputs, int ninputs, int workers, const char *exe, const char *nvtx, int quiet, int result)
{
	fl_plan p = {0};
	fl_rows all;
	fl_result res;
	size_t ntasks = 0;
	int rc = 1;
	fl_rows_init(&all);
	memset(&res, 0, sizeof(res));
	if (fl_plan_expand(&p, inputs, ninputs) || run_batches(exe, nvtx, &p, workers, quiet, &all, &ntasks) ||
	    fl_reduce(&p, &all, &res)) {
		gt_error("fleet: out of memory");
		goto out;
	}
	if (result) {
		char *s = summary_with_run(res.summary_json, inputs, ninputs, workers, ntasks);
		if (!s) {
			gt_error("fleet: out of memory");
			goto out;
		}
		free(res.summary_json);
		res.summary_json = s;
		rc = fl_result_write(&res, stdout) ? 1 : 0;
		if (rc)
			gt_error("fleet: cannot write the result: %s", strerror(errno));
		goto out;
	}
	char *text = fl_text_summary(res.summary_json, &res.ranks);
	if (!text) {
		gt_error("fleet: out of memory");
		goto out;
	}
	fputs(text, stdout);
	free(text);
	if (!res.ranks.rows) {
		fflush(stdout);
		fprintf(stderr, "gputap fleet: error: no rank could be analysed\n");
		goto out;
	}
	rc = 0;
out:
	fl_result_free(&res);
	fl_rows_free(&all);
	fl_plan_free(&p);
	return gt_finish_stdout(rc);
}

/* ---- the parts the Python package calls ------------------------------------------------------ */

/* --plan: the tasks of the inputs and their batches, as JSON. */
static int part_plan(char **inputs, int n, int workers, int by_host)
{
	fl_plan p = {0};
	fl_batch *b = NULL;
	size_t nb = 0;
	int rc = 1;
	char *js = NULL;
	if (fl_plan_expand(&p, inputs, n) || fl_plan_batches(&p, workers, 256, (int64_t)32 << 20, by_host, &b, &nb) ||
	    !(js = fl_plan_json(&p))) {
		gt_error("fleet: out of memory");
		goto out;
	}
	/* {"tasks": ..., "failed": ..., "batches": [[i, ...], ...]} */
	size_t len = strlen(js);
	fwrite(js, 1, len - 1, stdout);
	fputs(",\"batches\":[", stdout);
	for (size_t i = 0; i < nb; i++) {
		fputs(i ? ",[" : "[", stdout);
		for (size_t k = 0; k < b[i].n; k++)
			printf("%s%d", k ? "," : "", b[i].task[k]);
		fputs("]", stdout);
	}
	fputs("]}\n", stdout);
	rc = 0;
out:
	free(js);
	fl_batches_free(b, nb);
	fl_plan_free(&p);
	return gt_finish_stdout(rc);
}

/* --task: the plan (JSON, stdin) of one batch, its rows on stdout. */
static int part_task(const char *exe, const char *nvtx)
{
	size_t len;
	char *in = gt_read_file("/dev/stdin", &len);
	fl_plan p = {0};
	fl_rows rows;
	char err[256];
	int rc = 1;
	fl_rows_init(&rows);
	if (!in || fl_plan_from_json(&p, in, len, err, sizeof(err))) {
		gt_error("fleet --task: the tasks on stdin: %s", in ? err : "cannot read");
		goto out;
	}
	int *idx = calloc(p.ntasks + 1, sizeof(int));
	if (!idx)
		goto out;
	for (size_t i = 0; i < p.ntasks; i++)
		idx[i] = (int)i;
	if (fl_task_run(exe, &p, idx, p.ntasks, nvtx, &rows) || fl_rows_write(&rows, stdout))
		gt_error("fleet --task: out of memory or cannot write");
	else
		rc = 0;
	free(idx);
out:
	free(in);
	fl_rows_free(&rows);
	fl_plan_free(&p);
	return gt_finish_stdout(rc);
}

/* --reduce PLAN: the rows of every batch (stdin, blocks one after the other) reduced; the result on
 * stdout.  A task of the plan with no row came back from no worker: failed, with the plan's "lost"
 * message when it has one. */
static int part_reduce(const char *planfile)
{
	size_t plen = 0, len = 0;
	char *pj = gt_read_file(planfile, &plen); /* NUL-ended: parsed twice below */
	char *in = gt_read_file("/dev/stdin", &len);
	fl_plan p = {0};
	fl_rows rows;
	fl_result res;
	char err[256];
	int rc = 1;
	fl_rows_init(&rows);
	memset(&res, 0, sizeof(res));
	if (!pj || fl_plan_from_json(&p, pj, plen, err, sizeof(err))) {
		gt_error("fleet --reduce: %s: %s", planfile, pj ? err : strerror(errno));
		goto out;
	}
	if (!in || fl_rows_read(&rows, (const unsigned char *)in, len, err, sizeof(err))) {
		gt_error("fleet --reduce: the rows on stdin: %s", in ? err : "cannot read");
		goto out;
	}
	char *seen = calloc(p.ntasks + 1, 1);
	if (!seen)
		goto out;
	for (size_t i = 0; i < rows.nranks; i++) {
		int t = rows.ranks[i].task;
		if (t >= 0 && (size_t)t < p.ntasks && p.tasks[t].index == t)
			seen[t] = 1;
		else
			for (size_t k = 0; k < p.ntasks; k++)
				if (p.tasks[k].index == t) {
					seen[k] = 1;
					break;
				}
	}
	/* the plan's "lost": why the client got nothing back for that task */
	yajl_val root = yajl_tree_parse(pj, NULL, 0);
	const char *tk[] = {"tasks", NULL}, *lk[] = {"lost", NULL};
	yajl_val tasks = root ? yajl_tree_get(root, tk, yajl_t_array) : NULL;
	for (size_t i = 0; i < p.ntasks; i++) {
		if (seen[i])
			continue;
		yajl_val l = tasks && i < tasks->u.array.len ? yajl_tree_get(tasks->u.array.values[i], lk, yajl_t_string)
							     : NULL;
		if (fl_rows_fail(&rows, p.tasks[i].index, FL_FAILED,
				 l ? YAJL_GET_STRING(l) : "no result came back for this rank")) {
			yajl_tree_free(root);
			free(seen);
			goto out;
		}
	}
	yajl_tree_free(root);
	free(seen);
	if (fl_reduce(&p, &rows, &res) || fl_result_write(&res, stdout)) {
		gt_error("fleet --reduce: out of memory or cannot write");
		goto out;
	}
	rc = 0;
out:
	free(pj);
	free(in);
	fl_result_free(&res);
	fl_rows_free(&rows);
	fl_plan_free(&p);
	return gt_finish_stdout(rc);
}

static int usage(const char *msg)
{
	fprintf(stderr, "usage: gputap fleet [-o DIR] [--scheduler ADDR | --scheduler-file F] [--workers N] [--nvtx TAG] "
			"[--quiet] INPUT...\ngputap fleet: error: %s\n",
		msg);
	return 2;
}

int cmd_fleet(int argc, char **argv)
{
	enum { O_SCHED = 256, O_SFILE, O_WORKERS, O_NVTX, O_GPUTAP, O_QUIET, O_PLAN, O_TASK, O_REDUCE, O_RESULT, O_BYHOST };
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"scheduler", required_argument, NULL, O_SCHED},
		{"scheduler-file", required_argument, NULL, O_SFILE}, {"workers", required_argument, NULL, O_WORKERS},
		{"nvtx", required_argument, NULL, O_NVTX}, {"gputap", required_argument, NULL, O_GPUTAP},
		{"quiet", no_argument, NULL, O_QUIET}, {"help", no_argument, NULL, 'h'},
		{"plan", no_argument, NULL, O_PLAN}, {"task", no_argument, NULL, O_TASK},
		{"reduce", required_argument, NULL, O_REDUCE}, {"result", no_argument, NULL, O_RESULT},
		{"by-host", no_argument, NULL, O_BYHOST}, {0, 0, 0, 0}};
	const char *out = NULL, *sched = NULL, *sfile = NULL, *nvtx = NULL, *exe_opt = NULL, *reduce_plan = NULL;
	int workers = 0, quiet = 0, mode = 0, by_host = 0, ch;
	char **args = calloc((size_t)argc + 1, sizeof(char *));
	if (!args)
		return 1;
	memcpy(args, argv, (size_t)argc * sizeof(char *));
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, args, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			free(args);
			fputs(cmd_fleet_help, stdout);
			return 0;
		case 'o': out = optarg; break;
		case O_SCHED: sched = optarg; break;
		case O_SFILE: sfile = optarg; break;
		case O_NVTX: nvtx = optarg; break;
		case O_GPUTAP: exe_opt = optarg; break;
		case O_QUIET: quiet = 1; break;
		case O_BYHOST: by_host = 1; break;
		case O_PLAN:
		case O_TASK:
		case O_RESULT: mode = ch; break;
		case O_REDUCE:
			mode = ch;
			reduce_plan = optarg;
			break;
		case O_WORKERS: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v < 1 || v > 4096) {
				free(args);
				return usage("--workers wants a positive integer");
			}
			workers = (int)v;
			break;
		}
		default: {
			char m[160];
			snprintf(m, sizeof(m), "unrecognised option or missing value: %s", argv[optind - 1]);
			free(args);
			return usage(m);
		}
		}
	}
	char **inputs = args + optind;
	int ninputs = argc - optind;
	if (sched && sfile) {
		free(args);
		return usage("argument --scheduler-file: not allowed with argument --scheduler");
	}
	if ((sched || sfile) && workers) {
		free(args);
		return usage("--workers is for this machine: not with --scheduler or --scheduler-file");
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	const char *exe = exe_opt ? exe_opt : getenv("GPUTAP") && getenv("GPUTAP")[0] ? getenv("GPUTAP") : self;
	int rc;
	const char *env_sched = getenv("DASK_SCHEDULER_ADDRESS");
	int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int local_workers = workers ? workers : cores < 4 && cores > 0 ? cores : 4;
	if (mode == O_TASK)
		rc = part_task(exe, nvtx);
	else if (mode == O_REDUCE)
		rc = part_reduce(reduce_plan);
	else if (!ninputs)
		rc = usage("the following arguments are required: INPUT");
	else if (mode == O_PLAN)
		rc = part_plan(inputs, ninputs, local_workers, by_host);
	else if (mode == O_RESULT)
		rc = run_local(inputs, ninputs, local_workers, exe, nvtx, quiet, 1);
	else if (out || sched || sfile || (env_sched && env_sched[0] && !workers))
		rc = run_python(argc, argv); /* files, or a cluster: the Python package */
	else {
		if (env_sched && env_sched[0])
			fprintf(stderr, "gputap fleet: --workers %d: %d analyzer processes on this machine; "
					"DASK_SCHEDULER_ADDRESS (%s) is not used\n",
				workers, workers, env_sched);
		rc = run_local(inputs, ninputs, local_workers, exe, nvtx, quiet, 0);
	}
	free(args);
	return rc;
}
