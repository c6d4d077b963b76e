/*
 * tap/pcsamp.h — PC sampling: CUPTI's PC Sampling API (cupti_pcsampling.h)
 * in continuous mode, alongside the kernel trace, while the program runs.
 *
 * Owns: GPUTAP_PCSAMP (off, or the sampling period as N of 2^N cycles), the
 * PC sampling of every CUDA context (enabled when CUPTI reports it created,
 * drained by the writer thread every 100 ms and when CUPTI reports it about
 * to be destroyed or a module about to be unloaded, disabled at the end),
 * the copies of the modules' cubins (from CUPTI's MODULE_LOADED callback, at
 * most GPUTAP_PCSAMP_CUBIN_MB), their PCs' source lines
 * (cuptiGetSassToSourceCorrelation, at the end), and the process's files:
 * <proc>/pc_samples.csv, <proc>/pc_sampling_totals.csv and
 * <proc>/pcsamp/<crc>.cubin for the modules that have samples.
 * Windows (gputap_pcsamp_start / gputap_pcsamp_stop, include/gputap.h): with
 * GPUTAP_PCSAMP_WINDOW set, contexts are configured with start/stop control
 * and sample only inside windows; without it, the first window call drops the
 * samples so far and re-enables every context so.  A window call also enables
 * the contexts that existed before sampling started (the current one and the
 * active primary ones), which CUPTI never reported created.
 *
 * Invariants:
 *  - nothing here runs on a kernel launch: only resource callbacks (context
 *    created / destroy starting, module loaded / unload starting), the
 *    writer thread, the end and the window calls (the program's threads,
 *    never a CUPTI callback); with GPUTAP_PCSAMP unset every entry point
 *    returns at its first test;
 *  - CUPTI's PC sampling calls and the aggregation are serialised by one
 *    mutex; the cubin copies are made outside it.
 */
#ifndef GT_TAP_PCSAMP_H
#define GT_TAP_PCSAMP_H

#include <stdatomic.h>

#include <cupti_callbacks.h>

#define GT_PCS_PERIOD_MIN 5
#define GT_PCS_PERIOD_MAX 31
#define GT_PCS_PERIOD_DEFAULT 17

/* Set-up (the process went live): PC sampling registers with the CUPTI switchboard (tap/cupti.h),
 * which calls the next three. */
void gt_pcs_init(void);
/* GPUTAP_PCSAMP read (once): 1 when PC sampling is wanted.  Called where CUPTI starts. */
int gt_pcs_wanted(void);
/* CUPTI loaded and subscribed: resolve the PC sampling functions from `lib`; 0 or -1 (said once). */
int gt_pcs_start(void *lib);
/* Resource callbacks (the switchboard forwards them while gt_tap.pcs_active). */
void gt_pcs_resource(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data);
void gt_pcs_tick(void);   /* writer: drain every context (every 100 ms) */
void gt_pcs_finish(void); /* drain, disable, source lines, files; idempotent */
/* Parse a period: "" / "default" / "on" -> default, 5..31 -> itself; -1 otherwise. */
int gt_pcs_parse_period(const char *s);

#endif
