/* trace/rundir.c — the <proc> folders of a run directory.  See rundir.h. */
#include "trace/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/sort.h"

static int cmp_proc(const void *a, const void *b)
{
	return strcmp(((const struct gt_rundir_proc *)a)->name, ((const struct gt_rundir_proc *)b)->name);
}

/* Present in any form: a trace.gtr that is a folder or a dangling link is
 * listed all the same, so that its reader names what is wrong with it. */
static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* One folder: 1 and *p filled when it holds a trace, metrics.log or range_metrics.csv. */
static int entry(const char *dir, const char *name, struct gt_rundir_proc *p)
{
	char t[4200], tp[4300], m[4300], rm[4300];
	snprintf(t, sizeof(t), "%s/%s/" GT_PROC_TRACE, dir, name);
	snprintf(tp, sizeof(tp), "%s.partial", t);
	snprintf(m, sizeof(m), "%s/%s/" GT_PROC_METRICS, dir, name);
	snprintf(rm, sizeof(rm), "%s/%s/" GT_PROC_RANGE_METRICS, dir, name);
	int whole = exists(t), part = !whole && exists(tp), met = exists(m), rme = exists(rm);
	if (!whole && !part && !met && !rme)
		return 0;
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (whole || part)
		snprintf(p->trace, sizeof(p->trace), "%s", t);
	p->trace_partial = part;
	p->has_metrics = met;
	p->has_range_metrics = rme;
	return 1;
}

int gt_rundir_samplers(const char *dir, struct gt_rundir_proc *out)
{
	return entry(dir, GT_RUN_SAMPLERS, out) && out->trace[0];
}

static int visible(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int gt_rundir_each_live(const char *dir, int (*fn)(const char *procdir, const char *control, void *arg), void *arg)
{
	char c[4300];
	snprintf(c, sizeof(c), "%s/" GT_PROC_CONTROL, dir);
	if (exists(c))
		return fn(dir, c, arg);
	struct dirent **names;
	int n = scandir(dir, &names, visible, by_name);
	if (n < 0)
		return -1;
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		char p[4200];
		if (snprintf(p, sizeof(p), "%s/%s", dir, names[i]->d_name) < (int)sizeof(p) &&
		    snprintf(c, sizeof(c), "%s/" GT_PROC_CONTROL, p) < (int)sizeof(c) && exists(c))
			rc = fn(p, c, arg);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int gt_rundir_procs(const char *dir, struct gt_rundir_proc **out)
{
	*out = NULL;
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	size_t n = 0, cap = 0;
	struct gt_rundir_proc *v = NULL;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, GT_RUN_SAMPLERS) == 0 || strcmp(e->d_name, GT_RUN_LIBS) == 0 ||
		    strlen(e->d_name) >= sizeof(v->name))
			continue;
		struct gt_rundir_proc one;
		if (!entry(dir, e->d_name, &one))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			struct gt_rundir_proc *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				rc = -1;
				errno = ENOMEM;
				break;
			}
			v = nv;
		}
		v[n++] = one;
	}
	closedir(d);
	if (rc < 0) {
		free(v);
		return -1;
	}
	if (n)
		gt_sort(v, n, sizeof(*v), cmp_proc);
	*out = v;
	return (int)n;
}

int gt_rundir_is_run(const char *dir)
{
	static const char *const marks[] = {GT_RUN_JSON,	   GT_RUN_SAMPLERS,   GT_RUN_LIBS,
					    "gpu_samples.csv",	   "library_trace.csv", "library_perf.csv",
					    "gpu_info_power_profiler_output.csv", "gpu_info_vram_profiler_output.csv"};
	char p[4200];
	struct stat st;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, marks[i]);
		if (lstat(p, &st) == 0)
			return 1;
	}
	struct gt_rundir_proc *v;
	int n = gt_rundir_procs(dir, &v);
	if (n > 0)
		free(v);
	return n > 0;
}
