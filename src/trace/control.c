/* trace/control.c — the requester's side of a process's control folder.  See control.h. */
#include "trace/control.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/rundir.h"

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

struct targets {
	struct gt_control_target *v;
	int n;
	long want_pid;
	char *err;
	size_t errlen;
};

/* One live process folder (trace/rundir.h): kept when its control folder is private to this user
 * and its process still runs (and is the one asked for). */
static int add_target(const char *procdir, const char *c, void *arg)
{
	struct targets *t = arg;
	(void)procdir;
	if (!is_private_dir(c)) {
		snprintf(t->err, t->errlen, "%s is not a private folder of this user (mode 0700): not used", c);
		return -2;
	}
	long pid = read_pid(c);
	if (pid <= 0 || (t->want_pid > 0 && pid != t->want_pid))
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0; /* that process has ended */
	struct gt_control_target *nv = realloc(t->v, (size_t)(t->n + 1) * sizeof(*nv));
	if (!nv) {
		snprintf(t->err, t->errlen, "out of memory");
		return -2;
	}
	t->v = nv;
	snprintf(nv[t->n].control, sizeof(nv[t->n].control), "%s", c);
	nv[t->n].pid = pid;
	t->n++;
	return 0;
}

int gt_control_find(const char *dir, long want_pid, struct gt_control_target **v, int *n, char *err, size_t errlen)
{
	struct targets t = {NULL, 0, want_pid, err, errlen};
	int rc = gt_rundir_each_live(dir, add_target, &t);
	if (rc == -1)
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
	*v = t.v;
	*n = t.n;
	return rc < 0 ? -1 : 0;
}

int gt_control_out_dir_of(long pid, char *buf, size_t len, char *err, size_t errlen)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%ld/environ", pid);
	FILE *f = fopen(p, "re");
	if (!f) {
		snprintf(err, errlen, "process %ld: %s", pid, errno == ENOENT ? "no such process" : strerror(errno));
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
		snprintf(err, errlen, "process %ld does not run under gputap (no GPUTAP_OUT in its environment)", pid);
	return found;
}

void gt_control_request(char *buf, size_t len, enum gt_control_req kind, unsigned long long value)
{
	if (kind == GT_CONTROL_DURATION_MS)
		snprintf(buf, len, "duration_ms=%llu\n", value);
	else if (kind == GT_CONTROL_ITERATIONS)
		snprintf(buf, len, "iterations=%llu\n", value);
	else
		snprintf(buf, len, "open\n");
}

int gt_control_send(const struct gt_control_target *t, const char *req, double wait_s, char *answer, size_t anslen,
		    char *err, size_t errlen)
{
	char name[64], tmp[4400], path[4400], ack[4400];
	snprintf(name, sizeof(name), "%ld.%ld", (long)getpid(), (long)time(NULL));
	snprintf(tmp, sizeof(tmp), "%s/request.%s.tmp", t->control, name);
	snprintf(path, sizeof(path), "%s/request.%s", t->control, name);
	snprintf(ack, sizeof(ack), "%s/ack.%s", t->control, name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return -1;
	}
	close(fd);
	if (rename(tmp, path) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
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
			snprintf(answer, anslen, "%s", b);
			return 0;
		}
		nanosleep(&step, NULL);
	}
	unlink(path);
	snprintf(err, errlen, "process %ld did not answer within %.0f s (is it running with --capture?)", t->pid, wait_s);
	return -1;
}

int gt_control_refused(const char *answer)
{
	return strncmp(answer, "refused", 7) == 0;
}
