/*
 * analyze/an_internal.h — what the analyzer's readers share (not for other modules).
 *
 * Owns: the name table (one row per distinct kernel / memory-operation name, the only thing that
 * grows with the input besides the iteration list), the CSV reader, the timeline engine (external
 * sort of GPU intervals, then one sweep in time order per GPU), and the reader entry points.
 *
 * Invariants: readers feed the engine through gt_tl_event() in any order; memory is bounded by
 * the number of distinct names + one sort chunk; every error message starts with "FILE:LINE:" or
 * "FILE: row N:" and is written into the caller's buffer.
 */
#ifndef GT_AN_INTERNAL_H
#define GT_AN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/csvio.h"

#include "analyze/analyze.h"
#include "gputap/format.h"

/* ---- name table ---- */
enum gt_nkind { GT_NK_KERNEL = 1, GT_NK_MEMOP = 2 };
enum gt_ncat { GT_CAT_COMPUTE = 0, GT_CAT_COMM = 1, GT_CAT_MEMOP = 2 };

struct gt_name {
	char *name;
	uint8_t kind; /* enum gt_nkind */
	uint8_t cat;  /* enum gt_ncat */
	double time_ns;
	uint64_t count;
};

struct gt_names {
	struct gt_name *v;
	size_t n, cap;
	uint32_t *slots; /* open addressing: index+1, 0 empty */
	size_t nslots;
};

void gt_names_init(struct gt_names *t);
void gt_names_free(struct gt_names *t);
/* Index of (kind, name), added if new; the name ends at its first NUL within `len`.  -1 on
 * allocation failure. */
long gt_names_get(struct gt_names *t, int kind, const char *name, size_t len);

/* ---- classification ---- */
int gt_an_is_nccl(const char *name);
/* Collective of an NCCL kernel name ("AllGather", "SendRecv", ...) into buf. */
void gt_an_nccl_collective(const char *name, char *buf, size_t len);
/* How many of the first `len` bytes of UTF-8 text `s` to keep to hold at most `max`: never half a
 * character. */
static inline size_t gt_an_utf8_cut(const char *s, size_t len, size_t max)
{
	size_t n = len < max ? len : max;
	while (n > 0 && n < len && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}
/* The name table's 64-bit hash of a name of `kind` (classify.c). */
uint64_t gt_an_hash_name(int kind, const char *s, size_t len);
/* The GPU Performance Analyzer's spelling of a memory-operation name ("[CUDA memcpy H2D]"), into buf. */
void gt_an_memop_name(const char *name, char *buf, size_t len);
/* The GPU Performance Analyzer's name of a CUPTI copy kind (enum gt_copy_kind numbering). */
const char *gt_an_copykind_name(unsigned kind);
/* Class index (0 = others) for a kernel name.  When keys of two different classes match, the first
 * key in map order wins and *k1, *k2 (if not NULL) name the two keys; else they are set to NULL. */
size_t gt_an_map_classify(const struct gt_an_map *m, const char *name, const char **k1, const char **k2);
size_t gt_an_map_nclasses(const struct gt_an_map *m);
const char *gt_an_map_class(const struct gt_an_map *m, size_t i);
/* Parse JSON text with // comments and trailing commas removed (in place copy). */
char *gt_an_strip_json(const char *text, size_t len);

/* ---- timeline engine ---- */
struct gt_ev {
	uint64_t start, end;
	uint64_t bytes : 40; /* memcpy/memset: bytes moved (1 TiB at most, larger is cut), 0 unknown */
	uint64_t xdur : 24;  /* memcpy/memset: the exact duration in ns when the trace says it apart from
			      * its times (Kineto's "memory bandwidth (GB/s)" is from ns before it wrote µs;
			      * a µs-rounded dur can be 80 % off on a short copy), 0 unknown or >= 2^24 ns */
	uint32_t corr;     /* correlation id of the launch, 0 unknown (CUPTI ids are 32-bit) */
	uint32_t name;     /* index into the name table, GT_NO_NAME unknown */
	uint32_t stream;   /* the op's stream (as the trace numbers it), 0 unknown */
	uint32_t gpu : 24; /* index into the engine's GPU list */
	uint32_t cat : 8;  /* enum gt_ncat */
};
#define GT_NO_NAME UINT32_MAX

/* A host-side API call (a launch or any other call: ids come from one counter at API entry). */
struct gt_launch {
	uint64_t start;
	uint32_t corr;
	uint32_t dur;    /* ns, saturated; 0 unknown */
	uint32_t tid;    /* the calling thread, 0 unknown */
	uint16_t source; /* inputs past 65,535 keep no API calls (gt_tl_launch2) */
	uint16_t flags;  /* GT_L_HTA: a call HTA's launch statistics count (cudaLaunchKernel[ExC],
			  * cudaMemcpyAsync, cudaMemsetAsync); GT_L_OPS: an op of it was seen by the sweep (a
			  * second op of one launch call is a CUDA graph's: counted once in the launch
			  * statistics and the queue) */
};
#define GT_L_HTA 1u
#define GT_L_OPS 2u

struct gt_range {
	uint64_t start, end;
	int source;
};

struct gt_tl {
	/* sorting */
	struct gt_ev *chunk;
	size_t nchunk, chunk_cap;
	FILE *spill;
	size_t nruns;
	uint64_t *run_off; /* event offset of each run in the spill file */
	uint64_t *run_len;
	uint64_t nevents;
	/* GPUs: (source, device) */
	struct {
		int source, device;
		uint64_t first, last; /* extent of the GPU's ops (first start, last end) */
	} *gpus;
	size_t ngpus, gpus_cap;
	uint32_t *gpu_slots; /* (source, device) -> index + 1, open addressing; 0 empty */
	size_t gpu_nslots;
	/* iteration ranges, per source */
	struct gt_range *ranges;
	size_t nranges, ranges_cap;
	/* API calls (start, correlation id): buffered, spilled to a temporary file when full */
	struct gt_launch *lbuf;
	size_t nlbuf;
	FILE *lspill;
	uint64_t nlaunches;
	uint64_t launches_past_sources; /* API calls of sources past UINT16_MAX, left out */
	/* per source: a label ("rank0", a file name); NULL: "rank<index>" */
	char **labels;
	size_t nlabels;
	/* filled by gt_tl_finish: how ops were put into iterations, and the NVTX time per source */
	uint64_t by_launch, by_time, outside;
	double nvtx_total_ns; /* sum of range times: GPU-projected for sources with launches, else CPU */
	/* filled by gt_tl_finish: ops whose launch event is in the trace, ops placed by id range only */
	uint64_t by_launch_event, by_launch_range;
	/* what HTA's default view leaves out, and what the selection options left out */
	struct gt_an_hta hta;
	int launched_only, without_last_step; /* the selection options */
	int ranges_are_steps;                 /* the ranges are ProfilerStep#N (the last step is HTA's) */
	struct gt_names *names;               /* the name table, to take out what is left out */
	struct gt_dt *dt;                     /* the per-op analyses, NULL: none */
	struct gt_fd *fd;                     /* the findings collector (findings.h), NULL: none */
	int nvtx_projected;   /* 1: every source with ranges was projected, 2: some were */
	char err[512];
};

int gt_tl_init(struct gt_tl *tl, size_t chunk_events);
void gt_tl_free(struct gt_tl *tl);
/* GPU index for (source, device), -1 on allocation failure or past GT_TL_MAX_GPUS (tl->err says). */
#define GT_TL_MAX_GPUS (1u << 24) /* the width of gt_ev.gpu */
long gt_tl_gpu(struct gt_tl *tl, int source, int device);
int gt_tl_event(struct gt_tl *tl, uint32_t gpu, uint64_t start, uint64_t end, int cat);
/* The same with the correlation id of the launch (0: unknown, the op is put into a window by time). */
int gt_tl_event_c(struct gt_tl *tl, uint32_t gpu, uint64_t start, uint64_t end, int cat, uint64_t corr);
/* The same with what the per-op analyses use: the name's index, the stream, the bytes of a memop. */
int gt_tl_op(struct gt_tl *tl, uint32_t gpu, uint64_t start, uint64_t end, int cat, uint64_t corr, uint32_t name,
	     uint32_t stream, uint64_t bytes);
/* The exact duration (ns) of the op gt_tl_op just added, when the trace knows it apart from the op's
 * times (see gt_ev.xdur); ignored when 0 or 2^24 ns or more. */
void gt_tl_op_xdur(struct gt_tl *tl, uint64_t ns);
/* An API call of `source` that started at `start` with correlation id `corr` (0 is ignored). */
int gt_tl_launch(struct gt_tl *tl, int source, uint64_t start, uint64_t corr);
/* The same with its end and its name (NULL: unknown), for the launch statistics, and the calling
 * thread (0: unknown), for the NCCL records made on that thread (colls.c). */
int gt_tl_launch2(struct gt_tl *tl, int source, uint64_t start, uint64_t end, uint64_t corr, const char *name,
		  uint32_t tid);
/* Name a source (copied); GPU rows are "<label>/gpu<device>". */
int gt_tl_label(struct gt_tl *tl, int source, const char *label);
int gt_tl_range(struct gt_tl *tl, int source, uint64_t start, uint64_t end);
/* Sweep all events in time order and fill r->gpu / r->total.  `iters` > 0: split each source's
 * [first, last] evenly in time into that many windows when no range was given.
 * Iterations from ranges: an op goes to the iteration whose range contains the start of the API
 * call that launched it (through its correlation id: see docs/analyze.md); an op without one goes
 * to the window of its GPU start time, cut at the range starts. */
int gt_tl_finish(struct gt_tl *tl, struct gt_an_result *r, int iters, char *err, size_t errlen);

/* ---- per-op analyses (detail.c): idle time by cause and queue length per stream, launch delays
 * and time per kernel and rank, memory bandwidth per kind, kernels per iteration ---- */
struct gt_dt;
struct gt_dt *gt_dt_new(const struct gt_an_opts *o, size_t ngpus, const struct gt_names *names);
void gt_dt_free(struct gt_dt *d);
/* Before the sweep: GPU g's extent, for the time buckets of the series. */
void gt_dt_extent(struct gt_dt *d, size_t g, uint64_t first, uint64_t last);
/* After the extents, before the sweep: hands the GPUs to opts.sink. */
void gt_dt_begin(struct gt_dt *d, const struct gt_an_result *r);
/* One op, in start order; `l` its launch (NULL: not in the trace); `iter` its iteration (-1 none). */
int gt_dt_op(struct gt_dt *d, const struct gt_ev *e, int source, struct gt_launch *l, long iter);
/* After the sweep: the tables into r (names: the name table).  0 or -1 (out of memory). */
int gt_dt_finish(struct gt_dt *d, struct gt_an_result *r, const struct gt_names *names);

/* Output of the per-op analyses (output_detail.c): text tables, JSON keys (a yajl_gen), CSV rows. */
void gt_an_text_detail(const struct gt_an_result *r, FILE *f);
void gt_an_json_detail(void *gen, const struct gt_an_result *r);
void gt_an_csv_detail(const struct gt_an_result *r, FILE *f);

/* ---- readers (gtr.c, kineto.c, nsyscsv.c, sqlite.c), called by analyze.c: each adds to the
 * context's names / tl / ranges (analyze/input.h); 0 or -1 with err ---- */
struct gt_an_ctx;
int gt_an_read_nsys_csv(struct gt_an_ctx *c, const char *kern, const char *nvtx, const char *mem, char *err,
			size_t errlen);
int gt_an_read_sqlite(struct gt_an_ctx *c, const char *path, char *err, size_t errlen);
int gt_an_read_kineto(struct gt_an_ctx *c, const char *path, char *err, size_t errlen);
int gt_an_read_kineto_mem(struct gt_an_ctx *c, const char *label, const char *data, size_t len, char *err,
			  size_t errlen);
/* `label`: the source's name (the process folder of a run); NULL: the trace's process name. */
int gt_an_read_gtr(struct gt_an_ctx *c, const char *path, const char *label, char *err, size_t errlen);

/* ---- NCCL collectives per rank (colls.c; only with opts.collectives) ---- */
struct gt_colls;
#define GT_SEQ_UNKNOWN UINT64_MAX
struct gt_colls *gt_colls_new(void);
void gt_colls_free(struct gt_colls *cs);
/* An NCCL kernel of `source`: `name` the kernel name; `comm`/`seq` from the trace if it says (NULL /
 * GT_SEQ_UNKNOWN otherwise), and the message's `count` and element type (`dtype`: NCCL's name or
 * PyTorch's, as a PyTorch-profiler trace gives it; 0 / NULL when unknown).  0 or -1 (out of memory). */
int gt_colls_kernel(struct gt_colls *cs, int source, int device, uint64_t start, uint64_t end, uint64_t corr,
		    const char *name, const char *comm, uint64_t seq, uint64_t count, const char *dtype);
/* The kernel just added is a send (`send`) or a receive of a PyTorch-profiler trace, with `peer`
 * the other rank (args "Dst Rank" / "Src Rank"): named for its pair once its source's rank is known. */
void gt_colls_p2p(struct gt_colls *cs, int send, long peer);
/* The rank of `source` (a PyTorch-profiler trace's distributedInfo.rank). */
void gt_colls_source_rank(struct gt_colls *cs, int source, long rank);
/* A collective recorded by NCCL's profiler plugin in a gputap trace. */
int gt_colls_nccl(struct gt_colls *cs, int source, const struct gt_rec_nccl_coll *rec, const char *func,
		  const char *algo, const char *proto, const char *dtype);
/* Bytes of one element of NCCL data type `name` ("ncclFloat32", ...), 0 unknown. */
unsigned gt_colls_dtype_size(const char *name);
/* After gt_tl_finish: match plugin records to kernels (through the launches), number the rest by order,
 * put each into its iteration, and move the rows into r.  0 or -1 (out of memory). */
int gt_colls_finish(struct gt_colls *cs, struct gt_tl *tl, struct gt_an_result *r);
/* The JSON object of one window (output.c; a yajl_gen): the JSON format's, also in the columns header. */
void gt_an_json_window(void *gen, const struct gt_an_window *w);
/* The JSON "collectives" array of a result (a yajl_gen), nothing when it has none. */
void gt_an_json_collectives(void *gen, const struct gt_an_result *r);
/* Every API call the timeline engine holds (source, start, corr), in the order read. */
int gt_tl_each_launch(struct gt_tl *tl, void (*fn)(void *arg, const struct gt_launch *l), void *arg);

#endif
