#include "tap/strtab.h"

#include <errno.h>
#include <string.h>

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

size_t gt_strtab_mem_size(uint32_t cap, size_t arena)
{
	return (size_t)cap * sizeof(struct gt_str_slot) + (size_t)cap * sizeof(uint32_t) + cap + arena;
}

int gt_strtab_init(struct gt_strtab *t, void *mem, uint32_t cap, size_t arena)
{
	if (!mem || cap < 2 || (cap & (cap - 1)))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	memset(mem, 0, gt_strtab_mem_size(cap, 0));
	t->slots = mem;
	t->cap = cap;
	t->by_id = (_Atomic uint32_t *)(t->slots + cap);
	t->written = (unsigned char *)mem + (size_t)cap * sizeof(struct gt_str_slot) + (size_t)cap * sizeof(uint32_t);
	t->arena = (char *)(t->written + cap);
	t->arena_cap = arena;
	t->first_unwritten = 1;
	return 0;
}

uint32_t gt_strtab_intern(struct gt_strtab *t, const char *s, size_t len)
{
	if (!s)
		return 0;
	if (len > 4096)
		len = 4096;
	uint64_t h = fnv1a(s, len);
	uint32_t mask = t->cap - 1, i = (uint32_t)h & mask;
	for (uint32_t n = 0; n < t->cap / 2; n++, i = (i + 1) & mask) {
		struct gt_str_slot *sl = &t->slots[i];
		uint64_t cur = atomic_load_explicit(&sl->hash, memory_order_acquire);
		if (cur == 0) {
			if (!atomic_compare_exchange_strong_explicit(&sl->hash, &cur, h, memory_order_acq_rel,
								    memory_order_acquire)) {
				if (cur != h)
					continue;
			} else {
				size_t off = atomic_fetch_add_explicit(&t->arena_used, len, memory_order_relaxed);
				uint32_t id = 0;
				if (off + len <= t->arena_cap) {
					id = atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed) + 1;
					if (id >= t->cap)
						id = 0;
				}
				if (id == 0) {
					/* leave the slot claimed but unusable; lookups of this hash give 0 */
					atomic_store_explicit(&sl->id, UINT32_MAX, memory_order_release);
					atomic_fetch_add_explicit(&t->failed, 1, memory_order_relaxed);
					return 0;
				}
				memcpy(t->arena + off, s, len);
				sl->off = off;
				sl->len = (uint32_t)len;
				atomic_store_explicit(&t->by_id[id], i + 1, memory_order_release);
				atomic_store_explicit(&sl->id, id, memory_order_release);
				return id;
			}
		}
		if (cur != h)
			continue;
		/* Same hash.  If its inserter has not published the id yet (it may be
		 * preempted), do not wait: probe on and intern the text again in another
		 * slot.  Readers key by text, so a second id of the same text is harmless. */
		uint32_t id = atomic_load_explicit(&sl->id, memory_order_acquire);
		if (id && id != UINT32_MAX && sl->len == len && memcmp(t->arena + sl->off, s, len) == 0)
			return id;
	}
	atomic_fetch_add_explicit(&t->failed, 1, memory_order_relaxed);
	return 0;
}

const char *gt_strtab_get(const struct gt_strtab *t, uint32_t id, uint32_t *len)
{
	uint32_t si = id && id < t->cap ? atomic_load_explicit(&t->by_id[id], memory_order_acquire) : 0;
	if (si == 0)
		return NULL;
	const struct gt_str_slot *sl = &t->slots[si - 1];
	if (atomic_load_explicit(&sl->id, memory_order_acquire) != id)
		return NULL;
	*len = sl->len;
	return t->arena + sl->off;
}

unsigned gt_strtab_pending(struct gt_strtab *t, void (*fn)(uint32_t id, const char *s, uint32_t len, void *arg),
			   void *arg)
{
	uint32_t last = atomic_load_explicit(&t->next_id, memory_order_acquire);
	if (last >= t->cap)
		last = t->cap - 1;
	unsigned n = 0;
	int contiguous = 1;
	for (uint32_t id = t->first_unwritten; id <= last; id++) {
		if (t->written[id]) {
			if (contiguous)
				t->first_unwritten = id + 1;
			continue;
		}
		uint32_t len;
		const char *s = gt_strtab_get(t, id, &len);
		if (!s) {
			contiguous = 0; /* still being inserted: written next time */
			continue;
		}
		fn(id, s, len, arg);
		t->written[id] = 1;
		n++;
		if (contiguous)
			t->first_unwritten = id + 1;
	}
	return n;
}

void gt_strtab_mark_unwritten(struct gt_strtab *t)
{
	memset(t->written, 0, t->cap);
	t->first_unwritten = 1;
}
