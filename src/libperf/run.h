/*
 * libperf/run.h — `gputap libperf`: the replay of recorded library configs
 * (library_trace.csv, liblog/libtrace.h) on a GPU, written as
 * library_perf.csv.
 *
 * Owns: the one entry point of libperf/ for the rest of the tree (the CLI);
 * every other header of libperf/ is internal to it.
 */
#ifndef GT_LIBPERF_RUN_H
#define GT_LIBPERF_RUN_H

#include <stddef.h>
#include <stdio.h>

struct gt_libperf_opts {
	int iters;  /* timed runs per algorithm (median), default 20 */
	int warmup; /* untimed runs first, default 5 */
	int max_algos; /* algorithms asked of the heuristic, default 16 */
	int device; /* CUDA device ordinal */
	FILE *progress; /* one line per config, NULL for none */
	int warm_cache; /* 1: leave the GPU's L2 cache as the last run left it (no flush between timed runs) */
};
/* Header of library_perf.csv (documented in docs/libtrace.md). */
extern const char gt_libperf_header[];
/* Replay every config of `in` (library_trace.csv) on the GPU and write
 * `out`.  0; -1 with err for bad input; -2 with err when no GPU (or no
 * cuBLASLt) can be used. */
int gt_libperf_run(const char *in, const char *out, const struct gt_libperf_opts *o, char *err, size_t errlen);

#endif
