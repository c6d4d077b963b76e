/*
 * tap/cupti.h — the CUPTI switchboard: the tap's one CUPTI subscriber, its
 * activity buffers, and the table of the tap's modules that take CUPTI
 * callbacks (as Kineto's CuptiCallbackApi).
 *
 * Owns: libcupti (dlopen'ed, never linked), the one cuptiSubscribe of the
 * tap, the activity buffers and their conversion into records, correlation
 * ids (kept unique across the CUPTI sessions of capture windows), and the
 * registration table.  A module that wants CUPTI's callbacks fills one
 * struct gt_cupti_client and registers it at its set-up, in its fixed slot
 * (enum gt_cupti_slot); CUPTI asks the registered clients, at its start,
 * whether they want callbacks and enables theirs.  Capture windows tell the
 * switchboard that they are in effect (gt_cupti_capture_windows) and drive
 * CUPTI's start and finalize through the gt_cupti_capture_* calls.
 *
 * Invariants:
 *  - the callback is not a loop over the table: each slot is called in slot
 *    order, range metrics only while gt_tap.rm_active, PC sampling only on
 *    resource callbacks while gt_tap.pcs_active; a slot not registered is
 *    skipped.  The common launch (neither on) costs what it did when the
 *    modules were called by name: one relaxed load and branch for range
 *    metrics (as before), then for the range feed one load of its function
 *    from a static array, a branch and the call (before: a direct call);
 *  - range metrics come first: a launch reaches them before the range feed
 *    links it to its range (tap/api.h), so that they see it unlinked;
 *  - registration stores a pointer to a client that lives as long as the
 *    library (a static const struct), before the client turns itself on;
 *    it is idempotent and never undone.
 */
#ifndef GT_TAP_CUPTI_H
#define GT_TAP_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include <cupti_callbacks.h>

/* The clients, in the order their callbacks are called. */
enum gt_cupti_slot {
	GT_CUPTI_RMETRICS, /* range metrics (tap/rmetrics.h): every callback, while gt_tap.rm_active */
	GT_CUPTI_PCSAMP,   /* PC sampling (tap/pcsamp.h): resource callbacks, while gt_tap.pcs_active */
	GT_CUPTI_RANGES,   /* the range feed (tap/api.h): every driver callback that reaches the tap */
	GT_CUPTI_NSLOTS
};

typedef void (*gt_cupti_fn)(CUpti_CallbackDomain dom, CUpti_CallbackId id, const void *data);

/* A callback id to enable for a client. */
struct gt_cupti_id {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId id;
};

/* What a client gives the switchboard; every member may be NULL / 0. */
struct gt_cupti_client {
	gt_cupti_fn callback;
	const char *off; /* said in the warning when CUPTI cannot be subscribed (", ... off") */
	void (*setup)(void);           /* CUPTI is starting: read the client's settings now */
	int (*wanted)(void);           /* 1: CUPTI is subscribed for this client */
	int (*subscribed)(void *lib);  /* subscribed (`lib`: libcupti): 0 to have its callbacks enabled */
	int launches;                  /* 1: the kernel-launch callbacks are enabled for it */
	const struct gt_cupti_id *ids; /* its other callback ids (nids of them) */
	size_t nids;
	int (*ids_wanted)(void);       /* NULL, or 0 when its ids are not wanted this time */
	int (*kernel_records_ok)(void); /* 0: no kernel records (range metrics per kernel) */
	void (*kernel)(uint64_t corr, uint64_t start_ns, uint64_t end_ns); /* each kernel record kept */
	void (*handed_over)(void);     /* another CUPTI client takes CUPTI: write what was gathered */
};

void gt_cupti_register(enum gt_cupti_slot slot, const struct gt_cupti_client *c);
/* A client turned on after CUPTI started: subscribe if need be and enable its callbacks; 0 or -1. */
int gt_cupti_attach(enum gt_cupti_slot slot);

int gt_cupti_start(void);
void gt_cupti_flush(void);
void gt_cupti_tick(void); /* writer, every loop: hand completed activity buffers over every 100 ms */
void gt_cupti_stop_for_other_client(void);
void gt_cupti_kernel_records(int on); /* range metrics' kernel replay: stop kernel records */
/* The launch callbacks off (0) or on (1) again, for bench/overhead/ab.sh's `kact` mode only
 * (gputap_bench_pass(2)); -1 when there are none or a client wants them. */
int gt_cupti_launch_callbacks(int on);

/* Capture windows (tap/capture_tap.c decides when): */
void gt_cupti_capture_windows(void); /* in effect: CUPTI starts when a window opens */
int gt_cupti_capture_open(void);     /* -1: another CUPTI client holds the process */
void gt_cupti_capture_close(void);
uint64_t gt_cupti_capture_flush(void); /* kernels kept since the open */
void gt_cupti_capture_request_finalize(void);

#endif
