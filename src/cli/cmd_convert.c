/* gputap convert — placeholder until the command lands; see commands.h. */
#include "cli/commands.h"
#include "core/log.h"

const char cmd_convert_help[] = "usage: gputap convert ...\n\n(not built yet)\n";

int cmd_convert(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_error("'gputap convert' is not built yet");
	return 2;
}
