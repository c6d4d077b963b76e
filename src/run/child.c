/* run/child.c — start the command, forward signals, wait.  See child.h. */
#include "run/child.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/tools.h"

static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NFWD (sizeof(fwd_signals) / sizeof(fwd_signals[0]))

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t last_forwarded;
static volatile sig_atomic_t pending; /* a signal that came before the command started */
static struct sigaction saved[NFWD];
static int installed;

const char *gt_env_get(char *const *env, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], key, kl) == 0 && env[i][kl] == '=')
			return env[i] + kl + 1;
	return NULL;
}

void gt_env_free(char **env)
{
	if (!env)
		return;
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
}

static char *make_kv(const char *k, const char *v1, const char *sep, const char *v2)
{
	size_t n = strlen(k) + strlen(v1) + strlen(sep) + strlen(v2) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s=%s%s%s", k, v1, sep, v2);
	return s;
}

char **gt_env_build(char *const *base, const struct gt_kv *set, size_t nset)
{
	size_t nb = 0;
	while (base && base[nb])
		nb++;
	char **env = calloc(nb + nset + 1, sizeof(*env));
	if (!env)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < nb; i++) {
		const char *eq = strchr(base[i], '=');
		size_t kl = eq ? (size_t)(eq - base[i]) : strlen(base[i]);
		int replaced = 0;
		for (size_t j = 0; j < nset; j++)
			if (strlen(set[j].key) == kl && strncmp(base[i], set[j].key, kl) == 0)
				replaced = 1;
		if (replaced)
			continue;
		if (!(env[n++] = strdup(base[i])))
			goto oom;
	}
	for (size_t j = 0; j < nset; j++) {
		/* a key set twice in `set`: the last one wins */
		int later = 0;
		for (size_t k = j + 1; k < nset; k++)
			if (strcmp(set[j].key, set[k].key) == 0)
				later = 1;
		if (later)
			continue;
		const char *old = strcmp(set[j].key, "LD_PRELOAD") == 0 ? gt_env_get(base, "LD_PRELOAD") : NULL;
		if (old && *old && strcmp(old, set[j].val) != 0)
			env[n] = make_kv(set[j].key, set[j].val, ":", old);
		else
			env[n] = make_kv(set[j].key, set[j].val, "", "");
		if (!env[n++])
			goto oom;
	}
	env[n] = NULL;
	return env;
oom:
	gt_env_free(env);
	return NULL;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int saved_errno = errno;
	pid_t pid = (pid_t)child_pid;
	/* A terminal's signal went to the whole foreground group: the child has it already,
	 * unless it lives in a group of its own. */
	int from_tty = si && si->si_code == SI_KERNEL;
	if (pid > 0) {
		pid_t pg = getpgid(pid);
		int own_group = pg == pid && pg != getpgrp();
		if (own_group)
			kill(-pid, sig);
		else if (!from_tty)
			kill(pid, sig);
		last_forwarded = sig;
	} else if (!pending) {
		pending = sig; /* during set-up: the command must not start */
	}
	errno = saved_errno;
}

int gt_child_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waitpid returns EINTR and loops */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFWD; i++)
		if (sigaction(fwd_signals[i], &sa, &saved[i]) < 0)
			return -errno;
	installed = 1;
	pending = 0;
	return 0;
}

void gt_child_signals_restore(void)
{
	if (!installed)
		return;
	child_pid = 0;
	for (size_t i = 0; i < NFWD; i++)
		sigaction(fwd_signals[i], &saved[i], NULL);
	installed = 0;
}

int gt_child_last_forwarded(void)
{
	return (int)last_forwarded;
}

int gt_child_pending_signal(void)
{
	return (int)pending;
}

pid_t gt_child_start(char *const *argv, char *const *envp, int *exec_errno)
{
	*exec_errno = 0;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		*exec_errno = errno;
		return -1;
	}
	/* Block forwarded signals across fork so the handler never sees a half-set child_pid. */
	sigset_t block, old;
	sigemptyset(&block);
	for (size_t i = 0; i < NFWD; i++)
		sigaddset(&block, fwd_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if (pending) {
		/* interrupted during set-up: the command is not started */
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		close(pfd[0]);
		close(pfd[1]);
		*exec_errno = EINTR;
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		/* The child starts with default dispositions and gputap's original mask. */
		for (size_t i = 0; i < NFWD; i++)
			signal(fwd_signals[i], installed ? saved[i].sa_handler : SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvpe(argv[0], argv, envp);
		int e = errno;
		ssize_t w = write(pfd[1], &e, sizeof(e));
		(void)w;
		_exit(gt_exec_failure_code(e));
	}
	int fork_errno = errno;
	if (pid > 0)
		child_pid = pid;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		*exec_errno = fork_errno;
		return -1;
	}
	int e = 0;
	ssize_t r;
	do
		r = read(pfd[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	if (r == (ssize_t)sizeof(e)) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		child_pid = 0;
		*exec_errno = e ? e : ENOEXEC;
		return -1;
	}
	return pid;
}

int gt_child_wait(pid_t pid, struct rusage *ru)
{
	int st = 0;
	struct rusage tmp;
	for (;;) {
		pid_t r = wait4(pid, &st, 0, ru ? ru : &tmp);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			child_pid = 0;
			return -1;
		}
	}
	child_pid = 0;
	return st;
}

int gt_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

int gt_exec_failure_code(int err)
{
	return err == ENOENT || err == ENOTDIR ? 127 : 126;
}
