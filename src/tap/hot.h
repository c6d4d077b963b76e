/*
 * tap/hot.h — the per-call path of the hooks, all of it: guard, clock, the
 * thread's slot, its API counters, a record reserved and committed in its chunk.
 *
 * Invariants: no lock, allocation, stdio or system call besides clock_gettime;
 * no read-modify-write on memory other threads write: counters live in the
 * calling thread's slot (one writer; the writer thread sums them,
 * gt_tap_api_total); out-of-line work only on the rare paths (first call of a
 * thread, a full chunk).  Timestamps: CLOCK_MONOTONIC plus the epoch offset
 * the writer refreshes every 100 ms (gt_clock_sync), so durations never go
 * negative when the wall clock is stepped.
 *
 * Three ways through a hook, chosen as the call starts by one load of
 * gt_tap.stamp (GT_STAMP_* bits, kept by gt_tap_stamp_update):
 *  - recorded in ticks (GT_STAMP_REC: API records wanted, a capture window
 *    open, the time-stamp counter usable, launch hold off): two counter reads
 *    around the real call, counted in `ticks`; the record carries the ticks
 *    and the API's index (GT_API_MEM_TICKS) and the writer thread turns them
 *    into epoch nanoseconds and a name id (gt_ticks_epoch, tap/writer.c), so
 *    the program's thread pays neither clock_gettime nor the name table;
 *  - stamped in nanoseconds (GT_STAMP_NS: launch hold on, which times the
 *    queue, or no usable counter): epoch timestamps around the real call,
 *    counted in `ns`, recorded by gt_hot_api_done if the window is still open
 *    when it returns;
 *  - counted only (stamp 0: GPUTAP_TRACE=metrics, outside every capture
 *    window, no API records): the real call between two gt_ticks() reads
 *    (tap/ticks.h), counted in `ticks` by gt_hot_api_counted — a few loads,
 *    two counter reads and two stores to the thread's own slot.
 * A call that started before a window opened is not recorded.
 */
#ifndef GT_TAP_HOT_H
#define GT_TAP_HOT_H
#include <string.h>
#include "tap/tap.h"
#include "tap/ticks.h"

#define GT_RLX memory_order_relaxed
/* The per-call helpers are forced inline: after a 3 µs driver call the hook runs with cold caches,
 * and one straight run of code costs less than calls spread over the library (bench/overhead/inproc). */
#define GT_HOT static inline __attribute__((always_inline))
static inline uint64_t gt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)((int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec + atomic_load_explicit(&gt_clock_offset, GT_RLX));
}
/* 1 (guard raised) when this call is recorded; the first hooked call of a process makes it live. */
GT_HOT int gt_hot_enter(struct gt_tls *t)
{
	if (__builtin_expect(!atomic_load_explicit(&gt_tap.on, GT_RLX), 0)) {
		if (!atomic_load_explicit(&gt_tap.armed, GT_RLX) || t->guard)
			return 0;
		gt_tap_touch(); /* e.g. a fork child calling through pointers its parent looked up */
		if (!atomic_load(&gt_tap.on))
			return 0;
	}
	return t->guard == 0 ? ++t->guard : 0;
}
/* Enter: recursion guard and the global switch; `t_active` says whether to record; leave restores errno. */
#define GT_HOOK_ENTER(t)                                                                           \
	struct gt_tls *t = &gt_tls;                                                                \
	int t##_active = gt_hot_enter(t)
#define GT_HOOK_LEAVE(t, saved_errno) (t->guard--, errno = (saved_errno))

GT_HOT struct gt_slot *gt_hot_slot(void)
{
	struct gt_tls *t = &gt_tls;
	if (__builtin_expect(t->slot != NULL && t->gen == atomic_load_explicit(&gt_tap.gen, GT_RLX), 1))
		return t->slot;
	return gt_tap_slot_claim(); /* first record of this thread (or of a fork child) */
}
/* Space for `size` bytes in the chunk `*cur` (a fresh chunk when it is full); NULL = counted lost. */
static inline void *gt_ring_reserve(struct gt_pool *p, struct gt_chunk *_Atomic *cur, uint32_t size,
				    struct gt_chunk **out)
{
	struct gt_chunk *c = atomic_load_explicit(cur, GT_RLX);
	if (!c || (uint32_t)atomic_load_explicit(&c->state, GT_RLX) + (size_t)size > p->chunk_size - GT_CHUNK_HDR)
		c = gt_ring_refill(p, cur, size);
	*out = c;
	return c ? gt_chunk_data(c) + (uint32_t)atomic_load_explicit(&c->state, GT_RLX) : NULL;
}
/* Publish the reserved record: the drainer sees whole records only. */
static inline void gt_ring_commit(struct gt_chunk *c, uint32_t size)
{
	uint64_t st = atomic_load_explicit(&c->state, GT_RLX);
	atomic_store_explicit(&c->state, ((st >> 32) + 1) << 32 | ((uint32_t)st + size), memory_order_release);
}
static inline int gt_ring_append(struct gt_pool *p, struct gt_chunk *_Atomic *cur, const void *rec, uint32_t size)
{
	struct gt_chunk *c;
	void *dst = gt_ring_reserve(p, cur, size, &c);
	if (!dst)
		return -1;
	memcpy(dst, rec, size);
	gt_ring_commit(c, size);
	return 0;
}
/* Count one call of `api` in this thread's slot (its only writer: plain load and store), its
 * duration t1 - t0 added to `*acc` (the slot's ns or ticks of `api`). */
GT_HOT void gt_hot_count_in(struct gt_api_tstat *c, _Atomic uint64_t *acc, int api, uint64_t t0, uint64_t t1)
{
	uint64_t n = atomic_load_explicit(&c->count, GT_RLX);
	if (__builtin_expect(n == 0, 0))
		gt_tap_api_first(api);
	atomic_store_explicit(&c->count, n + 1, GT_RLX);
	atomic_store_explicit(acc, atomic_load_explicit(acc, GT_RLX) + (t1 > t0 ? t1 - t0 : 0), GT_RLX);
}
static inline void gt_hot_count(struct gt_slot *s, int api, uint64_t t0, uint64_t t1)
{
	gt_hot_count_in(&s->api[api], &s->api[api].ns, api, t0, t1);
}
/* How a call starting now is timed and kept: 0 (counted only) or GT_STAMP_* bits. */
GT_HOT int gt_hot_stamped(void)
{
	return atomic_load_explicit(&gt_tap.stamp, GT_RLX);
}
/* 1 while API records are written (wanted, and a capture window open): the stamp's GT_STAMP_REC. */
GT_HOT int gt_hot_recording(void)
{
	return (atomic_load_explicit(&gt_tap.stamp, GT_RLX) & GT_STAMP_REC) != 0;
}
/* The clock of a call: epoch ns (GT_STAMP_NS), else ticks (tap/ticks.h; GT_STAMP_REC alone is
 * chosen only where the time-stamp counter is in use). */
GT_HOT uint64_t gt_hot_clock(int stamped)
{
	if (stamped & GT_STAMP_NS)
		return gt_now_ns();
#if defined(__x86_64__)
	if (stamped)
		return __builtin_ia32_rdtsc();
#endif
	return gt_ticks();
}
/* A counted-only call returned: t0, t1 are ticks. */
GT_HOT void gt_hot_api_counted(int api, uint64_t t0, uint64_t t1)
{
	struct gt_slot *s = gt_hot_slot();
	if (__builtin_expect(!s, 0)) {
		gt_tap_api_noslot_ticks(api, t0, t1);
		return;
	}
	gt_hot_count_in(&s->api[api], &s->api[api].ticks, api, t0, t1);
}
/* This thread's GT_REC_API record of a call, `flags` added to the failure flag (the record is
 * dropped and counted lost when no chunk is free). */
GT_HOT void gt_hot_api_put(struct gt_slot *s, uint32_t name_id, uint16_t flags, int api, uint64_t t0, uint64_t t1,
			   int result, uint64_t bytes, int copy_kind, uint64_t ptr, uint64_t corr)
{
	struct gt_chunk *c;
	struct gt_rec_api *r = gt_ring_reserve(&gt_tap.pool, &s->cur, sizeof(*r), &c);
	if (!r)
		return;
	*r = (struct gt_rec_api){.h = {.type = GT_REC_API, .size = sizeof(*r), .tid = s->tid},
				 .name_id = name_id,
				 .domain = gt_api_is_runtime(api) ? GT_DOM_RUNTIME : GT_DOM_DRIVER,
				 .copy_kind = (int8_t)copy_kind,
				 .flags = (uint16_t)(flags | (result != 0 ? GT_API_FAILED : 0)),
				 .result = result,
				 .start_ns = t0,
				 .end_ns = t1,
				 .bytes = bytes,
				 .corr_id = corr,
				 .ptr = ptr};
	gt_ring_commit(c, sizeof(*r));
}
/* A recorded call returned, timed in ticks (`ticked`, stamp GT_STAMP_REC alone) or in epoch ns:
 * count it, and write its record while the window is still open — in ticks and with the API's
 * index for the writer to convert, or in ns with its name id. */
GT_HOT void gt_hot_api_rec(int ticked, int api, uint64_t t0, uint64_t t1, int result, uint64_t bytes, int copy_kind,
			   uint64_t ptr, uint64_t corr)
{
	struct gt_slot *s = gt_hot_slot();
	if (__builtin_expect(!s, 0)) {
		(ticked ? gt_tap_api_noslot_ticks : gt_tap_api_noslot)(api, t0, t1);
		return;
	}
	gt_hot_count_in(&s->api[api], ticked ? &s->api[api].ticks : &s->api[api].ns, api, t0, t1);
	if (gt_hot_recording()) /* the window may have closed during the call */
		gt_hot_api_put(s, ticked ? (uint32_t)api : gt_tap.api_name_id[api], ticked ? GT_API_MEM_TICKS : 0, api,
			       t0, t1, result, bytes, copy_kind, ptr, corr);
}
/* A stamped call returned (t0, t1 epoch ns): counted, recorded when API records are wanted and the
 * window is open. */
static inline void gt_hot_api_done(int api, uint64_t t0, uint64_t t1, int result, uint64_t bytes, int copy_kind,
				   uint64_t ptr, uint64_t corr)
{
	gt_hot_api_rec(0, api, t0, t1, result, bytes, copy_kind, ptr, corr);
}
/* A call timed by gt_hot_clock(stamped) returned: recorded (stamped) or only counted. */
static inline void gt_hot_api_end(int stamped, int api, uint64_t t0, uint64_t t1, int result, uint64_t bytes,
				  int copy_kind, uint64_t ptr, uint64_t corr)
{
	if (stamped)
		gt_hot_api_rec(!(stamped & GT_STAMP_NS), api, t0, t1, result, bytes, copy_kind, ptr, corr);
	else
		gt_hot_api_counted(api, t0, t1);
}
#endif
