/* libperf's cuDNN replay without a GPU: recorded cuDNN 9 configs (from the
 * real logs under tests/fixtures/liblogs) read back into convolutions, the
 * backend descriptors that rebuild them, the skip reasons of what cannot be
 * rebuilt, the numerics rule for candidate engines and the CSV row. */
#include <stdlib.h>
#include <string.h>

#include "libperf/libperf.h"
#include "libperf/libperf_cudnn.h"
#include "liblog/libtrace.h"
#include "test.h"

/* The cuDNN configs gputap records from a fixture log, in table order. */
static size_t fixture_configs(const char *name, char out[][GT_CFG_MAX], size_t max)
{
	char p[4200], err[200];
	snprintf(p, sizeof(p), "%s/fixtures/liblogs/%s", gt_test_srcdir(), name);
	struct gt_libcalls *t = gt_libcalls_new();
	struct gt_liblog_stats st;
	size_t n = 0;
	if (!t || gt_liblog_parse_file(p, t, &st, err, sizeof(err)) < 0) {
		gt_libcalls_free(t);
		return 0;
	}
	const struct gt_libcall_row *rows;
	size_t nr = gt_libcalls_rows(t, &rows);
	for (size_t i = 0; i < nr && n < max; i++)
		if (rows[i].lib == GT_LIB_CUDNN)
			snprintf(out[n++], GT_CFG_MAX, "%s", rows[i].config);
	gt_libcalls_free(t);
	return n;
}

/* The config of `name` whose text contains `needle`. */
static int fixture_config(const char *name, const char *needle, char *out)
{
	static char cfgs[64][GT_CFG_MAX];
	size_t n = fixture_configs(name, cfgs, 64);
	for (size_t i = 0; i < n; i++)
		if (strstr(cfgs[i], needle)) {
			snprintf(out, GT_CFG_MAX, "%s", cfgs[i]);
			return 0;
		}
	return -1;
}

static const struct gt_cdn_attr *attr_of(const struct gt_cdn_desc *d, int name)
{
	for (int i = 0; i < d->nattr; i++)
		if (d->a[i].name == name)
			return &d->a[i];
	return NULL;
}

TEST(libperf_cudnn_fp32_forward_from_internal_block)
{
	/* cuDNN 9.19 on an H200: conv2d x(8,3,32,32) w(16,3,3,3) pad 1, FP32, engine 28 */
	char cfg[GT_CFG_MAX], why[256] = "";
	ASSERT_EQ_INT(fixture_config("h200-torch2.11/cudnn.log", "xDesc.dimA=8x3x32x32", cfg), 0);
	struct gt_cudnn_conv c;
	if (gt_cudnn_conv_from_config(cfg, &c, why, sizeof(why)) < 0)
		GT_FAIL_AT("%s: %s", cfg, why);
	ASSERT_EQ_INT(c.dir, GT_CONV_FWD);
	ASSERT_EQ_INT(c.x.dtype, GT_CDN_DATA_FLOAT);
	ASSERT_EQ_INT(c.x.size, 4);
	ASSERT_EQ_INT(c.x.nd, 4);
	ASSERT_EQ_INT(c.x.stride[0], 3072);
	ASSERT_EQ_INT(c.x.stride[3], 1);
	/* the filter is logged with its format, not strides: NCHW, packed */
	ASSERT_EQ_INT(c.w.dim[0], 16);
	ASSERT_EQ_INT(c.w.stride[0], 27);
	ASSERT_EQ_INT(c.w.stride[1], 9);
	ASSERT_EQ_INT(c.w.stride[2], 3);
	ASSERT_EQ_INT(c.w.stride[3], 1);
	ASSERT_EQ_INT(c.y.dim[1], 16);
	ASSERT_EQ_INT(c.sd, 2);
	ASSERT_EQ_INT(c.pre[0], 1);
	ASSERT_EQ_INT(c.post[1], 1);
	ASSERT_EQ_INT(c.stride[0], 1);
	ASSERT_EQ_INT(c.dil[1], 1);
	ASSERT_EQ_INT(c.groups, 1);
	ASSERT_EQ_INT(c.compute, GT_CDN_DATA_FLOAT);
	ASSERT_EQ_INT(c.mode, 1);
	ASSERT_NEAR(c.alpha, 1.0, 0);
	ASSERT_NEAR(c.beta, 0.0, 0);
	ASSERT_EQ_INT(c.engine, 28);
	ASSERT_EQ_INT(c.nknobs, 2);
	ASSERT_EQ_INT(c.knob[0].type, 2); /* TILE_SIZE */
	ASSERT_EQ_INT(c.knob[0].value, 4);
	ASSERT_EQ_INT(c.knob[1].type, 3); /* USE_TEX */
	ASSERT_EQ_INT(c.knob[1].value, 0);
	ASSERT_EQ_INT(c.notes_known, 0);
	/* 2 N K P Q C R S */
	ASSERT_NEAR(gt_cudnn_conv_flops(&c), 2.0 * 8 * 16 * 32 * 32 * 3 * 3 * 3, 0);
	ASSERT_EQ_U64(gt_cudnn_tensor_bytes(&c.x), 8 * 3 * 32 * 32 * 4);
	ASSERT_EQ_U64(gt_cudnn_tensor_bytes(&c.w), 16 * 3 * 3 * 3 * 4);
	char label[128];
	gt_cudnn_engine_label(c.engine, c.knob, c.nknobs, label, sizeof(label));
	ASSERT_EQ_STR(label, "28:TILE_SIZE=4:USE_TEX=0");
}

TEST(libperf_cudnn_fp16_strided_forward_and_its_descriptors)
{
	/* conv2d x(4,16,28,28) w(32,16,3,3) stride 2 pad 1, FP16 data, FP32 compute, engine 47 */
	char cfg[GT_CFG_MAX], why[256] = "";
	ASSERT_EQ_INT(fixture_config("h200-torch2.11/cudnn.log", "xDesc.dimA=4x16x28x28", cfg), 0);
	struct gt_cudnn_conv c;
	if (gt_cudnn_conv_from_config(cfg, &c, why, sizeof(why)) < 0)
		GT_FAIL_AT("%s: %s", cfg, why);
	ASSERT_EQ_INT(c.x.dtype, GT_CDN_DATA_HALF);
	ASSERT_EQ_INT(c.x.size, 2);
	ASSERT_EQ_INT(c.compute, GT_CDN_DATA_FLOAT);
	ASSERT_EQ_INT(c.stride[0], 2);
	ASSERT_EQ_INT(c.y.dim[2], 14);
	ASSERT_EQ_INT(c.engine, 47);
	ASSERT_EQ_INT(c.nknobs, 5);
	ASSERT_NEAR(gt_cudnn_conv_flops(&c), 2.0 * 4 * 32 * 14 * 14 * 16 * 3 * 3, 0);

	struct gt_cdn_prog p;
	ASSERT_EQ_INT(gt_cudnn_prog_build(&c, &p, why, sizeof(why)), 0);
	/* x, w, y, convolution, operation, graph, engine, 5 knobs, engine configuration */
	ASSERT_EQ_INT(p.n, 13);
	static const int types[13] = {17, 17, 17, 1, 10, 15, 2, 7, 7, 7, 7, 7, 3};
	for (int i = 0; i < 13; i++)
		ASSERT_EQ_INT(p.d[i].type, types[i]);
	ASSERT_EQ_INT(p.graph, 5);
	ASSERT_EQ_INT(p.engine_cfg, 12);
	/* tensors: type, dims, strides, uid, alignment */
	const struct gt_cdn_attr *a = attr_of(&p.d[0], GT_CDN_ATTR_TENSOR_DIMENSIONS);
	ASSERT(a && a->type == GT_CDN_TYPE_INT64 && a->n == 4);
	ASSERT_EQ_INT(a->v[0], 4);
	ASSERT_EQ_INT(a->v[3], 28);
	a = attr_of(&p.d[2], GT_CDN_ATTR_TENSOR_STRIDES);
	ASSERT(a && a->n == 4);
	ASSERT_EQ_INT(a->v[0], 6272);
	ASSERT_EQ_INT(a->v[1], 196);
	a = attr_of(&p.d[1], GT_CDN_ATTR_TENSOR_DATA_TYPE);
	ASSERT(a && a->type == GT_CDN_TYPE_DATA_TYPE);
	ASSERT_EQ_INT(a->v[0], GT_CDN_DATA_HALF);
	a = attr_of(&p.d[1], GT_CDN_ATTR_TENSOR_UNIQUE_ID);
	ASSERT(a != NULL);
	ASSERT_EQ_INT(a->v[0], p.uid[1]);
	ASSERT_EQ_U64(p.bytes[1], 32 * 16 * 3 * 3 * 2);
	/* the convolution: FP32 compute, cross-correlation, 2 spatial dims, strides 2, pads 1 */
	a = attr_of(&p.d[3], GT_CDN_ATTR_CONVOLUTION_COMP_TYPE);
	ASSERT(a && a->v[0] == GT_CDN_DATA_FLOAT);
	a = attr_of(&p.d[3], GT_CDN_ATTR_CONVOLUTION_CONV_MODE);
	ASSERT(a && a->type == GT_CDN_TYPE_CONVOLUTION_MODE && a->v[0] == 1);
	a = attr_of(&p.d[3], GT_CDN_ATTR_CONVOLUTION_FILTER_STRIDES);
	ASSERT(a && a->n == 2 && a->v[0] == 2 && a->v[1] == 2);
	a = attr_of(&p.d[3], GT_CDN_ATTR_CONVOLUTION_PRE_PADDINGS);
	ASSERT(a && a->n == 2 && a->v[0] == 1);
	a = attr_of(&p.d[3], GT_CDN_ATTR_CONVOLUTION_SPATIAL_DIMS);
	ASSERT(a && a->v[0] == 2);
	/* the forward operation points at x, w, y and the convolution; alpha/beta are floats */
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_FWD_X)->v[0], 0);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_FWD_W)->v[0], 1);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_FWD_Y)->v[0], 2);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_FWD_CONV_DESC)->v[0], 3);
	a = attr_of(&p.d[4], GT_CDN_ATTR_CONV_FWD_ALPHA);
	ASSERT(a && a->type == GT_CDN_TYPE_FLOAT);
	ASSERT_NEAR(a->d, 1.0, 0);
	/* the graph holds the operation; the engine is global index 47 of that graph */
	ASSERT_EQ_INT(attr_of(&p.d[5], GT_CDN_ATTR_OPERATIONGRAPH_OPS)->v[0], 4);
	ASSERT(attr_of(&p.d[5], GT_CDN_ATTR_OPERATIONGRAPH_HANDLE) != NULL);
	ASSERT_EQ_INT(attr_of(&p.d[6], GT_CDN_ATTR_ENGINE_GLOBAL_INDEX)->v[0], 47);
	ASSERT_EQ_INT(attr_of(&p.d[6], GT_CDN_ATTR_ENGINE_OPERATION_GRAPH)->v[0], 5);
	/* knobs in log order: TILE_SIZE=2 LDGA=3 TILEK=1 STAGES=0 LDGC=1 */
	static const int kt[5] = {2, 6, 13, 14, 22}, kv[5] = {2, 3, 1, 0, 1};
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ_INT(attr_of(&p.d[7 + i], GT_CDN_ATTR_KNOB_CHOICE_KNOB_TYPE)->v[0], kt[i]);
		ASSERT_EQ_INT(attr_of(&p.d[7 + i], GT_CDN_ATTR_KNOB_CHOICE_KNOB_VALUE)->v[0], kv[i]);
	}
	a = attr_of(&p.d[12], GT_CDN_ATTR_ENGINECFG_KNOB_CHOICES);
	ASSERT(a && a->n == 5 && a->v[0] == 7 && a->v[4] == 11);
	ASSERT_EQ_INT(attr_of(&p.d[12], GT_CDN_ATTR_ENGINECFG_ENGINE)->v[0], 6);
}

TEST(libperf_cudnn_plan_block_reads_like_the_internal_one)
{
	/* the same execution's plan block alone (recorded when no internal block follows) */
	char cfg[GT_CFG_MAX], why[256] = "";
	ASSERT_EQ_INT(fixture_config("h200-torch2.11/cudnn_plan_only.log", "op=cudnnBackendExecute ", cfg), 0);
	ASSERT_CONTAINS(cfg, "operation=CONVOLUTION_FORWARD");
	struct gt_cudnn_conv c, ci;
	if (gt_cudnn_conv_from_config(cfg, &c, why, sizeof(why)) < 0)
		GT_FAIL_AT("%s: %s", cfg, why);
	char icfg[GT_CFG_MAX];
	ASSERT_EQ_INT(fixture_config("h200-torch2.11/cudnn.log", "xDesc.dimA=8x3x32x32", icfg), 0);
	ASSERT_EQ_INT(gt_cudnn_conv_from_config(icfg, &ci, why, sizeof(why)), 0);
	ASSERT_EQ_INT(c.dir, ci.dir);
	ASSERT(memcmp(&c.x, &ci.x, sizeof(c.x)) == 0);
	ASSERT(memcmp(&c.w, &ci.w, sizeof(c.w)) == 0);
	ASSERT(memcmp(&c.y, &ci.y, sizeof(c.y)) == 0);
	ASSERT(memcmp(c.pre, ci.pre, sizeof(c.pre)) == 0);
	ASSERT(memcmp(c.post, ci.post, sizeof(c.post)) == 0);
	ASSERT_EQ_INT(c.engine, 28);
	ASSERT_EQ_INT(c.nknobs, 2);
	ASSERT_NEAR(c.alpha, 1.0, 0);
}

/* A cuDNN legacy-API backward-data block (the argument lines of the cuDNN
 * log format: NHWC filter, channels-last dy and dx, 1x1 filter). */
static const char legacy_bwd_data[] =
	"I! CuDNN (v8101) function cudnnConvolutionBackwardData() called:\n"
	"i!     handle: type=cudnnHandle_t; streamId=0x55cd8ad4dbc0;\n"
	"i!     alpha: type=CUDNN_DATA_FLOAT; val=1.000000;\n"
	"i!     wDesc: type=cudnnFilterDescriptor_t:\n"
	"i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_HALF (2);\n"
	"i!         vect: type=int; val=0;\n"
	"i!         nbDims: type=int; val=4;\n"
	"i!         dimA: type=int; val=[128,256,1,1];\n"
	"i!         format: type=cudnnTensorFormat_t; val=CUDNN_TENSOR_NHWC (1);\n"
	"i!     wData: location=dev; addr=0x7f620d0f0800;\n"
	"i!     dyDesc: type=cudnnTensorDescriptor_t:\n"
	"i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_HALF (2);\n"
	"i!         nbDims: type=int; val=4;\n"
	"i!         dimA: type=int; val=[512,128,56,56];\n"
	"i!         strideA: type=int; val=[401408,1,7168,128];\n"
	"i!     dyData: location=dev; addr=0x7f6276000000;\n"
	"i!     convDesc: type=cudnnConvolutionDescriptor_t:\n"
	"i!         mode: type=cudnnConvolutionMode_t; val=CUDNN_CROSS_CORRELATION (1);\n"
	"i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);\n"
	"i!         mathType: type=cudnnMathType_t; val=CUDNN_TENSOR_OP_MATH (1);\n"
	"i!         reorderType: type=int; val=0;\n"
	"i!         arrayLength: type=int; val=2;\n"
	"i!         padA: type=int; val=[0,0];\n"
	"i!         strideA: type=int; val=[1,1];\n"
	"i!         dilationA: type=int; val=[1,1];\n"
	"i!         groupCount: type=int; val=1;\n"
	"i!     algo: type=cudnnConvolutionBwdDataAlgo_t; val=CUDNN_CONVOLUTION_BWD_DATA_ALGO_1 (1);\n"
	"i!     workSpace: location=dev; addr=NULL_PTR;\n"
	"i!     workSpaceSizeInBytes: type=size_t; val=0;\n"
	"i!     beta: type=CUDNN_DATA_FLOAT; val=0.000000;\n"
	"i!     dxDesc: type=cudnnTensorDescriptor_t:\n"
	"i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_HALF (2);\n"
	"i!         nbDims: type=int; val=4;\n"
	"i!         dimA: type=int; val=[512,256,56,56];\n"
	"i!         strideA: type=int; val=[802816,1,14336,256];\n"
	"i!     dxData: location=dev; addr=0x7f628e000000;\n"
	"i! Time: 2021-12-20T10:00:00.000000 (0d+0h+0m+1s since start)\n"
	"i! Process=1; Thread=1; GPU=0; Handle=0x1; StreamId=0x1.\n"
	"\n";

TEST(libperf_cudnn_legacy_backward_data_nhwc)
{
	struct gt_libcalls *t = gt_libcalls_new();
	struct gt_liblog_stats st;
	ASSERT_EQ_INT(gt_liblog_parse_buf("legacy.log", legacy_bwd_data, strlen(legacy_bwd_data), t, &st), 0);
	const struct gt_libcall_row *rows;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &rows), 1);
	char cfg[GT_CFG_MAX], why[256] = "";
	snprintf(cfg, sizeof(cfg), "%s", rows[0].config);
	gt_libcalls_free(t);
	struct gt_cudnn_conv c;
	if (gt_cudnn_conv_from_config(cfg, &c, why, sizeof(why)) < 0)
		GT_FAIL_AT("%s: %s", cfg, why);
	ASSERT_EQ_INT(c.dir, GT_CONV_BWD_DATA);
	/* roles: x is dx, y is dy */
	ASSERT_EQ_INT(c.x.dim[1], 256);
	ASSERT_EQ_INT(c.y.dim[1], 128);
	/* NHWC filter 128x256x1x1: C fastest, then W, H, then K */
	ASSERT_EQ_INT(c.w.stride[1], 1);
	ASSERT_EQ_INT(c.w.stride[3], 256);
	ASSERT_EQ_INT(c.w.stride[2], 256);
	ASSERT_EQ_INT(c.w.stride[0], 256);
	ASSERT_EQ_INT(c.engine, -1);
	ASSERT_EQ_STR(c.legacy_algo, "CONVOLUTION_BWD_DATA_ALGO_1");
	/* TENSOR_OP_MATH permits tensor cores, not down-conversion */
	ASSERT_EQ_INT(c.notes_known, 1);
	ASSERT_EQ_INT(c.allowed_notes, 1u << GT_CDN_NOTE_TENSOR_CORE);
	struct gt_cdn_prog p;
	ASSERT_EQ_INT(gt_cudnn_prog_build(&c, &p, why, sizeof(why)), 0);
	/* no engine recorded: graph only, the backward-data operation on dx, w, dy */
	ASSERT_EQ_INT(p.n, 6);
	ASSERT_EQ_INT(p.engine_cfg, -1);
	ASSERT_EQ_INT(p.d[4].type, GT_CDN_OP_CONV_BWD_DATA_DESCRIPTOR);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_BWD_DATA_DX)->v[0], 0);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_BWD_DATA_DY)->v[0], 2);
	ASSERT_EQ_STR(p.d[0].what, "dx tensor");
	/* channels-last tensors span exactly their elements */
	ASSERT_EQ_U64(p.bytes[0], 512ull * 256 * 56 * 56 * 2);
	ASSERT_EQ_U64(p.bytes[2], 512ull * 128 * 56 * 56 * 2);
}

TEST(libperf_cudnn_backward_filter_and_groups)
{
	/* depthwise 3x3 backward filter, stride 2, dilation 2 (the internal block's words) */
	const char *cfg = "op=cudnnBackendExecuteInternal enable_tf32=true operation=CONV_BACKWARD_FILTER "
			  "xDesc.dataType=BFLOAT16 xDesc.nbDims=4 xDesc.dimA=2x32x17x17 xDesc.strideA=9248x289x17x1 "
			  "dwDesc.dataType=BFLOAT16 dwDesc.vect=0 dwDesc.nbDims=4 dwDesc.dimA=32x1x3x3 "
			  "dwDesc.format=TENSOR_NCHW dyDesc.dataType=BFLOAT16 dyDesc.nbDims=4 dyDesc.dimA=2x32x8x8 "
			  "dyDesc.strideA=2048x64x8x1 convDesc.mode=CROSS_CORRELATION convDesc.dataType=FLOAT "
			  "convDesc.mathType=DEFAULT_MATH convDesc.reorderType=0 convDesc.arrayLength=2 "
			  "convDesc.padA=1x1 convDesc.strideA=2x2 convDesc.dilationA=2x2 convDesc.groupCount=32 "
			  "alpha=1.000000 beta=0.000000 engine_id=3 knobDesc.KERNEL_CFG=17";
	struct gt_cudnn_conv c;
	char why[256] = "";
	if (gt_cudnn_conv_from_config(cfg, &c, why, sizeof(why)) < 0)
		GT_FAIL_AT("%s", why);
	ASSERT_EQ_INT(c.dir, GT_CONV_BWD_FILTER);
	ASSERT_EQ_INT(c.groups, 32);
	ASSERT_EQ_INT(c.x.dtype, GT_CDN_DATA_BFLOAT16);
	ASSERT_EQ_INT(c.knob[0].type, 24);
	ASSERT_NEAR(gt_cudnn_conv_flops(&c), 2.0 * 2 * 32 * 8 * 8 * 1 * 3 * 3, 0);
	struct gt_cdn_prog p;
	ASSERT_EQ_INT(gt_cudnn_prog_build(&c, &p, why, sizeof(why)), 0);
	ASSERT_EQ_INT(p.d[4].type, GT_CDN_OP_CONV_BWD_FILTER_DESCRIPTOR);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_BWD_FILTER_X)->v[0], 0);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_BWD_FILTER_DW)->v[0], 1);
	ASSERT_EQ_INT(attr_of(&p.d[4], GT_CDN_ATTR_CONV_BWD_FILTER_DY)->v[0], 2);
	ASSERT_EQ_INT(attr_of(&p.d[3], GT_CDN_ATTR_CONVOLUTION_DILATIONS)->v[0], 2);
	ASSERT_EQ_STR(p.d[1].what, "dw tensor");
}

TEST(libperf_cudnn_skip_reasons)
{
	static const char base[] = "xDesc.dataType=FLOAT xDesc.nbDims=4 xDesc.dimA=8x3x32x32 "
				   "xDesc.strideA=3072x1024x32x1 wDesc.dataType=FLOAT wDesc.vect=0 wDesc.nbDims=4 "
				   "wDesc.dimA=16x3x3x3 wDesc.format=TENSOR_NCHW yDesc.dataType=FLOAT yDesc.nbDims=4 "
				   "yDesc.dimA=8x16x32x32 yDesc.strideA=16384x1024x32x1 convDesc.mode=CROSS_CORRELATION "
				   "convDesc.dataType=FLOAT convDesc.reorderType=0 convDesc.arrayLength=2 "
				   "convDesc.padA=1x1 convDesc.strideA=1x1 convDesc.dilationA=1x1 convDesc.groupCount=1 "
				   "alpha=1.000000 beta=0.000000 engine_id=28 knobDesc.TILE_SIZE=4";
	static const struct {
		const char *pre, *edit_from, *edit_to, *want;
	} cases[] = {
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", NULL, NULL, NULL},
		{"op=cudnnBatchNormalizationForwardTrainingEx ", NULL, NULL,
		 "skipped: cudnnBatchNormalizationForwardTrainingEx is not a convolution"},
		{"op=cudnnConvolutionBiasActivationForward ", NULL, NULL,
		 "skipped: cudnnConvolutionBiasActivationForward (a fused convolution, bias and activation"},
		{"op=cudnnBackendExecute operation=CONVOLUTION_FORWARD operation=POINTWISE ", NULL, NULL,
		 "skipped: a graph of 2 operations (CONVOLUTION_FORWARD+POINTWISE): the log does not say how"},
		{"op=cudnnBackendExecuteInternal operation=MATMUL ", NULL, NULL,
		 "skipped: operation MATMUL is not replayed"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "yDesc.dimA=8x16x32x32", "yDesc.dimA=8x16x30x30",
		 "skipped: spatial dimension 0: input 32, filter 3, padding 1+1, stride 1, dilation 1 give 32, the "
		 "record says 30"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "xDesc.dataType=FLOAT", "xDesc.dataType=INT8x4",
		 "skipped: x data type INT8x4 is not replayed"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "wDesc.vect=0", "wDesc.vect=4",
		 "skipped: vectorized w tensor (vect=4)"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "convDesc.groupCount=1", "convDesc.groupCount=3",
		 "skipped: groupCount=3 but x has 3 channels and the filter 3"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "knobDesc.TILE_SIZE=4", "knobDesc.NEW_KNOB=4",
		 "skipped: knob NEW_KNOB=4 of engine 28 is unknown to this gputap"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "TENSOR_NCHW", "TENSOR_NCHW_VECT_C",
		 "skipped: filter layout TENSOR_NCHW_VECT_C is not replayed"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "xDesc.strideA=3072x1024x32x1 ", "",
		 "skipped: the x tensor has no strides in the record"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "convDesc.reorderType=0", "convDesc.reorderType=1",
		 "skipped: filter reordering (reorderType=1)"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "xDesc.dimA=8x3x32x32 xDesc.strideA=3072x1024x32x1",
		 "xDesc.dimA=8x3x32 xDesc.strideA=96x32x1",
		 "skipped: x, w and y have 3, 4 and 4 dimensions"},
		{"op=cudnnBackendExecuteInternal operation=CONV_FORWARD ", "yDesc.dataType=FLOAT yDesc.nbDims=4 "
		 "yDesc.dimA=8x16x32x32 yDesc.strideA=16384x1024x32x1 ", "", "skipped: the record has no y tensor"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cfg[GT_CFG_MAX], why[256] = "";
		snprintf(cfg, sizeof(cfg), "%s%s", cases[i].pre, base);
		if (cases[i].edit_from) {
			char *at = strstr(cfg, cases[i].edit_from);
			ASSERT(at != NULL);
			char rest[GT_CFG_MAX];
			snprintf(rest, sizeof(rest), "%s", at + strlen(cases[i].edit_from));
			snprintf(at, sizeof(cfg) - (size_t)(at - cfg), "%s%s", cases[i].edit_to, rest);
		}
		struct gt_cudnn_conv c;
		int rc = gt_cudnn_conv_from_config(cfg, &c, why, sizeof(why));
		if (!cases[i].want) {
			if (rc != 0)
				GT_FAIL_AT("case %zu: %s", i, why);
			continue;
		}
		if (rc != -1)
			GT_FAIL_AT("case %zu accepted: %s", i, cfg);
		ASSERT_CONTAINS(why, cases[i].want);
	}
}

TEST(libperf_cudnn_numerics_rule)
{
	char why[64];
	unsigned tc = 1u << GT_CDN_NOTE_TENSOR_CORE, dc = 1u << GT_CDN_NOTE_DOWN_CONVERT_INPUTS,
		 rr = 1u << GT_CDN_NOTE_REDUCED_PRECISION_REDUCTION, nd = 1u << GT_CDN_NOTE_NONDETERMINISTIC;
	/* FP32 data recorded on an FMA engine: a TF32 engine changes the numerics */
	ASSERT_EQ_INT(gt_cudnn_numerics_change(GT_CDN_DATA_FLOAT, 0, tc, why, sizeof(why)), 1);
	ASSERT_EQ_STR(why, "TF32 tensor cores on FP32 data");
	/* ... not when the recorded engine used tensor cores too */
	ASSERT_EQ_INT(gt_cudnn_numerics_change(GT_CDN_DATA_FLOAT, tc, tc, why, sizeof(why)), 0);
	/* FP16 data on tensor cores is the normal case */
	ASSERT_EQ_INT(gt_cudnn_numerics_change(GT_CDN_DATA_HALF, 0, tc, why, sizeof(why)), 0);
	ASSERT_EQ_INT(gt_cudnn_numerics_change(GT_CDN_DATA_HALF, tc, tc | dc, why, sizeof(why)), 1);
	ASSERT_EQ_STR(why, "down-converted inputs");
	ASSERT_EQ_INT(gt_cudnn_numerics_change(GT_CDN_DATA_BFLOAT16, tc, rr, why, sizeof(why)), 1);
	ASSERT_EQ_STR(why, "reduced-precision reduction");
	/* nondeterminism is not a numerics change of one call */
	ASSERT_EQ_INT(gt_cudnn_numerics_change(GT_CDN_DATA_FLOAT, 0, nd, why, sizeof(why)), 0);
}

TEST(libperf_cudnn_knob_and_type_names)
{
	ASSERT_EQ_INT(gt_cudnn_knob_num("TILE_SIZE"), 2);
	ASSERT_EQ_INT(gt_cudnn_knob_num("KERNEL_CFG"), 24);
	ASSERT_EQ_INT(gt_cudnn_knob_num("SWAP_AB"), 43);
	ASSERT_EQ_INT(gt_cudnn_knob_num("NOPE"), -1);
	ASSERT_EQ_STR(gt_cudnn_knob_name(14), "STAGES");
	ASSERT(gt_cudnn_knob_name(44) == NULL);
	int sz = 0;
	ASSERT_EQ_INT(gt_cudnn_dtype("BFLOAT16", &sz), 9);
	ASSERT_EQ_INT(sz, 2);
	ASSERT_EQ_INT(gt_cudnn_dtype("FP8_E4M3", &sz), 12);
	ASSERT_EQ_INT(gt_cudnn_dtype("INT8x32", &sz), -1);
	struct gt_cudnn_knob k[2] = {{24, 17}, {99, 1}};
	char label[64];
	gt_cudnn_engine_label(3, k, 2, label, sizeof(label));
	ASSERT_EQ_STR(label, "3:KERNEL_CFG=17:KNOB99=1");
}

#if defined(__has_include)
#if __has_include(<cudnn_graph.h>)
#include <cudnn_graph.h>
/* Where the toolkit's cuDNN headers are installed, the numbers declared in
 * libperf_cudnn.h must be cuDNN's. */
TEST(libperf_cudnn_numbers_match_cudnn_graph_h)
{
	ASSERT_EQ_INT(GT_CDN_TENSOR_DESCRIPTOR, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	ASSERT_EQ_INT(GT_CDN_OP_CONV_BWD_DATA_DESCRIPTOR, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
	ASSERT_EQ_INT(GT_CDN_OP_CONV_BWD_FILTER_DESCRIPTOR,
		      CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
	ASSERT_EQ_INT(GT_CDN_VARIANT_PACK_DESCRIPTOR, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
	ASSERT_EQ_INT(GT_CDN_ENGINEHEUR_DESCRIPTOR, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
	ASSERT_EQ_INT(GT_CDN_TYPE_BACKEND_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR);
	ASSERT_EQ_INT(GT_CDN_TYPE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE);
	ASSERT_EQ_INT(GT_CDN_TYPE_VOID_PTR, CUDNN_TYPE_VOID_PTR);
	ASSERT_EQ_INT(GT_CDN_ATTR_CONV_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY);
	ASSERT_EQ_INT(GT_CDN_ATTR_CONV_FWD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
	ASSERT_EQ_INT(GT_CDN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
	ASSERT_EQ_INT(GT_CDN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
	ASSERT_EQ_INT(GT_CDN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE);
	ASSERT_EQ_INT(GT_CDN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT);
	ASSERT_EQ_INT(GT_CDN_HEUR_MODE_FALLBACK, CUDNN_HEUR_MODE_FALLBACK);
	ASSERT_EQ_INT(GT_CDN_NOTE_REDUCED_PRECISION_REDUCTION, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION);
	ASSERT_EQ_INT(GT_CDN_DATA_BFLOAT16, CUDNN_DATA_BFLOAT16);
	ASSERT_EQ_INT(gt_cudnn_knob_num("SWAP_AB"), CUDNN_KNOB_TYPE_SWAP_AB);
	ASSERT_EQ_INT(gt_cudnn_knob_num("LDGC"), CUDNN_KNOB_TYPE_LDGC);
	ASSERT_EQ_INT(gt_cudnn_knob_num("TILE_CGA_N"), CUDNN_KNOB_TYPE_TILE_CGA_N);
	ASSERT_EQ_INT(gt_cudnn_dtype("FP8_E5M2", NULL), CUDNN_DATA_FP8_E5M2);
}
#endif
#endif

TEST(libperf_cudnn_csv_row)
{
	const char *cfg = "op=cudnnBackendExecuteInternal operation=CONV_FORWARD xDesc.dimA=8x3x32x32";
	struct gt_libperf_row r;
	gt_libperf_row_init(&r, GT_LIB_CUDNN, cfg, 4, "NVIDIA_H100");
	snprintf(r.status, sizeof(r.status), "ok (3 engines with TF32 tensor cores on FP32 data not timed)");
	snprintf(r.recorded_algo, sizeof(r.recorded_algo), "28:TILE_SIZE=4:USE_TEX=0");
	snprintf(r.best_algo, sizeof(r.best_algo), "7:KERNEL_CFG=1");
	r.timed_as = "recorded_engine";
	r.recorded_us = 20.0;
	r.best_us = 16.0;
	r.flops = 2e9;
	r.tried = 9;
	r.timing = 1u << GT_TIMED_KERNELS; /* every candidate timed by its kernels */
	r.ops = 2;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ASSERT(f != NULL);
	gt_libperf_row_write(f, &r);
	fclose(f);
	/* TFLOP/s = 2e9 / 20 us = 100; gain 25%; saving (20 - 16) x 4 calls */
	ASSERT_EQ_STR(buf, "cudnn,op=cudnnBackendExecuteInternal operation=CONV_FORWARD xDesc.dimA=8x3x32x32,4,"
			   "ok (3 engines with TF32 tensor cores on FP32 data not timed),28:TILE_SIZE=4:USE_TEX=0,"
			   "recorded_engine,20.000,100.00,7:KERNEL_CFG=1,16.000,125.00,25.0,16.0,9,NVIDIA_H100,,,,,"
			   "kernel_activity,2\n");
	free(buf);
	/* a skipped row: only the status */
	gt_libperf_row_init(&r, GT_LIB_CUDNN, "op=cudnnBatchNormalizationForwardTrainingEx", 2, "H");
	snprintf(r.status, sizeof(r.status), "skipped: a, b");
	buf = NULL;
	f = open_memstream(&buf, &len);
	ASSERT(f != NULL);
	gt_libperf_row_write(f, &r);
	fclose(f);
	ASSERT_EQ_STR(buf, "cudnn,op=cudnnBatchNormalizationForwardTrainingEx,2,\"skipped: a, b\",,,,,,,,,,0,H,,,,,,\n");
	free(buf);
	/* the columns of the header, in order */
	ASSERT_EQ_STR(gt_libperf_header,
		      "library,config,calls,status,recorded_algo,timed_as,recorded_us,recorded_tflops,best_algo,"
		      "best_us,best_tflops,gain_pct,saving_us_total,algos_tried,device,bytes,algbw_gbps,busbw_gbps,"
		      "gpus,timing,gpu_ops");
}

/* ---- a ResNet-18 training step recorded on an H100 (tests/fixtures/liblogs/h100-torch2.11-resnet18) ---- */

/* Rows of a library CSV of the fixture whose library column is cudnn: config and the named column. */
static size_t fixture_csv(const char *name, const char *col, char cfgs[][GT_CFG_MAX], char vals[][256], size_t max)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/fixtures/liblogs/h100-torch2.11-resnet18/%s", gt_test_srcdir(), name);
	size_t len = 0;
	char *buf = gt_test_read_file(p, &len);
	if (!buf)
		return 0;
	size_t n = 0;
	int ci = -1, cc = -1, cv = -1;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		/* fields: no quoted field in these files contains a comma except status, which comes after config */
		char *f[32];
		int nf = 0;
		for (char *s = line; nf < 32;) {
			f[nf++] = s;
			if (*s == '"') {
				char *e = strstr(s + 1, "\",");
				if (!e)
					break;
				s = e + 1;
			} else {
				s = strchr(s, ',');
				if (!s)
					break;
			}
			*s++ = 0;
		}
		if (ci < 0) {
			for (int i = 0; i < nf; i++) {
				if (strcmp(f[i], "library") == 0)
					ci = i;
				if (strcmp(f[i], "config") == 0)
					cc = i;
				if (strcmp(f[i], col) == 0)
					cv = i;
			}
			continue;
		}
		if (ci >= nf || cc >= nf || cv >= nf || strcmp(f[ci], "cudnn") != 0)
			continue;
		snprintf(cfgs[n], GT_CFG_MAX, "%s", f[cc]);
		snprintf(vals[n], 256, "%s", f[cv]);
		n++;
	}
	free(buf);
	return n;
}

TEST(libperf_cudnn_resnet18_log_every_convolution_rebuilt)
{
	/* the first execution of every distinct call of the log, FP32 and FP16 channels-last */
	static char cfgs[128][GT_CFG_MAX];
	size_t n = fixture_configs("h100-torch2.11-resnet18/cudnn.log", cfgs, 128);
	ASSERT_EQ_INT(n, 84);
	int dirs[3] = {0, 0, 0}, bn = 0, nhwc = 0;
	for (size_t i = 0; i < n; i++) {
		struct gt_cudnn_conv c;
		char why[256] = "";
		if (strstr(cfgs[i], "cudnnBatchNormalization")) {
			/* batch norm is a legacy-API call: skipped, saying why */
			ASSERT_EQ_INT(gt_cudnn_conv_from_config(cfgs[i], &c, why, sizeof(why)), -1);
			ASSERT_CONTAINS(why, "is not a convolution: libperf replays cuDNN convolutions");
			bn++;
			continue;
		}
		if (gt_cudnn_conv_from_config(cfgs[i], &c, why, sizeof(why)) < 0)
			GT_FAIL_AT("%s: %s", cfgs[i], why);
		dirs[c.dir]++;
		ASSERT(c.engine >= 0);
		/* channels-last activations: C has stride 1 */
		if (c.x.dtype == GT_CDN_DATA_HALF && c.x.stride[1] == 1)
			nhwc++;
		struct gt_cdn_prog p;
		ASSERT_EQ_INT(gt_cudnn_prog_build(&c, &p, why, sizeof(why)), 0);
		ASSERT(p.engine_cfg > p.graph);
	}
	/* per precision: 11 forward, 10 backward data (the first layer's input needs no gradient), 11 backward filter */
	ASSERT_EQ_INT(dirs[GT_CONV_FWD], 22);
	ASSERT_EQ_INT(dirs[GT_CONV_BWD_DATA], 20);
	ASSERT_EQ_INT(dirs[GT_CONV_BWD_FILTER], 22);
	ASSERT_EQ_INT(bn, 20);
	ASSERT_EQ_INT(nhwc, 32);
	/* the configs are exactly those of the library traces written on the GPU machine */
	static char tc[128][GT_CFG_MAX], tv[128][256];
	size_t nt = fixture_csv("library_trace.fp32.csv", "calls", tc, tv, 64);
	nt += fixture_csv("library_trace.half.csv", "calls", tc + nt, tv + nt, 64);
	ASSERT_EQ_INT(nt, 84);
	for (size_t i = 0; i < nt; i++) {
		int found = 0;
		for (size_t j = 0; j < n && !found; j++)
			found = strcmp(tc[i], cfgs[j]) == 0;
		if (!found)
			GT_FAIL_AT("not in the trimmed log: %s", tc[i]);
	}
}

TEST(libperf_cudnn_resnet18_perf_rows_agree_with_the_config)
{
	/* library_perf.csv written by `gputap libperf` on the H100: for every timed row the
	 * recorded engine is the config's, and TFLOP/s is this file's FLOP count / time */
	static const char *const files[2] = {"library_perf.fp32.csv", "library_perf.half.csv"};
	static const char *const cols[4] = {"recorded_algo", "recorded_us", "recorded_tflops", "best_us"};
	for (int fi = 0; fi < 2; fi++) {
		static char cfg[4][64][GT_CFG_MAX], val[4][64][256];
		size_t n = 0;
		for (int k = 0; k < 4; k++)
			n = fixture_csv(files[fi], cols[k], cfg[k], val[k], 64);
		ASSERT_EQ_INT(n, 42);
		int timed = 0;
		for (size_t i = 0; i < n; i++) {
			struct gt_cudnn_conv c;
			char why[256], label[128];
			if (gt_cudnn_conv_from_config(cfg[0][i], &c, why, sizeof(why)) < 0)
				continue;
			timed++;
			gt_cudnn_engine_label(c.engine, c.knob, c.nknobs, label, sizeof(label));
			ASSERT_EQ_STR(val[0][i], label);
			double us = atof(val[1][i]), tf = atof(val[2][i]), best = atof(val[3][i]);
			ASSERT(us > 0 && best > 0 && best <= us);
			ASSERT_NEAR(gt_cudnn_conv_flops(&c) / (us * 1e6), tf, 0.006);
		}
		ASSERT_EQ_INT(timed, 32);
	}
}
