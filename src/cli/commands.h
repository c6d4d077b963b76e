/*
 * cli/commands.h — the command table's contract.
 *
 * Owns: the list of gputap commands.  To add a command: write
 * src/cli/cmd_<name>.c defining `int cmd_<name>(int argc, char **argv)` and
 * `const char cmd_<name>_help[]` (the full help text, man-page style), then
 * add one line to GT_COMMANDS below.  argv[0] is the command name.
 * Commands return the process exit status: 0 ok, 1 bad input (the message
 * names the file and line), 2 usage; `run` returns the child's status.
 * Only the command layer prints errors and decides exit codes.
 *
 * What a command holds: its options, its help, what it prints, and calls into the module that
 * does the work.  Work shared with another command, the report or the tap lives in that module
 * (the requests of `gputap trigger`, which the tap answers: trace/control.h; the questions of
 * `gputap info`: gpu/survey.h, and its metrics: metrics/chip.h).  One command keeps logic that
 * serves it alone, because no module owns what it works on:
 *  - cmd_diff.c: the comparison of two analyses (kernels matched by name, per-iteration sums,
 *    threshold, text/JSON/CSV), over analyze/analyze.h's results; nothing else compares runs.
 * When a second user appears, that logic moves to a module first.
 */
#ifndef GT_COMMANDS_H
#define GT_COMMANDS_H

/* X(name, one-line summary) */
#define GT_COMMANDS(X)                                                                             \
	X(run, "run a command under the tap and write the files of a run")                        \
	X(analyze, "per-iteration tables from nsys, PyTorch-profiler or gputap recordings")       \
	X(report, "terminal summary and report.html with plots for a run directory")             \
	X(convert, "turn a gputap trace into Chrome/Perfetto JSON, nsys-style CSVs, metrics/timeline logs")  \
	X(libperf, "replay recorded GEMM/NCCL configs and time them")                            \
	X(info, "GPUs, driver, CUDA/CUPTI versions, what is supported")                          \
	X(fleet, "many ranks at once: stragglers, late collectives, clock offsets, outliers")    \
	X(trigger, "start a capture window in a program running under gputap run --capture")    \
	X(diff, "two runs or traces compared: kernels added, removed, changed, per iteration")   \
	X(advise, "findings: what is wrong, the evidence, the estimated gain and the fix")        \
	X(help, "show help for gputap or one command")

#define GT_DECLARE_CMD(name, summary)                                                              \
	int cmd_##name(int argc, char **argv);                                                     \
	extern const char cmd_##name##_help[];
GT_COMMANDS(GT_DECLARE_CMD)
#undef GT_DECLARE_CMD

/* Print the help of `name` to stdout; -1 if there is no such command. */
int gt_print_command_help(const char *name);
/* Write gputap's version line ("gputap X.Y.Z") */
extern const char gt_version[];

/* Common helper for commands: 1 if argv[i] is -h/--help. */
int gt_is_help_flag(const char *a);
/* Finish a command: flush stdout and turn a write error (full disk) into status 1. */
int gt_finish_stdout(int status);

#endif
