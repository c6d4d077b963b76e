#include "tap/ptrtab.h"

#include <errno.h>
#include <string.h>

static uint32_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

int gt_ptrtab_init(struct gt_ptrtab *t, void *mem, uint32_t cap)
{
	if (!mem || cap == 0 || (cap & (cap - 1)))
		return -EINVAL;
	t->slots = mem;
	t->cap = cap;
	gt_ptrtab_clear(t);
	return 0;
}

void gt_ptrtab_clear(struct gt_ptrtab *t)
{
	for (uint32_t i = 0; i < t->cap; i++) {
		atomic_store_explicit(&t->slots[i].key, 0, memory_order_relaxed);
		atomic_store_explicit(&t->slots[i].size, 0, memory_order_relaxed);
	}
	atomic_store(&t->untracked, 0);
}

int gt_ptrtab_insert(struct gt_ptrtab *t, uint64_t ptr, uint64_t size)
{
	if (ptr == 0 || ptr == GT_PTRTAB_TOMB)
		return -1;
	uint32_t mask = t->cap - 1, i = hash64(ptr) & mask;
	for (uint32_t n = 0; n < t->cap; n++, i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
		if (k != 0 && k != GT_PTRTAB_TOMB)
			continue;
		/* the size is stored before the key is published, so a remover never reads a stale size */
		if (atomic_compare_exchange_strong_explicit(&t->slots[i].key, &k, GT_PTRTAB_TOMB - 1,
							    memory_order_acq_rel, memory_order_acquire)) {
			atomic_store_explicit(&t->slots[i].size, size, memory_order_relaxed);
			atomic_store_explicit(&t->slots[i].key, ptr, memory_order_release);
			return 0;
		}
	}
	atomic_fetch_add_explicit(&t->untracked, 1, memory_order_relaxed);
	return -1;
}

uint64_t gt_ptrtab_remove(struct gt_ptrtab *t, uint64_t ptr)
{
	if (ptr == 0 || ptr == GT_PTRTAB_TOMB)
		return 0;
	uint32_t mask = t->cap - 1, i = hash64(ptr) & mask;
	for (uint32_t n = 0; n < t->cap; n++, i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
		if (k == 0)
			return 0;
		if (k != ptr)
			continue;
		uint64_t size = atomic_load_explicit(&t->slots[i].size, memory_order_relaxed);
		if (atomic_compare_exchange_strong_explicit(&t->slots[i].key, &k, GT_PTRTAB_TOMB,
							    memory_order_acq_rel, memory_order_acquire))
			return size;
		return 0;
	}
	return 0;
}
