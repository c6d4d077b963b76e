/*
 * tap/holdstub.h — one small entry point per driver function that has no
 * hook of its own, so that launch hold sees every call that could observe
 * or reorder held launches.
 *
 * Owns: a fixed pool of GT_HOLD_NSTUBS machine-code stubs (x86-64).  A stub
 * stands for one real driver function: it saves the argument registers,
 * asks the gate (gt_hold_stub_ops.gate) with the stub's class and name,
 * restores them and jumps to the real function, so any signature passes
 * through untouched.  When the gate says an error is pending (a held launch
 * failed when this call released it), the stub calls the real function
 * instead (copying 8 stack words of arguments, enough for 14 integer
 * arguments) and hands its result to gt_hold_stub_ops.after.
 *
 * Invariants: a stub once given to a real function stays with it for the
 * life of the process (the program may keep the pointer); the same real
 * function always gets the same stub; errno is kept across the gate.
 */
#ifndef GT_TAP_HOLDSTUB_H
#define GT_TAP_HOLDSTUB_H

#include <stdint.h>

#define GT_HOLD_NSTUBS 2048u

struct gt_hold_stub_ops {
	/* before the real call: 1 if the call must return through `after` */
	int (*gate)(unsigned cls, uint32_t name_id);
	int (*after)(int result);
};
extern struct gt_hold_stub_ops gt_hold_stub_ops;

/* 1 if this build has stubs (x86-64), else 0 (launch hold is then off). */
int gt_hold_stubs_supported(void);
/* The stub for `real` (class `cls`, interned name `name_id`), or NULL when
 * the pool is used up or stubs are not supported. */
void *gt_hold_stub_for(void *real, unsigned cls, uint32_t name_id);
/* 1 if `p` is one of the stubs. */
int gt_hold_is_stub(const void *p);
/* Stubs handed out so far. */
unsigned gt_hold_stubs_used(void);

#endif
