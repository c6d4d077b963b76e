/* cuBLASLt logs (CUBLASLT_LOG_LEVEL>=2): one [Trace] line per matmul,
 *   [date][cublasLt][pid][Trace][cublasLtHSHMatmul] A=0X.. Adesc=[type=R_16F rows=256 cols=1024 ld=256]
 *   B=.. Bdesc=[..] C=.. Cdesc=[..] D=.. Ddesc=[..] computeDesc=[computeType=COMPUTE_32F scaleType=R_32F
 *   transa=OP_T ..] algo=[algoId=66 tile=MATMUL_TILE_128x128 stages=.. customOption=3 ..] ...
 * Layouts are column-major as stored: rows x cols with leading dimension ld,
 * so m = D.rows, n = D.cols, k = A.cols (A.rows when A is transposed).
 * [Api] lines (level 5) repeat the same call and are not counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblog/liblog.h"

static int lt_detect(const char *line)
{
	return strstr(line, "][cublasLt][") != NULL;
}

static void *lt_open(void)
{
	return calloc(1, 1);
}

static void lt_close(void *s)
{
	free(s);
}

static void lt_finish(void *s, struct gt_liblog_ctx *c)
{
	(void)s;
	(void)c;
}

/* Bounds of the bracketed value of `name=[...]`; 1 if found. */
static int bracket(const char *line, const char *name, const char **b, const char **e)
{
	size_t nl = strlen(name);
	for (const char *p = strstr(line, name); p; p = strstr(p + 1, name)) {
		if ((p != line && p[-1] != ' ') || p[nl] != '=' || p[nl + 1] != '[')
			continue;
		*b = p + nl + 2;
		*e = strchr(*b, ']');
		return *e != NULL;
	}
	return 0;
}

struct layout {
	char type[16];
	int64_t rows, cols, ld, batch, stride;
};

static int read_layout(const char *line, const char *name, struct layout *l)
{
	const char *b, *e;
	memset(l, 0, sizeof(*l));
	l->batch = 1;
	if (!bracket(line, name, &b, &e))
		return -1;
	char order[32];
	if (!gt_kv_get(b, e, "type", l->type, sizeof(l->type)) || !gt_kv_int(b, e, "rows", &l->rows) ||
	    !gt_kv_int(b, e, "cols", &l->cols) || !gt_kv_int(b, e, "ld", &l->ld))
		return -1;
	if (gt_kv_get(b, e, "order", order, sizeof(order)) && strcmp(order, "ORDER_COL") != 0)
		return -2;
	if (!gt_kv_int(b, e, "batchCount", &l->batch))
		l->batch = 1;
	if (!gt_kv_int(b, e, "stridedBatchOffset", &l->stride))
		l->stride = 0;
	if (l->rows < 0 || l->cols < 0 || l->ld < 0 || l->batch < 1 || l->stride < 0 || !l->type[0])
		return -1;
	gt_cfg_sanitize(l->type, sizeof(l->type), l->type);
	return 0;
}

static char op_letter(const char *v)
{
	if (strcmp(v, "OP_T") == 0)
		return 'T';
	if (strcmp(v, "OP_C") == 0)
		return 'C';
	if (strcmp(v, "OP_N") == 0)
		return 'N';
	return 0;
}

static void lt_line(void *s, struct gt_liblog_ctx *c, const char *line, uint64_t no)
{
	(void)s;
	const char *t = strstr(line, "[Trace][");
	if (!t)
		return;
	t += strlen("[Trace][");
	const char *te = strchr(t, ']');
	if (!te || te - t < 6 || memcmp(te - 6, "Matmul", 6) != 0)
		return; /* traces of other calls (transforms, ...) are not GEMMs */
	struct layout A, B, C, D;
	int ra = read_layout(line, "Adesc", &A), rb = read_layout(line, "Bdesc", &B);
	int rc = read_layout(line, "Cdesc", &C), rd = read_layout(line, "Ddesc", &D);
	if (ra == -2 || rb == -2 || rc == -2 || rd == -2) {
		c->st->ignored++; /* row-major or tiled layouts: not replayable as a plain GEMM */
		return;
	}
	if (ra < 0 || rb < 0 || rd < 0) {
		gt_liblog_bad(c, no, "cuBLASLt matmul without readable Adesc/Bdesc/Ddesc");
		return;
	}
	if (rc < 0)
		C = D;
	const char *cb, *ce;
	if (!bracket(line, "computeDesc", &cb, &ce)) {
		gt_liblog_bad(c, no, "cuBLASLt matmul without computeDesc");
		return;
	}
	struct gt_gemm_cfg g;
	gt_gemm_cfg_init(&g);
	char v[64];
	if (!gt_kv_get(cb, ce, "computeType", v, sizeof(v))) {
		gt_liblog_bad(c, no, "cuBLASLt matmul without computeType");
		return;
	}
	gt_cfg_sanitize(g.compute, sizeof(g.compute), v);
	if (!g.compute[0]) {
		gt_liblog_bad(c, no, "cuBLASLt matmul with an empty computeType");
		return;
	}
	if (gt_kv_get(cb, ce, "scaleType", v, sizeof(v)))
		gt_cfg_sanitize(g.scale, sizeof(g.scale), v);
	if (gt_kv_get(cb, ce, "transa", v, sizeof(v)) && !(g.transa = op_letter(v))) {
		gt_liblog_bad(c, no, "cuBLASLt matmul with transa=%s", v);
		return;
	}
	if (gt_kv_get(cb, ce, "transb", v, sizeof(v)) && !(g.transb = op_letter(v))) {
		gt_liblog_bad(c, no, "cuBLASLt matmul with transb=%s", v);
		return;
	}
	if (gt_kv_get(cb, ce, "epilogue", v, sizeof(v)))
		gt_cfg_sanitize(g.epilogue, sizeof(g.epilogue), strncmp(v, "EPILOGUE_", 9) == 0 ? v + 9 : v);
	g.m = D.rows;
	g.n = D.cols;
	g.k = g.transa == 'N' ? A.cols : A.rows;
	int64_t kb = g.transb == 'N' ? B.rows : B.cols;
	int64_t ma = g.transa == 'N' ? A.rows : A.cols;
	if (kb != g.k || ma != g.m) {
		gt_liblog_bad(c, no, "cuBLASLt matmul with inconsistent shapes (A %lldx%lld, B %lldx%lld, D %lldx%lld)",
			      (long long)A.rows, (long long)A.cols, (long long)B.rows, (long long)B.cols,
			      (long long)D.rows, (long long)D.cols);
		return;
	}
	g.lda = A.ld;
	g.ldb = B.ld;
	g.ldc = C.ld;
	g.ldd = D.ld;
	memcpy(g.type_a, A.type, sizeof(g.type_a));
	memcpy(g.type_b, B.type, sizeof(g.type_b));
	memcpy(g.type_c, C.type, sizeof(g.type_c));
	memcpy(g.type_d, D.type, sizeof(g.type_d));
	g.batch = D.batch;
	if (g.batch > 1) {
		g.stride_a = A.stride;
		g.stride_b = B.stride;
		g.stride_c = C.stride;
		g.stride_d = D.stride;
	}
	const char *ab, *ae;
	if (bracket(line, "algo", &ab, &ae)) {
		int64_t id, custom;
		if (gt_kv_int(ab, ae, "algoId", &id) && id >= 0 && id < 1000000)
			g.algo = (int)id;
		if (gt_kv_get(ab, ae, "tile", v, sizeof(v)))
			gt_cfg_sanitize(g.tile, sizeof(g.tile), v);
		if (gt_kv_get(ab, ae, "stages", v, sizeof(v)))
			gt_cfg_sanitize(g.stages, sizeof(g.stages), v);
		if (gt_kv_int(ab, ae, "customOption", &custom) && custom >= 0 && custom < 1000000)
			g.custom = (int)custom;
		if (gt_kv_get(ab, ae, "clusterShape", v, sizeof(v)))
			gt_cfg_sanitize(g.cluster, sizeof(g.cluster), v);
	}
	char buf[GT_CFG_MAX], why[128];
	if (gt_gemm_cfg_check(&g, why, sizeof(why)) < 0) {
		gt_liblog_bad(c, no, "cuBLASLt matmul with a %s", why);
		return;
	}
	if (gt_gemm_cfg_format(&g, buf, sizeof(buf)) < 0) {
		gt_liblog_bad(c, no, "cuBLASLt matmul config too long");
		return;
	}
	gt_liblog_call(c, buf);
}

const struct gt_liblog_ops gt_liblog_cublaslt = {GT_LIB_CUBLASLT, lt_detect, lt_open, lt_line, lt_finish, lt_close};
