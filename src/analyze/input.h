/*
 * analyze/input.h — what a reader of gputap analyze fills and calls back into while it reads.
 *
 * Owns: the reading context (struct gt_an_ctx: the name table, the timeline engine, the notes, the
 * NVTX ranges seen and those kept for the default iteration range), the services the readers
 * (gtr.c, kineto.c, nsyscsv.c, sqlite.c) call (notes, source labels, progress, which ranges are
 * iterations), the checks of ids and times that every reader applies, and, for analyze.c after
 * the read, the default iteration range picked from the ranges seen.
 *
 * Invariant: input.c calls no reader and nothing of analyze.c.  analyze.c calls the readers, the
 * readers and analyze.c call input.c: the arrows run one way.
 */
#ifndef GT_AN_INPUT_H
#define GT_AN_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/an_internal.h"

/* ---- the reading context ---- */
struct gt_an_ctx {
	const struct gt_an_opts *o;
	struct gt_colls *colls; /* NULL unless opts.collectives */
	struct gt_names names;
	struct gt_tl tl;
	int has_tl, has_mem, has_nvtx;
	uint64_t nvtx_count;
	double nvtx_total_ns;
	int nsources;
	int tag_is_profiler_step; /* no tag given: ProfilerStep#N ranges count */
	int tag_is_windows;       /* tag is GT_AN_WINDOWS_TAG: each capture window is one iteration */
	uint64_t windows_seen;    /* capture windows in the gputap traces read */
	const char *tag;
	char **notes;
	size_t nnotes;
	const struct gt_an_map *map; /* the options' map, else the default one (default_map) */
	struct gt_an_map *default_map;
	char **paths; /* per source: the file it was read from (messages about duplicate labels) */
	size_t npaths;
	struct gt_names seen; /* NVTX range names of the input being read, with count and time (messages,
				 the default iteration range) */
	int progress;
	uint64_t hta_sync, hta_cpu_stream; /* Kineto events HTA counts as GPU work and gputap does not */
	uint64_t gpu_ops;                  /* GPU ops read (all inputs) */
	struct gt_fd *fd;                  /* the findings collector (opts.findings), NULL: none */
	/* gt_an_range_at: the ranges that may become the iterations (name: index into cand_names) */
	struct gt_an_cand {
		uint64_t start, end;
		uint32_t name;
		int source;
	} *cand;
	size_t ncand, capcand;
	struct gt_names cand_names;
	int cand_off; /* 1: not kept (a tag, too many, an input without timeline): read again instead */
};

/* ---- what the readers call ---- */
void gt_an_note(struct gt_an_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Name source `source`, read from `path`, as gt_tl_label does; a label another source already has
 * (two files of one rank) gets the file's name added, with a note.  0 or -1 (out of memory). */
int gt_an_label(struct gt_an_ctx *c, int source, const char *label, const char *path);
/* Every reader calls this for each NVTX range (Kineto: user annotation) it reads, matching or not:
 * `count` ranges of `name` lasting `ns` in all.  ProfilerStep#<n> counts as "ProfilerStep#N". */
void gt_an_range_seen(struct gt_an_ctx *c, const char *name, double ns, uint64_t count);
/* A range of a timeline that is not (yet) an iteration range, kept while no iteration range is known
 * (no tag, no ProfilerStep#N so far), so that the range picked at the end (the one that repeats and
 * covers the most time) needs no second read of the inputs. */
void gt_an_range_at(struct gt_an_ctx *c, int source, const char *name, uint64_t start, uint64_t end);
/* 1 if `name` is an iteration range for this run (the tag, or ProfilerStep#N when no tag). */
int gt_an_is_iter_range(const struct gt_an_ctx *c, const char *name);
void gt_an_progress(struct gt_an_ctx *c, const char *path, uint64_t done, uint64_t total);
/* The last part of a path ("a/b/c.json" -> "c.json"). */
const char *gt_an_base_name(const char *path);

/* ---- after the read of each input, and of all (analyze.c) ---- */
/* After one input: when the iteration range matched nothing in it, say so and name the ranges it
 * has; keep each name's largest count in one input and its total time in `all`, to pick a default. */
void gt_an_input_done(struct gt_an_ctx *c, struct gt_names *all, const char *input, uint64_t matched_before);
/* With no ProfilerStep#N range: the range name of `all` that repeats in an input and covers the most
 * time; never an empty name nor a warm-up range.  NULL: none. */
const char *gt_an_default_range(const struct gt_names *all);
/* The kept ranges named `name` become the iterations, as a second read with --nvtx NAME would
 * make them.  0, or -1 (out of memory). */
int gt_an_apply_cand(struct gt_an_ctx *c, const char *name);

/* ---- ids and times: every reader checks them the same way (docs/analyze.md, "Bad input") ----
 * A device or rank id is an integer from 0 to GT_AN_MAX_ID, kept exact; a time is a count of ns from
 * 0 to GT_AN_MAX_NS.  Anything else is refused, the file and row named: a wrapped id would merge two
 * GPUs, a clamped time would move work without a word. */
#define GT_AN_MAX_ID 2147483647
#define GT_AN_MAX_NS ((uint64_t)INT64_MAX)
#define GT_AN_ID_RANGE "an integer from 0 to 2147483647"

/* Parse a decimal with optional fraction and exponent, scaled by 10^scale (e.g. µs -> ns: 3).
 * 0, or GT_AN_NAN (not a number), GT_AN_NEGATIVE, GT_AN_RANGE (2^64 or more once scaled). */
enum { GT_AN_NAN = -1, GT_AN_NEGATIVE = -2, GT_AN_RANGE = -3 };
int gt_an_parse_fixed(const char *s, size_t len, int scale, uint64_t *out);
/* A device or rank id written as a JSON number ("3", "3.0"): 0, or -1 when it is not one. */
int gt_an_parse_id(const char *s, size_t len, int64_t *out);

#endif
