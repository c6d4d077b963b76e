/*
 * libperf/libperf.h — internals of `gputap libperf` shared by the GEMM
 * replay (libperf.c), the cuDNN replay (libperf_cudnn_gpu.c) and the NCCL
 * replay (libperf_nccl.c); what they share is defined in cuda.c (loading
 * the CUDA stack's libraries, timing on the GPU), which calls none of them.
 *
 * Owns: the table of CUDA driver entry points libperf loads with dlopen, and
 * the NCCL replay plan: what one recorded collective becomes when it is
 * replayed on the GPUs of this machine (buffer sizes per rank, the bytes the
 * algorithm bandwidth divides, the bus-bandwidth factor).
 *
 * Invariants:
 *  - the plan is pure (no GPU, no NCCL) so it is unit-tested on any machine;
 *  - bandwidths follow the nccl-tests definitions: algbw = bytes / time,
 *    busbw = algbw x factor (allreduce 2(n-1)/n; allgather, reducescatter,
 *    alltoall, gather, scatter (n-1)/n; broadcast, reduce, send/recv 1);
 *  - ncclDataType_t and ncclRedOp_t numbers are those of nccl.h (2.x ABI).
 */
#ifndef GT_LIBPERF_H
#define GT_LIBPERF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "liblog/libtrace.h"
#include "libperf/run.h"

/* ---- CUDA driver (libcuda.so.1), loaded by libperf.c ---- */
typedef int cu_result;
typedef int cu_device;
typedef void *cu_context, *cu_stream, *cu_event;
typedef unsigned long long cu_ptr;

struct gt_cu_api {
	void *h;
	cu_result (*init)(unsigned);
	cu_result (*device_count)(int *);
	cu_result (*device_get)(cu_device *, int);
	cu_result (*device_name)(char *, int, cu_device);
	cu_result (*ctx_retain)(cu_context *, cu_device);
	cu_result (*ctx_release)(cu_device);
	cu_result (*ctx_set)(cu_context);
	cu_result (*mem_alloc)(cu_ptr *, size_t);
	cu_result (*mem_free)(cu_ptr);
	cu_result (*memset8)(cu_ptr, unsigned char, size_t);
	cu_result (*stream_create)(cu_stream *, unsigned);
	cu_result (*stream_destroy)(cu_stream);
	cu_result (*stream_sync)(cu_stream);
	cu_result (*event_create)(cu_event *, unsigned);
	cu_result (*event_destroy)(cu_event);
	cu_result (*event_record)(cu_event, cu_stream);
	cu_result (*event_sync)(cu_event);
	cu_result (*event_elapsed)(float *, cu_event, cu_event);
	cu_result (*error_name)(cu_result, const char **);
	cu_result (*ctx_sync)(void);
	/* optional (NULL when the driver lacks them): the gate of gt_libperf_time */
	cu_result (*host_alloc)(void **, size_t, unsigned);
	cu_result (*host_dev_ptr)(cu_ptr *, void *, unsigned);
	cu_result (*wait_value32)(cu_stream, cu_ptr, unsigned, unsigned);
	cu_result (*memset8_async)(cu_ptr, unsigned char, size_t, cu_stream);
	cu_result (*device_attr)(int *, int, cu_device);
	/* Set by the caller (0: none): gt_libperf_time writes these bytes before each timed run, so
	 * that every run starts with a cold L2 cache, as a call does inside a program. */
	cu_ptr l2_flush;
	size_t l2_flush_bytes;
};

/* ---- one row of library_perf.csv (every library) ---- */
struct gt_libperf_row {
	enum gt_lib lib;
	const char *config;
	uint64_t calls;
	char status[256];
	char recorded_algo[128]; /* "" when none */
	const char *timed_as;    /* "" when none */
	double recorded_us;      /* -1 when none */
	double best_us;          /* -1 when none */
	double flops;            /* per call, for TFLOP/s; 0 when not a compute kernel */
	char best_algo[128];
	int tried;
	const char *device;
	uint64_t bytes;          /* NCCL: what algbw divides; 0 otherwise */
	double algbw, busbw;     /* NCCL, GB/s; -1 when none */
	int gpus;                /* NCCL; 0 otherwise */
	unsigned timing;         /* bits 1 << GT_TIMED_*: how the row's times were taken; 0 when none */
	int ops;                 /* GPU operations per run of the recorded algorithm (kernel activity); 0 unknown */
	double event_us;         /* the recorded algorithm's event median (progress output); -1 when none */
};
/* An empty row (no time, no algorithm) of one config. */
void gt_libperf_row_init(struct gt_libperf_row *r, enum gt_lib lib, const char *config, uint64_t calls,
			 const char *device);
/* Write the row as one line of library_perf.csv (columns of gt_libperf_header):
 * TFLOP/s = flops / time, gain = recorded / best - 1, saving = (recorded - best) x calls. */
void gt_libperf_row_write(FILE *f, const struct gt_libperf_row *r);

/* cuda.c: run `run(arg)` `warmup` times, then `iters` times each between two CUDA
 * events on `st` (ev: 2 x iters events, ms: iters floats); the median in
 * microseconds, or -1 when a run or the CUDA calls failed.  Before each timed
 * run (outside its events and its kernel-activity bracket) the L2 flush
 * buffer of `cu`, when set, is overwritten on `st`.
 * The timed runs are queued behind a gate (the stream waits on a word of
 * pinned host memory, cuStreamWaitValue32) that opens once all of them are
 * queued, so the GPU runs them back to back and the events measure the GPU's
 * time, not the host's issue rate (short kernels read 2-5 us long without).
 * A watchdog opens the gate after GT_LIBPERF_GATE_S if queueing stalls (a
 * library that synchronises inside a run; a full launch queue); that
 * measurement is then repeated without the gate.
 * While kernel-activity timing is on (libperf_kact.h) each timed run is also
 * bracketed for CUPTI, and the time is the median over the runs of the summed
 * GPU durations of the kernels, memsets and copies each run launched (what
 * torch.profiler sums per operation; events also count the GPU's gaps between
 * a run's kernels and its own start-up); the event median when those records
 * are missing.  gt_libperf_last() says which. */
double gt_libperf_time(const struct gt_cu_api *cu, int (*run)(void *arg), void *arg, cu_stream st, cu_event *ev,
		       float *ms, int iters, int warmup);
#define GT_LIBPERF_GATE_S 2.0
/* How a time was taken (bit numbers of gt_libperf_row.timing). */
enum {
	GT_TIMED_EVENTS,       /* CUDA events around each run, as the host issued them */
	GT_TIMED_EVENTS_GATED, /* CUDA events, the runs queued behind the gate */
	GT_TIMED_KERNELS,      /* CUPTI kernel activity: the GPU durations of the run's kernels */
	GT_TIMED_NMETHODS
};
struct gt_libperf_timing {
	int gated;       /* 1 behind the gate, 0 without it, -1 the watchdog opened it (re-timed without) */
	int method;      /* GT_TIMED_* of the time returned */
	int ops;         /* GT_TIMED_KERNELS: GPU operations (kernels, memsets, copies) per run, median; else 0 */
	double event_us; /* the events' median whatever the method; -1 when not read */
};
/* How the last gt_libperf_time of this thread timed. */
const struct gt_libperf_timing *gt_libperf_last(void);
int gt_libperf_last_gated(void); /* gt_libperf_last()->gated */
/* After a gt_libperf_time of a row's candidate: add its method to `mask`;
 * for the recorded algorithm (`recorded`) also keep its GPU operations and event time. */
void gt_libperf_note_timing(unsigned *mask, int *ops, double *event_us, int recorded);
/* "kernel_activity", "events_gated", "events", joined with '+' for a mask of several. */
void gt_libperf_timing_names(unsigned mask, char *buf, size_t len);

/* dlopen a library of the CUDA stack by soname: $ENV alone when set (a
 * path); otherwise the loader's search, $CUDA_HOME and the CUDA toolkit
 * gputap was built against (lib64, lib), the system library folders and
 * the nvidia-* wheels PyTorch installs (site-packages/nvidia/x/lib).  NULL
 * with `why` when none loads. */
void *gt_libperf_open_lib(const char *soname, const char *env, char *why, size_t whylen);

/* ---- the NCCL replay plan ---- */
enum gt_nccl_coll {
	GT_NCCL_ALLREDUCE,
	GT_NCCL_ALLGATHER,
	GT_NCCL_REDUCESCATTER,
	GT_NCCL_BROADCAST,
	GT_NCCL_REDUCE,
	GT_NCCL_ALLTOALL,
	GT_NCCL_GATHER,
	GT_NCCL_SCATTER,
	GT_NCCL_SENDRECV, /* a recorded send or recv, replayed as a ring: rank r sends to r+1, receives from r-1 */
};

struct gt_nccl_plan {
	enum gt_nccl_coll coll;
	int dtype;                   /* ncclDataType_t */
	int redop;                   /* ncclRedOp_t; -1 when the collective does not reduce */
	int type_size;               /* bytes per element */
	int ranks;                   /* GPUs used: min(recorded nranks, GPUs here) */
	int root;                    /* root of broadcast/reduce/gather/scatter, within [0, ranks) */
	uint64_t count;              /* the count passed to NCCL (as recorded) */
	uint64_t send_elems;         /* send buffer of each rank, elements */
	uint64_t recv_elems;         /* receive buffer of each rank, elements */
	uint64_t bytes;              /* what algbw divides (the nccl-tests "size") */
	double bus_factor;           /* busbw = algbw x bus_factor */
	char note[128];              /* how the replay differs from the recording, "" if it does not */
};

/* Largest send + receive buffer per GPU a replay allocates. */
#define GT_NCCL_MAX_BYTES_PER_GPU (8ull << 30)

/* Plan the replay of `c` on `gpus` GPUs.  0, or -1 with `why` the row's
 * status ("skipped: ..."). */
int gt_nccl_plan_make(const struct gt_nccl_cfg *c, int gpus, struct gt_nccl_plan *p, char *why, size_t whylen);
/* ncclDataType_t of a dtype name of the config grammar ("float32" -> 7), -1 if none. */
int gt_nccl_dtype_num(const char *dtype);

/* ---- the NCCL replay (libperf_nccl.c) ---- */
struct gt_nccl_result {
	char status[192];
	int ranks;     /* GPUs used, 0 if it did not run */
	double us;     /* median time, microseconds; -1 if none */
	double algbw;  /* GB/s (1e9 bytes), -1 if none */
	double busbw;  /* GB/s, -1 if none */
	uint64_t bytes;
};
struct gt_nccl_replayer;
/* A replayer over the first `gpus` CUDA devices (their primary contexts);
 * NCCL is loaded on first use.  NULL only when out of memory. */
struct gt_nccl_replayer *gt_nccl_replayer_new(const struct gt_cu_api *cu, int gpus, int iters, int warmup);
/* Replay one NCCL config; the result's status says what happened (never fatal).
 * Leaves the current CUDA context changed: the caller restores its own. */
void gt_nccl_replay(struct gt_nccl_replayer *r, const char *config, struct gt_nccl_result *res);
/* "NCCL 2.28.9" once loaded, "" before. */
const char *gt_nccl_replayer_version(const struct gt_nccl_replayer *r);
void gt_nccl_replayer_free(struct gt_nccl_replayer *r);

#endif
