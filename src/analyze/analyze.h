/*
 * analyze/analyze.h — `gputap analyze`: per-iteration tables from nsys CSV/SQLite, PyTorch-profiler
 * (Kineto) traces and gputap run directories, with measured compute/communication overlap.
 *
 * Owns: the library-level API other parts (report, convert) call, and the result structure.
 * The result is plain data, owned by the caller once returned, freed with gt_an_free().
 *
 * Invariants:
 *  - times are nanoseconds (double: sums of ns stay exact below 2^53 ns, about 104 days);
 *  - `classes[0]` is always "others"; then the map's classes in map order (lower-cased, as the GPU Performance Analyzer);
 *  - NCCL kernels are never in `classes`: they are in `nccl`, one row per collective;
 *  - timeline numbers (`gpus`, `iters` of each gpu, `total`) exist only when an input had a
 *    timeline (SQLite, Kineto, gputap run): `has_timeline` says so.  Summary CSVs have none.
 *  - definitions of every quantity are in docs/analyze.md (they match HTA's merged intervals);
 *  - with iteration ranges, a GPU op belongs to the iteration that launched it (correlation id ->
 *    API call -> range holding the call's start), else to the window of its GPU time.
 */
#ifndef GT_ANALYZE_H
#define GT_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/visit.h"
#include <stdio.h>

#define GT_AN_SCHEMA_VERSION 2 /* "schema_version" of the JSON output */

/* One row of a table: a kernel class, an NCCL collective, or a memory operation. */
struct gt_an_stat {
	char *name;
	double time_ns;          /* total over the whole input (all iterations, all GPUs) */
	uint64_t count;          /* instances over the whole input */
	double time_per_iter_ns; /* time_ns / (iters * gpus) */
	uint64_t count_per_iter; /* sum over kernel names of floor(count / (iters * gpus)), as the GPU Performance Analyzer */
};

/* Measured numbers of one GPU over one window (an iteration or the whole input). */
struct gt_an_window {
	uint64_t start_ns, end_ns; /* the window (iteration range or whole input) */
	uint64_t first_ns, last_ns; /* first start / last end of GPU work inside the window (0 if none) */
	double span_ns;       /* last_ns - first_ns: HTA's "kernel_time" */
	double busy_ns;       /* |union of kernel, memcpy and memset intervals| */
	double idle_ns;       /* span_ns - busy_ns */
	double kernel_ns;     /* sum of kernel durations (not merged) */
	uint64_t kernels;     /* kernels that started in the window */
	uint64_t memops;      /* memcpy/memset that started in the window */
	double compute_ns;    /* |union of non-NCCL kernel intervals| */
	double comm_ns;       /* |union of NCCL kernel intervals| */
	double overlap_ns;    /* |compute union ∩ comm union| */
	double exposed_ns;    /* comm_ns - overlap_ns */
	double memop_ns;      /* |union of memcpy/memset intervals| */
	double non_compute_ns; /* span_ns - compute_ns - idle_ns (HTA's non_compute_time) */
};

/* What HTA's default view leaves out (counted whatever the options say), and what the selection
 * options (--launched-only, --without-last-step) left out of every table here. */
struct gt_an_hta {
	uint64_t nolaunch_ops;  /* GPU ops whose launch event is not in the trace (launched before it began) */
	double nolaunch_ns;
	uint64_t last_step_ops; /* launched at or after the start of the last ProfilerStep (2 or more steps) */
	double last_step_ns;
	uint64_t sync_events;       /* Kineto "cuda_sync" events: HTA counts them as GPU work */
	uint64_t cpu_stream_events; /* other CPU-side events that carry args.stream: HTA counts them too */
	uint64_t left_out_ops;      /* left out here by the selection options */
	double left_out_ns;
};

/* One stream of one GPU: idle time between consecutive ops by cause (as HTA's idle time breakdown),
 * and the launch queue (ops launched and not yet started, as HTA's queue length). */
enum { GT_IDLE_HOST, GT_IDLE_KERNEL, GT_IDLE_OTHER, GT_IDLE_N };
struct gt_an_stream {
	size_t gpu;      /* index into gpu[] */
	uint32_t stream;
	uint64_t ops;
	double idle_ns[GT_IDLE_N]; /* host wait, kernel wait, other */
	uint64_t idle_n[GT_IDLE_N];
	uint64_t queued;        /* ops whose launch is in the trace (the queue counts only those) */
	uint32_t queue_max;
	double queue_mean;      /* mean over the changes of the queue length (HTA's summary) */
	double queue_time_mean; /* mean over time, from the first launch to the last start */
	uint32_t *queue_series; /* nbuckets: the largest queue length in each time bucket */
};

/* One kernel (or memory-operation kind) of one rank: time, and its launches. */
struct gt_an_kernel {
	char *name;
	int source;
	int cat; /* 0 compute, 1 communication, 2 memory */
	double time_ns, min_ns, max_ns;
	uint64_t count;
	uint64_t launched;   /* ops of it whose launch event is in the trace */
	double cpu_ns;       /* sum of their launch calls' durations */
	double delay_ns;     /* sum of launch delays: GPU start - end of the launch call, 0 if negative */
	double delay_max_ns, delay_p50_ns, delay_p90_ns, delay_p99_ns; /* exact (numpy's linear
				* interpolation); NAN when no launch call of it is in the trace: unknown */
	uint64_t short_n;          /* launch call <= runtime cutoff and the op shorter than its launch call */
	uint64_t delay_outliers;   /* launch delay > delay cutoff */
	uint64_t runtime_outliers; /* launch call > runtime cutoff */
};

/* Memory bandwidth of one kind of memory operation on one GPU. */
struct gt_an_membw {
	size_t gpu;
	char kind[32]; /* "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memcpy PtoP", "Memcpy HtoH", "Memset" */
	uint64_t count, bytes;
	double time_ns;     /* sum of durations */
	double avg_gbps;    /* bytes / time_ns */
	double peak_gbps;   /* the largest sum of the bandwidths of ops running at once */
	double mean_gbps;   /* mean of that sum over its changes, where it is > 0 (HTA's summary) */
	double *series;     /* nbuckets: GB/s moved in each time bucket (bytes / bucket width) */
	double *peak_series; /* nbuckets: the largest bandwidth of the ops running at once in each bucket
			      * (its maximum is peak_gbps) */
};

/* One kernel name in one iteration, all ranks together (opts.per_iter_kernels). */
struct gt_an_iterk {
	char *name;
	long iter; /* -1: outside every iteration */
	uint64_t count;
	double time_ns;
};

/* One GPU of one input ("rank0/gpu0"). */
struct gt_an_gpu {
	char label[64];
	int source;    /* index of the input (rank) it came from */
	int device;
	struct gt_an_window total;
	struct gt_an_window *iters; /* per iteration (empty when no iteration is known) */
	size_t niters;
	uint64_t bucket0_ns, bucket_ns; /* the time buckets of the series: start, width */
};

struct gt_an_result {
	char *title;
	int iters;      /* divisor of the per-iteration columns */
	int gpus;       /* divisor of the per-iteration columns */
	char iter_source[32]; /* "nvtx", "profiler-step", "capture-windows", "--iters", "config", "none" */

	struct gt_an_stat *classes; /* kernel classes, NCCL excluded; classes[0] = "others" */
	size_t nclasses;
	double kernel_time_ns, kernel_time_per_iter_ns; /* sums over `classes` */
	uint64_t kernel_count, kernel_count_per_iter;

	struct gt_an_stat *nccl; /* one row per collective, in order of first appearance */
	size_t nnccl;
	double nccl_time_ns, nccl_time_per_iter_ns;
	uint64_t nccl_count, nccl_count_per_iter;

	int has_mem; /* memory operations were read (the GPU Performance Analyzer prints the table only then) */
	struct gt_an_stat *memops;
	size_t nmemops;

	int has_nvtx;           /* an NVTX (or ProfilerStep) source was read */
	char *nvtx_tag;         /* the iteration tag looked for */
	uint64_t nvtx_count;    /* ranges with that tag */
	double nvtx_total_ns;   /* their total (projected, for nsys CSV) duration */

	int has_timeline;
	struct gt_an_gpu *gpu; /* one per (input, device) */
	size_t ngpu;
	struct gt_an_window total; /* sums over all GPUs (first/last: earliest and latest) */

	char **notes; /* messages for the reader of the report, e.g. a missing NVTX tag */
	size_t nnotes;

	/* timelines with iteration ranges: what the NVTX times above are, and how ops were placed */
	char nvtx_time[16];     /* "cpu-range", "gpu-projection" (nsys's nvtx_gpu_proj_trace), "mixed" */
	uint64_t ops_by_launch; /* put into the iteration whose range holds the start of their launch */
	uint64_t ops_outside;   /* launched before the first range or after the end of the last */
	uint64_t ops_by_time;   /* no correlated launch: put into a window by their GPU start time */

	/* opts.collectives: every NCCL collective of every rank, by source then launch order */
	int has_colls;
	struct gt_an_coll *colls;
	size_t ncolls;
	char **coll_labels; /* per source: its name ("rank3"), as the GPU labels use it */
	size_t ncoll_labels;

	/* the per-op analyses (timelines only) */
	uint64_t by_launch_event, by_launch_range; /* ops_by_launch split: launch event in the trace or not */
	struct gt_an_hta hta;
	int launched_only, without_last_step; /* the selection options in force */
	size_t nbuckets;
	struct gt_an_stream *streams; /* by GPU, then stream */
	size_t nstreams;
	struct gt_an_kernel *kernels; /* by source, then kind, then time (largest first) */
	size_t nkernels;
	int top;                      /* rows per kind and rank in the text's top-kernel table */
	int all_rows;                 /* opts.all_rows: the text's per-iteration table is not capped */
	double kernel_wait_ns, runtime_cutoff_ns, delay_cutoff_ns;
	struct gt_an_membw *membw;    /* by GPU, then kind */
	size_t nmembw;
	struct gt_an_iterk *iterk;    /* opts.per_iter_kernels: by name, then iteration */
	size_t niterk;
	struct gt_fd_list *findings;  /* opts.findings: the findings (analyze/findings.h), else NULL */
};

/* One NCCL collective on one rank (opts.collectives): the NCCL kernel that ran it, and which
 * collective of which communicator it was, so that the ranks of a job can be matched. */
struct gt_an_coll {
	int source;            /* the input (rank) it came from; its label is gt_an_result.coll_labels */
	int device;
	uint64_t start_ns, end_ns; /* the kernel on the GPU */
	uint64_t launch_ns;    /* start of the API call that launched it, 0 unknown */
	long iteration;        /* iteration that launched it (as the per-iteration windows), -1 none */
	uint64_t seq;          /* sequence number within the communicator */
	uint64_t count;        /* elements (from NCCL's profiler interface), 0 unknown */
	uint64_t bytes;        /* count x the size of dtype, 0 unknown */
	char comm[64];         /* communicator: "0x<hash>" (NCCL), a process-group name, "" unknown */
	char name[32];         /* collective: "AllReduce", ... */
	char algo[16], proto[16]; /* NCCL's algorithm and protocol, "" unknown */
	char dtype[16];        /* NCCL's data type ("ncclFloat32", ...), "" unknown */
	char match[8];         /* how comm/seq were known: "nccl" (profiler plugin), "trace" (trace
				* arguments), "order" (order of the rank's NCCL kernels) */
};

/* Kernel-name -> class map (case-insensitive substrings, first key in map order wins). */
struct gt_an_map;

/* GPU operations sorted in memory at once before a sorted run is written to a temporary file
 * (default 2^20, 24 MiB).  Fuzz targets make it small: quick runs, and the spill path exercised. */
extern size_t gt_an_sort_chunk;

/* The bound on the SQLite engine's work for one nsys export: instructions of its virtual machine,
 * a base and so many per byte of the file (10^9 and 20,000: far beyond what reading and sorting any
 * real export takes); past it the read stops with an error.  Tests make it small. */
extern uint64_t gt_an_sqlite_steps, gt_an_sqlite_steps_per_byte;

/* Rows of the text's per-iteration table without --all-rows (as the report's 200); JSON and CSV
 * always hold every row. */
#define GT_AN_TEXT_ROWS 200

/* The largest --iters / --gpus (and num_of_iters / num_of_gpus of a config). */
#define GT_AN_MAX_COUNT 1000000

/* Every GPU op of a timeline, handed to a caller that draws them (gputap report), for any input
 * format.  `begin` is called once before the first op, with the result's GPUs (labels and iteration
 * windows set; `gpu` below indexes them) and the extent of all GPU ops; then `op` once per op, in
 * start order, for the ops the tables count (not those the selection options leave out).
 * `kind`: 0 kernel, 1 copy, 2 memset; `comm`: 1 for an NCCL kernel. */
struct gt_an_sink {
	void *arg;
	void (*begin)(void *arg, const struct gt_an_result *r, uint64_t first_ns, uint64_t last_ns);
	void (*op)(void *arg, size_t gpu, uint32_t stream, uint64_t start_ns, uint64_t end_ns, int kind, int comm);
};

/* The iteration "tag" that makes each capture window of a gputap trace (gputap run --capture) one
 * iteration: `--nvtx windows` on the command line. */
#define GT_AN_WINDOWS_TAG "(capture window)"

struct gt_an_opts {
	const struct gt_an_map *map; /* NULL: the default map (gt_an_map_default) */
	int iters;                   /* >0: divide by this (and split timelines into N even windows) */
	int gpus;                    /* >0: divide by this instead of the number of GPUs seen */
	const char *nvtx_tag;        /* iteration range name; NULL: ProfilerStep#N, then capture windows, then the
				      * range that repeats; GT_AN_WINDOWS_TAG: the capture windows of gputap traces */
	const char *title;           /* NULL: derived from the first input */
	int progress;                /* print progress on stderr for long inputs */
	/* nsys CSV inputs given by explicit files (the GPU Performance Analyzer config); NULL: derived from the input */
	const char *csv_kern, *csv_nvtx, *csv_mem;
	int collectives; /* keep one row per NCCL collective per rank (JSON "collectives") */
	int launched_only;     /* leave out GPU ops whose launch event is not in the trace (as HTA) */
	int without_last_step; /* leave out GPU ops launched in the last ProfilerStep (as HTA's default) */
	int top;               /* top kernels per kind and rank in the text (0: 5) */
	double kernel_wait_ns; /* idle gaps below this (and not host wait) are kernel wait (0: 30 µs) */
	double runtime_cutoff_ns, delay_cutoff_ns; /* launch statistics (0: 50 µs, 100 µs) */
	int buckets;           /* time buckets of the series (0: 20) */
	int per_iter_kernels;  /* keep per-iteration rows per kernel name (gputap diff) */
	int all_rows;          /* text: every per-iteration row (default: the first GT_AN_TEXT_ROWS) */
	const struct gt_an_sink *sink; /* every GPU op of the timelines, NULL: none */
	int findings;          /* also find what is wrong (analyze/findings.h): result.findings */
	int no_detail;         /* skip the per-op analyses (streams, kernels, memory bandwidth, time buckets,
				* HTA's views): for outputs that print none of them (--format columns) */
	/* gputap trace inputs read by the caller, so that the analysis shares one pass over each trace with
	 * the caller's own readers (gputap run): for each trace, gtr_feed opens it, lets the analysis join
	 * (trace/visit.h), reads it once and closes it.  0, or -1 with err.
	 * NULL: the analysis opens and reads each trace itself. */
	gt_trace_feed_fn gtr_feed;
	void *gtr_feed_arg;
};

/* Load a map from a JSON file: either an object {"key": "class", ...} or a GPU Performance Analyzer config whose
 * "kernel_to_class_map" is used.  `//` comments and trailing commas are accepted.
 * 0, or -1 with `err` naming the file (and line) and what is wrong. */
int gt_an_map_load(struct gt_an_map **out, const char *path, char *err, size_t errlen);
/* Build from parallel arrays (keys and classes, n entries); checks conflicts. */
int gt_an_map_new(struct gt_an_map **out, const char *const *keys, const char *const *classes, size_t n,
		  const char *origin, char *err, size_t errlen);
void gt_an_map_free(struct gt_an_map *m);
/* The default map (attention, convolution, gemm, softmax, normalization, reduction, elementwise,
 * copy/fill; docs/analyze.md), used by analyze and report when no map is given. */
int gt_an_map_default(struct gt_an_map **out, char *err, size_t errlen);

/* Analyze the inputs (see `gputap help analyze` for what an input may be).
 * A gputap run directory is one input.  Returns 0 and *out, or -1 with `err`
 * ("FILE:LINE: what is wrong") for bad input, -2 for an input that cannot be read at all. */
int gt_an_run(const char *const *inputs, int ninputs, const struct gt_an_opts *opts, struct gt_an_result **out,
	      char *err, size_t errlen);
void gt_an_free(struct gt_an_result *r);

/* Output.  0 or -1 (write error). */
int gt_an_print_text(const struct gt_an_result *r, FILE *f);
int gt_an_print_json(const struct gt_an_result *const *r, size_t n, FILE *f);
int gt_an_print_csv(const struct gt_an_result *r, FILE *f);
/* Iterations and collectives as binary columns after a JSON header line (output_columns.c; docs/analyze.md). */
int gt_an_print_columns(const struct gt_an_result *r, FILE *f);

/* Helpers for the per-op tables, shared by the output here and gputap report (the names: emit.c;
 * the rest: output_detail.c). */
/* "compute", "communication", "memory" for gt_an_kernel.cat. */
const char *gt_an_kind_name(int cat);
/* The rank label of a source ("rank0", "pid591"): the label of its first GPU without "/gpuN". */
void gt_an_source_label(const struct gt_an_result *r, int source, char *buf, size_t len);
/* A long name shortened to about `width` bytes for a table: its start, "...", its end and a hash of
 * the whole name, so that two names that differ anywhere stay apart.  Short names are copied. */
void gt_an_short_name(const char *name, size_t width, char *buf, size_t len);
/* Time of one kind of op on one source (the denominator of a kernel's share). */
double gt_an_kind_time(const struct gt_an_result *r, int source, int cat);
/* The launches of one source together: the rows of r->kernels (sorted by source) from *i on that
 * share its source; *i is moved past them.  Returns the source, -1 when *i is past the end. */
struct gt_an_launches {
	uint64_t ops, launched, short_n, delay_outliers, runtime_outliers;
	double delay_ns, cpu_ns;
};
int gt_an_next_rank_launches(const struct gt_an_result *r, size_t *i, struct gt_an_launches *out);

/* GPU Performance Analyzer config mode: run every input of the config and print each (text/json/csv).
 * Returns the command's exit status (0, 1). */
int gt_an_config_run(const char *config_path, const char *format, FILE *f);

#endif
