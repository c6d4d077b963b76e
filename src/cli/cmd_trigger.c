/* gputap trigger: start a capture window in processes already running under gputap (the requests
 * themselves: trace/control.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/log.h"
#include "trace/control.h"

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

/* One request to one process: its answer printed; 1 when it refused or did not answer. */
static int send_one(const struct gt_control_target *t, const char *req, double wait_s)
{
	char answer[256], err[4600];
	if (gt_control_send(t, req, wait_s, answer, sizeof(answer), err, sizeof(err)) < 0) {
		gt_error("trigger: %s", err);
		return 1;
	}
	printf("process %ld (%s): %s\n", t->pid, t->control, answer);
	return gt_control_refused(answer);
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
	char req[64];
	gt_control_request(req, sizeof(req), GT_CONTROL_OPEN, 0);
	if (dur) {
		char *end;
		double s = strtod(dur, &end);
		if (*end || !(s > 0 && s < 86400)) {
			gt_error("trigger: --duration '%s': seconds, more than 0 and less than a day", dur);
			return 2;
		}
		gt_control_request(req, sizeof(req), GT_CONTROL_DURATION_MS, (unsigned long long)(s * 1000 + 0.5));
	} else if (iters) {
		char *end;
		long long n = strtoll(iters, &end, 10);
		if (*end || n <= 0 || n >= 1000000000) {
			gt_error("trigger: --iterations '%s': a whole number from 1", iters);
			return 2;
		}
		gt_control_request(req, sizeof(req), GT_CONTROL_ITERATIONS, (unsigned long long)n);
	}
	long pid = -1;
	char dir[4096], err[4600];
	int all_digits = 1;
	for (const char *p = target; *p; p++)
		all_digits &= isdigit((unsigned char)*p) != 0;
	if (all_digits) {
		pid = strtol(target, NULL, 10);
		if (gt_control_out_dir_of(pid, dir, sizeof(dir), err, sizeof(err)) < 0) {
			gt_error("trigger: %s", err);
			return 1;
		}
	} else {
		snprintf(dir, sizeof(dir), "%s", target);
	}
	struct gt_control_target *v = NULL;
	int n = 0;
	if (gt_control_find(dir, pid, &v, &n, err, sizeof(err)) < 0) {
		gt_error("trigger: %s", err);
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
