/* Library log parsers, the call table, library_trace.csv and the configs libperf reads back. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "liblog/liblog.h"
#include "liblog/libtrace.h"
#include "test.h"

/* Lines in the formats recorded on the GPU machine (docs/libtrace.md). */
static const char nccl_log[] =
	"vm:434:434 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>\n"
	"vm:434:434 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x7f1200000000 recvbuff 0x7f1200000000 count "
	"1048576 datatype 7 op 0 root 0 comm 0x4c5594a0 [nranks=1] stream (nil)\n"
	"vm:434:434 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x7f1200400000 recvbuff 0x7f1200400000 count "
	"1048576 datatype 7 op 0 root 0 comm 0x4c5594a0 [nranks=1] stream (nil)\n"
	"vm:434:434 [0] NCCL INFO Broadcast: opCount 2 sendbuff 0x7f1200000000 recvbuff 0x7f1200000000 count "
	"4096 datatype 9 op 0 root 0 comm 0x4c5594a0 [nranks=1] stream 0x5566\n";

static const char lt_line1[] =
	"[2026-11-21 08:36:41][cublasLt][434][Trace][cublasLtHSHMatmul] A=0X7F0A00000000 Adesc=[type=R_16F "
	"rows=256 cols=512 ld=256] B=0X7F0A00100000 Bdesc=[type=R_16F rows=512 cols=1024 ld=512] C=0X0 "
	"Cdesc=[type=R_16F rows=256 cols=1024 ld=256] D=0X7F0A00200000 Ddesc=[type=R_16F rows=256 cols=1024 "
	"ld=256] computeDesc=[computeType=COMPUTE_32F scaleType=R_32F] algo=[algoId=66 tile=MATMUL_TILE_128x128 "
	"stages=MATMUL_STAGES_64x4 customOption=0 clusterShape=CLUSTER_SHAPE_1x1x1] workSpace=0X0 "
	"workSpaceSizeInBytes=0 beta=0 outOfPlace=1 stream=0X0\n";
/* transposed A (k x m stored), bf16, batched */
static const char lt_line2[] =
	"[2026-11-21 08:36:42][cublasLt][434][Trace][cublasLtTSTMatmul] A=0X1 Adesc=[type=R_16BF rows=64 "
	"cols=128 ld=64 batchCount=8 stridedBatchOffset=8192] B=0X2 Bdesc=[type=R_16BF rows=64 cols=32 ld=64 "
	"batchCount=8 stridedBatchOffset=2048] C=0X3 Cdesc=[type=R_16BF rows=128 cols=32 ld=128 batchCount=8 "
	"stridedBatchOffset=4096] D=0X3 Ddesc=[type=R_16BF rows=128 cols=32 ld=128 batchCount=8 "
	"stridedBatchOffset=4096] computeDesc=[computeType=COMPUTE_32F scaleType=R_32F transa=OP_T] "
	"algo=[algoId=71 tile=MATMUL_TILE_64x32 stages=MATMUL_STAGES_64xAUTO customOption=2] workSpace=0X0\n";

static const char cublas_log[] =
	"I! cuBLAS (v13.1.0) function cublasStatus_t cublasCreate_v2(cublasContext**) called:\n"
	"i!  handle: type=cublasHandle_t; val=POINTER (IN HEX:0x0x2d3af900)\n"
	"i! Time: 2026-11-21T08:38:49 elapsed from start 0.016667 minutes or 1.000000 seconds\n"
	"i!Process=434; Thread=1299; GPU=0; Handle=POINTER (IN HEX:0x(nil))\n"
	"I! cuBLAS (v13.1.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t, "
	"cublasOperation_t, int, int, int, const float*, const float*, int, const float*, int, const float*, "
	"float*, int) called:\n"
	"i!  handle: type=cublasHandle_t; val=POINTER (IN HEX:0x0x2d3c1100)\n"
	"i!  transa: type=cublasOperation_t; val=CUBLAS_OP_T(1)\n"
	"i!  transb: type=cublasOperation_t; val=CUBLAS_OP_N(0)\n"
	"i!  m: type=int; val=384\n"
	"i!  n: type=int; val=192\n"
	"i!  k: type=int; val=256\n"
	"i!  alpha: type=float; val=POINTER (IN HEX:0x0x7ffd)\n"
	"i!  A: type=float; val=POINTER (IN HEX:0x0x7f00)\n"
	"i!  lda: type=int; val=256\n"
	"i!  B: type=float; val=POINTER (IN HEX:0x0x7f01)\n"
	"i!  ldb: type=int; val=256\n"
	"i!  beta: type=float; val=POINTER (IN HEX:0x0x7ffe)\n"
	"i!  C: type=float; val=POINTER (IN HEX:0x0x7f02)\n"
	"i!  ldc: type=int; val=384\n"
	"i! Time: 2026-11-21T08:38:49 elapsed from start 0.016667 minutes or 1.000000 seconds\n"
	"i!Process=434; Thread=1299; GPU=0; Handle=POINTER (IN HEX:0x0x2d3c1100); StreamId=POINTER (IN "
	"HEX:0x(nil)) (defaultStream); MathMode=CUBLAS_DEFAULT_MATH\n"
	"I! cuBLAS (v13.1.0) function cublasStatus_t cublasGemmStridedBatchedEx(...) called:\n"
	"i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)\n"
	"i!  transb: type=cublasOperation_t; val=CUBLAS_OP_N(0)\n"
	"i!  m: type=int; val=64\n"
	"i!  n: type=int; val=64\n"
	"i!  k: type=int; val=32\n"
	"i!  Atype: type=cudaDataType_t; val=CUDA_R_16F(2)\n"
	"i!  lda: type=int; val=64\n"
	"i!  strideA: type=long long int; val=2048\n"
	"i!  Btype: type=cudaDataType_t; val=CUDA_R_16F(2)\n"
	"i!  ldb: type=int; val=32\n"
	"i!  strideB: type=long long int; val=2048\n"
	"i!  Ctype: type=cudaDataType_t; val=CUDA_R_16F(2)\n"
	"i!  ldc: type=int; val=64\n"
	"i!  strideC: type=long long int; val=4096\n"
	"i!  batchCount: type=int; val=4\n"
	"i!  computeType: type=cublasComputeType_t; val=CUBLAS_COMPUTE_32F(68)\n"
	"i!  algo: type=SOME TYPE; val=CUBLAS_GEMM_DEFAULT(-1)\n";

static struct gt_libcalls *parse(const char *text, struct gt_liblog_stats *st)
{
	struct gt_libcalls *t = gt_libcalls_new();
	gt_liblog_parse_buf("test.log", text, strlen(text), t, st);
	return t;
}

TEST(libtrace_nccl_lines)
{
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse(nccl_log, &st);
	ASSERT_EQ_INT(st.lib, GT_LIB_NCCL);
	ASSERT_EQ_U64(st.calls, 3);
	ASSERT_EQ_U64(st.bad, 0);
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &r), 2);
	ASSERT_EQ_STR(r[0].config, "op=allreduce count=1048576 dtype=float32 redop=sum nranks=1");
	ASSERT_EQ_U64(r[0].calls, 2);
	ASSERT_EQ_STR(r[1].config, "op=broadcast count=4096 dtype=bfloat16 root=0 nranks=1");
	ASSERT_EQ_U64(r[1].calls, 1);
	gt_libcalls_free(t);
}

TEST(libtrace_nccl_bad_lines_counted)
{
	const char text[] = "h:1:1 [0] NCCL INFO AllReduce: opCount 0 count zz datatype 7 op 0 [nranks=2]\n"
			    "h:1:1 [0] NCCL INFO AllReduce: opCount 1 count 8 datatype 7 op 0 comm 0x1\n"
			    "h:1:1 [0] NCCL INFO AllGather: opCount 2 count 8 datatype 0 op 0 root 0 [nranks=2]\n";
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse(text, &st);
	ASSERT_EQ_U64(st.bad, 2);
	ASSERT_EQ_U64(st.calls, 1);
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &r), 1);
	ASSERT_EQ_STR(r[0].config, "op=allgather count=8 dtype=int8 nranks=2");
	gt_libcalls_free(t);
}

TEST(libtrace_cublaslt_lines)
{
	char text[4096];
	snprintf(text, sizeof(text), "%s%s%s%s", lt_line1, lt_line1, lt_line2,
		 "[2026-11-21 08:36:41][cublasLt][434][Api][cublasLtMatmul] A=0X1 Adesc=[type=R_16F rows=2 cols=2 ld=2]\n");
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse(text, &st);
	ASSERT_EQ_INT(st.lib, GT_LIB_CUBLASLT);
	ASSERT_EQ_U64(st.calls, 3);
	ASSERT_EQ_U64(st.bad, 0);
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &r), 2);
	ASSERT_EQ_STR(r[0].config,
		      "op=gemm transa=N transb=N m=256 n=1024 k=512 lda=256 ldb=512 ldc=256 ldd=256 type_a=R_16F "
		      "type_b=R_16F type_c=R_16F type_d=R_16F compute=COMPUTE_32F scale=R_32F batch=1 epilogue=DEFAULT "
		      "algo=66 tile=MATMUL_TILE_128x128 stages=MATMUL_STAGES_64x4 custom=0 cluster=CLUSTER_SHAPE_1x1x1");
	ASSERT_EQ_U64(r[0].calls, 2);
	ASSERT_EQ_STR(r[1].config,
		      "op=gemm transa=T transb=N m=128 n=32 k=64 lda=64 ldb=64 ldc=128 ldd=128 type_a=R_16BF "
		      "type_b=R_16BF type_c=R_16BF type_d=R_16BF compute=COMPUTE_32F scale=R_32F batch=8 "
		      "stride_a=8192 stride_b=2048 stride_c=4096 stride_d=4096 epilogue=DEFAULT algo=71 "
		      "tile=MATMUL_TILE_64x32 stages=MATMUL_STAGES_64xAUTO custom=2");
	gt_libcalls_free(t);
}

TEST(libtrace_cublaslt_inconsistent_shape_is_bad)
{
	const char text[] = "[d][cublasLt][1][Trace][cublasLtSSSMatmul] Adesc=[type=R_32F rows=4 cols=8 ld=4] "
			    "Bdesc=[type=R_32F rows=9 cols=2 ld=9] Ddesc=[type=R_32F rows=4 cols=2 ld=4] "
			    "computeDesc=[computeType=COMPUTE_32F scaleType=R_32F]\n"
			    "[d][cublasLt][1][Trace][cublasLtSSSMatmul] Adesc=[type=R_32F rows=4 cols=8]\n";
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse(text, &st);
	ASSERT_EQ_U64(st.bad, 2);
	ASSERT_EQ_U64(st.calls, 0);
	gt_libcalls_free(t);
}

TEST(libtrace_cublas_blocks)
{
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse(cublas_log, &st);
	ASSERT_EQ_INT(st.lib, GT_LIB_CUBLAS);
	ASSERT_EQ_U64(st.calls, 2);
	ASSERT_EQ_U64(st.ignored, 1); /* cublasCreate */
	ASSERT_EQ_U64(st.bad, 0);
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &r), 2);
	ASSERT_EQ_STR(r[0].config,
		      "op=gemm transa=N transb=N m=64 n=64 k=32 lda=64 ldb=32 ldc=64 ldd=64 type_a=R_16F type_b=R_16F "
		      "type_c=R_16F type_d=R_16F compute=COMPUTE_32F scale=R_32F batch=4 stride_a=2048 stride_b=2048 "
		      "stride_c=4096 stride_d=4096 epilogue=DEFAULT api=cublasGemmStridedBatchedEx");
	ASSERT_EQ_STR(r[1].config,
		      "op=gemm transa=T transb=N m=384 n=192 k=256 lda=256 ldb=256 ldc=384 ldd=384 type_a=R_32F "
		      "type_b=R_32F type_c=R_32F type_d=R_32F compute=COMPUTE_32F scale=R_32F batch=1 epilogue=DEFAULT "
		      "api=cublasSgemm_v2");
	gt_libcalls_free(t);
}

TEST(libtrace_cublas_tf32_math_mode)
{
	char *text = strdup(cublas_log);
	char *mm = strstr(text, "CUBLAS_DEFAULT_MATH");
	ASSERT(mm);
	memcpy(mm, "CUBLAS_TF32_TENSOR_OP_MATH", strlen("CUBLAS_TF32_TENSOR_OP_MATH")); /* overwrites to line end */
	mm[strlen("CUBLAS_TF32_TENSOR_OP_MATH")] = '\n';
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse(text, &st);
	const struct gt_libcall_row *r;
	size_t n = gt_libcalls_rows(t, &r);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		found += strstr(r[i].config, "m=384") && strstr(r[i].config, "compute=COMPUTE_32F_FAST_TF32 ");
	ASSERT_EQ_INT(found, 1);
	gt_libcalls_free(t);
	free(text);
}

TEST(libtrace_cudnn_blocks_flattened)
{
	const char text[] = "I! CuDNN (v90100 17) function cudnnCreate() called:\n"
			    "i!     handle: type=cudnnHandle_t*; val=0x55;\n"
			    "I! CuDNN (v90100 17) function cudnnConvolutionForward() called:\n"
			    "i!     handle: type=cudnnHandle_t; streamId=0x0;\n"
			    "i!     xDesc: type=cudnnTensorDescriptor_t:\n"
			    "i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);\n"
			    "i!         nbDims: type=int; val=4;\n"
			    "i!         dimA: type=int; val=[1,3,32,32];\n"
			    "i!     x: location=dev; addr=0x7f00;\n"
			    "i!     algo: type=cudnnConvolutionFwdAlgo_t; val=CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM (0);\n"
			    "i!     workSpace: type=void*; val=0x7f1;\n"
			    "i! Time: 2026-11-21T08:38:49.123 (0d+0h+0m+1s since start)\n"
			    "i! Process=434; Thread=434; GPU=0; Handle=0x55; StreamId=0x0.\n";
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse(text, &st);
	ASSERT_EQ_INT(st.lib, GT_LIB_CUDNN);
	ASSERT_EQ_U64(st.calls, 1);
	ASSERT_EQ_U64(st.ignored, 1);
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &r), 1);
	ASSERT_EQ_STR(r[0].config, "op=cudnnConvolutionForward xDesc.dataType=FLOAT xDesc.nbDims=4 "
				   "xDesc.dimA=1x3x32x32 algo=CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM");
	gt_libcalls_free(t);
}

TEST(libtrace_unknown_format_skipped)
{
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse("hello\nworld\n", &st);
	ASSERT_EQ_INT(st.lib, GT_LIB_UNKNOWN);
	ASSERT_EQ_U64(st.calls, 0);
	ASSERT_EQ_U64(st.lines, 2);
	gt_libcalls_free(t);
}

/* Two ranks' NCCL logs and a cuBLASLt log in one folder: one CSV, ranks merged. */
TEST(libtrace_collect_merges_ranks_golden)
{
	const char *dir = gt_test_tmpdir();
	char libs[4096], csv[4096];
	snprintf(libs, sizeof(libs), "%s/libs", dir);
	mkdir(libs, 0755);
	const char r0[] = "h:10:10 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 4096 datatype 9 "
			  "op 0 root 0 comm 0xa [nranks=2] stream 0x1\n"
			  "h:10:10 [0] NCCL INFO AllGather: opCount 1 sendbuff 0x1 recvbuff 0x2 count 512 datatype 7 "
			  "op 0 root 0 comm 0xa [nranks=2] stream 0x1\n";
	/* rank 1 is rank 0's log with its own host:pid:tid, device and pointers */
	char r1[sizeof(r0) + 64];
	snprintf(r1, sizeof(r1), "%s", r0);
	for (char *p = r1; (p = strstr(p, "h:10:10 [0]")); p++)
		memcpy(p, "h:11:11 [1]", 11);
	ASSERT(strstr(r1, "h:11:11 [1] NCCL INFO AllGather"));
	/* the file name says nothing: detection is by content */
	gt_test_write_file(libs, "nccl.h.10.log", r0, strlen(r0));
	gt_test_write_file(libs, "x.txt", r1, strlen(r1));
	gt_test_write_file(libs, "cublaslt.10.log", lt_line1, strlen(lt_line1));
	gt_test_write_file(libs, "notes.txt", "nothing here\n", 13);
	snprintf(csv, sizeof(csv), "%s/library_trace.csv", dir);
	char err[512] = "";
	ASSERT_EQ_INT(gt_libtrace_collect(libs, csv, "job7", "resnet", err, sizeof(err)), 0);
	char *got = gt_test_read_file(csv, NULL);
	ASSERT(got);
	/* created_date is "now": check its shape, then compare the rest exactly */
	char *p = got, line[1024];
	char expect[] =
		"jobid,created_date,model,library,config,calls\n"
		"job7,D,resnet,cublasLt,op=gemm transa=N transb=N m=256 n=1024 k=512 lda=256 ldb=512 ldc=256 ldd=256 "
		"type_a=R_16F type_b=R_16F type_c=R_16F type_d=R_16F compute=COMPUTE_32F scale=R_32F batch=1 "
		"epilogue=DEFAULT algo=66 tile=MATMUL_TILE_128x128 stages=MATMUL_STAGES_64x4 custom=0 "
		"cluster=CLUSTER_SHAPE_1x1x1,1\n"
		"job7,D,resnet,nccl,op=allgather count=512 dtype=float32 nranks=2,2\n"
		"job7,D,resnet,nccl,op=allreduce count=4096 dtype=bfloat16 redop=sum nranks=2,2\n";
	char norm[4096] = "";
	while (*p) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		char *c1 = strchr(line, ',');
		if (c1 && strncmp(line, "job7,", 5) == 0) {
			char *c2 = strchr(c1 + 1, ',');
			ASSERT(c2 && c2 - c1 - 1 == 20 && c1[5] == '-' && c1[11] == 'T' && c2[-1] == 'Z');
			memmove(c1 + 2, c2, strlen(c2) + 1);
			c1[1] = 'D';
		}
		strcat(norm, line);
		strcat(norm, "\n");
		p += n + (nl ? 1 : 0);
	}
	ASSERT_EQ_STR(norm, expect);
	free(got);
}

TEST(libtrace_csv_golden_and_read_back)
{
	struct gt_libcalls *t = gt_libcalls_new();
	gt_libcalls_add(t, GT_LIB_NCCL, "op=allreduce count=8 dtype=float32 redop=sum nranks=2", 3);
	gt_libcalls_add(t, GT_LIB_CUBLAS, "op=call api=cublasSaxpy_v2 n=16", 5);
	gt_libcalls_add(t, GT_LIB_NCCL, "op=allreduce count=8 dtype=float32 redop=sum nranks=2", 1);
	gt_libcalls_add(t, GT_LIB_NCCL, "op=broadcast count=8 dtype=float32 root=0 nranks=2", 9);
	char path[4096], err[256];
	snprintf(path, sizeof(path), "%s/lt.csv", gt_test_tmpdir());
	ASSERT_EQ_INT(gt_libcalls_write_csv(t, path, "j,1", "m\"x", "2026-01-02T03:04:05Z", err, sizeof(err)), 0);
	char *got = gt_test_read_file(path, NULL);
	ASSERT_EQ_STR(got, "jobid,created_date,model,library,config,calls\n"
			   "\"j,1\",2026-01-02T03:04:05Z,\"m\"\"x\",cublas,op=call api=cublasSaxpy_v2 n=16,5\n"
			   "\"j,1\",2026-01-02T03:04:05Z,\"m\"\"x\",nccl,op=broadcast count=8 dtype=float32 root=0 nranks=2,9\n"
			   "\"j,1\",2026-01-02T03:04:05Z,\"m\"\"x\",nccl,op=allreduce count=8 dtype=float32 redop=sum nranks=2,4\n");
	free(got);
	struct gt_libcalls *u = gt_libcalls_new();
	ASSERT_EQ_INT(gt_libcalls_read_csv(path, u, err, sizeof(err)), 0);
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(u, &r), 3);
	ASSERT_EQ_INT(r[2].lib, GT_LIB_NCCL);
	ASSERT_EQ_U64(r[2].calls, 4);
	gt_libcalls_free(t);
	gt_libcalls_free(u);
}

TEST(libtrace_csv_read_errors_name_line)
{
	const char *dir = gt_test_tmpdir();
	char err[256];
	struct gt_libcalls *t = gt_libcalls_new();
	const char *p = gt_test_write_file(dir, "a.csv", "jobid,library,config,calls\nj,nccl,op=x,zz\n", 42);
	ASSERT_EQ_INT(gt_libcalls_read_csv(p, t, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "a.csv:2:");
	p = gt_test_write_file(dir, "b.csv", "x,y\n", 4);
	ASSERT_EQ_INT(gt_libcalls_read_csv(p, t, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "b.csv:1:");
	gt_libcalls_free(t);
}

TEST(libtrace_gemm_config_round_trip)
{
	struct gt_liblog_stats st;
	char text[4096];
	snprintf(text, sizeof(text), "%s%s", lt_line1, lt_line2);
	struct gt_libcalls *t = parse(text, &st);
	const struct gt_libcall_row *r;
	size_t n = gt_libcalls_rows(t, &r);
	ASSERT_EQ_INT(n, 2);
	for (size_t i = 0; i < n; i++) {
		struct gt_gemm_cfg g;
		char err[256], back[GT_CFG_MAX];
		ASSERT_EQ_INT(gt_gemm_cfg_parse(r[i].config, &g, err, sizeof(err)), 0);
		ASSERT(gt_gemm_cfg_format(&g, back, sizeof(back)) > 0);
		ASSERT_EQ_STR(back, r[i].config);
	}
	struct gt_gemm_cfg g;
	char err[256];
	ASSERT_EQ_INT(gt_gemm_cfg_parse(r[1].config, &g, err, sizeof(err)), 0);
	ASSERT_EQ_INT(g.transa, 'T');
	ASSERT_EQ_INT(g.m, 128);
	ASSERT_EQ_INT(g.k, 64);
	ASSERT_EQ_INT(g.batch, 8);
	ASSERT_EQ_INT(g.stride_a, 8192);
	ASSERT_EQ_INT(g.algo, 71);
	ASSERT_EQ_STR(g.type_a, "R_16BF");
	ASSERT_EQ_INT(gt_gemm_cfg_parse("op=gemm m=1 n=1 k=1 type_a=R_32F type_b=R_32F compute=COMPUTE_32F bogus=1",
					&g, err, sizeof(err)),
		      -1);
	ASSERT_CONTAINS(err, "bogus");
	ASSERT_EQ_INT(gt_gemm_cfg_parse("op=gemm m=-4 n=1 k=1 type_a=R_32F type_b=R_32F compute=COMPUTE_32F", &g, err,
					sizeof(err)),
		      -1);
	ASSERT_EQ_INT(gt_gemm_cfg_parse("op=gemm transa=X m=1 n=1 k=1", &g, err, sizeof(err)), -1);
	ASSERT_EQ_INT(gt_gemm_cfg_parse("op=allreduce count=1", &g, err, sizeof(err)), -1);
	/* minimal hand-written config: defaults fill in */
	ASSERT_EQ_INT(gt_gemm_cfg_parse("op=gemm m=8 n=4 k=2 lda=8 ldb=2 ldc=8 type_a=R_32F type_b=R_32F "
					"compute=COMPUTE_32F",
					&g, err, sizeof(err)),
		      0);
	ASSERT_EQ_STR(g.type_d, "R_32F");
	ASSERT_EQ_INT(g.ldd, 8);
	ASSERT_EQ_INT(g.algo, -1);
	gt_libcalls_free(t);
}

/* A config reads back as written: a value that is there is never replaced by a default (ldd=0 was
 * read back as ldc, so libperf would have replayed another GEMM than the logged one). */
TEST(libtrace_gemm_config_exact_or_refused)
{
	struct gt_gemm_cfg g;
	char err[256], back[GT_CFG_MAX];
	const char *in = "op=gemm transa=N transb=N m=64 n=16 k=32 lda=64 ldb=32 ldc=64 ldd=0 type_a=R_16BF "
			 "type_b=R_16BF type_c=R_16BF type_d=R_16BF compute=COMPUTE_32F scale=R_32F batch=1 "
			 "epilogue=DEFAULT";
	ASSERT_EQ_INT(gt_gemm_cfg_parse(in, &g, err, sizeof(err)), 0);
	ASSERT_EQ_INT(g.ldd, 0);
	ASSERT(gt_gemm_cfg_format(&g, back, sizeof(back)) > 0);
	ASSERT_EQ_STR(back, in);
	/* ... and such a GEMM is refused before any replay */
	ASSERT_EQ_INT(gt_gemm_cfg_check(&g, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "ldd=0");
	g.ldd = 64;
	ASSERT_EQ_INT(gt_gemm_cfg_check(&g, err, sizeof(err)), 0);
	g.lda = 63;
	ASSERT_EQ_INT(gt_gemm_cfg_check(&g, err, sizeof(err)), -1);
	/* an empty type is no type */
	ASSERT_EQ_INT(gt_gemm_cfg_parse("op=gemm m=8 n=4 k=2 lda=8 ldb=2 ldc=8 type_a=R_32F type_b=R_32F type_c= "
					"compute=COMPUTE_32F",
					&g, err, sizeof(err)),
		      -1);
	ASSERT_CONTAINS(err, "type_c");
	/* the cuBLASLt log line with ldd=0 is a bad line, not a recorded GEMM */
	gt_liblog_verbose = 0;
	struct gt_libcalls *t = gt_libcalls_new();
	ASSERT(t);
	struct gt_liblog_stats st;
	const char line[] = "[2026-11-21 09:14:39][cublasLt][474][Trace][cublasLtMatmul] A=0X7f Adesc=[type=R_16BF "
			    "rows=64 cols=32 ld=64] B=0X7f Bdesc=[type=R_16BF rows=32 cols=16 ld=32] C=0X7f "
			    "Cdesc=[type=R_16BF rows=64 cols=16 ld=64] D=0X7f Ddesc=[type=R_16BF rows=64 cols=16 ld=0] "
			    "computeDesc=[computeType=COMPUTE_32F scaleType=R_32F] stream=0X0\n";
	gt_liblog_parse_buf("t.log", line, sizeof(line) - 1, t, &st);
	const struct gt_libcall_row *rows;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &rows), 0);
	ASSERT_EQ_INT(st.bad, 1);
	gt_libcalls_free(t);
	gt_liblog_verbose = 1;
}

TEST(libtrace_nccl_config_round_trip)
{
	struct gt_nccl_cfg c;
	char err[256], back[256];
	const char *in[] = {"op=allreduce count=1048576 dtype=float32 redop=sum nranks=8",
			    "op=broadcast count=4 dtype=bfloat16 root=3 nranks=4", "op=send count=4 dtype=int8 peer=1 nranks=2"};
	for (size_t i = 0; i < 3; i++) {
		ASSERT_EQ_INT(gt_nccl_cfg_parse(in[i], &c, err, sizeof(err)), 0);
		ASSERT(gt_nccl_cfg_format(&c, back, sizeof(back)) > 0);
		ASSERT_EQ_STR(back, in[i]);
	}
	ASSERT_EQ_INT(gt_nccl_type_size("bfloat16"), 2);
	ASSERT_EQ_INT(gt_nccl_cfg_parse("op=allreduce count=1 dtype=float32", &c, err, sizeof(err)), -1);
}

TEST(libtrace_kv_helpers)
{
	char v[16];
	int64_t x;
	ASSERT(gt_kv_get("Adesc=[type=R_16F rows=2]", NULL, "type", v, sizeof(v)));
	ASSERT_EQ_STR(v, "R_16F");
	ASSERT(!gt_kv_get("xtype=1", NULL, "type", v, sizeof(v)));
	ASSERT(gt_kv_int("a=1 b=0x10", NULL, "b", &x));
	ASSERT_EQ_INT(x, 16);
	ASSERT(!gt_kv_int("b=12z", NULL, "b", &x));
	gt_cfg_sanitize(v, sizeof(v), "a,b\"c d");
	ASSERT_EQ_STR(v, "a_b_c_d");
}
