/*
 * trace/holdnames.h — the words of launch hold that the trace carries and the
 * readers show: why the queue was released, why a launch was not held.
 *
 * Owns: the two lists, their keys (the words in trace.gtr: the reason of a
 * GT_REC_HOLD release record, the counters "hold.release.KEY" and
 * "hold.not_held.KEY") and their names for people.  The tap (tap/hold.h)
 * and the readers (export/holdstat.h) use these same lists; docs/hold.md
 * explains each.
 */
#ifndef GT_TRACE_HOLDNAMES_H
#define GT_TRACE_HOLDNAMES_H

/* Why the queue was released: X(ENUM, key, name).  The first entries are
 * releases no driver call makes; the rest are the classes of driver calls
 * of the trigger table (tap/holdtab.c), PASS being "never releases". */
#define GT_HOLD_REASONS(X)                                                                         \
	X(PASS, "pass", "none")                                                                    \
	X(FULL, "full", "batch full")                    /* N launches queued */                   \
	X(BYTES, "bytes", "argument space")              /* the arena could not take the next */   \
	X(TIMER, "timer", "timer")                       /* oldest waited GPUTAP_HOLD_TIMEOUT_US */ \
	X(LAUNCH, "launch", "launch not held")           /* keeps its place in order */            \
	X(EXIT, "exit", "exit")                                                                    \
	X(FORK, "fork", "fork")                                                                    \
	X(REQUEST, "request", "request")                 /* the library asked (capture windows) */ \
	X(COPY, "copy", "copy")                                                                    \
	X(MEMSET, "memset", "memset")                                                              \
	X(EVENT, "event", "event record")                                                          \
	X(WAIT, "wait", "stream wait")                                                             \
	X(SYNC, "sync", "synchronize")                                                             \
	X(MEMOP, "memop", "stream memory operation")                                               \
	X(HOSTFN, "hostfn", "host function")                                                       \
	X(GRAPH, "graph", "graph launch")                                                          \
	X(ASYNC_ALLOC, "alloc", "stream-ordered allocation")                                       \
	X(UNIFIED, "unified", "unified memory")                                                    \
	X(FREE, "free", "free")                                                                    \
	X(DESTROY, "destroy", "stream or event destroy")                                           \
	X(UNLOAD, "unload", "module unload")                                                       \
	X(CONTEXT, "context", "context")                                                           \
	X(CAPTURE, "capture", "stream capture")                                                    \
	X(STATE, "state", "launch state")                                                          \
	X(INTEROP, "interop", "interop")                                                           \
	X(PROFILER, "profiler", "profiler")                                                        \
	X(OLD_LAUNCH, "old_launch", "launch never held")                                           \
	X(OTHER, "other", "other driver call")

#define GT_HOLD_ENUM(n, k, s) GT_HOLD_##n,
enum gt_hold_reason { GT_HOLD_REASONS(GT_HOLD_ENUM) GT_HOLD_NREASONS };
#undef GT_HOLD_ENUM

/* Why a launch was not held: X(ENUM, key, name). */
#define GT_HOLD_REFUSALS(X)                                                                        \
	X(CAPTURE, "capture", "stream capture")         /* its stream captures, or may */          \
	X(PER_THREAD, "per_thread", "per-thread stream") /* only its thread can name the stream */ \
	X(LAYOUT, "layout", "argument layout")          /* the driver does not give the layout */  \
	X(ARGS, "args", "arguments")                    /* both/neither forms, NULL, unknown key */ \
	X(ATTRIBUTE, "attribute", "launch attribute")   /* an attribute that is not held */        \
	X(CHECK, "check", "launch check")               /* would fail, or could not be checked */   \
	X(COOPERATIVE, "cooperative", "cooperative size")                                          \
	X(HOST_MEMORY, "host_memory", "host memory")    /* an argument points into pinned/managed */ \
	X(BY_NAME, "by_name", "called by name")         /* the program's other calls are unseen */ \
	X(NESTED, "nested", "nested")                   /* inside another interposed call */       \
	X(FILTER, "filter", "filter")                   /* GPUTAP_HOLD_KERNELS does not name it */ \
	X(SIZE, "size", "too large")                    /* does not fit the argument space */      \
	X(CLOSED, "closed", "after exit")

#define GT_HOLD_ENUM(n, k, s) GT_HOLD_NO_##n,
enum gt_hold_refusal { GT_HOLD_REFUSALS(GT_HOLD_ENUM) GT_HOLD_NREFUSALS };
#undef GT_HOLD_ENUM

extern const char *const gt_hold_reason_keys[GT_HOLD_NREASONS];
extern const char *const gt_hold_reason_names[GT_HOLD_NREASONS];
extern const char *const gt_hold_refusal_keys[GT_HOLD_NREFUSALS];
extern const char *const gt_hold_refusal_names[GT_HOLD_NREFUSALS];

/* The index of a key, or -1. */
int gt_hold_reason_of_key(const char *key);
int gt_hold_refusal_of_key(const char *key);

#endif
