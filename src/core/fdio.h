/*
 * core/fdio.h — writing a whole buffer to a file descriptor.
 *
 * Owns: the loop over short writes and EINTR that every writer of raw files
 * needs (the trace, the tap's logs, the range-metrics cache, gzip outputs).
 * Header-only and allocation-free, so the injected library can use it.
 */
#ifndef GT_CORE_FDIO_H
#define GT_CORE_FDIO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/* Write all `n` bytes of `p` to `fd`.  0, or -1 with errno set (EIO when the
 * file takes no more bytes without saying why). */
static inline int gt_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

#endif
