/* gputap run — placeholder until the command lands; see commands.h. */
#include "cli/commands.h"
#include "core/log.h"

const char cmd_run_help[] = "usage: gputap run ...\n\n(not built yet)\n";

int cmd_run(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_error("'gputap run' is not built yet");
	return 2;
}
