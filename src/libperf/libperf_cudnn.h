/*
 * libperf/libperf_cudnn.h — what a recorded cuDNN convolution becomes when
 * `gputap libperf` replays it with cuDNN's backend (graph) API.
 *
 * Owns: reading a cuDNN config of library_trace.csv back into a convolution
 * (forward, backward data, backward filter: types, dimensions, strides,
 * filter layout, padding, strides, dilations, groups, alpha/beta, the
 * recorded engine and its knobs), the skip reasons of configs that cannot be
 * rebuilt, and the "descriptor program": the list of backend descriptors
 * (type, attributes, values) that builds the operation graph and the recorded
 * engine.  All of it is pure (no GPU, no cuDNN) and unit-tested on any
 * machine; libperf_cudnn_gpu.c only walks the program with
 * cudnnBackendCreateDescriptor / SetAttribute / Finalize and times plans.
 *
 * Invariants:
 *  - numbers (descriptor types, attribute names and types, data types, knob
 *    types, numerical notes) are those of cuDNN 9's cudnn_graph.h (stable ABI
 *    of the backend API, checked against the header by a unit test where the
 *    header is installed);
 *  - a config that cannot be replayed faithfully gives one status line that
 *    says exactly why ("skipped: ..."), never a replay of something else;
 *  - roles are named as in the forward convolution whatever the direction:
 *    x (input / dx), w (filter / dw), y (output / dy).
 */
#ifndef GT_LIBPERF_CUDNN_H
#define GT_LIBPERF_CUDNN_H

#include <stddef.h>
#include <stdint.h>

#include "libperf/libperf.h"

/* ---- cudnn_graph.h numbers (cuDNN 9 backend API) ---- */
enum {
	/* cudnnBackendDescriptorType_t */
	GT_CDN_CONVOLUTION_DESCRIPTOR = 1,
	GT_CDN_ENGINE_DESCRIPTOR = 2,
	GT_CDN_ENGINECFG_DESCRIPTOR = 3,
	GT_CDN_ENGINEHEUR_DESCRIPTOR = 4,
	GT_CDN_EXECUTION_PLAN_DESCRIPTOR = 5,
	GT_CDN_KNOB_CHOICE_DESCRIPTOR = 7,
	GT_CDN_OP_CONV_FWD_DESCRIPTOR = 10,
	GT_CDN_OP_CONV_BWD_FILTER_DESCRIPTOR = 11,
	GT_CDN_OP_CONV_BWD_DATA_DESCRIPTOR = 12,
	GT_CDN_OPERATIONGRAPH_DESCRIPTOR = 15,
	GT_CDN_VARIANT_PACK_DESCRIPTOR = 16,
	GT_CDN_TENSOR_DESCRIPTOR = 17,
	/* cudnnBackendAttributeType_t */
	GT_CDN_TYPE_HANDLE = 0,
	GT_CDN_TYPE_DATA_TYPE = 1,
	GT_CDN_TYPE_BOOLEAN = 2,
	GT_CDN_TYPE_INT64 = 3,
	GT_CDN_TYPE_FLOAT = 4,
	GT_CDN_TYPE_DOUBLE = 5,
	GT_CDN_TYPE_VOID_PTR = 6,
	GT_CDN_TYPE_CONVOLUTION_MODE = 7,
	GT_CDN_TYPE_HEUR_MODE = 8,
	GT_CDN_TYPE_KNOB_TYPE = 9,
	GT_CDN_TYPE_NUMERICAL_NOTE = 11,
	GT_CDN_TYPE_BACKEND_DESCRIPTOR = 15,
	/* cudnnBackendAttributeName_t */
	GT_CDN_ATTR_CONVOLUTION_COMP_TYPE = 100,
	GT_CDN_ATTR_CONVOLUTION_CONV_MODE = 101,
	GT_CDN_ATTR_CONVOLUTION_DILATIONS = 102,
	GT_CDN_ATTR_CONVOLUTION_FILTER_STRIDES = 103,
	GT_CDN_ATTR_CONVOLUTION_POST_PADDINGS = 104,
	GT_CDN_ATTR_CONVOLUTION_PRE_PADDINGS = 105,
	GT_CDN_ATTR_CONVOLUTION_SPATIAL_DIMS = 106,
	GT_CDN_ATTR_ENGINEHEUR_MODE = 200,
	GT_CDN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
	GT_CDN_ATTR_ENGINEHEUR_RESULTS = 202,
	GT_CDN_ATTR_ENGINECFG_ENGINE = 300,
	GT_CDN_ATTR_ENGINECFG_KNOB_CHOICES = 302,
	GT_CDN_ATTR_EXECUTION_PLAN_HANDLE = 400,
	GT_CDN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
	GT_CDN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
	GT_CDN_ATTR_KNOB_CHOICE_KNOB_TYPE = 600,
	GT_CDN_ATTR_KNOB_CHOICE_KNOB_VALUE = 601,
	GT_CDN_ATTR_CONV_FWD_ALPHA = 700,
	GT_CDN_ATTR_CONV_FWD_BETA = 701,
	GT_CDN_ATTR_CONV_FWD_CONV_DESC = 702,
	GT_CDN_ATTR_CONV_FWD_W = 703,
	GT_CDN_ATTR_CONV_FWD_X = 704,
	GT_CDN_ATTR_CONV_FWD_Y = 705,
	GT_CDN_ATTR_CONV_BWD_DATA_ALPHA = 706,
	GT_CDN_ATTR_CONV_BWD_DATA_BETA = 707,
	GT_CDN_ATTR_CONV_BWD_DATA_CONV_DESC = 708,
	GT_CDN_ATTR_CONV_BWD_DATA_W = 709,
	GT_CDN_ATTR_CONV_BWD_DATA_DX = 710,
	GT_CDN_ATTR_CONV_BWD_DATA_DY = 711,
	GT_CDN_ATTR_CONV_BWD_FILTER_ALPHA = 712,
	GT_CDN_ATTR_CONV_BWD_FILTER_BETA = 713,
	GT_CDN_ATTR_CONV_BWD_FILTER_CONV_DESC = 714,
	GT_CDN_ATTR_CONV_BWD_FILTER_DW = 715,
	GT_CDN_ATTR_CONV_BWD_FILTER_X = 716,
	GT_CDN_ATTR_CONV_BWD_FILTER_DY = 717,
	GT_CDN_ATTR_OPERATIONGRAPH_HANDLE = 800,
	GT_CDN_ATTR_OPERATIONGRAPH_OPS = 801,
	GT_CDN_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
	GT_CDN_ATTR_TENSOR_DATA_TYPE = 901,
	GT_CDN_ATTR_TENSOR_DIMENSIONS = 902,
	GT_CDN_ATTR_TENSOR_STRIDES = 903,
	GT_CDN_ATTR_TENSOR_UNIQUE_ID = 906,
	GT_CDN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
	GT_CDN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
	GT_CDN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
	GT_CDN_ATTR_ENGINE_OPERATION_GRAPH = 1300,
	GT_CDN_ATTR_ENGINE_GLOBAL_INDEX = 1301,
	GT_CDN_ATTR_ENGINE_NUMERICAL_NOTE = 1303,
	/* cudnnBackendHeurMode_t */
	GT_CDN_HEUR_MODE_INSTANT = 0,
	GT_CDN_HEUR_MODE_FALLBACK = 2,
	/* cudnnBackendNumericalNote_t */
	GT_CDN_NOTE_TENSOR_CORE = 0,
	GT_CDN_NOTE_DOWN_CONVERT_INPUTS = 1,
	GT_CDN_NOTE_REDUCED_PRECISION_REDUCTION = 2,
	GT_CDN_NOTE_NONDETERMINISTIC = 4,
	/* cudnnDataType_t */
	GT_CDN_DATA_FLOAT = 0,
	GT_CDN_DATA_DOUBLE = 1,
	GT_CDN_DATA_HALF = 2,
	GT_CDN_DATA_BFLOAT16 = 9,
};

/* Byte alignment the replay declares for its tensors (its buffers are
 * allocated with cuMemAlloc, 256-byte aligned; frameworks declare 16 or 32). */
#define GT_CDN_ALIGNMENT 32
#define GT_CDN_MAX_DIMS 8
#define GT_CDN_MAX_KNOBS 24

enum gt_cudnn_dir { GT_CONV_FWD, GT_CONV_BWD_DATA, GT_CONV_BWD_FILTER };

struct gt_cudnn_tensor {
	int dtype;                      /* cudnnDataType_t */
	int size;                       /* bytes per element */
	int nd;
	int64_t dim[GT_CDN_MAX_DIMS];
	int64_t stride[GT_CDN_MAX_DIMS]; /* elements */
};

struct gt_cudnn_knob {
	int type;      /* cudnnBackendKnobType_t */
	int64_t value;
};

struct gt_cudnn_conv {
	enum gt_cudnn_dir dir;
	struct gt_cudnn_tensor x, w, y; /* forward roles: dx, dw, dy in the backward directions */
	int compute;                   /* convolution compute type (cudnnDataType_t) */
	int mode;                      /* 0 CONVOLUTION, 1 CROSS_CORRELATION */
	int sd;                        /* spatial dimensions (nd - 2) */
	int64_t pre[GT_CDN_MAX_DIMS], post[GT_CDN_MAX_DIMS], stride[GT_CDN_MAX_DIMS], dil[GT_CDN_MAX_DIMS];
	int64_t groups;
	double alpha, beta;
	int64_t engine;                /* recorded engine (global index), -1 if none */
	int nknobs;
	struct gt_cudnn_knob knob[GT_CDN_MAX_KNOBS];
	char legacy_algo[64];          /* legacy-API records: the algorithm named in the log, "" otherwise */
	unsigned allowed_notes;        /* numerical notes a candidate may have that the recording permits (bit = note) */
	int notes_known;               /* 1 when allowed_notes comes from the record (legacy math type) */
};

/* Read a cuDNN config (as liblog_cudnn.c writes it) into `c`.  0; -1 with
 * `why` the row's status ("skipped: ...") when it is no convolution or
 * cannot be rebuilt. */
int gt_cudnn_conv_from_config(const char *config, struct gt_cudnn_conv *c, char *why, size_t whylen);

/* cudnnDataType_t number and element size of a type name of the log
 * ("FLOAT" -> 0, 4); -1 if unknown. */
int gt_cudnn_dtype(const char *name, int *size);
/* cudnnBackendKnobType_t number of a knob name of the log ("TILE_SIZE" -> 2), -1 if unknown;
 * and back (NULL if unknown). */
int gt_cudnn_knob_num(const char *name);
const char *gt_cudnn_knob_name(int num);

/* Bytes spanned by a tensor (largest offset + 1 element). */
uint64_t gt_cudnn_tensor_bytes(const struct gt_cudnn_tensor *t);
/* Multiply-adds x 2 of the convolution (the same for the three directions). */
double gt_cudnn_conv_flops(const struct gt_cudnn_conv *c);

/* "28:TILE_SIZE=4:USE_TEX=0": an engine with its knobs, as library_perf.csv
 * writes it in recorded_algo / best_algo. */
void gt_cudnn_engine_label(int64_t engine, const struct gt_cudnn_knob *k, int nk, char *buf, size_t len);

/* 1 if a candidate engine with numerical notes `cand` (bit = note) changes the
 * numerics the recording allowed (`allowed`, the recorded engine's notes or
 * what the legacy math type permits) for data of type `dtype`: TF32 tensor
 * cores on FP32/FP64 data, down-converted inputs, reduced-precision
 * reduction.  Such engines are not timed; `why` names the note. */
int gt_cudnn_numerics_change(int dtype, unsigned allowed, unsigned cand, char *why, size_t whylen);

/* ---- the descriptor program ---- */
#define GT_CDN_MAX_VALS GT_CDN_MAX_KNOBS
#define GT_CDN_MAX_ATTRS 8
#define GT_CDN_MAX_DESCS (8 + GT_CDN_MAX_KNOBS)

struct gt_cdn_attr {
	int name;                   /* cudnnBackendAttributeName_t */
	int type;                   /* cudnnBackendAttributeType_t */
	int n;                      /* elements */
	int64_t v[GT_CDN_MAX_VALS]; /* INT64 values; enum values; descriptor indices in the program (BACKEND_DESCRIPTOR) */
	double d;                   /* FLOAT / DOUBLE value */
};

struct gt_cdn_desc {
	int type;          /* cudnnBackendDescriptorType_t */
	const char *what;  /* for messages: "x tensor", "convolution", ... */
	int nattr;
	struct gt_cdn_attr a[GT_CDN_MAX_ATTRS];
};

struct gt_cdn_prog {
	int n;
	struct gt_cdn_desc d[GT_CDN_MAX_DESCS];
	int graph;       /* index of the operation graph */
	int engine_cfg;  /* index of the recorded engine's configuration, -1 if none */
	int64_t uid[3];  /* x, w, y */
	uint64_t bytes[3];
};

/* The operation graph of `c`: x, w, y tensors, the convolution, the
 * operation, the graph (its handle attribute is set by the runner).  Then,
 * when the record names an engine, the engine, its knob choices and the
 * engine configuration.  0, or -1 with `why` when it does not fit. */
int gt_cudnn_prog_build(const struct gt_cudnn_conv *c, struct gt_cdn_prog *p, char *why, size_t whylen);

/* ---- the replay (libperf_cudnn_gpu.c) ---- */
struct gt_cudnn_replayer;
/* A replayer on the current CUDA context and `st`; cuDNN is loaded on first
 * use.  NULL only when out of memory. */
struct gt_cudnn_replayer *gt_cudnn_replayer_new(const struct gt_cu_api *cu, cu_stream st,
						const struct gt_libperf_opts *o);
/* Replay one cuDNN config into `row` (status, engines, times, flops); never fatal. */
void gt_cudnn_replay(struct gt_cudnn_replayer *r, const char *config, struct gt_libperf_row *row);
/* "cuDNN 9.19.0" once loaded, "" before; the reason every cuDNN row is
 * skipped when it cannot be loaded ("" otherwise). */
const char *gt_cudnn_replayer_version(const struct gt_cudnn_replayer *r);
const char *gt_cudnn_replayer_load_error(const struct gt_cudnn_replayer *r);
void gt_cudnn_replayer_free(struct gt_cudnn_replayer *r);

#endif
