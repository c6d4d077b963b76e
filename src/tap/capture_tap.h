/*
 * tap/capture_tap.h — capture windows inside the library.
 *
 * Owns: the one window state machine of this process (tap/capture.h) and what
 * follows from its transitions: `gt_tap.cap_live` (records are written only while
 * it is 1), CUPTI started at a window's open and finalized after its close
 * (tap/cupti.h; nothing of CUPTI outside windows: set up and idle, it slows
 * every launch), a GT_RANGE_WINDOW record per window, and `gputap
 * trigger` requests read from the process folder's `control/` directory.
 *
 * Invariants: without GPUTAP_CAPTURE, gt_tap.cap_live is 1 from the start and
 * nothing here runs; every entry point is cheap when capture is off; the
 * state machine is touched under one mutex, never from a signal handler.
 */
#ifndef GT_TAP_CAPTURE_TAP_H
#define GT_TAP_CAPTURE_TAP_H

#include <stddef.h>
#include <stdint.h>

int gt_capture_tap_mode(void); /* 1 when GPUTAP_CAPTURE is in effect */
/* At start: parse the SPEC (a bad one: one warning, the whole run traced). */
void gt_capture_tap_init(const char *spec, uint64_t start_ns);
/* The control folder for `gputap trigger` inside the process folder (mode 0700). */
void gt_capture_tap_outputs(const char *proc_dir);
/* t_ns: when the range opened (a window it opens starts then) */
void gt_capture_tap_range_open(uint32_t name_id, uint64_t key, int top_level, uint64_t t_ns);
void gt_capture_tap_range_close(uint64_t key, int top_level);
void gt_capture_tap_profiler(int start);
/* The writer thread, at every wake-up: time windows, trigger requests, CUPTI finalize after a close. */
void gt_capture_tap_tick(void);
/* 1 while a closed window's GPU records are awaited: the writer then wakes every few ms. */
int gt_capture_tap_busy(void);
/* tap/tap.c: wake the writer thread now */
void gt_tap_wake_writer(void);
/* At exit: close open windows. */
void gt_capture_tap_finish(void);

/* The CUPTI side of a window is the switchboard's: gt_cupti_capture_* (tap/cupti.h). */

#endif
