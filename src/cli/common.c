/* Helpers every command uses, kept out of main.c so the unit-test and fuzz
 * binaries (which link the commands without main.c) have them too. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "core/log.h"
#include "core/version.h"

const char gt_version[] = GT_VERSION;

int gt_is_help_flag(const char *a) { return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0; }

int gt_finish_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		gt_error("writing to standard output failed: %s", strerror(errno));
		return status ? status : 1;
	}
	return status;
}
