/*
 * tap/tap.h — the state of libgputap.so shared by its files.
 *
 * Owns: the one global `gt_tap` (settings, record pool, string and pointer
 * tables, per-API counters, thread slots), the per-thread TLS block, and the
 * out-of-line helpers of the per-call path (whose inline part is tap/hot.h).
 *
 * Invariants:
 *  - gt_tap.on is 0 until the process went live (its first CUDA call,
 *    gt_tap_touch) and after the final flush started; hooks test it first and
 *    then do nothing but call through;
 *  - every hook begins with GT_HOOK_ENTER (recursion guard, errno saved) and
 *    ends with GT_HOOK_LEAVE; nothing on that path allocates, locks or uses
 *    stdio;
 *  - records are appended only to the calling thread's chunk (tap/hot.h,
 *    gt_tap_put);
 *  - the status flags other files read (armed, cap_live, hold_armed,
 *    cupti_active, rm_active, pcs_active) are fields here, each written by
 *    one module only.
 *
 * The runtime loop: what stays circular in src/tap, and why.  Everything
 * else runs one way: the modules call the CUPTI switchboard (tap/cupti.h) to
 * register and to drive CUPTI, and it calls them back only through its table.
 *  - Lazy start.  A hook (hook_driver.c, hot.h) or CUPTI's injection
 *    (cupti.c, InitializeInjection) sees the process's first CUDA call and
 *    calls gt_tap_touch (life.c); going live starts the writer (writer.c),
 *    the capture sources (sources.c) and the CUPTI clients' set-up (range
 *    metrics, PC sampling, the range feed register with the switchboard);
 *    cuInit's hook then starts CUPTI (gt_tap_after_cuinit).  Those record
 *    through record.c into the thread's chunk, as the hooks do.
 *  - The writer ticks its sources.  The writer thread calls
 *    gt_sources_flush at every wake-up (CUPTI's buffers, PC sampling,
 *    capture windows, which may finalize CUPTI) and gt_sources_stop at the
 *    end; the sources put records into the chunks the writer drains and wake
 *    it (gt_tap_wake_writer).
 *  - dlsym.  The tap defines dlsym (resolve.c) to hand out its hooks; inside
 *    the library the shared code of core/ and gpu/ that looks symbols up (the
 *    demangler, the CUDA and CUPTI probes) calls that same dlsym, which passes
 *    every name it does not hook to the C library's.  It is the only call
 *    from outside src/tap back into it.
 */
#ifndef GT_TAP_TAP_H
#define GT_TAP_TAP_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gputap/format.h"
#include "tap/apis.h"
#include "tap/env.h"
#include "tap/ptrtab.h"
#include "tap/ring.h"
#include "tap/strtab.h"

#define GT_EXPORT __attribute__((visibility("default")))
#define GT_NEST_MAX 64
#define GT_MAX_THREADS 2048

/* Calls of one API by one thread: written by that thread only, summed by gt_tap_api_total. */
struct gt_api_tstat {
	_Atomic uint64_t count;
	_Atomic uint64_t ns;    /* stamped calls (tap/hot.h) */
	_Atomic uint64_t ticks; /* counted-only calls: gt_ticks() units (tap/ticks.h) */
};

struct gt_nest {
	uint64_t id, start_ns;
	uint32_t name_id, domain_id;
	uint32_t node, pad; /* public ranges: the range path (tap/rangeagg.h), else 0 */
	int64_t peak;       /* public ranges: highest memory in use seen while open */
};

struct gt_slot {
	struct gt_chunk *_Atomic cur;
	_Atomic int used;
	uint32_t tid;
	int depth; /* push/pop nesting of this thread */
	uint64_t ranges; /* range ids handed out by this slot (gt_tap_range_id) */
	struct gt_nest stack[GT_NEST_MAX];
	struct gt_api_tstat api[GT_API_N]; /* kept when the slot passes to another thread */
};

struct gt_tap_state {
	struct gt_tap_config cfg;
	_Atomic int on;      /* recording */
	_Atomic int stamp;   /* how a hooked call starting now is timed: 0 or GT_STAMP_* (tap/hot.h) */
	_Atomic int stopped; /* final flush started */
	_Atomic unsigned gen; /* bumped in a fork child: thread slots are void */
	/* Status flags read across files, each written by one module (named) and read by any: */
	_Atomic int armed;        /* life.c: waiting for the first CUDA call (then gt_tap_touch has work) */
	_Atomic int cap_live;     /* capture_tap.c: records are written (1 from the start without windows) */
	_Atomic int hold_armed;   /* hook_hold.c: GPUTAP_HOLD asked for and possible: hooks consult the queue */
	_Atomic int cupti_active; /* cupti.c: CUPTI records GPU activity */
	_Atomic int rm_active;    /* rmetrics.c: range metrics' callbacks and push/pop hooks have work */
	_Atomic int pcs_active;   /* pcsamp.c: PC sampling runs (its resource callbacks are forwarded) */
	unsigned trace;       /* GT_TR_* in effect */
	int want_api_recs;    /* API records go to the pool (trace api, or a timeline.log) */
	struct gt_pool pool;
	struct gt_strtab strs;
	struct gt_ptrtab ptrs;
	struct gt_slot *slots;
	_Atomic unsigned nslots;            /* slots ever taken: the counters to sum */
	struct gt_api_tstat api_noslot[GT_API_N]; /* threads beyond GT_MAX_THREADS (shared: atomic adds) */
	_Atomic uint64_t api_first[GT_API_N]; /* order of first use (1..), 0 = never called */
	uint32_t api_name_id[GT_API_N];
	_Atomic int64_t mem_used; /* memory calls only: they touch the shared pointer table anyway */
	_Atomic uint64_t *memgen; /* gputap run's allocation counter (core/memgen.h), or NULL */
	_Atomic uint64_t first_seq;
	_Atomic uint64_t range_seq; /* range ids of threads without a slot */
	_Atomic uint64_t cupti_dropped;
	_Atomic uint64_t cupti_no_buffer; /* CUPTI buffer requests refused (GT_DROP_CUPTI_NO_BUFFER) */
	_Atomic int gpu_incomplete;        /* a note said GPU activity is missing: GT_FILE_GPU_INCOMPLETE */
	uint32_t cupti_buf_bytes, cupti_nbufs; /* CUPTI's share of GPUTAP_BUFFER_MB (env.h) */
	uint64_t start_ns;
	char proc[32];
	char host[64];
};

extern struct gt_tap_state gt_tap;

/* gt_tap.stamp: 0 = counted only; */
#define GT_STAMP_REC 1 /* API records wanted and a capture window open */
#define GT_STAMP_NS 2  /* timed in epoch ns: launch hold armed, or no usable time-stamp counter */
/* Recompute gt_tap.stamp from its inputs (API records wanted, cap_live, hold_armed, the
 * counter): every writer of one of them calls it after the change.  Lock-free, fork-safe. */
void gt_tap_stamp_update(void);
/* GT_REC_API.flags in the tap's chunks only, never in a file: start/end are ticks and name_id the
 * API's index (enum gt_api); the writer converts both before the record goes out (tap/writer.c). */
#define GT_API_MEM_TICKS 0x8000u

struct gt_tls {
	int guard;       /* >0 while inside the tap on this thread */
	unsigned gen;    /* gt_tap.gen when slot was taken */
	struct gt_slot *slot;
	uint64_t corr;   /* CUPTI correlation id of the current driver call */
	int in_runtime;  /* inside an interposed runtime call (the CUPTI runtime callback skips it) */
};
extern __thread struct gt_tls gt_tls __attribute__((tls_model("initial-exec")));

extern _Atomic int64_t gt_clock_offset;
void gt_clock_sync(void); /* refresh gt_clock_offset (tap.c) */

/* record.c: the out-of-line side of the hot path (tap/hot.h) */
struct gt_slot *gt_tap_slot(void);      /* this thread's slot, NULL when all are taken */
struct gt_slot *gt_tap_slot_claim(void); /* a free slot for this thread */
void gt_tap_api_first(int api);          /* first call of `api` by some thread: its order of first use */
void gt_tap_api_noslot(int api, uint64_t t0, uint64_t t1); /* count a call of a thread without slot */
void gt_tap_api_noslot_ticks(int api, uint64_t t0, uint64_t t1); /* the same, a counted-only call */
/* Calls of `api` so far, all threads (and their nanoseconds in *ns when not NULL). */
uint64_t gt_tap_api_total(int api, uint64_t *ns);
void gt_tap_counters_reset(void); /* a fork child: nothing counted yet */
uint64_t gt_tap_range_id(struct gt_slot *s); /* a process-unique range id, no shared counter */
/* Append one record (h.type and h.size set by the caller; tid filled in here). */
void gt_tap_put(void *rec, uint32_t size);
/* Count and time one call; records it when API records are wanted. */
void gt_tap_api_done(int api, uint64_t t0, uint64_t t1, int result, uint64_t bytes, int copy_kind,
		     uint64_t ptr, uint64_t corr);
/* A GT_REC_NOTE (enum gt_note) from this thread; the ones about GPU activity
 * also mark the trace GT_FILE_GPU_INCOMPLETE. */
void gt_tap_note(uint32_t what, int32_t detail, int32_t result);
/* The two halves of gt_tap_api_done: counters only, and the record only
 * (tid 0 = the calling thread; launch hold writes a held launch's record
 * from the thread that released it). */
void gt_tap_api_count(int api, uint64_t t0, uint64_t t1);
void gt_tap_api_record(int api, uint32_t tid, uint64_t t0, uint64_t t1, int result, uint64_t bytes, int copy_kind,
		       uint64_t ptr, uint64_t corr, uint16_t flags);
void gt_tap_mem_alloc(uint64_t ptr, uint64_t size);
void gt_tap_mem_free(uint64_t ptr);
void gt_tap_thread_exit(void *slot);

/* life.c */
void gt_tap_init(void);         /* once; safe from any entry point: settings and memory, nothing on disk */
/* The process touched CUDA (or gputap's own API): folders, files and the writer thread now, once.
 * Called where a driver entry point is first resolved or hooked; cheap afterwards. */
void gt_tap_touch(void);
int gt_tap_recording(void);     /* set up to record (live, or waiting for the first CUDA call), not stopped */
void gt_tap_after_cuinit(void); /* driver is up: start CUPTI if wanted (with capture windows: when one opens; cupti.c) */
/* cupti.c, the CUPTI switchboard: tap/cupti.h */
void gt_tap_finish(void);       /* final flush, idempotent */
int gt_tap_start_inprocess(const char *out_dir); /* gputap_start: 0, or -errno */
int gputap_bench_pass(int pass); /* exported for bench/overhead/ab.sh only (life.c): 0 or -1 */
void *gt_tap_map_zero(size_t bytes);             /* zeroed memory reserved once (mmap), NULL if none */

/* resolve.c: real functions behind the interposed names */
extern void *(*gt_real_dlsym)(void *, const char *);
void gt_resolve_init(void);
void *gt_real_driver(const char *sym);  /* libcuda's definition of `sym`, or NULL */
void *gt_real_runtime(const char *sym); /* the loaded CUDA runtime's `sym`, or NULL */

/* hook_driver.c */
void *gt_hook_for_dlsym(const char *name, void *real);

/* the per-call path */
#include "tap/hot.h"

#endif
