/*
 * liblog/libtrace.h — library call logs (cuBLAS, cuBLASLt, cuDNN, NCCL)
 * turned into library_trace.csv, and the canonical config strings that
 * `gputap libperf` replays.
 *
 * Owns: the log parsers (one per library, chosen by the content of each log,
 * not its name), the canonical config strings, the call table that merges the
 * logs of every process, library_trace.csv
 * (jobid,created_date,model,library,config,calls) (the replay is libperf/,
 * libperf/run.h).
 *
 * Invariants:
 *  - a config string is a space-separated list of key=value with a fixed key
 *    order per kind, never contains ',', '"' or a newline (so it is one CSV
 *    field), and is the same for the same call whatever process made it;
 *  - parsers never trust the log: a bad line is counted and reported as
 *    FILE:LINE (the first few per file), never fatal;
 *  - calls are summed over all logs (every process's call counts once; a
 *    collective over N ranks that ran once shows calls=N).
 *  See docs/libtrace.md for the config grammar of each library.
 */
#ifndef GT_LIBTRACE_H
#define GT_LIBTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Parse every library log under `logdir` (all ranks' files) and write
 * `csv_path`.  jobid/model go into their columns.  0 or -1 with err naming
 * the log file and line.  A folder with no log, or logs with no call, gives
 * a CSV with the header only (and 0). */
int gt_libtrace_collect(const char *logdir, const char *csv_path, const char *jobid, const char *model,
			char *err, size_t errlen);

enum gt_lib { GT_LIB_UNKNOWN = 0, GT_LIB_CUBLAS, GT_LIB_CUBLASLT, GT_LIB_CUDNN, GT_LIB_NCCL, GT_LIB_COUNT };

/* "cublas", "cublasLt", "cudnn", "nccl" (the library column), "unknown". */
const char *gt_lib_name(enum gt_lib lib);
/* Inverse of gt_lib_name (case-insensitive); GT_LIB_UNKNOWN if none. */
enum gt_lib gt_lib_from_name(const char *name);

/* ---- the call table: (library, config) -> calls ---- */
struct gt_libcalls;
struct gt_libcall_row {
	enum gt_lib lib;
	const char *config;
	uint64_t calls;
};
struct gt_libcalls *gt_libcalls_new(void);
void gt_libcalls_free(struct gt_libcalls *t);
/* Add `n` calls of `config`.  0 or -ENOMEM. */
int gt_libcalls_add(struct gt_libcalls *t, enum gt_lib lib, const char *config, uint64_t n);
/* Rows sorted by library, then calls (most first), then config; valid until
 * the next add or free.  Returns the number of rows. */
size_t gt_libcalls_rows(struct gt_libcalls *t, const struct gt_libcall_row **rows);

/* ---- parsing logs ---- */
struct gt_liblog_stats {
	enum gt_lib lib;   /* detected library, GT_LIB_UNKNOWN if the format is unknown */
	uint64_t lines;    /* lines read */
	uint64_t calls;    /* calls recorded */
	uint64_t bad;      /* lines that looked like a call but could not be read */
	uint64_t ignored;  /* calls of kinds that are not recorded (handles, streams, ...) */
};
/* Parse one log of any supported library (detected by content) into `t`.
 * Bad lines are warned about (FILE:LINE, at most a few per file) and
 * counted.  0 (also for an unknown format: st->lib says so) or -1 with err
 * when the file cannot be read. */
int gt_liblog_parse_file(const char *path, struct gt_libcalls *t, struct gt_liblog_stats *st, char *err,
			 size_t errlen);
/* The same on a buffer; `name` is used in messages. */
int gt_liblog_parse_buf(const char *name, const char *buf, size_t len, struct gt_libcalls *t,
			struct gt_liblog_stats *st);
/* 1 if diagnostics of the parsers go to stderr (default), 0 to silence them (fuzzing). */
extern int gt_liblog_verbose;

/* Write the table as library_trace.csv (via .partial + rename).  `created`
 * is the created_date column (NULL: now, UTC, "YYYY-MM-DDTHH:MM:SSZ"). */
int gt_libcalls_write_csv(struct gt_libcalls *t, const char *path, const char *jobid, const char *model,
			  const char *created, char *err, size_t errlen);
/* Read a library_trace.csv (any column order; the header names them) back
 * into a table.  0 or -1 with err naming FILE:LINE. */
int gt_libcalls_read_csv(const char *path, struct gt_libcalls *t, char *err, size_t errlen);

/* ---- canonical configs ---- */
#define GT_CFG_MAX 1024
#define GT_GEMM_NAME 40

/* A GEMM as cuBLAS / cuBLASLt see it (column-major): D = op(A) op(B) (+ C),
 * D is m x n, op(A) m x k, op(B) k x n. */
struct gt_gemm_cfg {
	char transa, transb; /* 'N', 'T' or 'C' */
	int64_t m, n, k;
	int64_t lda, ldb, ldc, ldd;
	char type_a[16], type_b[16], type_c[16], type_d[16]; /* "R_16F", ... */
	char compute[32];                                    /* "COMPUTE_32F", ... */
	char scale[16];                                      /* scale type, "R_32F" */
	int64_t batch;                                       /* 1 if not batched */
	int64_t stride_a, stride_b, stride_c, stride_d;      /* elements, 0 if not batched */
	char epilogue[32];                                   /* "DEFAULT", "BIAS", ... */
	int algo;                                            /* recorded algoId, -1 if none */
	char tile[GT_GEMM_NAME], stages[GT_GEMM_NAME], cluster[GT_GEMM_NAME];
	int custom;                                          /* customOption, -1 if none */
	char api[GT_GEMM_NAME];                              /* cuBLAS function, "" for cuBLASLt */
};
void gt_gemm_cfg_init(struct gt_gemm_cfg *g);
/* Canonical text; returns the length or -1 if it did not fit. */
int gt_gemm_cfg_format(const struct gt_gemm_cfg *g, char *buf, size_t len);
/* Parse a config written by gt_gemm_cfg_format (keys in any order, unknown
 * keys rejected).  0 or -1 with err saying which key is wrong. */
int gt_gemm_cfg_parse(const char *text, struct gt_gemm_cfg *g, char *err, size_t errlen);
/* A GEMM cuBLAS would run: every leading dimension at least 1 and at least its matrix's rows
 * (column-major).  0, or -1 with `why` naming the first that is not. */
int gt_gemm_cfg_check(const struct gt_gemm_cfg *g, char *why, size_t len);
/* Bytes per element of a cudaDataType name ("R_16F" -> 2), 0 if unknown;
 * its cudaDataType number in *num (or -1). */
int gt_cuda_type_size(const char *name, int *num);
/* cublasComputeType_t number of "COMPUTE_32F" etc., -1 if unknown. */
int gt_cublas_compute_num(const char *name);

/* An NCCL collective. */
struct gt_nccl_cfg {
	char op[24];    /* "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "send", "recv", ... */
	uint64_t count; /* elements, as NCCL logs it */
	char dtype[16]; /* "float32", "bfloat16", ... or "type<N>" */
	char redop[16]; /* "sum", "prod", "max", "min", "avg", or "op<N>" */
	int root;       /* root (broadcast/reduce) or peer (send/recv); -1 otherwise */
	int nranks;
};
int gt_nccl_cfg_format(const struct gt_nccl_cfg *c, char *buf, size_t len);
int gt_nccl_cfg_parse(const char *text, struct gt_nccl_cfg *c, char *err, size_t errlen);
/* Bytes per element of an NCCL type name, 0 if unknown. */
int gt_nccl_type_size(const char *dtype);

#endif
