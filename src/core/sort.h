/*
 * core/sort.h — the one way gputap sorts an array.
 *
 * qsort's base pointer is declared non-null, so qsort(NULL, 0, …) — an empty
 * table that was never allocated — is undefined behaviour.  gt_sort accepts
 * any (base, n) pair a growing array can be in, and sorts nothing when n < 2.
 * Plain qsort is refused by `make lint` outside this header.  The ascending
 * comparators of plain numbers are here too, written once.
 */
#ifndef GT_SORT_H
#define GT_SORT_H

#include <stdint.h>
#include <stdlib.h>

static inline void gt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (base && n > 1)
		qsort(base, n, size, cmp); /* lint-ok: the one call */
}


#define GT_SORT_ASCENDING(name, type)                                                              \
	static inline int name(const void *a, const void *b)                                       \
	{                                                                                          \
		type x = *(const type *)a, y = *(const type *)b;                                   \
		return x < y ? -1 : x > y;                                                         \
	}
GT_SORT_ASCENDING(gt_cmp_int, int)
GT_SORT_ASCENDING(gt_cmp_u32, uint32_t)
GT_SORT_ASCENDING(gt_cmp_u64, uint64_t)
GT_SORT_ASCENDING(gt_cmp_int64, int64_t)
GT_SORT_ASCENDING(gt_cmp_float, float)
GT_SORT_ASCENDING(gt_cmp_double, double)
#undef GT_SORT_ASCENDING

#endif
