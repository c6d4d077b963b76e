/* Pointer->size table and string interning of the tap. */
#include <pthread.h>
#include <stdlib.h>

#include "tap/ptrtab.h"
#include "tap/strtab.h"
#include "test.h"

TEST(tap_ptrtab_insert_remove)
{
	static struct gt_ptrtab_slot mem[64];
	struct gt_ptrtab t;
	ASSERT_EQ_INT(gt_ptrtab_init(&t, mem, 64), 0);
	ASSERT_EQ_INT(gt_ptrtab_insert(&t, 0x7f0000001000ull, 4096), 0);
	ASSERT_EQ_INT(gt_ptrtab_insert(&t, 0x7f0000002000ull, 100), 0);
	ASSERT_EQ_U64(gt_ptrtab_remove(&t, 0x7f0000001000ull), 4096);
	ASSERT_EQ_U64(gt_ptrtab_remove(&t, 0x7f0000001000ull), 0); /* double free: unknown */
	ASSERT_EQ_U64(gt_ptrtab_remove(&t, 0x1234), 0);
	ASSERT_EQ_U64(gt_ptrtab_remove(&t, 0x7f0000002000ull), 100);
	ASSERT_EQ_INT(gt_ptrtab_insert(&t, 0, 5), -1);
}

TEST(tap_ptrtab_full_is_counted)
{
	static struct gt_ptrtab_slot mem[8];
	struct gt_ptrtab t;
	ASSERT_EQ_INT(gt_ptrtab_init(&t, mem, 8), 0);
	ASSERT_EQ_INT(gt_ptrtab_init(&t, mem, 6), -22);
	ASSERT_EQ_INT(gt_ptrtab_init(&t, mem, 8), 0);
	for (uint64_t i = 1; i <= 8; i++)
		ASSERT_EQ_INT(gt_ptrtab_insert(&t, i * 256, i), 0);
	ASSERT_EQ_INT(gt_ptrtab_insert(&t, 9 * 256, 9), -1);
	ASSERT_EQ_U64(atomic_load(&t.untracked), 1);
	/* removal leaves a tombstone that a later insert reuses; lookups still find the others */
	ASSERT_EQ_U64(gt_ptrtab_remove(&t, 3 * 256), 3);
	ASSERT_EQ_INT(gt_ptrtab_insert(&t, 10 * 256, 10), 0);
	for (uint64_t i = 1; i <= 8; i++)
		if (i != 3)
			ASSERT_EQ_U64(gt_ptrtab_remove(&t, i * 256), i);
	ASSERT_EQ_U64(gt_ptrtab_remove(&t, 10 * 256), 10);
}

TEST(tap_ptrtab_many_churn)
{
	uint32_t cap = 1024;
	struct gt_ptrtab_slot *mem = calloc(cap, sizeof(*mem));
	struct gt_ptrtab t;
	ASSERT_EQ_INT(gt_ptrtab_init(&t, mem, cap), 0);
	uint64_t live = 0;
	for (int round = 0; round < 50; round++) {
		for (uint64_t i = 1; i <= 500; i++) {
			ASSERT_EQ_INT(gt_ptrtab_insert(&t, (i << 12) + (uint64_t)round, i), 0);
			live += i;
		}
		for (uint64_t i = 1; i <= 500; i++)
			live -= gt_ptrtab_remove(&t, (i << 12) + (uint64_t)round);
	}
	ASSERT_EQ_U64(live, 0);
	free(mem);
}

static char seen[64][64];
static void collect(uint32_t id, const char *s, uint32_t len, void *arg)
{
	int *n = arg;
	if (id < 64)
		snprintf(seen[id], sizeof(seen[id]), "%.*s", (int)len, s);
	(*n)++;
}

TEST(tap_strtab_intern)
{
	size_t sz = gt_strtab_mem_size(64, 4096);
	void *mem = malloc(sz);
	struct gt_strtab t;
	ASSERT_EQ_INT(gt_strtab_init(&t, mem, 64, 4096), 0);
	uint32_t a = gt_strtab_intern(&t, "cuLaunchKernel", 14);
	uint32_t b = gt_strtab_intern(&t, "scale", 5);
	ASSERT_EQ_INT(a, 1);
	ASSERT_EQ_INT(b, 2);
	ASSERT_EQ_INT(gt_strtab_intern(&t, "cuLaunchKernel", 14), 1);
	ASSERT_EQ_INT(gt_strtab_intern(&t, "scalex", 5), 2); /* length counts, not the NUL */
	uint32_t len;
	const char *s = gt_strtab_get(&t, 2, &len);
	ASSERT(s && len == 5 && memcmp(s, "scale", 5) == 0);
	int n = 0;
	ASSERT_EQ_INT(gt_strtab_pending(&t, collect, &n), 2);
	ASSERT_EQ_STR(seen[1], "cuLaunchKernel");
	ASSERT_EQ_INT(gt_strtab_pending(&t, collect, &n), 0); /* written once */
	gt_strtab_intern(&t, "add", 3);
	ASSERT_EQ_INT(gt_strtab_pending(&t, collect, &n), 1);
	ASSERT_EQ_STR(seen[3], "add");
	gt_strtab_mark_unwritten(&t);
	ASSERT_EQ_INT(gt_strtab_pending(&t, collect, &n), 3);
	free(mem);
}

TEST(tap_strtab_full_gives_zero)
{
	size_t sz = gt_strtab_mem_size(8, 16);
	void *mem = malloc(sz);
	struct gt_strtab t;
	ASSERT_EQ_INT(gt_strtab_init(&t, mem, 8, 16), 0);
	ASSERT(gt_strtab_intern(&t, "0123456789", 10) != 0);
	ASSERT_EQ_INT(gt_strtab_intern(&t, "abcdefghij", 10), 0); /* arena full */
	ASSERT(atomic_load(&t.failed) >= 1);
	free(mem);
}

/* An inserter that stalls between claiming a slot and publishing its id must
 * not make other threads spin: they get an id at once (the text is the key). */
TEST(tap_strtab_stalled_inserter_does_not_block)
{
	size_t sz = gt_strtab_mem_size(64, 4096);
	void *mem = calloc(1, sz);
	struct gt_strtab t;
	ASSERT_EQ_INT(gt_strtab_init(&t, mem, 64, 4096), 0);
	uint32_t a = gt_strtab_intern(&t, "kernel_a", 8);
	ASSERT(a != 0);
	/* find a's slot and make it look claimed-but-unpublished, as a preempted inserter leaves it */
	uint32_t slot = UINT32_MAX;
	for (uint32_t i = 0; i < 64; i++)
		if (atomic_load(&t.slots[i].id) == a)
			slot = i;
	ASSERT(slot != UINT32_MAX);
	atomic_store(&t.slots[slot].id, 0);
	uint32_t b = gt_strtab_intern(&t, "kernel_a", 8);
	ASSERT(b != 0);
	uint32_t len = 0;
	const char *s = gt_strtab_get(&t, b, &len);
	ASSERT(s != NULL);
	ASSERT_EQ_INT(len, 8);
	ASSERT(memcmp(s, "kernel_a", 8) == 0);
	ASSERT_EQ_U64(atomic_load(&t.failed), 0);
	free(mem);
}

struct intern_arg {
	struct gt_strtab *t;
	int base;
	int bad;
};

static void *interner(void *arg)
{
	struct intern_arg *a = arg;
	char name[32];
	for (int k = 0; k < 2000; k++) {
		int n = snprintf(name, sizeof(name), "name%d", (a->base + k) % 500);
		uint32_t id = gt_strtab_intern(a->t, name, (size_t)n);
		uint32_t len = 0;
		const char *s = id ? gt_strtab_get(a->t, id, &len) : NULL;
		if (!s || len != (uint32_t)n || memcmp(s, name, len) != 0)
			a->bad++;
	}
	return NULL;
}

static void drop(uint32_t id, const char *s, uint32_t len, void *arg)
{
	(void)id, (void)s, (void)len;
	(*(int *)arg)++;
}

/* Threads interning the same names while a drainer writes pending ones
 * (run under ThreadSanitizer by make check). */
TEST(tap_strtab_threads)
{
	uint32_t cap = 4096;
	size_t sz = gt_strtab_mem_size(cap, 1 << 20);
	void *mem = calloc(1, sz);
	struct gt_strtab t;
	ASSERT_EQ_INT(gt_strtab_init(&t, mem, cap, 1 << 20), 0);
	pthread_t th[4];
	struct intern_arg a[4];
	for (int i = 0; i < 4; i++) {
		a[i] = (struct intern_arg){&t, i * 37, 0};
		pthread_create(&th[i], NULL, interner, &a[i]);
	}
	int written = 0;
	for (int k = 0; k < 200; k++)
		gt_strtab_pending(&t, drop, &written);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ASSERT_EQ_INT(a[i].bad, 0);
	}
	gt_strtab_pending(&t, drop, &written);
	ASSERT(written >= 500);
	free(mem);
}
