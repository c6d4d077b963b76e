/* trace/control.h: the request lines, which processes take requests, a request no one answers. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "trace/control.h"

TEST(trace_control_request_lines)
{
	char b[64];
	gt_control_request(b, sizeof(b), GT_CONTROL_OPEN, 0);
	ASSERT_EQ_STR(b, "open\n");
	gt_control_request(b, sizeof(b), GT_CONTROL_DURATION_MS, 2500);
	ASSERT_EQ_STR(b, "duration_ms=2500\n");
	gt_control_request(b, sizeof(b), GT_CONTROL_ITERATIONS, 3);
	ASSERT_EQ_STR(b, "iterations=3\n");
	ASSERT(gt_control_refused("refused: bad request"));
	ASSERT(!gt_control_refused("window 1 open"));
}

/* DIR/<proc>/control with mode `mode` and a pid file naming `pid` */
static const char *make_proc(const char *dir, const char *proc, mode_t mode, long pid)
{
	static char c[4200];
	char p[4300];
	snprintf(p, sizeof(p), "%s/%s", dir, proc);
	if (mkdir(p, 0700) < 0)
		return NULL;
	snprintf(c, sizeof(c), "%s/control", p);
	if (mkdir(c, 0700) < 0 || chmod(c, mode) < 0)
		return NULL;
	snprintf(p, sizeof(p), "%s/pid", c);
	FILE *f = fopen(p, "w");
	if (!f)
		return NULL;
	fprintf(f, "%ld\n", pid);
	fclose(f);
	return c;
}

TEST(trace_control_find_takes_live_private_folders)
{
	const char *d = gt_test_tmpdir();
	ASSERT(make_proc(d, "rank0", 0700, (long)getpid()));
	struct gt_control_target *v = NULL;
	int n = -1;
	char err[4600] = "";
	ASSERT_EQ_INT(gt_control_find(d, 0, &v, &n, err, sizeof(err)), 0);
	ASSERT_EQ_INT(n, 1);
	ASSERT_EQ_INT((int)v[0].pid, (int)getpid());
	ASSERT_CONTAINS(v[0].control, "/rank0/control");
	free(v);
	/* another process asked for: none */
	ASSERT_EQ_INT(gt_control_find(d, (long)getpid() + 1, &v, &n, err, sizeof(err)), 0);
	ASSERT_EQ_INT(n, 0);
	free(v);
	/* a control folder others may write to: refused, named */
	ASSERT(make_proc(d, "rank1", 0777, (long)getpid()));
	ASSERT_EQ_INT(gt_control_find(d, 0, &v, &n, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "/rank1/control is not a private folder of this user (mode 0700): not used");
	free(v);
}

TEST(trace_control_send_unanswered_takes_request_back)
{
	const char *d = gt_test_tmpdir();
	const char *c = make_proc(d, "rank0", 0700, (long)getpid());
	ASSERT(c);
	struct gt_control_target t;
	snprintf(t.control, sizeof(t.control), "%s", c);
	t.pid = (long)getpid();
	char answer[256] = "", err[4600] = "";
	ASSERT_EQ_INT(gt_control_send(&t, "open\n", 0.05, answer, sizeof(answer), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "did not answer within 0 s (is it running with --capture?)");
	DIR *dir = opendir(c);
	ASSERT(dir);
	struct dirent *e;
	int left = 0;
	while ((e = readdir(dir)))
		left += strncmp(e->d_name, "request.", 8) == 0;
	closedir(dir);
	ASSERT_EQ_INT(left, 0);
}
