/*
 * tap/api.h — in-process control and per-range results, in four files by job.
 *
 * Owns:
 *  - api.c: the entry points of include/gputap.h that start, stop, flush and
 *    report (gputap_start, gputap_stop, gputap_flush, gputap_results_json,
 *    gputap_results_reset, gputap_last_error);
 *  - errors.c: the error state (gt_api_set_error, gt_api_error);
 *  - rangefeed.c, the range feed: the one per-range table of the process
 *    (tap/rangeagg.h) and what feeds it: which public range is open on the
 *    calling thread when a range closes, a kernel is launched or device
 *    memory is allocated or freed; and its CUPTI driver callbacks,
 *    registered with the switchboard (tap/cupti.h): every launch linked to
 *    its range and, when the driver hooks are not in effect (the library
 *    was loaded by the program, not preloaded), launches and memory calls
 *    counted instead;
 *  - vmm.c: the virtual-memory calls (cuMemCreate, cuMemRelease, cuMemMap,
 *    cuMemUnmap, cuMemAddressReserve/Free) in mem_used and the memory
 *    records.
 *
 * Invariants: the hook-side functions (gt_api_on_*, gt_api_range_*,
 * gt_api_vmm, the range feed's callback) never allocate, lock or print;
 * gt_api_set_error may be called from any thread by any module, and the
 * message stays readable until the next error.
 */
#ifndef GT_TAP_API_H
#define GT_TAP_API_H

#include <stddef.h>
#include <stdint.h>

struct gt_slot;
struct gt_nest;
struct gt_jbuf;

/* errors.c: set the sentence gputap_last_error() returns (printf format; "" clears it). */
void gt_api_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *gt_api_error(void); /* the sentence set last ("" when none) */

/* rangefeed.c */
/* Set-up (the process went live): the range feed registers with the CUPTI switchboard. */
void gt_api_cupti_init(void);
/* The results' per-range part (memory, kernels, lost, the ranges), and starting it afresh. */
void gt_api_ranges_json(struct gt_jbuf *b);
void gt_api_ranges_reset(void);

/* nvtx.c: a public range was opened at s->stack[d] (its name set) / one closed at end_ns. */
void gt_api_range_open(struct gt_slot *s, int d);
void gt_api_range_close(const struct gt_nest *n, uint64_t end_ns);

/* A kernel record arrived (its launch's correlation id; the switchboard calls it). */
void gt_api_on_kernel(uint64_t corr, uint64_t start_ns, uint64_t end_ns);
/* A kernel known from range metrics while kernel records are off: `corr` is the launch
 * callback's correlation id, `ns` its GPU time (gpu__time_duration.sum), < 0 if not known. */
void gt_api_on_kernel_counted(uint64_t corr, double ns);
/* record.c: device memory of `bytes` allocated (1) or freed (0) on this thread; `used_now` after it. */
void gt_api_on_mem(int alloc, uint64_t bytes, int64_t used_now);

/* 1 when the driver-call hooks are in effect (the library was preloaded), else 0. */
int gt_api_hooks_live(void);

/*
 * vmm.c: virtual-memory calls (driver hooks and callbacks), after the real call
 * returned `result`: cuMemCreate (handle, bytes) and cuMemRelease (handle)
 * are physical memory, counted in mem_used and the per-range memory activity;
 * cuMemMap (ptr, bytes, handle) and cuMemUnmap (ptr, bytes) are address
 * ranges, written as memory records.
 */
enum gt_vmm_op { GT_VMM_CREATE, GT_VMM_RELEASE, GT_VMM_MAP, GT_VMM_UNMAP };
void gt_api_vmm(int op, int result, uint64_t ptr, uint64_t bytes, uint64_t handle);

#endif
