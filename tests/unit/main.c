/* Unit-test runner: every registered test in its own process, with a timeout. */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct gt_test *head, **tail = &head;
static int failed_flag;
static char tmpdir[4096];
static char srcdir[4096];

void gt_test_register(struct gt_test *t)
{
	*tail = t;
	tail = &t->next;
}

void gt_test_fail(void) { failed_flag = 1; }

const char *gt_test_tmpdir(void) { return tmpdir; }

const char *gt_test_srcdir(void) { return srcdir; }

const char *gt_test_write_file(const char *dir, const char *name, const void *data, size_t len)
{
	static char paths[4][4096];
	static int next;
	char *p = paths[next++ & 3];
	snprintf(p, 4096, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f)
		return p;
	fwrite(data, 1, len, f);
	fclose(f);
	return p;
}

char *gt_test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n < 2) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (b)
		b[n] = '\0';
	if (len)
		*len = n;
	return b;
}

static int run_one(struct gt_test *t, int timeout_s)
{
	char tmpl[] = "/tmp/gputap-test-XXXXXX";
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	pid_t pid = fork();
	if (pid == 0) {
		alarm((unsigned)timeout_s);
		failed_flag = 0;
		t->fn();
		fflush(NULL);
		_exit(failed_flag ? 1 : 0);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpl);
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "%s: test %s killed by signal %d%s\n", t->file, t->name, WTERMSIG(st),
			WTERMSIG(st) == SIGALRM ? " (timeout)" : "");
		return 1;
	}
	return WEXITSTATUS(st) != 0;
}

/* `unit-tests --sanitizer-probe heap|ub` commits one deliberate fault: in the
 * sanitizer build it must be reported, which proves the build is instrumented. */
static int sanitizer_probe(const char *what)
{
	if (!strcmp(what, "heap")) {
		char *volatile p = malloc(8);
		volatile char c = p[8];
		free(p);
		printf("heap probe read %d unnoticed\n", c);
	} else if (!strcmp(what, "ub")) {
		volatile int big = 0x7fffffff, one = 1;
		printf("ub probe computed %d unnoticed\n", big + one);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--sanitizer-probe"))
		return sanitizer_probe(argv[2]);
	const char *filter = argc > 1 ? argv[1] : NULL;
	const char *sd = getenv("GT_TEST_SRCDIR");
	snprintf(srcdir, sizeof(srcdir), "%s", sd ? sd : "tests");
	int timeout = 60;
	const char *to = getenv("GT_TEST_TIMEOUT");
	if (to)
		timeout = atoi(to);
	int passed = 0, failed = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (struct gt_test *t = head; t; t = t->next) {
		if (filter && !strstr(t->name, filter))
			continue;
		int bad = run_one(t, timeout);
		printf("%s unit/%s\n", bad ? "not ok" : "ok", t->name);
		if (bad)
			failed++;
		else
			passed++;
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
