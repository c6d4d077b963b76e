/*
 * tests/fuzz/fuzz_file.h — the readers under fuzz take a path, so each target
 * writes its input to a temporary file first.  `suffix` (".json", ".sqlite"
 * or "") is kept at the end of the name, since readers pick a format by it.
 */
#ifndef GT_FUZZ_FILE_H
#define GT_FUZZ_FILE_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Remove `dir` and everything below it (what a target's run wrote). */
static inline void gt_fuzz_rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			char p[4300];
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				gt_fuzz_rm_tree(p);
			else
				unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

#endif
