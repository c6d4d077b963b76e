/* Open NVTX start/end ranges.  See openrange.h. */
#include "tap/openrange.h"

#include <string.h>

void gt_open_init(struct gt_open_table *t, struct gt_open_range *mem, uint32_t cap)
{
	t->r = mem;
	t->cap = cap;
}

int gt_open_start(struct gt_open_table *t, uint64_t id, uint64_t start_ns, uint32_t name_id,
		  uint32_t domain_id, uint32_t tid)
{
	if (!t->cap || id == 0 || id == GT_OPEN_BUSY)
		return -1;
	for (uint32_t k = 0; k < GT_OPEN_PROBE && k < t->cap; k++) {
		struct gt_open_range *o = &t->r[(id + k) % t->cap];
		uint64_t expect = 0;
		if (!atomic_compare_exchange_strong_explicit(&o->state, &expect, GT_OPEN_BUSY, memory_order_acquire,
							     memory_order_relaxed))
			continue;
		o->start_ns = start_ns;
		o->name_id = name_id;
		o->domain_id = domain_id;
		o->tid = tid;
		atomic_store_explicit(&o->state, id, memory_order_release);
		return 0;
	}
	return -1;
}

int gt_open_end(struct gt_open_table *t, uint64_t id, struct gt_open_range *out)
{
	if (!t->cap || id == 0 || id == GT_OPEN_BUSY)
		return 0;
	for (uint32_t k = 0; k < GT_OPEN_PROBE && k < t->cap; k++) {
		struct gt_open_range *o = &t->r[(id + k) % t->cap];
		uint64_t expect = id;
		if (!atomic_compare_exchange_strong_explicit(&o->state, &expect, GT_OPEN_BUSY, memory_order_acquire,
							     memory_order_relaxed))
			continue;
		out->start_ns = o->start_ns;
		out->name_id = o->name_id;
		out->domain_id = o->domain_id;
		out->tid = o->tid;
		atomic_store_explicit(&out->state, id, memory_order_relaxed);
		atomic_store_explicit(&o->state, 0, memory_order_release);
		return 1;
	}
	return 0;
}
