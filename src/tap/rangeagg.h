/*
 * tap/rangeagg.h — per-range results of the public ranges (gputap_range_push/pop):
 * ranges keyed by path ("train/forward"), each with its calls and wall time,
 * the kernels launched inside it (count, GPU time: sum, min, max) and its
 * memory activity (allocations and frees: count and bytes; peak in use).
 *
 * Owns: a fixed table of range paths (a path is its parent's path plus a
 * name id), the launch -> range links by CUPTI correlation id, and the JSON
 * text of the results.
 *
 * Invariants:
 *  - lock-free; nothing allocates except gt_ra_json (called from the
 *    program's own thread through gputap_results_json, never from a hook);
 *  - a path is in the table at most once; node numbers are index + 1, 0 means
 *    "no node" (table full: the range is counted in lost_ranges);
 *  - kernels and memory are inclusive: they count in the range they happened
 *    in and in every enclosing range of the path;
 *  - a kernel whose launch link was overwritten before its record arrived
 *    (more than GT_RA_LINKS launches in ranges in between) is counted in
 *    lost_links, never in a wrong range.
 * Pure: no CUDA, no tap globals; unit-tested on its own.
 */
#ifndef GT_TAP_RANGEAGG_H
#define GT_TAP_RANGEAGG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define GT_RA_NODES 8192u       /* power of two */
#define GT_RA_LINKS (1u << 18)  /* power of two */
#define GT_RA_SETS 1024u        /* power of two: launches linked to several ranges at once */
#define GT_RA_SET_MAX 8         /* ranges per such launch (one per other thread) */
#define GT_RA_SET_TAG 0x8000u   /* a link's node field with this bit names a set, not a node */
#define GT_RA_MAX_DEPTH 64

struct gt_ra_node {
	_Atomic uint64_t key; /* (parent node << 32 | name_id) + 1, 0 = free slot */
	_Atomic uint32_t seq; /* creation order from 1; 0 while being created */
	uint32_t level;
	_Atomic uint64_t calls, wall_ns, wall_min_ns, wall_max_ns;
	_Atomic uint64_t kernels, gpu_ns, gpu_min_ns, gpu_max_ns;
	_Atomic uint64_t timed; /* kernels whose GPU time is known (gpu_* are over these) */
	_Atomic uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
	_Atomic int64_t peak_bytes;
};

struct gt_ra {
	struct gt_ra_node *nodes;  /* GT_RA_NODES */
	_Atomic uint64_t *links;   /* GT_RA_LINKS: corr << 16 | node (or GT_RA_SET_TAG | set) */
	_Atomic uint32_t (*sets)[GT_RA_SET_MAX]; /* GT_RA_SETS: nodes, 0-terminated */
	_Atomic uint32_t next_set;
	_Atomic uint32_t next_seq;
	_Atomic uint64_t lost_ranges, lost_links, kernels_total, kernels_in_ranges;
};

/* Memory for one table: nodes then links (zeroed by the caller). */
size_t gt_ra_mem_size(void);
void gt_ra_init(struct gt_ra *a, void *mem);

/* The node of `name_id` under `parent` (0 = top level), created if new; 0 when full. */
uint32_t gt_ra_node(struct gt_ra *a, uint32_t parent, uint32_t name_id);
uint32_t gt_ra_parent(const struct gt_ra *a, uint32_t node);
uint32_t gt_ra_name(const struct gt_ra *a, uint32_t node);
/* One occurrence of `node` closed after `wall_ns`; `peak` = highest memory in use seen in it. */
void gt_ra_close(struct gt_ra *a, uint32_t node, uint64_t wall_ns, int64_t peak);
/* A launch with correlation id `corr` happened inside `node`. */
void gt_ra_link(struct gt_ra *a, uint64_t corr, uint32_t node);
/* A launch that counts in several ranges at once (made on a thread with no open range: it
 * counts in the range open on each other thread); each node of the union of their paths
 * counts its kernels once.  n == 1 is gt_ra_link; more than GT_RA_SET_MAX are cut. */
void gt_ra_link_set(struct gt_ra *a, uint64_t corr, const uint32_t *nodes, int n);
/* A kernel record: counted in the node its launch was linked to (and that node's parents). */
void gt_ra_kernel(struct gt_ra *a, uint64_t corr, uint64_t ns);
/* A kernel whose GPU time is not known (kernel records off): counted, not timed. */
void gt_ra_kernel_untimed(struct gt_ra *a, uint64_t corr);
/* An allocation (alloc = 1) or a free of `bytes` inside `node` (and its parents). */
void gt_ra_mem(struct gt_ra *a, uint32_t node, int alloc, uint64_t bytes);
/* The same for several open ranges at once (e.g. one per thread): each node of the union of
 * their paths counts the event once. */
void gt_ra_mem_set(struct gt_ra *a, const uint32_t *nodes, int n, int alloc, uint64_t bytes);
/* Forget every count (paths stay known); ranges open now count from here. */
void gt_ra_reset(struct gt_ra *a);

/* A growing text buffer for JSON (malloc'd; on allocation failure `failed` is set). */
struct gt_jbuf {
	char *p;
	size_t len, cap;
	int failed;
};
void gt_jb_put(struct gt_jbuf *b, const char *s, size_t n);
void gt_jb_puts(struct gt_jbuf *b, const char *s);
void gt_jb_printf(struct gt_jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal of `n` bytes of `s` (escaped; invalid UTF-8 bytes become U+FFFD). */
void gt_jb_str(struct gt_jbuf *b, const char *s, size_t n);

typedef const char *(*gt_ra_name_fn)(uint32_t name_id, uint32_t *len, void *arg);
/* `"ranges":[...]` in creation order; `open[node-1]` = occurrences open now (or NULL). Ranges never
 * closed and not open are left out. */
void gt_ra_json(const struct gt_ra *a, struct gt_jbuf *b, gt_ra_name_fn name, void *arg, const uint32_t *open);

#endif
