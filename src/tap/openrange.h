/*
 * tap/openrange.h — NVTX start/end ranges that are open (started, not yet
 * ended), which may end on another thread than the one that started them.
 *
 * Owns: a fixed table (memory given by the caller) keyed by range id, with
 * a short linear probe from id % cap.
 *
 * Invariants:
 *  - a slot is written only by the thread that claimed it (claim = CAS of
 *    its state from free to "writing"), and read only by the thread that
 *    took it back (CAS from the id to "reading"), so an end never sees the
 *    fields of another range (no tearing), whatever the number of open ranges;
 *  - a start that finds no free slot within the probe returns -1 (the caller
 *    counts the range as lost); its end then finds nothing and does nothing;
 *  - lock-free, allocates nothing.
 */
#ifndef GT_TAP_OPENRANGE_H
#define GT_TAP_OPENRANGE_H

#include <stdatomic.h>
#include <stdint.h>

struct gt_open_range {
	_Atomic uint64_t state; /* 0 free, GT_OPEN_BUSY while written or read, else the range id */
	uint64_t start_ns;
	uint32_t name_id, domain_id, tid, pad;
};

struct gt_open_table {
	struct gt_open_range *r;
	uint32_t cap;
};

#define GT_OPEN_BUSY UINT64_MAX
#define GT_OPEN_PROBE 16u

/* `cap` slots of `mem` (zeroed by the caller). */
void gt_open_init(struct gt_open_table *t, struct gt_open_range *mem, uint32_t cap);
/* Remember range `id` (> 0, < GT_OPEN_BUSY).  0, or -1 when no slot is free. */
int gt_open_start(struct gt_open_table *t, uint64_t id, uint64_t start_ns, uint32_t name_id,
		  uint32_t domain_id, uint32_t tid);
/* Take range `id` out of the table: 1 and *out filled (out->state = id), or
 * 0 if it is not open (never started, lost, or ended already). */
int gt_open_end(struct gt_open_table *t, uint64_t id, struct gt_open_range *out);

#endif
