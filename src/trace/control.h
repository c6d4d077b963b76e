/*
 * trace/control.h — asking a running process for a capture window: the requester's side of the
 * protocol of a process's control folder (DIR/<proc>/control, trace/rundir.h); the process's side
 * is the tap's (tap/capture_tap.c), the command `gputap trigger` (cli/cmd_trigger.c).
 *
 * Owns: which processes take requests (a live <proc> folder whose control folder is a private
 * folder of this user, mode 0700, and whose pid file names a running process), the request
 * (one file, written as request.NAME.tmp and renamed to request.NAME, holding one line:
 * "open", "duration_ms=N" or "iterations=N"), and waiting for the answer (ack.NAME, one line,
 * "refused..." when no window was opened; the process answers within ~100 ms).  No signal is
 * sent and no path another user could write to is read.
 *
 * Errors: functions return 0, or -1 with one sentence in err (no "trigger:" prefix: the command
 * adds its own).
 */
#ifndef GT_TRACE_CONTROL_H
#define GT_TRACE_CONTROL_H

#include <stddef.h>

struct gt_control_target {
	char control[4200]; /* DIR/<proc>/control */
	long pid;
};

/* The processes under `dir` (a run folder, or one <proc> folder) that take requests now, and of
 * them only process `want_pid` when it is > 0: 0 with *v (free() it) and *n (may be 0). */
int gt_control_find(const char *dir, long want_pid, struct gt_control_target **v, int *n, char *err, size_t errlen);

/* The output folder (GPUTAP_OUT) of running process `pid`, from /proc/PID/environ (readable by
 * its owner only). */
int gt_control_out_dir_of(long pid, char *buf, size_t len, char *err, size_t errlen);

/* The request line: a window until the process ends, of `value` milliseconds, or of the next
 * `value` top-level NVTX ranges. */
enum gt_control_req { GT_CONTROL_OPEN, GT_CONTROL_DURATION_MS, GT_CONTROL_ITERATIONS };
void gt_control_request(char *buf, size_t len, enum gt_control_req kind, unsigned long long value);

/* Send `req` to `t` and wait up to wait_s seconds for its answer: 0 with the answer (its line
 * without the newline) in `answer`; -1 with err when the request could not be written or no
 * answer came (the request is taken back then). */
int gt_control_send(const struct gt_control_target *t, const char *req, double wait_s, char *answer, size_t anslen,
		    char *err, size_t errlen);

/* 1 when `answer` says that the process refused the request. */
int gt_control_refused(const char *answer);

#endif
