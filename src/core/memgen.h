/*
 * core/memgen.h — the allocation counter that `gputap run` shares with the
 * tap in its command's processes.
 *
 * Owns: one page of POSIX shared memory, named in GPUTAP_MEMGEN, whose first
 * word counts the device allocations and frees the tap saw (in every traced
 * process of the run, fork children included).  The vram sampler reads it
 * each tick: when it has moved since a device's last memory read, the memory
 * is read again that tick (run/sampler.h); otherwise NVML's costly memory
 * query waits for its 10 Hz turn.
 *
 * The CLI creates (O_EXCL, mode 0600) and removes the page; the tap only
 * attaches: it maps the page and closes the descriptor at once, so nothing
 * is left open in the program.  Any failure leaves the pointer NULL and the
 * sampler reads memory on its own schedule; the program is never affected.
 */
#ifndef GT_CORE_MEMGEN_H
#define GT_CORE_MEMGEN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define GT_MEMGEN_ENV "GPUTAP_MEMGEN"
#define GT_MEMGEN_NAME_MAX 64

/* CLI: create a fresh page; its name into name[namelen].  The counter, or
 * NULL with errno set. */
_Atomic uint64_t *gt_memgen_create(char *name, size_t namelen);
/* Tap: map the page called `name` (GPUTAP_MEMGEN).  The counter, or NULL. */
_Atomic uint64_t *gt_memgen_attach(const char *name);
/* CLI: unmap and remove the page (either may be NULL/empty). */
void gt_memgen_remove(const char *name, _Atomic uint64_t *page);

/* Tap: one device allocation or free seen. */
static inline void gt_memgen_bump(_Atomic uint64_t *page)
{
	if (page)
		atomic_fetch_add_explicit(page, 1, memory_order_relaxed);
}

#endif
