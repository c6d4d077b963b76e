/*
 * gputap.h — ranges and markers for programs that want to name their own
 * phases in a gputap recording.
 *
 * The functions live in libgputap.so.  Link with -lgputap (or dlsym them):
 * when the program runs without gputap (no GPUTAP_OUT or PFLOG set), they
 * do nothing and cost a few nanoseconds.  Safe from any thread; never
 * allocate, lock or print.  A range opened on a thread is closed on the same
 * thread; ranges nest (up to 64 levels are recorded, deeper ones are counted
 * as lost).  Records are GT_REC_RANGE with kind GT_RANGE_USER.
 */
#ifndef GPUTAP_H
#define GPUTAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* Open a range named `name` on this thread; returns its nesting level (0 = outermost), -1 if not recording. */
int gputap_range_push(const char *name);
/* Close the innermost open range of this thread; returns its level, -1 if none or not recording. */
int gputap_range_pop(void);
/* A point in time named `name` (a range whose start equals its end). */
void gputap_mark(const char *name);
/* 1 while the library records this process, else 0. */
int gputap_active(void);

#ifdef __cplusplus
}
#endif

#endif
