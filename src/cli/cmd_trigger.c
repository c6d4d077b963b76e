/* gputap trigger: start a capture window in processes already running under gputap. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "core/log.h"
#include "trace/rundir.h"

const char cmd_trigger_help[] =
	"usage: gputap trigger DIR|PID [--duration S | --iterations N] [--wait S]\n"
	"\n"
	"Start a capture window in a program that runs under `gputap run --capture ...`\n"
	"(any SPEC; `--capture trigger` records nothing until a trigger). The window\n"
	"traces in full, then the tap goes back to its counters.\n"
	"\n"
	"    DIR              the run directory (every process of the run is triggered)\n"
	"                     or one process folder DIR/<proc>\n"
	"    PID              a process of the run (its GPUTAP_OUT is read from /proc)\n"
	"    --duration S     close the window after S seconds (default: until the\n"
	"                     process ends)\n"
	"    --iterations N   trace the next N top-level NVTX ranges whole (e.g. N\n"
	"                     training steps marked by ProfilerStep or your step range)\n"
	"    --wait S         how long to wait for each process to answer (default 5)\n"
	"\n"
	"The request goes through DIR/<proc>/control/, a folder only the owner of the\n"
	"run can write to (mode 0700, checked on both sides): no signal is sent and no\n"
	"path another user could write to is read. The process answers within ~100 ms\n"
	"(its writer thread's period); each answer is printed.\n"
	"\n"
	"Exit status: 0 when every process found answered that its window opened or is\n"
	"armed, 1 when none was found or one refused or did not answer, 2 on usage.\n";

static int is_private_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077);
}

static long read_pid(const char *control)
{
	char p[4200], b[32] = "";
	snprintf(p, sizeof(p), "%s/pid", control);
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	return strtol(b, NULL, 10);
}

struct target {
	char control[4200];
	long pid;
};

struct targets {
	struct target *v;
	int n;
	long want_pid;
};

/* One live process folder (trace/rundir.h): kept when its control folder is private to this user
 * and its process still runs (and is the one asked for). */
static int add_target(const char *procdir, const char *c, void *arg)
{
	struct targets *t = arg;
	(void)procdir;
	if (!is_private_dir(c)) {
		gt_error("trigger: %s is not a private folder of this user (mode 0700): not used", c);
		return -2;
	}
	long pid = read_pid(c);
	if (pid <= 0 || (t->want_pid > 0 && pid != t->want_pid))
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0; /* that process has ended */
	struct target *nv = realloc(t->v, (size_t)(t->n + 1) * sizeof(*nv));
	if (!nv) {
		gt_error("trigger: out of memory");
		return -2;
	}
	t->v = nv;
	snprintf(nv[t->n].control, sizeof(nv[t->n].control), "%s", c);
	nv[t->n].pid = pid;
	t->n++;
	return 0;
}

/* DIR: a process folder (has control/) or a run folder (its subfolders have). */
static int find_targets(const char *dir, long want_pid, struct target **v, int *n)
{
	struct targets t = {NULL, 0, want_pid};
	int rc = gt_rundir_each_live(dir, add_target, &t);
	if (rc == -1)
		gt_error("trigger: %s: %s", dir, strerror(errno));
	*v = t.v;
	*n = t.n;
	return rc < 0 ? -1 : 0;
}

/* GPUTAP_OUT of a running process, from /proc/PID/environ (readable by its owner only). */
static int out_dir_of(long pid, char *buf, size_t len)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%ld/environ", pid);
	FILE *f = fopen(p, "re");
	if (!f) {
		gt_error("trigger: process %ld: %s", pid, errno == ENOENT ? "no such process" : strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t k;
	int found = -1;
	while ((k = getdelim(&line, &cap, '\0', f)) > 0) {
		if (strncmp(line, "GPUTAP_OUT=", 11) == 0) {
			snprintf(buf, len, "%s", line + 11);
			found = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	if (found < 0)
		gt_error("trigger: process %ld does not run under gputap (no GPUTAP_OUT in its environment)", pid);
	return found;
}

static int send_one(const struct target *t, const char *req, double wait_s)
{
	char name[64], tmp[4400], path[4400], ack[4400];
	snprintf(name, sizeof(name), "%ld.%ld", (long)getpid(), (long)time(NULL));
	snprintf(tmp, sizeof(tmp), "%s/request.%s.tmp", t->control, name);
	snprintf(path, sizeof(path), "%s/request.%s", t->control, name);
	snprintf(ack, sizeof(ack), "%s/ack.%s", t->control, name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		gt_error("trigger: cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return 1;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		gt_error("trigger: cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return 1;
	}
	struct timespec step = {0, 20 * 1000 * 1000};
	for (double waited = 0; waited < wait_s; waited += 0.02) {
		int af = open(ack, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (af >= 0) {
			char b[256] = "";
			ssize_t n = read(af, b, sizeof(b) - 1);
			close(af);
			unlink(ack);
			b[n > 0 ? n : 0] = 0;
			if (n > 0 && b[n - 1] == '\n')
				b[n - 1] = 0;
			printf("process %ld (%s): %s\n", t->pid, t->control, b);
			return strncmp(b, "refused", 7) == 0;
		}
		nanosleep(&step, NULL);
	}
	unlink(path);
	gt_error("trigger: process %ld did not answer within %.0f s (is it running with --capture?)", t->pid, wait_s);
	return 1;
}

int cmd_trigger(int argc, char **argv)
{
	const char *target = NULL, *dur = NULL, *iters = NULL;
	double wait_s = 5;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (gt_is_help_flag(a)) {
			fputs(cmd_trigger_help, stdout);
			return gt_finish_stdout(0);
		}
		const char **dst = NULL;
		const char *wait_arg = NULL;
		if (!strcmp(a, "--duration"))
			dst = &dur;
		else if (!strcmp(a, "--iterations"))
			dst = &iters;
		else if (!strcmp(a, "--wait"))
			dst = &wait_arg;
		else if (a[0] == '-') {
			gt_error("trigger: unknown option '%s'; see 'gputap help trigger'", a);
			return 2;
		} else if (!target) {
			target = a;
			continue;
		} else {
			gt_error("trigger: one DIR or PID only ('%s' is one too many)", a);
			return 2;
		}
		if (i + 1 >= argc) {
			gt_error("trigger: %s needs a value", a);
			return 2;
		}
		*dst = argv[++i];
		if (wait_arg) {
			char *end;
			wait_s = strtod(wait_arg, &end);
			if (*end || !(wait_s > 0 && wait_s <= 3600)) {
				gt_error("trigger: --wait '%s': seconds from 0 to 3600", wait_arg);
				return 2;
			}
		}
	}
	if (!target) {
		gt_error("trigger: which run? give DIR or PID; see 'gputap help trigger'");
		return 2;
	}
	if (dur && iters) {
		gt_error("trigger: --duration and --iterations cannot be used together");
		return 2;
	}
	char req[64] = "open\n";
	if (dur) {
		char *end;
		double s = strtod(dur, &end);
		if (*end || !(s > 0 && s < 86400)) {
			gt_error("trigger: --duration '%s': seconds, more than 0 and less than a day", dur);
			return 2;
		}
		snprintf(req, sizeof(req), "duration_ms=%llu\n", (unsigned long long)(s * 1000 + 0.5));
	} else if (iters) {
		char *end;
		long long n = strtoll(iters, &end, 10);
		if (*end || n <= 0 || n >= 1000000000) {
			gt_error("trigger: --iterations '%s': a whole number from 1", iters);
			return 2;
		}
		snprintf(req, sizeof(req), "iterations=%lld\n", n);
	}
	long pid = -1;
	char dir[4096];
	int all_digits = 1;
	for (const char *p = target; *p; p++)
		all_digits &= isdigit((unsigned char)*p) != 0;
	if (all_digits) {
		pid = strtol(target, NULL, 10);
		if (out_dir_of(pid, dir, sizeof(dir)) < 0)
			return 1;
	} else {
		snprintf(dir, sizeof(dir), "%s", target);
	}
	struct target *v = NULL;
	int n = 0;
	if (find_targets(dir, pid, &v, &n) < 0) {
		free(v);
		return 1;
	}
	if (n == 0) {
		gt_error("trigger: no running process under %s takes triggers (it needs `gputap run --capture SPEC`, "
			 "and a process that has started)",
			 dir);
		free(v);
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad |= send_one(&v[i], req, wait_s);
	free(v);
	return gt_finish_stdout(bad ? 1 : 0);
}
