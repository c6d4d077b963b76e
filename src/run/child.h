/*
 * run/child.h — the profiled command as a child process.
 *
 * Owns: building the child's environment (gputap's own, plus what the plan
 * sets; LD_PRELOAD is prepended to, never replaced), starting the command
 * with execvp semantics (no shell), telling "not found" (127) from "cannot
 * run" (126) like env(1), forwarding signals, and the shell's exit-status
 * convention (128+N when killed by signal N).
 *
 * Signals: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 sent to gputap
 * are passed on to the child.  The child stays in gputap's process group, so
 * a terminal's Ctrl-C already reaches it: signals the kernel sent on behalf
 * of the terminal (si_code SI_KERNEL) are not sent a second time.  If the
 * child made itself a process-group leader (a shell with job control, a
 * launcher using setsid), the signal goes to its whole group.  A signal that
 * arrives after the handlers are installed but before the command started
 * (during set-up) is kept: the command is then not started at all.
 */
#ifndef GT_RUN_CHILD_H
#define GT_RUN_CHILD_H

#include <sys/types.h>

struct gt_kv;

/* A new environment: `base` (NULL-terminated, e.g. environ) with each key
 * of `set` replaced or added.  The key LD_PRELOAD is prepended to the
 * existing value with ':'.  Returns a malloc'd NULL-terminated array of
 * malloc'd strings (free with gt_env_free), NULL on ENOMEM. */
char **gt_env_build(char *const *base, const struct gt_kv *set, size_t nset);
void gt_env_free(char **env);
/* Value of `key` in `env`, NULL if absent. */
const char *gt_env_get(char *const *env, const char *key);

/* Install the forwarding handlers (before gt_child_start) and remove them
 * (after the child ended; signals then have their default effect). */
int gt_child_signals_install(void);
void gt_child_signals_restore(void);

/* Start argv[0] (searched in PATH) with `envp`.  Returns the pid, or
 * -1 with *exec_errno set when the command could not be executed
 * (the child has then already been reaped), EINTR when a signal came
 * during set-up (gt_child_pending_signal() says which).  */
pid_t gt_child_start(char *const *argv, char *const *envp, int *exec_errno);

/* Wait for the child, forwarding signals meanwhile.  Returns the raw wait
 * status, or -1 on error.  If rusage is not NULL it receives the child's. */
struct rusage;
int gt_child_wait(pid_t pid, struct rusage *ru);

/* Shell convention: exit code, or 128+signal. */
int gt_exit_code(int wstatus);
/* Status for a command that could not be executed: 127 not found, 126 else. */
int gt_exec_failure_code(int err);
/* Signals forwarded so far (for run.json), by number; 0 if none. */
int gt_child_last_forwarded(void);
/* The signal that came during set-up (before the command started), 0 if none. */
int gt_child_pending_signal(void);

#endif
