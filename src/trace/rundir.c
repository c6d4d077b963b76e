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
		char t[4200], tp[4300], m[4300];
		snprintf(t, sizeof(t), "%s/%s/" GT_PROC_TRACE, dir, e->d_name);
		snprintf(tp, sizeof(tp), "%s.partial", t);
		snprintf(m, sizeof(m), "%s/%s/" GT_PROC_METRICS, dir, e->d_name);
		int whole = exists(t), part = !whole && exists(tp), met = exists(m);
		if (!whole && !part && !met)
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
		struct gt_rundir_proc *p = &v[n++];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", e->d_name);
		if (whole || part)
			snprintf(p->trace, sizeof(p->trace), "%s", t);
		p->trace_partial = part;
		p->has_metrics = met;
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
