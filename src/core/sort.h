/*
 * core/sort.h — the one way gputap sorts an array.
 *
 * qsort's base pointer is declared non-null, so qsort(NULL, 0, …) — an empty
 * table that was never allocated — is undefined behaviour.  gt_sort accepts
 * any (base, n) pair a growing array can be in, and sorts nothing when n < 2.
 * Plain qsort is refused by `make lint` outside this header.
 */
#ifndef GT_SORT_H
#define GT_SORT_H

#include <stdlib.h>

static inline void gt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (base && n > 1)
		qsort(base, n, size, cmp); /* lint-ok: the one call */
}

#endif
