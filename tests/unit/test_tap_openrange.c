/* NVTX start/end ranges open at once: never torn, losses counted, ends on other threads. */
#include <pthread.h>
#include <stdlib.h>

#include "tap/openrange.h"
#include "test.h"

/* what a start of range `id` stores, so an end can check it got the same range */
#define NAME_OF(id) ((uint32_t)((id) * 2654435761u))
#define START_OF(id) ((id) * 1000u + 7u)

TEST(tap_open_more_than_fit_are_lost_not_torn)
{
	static struct gt_open_range mem[64];
	struct gt_open_table t;
	gt_open_init(&t, mem, 64);
	int lost = 0;
	for (uint64_t id = 1; id <= 100; id++)
		if (gt_open_start(&t, id, START_OF(id), NAME_OF(id), 3, 9) < 0)
			lost++;
	ASSERT_EQ_INT(lost, 36); /* 64 slots: the rest is counted, nothing overwritten */
	int found = 0;
	for (uint64_t id = 1; id <= 100; id++) {
		struct gt_open_range o;
		if (!gt_open_end(&t, id, &o))
			continue;
		found++;
		ASSERT_EQ_U64(o.start_ns, START_OF(id));
		ASSERT_EQ_U64(o.name_id, NAME_OF(id));
		ASSERT_EQ_INT(o.domain_id, 3);
		ASSERT_EQ_INT(o.tid, 9);
	}
	ASSERT_EQ_INT(found, 64);
	/* ended ranges are gone; the slots are free again */
	struct gt_open_range o;
	ASSERT_EQ_INT(gt_open_end(&t, 1, &o), 0);
	ASSERT_EQ_INT(gt_open_start(&t, 101, 1, 1, 1, 1), 0);
	ASSERT_EQ_INT(gt_open_end(&t, 101, &o), 1);
}

struct ender_arg {
	struct gt_open_table *t;
	_Atomic uint64_t *next_started;
	int ended, torn;
};

static void *ender(void *arg)
{
	struct ender_arg *a = arg;
	uint64_t done = 0;
	while (done < 20000) {
		uint64_t upto = atomic_load(a->next_started);
		for (; done < upto; done++) {
			uint64_t id = done + 1;
			if (id % 2)
				continue; /* odd ids are ended by the starter */
			struct gt_open_range o;
			if (gt_open_end(a->t, id, &o)) {
				a->ended++;
				if (o.start_ns != START_OF(id) || o.name_id != NAME_OF(id))
					a->torn++;
			}
		}
	}
	return NULL;
}

/* One thread starts ranges (many open at once), another ends half of them:
 * every end sees exactly what its start stored.  Under ThreadSanitizer too. */
TEST(tap_open_start_end_threads)
{
	struct gt_open_range *mem = calloc(256, sizeof(*mem));
	struct gt_open_table t;
	gt_open_init(&t, mem, 256);
	_Atomic uint64_t started = 0;
	struct ender_arg a = {&t, &started, 0, 0};
	pthread_t th;
	pthread_create(&th, NULL, ender, &a);
	int lost = 0, mine = 0, torn = 0;
	for (uint64_t id = 1; id <= 20000; id++) {
		if (gt_open_start(&t, id, START_OF(id), NAME_OF(id), 0, 1) < 0 && (id % 2 == 0 || id <= 19900))
			lost++; /* a range that was to be ended */
		atomic_store(&started, id);
		if (id > 100 && (id - 100) % 2) {
			struct gt_open_range o;
			uint64_t e = id - 100;
			if (gt_open_end(&t, e, &o)) {
				mine++;
				if (o.start_ns != START_OF(e) || o.name_id != NAME_OF(e))
					torn++;
			}
		}
	}
	pthread_join(th, NULL);
	ASSERT_EQ_INT(torn, 0);
	ASSERT_EQ_INT(a.torn, 0);
	/* every range to be ended was ended once or counted lost (the last 50 odd ones stay open) */
	ASSERT_EQ_INT(mine + a.ended + lost, 20000 - 50);
	free(mem);
}
