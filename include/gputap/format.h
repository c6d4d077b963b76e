/*
 * gputap/format.h — the on-disk contract of gputap's binary trace (trace.gtr).
 *
 * Owns: the file header, the record header and every record layout, the
 * record type numbers and the copy-kind numbers.  Nothing else in the tree
 * may define an on-disk layout.  See docs/trace-format.md for the prose.
 *
 * Invariants:
 *  - little-endian, every record starts 8-byte aligned and its size is a
 *    multiple of 8 (so a record never straddles into the next one);
 *  - a record's `size` includes its header; readers skip types they do not
 *    know (forward compatibility) and reject a size < 8 or past end of file;
 *  - timestamps are nanoseconds since the Unix epoch (CLOCK_REALTIME), the
 *    same clock on the host and for GPU records (the tap hands CUPTI this
 *    clock), so traces of several processes merge on one time axis;
 *  - strings are interned: a GT_REC_STRING with id N precedes any record
 *    that refers to N; id 0 means "no string".
 *  - since version 2 the records are grouped in blocks (struct
 *    gt_block_hdr), each delta-coded and compressed on its own; a block
 *    holds whole records, so a torn file reads up to its last whole block;
 *  - a new field is appended to the end of a record and bumps
 *    GT_TRACE_VERSION; readers accept records longer than they know, and
 *    records as short as version 1 wrote them (GT_REC_TYPES' v1), reading
 *    the fields appended since as 0.
 */
#ifndef GPUTAP_FORMAT_H
#define GPUTAP_FORMAT_H

#include <stdint.h>

#define GT_TRACE_MAGIC "GPUTAPTR" /* 8 bytes, no terminator on disk */
#define GT_TRACE_VERSION 2u /* 2: records in blocks (struct gt_block_hdr); 1: records follow the header */

/* file header flags */
#define GT_FILE_PARTIAL 0x1u    /* writer did not close cleanly or lost data */
#define GT_FILE_LOST 0x2u       /* some records were dropped (see lost_records) */
#define GT_FILE_METRICS_ONLY 0x4u
#define GT_FILE_CAPTURE 0x8u /* traced only inside capture windows (GT_RANGE_WINDOW records say which) */
#define GT_FILE_GPU_INCOMPLETE 0x10u /* GPU activity was not (or no longer) recorded: see the GT_REC_NOTE records */

struct gt_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* sizeof(struct gt_file_header) of the writer */
	uint32_t flags;       /* GT_FILE_* */
	uint32_t pid;
	uint64_t start_ns; /* when the tap started */
	uint64_t end_ns;   /* 0 while the file is being written */
	uint64_t records;  /* records written (0 while being written) */
	uint64_t lost_records; /* records dropped by the tap's bounded buffers */
	uint64_t cupti_dropped; /* records CUPTI reported as dropped */
	char proc[32];          /* "rank3" or "pid1234", NUL-terminated */
	char host[64];          /* NUL-terminated */
};

/*
 * Every record type, once (as Darshan's DARSHAN_MODULE_IDS): the enum below, the frozen
 * version-1 sizes, trace/visit.h's callbacks and their dispatch, and the tap's test for records
 * without a thread are made from this list; a new type is one line here.  Columns:
 *   X(TYPE, number, name, v1, thread)
 *   number  the type on disk; never reused;
 *   name    its struct (struct gt_rec_<name>) and its callback in struct gt_trace_ops;
 *   v1      its size as trace format version 1 wrote it.  Frozen: a reader accepts a record of
 *           a known type when it is at least this long, and reads fields appended since then as
 *           0.  Never change a number here; a new record type is given its size when added;
 *   thread  1: h.tid is the thread that recorded it (the tap fills it in when 0); 0: no thread
 *           (GPU activity, facts of the process), h.tid stays 0.
 * The Python package restates the layouts (python/gputap/readtrace.py, fleet/gtrwrite.py);
 * python/tests/test_format_layout.py holds them against this header (tests/format/layout.c).
 */
#define GT_REC_TYPES(X)                                                                            \
	X(GT_REC_STRING, 1, string, 16, 1)                                                         \
	X(GT_REC_API, 2, api, 64, 1)                                                               \
	X(GT_REC_KERNEL, 3, kernel, 96, 0)                                                         \
	X(GT_REC_MEMCPY, 4, memcpy, 64, 0)                                                         \
	X(GT_REC_MEMSET, 5, memset, 64, 0)                                                         \
	X(GT_REC_MEMORY, 6, memory, 56, 0)                                                         \
	X(GT_REC_RANGE, 7, range, 56, 1)                                                           \
	X(GT_REC_COUNTER, 8, counter, 32, 1)                                                       \
	X(GT_REC_DROPPED, 9, dropped, 24, 0)                                                       \
	X(GT_REC_DEVICE, 10, device, 40, 0)                                                        \
	X(GT_REC_THREAD, 11, thread, 16, 1)                                                        \
	X(GT_REC_NCCL_COLL, 12, nccl_coll, 80, 1)                                                  \
	X(GT_REC_HOLD, 13, hold, 64, 1)                                                            \
	X(GT_REC_NOTE, 14, note, 32, 1)

#define GT_REC_ENUM_(T, num, name, v1, thread) T = num,
enum gt_rec_type {
	GT_REC_TYPES(GT_REC_ENUM_)
	GT_REC_TYPE_MAX /* one past the last: the numbers run from 1 without a gap */
};
#undef GT_REC_ENUM_

/* Bit t set: records of type t (< 32) have no thread (the `thread` column is 0). */
#define GT_REC_NO_THREAD_(T, num, name, v1, thread) | ((thread) ? 0u : 1u << (num))
#define GT_REC_THREADLESS_MASK (0u GT_REC_TYPES(GT_REC_NO_THREAD_))

struct gt_rec_hdr {
	uint16_t type; /* enum gt_rec_type */
	uint16_t size; /* bytes, header included, multiple of 8 */
	uint32_t tid;  /* OS thread id of the recording thread, 0 for GPU records */
};

/* An interned string. `len` bytes follow, not NUL-terminated, padded to 8. */
struct gt_rec_string {
	struct gt_rec_hdr h;
	uint32_t id;
	uint32_t len;
	/* char data[len]; */
};

/* API domains */
enum gt_api_domain { GT_DOM_DRIVER = 1, GT_DOM_RUNTIME = 2, GT_DOM_TAP = 3 };

/* A host-side call of the CUDA driver or runtime, timed by the tap. */
struct gt_rec_api {
	struct gt_rec_hdr h;
	uint32_t name_id;   /* interned function name, e.g. "cuLaunchKernel" */
	uint8_t domain;     /* enum gt_api_domain */
	int8_t copy_kind;   /* cudaMemcpyKind numbering (0 HtoH .. 4 default), -1 none */
	uint16_t flags;     /* GT_API_* */
	int32_t result;     /* CUresult / cudaError_t returned */
	uint32_t pad;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;   /* bytes moved or allocated, 0 if none */
	uint64_t corr_id; /* CUPTI correlation id, 0 if unknown */
	uint64_t ptr;     /* device pointer allocated/freed, 0 if none */
};
#define GT_API_FAILED 0x1u /* the call returned an error */
#define GT_API_HELD 0x2u   /* a launch that launch hold queued: start/end are the queueing call,
			    * the GT_REC_HOLD record with the same corr_id says when it was issued */

/* the alnair interposer's / cudaMemcpyKind numbering, used in GT_REC_API.copy_kind */
enum gt_host_copy_kind {
	GT_HCOPY_H2H = 0,
	GT_HCOPY_H2D = 1,
	GT_HCOPY_D2H = 2,
	GT_HCOPY_D2D = 3,
	GT_HCOPY_DEFAULT = 4,
};

/* A kernel as executed on the GPU (CUPTI activity). */
struct gt_rec_kernel {
	struct gt_rec_hdr h;
	uint32_t name_id; /* demangled name as CUPTI reports it */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t corr_id; /* links to the GT_REC_API that launched it */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t registers;      /* per thread */
	uint32_t static_smem;    /* bytes per block */
	uint32_t dynamic_smem;   /* bytes per block */
	uint32_t graph_id;       /* 0 unless launched from a CUDA graph */
	uint64_t graph_node_id;  /* 0 unless launched from a CUDA graph */
};

/* GPU copy kinds, numbered as CUpti_ActivityMemcpyKind */
enum gt_copy_kind {
	GT_COPY_UNKNOWN = 0,
	GT_COPY_HTOD = 1,
	GT_COPY_DTOH = 2,
	GT_COPY_HTOA = 3,
	GT_COPY_ATOH = 4,
	GT_COPY_ATOA = 5,
	GT_COPY_ATOD = 6,
	GT_COPY_DTOA = 7,
	GT_COPY_DTOD = 8,
	GT_COPY_HTOH = 9,
	GT_COPY_PTOP = 10,
	GT_COPY_KIND_MAX
};

struct gt_rec_memcpy {
	struct gt_rec_hdr h;
	uint8_t copy_kind; /* enum gt_copy_kind */
	uint8_t src_kind;  /* CUpti_ActivityMemoryKind of source */
	uint8_t dst_kind;  /* CUpti_ActivityMemoryKind of destination */
	uint8_t flags;     /* bit 0: async */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint64_t corr_id;
	uint32_t graph_id;
	uint32_t dst_device; /* peer copies; == device otherwise */
};

struct gt_rec_memset {
	struct gt_rec_hdr h;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t value;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t bytes;
	uint64_t corr_id;
	uint32_t graph_id;
	uint32_t pad;
};

/* Device memory allocated or freed (CUPTI memory2 activity, or the tap). */
enum gt_mem_op { GT_MEM_ALLOC = 1, GT_MEM_FREE = 2 };
struct gt_rec_memory {
	struct gt_rec_hdr h;
	uint8_t op;       /* enum gt_mem_op */
	uint8_t mem_kind; /* CUpti_ActivityMemoryKind */
	uint16_t pad;
	uint32_t device;
	uint64_t ts_ns;
	uint64_t address;
	uint64_t bytes;
	uint64_t corr_id;
	uint32_t stream; /* for stream-ordered allocations, else 0 */
	uint32_t pad2;
};

/* An NVTX range or mark. */
enum gt_range_kind {
	GT_RANGE_PUSHPOP = 1,
	GT_RANGE_STARTEND = 2,
	GT_RANGE_MARK = 3,
	GT_RANGE_USER = 4,
	GT_RANGE_WINDOW = 5, /* a capture window: name = its SPEC, start/end = when the trace was on */
};
struct gt_rec_range {
	struct gt_rec_hdr h;    /* tid: thread that opened the range */
	uint32_t name_id;
	uint32_t domain_id;     /* interned domain name, 0 = default domain */
	uint8_t kind;           /* enum gt_range_kind */
	uint8_t level;          /* nesting depth for push/pop, 0 = outermost */
	uint16_t pad;
	uint32_t end_tid;       /* thread that closed it (start/end ranges) */
	uint64_t start_ns;
	uint64_t end_ns;        /* == start_ns for marks */
	uint64_t range_id;      /* unique within the file, from 1 */
	uint64_t parent_id;     /* enclosing push/pop range on the thread, 0 if none */
};

/* A sampled or derived value, e.g. "memory_used_bytes" or "power_W". */
struct gt_rec_counter {
	struct gt_rec_hdr h;
	uint32_t name_id;
	uint32_t device; /* UINT32_MAX if not per-device */
	uint64_t ts_ns;
	double value;
};

enum gt_drop_source {
	GT_DROP_TAP_BUFFER = 1,
	GT_DROP_CUPTI = 2,
	/* CUPTI asked for an activity buffer and none was free within GPUTAP_BUFFER_MB: count = requests
	 * refused; the records that would have filled them are lost (CUPTI does not count them) */
	GT_DROP_CUPTI_NO_BUFFER = 3,
};
struct gt_rec_dropped {
	struct gt_rec_hdr h;
	uint32_t source; /* enum gt_drop_source */
	uint32_t pad;
	uint64_t count;
};

struct gt_rec_device {
	struct gt_rec_hdr h;
	uint32_t device;
	uint32_t name_id;
	uint64_t global_memory_bytes;
	uint32_t cc_major;
	uint32_t cc_minor;
	uint32_t sm_count;
	uint32_t pad;
};

struct gt_rec_thread {
	struct gt_rec_hdr h; /* tid: the thread */
	uint32_t name_id;
	uint32_t pad;
};

/* An NCCL collective as NCCL's profiler plugin interface (NCCL >= 2.23) reports it: enqueued by the
 * host thread `h.tid` at start_ns, its host-side event stopped at end_ns.  Strings: the NCCL names
 * ("AllReduce", "RING", "SIMPLE", "ncclFloat32"); 0 when NCCL did not say. */
struct gt_rec_nccl_coll {
	struct gt_rec_hdr h; /* tid: the thread that called NCCL */
	uint64_t comm_hash;  /* the communicator's hash: equal on every rank of the communicator */
	uint64_t seq;        /* sequence number of the collective within the communicator; for a Send
			      * or Recv, of that direction with that peer (the tap counts them) */
	uint64_t start_ns;   /* host: the collective was enqueued */
	uint64_t end_ns;     /* host: NCCL stopped the event */
	uint64_t count;      /* elements */
	uint32_t func_id;    /* collective name */
	uint32_t algo_id;    /* algorithm */
	uint32_t proto_id;   /* protocol */
	uint32_t dtype_id;   /* data type */
	int32_t rank;        /* rank within the communicator, -1 unknown */
	int32_t nranks;      /* ranks of the communicator, 0 unknown */
	int32_t root;        /* root rank (broadcast, reduce); for a Send or Recv the peer; -1 none */
	uint8_t nchannels;
	uint8_t nwarps;
	uint8_t plugin_version; /* the NCCL profiler interface version that reported it (1..5) */
	uint8_t pad;
};

/* Launch hold (docs/hold.md): a held launch, or one release of the queue. */
enum gt_hold_rec_kind { GT_HOLD_REC_LAUNCH = 1, GT_HOLD_REC_RELEASE = 2 };

struct gt_rec_hold {
	struct gt_rec_hdr h; /* tid: the launching thread (LAUNCH), the releasing one (RELEASE) */
	uint8_t kind;        /* enum gt_hold_rec_kind */
	uint8_t pad[3];
	int32_t result;      /* LAUNCH: what the driver returned when it was issued;
			      * RELEASE: the first failure of the release, 0 if none */
	uint64_t start_ns;   /* LAUNCH: queued (its launch call returned); RELEASE: release began */
	uint64_t end_ns;     /* LAUNCH: issued to the driver; RELEASE: release ended */
	uint64_t corr_id;    /* LAUNCH: CUPTI correlation id, as in its GT_REC_API and kernel; 0 if unknown */
	uint64_t batch;      /* number of the release (from 1): links launches to their release */
	uint32_t count;      /* RELEASE: launches released */
	uint32_t reason_id;  /* RELEASE: why, an interned word ("full", "timer", "copy", ...) */
	uint32_t api_id;     /* RELEASE: the driver call that released (interned name), 0 if none */
	uint32_t pad2;
};

/* Something the tap itself did or met that changes what the trace holds from ts_ns on. */
enum gt_note {
	GT_NOTE_CUPTI_HANDED_OVER = 1, /* another CUPTI client started in the process (e.g. torch.profiler):
				      * GPU activity is not recorded from here on */
	GT_NOTE_CUPTI_REFUSED = 2,     /* CUPTI refused to record an activity kind: detail = the
				      * CUpti_ActivityKind, result = the CUptiResult */
	GT_NOTE_CUPTI_BUSY = 3,        /* another CUPTI client was attached first: no GPU activity at all */
	GT_NOTE_CUPTI_MISSING = 4,     /* no usable CUPTI library: no GPU activity at all */
	GT_NOTE_GPU_FLUSH_SKIPPED = 5, /* the process was ended by a signal: GPU records not yet handed
				      * over by CUPTI (at most the last ~100 ms) are missing */
	GT_NOTE_STATIC_RUNTIME = 6,    /* a statically linked CUDA runtime, its runtime callbacks off
				      * (GPUTAP_RUNTIME_CALLBACKS): its cudaMemcpy calls are counted as the
				      * driver copies they make (cuMemcpy*), not by their own name.  Not a loss. */
	GT_NOTE_KERNELS_FOR_METRICS = 7, /* kernel records stopped from here on while range metrics measure
					* counters (kernel tracing would add instructions to them): the
					* kernels are in range_metrics.csv / kernel_metrics.csv.  Not a loss. */
};
struct gt_rec_note {
	struct gt_rec_hdr h; /* tid: the thread that met it */
	uint32_t what;       /* enum gt_note */
	int32_t detail;
	uint64_t ts_ns;
	int32_t result;
	uint32_t pad;
};

/*
 * Blocks (version 2 on): after the file header, the file is a sequence of
 * blocks, each a 24-byte header and `data_size` bytes of data.  Decoded, a
 * block's data is `raw_size` bytes holding `nrec` whole records, laid out as
 * above.  Codec GT_BLOCK_DEFLATE: the data is a raw DEFLATE stream (RFC
 * 1951, zlib's windowBits -15; the CRC of the data stands for zlib's own).
 * Filter GT_BLOCK_DELTA: in the decoded bytes, every record whose type is
 * neither GT_REC_STRING nor 256 or above, and whose size equals the size of
 * the previous record of its type in the same block, holds its body (the
 * bytes after its 8-byte record header) as little-endian u32 differences, mod
 * 2^32, from that previous record's body; the record header itself is
 * always plain.  Docs: docs/trace-format.md.
 */
#define GT_BLOCK_MAGIC 0x4B425447u /* "GTBK" as it reads on disk */
enum gt_block_codec { GT_BLOCK_STORED = 0, GT_BLOCK_DEFLATE = 1 };
enum gt_block_filter { GT_BLOCK_PLAIN = 0, GT_BLOCK_DELTA = 1 };
struct gt_block_hdr {
	uint32_t magic;     /* GT_BLOCK_MAGIC */
	uint8_t codec;      /* enum gt_block_codec */
	uint8_t filter;     /* enum gt_block_filter */
	uint16_t flags;     /* 0 */
	uint32_t raw_size;  /* bytes of records once decoded: a multiple of 8, at most GT_BLOCK_MAX_RAW */
	uint32_t data_size; /* bytes that follow this header */
	uint32_t nrec;      /* records in the block */
	uint32_t crc32;     /* CRC-32 (zlib's crc32) of the data bytes */
};
#define GT_BLOCK_MAX_RAW (4u << 20)

#define GT_REC_ALIGN 8u
#define GT_REC_PADDED(n) (((n) + (GT_REC_ALIGN - 1)) & ~(uint32_t)(GT_REC_ALIGN - 1))
#define GT_REC_MAX_SIZE 65528u /* largest size representable in the u16, aligned */

#endif
