/*
 * tap/ring.h — the tap's bounded record memory: a pool of fixed-size chunks.
 *
 * Owns: one memory area (given by the caller, allocated once), cut into
 * chunks; a lock-free free list and a lock-free list of full chunks; the
 * exact count of records that could not be stored.
 *
 * Invariants:
 *  - a chunk is owned by at most one appending thread (its `cur` pointer) or
 *    by a list; only the single draining thread moves chunks from the full
 *    list back to the free list, so a chunk is never reused under a reader;
 *  - `state` packs (records << 32 | bytes) committed, published with release
 *    after the bytes are written, so a drainer sees whole records only;
 *  - every append either stores the record or adds exactly 1 to `lost`;
 *  - `next` is atomic (relaxed): a popper may read the link of a chunk that
 *    another thread has just taken; the tagged CAS then fails and it retries.
 */
#ifndef GT_TAP_RING_H
#define GT_TAP_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct gt_chunk {
	_Atomic uint64_t state; /* committed: records << 32 | bytes of data */
	uint32_t flushed;       /* bytes already handed to the drainer (drainer only) */
	uint32_t flushed_nrec;
	_Atomic uint32_t next; /* list link: index + 1, 0 = end; read by threads racing on a list head */
	uint32_t idx;
	uint64_t pad;
	/* data follows, 8-aligned */
};

struct gt_pool {
	unsigned char *mem;
	size_t chunk_size; /* header included */
	uint32_t nchunks;
	_Atomic uint64_t free_head; /* tag << 32 | (index + 1) */
	_Atomic uint32_t full_head; /* index + 1 */
	_Atomic uint64_t lost;      /* records dropped: no chunk was free; rare, so a shared add */
};

#define GT_CHUNK_HDR sizeof(struct gt_chunk)

/* Cut `bytes` of `mem` into chunks of `chunk_size`. 0, or -EINVAL if fewer than 2 chunks fit. */
int gt_pool_init(struct gt_pool *p, void *mem, size_t bytes, size_t chunk_size);
struct gt_chunk *gt_pool_chunk(const struct gt_pool *p, uint32_t idx);
static inline unsigned char *gt_chunk_data(struct gt_chunk *c)
{
	return (unsigned char *)c + GT_CHUNK_HDR;
}
/* Pop a free chunk (emptied), NULL if none. */
struct gt_chunk *gt_pool_get(struct gt_pool *p);
/* Give a chunk back to the free list (drainer only). */
void gt_pool_release(struct gt_pool *p, struct gt_chunk *c);
/* Queue a chunk the appender has finished with. */
void gt_pool_put_full(struct gt_pool *p, struct gt_chunk *c);
/* Take every queued chunk, oldest first; calls fn for each, then the caller releases them. Returns count. */
unsigned gt_pool_take_full(struct gt_pool *p, void (*fn)(struct gt_chunk *c, void *arg), void *arg);

/*
 * The slow side of appending (the fast side, gt_ring_reserve/commit/append,
 * is in tap/hot.h): the chunk `*cur` cannot take `size` more bytes, so queue
 * it and take a fresh one.  Returns the fresh chunk, or NULL when none is free
 * (the record is counted in p->lost).  Lock-free; allocates nothing.
 */
struct gt_chunk *gt_ring_refill(struct gt_pool *p, struct gt_chunk *_Atomic *cur, uint32_t size);

/* Bytes committed in `c` and not yet flushed: sets *ptr, *len, *nrec and marks them flushed. */
int gt_chunk_unflushed(struct gt_chunk *c, const unsigned char **ptr, uint32_t *len, uint32_t *nrec);

#endif
