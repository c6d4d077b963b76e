/*
 * analyze/findings.h — findings: what is wrong with a run, the evidence, what fixing it would gain,
 * and the fix (`gputap advise`, the top of `gputap analyze`, of the report and of `gputap run`'s
 * summary).  Every kind, its thresholds and why are in docs/findings.md.
 *
 * Owns: the collector the readers feed while `analyze` reads its inputs (only what the analysis
 * does not keep: API call names, copy memory kinds, grids, device SM counts), the GPU idle gaps
 * measured in the analysis' own sweep (one call per GPU op, in start order), and the list of
 * findings built from those and from the analysis' result.
 *
 * Invariants: the collector never reads an input itself (one pass, shared with the analysis);
 * its memory grows with the synchronizing/allocating API calls and the distinct kernel names, not
 * with the ops; ids (`launch-bound`, `host-sync`, ...) are stable, listed in docs/findings.md;
 * findings are sorted by estimated gain, largest first; a kind the input cannot show is listed in
 * `not_checked` with why, never silently left out.
 */
#ifndef GT_AN_FINDINGS_H
#define GT_AN_FINDINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GT_FD_SCHEMA_VERSION 1
#define GT_FD_MIN_GAIN_PCT 2.0 /* default --min-gain: findings below it are counted, not listed */

struct gt_an_result;
struct gt_ev;
struct gt_launch;

/* One event that shows the finding, with enough to find it in Perfetto. */
struct gt_fd_event {
	uint64_t ts_ns, dur_ns; /* on the input's clock */
	double ts_us;           /* the time as the input's Perfetto view shows it (µs) */
	char what[160];
	char where[96];
	uint64_t call_ns, call_dur_ns; /* the host call behind it: start and duration (0: none) */
};

struct gt_fd_item {
	char id[32];
	char title[200];
	char **evidence; /* lines, most telling first */
	size_t nevidence;
	double gain_ms;   /* per iteration */
	double gain_pct;  /* of the iteration time */
	int upper_bound;  /* 1: the gain is an upper bound */
	char method[400]; /* how the gain was estimated */
	char where[240];  /* ranks/GPUs/streams, API call, kernel or range */
	char fix_torch[400], fix_cuda[400], reference[240];
	struct gt_fd_event ev[3];
	int nev;
};

struct gt_fd_skip {
	char id[32];
	char why[240];
};

struct gt_fd_list {
	struct gt_fd_item *v; /* sorted by gain, largest first */
	size_t n;
	struct gt_fd_skip *skipped; /* kinds not checked on this input, and why */
	size_t nskipped;
	char **checked; /* ids of the kinds checked */
	size_t nchecked;
	double iter_ms; /* the iteration time the percentages are of */
	int iters;      /* iterations found (0: none; the whole input counts as one) */
	char iter_how[200];
};

/* ---- the collector (analyze.c creates it when opts.findings is set) ---- */
struct gt_fd;
struct gt_fd *gt_fd_new(void);
void gt_fd_free(struct gt_fd *f);

/* Readers: what the analysis does not keep.  `source` is the reader's source (rank). */
/* Where the input's Perfetto view counts its time from (gputap: the trace header's start). */
void gt_fd_timebase(struct gt_fd *f, int source, uint64_t base_ns);
/* Any host API call (name as the trace has it: cudaStreamSynchronize, cuMemAlloc, ...). */
int gt_fd_api(struct gt_fd *f, int source, const char *name, uint64_t start, uint64_t end);
/* The same for a gputap trace: `id` the name's string id, whose kind is looked up once. */
int gt_fd_api_id(struct gt_fd *f, int source, uint32_t id, const char *name, uint64_t start, uint64_t end);
/* A CPU operator of a PyTorch trace (aten::item, ...): the synchronizations inside it are named by it. */
int gt_fd_cpu_op(struct gt_fd *f, int source, const char *name, uint64_t start, uint64_t end);
/* A kernel: grid and block (0: unknown), achieved occupancy in % (< 0: unknown). */
/* `ni` the analysis' name index of the kernel, `name` its name there (kept, not copied). */
int gt_fd_kernel(struct gt_fd *f, int source, int device, uint32_t stream, uint32_t ni, const char *name,
		 uint64_t start, uint64_t end, const uint32_t grid[3], const uint32_t block[3]);
/* A copy: `kind` enum gt_copy_kind; src/dst CUpti_ActivityMemoryKind (1 pageable, 2 pinned, 3 device;
 * 0 unknown). */
int gt_fd_memcpy(struct gt_fd *f, int source, int device, uint32_t stream, uint64_t start, uint64_t end,
		 uint64_t bytes, uint64_t corr, int kind, int src_kind, int dst_kind);
int gt_fd_memset(struct gt_fd *f, int source, int device, uint32_t stream, uint64_t start, uint64_t end,
		 uint64_t bytes, uint64_t corr);
/* A GPU's multiprocessors and compute capability (0: unknown). */
void gt_fd_device(struct gt_fd *f, int source, int device, unsigned sms, unsigned cc_major, unsigned cc_minor);
/* A Kineto memcpy name ("Memcpy HtoD (Pageable -> Device)") -> its copy kind and memory kinds. */
void gt_fd_kineto_copy(const char *name, int *kind, int *src_kind, int *dst_kind);

/* The analysis' sweep (timeline.c): once before the first op, then every GPU op in start order with
 * its launch (NULL: not in the trace) and iteration (-1: none). */
void gt_fd_begin(struct gt_fd *f, const struct gt_an_result *r);
void gt_fd_op(struct gt_fd *f, const struct gt_ev *e, int source, const struct gt_launch *l, long iter);

/* After the analysis: the findings, from the collector and the result.  NULL: out of memory. */
struct gt_fd_list *gt_fd_finish(struct gt_fd *f, const struct gt_an_result *r);
/* A run directory's GPUs (run.json: name, compute capability; the SM count from the name) for the
 * findings, before gt_fd_finish; nothing for other inputs (findings_counters.c). */
void gt_fd_rundir(struct gt_fd *f, const char *dir);
/* The findings that need a run's per-kernel counters (DIR/<proc>/kernel_metrics.csv): uncoalesced
 * loads, low achieved occupancy; added to `l` (findings_counters.c).  Nothing for other inputs. */
void gt_fd_counters(struct gt_fd_list *l, const struct gt_an_result *r, const char *dir);
/* The findings of an input with no timeline (nsys summary CSVs): everything not checked. */
struct gt_fd_list *gt_fd_none(const char *why);
/* A new, zeroed finding `id` at the end of l (NULL when out of memory): for the kinds of findings_counters.c too. */
struct gt_fd_item *gt_fd_new_item(struct gt_fd_list *l, const char *id);
/* Order l->v most costly first (ties by id), as every output lists findings. */
void gt_fd_rank(struct gt_fd_list *l);
/* Kind `id` was checked on this input (listed once in l->checked). */
void gt_fd_checked(struct gt_fd_list *l, const char *id);
/* One line of evidence (printf-style) at the end of it's list. */
void gt_fd_evidence(struct gt_fd_item *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_fd_list_free(struct gt_fd_list *l);
/* Whether a finding is listed at this threshold: at least min_gain % of an iteration and at least
 * 10 us per iteration (the rest are counted as below the threshold). */
int gt_fd_listed(const struct gt_fd_item *it, double min_gain);
/* How many findings are listed at this threshold. */
size_t gt_fd_shown(const struct gt_fd_list *l, double min_gain);

/* ---- output ---- */
/* Text: the ranked list (findings of at least min_gain_pct, then how many were below it, then what
 * was not checked).  `brief`: one line per finding plus its gain (the tops of analyze, report, run). */
void gt_fd_print_text(const struct gt_fd_list *l, double min_gain_pct, int brief, FILE *f);
/* HTML: a section for the top of the report page. */
void gt_fd_print_html(const struct gt_fd_list *l, double min_gain_pct, FILE *f);
/* JSON: the value of a "findings" member (a yajl_gen). */
void gt_fd_json(void *gen, const struct gt_fd_list *l, double min_gain_pct);

#endif
