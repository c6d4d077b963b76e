/*
 * tap/sources.h — where the tap's records come from, in one table: the
 * driver hooks, the runtime hooks, NVTX, capture windows and CUPTI.
 *
 * Owns: the list of capture sources and what the library's life and the
 * writer thread ask of each: start (the process went live and has a folder),
 * flush (every wake-up of the writer, and once more at the final drain), stop
 * (the final flush begins, CUDA still up).  Each source's own work stays in
 * its file; here it is only named.
 *
 * Invariants: stop runs in table order (held launches are issued before range
 * metrics decode their last ranges, and both before capture windows close);
 * flush in reverse order (a window closed in this wake-up asks CUPTI to hand
 * its records over in the same one); a NULL entry is skipped; flush(1) is
 * never called from a signal's final drain (no CUPTI call there, writer.h).
 */
#ifndef GT_TAP_SOURCES_H
#define GT_TAP_SOURCES_H

struct gt_source {
	const char *name;
	void (*start)(const char *proc_dir); /* outputs exist (proc_dir: the process folder) */
	void (*flush)(int final);            /* writer thread: 0 every wake-up, 1 at the final drain */
	void (*stop)(void);                  /* the final flush begins */
};

void gt_sources_start(const char *proc_dir);
void gt_sources_flush(int final);
void gt_sources_stop(void);

#endif
