/* gputap fleet — many ranks on a Dask cluster: runs the Python package's `python3 -m gputap.fleet`. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/log.h"
#include "metrics/rmcache.h" /* gputap's cache folder */

const char cmd_fleet_help[] =
	"NAME\n"
	"    gputap fleet - analyse the ranks of a large job on a Dask cluster, one answer for all\n"
	"\n"
	"SYNOPSIS\n"
	"    gputap fleet [-o DIR] [--scheduler ADDR | --scheduler-file F] [--workers N] [--nvtx TAG]\n"
	"                 [--quiet] INPUT...\n"
	"\n"
	"DESCRIPTION\n"
	"    Analyses the ranks on this machine (--workers analyzer processes at a time, by default)\n"
	"    or on a Dask cluster (an existing scheduler with --scheduler or --scheduler-file, or the\n"
	"    one named by DASK_SCHEDULER_ADDRESS unless --workers is given); each task runs one\n"
	"    'gputap analyze' over a few ranks of one machine, on the worker that can read their\n"
	"    files, so memory per worker is bounded by the largest rank.  The results come back as\n"
	"    small tables of numpy columns and are reduced, with numpy alone, into: the stragglers\n"
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
	"    The Python package with its fleet extra: pip install './python[fleet]' (dask.distributed,\n"
	"    numpy, pyarrow, pandas), on this machine and on every worker; gputap on each worker's PATH (or\n"
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

int cmd_fleet(int argc, char **argv)
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
