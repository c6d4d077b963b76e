/* gputap libperf — placeholder until the command lands; see commands.h. */
#include "cli/commands.h"
#include "core/log.h"

const char cmd_libperf_help[] = "usage: gputap libperf ...\n\n(not built yet)\n";

int cmd_libperf(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_error("'gputap libperf' is not built yet");
	return 2;
}
