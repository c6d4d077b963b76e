#include "tap/ring.h"

#include <errno.h>
#include <string.h>

int gt_pool_init(struct gt_pool *p, void *mem, size_t bytes, size_t chunk_size)
{
	memset(p, 0, sizeof(*p));
	chunk_size &= ~(size_t)7;
	if (!mem || chunk_size <= GT_CHUNK_HDR + 64 || bytes / chunk_size < 2)
		return -EINVAL;
	p->mem = mem;
	p->chunk_size = chunk_size;
	size_t n = bytes / chunk_size;
	p->nchunks = n > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)n;
	/* free list in index order: chunk i links to i+1 */
	for (uint32_t i = 0; i < p->nchunks; i++) {
		struct gt_chunk *c = gt_pool_chunk(p, i);
		atomic_store_explicit(&c->state, 0, memory_order_relaxed);
		c->flushed = c->flushed_nrec = 0;
		c->idx = i;
		atomic_store_explicit(&c->next, i + 1 < p->nchunks ? i + 2 : 0, memory_order_relaxed);
	}
	atomic_store(&p->free_head, 1);
	atomic_store(&p->full_head, 0);
	atomic_store(&p->lost, 0);
	return 0;
}

struct gt_chunk *gt_pool_chunk(const struct gt_pool *p, uint32_t idx)
{
	return (struct gt_chunk *)(p->mem + (size_t)idx * p->chunk_size);
}

struct gt_chunk *gt_pool_get(struct gt_pool *p)
{
	uint64_t head = atomic_load_explicit(&p->free_head, memory_order_acquire);
	for (;;) {
		uint32_t i1 = (uint32_t)head;
		if (i1 == 0)
			return NULL;
		struct gt_chunk *c = gt_pool_chunk(p, i1 - 1);
		/* The tag in the high half makes a concurrent pop/push (ABA) fail the CAS. */
		uint64_t next = ((head >> 32) + 1) << 32 | atomic_load_explicit(&c->next, memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(&p->free_head, &head, next, memory_order_acq_rel,
							  memory_order_acquire))
			return c;
	}
}

void gt_pool_release(struct gt_pool *p, struct gt_chunk *c)
{
	atomic_store_explicit(&c->state, 0, memory_order_relaxed);
	c->flushed = c->flushed_nrec = 0;
	uint64_t head = atomic_load_explicit(&p->free_head, memory_order_acquire);
	for (;;) {
		atomic_store_explicit(&c->next, (uint32_t)head, memory_order_relaxed);
		uint64_t nh = ((head >> 32) + 1) << 32 | (c->idx + 1);
		if (atomic_compare_exchange_weak_explicit(&p->free_head, &head, nh, memory_order_acq_rel,
							  memory_order_acquire))
			return;
	}
}

void gt_pool_put_full(struct gt_pool *p, struct gt_chunk *c)
{
	uint32_t head = atomic_load_explicit(&p->full_head, memory_order_acquire);
	for (;;) {
		atomic_store_explicit(&c->next, head, memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(&p->full_head, &head, c->idx + 1, memory_order_acq_rel,
							  memory_order_acquire))
			return;
	}
}

unsigned gt_pool_take_full(struct gt_pool *p, void (*fn)(struct gt_chunk *c, void *arg), void *arg)
{
	uint32_t head = atomic_exchange_explicit(&p->full_head, 0, memory_order_acq_rel);
	/* the list is newest first: reverse it so chunks are handed out in queue order */
	uint32_t rev = 0;
	while (head) {
		struct gt_chunk *c = gt_pool_chunk(p, head - 1);
		uint32_t nx = atomic_load_explicit(&c->next, memory_order_relaxed);
		atomic_store_explicit(&c->next, rev, memory_order_relaxed);
		rev = head;
		head = nx;
	}
	unsigned n = 0;
	while (rev) {
		struct gt_chunk *c = gt_pool_chunk(p, rev - 1);
		rev = atomic_load_explicit(&c->next, memory_order_relaxed);
		fn(c, arg);
		n++;
	}
	return n;
}

struct gt_chunk *gt_ring_refill(struct gt_pool *p, struct gt_chunk *_Atomic *cur, uint32_t size)
{
	struct gt_chunk *c = atomic_load_explicit(cur, memory_order_relaxed);
	if (c) {
		atomic_store_explicit(cur, NULL, memory_order_release);
		gt_pool_put_full(p, c);
	}
	c = gt_pool_get(p);
	if (!c || size > p->chunk_size - GT_CHUNK_HDR) {
		if (c)
			gt_pool_put_full(p, c);
		atomic_fetch_add_explicit(&p->lost, 1, memory_order_relaxed);
		return NULL;
	}
	atomic_store_explicit(cur, c, memory_order_release);
	return c;
}

int gt_chunk_unflushed(struct gt_chunk *c, const unsigned char **ptr, uint32_t *len, uint32_t *nrec)
{
	uint64_t st = atomic_load_explicit(&c->state, memory_order_acquire);
	uint32_t bytes = (uint32_t)st, n = (uint32_t)(st >> 32);
	*ptr = gt_chunk_data(c) + c->flushed;
	*len = bytes - c->flushed;
	*nrec = n - c->flushed_nrec;
	c->flushed = bytes;
	c->flushed_nrec = n;
	return *len > 0;
}
