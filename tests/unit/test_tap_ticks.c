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
