/*
 * tests/fuzz/fuzz_file.h — the readers under fuzz take a path, so each target
 * writes its input to a temporary file first.  `suffix` (".json", ".sqlite"
 * or "") is kept at the end of the name, since readers pick a format by it.
 */
#ifndef GT_FUZZ_FILE_H
#define GT_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write data to a new file named /tmp/gputap-fuzz-<tag>-XXXXXX<suffix>; its
 * path goes to `path` (at least 96 bytes).  0, or -1 when it could not. */
static inline int gt_fuzz_file(const char *tag, const char *suffix, const uint8_t *data, size_t size,
			       char *path, size_t cap)
{
	int n = snprintf(path, cap, "/tmp/gputap-fuzz-%s-XXXXXX%s", tag, suffix);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	int fd = mkstemps(path, (int)strlen(suffix));
	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

#endif
