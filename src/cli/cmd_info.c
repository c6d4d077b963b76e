/* gputap info — placeholder until the command lands; see commands.h. */
#include "cli/commands.h"
#include "core/log.h"

const char cmd_info_help[] = "usage: gputap info ...\n\n(not built yet)\n";

int cmd_info(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_error("'gputap info' is not built yet");
	return 2;
}
