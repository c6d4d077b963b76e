/*
 * tap/hold.h — launch hold: kernel launches queued and released in batches,
 * in the order they were made, with the program's results unchanged.
 *
 * Owns: the queue (one per process, one lock), the copy of each launch's
 * arguments (kernelParams through the driver's parameter layout, `extra`
 * buffers, CUlaunchConfig and its attributes), the queue-time checks that
 * make CUDA_SUCCESS honest, the release (every entry, in order, through the
 * real driver functions, with the context current at queue time), the timer
 * that bounds how long a launch stays held, the table of driver calls that
 * release the queue first (holdtab.c), and the counters.  docs/hold.md says
 * every rule in prose.
 *
 * Pure: the driver is a table of function pointers (struct gt_hold_drv) and
 * what happens to records is a table of callbacks (struct gt_hold_cb), so
 * the CPU tests run it against a fake driver.  libgputap.so fills both
 * (hook_hold.c).
 *
 * Invariants:
 *  - a release issues every queued launch, oldest first, and the queue is
 *    empty when the lock is given back; a thread that finds the queue
 *    non-empty before a call that could observe or reorder GPU work waits
 *    for the lock, so no such call overtakes a held launch;
 *  - a launch that is not held is issued only after the queue was released;
 *  - the oldest held launch waits at most timeout_us (plus one release);
 *  - nothing is allocated after gt_hold_init: queue, argument arena and
 *    caches are fixed-size and a full one releases or refuses, never grows.
 */
#ifndef GT_TAP_HOLD_H
#define GT_TAP_HOLD_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/holdnames.h"

/* ---- the trigger table (holdtab.c) ---- */
/* Class of a driver entry point by its name as cuGetProcAddress knows it
 * ("cuMemcpyHtoD") or as dlsym does ("cuMemcpyHtoD_v2_ptds"): GT_HOLD_PASS
 * for calls that never release, GT_HOLD_OTHER for names not in the table. */
enum gt_hold_reason gt_hold_classify(const char *name);
/* The entries of the table, for the tests and the docs. */
struct gt_hold_rule {
	const char *pattern; /* exact name, or a prefix ending in '*' */
	unsigned char reason;
};
extern const struct gt_hold_rule gt_hold_rules[];
extern const size_t gt_hold_nrules;
/* Calls after which cached function state or layouts are stale. */
int gt_hold_reason_invalidates(enum gt_hold_reason r);

/* ---- launches ---- */
enum gt_hold_form { GT_HOLD_KERNEL = 0, GT_HOLD_KERNEL_EX = 1, GT_HOLD_COOP = 2 };

typedef CUresult(CUDAAPI *gt_hold_pfn_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
					       unsigned, unsigned, CUstream, void **, void **);
typedef CUresult(CUDAAPI *gt_hold_pfn_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult(CUDAAPI *gt_hold_pfn_coop)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
					     unsigned, unsigned, CUstream, void **);

/* One launch as a hook saw it. */
struct gt_hold_call {
	int form;       /* enum gt_hold_form */
	int per_thread; /* the _ptsz entry point: NULL means the caller's per-thread stream */
	int by_name;    /* reached through the exported name, not a cuGetProcAddress/dlsym pointer */
	int nested;     /* inside another interposed call, or the tap is not recording */
	void *real;     /* the driver function to call */
	CUfunction f;
	unsigned grid[3], block[3], smem;
	CUstream stream;
	void **params, **extra;
	const CUlaunchConfig *cfg; /* GT_HOLD_KERNEL_EX */
	int api;                   /* the caller's API id, handed back in the callbacks */
	uint32_t tid;
	uint64_t t0; /* call entry (ns, CLOCK_REALTIME) */
};

/* A held launch: the copy that outlives the caller's arguments. */
struct gt_hold_entry {
	uint64_t seq;       /* 1, 2, ... per process */
	uint64_t t0;        /* call entry */
	uint64_t queued_ns; /* when it was queued (the call returned) */
	uint64_t mono_ns;   /* the same on CLOCK_MONOTONIC, for the timer */
	void *real;
	CUcontext ctx;
	CUfunction f;
	CUstream stream;
	unsigned grid[3], block[3], smem;
	int form, api;
	uint32_t tid;
	uint32_t bytes; /* argument arena bytes */
	void **params, **extra;
	CUlaunchConfig cfg;
};

/* The driver functions the queue uses: the real ones, never hooks. NULL
 * members make the launches that need them not held. */
struct gt_hold_drv {
	CUresult(CUDAAPI *ctx_get_current)(CUcontext *);
	CUresult(CUDAAPI *ctx_push)(CUcontext);
	CUresult(CUDAAPI *ctx_pop)(CUcontext *);
	CUresult(CUDAAPI *ctx_get_device)(CUdevice *);
	CUresult(CUDAAPI *device_get_attribute)(int *, CUdevice_attribute, CUdevice);
	CUresult(CUDAAPI *func_get_param_info)(CUfunction, size_t, size_t *, size_t *);
	CUresult(CUDAAPI *kernel_get_param_info)(CUkernel, size_t, size_t *, size_t *);
	CUresult(CUDAAPI *func_get_attribute)(int *, CUfunction_attribute, CUfunction);
	CUresult(CUDAAPI *kernel_get_attribute)(int *, CUfunction_attribute, CUkernel, CUdevice);
	CUresult(CUDAAPI *kernel_get_function)(CUfunction *, CUkernel);
	CUresult(CUDAAPI *func_get_name)(const char **, CUfunction);
	CUresult(CUDAAPI *kernel_get_name)(const char **, CUkernel);
	CUresult(CUDAAPI *stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult(CUDAAPI *occupancy)(int *, CUfunction, int, size_t);
};

/* What happens around a release (all optional; called with the lock held,
 * on the releasing thread). */
struct gt_hold_cb {
	uint64_t (*now_ns)(void);   /* CLOCK_REALTIME ns (default: clock_gettime) */
	uint64_t (*mono_ns)(void);  /* CLOCK_MONOTONIC ns (default: clock_gettime) */
	uint64_t (*take_corr)(void); /* correlation id of the last real call, then reset to 0 */
	/* one held launch was issued: r is what the driver returned */
	void (*released)(const struct gt_hold_entry *e, CUresult r, uint64_t corr, uint64_t batch,
			 uint64_t issued_ns);
	/* one release: `why` and `name_id` (the call that made it, 0 if none) */
	void (*batch)(enum gt_hold_reason why, uint32_t name_id, uint32_t count, uint64_t start_ns,
		      uint64_t end_ns, CUresult first_error, uint64_t batch);
	/* a held launch failed at release (first time per function: for a message) */
	void (*failed)(const struct gt_hold_entry *e, CUresult r, const char *kernel_name);
};

struct gt_hold_config {
	long n;           /* release once n are queued (1..max) */
	long max;         /* queue bound; the argument space is max * GT_HOLD_BYTES_PER_LAUNCH */
	long timeout_us;  /* >= 1 */
	const char *kernels; /* comma-separated words a held kernel's name must contain one of, or NULL */
	int timer;        /* start the timer thread (1 in the library; tests may drive it by hand) */
};
#define GT_HOLD_BYTES_PER_LAUNCH 4096u
#define GT_HOLD_MIN_ARENA (256u * 1024u)
#define GT_HOLD_MAX_ATTRS 32u
#define GT_HOLD_MAX_PARAMS 1024u
#define GT_HOLD_HOST_RANGES 4096u

struct gt_hold_fn;   /* per-function cache entry (hold.c) */
struct gt_hold_dev;  /* per-device limits (hold.c) */
struct gt_hold_range {
	uint64_t lo, hi;
};

struct gt_hold_stats {
	_Atomic uint64_t held, passed, released, failed, batches, max_batch;
	_Atomic uint64_t refused[GT_HOLD_NREFUSALS];
	_Atomic uint64_t releases[GT_HOLD_NREASONS];
};

struct gt_hold {
	struct gt_hold_config cfg;
	struct gt_hold_drv drv;
	struct gt_hold_cb cb;
	_Atomic int on;          /* holding launches */
	_Atomic uint32_t nq;     /* queued launches (read without the lock by the gates) */
	_Atomic int pending;     /* a held launch's error not yet returned (CUresult) */
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* the timer's */
	pthread_t timer;
	int timer_running, timer_idle, timer_stop;
	pthread_t owner;         /* thread holding mu while releasing */
	_Atomic int owned;
	/* queue */
	struct gt_hold_entry *q;
	uint32_t n, cap;
	unsigned char *arena;
	size_t arena_used, arena_cap;
	uint64_t seq, batch;
	/* caches */
	struct gt_hold_fn *fns;
	uint32_t nfns_cap;
	uint32_t *pairs; /* offset, size of each parameter, for the function cache */
	size_t pairs_used, pairs_cap;
	unsigned layout_gen, attr_gen;
	struct gt_hold_dev *devs;
	struct {
		CUcontext ctx;
		CUdevice dev;
	} ctxdev[16];
	unsigned nctxdev;
	/* pinned and managed memory: launches whose arguments point there are not held */
	struct gt_hold_range *ranges;
	uint32_t nranges;
	int ranges_lost;
	pthread_mutex_t range_mu;
	/* kernel name filter */
	char kernels[512];
	struct gt_hold_stats st;
	void *mem;
	size_t mem_size;
};

/* Set up (allocates everything, once) and start the timer. 0, or -1 with
 * nothing held (and a reason in err). */
int gt_hold_init(struct gt_hold *h, const struct gt_hold_config *cfg, const struct gt_hold_drv *drv,
		 const struct gt_hold_cb *cb, char *err, size_t errlen);
/* Release what is queued (EXIT), stop holding and stop the timer. Idempotent. */
void gt_hold_close(struct gt_hold *h);
/* Free the memory (after gt_hold_close). */
void gt_hold_free(struct gt_hold *h);

/*
 * A launch.  Holds it (copies what it needs, returns CUDA_SUCCESS, or the
 * error of a launch released by this call), or releases the queue and
 * issues it for real, returning the driver's result.  *held says which;
 * *why the refusal when not held (GT_HOLD_NREFUSALS when hold is off).
 */
CUresult gt_hold_launch(struct gt_hold *h, const struct gt_hold_call *c, int *held, int *why);

/* Before a driver call of class `why` (not GT_HOLD_PASS): release what is
 * queued; drop caches for the classes that make them stale. */
void gt_hold_before(struct gt_hold *h, enum gt_hold_reason why, uint32_t name_id);
/* After that call returned r: a held launch's pending error if r is success. */
static inline CUresult gt_hold_after(struct gt_hold *h, CUresult r)
{
	if (__builtin_expect(atomic_load_explicit(&h->pending, memory_order_relaxed) != 0, 0) &&
	    r == CUDA_SUCCESS)
		return (CUresult)atomic_exchange(&h->pending, 0);
	return r;
}
/* Release now (any thread). */
void gt_hold_release(struct gt_hold *h, enum gt_hold_reason why, uint32_t name_id);
/* The timer's work, for tests that drive it by hand: release if the oldest
 * launch is older than the timeout at monotonic time `mono`; 1 if released. */
int gt_hold_tick(struct gt_hold *h, uint64_t mono);

/* Pinned host and managed memory (for the argument scan). */
void gt_hold_add_range(struct gt_hold *h, uint64_t ptr, uint64_t bytes);
void gt_hold_remove_range(struct gt_hold *h, uint64_t ptr);

/* fork: before (release, take the lock), in the parent after, in the child after (no hold). */
void gt_hold_fork_prepare(struct gt_hold *h);
void gt_hold_fork_parent(struct gt_hold *h);
void gt_hold_fork_child(struct gt_hold *h);

/* Kernel name filter: 1 if `name` contains one of the comma-separated words of `list`. */
int gt_hold_name_matches(const char *list, const char *name);

/* ---- in libgputap.so (hook_hold.c): the one queue of the process ---- */
extern struct gt_hold gt_hold_q;
/* From the tap's start: arm launch hold if the settings ask for it. */
void gt_hold_setup(void);
/* hook_driver.c: the class of each hooked call */
void gt_hook_driver_hold_setup(void);
/* From the tap's final flush: release, stop holding, write the counters. */
void gt_hold_finish(void);
/* The pointer to hand out for the driver entry point `symbol` that has no
 * hook of its own (found by cuGetProcAddress, or by dlsym): a stub that
 * releases first, or `real` itself. */
void *gt_hold_wrap(const char *symbol, void *real, int from_dlsym);
/* Hooks of calls that release (class, interned name), and their result. */
void gt_hold_gate_hook(unsigned cls, uint32_t name_id);
/* (gt_hold_result, its inline use by the hooks, is in hook_driver.c: it reads gt_tap.hold_armed) */
/* Pinned and managed allocations seen by the hooks. */
void gt_hold_note_host(uint64_t ptr, uint64_t bytes);
void gt_hold_forget_host(uint64_t ptr);
/* The launch hooks: `var` bit 0 = per-thread entry point, bit 1 = reached
 * through cuGetProcAddress/dlsym; `active` = the tap records this call. */
#define GT_HOLD_VIA_POINTER 2
CUresult gt_hold_cuLaunchKernel(void *real, int var, int active, uint64_t t0, int *held, CUfunction f,
				unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
				unsigned sm, CUstream s, void **kp, void **ex);
CUresult gt_hold_cuLaunchKernelEx(void *real, int var, int active, uint64_t t0, int *held, const CUlaunchConfig *c,
				  CUfunction f, void **kp, void **ex);
CUresult gt_hold_cuLaunchCooperativeKernel(void *real, int var, int active, uint64_t t0, int *held, CUfunction f,
					   unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
					   unsigned bz, unsigned sm, CUstream s, void **kp);

#endif
