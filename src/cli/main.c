/* gputap: the command dispatcher.  See commands.h for how to add a command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "core/log.h"
#include "gputap/format.h"

struct gt_cmd {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
	const char *help;
};

#define GT_CMD_ENTRY(name, summary) {#name, cmd_##name, summary, cmd_##name##_help},
static const struct gt_cmd commands[] = {GT_COMMANDS(GT_CMD_ENTRY)};
#undef GT_CMD_ENTRY
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* gt_version, gt_is_help_flag, gt_finish_stdout: see common.c */

static void usage(FILE *f)
{
	fprintf(f, "usage: gputap [--version] [--help] COMMAND [ARGS...]\n\n"
		   "gputap profiles CUDA and AI workloads with very low overhead, and analyses\n"
		   "recordings made by gputap, Nsight Systems and the PyTorch profiler.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'gputap help COMMAND' shows a command's options.\n"
		   "Quick start:  gputap run -o myrun -- python train.py\n"
		   "              gputap analyze myrun\n");
}

int gt_print_command_help(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0) {
			fputs(commands[i].help, stdout);
			return 0;
		}
	return -1;
}

const char cmd_help_help[] = "usage: gputap help [COMMAND]\n\n"
			     "Show the list of commands, or the full help of one command.\n";

int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return gt_finish_stdout(0);
	}
	if (gt_print_command_help(argv[1]) < 0) {
		gt_error("'%s' is not a gputap command; see 'gputap help'", argv[1]);
		return 2;
	}
	return gt_finish_stdout(0);
}

/* GPUTAP_LOG sets the CLI's message level as it sets the library's (docs/README.md). */
static void log_level_from_env(void)
{
	const char *v = getenv("GPUTAP_LOG");
	if (!v || !*v)
		return;
	int l = gt_log_parse_level(v);
	if (l < 0)
		gt_warn("GPUTAP_LOG=%s is not valid (accepted: quiet, error, warn, info, debug); using warn", v);
	else
		gt_log_level = l;
}

int main(int argc, char **argv)
{
	log_level_from_env();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *a = argv[1];
	if (gt_is_help_flag(a)) {
		usage(stdout);
		return gt_finish_stdout(0);
	}
	if (strcmp(a, "--version") == 0 || strcmp(a, "version") == 0) {
		printf("gputap %s (trace format %u)\n", gt_version, GT_TRACE_VERSION);
		return gt_finish_stdout(0);
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, a) != 0)
			continue;
		for (int j = 2; j < argc; j++) {
			if (strcmp(argv[j], "--") == 0)
				break;
			if (gt_is_help_flag(argv[j]) && strcmp(a, "run") != 0) {
				fputs(commands[i].help, stdout);
				return gt_finish_stdout(0);
			}
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	gt_error("'%s' is not a gputap command; see 'gputap --help'", a);
	return 2;
}
