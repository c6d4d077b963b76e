/* cuBLAS logs (CUBLAS_LOGINFO_DBG=1): one block per call,
 *   I! cuBLAS (v13.1.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, ...) called:
 *   i!  transa: type=cublasOperation_t; val=CUBLAS_OP_T(1)
 *   i!  m: type=int; val=1024
 *   ...
 *   i! Time: ...
 *   i!Process=14102; Thread=...; GPU=0; Handle=...; StreamId=...; MathMode=CUBLAS_DEFAULT_MATH
 * GEMMs become canonical GEMM configs; other BLAS calls become
 * "op=call api=NAME" with their integer and enum arguments; handle, stream
 * and mode setters are not calls worth replaying and are ignored. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblog/liblog.h"

#define MAX_ARGS 48

struct arg {
	char name[32];
	char type[40];
	char val[64];
};

struct cb_state {
	int open;
	uint64_t line;
	char fn[GT_GEMM_NAME];
	char math[48];
	int nargs;
	struct arg args[MAX_ARGS];
};

static int cb_detect(const char *line)
{
	return strncmp(line, "I! cuBLAS (", 11) == 0;
}

static void *cb_open(void)
{
	return calloc(1, sizeof(struct cb_state));
}

static void cb_close(void *s)
{
	free(s);
}

static const struct arg *find(const struct cb_state *s, const char *name)
{
	for (int i = 0; i < s->nargs; i++)
		if (strcmp(s->args[i].name, name) == 0)
			return &s->args[i];
	return NULL;
}

static int arg_int(const struct cb_state *s, const char *name, int64_t *v)
{
	const struct arg *a = find(s, name);
	return a && gt_parse_i64(a->val, v) == 0;
}

/* "CUBLAS_OP_T(1)" -> "CUBLAS_OP_T" in out; returns out. */
static char *enum_word(const char *val, char *out, size_t len)
{
	size_t n = strcspn(val, "( ");
	if (n >= len)
		n = len - 1;
	memcpy(out, val, n);
	out[n] = 0;
	return out;
}

static int cuda_type(const struct cb_state *s, const char *name, char *out, size_t len)
{
	const struct arg *a = find(s, name);
	char w[48];
	if (!a)
		return 0;
	enum_word(a->val, w, sizeof(w));
	const char *t = strncmp(w, "CUDA_", 5) == 0 ? w + 5 : w;
	if (!gt_cuda_type_size(t, NULL))
		return 0;
	snprintf(out, len, "%s", t);
	return 1;
}

static int op_of(const struct cb_state *s, const char *name, char *op)
{
	const struct arg *a = find(s, name);
	char w[48];
	if (!a)
		return 0;
	enum_word(a->val, w, sizeof(w));
	if (strcmp(w, "CUBLAS_OP_N") == 0)
		*op = 'N';
	else if (strcmp(w, "CUBLAS_OP_T") == 0)
		*op = 'T';
	else if (strcmp(w, "CUBLAS_OP_C") == 0 || strcmp(w, "CUBLAS_OP_HERMITAN") == 0)
		*op = 'C';
	else
		return 0;
	return 1;
}

/* Is fn a GEMM?  Sets the precision letter ('S','D','H','C','Z', 'X' for the
 * Ex forms) and the batched form (0 none, 1 strided, 2 pointer arrays). */
static int gemm_kind(const char *fn, char *prec, int *batched)
{
	if (strncmp(fn, "cublas", 6) != 0)
		return 0;
	const char *p = fn + 6;
	if (strncmp(p, "Gemm", 4) == 0) {
		*prec = 'X';
		p += 4;
	} else if (strchr("SDHCZ", *p) && strncmp(p + 1, "gemm", 4) == 0) {
		*prec = *p;
		p += 5;
		if (strncmp(p, "Ex", 2) == 0 && *prec == 'S') {
			*prec = 'X';
			p += 2;
		}
	} else {
		return 0;
	}
	*batched = 0;
	if (strncmp(p, "StridedBatched", 14) == 0) {
		*batched = 1;
		p += 14;
	} else if (strncmp(p, "Batched", 7) == 0) {
		*batched = 2;
		p += 7;
	}
	if (*prec == 'X' && strncmp(p, "Ex", 2) == 0)
		p += 2;
	/* what may follow: _v2, _64, _v2_64 */
	return *p == 0 || strcmp(p, "_v2") == 0 || strcmp(p, "_64") == 0 || strcmp(p, "_v2_64") == 0;
}

static void emit_gemm(struct cb_state *s, struct gt_liblog_ctx *c, char prec, int batched)
{
	struct gt_gemm_cfg g;
	gt_gemm_cfg_init(&g);
	if (!op_of(s, "transa", &g.transa) || !op_of(s, "transb", &g.transb) || !arg_int(s, "m", &g.m) ||
	    !arg_int(s, "n", &g.n) || !arg_int(s, "k", &g.k) || !arg_int(s, "lda", &g.lda) ||
	    !arg_int(s, "ldb", &g.ldb) || !arg_int(s, "ldc", &g.ldc) || g.m < 0 || g.n < 0 || g.k < 0) {
		gt_liblog_bad(c, s->line, "%s without readable transa/transb/m/n/k/lda/ldb/ldc", s->fn);
		return;
	}
	g.ldd = g.ldc;
	static const struct {
		char p;
		const char *type, *compute;
	} prec_types[] = {{'S', "R_32F", "COMPUTE_32F"},
			  {'D', "R_64F", "COMPUTE_64F"},
			  {'H', "R_16F", "COMPUTE_16F"},
			  {'C', "C_32F", "COMPUTE_32F"},
			  {'Z', "C_64F", "COMPUTE_64F"}};
	if (prec != 'X') {
		for (size_t i = 0; i < sizeof(prec_types) / sizeof(prec_types[0]); i++)
			if (prec_types[i].p == prec) {
				strcpy(g.type_a, prec_types[i].type);
				strcpy(g.compute, prec_types[i].compute);
			}
		strcpy(g.type_b, g.type_a);
		strcpy(g.type_c, g.type_a);
	} else {
		if (!cuda_type(s, "Atype", g.type_a, sizeof(g.type_a)) ||
		    !cuda_type(s, "Btype", g.type_b, sizeof(g.type_b)) ||
		    !cuda_type(s, "Ctype", g.type_c, sizeof(g.type_c))) {
			gt_liblog_bad(c, s->line, "%s without readable Atype/Btype/Ctype", s->fn);
			return;
		}
		const struct arg *ct = find(s, "computeType");
		char w[48];
		if (ct) {
			enum_word(ct->val, w, sizeof(w));
			const char *t = strncmp(w, "CUBLAS_", 7) == 0 ? w + 7 : w;
			if (strncmp(t, "CUDA_", 5) == 0) { /* the older cudaDataType form */
				t += 5;
				char cw[64];
				snprintf(cw, sizeof(cw), "COMPUTE_%s", t[2] ? t + 2 : t);
				gt_cfg_sanitize(g.compute, sizeof(g.compute), cw); /* one plain CSV field */
			} else {
				gt_cfg_sanitize(g.compute, sizeof(g.compute), t);
			}
		} else {
			strcpy(g.compute, "COMPUTE_32F"); /* cublasSgemmEx computes in fp32 */
		}
	}
	strcpy(g.type_d, g.type_c);
	/* scale type follows the compute type, as cuBLAS defines it */
	if (strncmp(g.compute, "COMPUTE_16F", 11) == 0)
		strcpy(g.scale, "R_16F");
	else if (strncmp(g.compute, "COMPUTE_64F", 11) == 0)
		strcpy(g.scale, g.type_c[0] == 'C' ? "C_64F" : "R_64F");
	else if (strncmp(g.compute, "COMPUTE_32I", 11) == 0)
		strcpy(g.scale, "R_32I");
	else
		strcpy(g.scale, g.type_c[0] == 'C' ? "C_32F" : "R_32F");
	if (strcmp(g.compute, "COMPUTE_32F") == 0 && strcmp(g.type_a, "R_32F") == 0 && strstr(s->math, "TF32"))
		strcpy(g.compute, "COMPUTE_32F_FAST_TF32");
	char why[128];
	if (gt_gemm_cfg_check(&g, why, sizeof(why)) < 0) {
		gt_liblog_bad(c, s->line, "%s with a %s", s->fn, why);
		return;
	}
	if (batched) {
		if (!arg_int(s, "batchCount", &g.batch) || g.batch < 1) {
			gt_liblog_bad(c, s->line, "%s without a readable batchCount", s->fn);
			return;
		}
		if (batched == 1 && g.batch > 1) {
			if (!arg_int(s, "strideA", &g.stride_a) || !arg_int(s, "strideB", &g.stride_b) ||
			    !arg_int(s, "strideC", &g.stride_c)) {
				gt_liblog_bad(c, s->line, "%s without readable strideA/strideB/strideC", s->fn);
				return;
			}
			g.stride_d = g.stride_c;
		} else if (g.batch > 1) {
			/* pointer arrays: replayed as densely packed batches */
			if (__builtin_mul_overflow(g.lda, g.transa == 'N' ? g.k : g.m, &g.stride_a) ||
			    __builtin_mul_overflow(g.ldb, g.transb == 'N' ? g.n : g.k, &g.stride_b) ||
			    __builtin_mul_overflow(g.ldc, g.n, &g.stride_c)) {
				gt_liblog_bad(c, s->line, "%s with matrices too large to replay", s->fn);
				return;
			}
			g.stride_d = g.stride_c;
		}
	}
	gt_cfg_sanitize(g.api, sizeof(g.api), s->fn);
	char buf[GT_CFG_MAX];
	if (gt_gemm_cfg_format(&g, buf, sizeof(buf)) < 0) {
		gt_liblog_bad(c, s->line, "%s config too long", s->fn);
		return;
	}
	gt_liblog_call(c, buf);
}

static int ignored_fn(const char *fn)
{
	static const char *const prefixes[] = {"cublasCreate", "cublasDestroy", "cublasSet", "cublasGet",
					       "cublasLoggerConfigure", "cublasLt", "cublasXt"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(fn, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static void emit_call(struct cb_state *s, struct gt_liblog_ctx *c)
{
	char buf[GT_CFG_MAX];
	struct gt_sbuf b = {buf, 0, sizeof(buf), 0};
	char fn[GT_GEMM_NAME];
	gt_cfg_sanitize(fn, sizeof(fn), s->fn);
	gt_sbuf_printf(&b, "op=call api=%s", fn);
	for (int i = 0; i < s->nargs; i++) {
		const struct arg *a = &s->args[i];
		char w[64], v[64], n[32];
		int64_t x;
		if (strstr(a->type, "*") || strstr(a->type, "Handle") || strstr(a->val, "POINTER"))
			continue;
		gt_cfg_sanitize(n, sizeof(n), a->name);
		if (strcmp(a->type, "int") == 0 || strcmp(a->type, "int64_t") == 0 || strcmp(a->type, "long long") == 0) {
			if (gt_parse_i64(a->val, &x) == 0)
				gt_sbuf_printf(&b, " %s=%lld", n, (long long)x);
		} else if (strchr(a->val, '(') && isupper((unsigned char)a->val[0])) {
			gt_cfg_sanitize(v, sizeof(v), enum_word(a->val, w, sizeof(w)));
			gt_sbuf_printf(&b, " %s=%s", n, v);
		}
	}
	if (b.overflow) {
		gt_liblog_bad(c, s->line, "%s config too long", s->fn);
		return;
	}
	gt_liblog_call(c, buf);
}

static void flush_block(struct cb_state *s, struct gt_liblog_ctx *c)
{
	if (!s->open)
		return;
	s->open = 0;
	char prec;
	int batched;
	if (gemm_kind(s->fn, &prec, &batched))
		emit_gemm(s, c, prec, batched);
	else if (ignored_fn(s->fn))
		c->st->ignored++;
	else
		emit_call(s, c);
}

static void cb_line(void *state, struct gt_liblog_ctx *c, const char *line, uint64_t no)
{
	struct cb_state *s = state;
	if (strncmp(line, "I! cuBLAS (", 11) == 0) {
		flush_block(s, c);
		const char *f = strstr(line, ") function ");
		const char *par = f ? strchr(f + 11, '(') : NULL;
		if (!par) {
			gt_liblog_bad(c, no, "cuBLAS call line without a function name");
			return;
		}
		const char *e = par, *b = par;
		while (b > f + 11 && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
			b--;
		if (b == e || (size_t)(e - b) >= sizeof(s->fn)) {
			gt_liblog_bad(c, no, "cuBLAS call line without a function name");
			return;
		}
		memcpy(s->fn, b, (size_t)(e - b));
		s->fn[e - b] = 0;
		s->open = 1;
		s->line = no;
		s->nargs = 0;
		s->math[0] = 0;
		return;
	}
	if (strncmp(line, "i!", 2) != 0) {
		flush_block(s, c);
		return;
	}
	if (!s->open)
		return;
	const char *p = line + 2;
	while (*p == ' ')
		p++;
	if (strncmp(p, "Process=", 8) == 0) {
		gt_kv_get(p, NULL, "MathMode", s->math, sizeof(s->math));
		return;
	}
	const char *colon = strstr(p, ": type=");
	if (!colon)
		return; /* Time:, COMPILED WITH:, ... */
	if (s->nargs == MAX_ARGS)
		return;
	struct arg *a = &s->args[s->nargs];
	size_t nl = (size_t)(colon - p);
	if (nl == 0 || nl >= sizeof(a->name)) {
		gt_liblog_bad(c, no, "cuBLAS argument line without a name");
		return;
	}
	memcpy(a->name, p, nl);
	a->name[nl] = 0;
	const char *t = colon + 7, *te = strchr(t, ';');
	const char *v = strstr(t, "; val=");
	if (!te || !v) {
		gt_liblog_bad(c, no, "cuBLAS argument '%s' without type/val", a->name);
		return;
	}
	snprintf(a->type, sizeof(a->type), "%.*s", (int)(te - t < 39 ? te - t : 39), t);
	snprintf(a->val, sizeof(a->val), "%s", v + 6);
	s->nargs++;
}

static void cb_finish(void *state, struct gt_liblog_ctx *c)
{
	flush_block(state, c);
}

const struct gt_liblog_ops gt_liblog_cublas = {GT_LIB_CUBLAS, cb_detect, cb_open, cb_line, cb_finish, cb_close};
