#include "core/memgen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define MEMGEN_PREFIX "/gputap-mem."

static _Atomic uint64_t *map_fd(int fd)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int saved = errno;
	close(fd);
	errno = saved;
	return p == MAP_FAILED ? NULL : (_Atomic uint64_t *)p;
}

_Atomic uint64_t *gt_memgen_create(char *name, size_t namelen)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (int tries = 0; tries < 8; tries++) {
		snprintf(name, namelen, MEMGEN_PREFIX "%ld.%lx", (long)getpid(),
			 (unsigned long)(ts.tv_nsec ^ ((unsigned long)tries * 2654435761u)));
		int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			if (errno == EEXIST)
				continue;
			name[0] = '\0';
			return NULL;
		}
		if (ftruncate(fd, PAGE) < 0) {
			int saved = errno;
			close(fd);
			shm_unlink(name);
			name[0] = '\0';
			errno = saved;
			return NULL;
		}
		_Atomic uint64_t *p = map_fd(fd);
		if (!p) {
			shm_unlink(name);
			name[0] = '\0';
		}
		return p;
	}
	name[0] = '\0';
	errno = EEXIST;
	return NULL;
}

_Atomic uint64_t *gt_memgen_attach(const char *name)
{
	/* a name gputap made (never another program's page): one leading slash and no other */
	if (!name || strncmp(name, MEMGEN_PREFIX, sizeof(MEMGEN_PREFIX) - 1) != 0 || strchr(name + 1, '/') ||
	    strlen(name) >= GT_MEMGEN_NAME_MAX)
		return NULL;
	int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size < PAGE) {
		close(fd);
		return NULL;
	}
	return map_fd(fd);
}

void gt_memgen_remove(const char *name, _Atomic uint64_t *page)
{
	if (page)
		munmap((void *)(uintptr_t)page, PAGE);
	if (name && name[0])
		shm_unlink(name);
}
