/*
 * trace/alnair_log.h — the alnair interposer's line formats of metrics.log and timeline.log.
 *
 * Owns: the exact text of one line of each file and the order of the
 * interposer's names.  Used by the tap (live files) and by `gputap convert` (from a
 * trace), so both write byte-identical lines.  Units as the interposer's: `burst`
 * in microseconds, `start` in nanoseconds since the epoch, `count` of calls;
 * the `mem_used` line's count is bytes allocated now.
 */
#ifndef GT_TRACE_ALNAIR_LOG_H
#define GT_TRACE_ALNAIR_LOG_H

#include <stddef.h>
#include <stdint.h>

/* The interposer's names, in its order; others follow in first-use order. */
#define GT_ALNAIR_NAMES(X)                                                                         \
	X(cuInit)                                                                                  \
	X(cuMemAlloc)                                                                              \
	X(cuMemFree)                                                                               \
	X(cuLaunchKernel)                                                                          \
	X(cuMemcpyH2D)                                                                             \
	X(cuMemcpyD2H)                                                                             \
	X(cuGetProcAddress)                                                                        \
	X(cuMemcpyH2D_ASYNC)                                                                       \
	X(cudaMemcpy)                                                                              \
	X(cudaMemcpyAsync)

extern const char *const gt_alnair_names[];
extern const unsigned gt_alnair_nnames;

/* "name:mem_used,count:B\n" */
int gt_alnair_memline(char *buf, size_t cap, uint64_t mem_used_bytes);
/* "name:X,count:N,burst:T\n" with T in microseconds */
int gt_alnair_metricline(char *buf, size_t cap, const char *name, uint64_t count, uint64_t burst_us);
/* "name:X, start:NS, burst:T, bytes:B, kind:K\n" (kind -1 when not a copy) */
int gt_alnair_timelineline(char *buf, size_t cap, const char *name, uint64_t start_ns, uint64_t burst_us,
			   uint64_t bytes, int kind);

#endif
