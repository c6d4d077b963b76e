/* The out-of-line side of the hot path (tap/hot.h): taking a slot, counter sums, records of the slower paths. */
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/memgen.h"
#include "tap/api.h"
#include "tap/capture_tap.h"
#include "tap/tap.h"
#include "trace/trace_io.h"

__thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec")));
extern pthread_key_t gt_tap_thread_key;

struct gt_slot *gt_tap_slot(void)
{
	return gt_hot_slot();
}

static struct gt_slot *slot_claim(void);

/* errno kept: the counted-only path of a hook does not save it (tap/hot.h). */
struct gt_slot *gt_tap_slot_claim(void)
{
	int e = errno;
	struct gt_slot *s = slot_claim();
	errno = e;
	return s;
}

static struct gt_slot *slot_claim(void)
{
	struct gt_tls *t = &gt_tls;
	unsigned gen = atomic_load_explicit(&gt_tap.gen, memory_order_acquire);
	t->slot = NULL;
	if (!gt_tap.slots)
		return NULL;
	for (unsigned i = 0; i < GT_MAX_THREADS; i++) {
		struct gt_slot *s = &gt_tap.slots[i];
		int expect = 0;
		if (atomic_load_explicit(&s->used, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&s->used, &expect, 1)) {
			s->tid = (uint32_t)syscall(SYS_gettid);
			s->depth = 0;
			atomic_store_explicit(&s->cur, NULL, memory_order_relaxed);
			unsigned n = atomic_load(&gt_tap.nslots);
			while (n < i + 1 && !atomic_compare_exchange_weak(&gt_tap.nslots, &n, i + 1))
				;
			t->slot = s;
			t->gen = gen;
			pthread_setspecific(gt_tap_thread_key, s);
			return s;
		}
	}
	return NULL;
}

void gt_tap_put(void *rec, uint32_t size)
{
	struct gt_slot *s = gt_hot_slot();
	if (!s) {
		atomic_fetch_add_explicit(&gt_tap.pool.lost, 1, memory_order_relaxed);
		return;
	}
	struct gt_rec_hdr *h = rec;
	if (h->tid == 0 && !(h->type < 32 && (GT_REC_THREADLESS_MASK >> h->type) & 1u))
		h->tid = s->tid;
	gt_ring_append(&gt_tap.pool, &s->cur, rec, size);
}

static int stamp_now(void)
{
	int rec = gt_tap.want_api_recs && atomic_load(&gt_tap.cap_live);
	int ns = atomic_load(&gt_tap.hold_armed) || (rec && !gt_ticks_tsc);
	return (rec ? GT_STAMP_REC : 0) | (ns ? GT_STAMP_NS : 0);
}

/* Store, then check that the inputs still give what was stored: when two changes race, the last
 * store is followed by its writer's check, which sees both (all accesses sequentially consistent). */
void gt_tap_stamp_update(void)
{
	for (;;) {
		int v = stamp_now();
		atomic_store(&gt_tap.stamp, v);
		if (stamp_now() == v)
			return;
	}
}

void gt_tap_api_first(int api)
{
	if (atomic_load(&gt_tap.api_first[api]) == 0) {
		uint64_t z = 0;
		atomic_compare_exchange_strong(&gt_tap.api_first[api], &z, atomic_fetch_add(&gt_tap.first_seq, 1) + 1);
	}
}

void gt_tap_api_noslot(int api, uint64_t t0, uint64_t t1)
{
	gt_tap_api_first(api);
	atomic_fetch_add_explicit(&gt_tap.api_noslot[api].count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&gt_tap.api_noslot[api].ns, t1 > t0 ? t1 - t0 : 0, memory_order_relaxed);
}

void gt_tap_api_noslot_ticks(int api, uint64_t t0, uint64_t t1)
{
	gt_tap_api_first(api);
	atomic_fetch_add_explicit(&gt_tap.api_noslot[api].count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&gt_tap.api_noslot[api].ticks, t1 > t0 ? t1 - t0 : 0, memory_order_relaxed);
}

uint64_t gt_tap_api_total(int api, uint64_t *ns)
{
	uint64_t n = atomic_load_explicit(&gt_tap.api_noslot[api].count, memory_order_relaxed);
	uint64_t t = atomic_load_explicit(&gt_tap.api_noslot[api].ns, memory_order_relaxed);
	uint64_t k = atomic_load_explicit(&gt_tap.api_noslot[api].ticks, memory_order_relaxed);
	unsigned used = gt_tap.slots ? atomic_load(&gt_tap.nslots) : 0;
	for (unsigned i = 0; i < used; i++) {
		n += atomic_load_explicit(&gt_tap.slots[i].api[api].count, memory_order_relaxed);
		t += atomic_load_explicit(&gt_tap.slots[i].api[api].ns, memory_order_relaxed);
		k += atomic_load_explicit(&gt_tap.slots[i].api[api].ticks, memory_order_relaxed);
	}
	if (ns)
		*ns = t + (k ? gt_ticks_ns(k) : 0);
	return n;
}

void gt_tap_counters_reset(void)
{
	unsigned used = gt_tap.slots ? atomic_load(&gt_tap.nslots) : 0;
	for (unsigned i = 0; i < used; i++) {
		memset(gt_tap.slots[i].api, 0, sizeof(gt_tap.slots[i].api));
		gt_tap.slots[i].ranges = 0;
	}
	memset(gt_tap.api_noslot, 0, sizeof(gt_tap.api_noslot));
	memset(gt_tap.api_first, 0, sizeof(gt_tap.api_first));
	atomic_store(&gt_tap.nslots, 0);
	atomic_store(&gt_tap.mem_used, 0);
	atomic_store(&gt_tap.first_seq, 0);
	atomic_store(&gt_tap.range_seq, 0);
}

uint64_t gt_tap_range_id(struct gt_slot *s)
{
	/* slot i hands out i+1, i+1+M, i+1+2M, ... (M = GT_MAX_THREADS + 1); threads without a slot
	 * take multiples of M from a shared counter: every id is distinct, none is 0 */
	const uint64_t m = GT_MAX_THREADS + 1;
	if (!s)
		return (atomic_fetch_add_explicit(&gt_tap.range_seq, 1, memory_order_relaxed) + 1) * m;
	return (uint64_t)(s - gt_tap.slots) + 1 + (s->ranges++) * m;
}

void gt_tap_thread_exit(void *arg)
{
	struct gt_slot *s = arg;
	if (!s || atomic_load(&gt_tap.stopped))
		return;
	struct gt_chunk *c = atomic_exchange(&s->cur, NULL);
	if (c)
		gt_pool_put_full(&gt_tap.pool, c);
	gt_tls.slot = NULL;
	atomic_store(&s->used, 0);
}

void gt_tap_api_count(int api, uint64_t t0, uint64_t t1)
{
	struct gt_slot *s = gt_hot_slot();
	if (s)
		gt_hot_count(s, api, t0, t1);
	else
		gt_tap_api_noslot(api, t0, t1);
}

void gt_tap_api_record(int api, uint32_t tid, uint64_t t0, uint64_t t1, int result, uint64_t bytes, int copy_kind,
		       uint64_t ptr, uint64_t corr, uint16_t flags)
{
	if (!gt_hot_recording())
		return;
	struct gt_rec_api r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_API;
	r.h.size = sizeof(r);
	r.h.tid = tid;
	r.name_id = gt_tap.api_name_id[api];
	r.domain = gt_api_is_runtime(api) ? GT_DOM_RUNTIME : GT_DOM_DRIVER;
	r.copy_kind = (int8_t)copy_kind;
	r.flags = (uint16_t)(flags | (result != 0 ? GT_API_FAILED : 0));
	r.result = result;
	r.start_ns = t0;
	r.end_ns = t1;
	r.bytes = bytes;
	r.corr_id = corr;
	r.ptr = ptr;
	gt_tap_put(&r, sizeof(r));
}

void gt_tap_note(uint32_t what, int32_t detail, int32_t result)
{
	if (gt_note_gpu_incomplete(what))
		atomic_store(&gt_tap.gpu_incomplete, 1);
	struct gt_rec_note n;
	memset(&n, 0, sizeof(n));
	n.h.type = GT_REC_NOTE;
	n.h.size = sizeof(n);
	n.what = what;
	n.detail = detail;
	n.result = result;
	n.ts_ns = gt_now_ns();
	gt_tap_put(&n, sizeof(n));
}

void gt_tap_api_done(int api, uint64_t t0, uint64_t t1, int result, uint64_t bytes, int copy_kind,
		     uint64_t ptr, uint64_t corr)
{
	gt_hot_api_done(api, t0, t1, result, bytes, copy_kind, ptr, corr);
}

void gt_tap_mem_alloc(uint64_t ptr, uint64_t size)
{
	gt_memgen_bump(gt_tap.memgen);
	if (gt_ptrtab_insert(&gt_tap.ptrs, ptr, size) == 0)
		gt_api_on_mem(1, size,
			      atomic_fetch_add_explicit(&gt_tap.mem_used, (int64_t)size, memory_order_relaxed) +
				      (int64_t)size);
}

void gt_tap_mem_free(uint64_t ptr)
{
	uint64_t size = gt_ptrtab_remove(&gt_tap.ptrs, ptr);
	gt_memgen_bump(gt_tap.memgen);
	if (size)
		gt_api_on_mem(0, size,
			      atomic_fetch_sub_explicit(&gt_tap.mem_used, (int64_t)size, memory_order_relaxed) -
				      (int64_t)size);
}
