/* A strict integer from a setting (core/number.h). */
#include "core/number.h"

#include <errno.h>
#include <stdlib.h>

int gt_parse_long(const char *s, long lo, long hi, long *out)
{
	if (!s || !((*s >= '0' && *s <= '9') || *s == '-'))
		return -1; /* strtol would skip blanks and take a '+' */
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}
