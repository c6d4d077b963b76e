/*
 * core/containers.h — the two containers the readers share: a growable
 * array of fixed-size elements and an open-addressing map u64 -> u64.
 *
 * Invariants: key 0 is reserved (it means "none" in traces) and is never
 * stored; a value pointer stays valid until the next put; nothing here
 * removes a key (callers store 0 as "gone").
 */
#ifndef GT_CORE_CONTAINERS_H
#define GT_CORE_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>

struct gt_vec {
	void *v;
	size_t n, cap, elsize;
};
void gt_vec_init(struct gt_vec *a, size_t elsize);
void *gt_vec_push(struct gt_vec *a); /* zeroed new element, NULL on ENOMEM */
void gt_vec_free(struct gt_vec *a);
#define GT_VEC_AT(a, T, i) (((T *)(a)->v)[i])

/* open-addressing map u64 -> u64; key 0 is reserved (means "none" in traces) */
struct gt_map {
	uint64_t *keys, *vals;
	size_t n, cap;
};
uint64_t *gt_map_get(const struct gt_map *m, uint64_t key);
uint64_t *gt_map_put(struct gt_map *m, uint64_t key, int *is_new); /* NULL on ENOMEM */
void gt_map_free(struct gt_map *m);

#endif
