/*
 * tap/strtab.h — interned strings (API, kernel, NVTX and domain names).
 *
 * Owns: a fixed hash table and a text arena, both in memory the caller
 * allocated once.  Lookup and insert are lock-free; ids are dense from 1.
 *
 * Invariants (what makes the trace file valid):
 *  - an id is handed out only after its text is complete and published
 *    (release on `ready`), so a record carrying the id is appended after the
 *    string exists;
 *  - the drainer writes, before the records it took, every string that is
 *    ready and not yet written (gt_strtab_pending), so a GT_REC_STRING always
 *    precedes the records that use its id;
 *  - when the table or arena is full, intern returns 0 ("no string");
 *  - intern never waits for another thread: a text whose first insert is not
 *    published yet is interned again under a second id (same text).
 */
#ifndef GT_TAP_STRTAB_H
#define GT_TAP_STRTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct gt_str_slot {
	_Atomic uint64_t hash; /* 0 = empty */
	_Atomic uint32_t id;   /* 0 until ready */
	uint32_t len;
	uint64_t off; /* into the arena */
};

struct gt_strtab {
	struct gt_str_slot *slots;
	uint32_t cap;    /* power of two */
	_Atomic uint32_t *by_id; /* id -> slot index + 1, cap entries */
	unsigned char *written; /* id -> written flag (drainer only) */
	char *arena;
	size_t arena_cap;
	_Atomic size_t arena_used;
	_Atomic uint32_t next_id;  /* last id handed out */
	uint32_t first_unwritten;  /* drainer only */
	_Atomic uint64_t failed;
};

/* Bytes of memory needed for `cap` slots and `arena` bytes of text. */
size_t gt_strtab_mem_size(uint32_t cap, size_t arena);
int gt_strtab_init(struct gt_strtab *t, void *mem, uint32_t cap, size_t arena);
/* Id of `s` (`len` bytes), interning it if new; 0 if it cannot be stored. */
uint32_t gt_strtab_intern(struct gt_strtab *t, const char *s, size_t len);
/* Text of `id` (not NUL-terminated) and its length; NULL if unknown or not ready. */
const char *gt_strtab_get(const struct gt_strtab *t, uint32_t id, uint32_t *len);
/* Drainer: call fn for each ready string not yet written, marking it written. */
unsigned gt_strtab_pending(struct gt_strtab *t, void (*fn)(uint32_t id, const char *s, uint32_t len, void *arg),
			   void *arg);
/* Forget what was written (a forked child starts a new file). */
void gt_strtab_mark_unwritten(struct gt_strtab *t);

#endif
