/* The allocation counter gputap run shares with the tap (core/memgen.h). */
#include "core/memgen.h"
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* What the tap bumps through its own mapping the CLI's mapping sees; removed.  (That the tap leaves no
 * descriptor open in the program: tests/cli/t_run_samplers.sh, vram-counter-no-descriptor-left.) */
TEST(memgen_shared_bumped_and_removed)
{
	char name[GT_MEMGEN_NAME_MAX];
	_Atomic uint64_t *cli = gt_memgen_create(name, sizeof(name));
	ASSERT(cli != NULL);
	ASSERT(strncmp(name, "/gputap-mem.", 12) == 0);
	_Atomic uint64_t *tap = gt_memgen_attach(name);
	ASSERT(tap != NULL && tap != cli);
	gt_memgen_bump(tap);
	gt_memgen_bump(tap);
	gt_memgen_bump(NULL); /* no counter: nothing happens */
	ASSERT_EQ_U64(atomic_load(cli), 2);
	munmap((void *)(uintptr_t)tap, 4096);
	char path[128];
	snprintf(path, sizeof(path), "/dev/shm%s", name);
	ASSERT_EQ_INT(access(path, F_OK), 0);
	gt_memgen_remove(name, cli);
	ASSERT(access(path, F_OK) != 0);
	ASSERT(gt_memgen_attach(name) == NULL); /* gone */
}

/* Only a page gputap made: no other program's shared memory, no path, nothing unset. */
TEST(memgen_attach_refuses_other_names)
{
	static const char *const bad[] = {NULL, "", "gputap-mem.1.2", "/other", "/gputap-mem./x", "/gputap-mem",
					  "/gputap-mem.99999999.ffff-that-does-not-exist"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT(gt_memgen_attach(bad[i]) == NULL);
}
