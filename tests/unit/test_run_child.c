/* Child process helpers: environment building, exit codes, default run directory. */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/child.h"
#include "run/run.h"
#include "run/tools.h"

TEST(env_build_replaces_adds_and_prepends_preload)
{
	char *base[] = {"A=1", "LD_PRELOAD=/x/old.so", "B=2", "GPUTAP_OUT=/stale", NULL};
	struct gt_kv set[] = {
		{"GPUTAP_OUT", "/run"}, {"LD_PRELOAD", "/lib/libgputap.so"}, {"C", "3"}, {"C", "4"}};
	char **e = gt_env_build(base, set, 4);
	ASSERT(e != NULL);
	ASSERT_EQ_STR(gt_env_get(e, "A"), "1");
	ASSERT_EQ_STR(gt_env_get(e, "B"), "2");
	ASSERT_EQ_STR(gt_env_get(e, "GPUTAP_OUT"), "/run");
	ASSERT_EQ_STR(gt_env_get(e, "LD_PRELOAD"), "/lib/libgputap.so:/x/old.so");
	ASSERT_EQ_STR(gt_env_get(e, "C"), "4");
	int n = 0, nout = 0;
	for (; e[n]; n++)
		nout += strncmp(e[n], "GPUTAP_OUT=", 11) == 0;
	ASSERT_EQ_INT(n, 5);
	ASSERT_EQ_INT(nout, 1);
	gt_env_free(e);
	/* no earlier LD_PRELOAD: just ours */
	char *base2[] = {"A=1", NULL};
	e = gt_env_build(base2, set + 1, 1);
	ASSERT_EQ_STR(gt_env_get(e, "LD_PRELOAD"), "/lib/libgputap.so");
	gt_env_free(e);
}

TEST(exit_codes_as_a_shell)
{
	pid_t p = fork();
	if (p == 0)
		_exit(42);
	int st;
	waitpid(p, &st, 0);
	ASSERT_EQ_INT(gt_exit_code(st), 42);
	p = fork();
	if (p == 0) {
		signal(SIGTERM, SIG_DFL);
		raise(SIGTERM);
		_exit(0);
	}
	waitpid(p, &st, 0);
	ASSERT_EQ_INT(gt_exit_code(st), 128 + SIGTERM);
	ASSERT_EQ_INT(gt_exec_failure_code(ENOENT), 127);
	ASSERT_EQ_INT(gt_exec_failure_code(EACCES), 126);
}

TEST(child_start_reports_not_found)
{
	char *argv[] = {"gputap-test-no-such-program", NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	int e = 0;
	ASSERT_EQ_INT(gt_child_start(argv, envp, &e), -1);
	ASSERT_EQ_INT(e, ENOENT);
	char *argv2[] = {"sh", "-c", "exit 9", NULL};
	pid_t pid = gt_child_start(argv2, envp, &e);
	ASSERT(pid > 0);
	ASSERT_EQ_INT(gt_exit_code(gt_child_wait(pid, NULL)), 9);
}

TEST(default_dir_gets_a_suffix)
{
	const char *d = gt_test_tmpdir();
	time_t t = 1795251379; /* fixed, so every call names the same second */
	char a[4200], b[4200], c[4200];
	struct stat st;
	ASSERT_EQ_INT(gt_run_default_dir(d, t, a, sizeof(a)), 0);
	ASSERT_CONTAINS(a, "/gputap-");
	ASSERT_EQ_INT(stat(a, &st), 0); /* created: the name is taken, not just found free */
	ASSERT(S_ISDIR(st.st_mode));
	ASSERT_EQ_INT(gt_run_default_dir(d, t, b, sizeof(b)), 0);
	ASSERT(strcmp(a, b) != 0);
	ASSERT_EQ_INT(strncmp(a, b, strlen(a)), 0);
	ASSERT_EQ_STR(b + strlen(a), "-2");
	ASSERT_EQ_INT(gt_run_default_dir(d, t, c, sizeof(c)), 0);
	ASSERT_EQ_STR(c + strlen(a), "-3");
	char nodir[4300];
	snprintf(nodir, sizeof(nodir), "%s/missing/parent", d);
	ASSERT_EQ_INT(gt_run_default_dir(nodir, t, c, sizeof(c)), -1);
	ASSERT_EQ_INT(errno, ENOENT);
}

/* Runs started at once (ranks under torchrun) in one second: each its own folder. */
TEST(default_dir_one_per_process_at_once)
{
	const char *d = gt_test_tmpdir();
	time_t t = 1795251400;
	enum { N = 8 };
	pid_t kids[N];
	for (int i = 0; i < N; i++) {
		kids[i] = fork();
		ASSERT(kids[i] >= 0);
		if (kids[i] == 0) {
			char p[4200];
			_exit(gt_run_default_dir(d, t, p, sizeof(p)) == 0 && gt_run_claim_dir(p) == 0 ? 0 : 1);
		}
	}
	int ok = 0;
	for (int i = 0; i < N; i++) {
		int ws;
		waitpid(kids[i], &ws, 0);
		ok += WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
	}
	ASSERT_EQ_INT(ok, N);
	/* N folders, each claimed once: the names given out were all different */
	DIR *dir = opendir(d);
	ASSERT(dir != NULL);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)))
		if (strncmp(e->d_name, "gputap-", 7) == 0) {
			char p[4400];
			struct stat st;
			snprintf(p, sizeof(p), "%s/%s/run.json", d, e->d_name);
			n += stat(p, &st) == 0;
		}
	closedir(dir);
	ASSERT_EQ_INT(n, N);
}

TEST(claim_dir_once)
{
	const char *d = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_run_claim_dir(d), 0);
	ASSERT_EQ_INT(gt_run_claim_dir(d), -1);
	ASSERT_EQ_INT(errno, EEXIST);
	char p[4300];
	struct stat st;
	snprintf(p, sizeof(p), "%s/run.json", d);
	ASSERT_EQ_INT(stat(p, &st), 0);
	ASSERT_EQ_INT((int)st.st_size, 0);
}

TEST(outdir_placeholders)
{
	char out[256], err[512];
	setenv("GT_TEST_RANK", "3", 1);
	ASSERT_EQ_INT(gt_run_expand_outdir("job/rank%q{GT_TEST_RANK}", out, sizeof(out), err, sizeof(err)), 0);
	ASSERT_EQ_STR(out, "job/rank3");
	char want[64];
	snprintf(want, sizeof(want), "p%ld-100%%", (long)getpid());
	ASSERT_EQ_INT(gt_run_expand_outdir("p%p-100%%", out, sizeof(out), err, sizeof(err)), 0);
	ASSERT_EQ_STR(out, want);
	char host[256];
	ASSERT_EQ_INT(gethostname(host, sizeof(host)), 0);
	ASSERT_EQ_INT(gt_run_expand_outdir("%h", out, sizeof(out), err, sizeof(err)), 0);
	ASSERT_EQ_STR(out, host);
	ASSERT_EQ_INT(gt_run_expand_outdir("plain/dir", out, sizeof(out), err, sizeof(err)), 0);
	ASSERT_EQ_STR(out, "plain/dir");
	/* refused, each with what is wrong */
	unsetenv("GT_TEST_NOPE");
	ASSERT_EQ_INT(gt_run_expand_outdir("a%q{GT_TEST_NOPE}", out, sizeof(out), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "GT_TEST_NOPE is not set");
	ASSERT_EQ_INT(gt_run_expand_outdir("a%x", out, sizeof(out), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "unknown placeholder '%x'");
	ASSERT_EQ_INT(gt_run_expand_outdir("a%q{OPEN", out, sizeof(out), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "unknown placeholder '%q'");
	ASSERT_EQ_INT(gt_run_expand_outdir("a%q{}", out, sizeof(out), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "needs the name");
	ASSERT_EQ_INT(gt_run_expand_outdir("a%", out, sizeof(out), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "unknown placeholder");
	setenv("GT_TEST_RANK", "../up", 1);
	ASSERT_EQ_INT(gt_run_expand_outdir("r%q{GT_TEST_RANK}", out, sizeof(out), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "without '/'");
	setenv("GT_TEST_RANK", "", 1);
	ASSERT_EQ_INT(gt_run_expand_outdir("r%q{GT_TEST_RANK}", out, sizeof(out), err, sizeof(err)), -1);
	char big[300];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	setenv("GT_TEST_RANK", big, 1);
	ASSERT_EQ_INT(gt_run_expand_outdir("r%q{GT_TEST_RANK}", out, sizeof(out), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "too long");
	ASSERT_EQ_INT(gt_run_expand_outdir("", out, sizeof(out), err, sizeof(err)), -1);
	unsetenv("GT_TEST_RANK");
}

TEST(iso8601_utc_millis)
{
	char b[64];
	gt_iso8601(1795251379087547467ull, b, sizeof(b));
	ASSERT_EQ_STR(b, "2026-11-21T08:56:19.087Z");
}

TEST(find_lib_next_to_exe_then_lib_then_env)
{
	const char *d = gt_test_tmpdir();
	char bin[4200], exe[4300], out[4200];
	snprintf(bin, sizeof(bin), "%s/bin", d);
	mkdir(bin, 0755);
	snprintf(exe, sizeof(exe), "%s/gputap", bin);
	unsetenv("GPUTAP_LIB");
	ASSERT_EQ_INT(gt_run_find_lib(exe, out, sizeof(out)), -1);
	gt_test_write_file(d, "env.so", "x", 1);
	char envlib[4300];
	snprintf(envlib, sizeof(envlib), "%s/env.so", d);
	setenv("GPUTAP_LIB", envlib, 1);
	ASSERT_EQ_INT(gt_run_find_lib(exe, out, sizeof(out)), 0);
	ASSERT_CONTAINS(out, "/env.so");
	char lib[4300];
	snprintf(lib, sizeof(lib), "%s/lib", d);
	mkdir(lib, 0755);
	gt_test_write_file(lib, "libgputap.so", "x", 1);
	ASSERT_EQ_INT(gt_run_find_lib(exe, out, sizeof(out)), 0);
	ASSERT_CONTAINS(out, "/lib/libgputap.so");
	gt_test_write_file(bin, "libgputap.so", "x", 1);
	ASSERT_EQ_INT(gt_run_find_lib(exe, out, sizeof(out)), 0);
	ASSERT_CONTAINS(out, "/bin/libgputap.so");
}

/* Ctrl-C while gputap sets up (samplers, tools): the command does not start. */
TEST(child_signal_during_setup_starts_nothing)
{
	char marker[4200];
	snprintf(marker, sizeof(marker), "%s/started", gt_test_tmpdir());
	char *argv[] = {"sh", "-c", "touch \"$0\"", marker, NULL};
	char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	ASSERT_EQ_INT(gt_child_signals_install(), 0);
	ASSERT_EQ_INT(gt_child_pending_signal(), 0);
	raise(SIGINT);
	int e = 0;
	pid_t pid = gt_child_start(argv, envp, &e);
	if (pid > 0)
		gt_child_wait(pid, NULL);
	gt_child_signals_restore();
	ASSERT_EQ_INT(pid, -1);
	ASSERT_EQ_INT(e, EINTR);
	ASSERT_EQ_INT(gt_child_pending_signal(), SIGINT);
	ASSERT(access(marker, F_OK) != 0);
}
