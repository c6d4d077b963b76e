/*
 * tap/writer.h — the writer thread and this process's output files.
 *
 * Owns: the `<proc>` folder (and the PFLOG folder's files), trace.gtr,
 * timeline.log and metrics.log; the thread that drains the record chunks to
 * them, refreshes metrics.log every second and hands CUPTI's buffers over
 * every 100 ms; the eventfd that wakes it.
 *
 * Invariants: nothing exists on disk and no thread runs before
 * gt_writer_start (the process's first CUDA call, tap/life.c); only the
 * writer thread writes the files; gt_writer_stop_from_signal and
 * gt_writer_forget are async-signal-safe (atomics, write(2), close(2),
 * nanosleep) and never join.
 */
#ifndef GT_TAP_WRITER_H
#define GT_TAP_WRITER_H

/* Folders, files and the thread. `forked`: a fork child (PFLOG gets a folder of its own). 0, or -1. */
int gt_writer_start(int forked);
/* The final flush: the writer drains, writes the closing counters, closes the files; joined. */
void gt_writer_stop(void);
/* The same from a signal handler: no CUPTI call in the writer, a bounded wait, no join. */
void gt_writer_stop_from_signal(void);
/* A fork child: the parent's files and thread are not ours (closed, forgotten; nothing joined). */
void gt_writer_forget(void);
/* The process folder ("" when none). */
const char *gt_writer_dir(void);

#endif
