/*
 * tap/env.h — the tap's settings, read once from the environment, and the
 * name of this process's output directory.
 *
 * Owns: the list of variables the library reads (GPUTAP_OUT, PFLOG,
 * GPUTAP_TRACE, GPUTAP_BUFFER_MB, GPUTAP_LOG, GPUTAP_HOLD, GPUTAP_HOLD_MAX,
 * GPUTAP_HOLD_TIMEOUT_US, GPUTAP_HOLD_KERNELS, GPUTAP_METRICS, GPUTAP_METRICS_MODE,
 * GPUTAP_TSC),
 * their accepted values and defaults, and the <proc> naming scheme.
 * Pure functions: the caller passes a getenv-like function, so tests need
 * no environment.  A bad value gives one message listing what is accepted,
 * and the default.
 */
#ifndef GT_TAP_ENV_H
#define GT_TAP_ENV_H

#include <stddef.h>
#include <stdint.h>

/* What GPUTAP_TRACE can ask for (bits). */
enum {
	GT_TR_API = 1u << 0,
	GT_TR_KERNEL = 1u << 1,
	GT_TR_MEMCPY = 1u << 2,
	GT_TR_MEMSET = 1u << 3,
	GT_TR_MEMORY = 1u << 4,
	GT_TR_NVTX = 1u << 5,
	GT_TR_ALL = (1u << 6) - 1,
	GT_TR_GPU = GT_TR_KERNEL | GT_TR_MEMCPY | GT_TR_MEMSET | GT_TR_MEMORY, /* what CUPTI activity records */
};

#define GT_TAP_DEFAULT_BUFFER_MB 64u
#define GT_TAP_MAX_BUFFER_MB 65536u

/* Launch hold (docs/hold.md): launches per batch, queue bound, timer. */
#define GT_HOLD_DEFAULT_MAX 1024L
#define GT_HOLD_LIMIT 65536L
#define GT_HOLD_DEFAULT_TIMEOUT_US 1000L
#define GT_HOLD_MAX_TIMEOUT_US 10000000L

struct gt_tap_config {
	const char *out_dir;   /* GPUTAP_OUT or NULL */
	const char *pflog_dir; /* PFLOG or NULL */
	unsigned trace;        /* GT_TR_* bits; 0 with metrics_only */
	int metrics_only;      /* GPUTAP_TRACE=metrics */
	uint64_t buffer_bytes; /* GPUTAP_BUFFER_MB */
	int log_level;         /* GPUTAP_LOG, enum gt_log_level */
	const char *capture;   /* GPUTAP_CAPTURE or NULL */
	long hold;             /* GPUTAP_HOLD: launches per batch, 0 = no hold */
	long hold_max;         /* GPUTAP_HOLD_MAX: most launches the queue holds */
	long hold_timeout_us;  /* GPUTAP_HOLD_TIMEOUT_US: oldest held launch released after this */
	const char *hold_kernels; /* GPUTAP_HOLD_KERNELS: hold only kernels whose name contains one of
				   * these comma-separated words; NULL = all */
	const char *metrics;      /* GPUTAP_METRICS: range-metric list (checked by tap/rmetrics.c), or NULL */
	const char *metrics_mode; /* GPUTAP_METRICS_MODE: auto, kernel or range (NULL = auto) */
	int tsc;                  /* GPUTAP_TSC: 1 auto (calls only counted are timed with the CPU's
				   * time-stamp counter where it is invariant), 0 off (clock_gettime) */
	int rt_callbacks;         /* GPUTAP_RUNTIME_CALLBACKS: -1 auto (a statically linked runtime's copies
				   * named through CUPTI runtime callbacks only when API records are wanted),
				   * 1 on, 0 off */
	int nwarnings;         /* messages printed while parsing */
};

typedef const char *(*gt_getenv_fn)(const char *name);

/*
 * How GPUTAP_BUFFER_MB is shared.  Without GPU activity, all of it is the
 * tap's record pool.  With it, a quarter goes to CUPTI's activity buffers:
 * `cupti_nbufs` (2 to GT_TAP_CUPTI_MAX_BUFS) buffers of `cupti_buf_bytes`
 * (64 KiB to 4 MiB), taken once, handed to CUPTI and back, never more.
 * Many small buffers rather than a few large ones: CUPTI holds several at
 * once when many threads launch (4 x 4 MiB lost half the kernels of eight
 * launching threads on an H100; 16 were enough).
 */
#define GT_TAP_CUPTI_MAX_BUFS 32u
struct gt_buffer_split {
	uint64_t pool_bytes;
	uint32_t cupti_buf_bytes;
	uint32_t cupti_nbufs;
};
void gt_tap_buffer_split(uint64_t total, int gpu, struct gt_buffer_split *s);

/* Fill `c` from the environment. Never fails: bad values give a warning and the default. */
void gt_tap_config_read(struct gt_tap_config *c, gt_getenv_fn get);
/* Parse a GPUTAP_TRACE value into GT_TR_* bits; -1 if a word is unknown. *metrics set for "metrics". */
int gt_tap_parse_trace(const char *s, unsigned *bits, int *metrics);

/*
 * The <proc> directory name.  `rank` is the first of RANK, LOCAL_RANK,
 * OMPI_COMM_WORLD_RANK, SLURM_PROCID that is a non-negative integer (or
 * NULL); `owner` is the inherited GPUTAP_PROC_OWNER ("<pid>:<rank>") of the
 * process that claimed a rank name before us, or NULL; `forked` is set in
 * a fork child.  Scheme:
 *   - no rank:                          pid<P>
 *   - rank R, first to claim it:        rank<R>
 *   - rank R inherited from an ancestor that already claimed rank<R>
 *     (exec'd child), or a fork child:  rank<R>-pid<P>
 * Writes the name to buf and returns 1 when this process claims rank<R> (the
 * caller then exports GPUTAP_PROC_OWNER=<pid>:<R>), else 0.
 */
int gt_tap_proc_name(char *buf, size_t cap, const char *rank, const char *owner, long pid, int forked);
/* The rank variable value to use, or NULL. */
const char *gt_tap_rank(gt_getenv_fn get);

#endif
