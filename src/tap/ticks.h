/*
 * tap/ticks.h — the clock of hooked calls that are only counted: outside a
 * capture window, in GPUTAP_TRACE=metrics, or with no API records.  Such a
 * call needs its duration (metrics.log's `burst`), not a timestamp, so it is
 * timed with the CPU's time-stamp counter (one instruction: 10-20 ns, 19.5 ns
 * on the H100 machines' virtual CPUs) instead of clock_gettime (23-35 ns
 * there, far more where the kernel's clock source has no fast path), and its
 * ticks are summed per thread; the writer turns a sum into nanoseconds by the
 * rate measured between the tap's start and now (gt_ticks_ns).
 *
 * The counter is used only where it runs at one rate and never stops
 * (CPUID's invariant-TSC bit) and the kernel has not found it unfit (it is
 * still listed among the clock sources, where that list can be read);
 * otherwise, and with GPUTAP_TSC=off, ticks are CLOCK_MONOTONIC nanoseconds.
 * The choice is made once, before the first hooked call, and never changes.
 */
#ifndef GT_TAP_TICKS_H
#define GT_TAP_TICKS_H

#include <stdint.h>
#include <time.h>

extern int gt_ticks_tsc; /* 1: gt_ticks() reads the time-stamp counter; 0: CLOCK_MONOTONIC ns */

static inline __attribute__((always_inline)) uint64_t gt_ticks(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(gt_ticks_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* At the tap's start: use the counter if `allow` and it is fit; take the first rate sample. */
void gt_ticks_init(int allow);
/* A sum of ticks in nanoseconds (ticks as they are when the counter is not used). */
uint64_t gt_ticks_ns(uint64_t ticks);

/* Pure parts, unit-tested. */
/* ticks * span_ns / span_ticks without overflow; span_ticks 0 gives 0. */
uint64_t gt_ticks_scale(uint64_t ticks, uint64_t span_ticks, uint64_t span_ns);
/* 1 if the counter may be used: `invariant` (CPUID) and "tsc" is a word of `sources` (the
 * kernel's available clock sources; NULL when that list cannot be read). */
int gt_ticks_tsc_fit(int invariant, const char *sources);

#endif
