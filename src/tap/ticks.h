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

#include <stddef.h>
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

/* Calls recorded in ticks (tap/hot.h, GT_STAMP_REC) are turned into epoch nanoseconds on the
 * writer thread, by interpolating between samples of the counter and CLOCK_MONOTONIC taken there:
 * gt_ticks_mark takes one (and keeps it among the samples when 10 ms passed since the last kept
 * one; GT_TICK_MARKS at most, then every other old one goes), with the offset of the epoch from
 * CLOCK_MONOTONIC at that instant; gt_ticks_epoch converts a tick value read before the last mark.
 * Writer thread only. */
void gt_ticks_mark(int64_t epoch_offset);
uint64_t gt_ticks_epoch(uint64_t ticks);

/* Pure parts, unit-tested. */
struct gt_tick_sample {
	uint64_t ticks, mono_ns;
	int64_t offset; /* epoch - CLOCK_MONOTONIC when it was taken */
};
/* `ticks` in epoch ns by the samples s[0..n-1] (ascending ticks, n >= 1): linear between the two
 * that enclose it, the nearest pair's rate outside them; the offset of the last sample at or
 * before it (the first one's before them all). */
uint64_t gt_ticks_interp(const struct gt_tick_sample *s, size_t n, uint64_t ticks);
/* Keep s[0], s[2], s[4], ... (half the samples, the first among them): the new count. */
size_t gt_ticks_thin(struct gt_tick_sample *s, size_t n);
/* The writer's marks: ascending ticks; the newest stands in for "now" until keep_ns passed since
 * the one before it, when it is kept; full, every other one goes (gt_ticks_thin). */
#define GT_TICK_MARKS 4096
struct gt_tick_marks {
	struct gt_tick_sample s[GT_TICK_MARKS];
	size_t n;
	int last_kept; /* s[n-1] stays; otherwise the next mark replaces it */
};
void gt_ticks_marks_add(struct gt_tick_marks *m, struct gt_tick_sample x, uint64_t keep_ns);
/* ticks * span_ns / span_ticks without overflow; span_ticks 0 gives 0. */
uint64_t gt_ticks_scale(uint64_t ticks, uint64_t span_ticks, uint64_t span_ns);
/* 1 if the counter may be used: `invariant` (CPUID) and "tsc" is a word of `sources` (the
 * kernel's available clock sources; NULL when that list cannot be read). */
int gt_ticks_tsc_fit(int invariant, const char *sources);

#endif
