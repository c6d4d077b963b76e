/*
 * tap/ptrtab.h — device pointer -> allocation size, for `mem_used`.
 *
 * Owns: a fixed-capacity open-addressing table living in memory the caller
 * allocated once; insert and remove are lock-free (CAS on the key) so the
 * allocation hooks never lock or allocate.
 *
 * Invariants: key 0 = never used, key GT_PTRTAB_TOMB = removed (lookups
 * probe past it); a key is present at most once (the driver does not hand
 * out a live address twice); a failed insert (table full) is counted and
 * the allocation is then left out of mem_used, so mem_used never drifts.
 */
#ifndef GT_TAP_PTRTAB_H
#define GT_TAP_PTRTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define GT_PTRTAB_TOMB UINT64_MAX

struct gt_ptrtab_slot {
	_Atomic uint64_t key;
	_Atomic uint64_t size;
};

struct gt_ptrtab {
	struct gt_ptrtab_slot *slots;
	uint32_t cap; /* power of two */
	_Atomic uint64_t untracked; /* inserts that found the table full */
};

/* `mem` must hold cap slots, cap a power of two. */
int gt_ptrtab_init(struct gt_ptrtab *t, void *mem, uint32_t cap);
void gt_ptrtab_clear(struct gt_ptrtab *t);
/* 0, or -1 when full (counted in untracked). */
int gt_ptrtab_insert(struct gt_ptrtab *t, uint64_t ptr, uint64_t size);
/* Removes `ptr`; returns its size, or 0 if it was not in the table. */
uint64_t gt_ptrtab_remove(struct gt_ptrtab *t, uint64_t ptr);

#endif
