/* gputap analyze — placeholder until the command lands; see commands.h. */
#include "cli/commands.h"
#include "core/log.h"

const char cmd_analyze_help[] = "usage: gputap analyze ...\n\n(not built yet)\n";

int cmd_analyze(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_error("'gputap analyze' is not built yet");
	return 2;
}
