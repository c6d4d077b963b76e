/* gputap fleet — many ranks on a Dask cluster: runs the Python package's `python3 -m gputap.fleet`. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/log.h"

const char cmd_fleet_help[] =
	"NAME\n"
	"    gputap fleet - analyse the ranks of a large job on a Dask cluster, one answer for all\n"
	"\n"
	"SYNOPSIS\n"
	"    gputap fleet [-o DIR] [--scheduler ADDR | --scheduler-file F] [--workers N] [--quiet] INPUT...\n"
	"\n"
	"DESCRIPTION\n"
	"    Sends one task per rank to a Dask cluster (a LocalCluster of --workers processes by\n"
	"    default, an existing scheduler with --scheduler or --scheduler-file, or the one named by\n"
	"    DASK_SCHEDULER_ADDRESS); each task runs 'gputap analyze' on the worker that can read the\n"
	"    rank's files, so memory per worker is bounded by one rank.  The results are reduced into:\n"
	"    per rank busy, idle, compute, communication and exposed communication (the numbers of\n"
	"    'gputap analyze'); per iteration the slowest and fastest rank, the spread and the phase\n"
	"    that made the slowest slow; per collective (matched across ranks by communicator and\n"
	"    sequence number, as NCCL's profiler plugin recorded them, else by order) the arrival skew,\n"
	"    the time waiting and the late rank, after aligning each machine's clock on the collectives'\n"
	"    common completion (with the fit's residuals); slow ranks and outliers with their reason.\n"
	"    Progress goes to stderr; a rank whose files are missing or broken is named and left out.\n"
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
	"    --workers N            worker processes of the LocalCluster (default: min(4, CPUs))\n"
	"    --gputap PATH          the gputap command the workers run (default: this one)\n"
	"    --quiet                no progress on stderr\n"
	"    -h, --help             this text\n"
	"\n"
	"    The text summary goes to standard output.  docs/fleet.md defines every number and column.\n"
	"\n"
	"REQUIREMENTS\n"
	"    The Python package with its fleet extra: pip install './python[fleet]' (dask.distributed,\n"
	"    pyarrow, pandas), on this machine and on every worker; gputap on each worker's PATH (or\n"
	"    GPUTAP).  GPUTAP_PYTHON names the Python interpreter (default: python3).\n"
	"\n"
	"EXIT STATUS\n"
	"    0; 1 when no rank could be analysed or the Python package is missing; 2 for a usage error.\n"
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

/* Run `python -c CHECK`; 0 when the package and its extra import, else -1 with the last line of
 * Python's complaint in `why`. */
static int check_python(const char *py, char *why, size_t len)
{
	int fd[2];
	if (pipe(fd) < 0) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 2);
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execlp(py, py, "-c", "import gputap.fleet as f; f._require()", (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", py, strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	char out[4096];
	size_t n = 0;
	ssize_t k;
	while ((k = read(fd[0], out + n, sizeof(out) - 1 - n)) > 0 && n < sizeof(out) - 1)
		n += (size_t)k;
	char sink[256];
	while (k > 0) /* drain the rest */
		k = read(fd[0], sink, sizeof(sink));
	close(fd[0]);
	out[n] = '\0';
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		out[--n] = '\0';
	char *last = strrchr(out, '\n');
	snprintf(why, len, "%s", last ? last + 1 : out[0] ? out : "it failed");
	return -1;
}

int cmd_fleet(int argc, char **argv)
{
	const char *py = getenv("GPUTAP_PYTHON");
	if (!py || !py[0])
		py = "python3";
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (!getenv("GPUTAP"))
			setenv("GPUTAP", exe, 1); /* the workers of a LocalCluster run this same gputap */
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
	char why[1024];
	if (check_python(py, why, sizeof(why)) < 0) {
		gt_error("fleet needs the gputap Python package with its fleet extra (dask.distributed, pandas, "
			 "pyarrow): pip install './python[fleet]'.  %s said: %s",
			 py, why);
		return 1;
	}
	char **args = calloc((size_t)argc + 3, sizeof(char *));
	if (!args) {
		gt_error("out of memory");
		return 1;
	}
	char a0[PATH_MAX], a1[] = "-m", a2[] = "gputap.fleet";
	snprintf(a0, sizeof(a0), "%s", py);
	args[0] = a0;
	args[1] = a1;
	args[2] = a2;
	for (int i = 1; i < argc; i++)
		args[i + 2] = argv[i];
	fflush(stdout);
	execvp(py, args);
	gt_error("cannot run %s: %s", py, strerror(errno));
	free(args);
	return 1;
}
