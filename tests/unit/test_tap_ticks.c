/* The clock of counted-only calls (tap/ticks.h): the choice of the counter and the conversion. */
#include <time.h>

#include "tap/ticks.h"
#include "test.h"

TEST(tap_ticks_scale)
{
	ASSERT_EQ_U64(gt_ticks_scale(3000, 3000, 1000), 1000);
	ASSERT_EQ_U64(gt_ticks_scale(1000, 3000, 1000), 333);
	ASSERT_EQ_U64(gt_ticks_scale(0, 3000, 1000), 0);
	ASSERT_EQ_U64(gt_ticks_scale(5, 0, 1000), 0); /* no rate yet */
	/* a week of ticks at 3 GHz: no overflow in the product */
	uint64_t week = 7ull * 86400 * 3000000000ull;
	ASSERT_EQ_U64(gt_ticks_scale(week, 3000000000ull, 1000000000ull), 7ull * 86400 * 1000000000ull);
	ASSERT_EQ_U64(gt_ticks_scale(1ull << 62, 1ull << 62, 1000000000ull), 1000000000ull);
}

TEST(tap_ticks_fit)
{
	ASSERT_EQ_INT(gt_ticks_tsc_fit(1, "tsc kvm-clock \n"), 1);
	ASSERT_EQ_INT(gt_ticks_tsc_fit(1, "kvm-clock tsc acpi_pm \n"), 1);
	ASSERT_EQ_INT(gt_ticks_tsc_fit(1, "kvm-clock tsc\n"), 1);
	ASSERT_EQ_INT(gt_ticks_tsc_fit(1, "kvm-clock hpet acpi_pm \n"), 0); /* the kernel dropped it */
	ASSERT_EQ_INT(gt_ticks_tsc_fit(1, "tsc-early hpet\n"), 0);
	ASSERT_EQ_INT(gt_ticks_tsc_fit(1, "notsc xtsc\n"), 0);
	ASSERT_EQ_INT(gt_ticks_tsc_fit(1, NULL), 1); /* no list to read: CPUID decides */
	ASSERT_EQ_INT(gt_ticks_tsc_fit(0, "tsc\n"), 0); /* not invariant */
	ASSERT_EQ_INT(gt_ticks_tsc_fit(0, NULL), 0);
}

/* ticks over a known sleep come back as about that many nanoseconds, counter or not */
static void check_sleep(void)
{
	struct timespec d = {0, 20000000L};
	uint64_t k0 = gt_ticks();
	nanosleep(&d, NULL);
	uint64_t k1 = gt_ticks();
	uint64_t ns = gt_ticks_ns(k1 - k0);
	ASSERT(ns >= 19000000ull);
	ASSERT(ns < 500000000ull); /* a loaded machine may oversleep, not by 25x */
}

TEST(tap_ticks_to_ns)
{
	gt_ticks_init(0);
	ASSERT_EQ_INT(gt_ticks_tsc, 0);
	ASSERT_EQ_U64(gt_ticks_ns(12345), 12345); /* ticks are nanoseconds */
	check_sleep();
	gt_ticks_init(1); /* the counter where this machine has a fit one */
	check_sleep();
	gt_ticks_init(0);
}

/* Recorded calls' ticks to epoch ns on the writer thread (gt_ticks_interp / gt_ticks_thin). */
TEST(tap_ticks_interp)
{
	/* 3 ticks per ns until 3000, then 2 per ns (the clock was slewed), offsets 100 then 500 */
	struct gt_tick_sample s[] = {{0, 1000, 100}, {3000, 2000, 100}, {5000, 3000, 500}};
	ASSERT_EQ_U64(gt_ticks_interp(s, 3, 0), 1100);
	ASSERT_EQ_U64(gt_ticks_interp(s, 3, 1500), 1600);  /* inside the first pair */
	ASSERT_EQ_U64(gt_ticks_interp(s, 3, 3000), 2100);  /* on a sample: its own offset */
	ASSERT_EQ_U64(gt_ticks_interp(s, 3, 4000), 2600);  /* 2500 + the offset of the sample before */
	ASSERT_EQ_U64(gt_ticks_interp(s, 3, 7000), 4500);  /* past the last: its pair's rate, its offset */
	struct gt_tick_sample t[] = {{3000, 2000, 0}, {6000, 3000, 0}};
	ASSERT_EQ_U64(gt_ticks_interp(t, 2, 1500), 1500); /* before the first: its pair's rate, backwards */
	ASSERT_EQ_U64(gt_ticks_interp(t, 1, 9999), 2000); /* one sample: no rate, its instant */
	/* a run of equal ticks is skipped for a pair that has a rate */
	struct gt_tick_sample u[] = {{0, 0, 0}, {1000, 1000, 0}, {1000, 1000, 0}};
	ASSERT_EQ_U64(gt_ticks_interp(u, 3, 1500), 1500);
}

TEST(tap_ticks_thin)
{
	struct gt_tick_sample s[7];
	for (int i = 0; i < 7; i++)
		s[i] = (struct gt_tick_sample){(uint64_t)i * 10, (uint64_t)i, 0};
	size_t n = gt_ticks_thin(s, 7);
	ASSERT_EQ_U64(n, 4);
	ASSERT_EQ_U64(s[0].ticks, 0);
	ASSERT_EQ_U64(s[1].ticks, 20);
	ASSERT_EQ_U64(s[2].ticks, 40);
	ASSERT_EQ_U64(s[3].ticks, 60);
	ASSERT_EQ_U64(gt_ticks_thin(s, 1), 1);
	ASSERT_EQ_U64(gt_ticks_thin(s, 0), 0);
}

/* The writer's marks: a value read between two marks converts to a time between their clocks. */
TEST(tap_ticks_marks)
{
	gt_ticks_init(1);
	gt_ticks_mark(0);
	struct timespec a, b, d = {0, 2000000L};
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t k = gt_ticks();
	clock_gettime(CLOCK_MONOTONIC, &b);
	nanosleep(&d, NULL);
	gt_ticks_mark(0);
	uint64_t ns = gt_ticks_epoch(k);
	uint64_t lo = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
	uint64_t hi = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
	ASSERT(ns + 20000 >= lo); /* within 20 µs: the interpolation of a 2 ms interval */
	ASSERT(ns <= hi + 20000);
	/* across pairs of marks (the cached pair and its neighbours): never backwards, and at the rate of
	 * the clock: a sweep over two more 2 ms intervals advances by their length */
	uint64_t k0 = gt_ticks();
	nanosleep(&d, NULL);
	gt_ticks_mark(0);
	nanosleep(&d, NULL);
	gt_ticks_mark(0);
	uint64_t k1 = gt_ticks(), prev = 0;
	for (uint64_t x = k0; x <= k1; x += (k1 - k0) / 997 + 1) {
		uint64_t e = gt_ticks_epoch(x);
		ASSERT(e >= prev);
		prev = e;
	}
	uint64_t span = gt_ticks_epoch(k1) - gt_ticks_epoch(k0);
	ASSERT(span >= 3900000ull && span < 400000000ull);
	/* the earlier value converts as before (within 1 µs: the later marks replaced the pair's end) */
	uint64_t again = gt_ticks_epoch(k);
	ASSERT(again + 1000 >= ns && again <= ns + 1000);
	/* an offset applies from its mark on */
	gt_ticks_mark(1000000000000ll);
	ASSERT(gt_ticks_epoch(gt_ticks()) >= 1000000000000ull + hi);
	gt_ticks_init(0);
}

/* The writer's list of marks: the newest stands in until 10 ms passed since the last kept one, the
 * list stays ascending, and when full it halves, the first mark and the newest staying. */
TEST(tap_ticks_marks_list)
{
	static struct gt_tick_marks m;
	memset(&m, 0, sizeof(m));
	/* marks 1 ms apart (3 ticks per ns), kept every 10 ms */
	for (uint64_t i = 0; i <= 25; i++)
		gt_ticks_marks_add(&m, (struct gt_tick_sample){i * 3000000, i * 1000000, 0}, 10000000);
	ASSERT_EQ_U64(m.n, 4); /* 0, 10, 20 ms kept, 25 ms standing in */
	ASSERT_EQ_U64(m.s[1].mono_ns, 10000000);
	ASSERT_EQ_U64(m.s[2].mono_ns, 20000000);
	ASSERT_EQ_U64(m.s[3].mono_ns, 25000000);
	/* a counter read out of order still gives ascending ticks */
	gt_ticks_marks_add(&m, (struct gt_tick_sample){5, 26000000, 0}, 10000000);
	ASSERT(m.s[m.n - 1].ticks > m.s[m.n - 2].ticks);
	/* every mark kept: the list fills and halves, never more than GT_TICK_MARKS */
	memset(&m, 0, sizeof(m));
	for (uint64_t i = 0; i < 3 * GT_TICK_MARKS; i++) {
		gt_ticks_marks_add(&m, (struct gt_tick_sample){i * 3 + 7, i, 0}, 0);
		ASSERT(m.n <= GT_TICK_MARKS);
	}
	ASSERT_EQ_U64(m.s[0].ticks, 7);                           /* the first stays */
	ASSERT_EQ_U64(m.s[m.n - 1].ticks, (3 * GT_TICK_MARKS - 1) * 3 + 7); /* the newest is last */
	for (size_t i = 1; i < m.n; i++)
		ASSERT(m.s[i].ticks > m.s[i - 1].ticks);
	/* a conversion through the halved list still lands on the clock */
	ASSERT_EQ_U64(gt_ticks_interp(m.s, m.n, 3 * 1000 + 7), 1000);
}
