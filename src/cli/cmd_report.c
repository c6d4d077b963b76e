/* gputap report — placeholder until the command lands; see commands.h. */
#include "cli/commands.h"
#include "core/log.h"

const char cmd_report_help[] = "usage: gputap report ...\n\n(not built yet)\n";

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_error("'gputap report' is not built yet");
	return 2;
}
