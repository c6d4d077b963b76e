/* The tap's record pool: appends, chunk hand-over, exact loss accounting. */
#include <pthread.h>
#include <stdlib.h>

#include "gputap/format.h"
#include "tap/hot.h"
#include "test.h"

static void count_chunk(struct gt_chunk *c, void *arg)
{
	uint64_t *n = arg;
	const unsigned char *p;
	uint32_t len, nrec;
	gt_chunk_unflushed(c, &p, &len, &nrec);
	n[0] += nrec;
	n[1] += len;
}

TEST(tap_ring_append_and_take)
{
	static unsigned char mem[8 * 4096];
	struct gt_pool p;
	ASSERT_EQ_INT(gt_pool_init(&p, mem, sizeof(mem), 4096), 0);
	ASSERT_EQ_INT(p.nchunks, 8);
	struct gt_chunk *_Atomic cur = NULL;
	uint64_t rec[8] = {0};
	int ok = 0;
	for (int i = 0; i < 100; i++) {
		rec[0] = (uint64_t)i;
		if (gt_ring_append(&p, &cur, rec, sizeof(rec)) == 0)
			ok++;
	}
	ASSERT_EQ_INT(ok, 100);
	ASSERT_EQ_U64(atomic_load(&p.lost), 0);
	uint64_t n[2] = {0, 0};
	unsigned taken = gt_pool_take_full(&p, count_chunk, n);
	ASSERT(taken >= 1);
	/* what is still in the current chunk */
	const unsigned char *ptr;
	uint32_t len, nrec;
	gt_chunk_unflushed(cur, &ptr, &len, &nrec);
	ASSERT_EQ_U64(n[0] + nrec, 100);
	ASSERT_EQ_U64(n[1] + len, 100 * sizeof(rec));
	/* the first record of the current chunk continues where the full ones stopped */
	ASSERT_EQ_U64(((const uint64_t *)ptr)[0], n[0]);
}

TEST(tap_ring_loss_is_exact)
{
	static unsigned char mem[4 * 1024];
	struct gt_pool p;
	ASSERT_EQ_INT(gt_pool_init(&p, mem, sizeof(mem), 1024), 0);
	struct gt_chunk *_Atomic cur = NULL;
	uint64_t rec[8] = {0};
	int stored = 0, failed = 0;
	for (int i = 0; i < 1000; i++) {
		if (gt_ring_append(&p, &cur, rec, sizeof(rec)) == 0)
			stored++;
		else
			failed++;
	}
	ASSERT(failed > 0);
	ASSERT_EQ_U64(atomic_load(&p.lost), (uint64_t)failed);
	uint64_t n[2] = {0, 0};
	gt_pool_take_full(&p, count_chunk, n);
	if (cur)
		count_chunk(cur, n);
	ASSERT_EQ_U64(n[0], (uint64_t)stored);
	/* per chunk (1024 - header) / 64 records fit; 4 chunks */
	ASSERT_EQ_INT(stored, 4 * (int)((1024 - GT_CHUNK_HDR) / 64));
}

TEST(tap_ring_release_makes_room)
{
	static unsigned char mem[2 * 1024];
	struct gt_pool p;
	ASSERT_EQ_INT(gt_pool_init(&p, mem, sizeof(mem), 1024), 0);
	struct gt_chunk *a = gt_pool_get(&p), *b = gt_pool_get(&p);
	ASSERT(a && b && a != b);
	ASSERT(gt_pool_get(&p) == NULL);
	gt_pool_release(&p, b);
	ASSERT(gt_pool_get(&p) == b);
}

TEST(tap_ring_rejects_tiny_pool)
{
	static unsigned char mem[1024];
	struct gt_pool p;
	ASSERT_EQ_INT(gt_pool_init(&p, mem, sizeof(mem), 1024), -22);
	ASSERT_EQ_INT(gt_pool_init(&p, NULL, 4096, 1024), -22);
}

struct thr_arg {
	struct gt_pool *p;
	int n;
	int stored;
};

static void *appender(void *arg)
{
	struct thr_arg *a = arg;
	struct gt_chunk *_Atomic cur = NULL;
	uint64_t rec[4] = {0};
	for (int i = 0; i < a->n; i++)
		if (gt_ring_append(a->p, &cur, rec, sizeof(rec)) == 0)
			a->stored++;
	struct gt_chunk *c = atomic_load(&cur);
	if (c)
		gt_pool_put_full(a->p, c);
	return NULL;
}

static void drain_release(struct gt_chunk *c, void *arg)
{
	uint64_t *n = arg;
	const unsigned char *ptr;
	uint32_t len, nrec;
	gt_chunk_unflushed(c, &ptr, &len, &nrec);
	*n += nrec;
}

TEST(tap_ring_threads_account_every_record)
{
	size_t bytes = 64 * 4096;
	unsigned char *mem = malloc(bytes);
	struct gt_pool p;
	ASSERT_EQ_INT(gt_pool_init(&p, mem, bytes, 4096), 0);
	pthread_t t[8];
	struct thr_arg a[8];
	for (int i = 0; i < 8; i++) {
		a[i] = (struct thr_arg){&p, 20000, 0};
		pthread_create(&t[i], NULL, appender, &a[i]);
	}
	/* a concurrent drainer releasing chunks while the threads append */
	uint64_t drained = 0;
	for (int k = 0; k < 2000; k++) {
		struct gt_chunk *list[64];
		int nl = 0;
		uint32_t head = atomic_exchange(&p.full_head, 0);
		while (head && nl < 64) {
			struct gt_chunk *c = gt_pool_chunk(&p, head - 1);
			head = atomic_load(&c->next);
			list[nl++] = c;
		}
		for (int i = 0; i < nl; i++) {
			drain_release(list[i], &drained);
			gt_pool_release(&p, list[i]);
		}
	}
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	gt_pool_take_full(&p, drain_release, &drained);
	uint64_t stored = 0;
	for (int i = 0; i < 8; i++)
		stored += (uint64_t)a[i].stored;
	ASSERT_EQ_U64(stored + atomic_load(&p.lost), 8 * 20000);
	ASSERT_EQ_U64(drained, stored);
	free(mem);
}

/* Many small chunks, many switches: the free and full lists are popped and
 * pushed from every thread at once.  Run under ThreadSanitizer by make check. */
struct small_arg {
	struct gt_pool *p;
	_Atomic int *stop;
	uint64_t stored;
};

static void *small_appender(void *arg)
{
	struct small_arg *a = arg;
	struct gt_chunk *_Atomic cur = NULL;
	uint64_t rec[8] = {0};
	for (int i = 0; i < 30000; i++)
		if (gt_ring_append(a->p, &cur, rec, sizeof(rec)) == 0)
			a->stored++;
	struct gt_chunk *c = atomic_load(&cur);
	if (c)
		gt_pool_put_full(a->p, c);
	return NULL;
}

static void count_and_release(struct gt_chunk *c, void *arg)
{
	uint64_t *n = arg;
	const unsigned char *ptr;
	uint32_t len, nrec;
	gt_chunk_unflushed(c, &ptr, &len, &nrec);
	*n += nrec;
}

struct taken {
	struct gt_chunk *c[4096];
	int n;
};

static void take_one(struct gt_chunk *c, void *arg)
{
	struct taken *t = arg;
	t->c[t->n++] = c;
}

TEST(tap_ring_chunk_lists_race_free)
{
	size_t csize = GT_CHUNK_HDR + 192; /* three records a chunk */
	size_t bytes = 24 * csize;
	unsigned char *mem = malloc(bytes);
	struct gt_pool p;
	ASSERT_EQ_INT(gt_pool_init(&p, mem, bytes, csize), 0);
	pthread_t t[6];
	struct small_arg a[6];
	for (int i = 0; i < 6; i++) {
		a[i] = (struct small_arg){&p, NULL, 0};
		pthread_create(&t[i], NULL, small_appender, &a[i]);
	}
	uint64_t drained = 0;
	static struct taken tk;
	for (int k = 0; k < 20000; k++) {
		tk.n = 0;
		gt_pool_take_full(&p, take_one, &tk);
		for (int i = 0; i < tk.n; i++) {
			count_and_release(tk.c[i], &drained);
			gt_pool_release(&p, tk.c[i]);
		}
	}
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	gt_pool_take_full(&p, count_and_release, &drained);
	uint64_t stored = 0;
	for (int i = 0; i < 6; i++)
		stored += a[i].stored;
	ASSERT_EQ_U64(stored + atomic_load(&p.lost), 6 * 30000);
	ASSERT_EQ_U64(drained, stored);
	free(mem);
}
