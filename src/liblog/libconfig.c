/* Canonical config strings of GEMMs and NCCL collectives: writing them and
 * reading them back (libperf replays what it reads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblog/liblog.h"
#include "liblog/libtrace.h"

static const struct {
	const char *name;
	int num, size;
} cuda_types[] = {
	{"R_16F", 2, 2},    {"C_16F", 6, 4},      {"R_16BF", 14, 2},    {"C_16BF", 15, 4},   {"R_32F", 0, 4},
	{"C_32F", 4, 8},    {"R_64F", 1, 8},      {"C_64F", 5, 16},     {"R_8I", 3, 1},      {"C_8I", 7, 2},
	{"R_8U", 8, 1},     {"C_8U", 9, 2},       {"R_32I", 10, 4},     {"C_32I", 11, 8},    {"R_32U", 12, 4},
	{"R_16I", 20, 2},   {"R_64I", 24, 8},     {"R_8F_E4M3", 28, 1}, {"R_8F_E5M2", 29, 1}, {"R_8F_UE8M0", 30, 1},
};

int gt_cuda_type_size(const char *name, int *num)
{
	for (size_t i = 0; i < sizeof(cuda_types) / sizeof(cuda_types[0]); i++)
		if (strcmp(name, cuda_types[i].name) == 0) {
			if (num)
				*num = cuda_types[i].num;
			return cuda_types[i].size;
		}
	if (num)
		*num = -1;
	return 0;
}

static const struct {
	const char *name;
	int num;
} compute_types[] = {
	{"COMPUTE_16F", 64},          {"COMPUTE_16F_PEDANTIC", 65},  {"COMPUTE_32F", 68},
	{"COMPUTE_32F_PEDANTIC", 69}, {"COMPUTE_32F_FAST_16F", 74},  {"COMPUTE_32F_FAST_16BF", 75},
	{"COMPUTE_32F_FAST_TF32", 77}, {"COMPUTE_64F", 70},           {"COMPUTE_64F_PEDANTIC", 71},
	{"COMPUTE_32I", 72},          {"COMPUTE_32I_PEDANTIC", 73},
};

int gt_cublas_compute_num(const char *name)
{
	for (size_t i = 0; i < sizeof(compute_types) / sizeof(compute_types[0]); i++)
		if (strcmp(name, compute_types[i].name) == 0)
			return compute_types[i].num;
	return -1;
}

void gt_gemm_cfg_init(struct gt_gemm_cfg *g)
{
	memset(g, 0, sizeof(*g));
	g->transa = g->transb = 'N';
	g->batch = 1;
	g->algo = -1;
	g->custom = -1;
	strcpy(g->epilogue, "DEFAULT");
}

int gt_gemm_cfg_format(const struct gt_gemm_cfg *g, char *buf, size_t len)
{
	struct gt_sbuf b = {buf, 0, len, 0};
	if (len == 0)
		return -1;
	buf[0] = 0;
	gt_sbuf_printf(&b,
		       "op=gemm transa=%c transb=%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld ldd=%lld "
		       "type_a=%s type_b=%s type_c=%s type_d=%s compute=%s scale=%s batch=%lld",
		       g->transa, g->transb, (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->lda,
		       (long long)g->ldb, (long long)g->ldc, (long long)g->ldd, g->type_a, g->type_b, g->type_c,
		       g->type_d, g->compute, g->scale[0] ? g->scale : "-", (long long)g->batch);
	if (g->batch > 1)
		gt_sbuf_printf(&b, " stride_a=%lld stride_b=%lld stride_c=%lld stride_d=%lld",
			       (long long)g->stride_a, (long long)g->stride_b, (long long)g->stride_c,
			       (long long)g->stride_d);
	gt_sbuf_printf(&b, " epilogue=%s", g->epilogue[0] ? g->epilogue : "DEFAULT");
	if (g->algo >= 0) {
		gt_sbuf_printf(&b, " algo=%d", g->algo);
		if (g->tile[0])
			gt_sbuf_printf(&b, " tile=%s", g->tile);
		if (g->stages[0])
			gt_sbuf_printf(&b, " stages=%s", g->stages);
		if (g->custom >= 0)
			gt_sbuf_printf(&b, " custom=%d", g->custom);
		if (g->cluster[0])
			gt_sbuf_printf(&b, " cluster=%s", g->cluster);
	}
	if (g->api[0])
		gt_sbuf_printf(&b, " api=%s", g->api);
	return b.overflow ? -1 : (int)b.len;
}

int gt_gemm_cfg_check(const struct gt_gemm_cfg *g, char *why, size_t len)
{
	int64_t ar = g->transa == 'N' ? g->m : g->k, br = g->transb == 'N' ? g->k : g->n;
	const struct {
		const char *name;
		int64_t ld, rows;
	} l[] = {{"lda", g->lda, ar}, {"ldb", g->ldb, br}, {"ldc", g->ldc, g->m}, {"ldd", g->ldd, g->m}};
	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (l[i].ld < 1 || l[i].ld < l[i].rows) {
			snprintf(why, len, "leading dimension %s=%lld below its %lld rows", l[i].name, (long long)l[i].ld,
				 (long long)(l[i].rows > 1 ? l[i].rows : 1));
			return -1;
		}
	return 0;
}

/* Iterate over "key=value" words of a config: 1 with key/val set, 0 at end,
 * -1 on a word without '='. */
static int next_kv(const char **pp, char *key, size_t kl, char *val, size_t vl)
{
	const char *p = *pp;
	while (*p == ' ')
		p++;
	if (!*p)
		return 0;
	const char *e = p;
	while (*e && *e != ' ')
		e++;
	const char *eq = memchr(p, '=', (size_t)(e - p));
	*pp = e;
	if (!eq || eq == p)
		return -1;
	size_t n = (size_t)(eq - p) < kl - 1 ? (size_t)(eq - p) : kl - 1;
	memcpy(key, p, n);
	key[n] = 0;
	n = (size_t)(e - eq - 1) < vl - 1 ? (size_t)(e - eq - 1) : vl - 1;
	memcpy(val, eq + 1, n);
	val[n] = 0;
	return 1;
}

static int set_str(char *dst, size_t len, const char *v)
{
	if (strlen(v) >= len)
		return -1;
	strcpy(dst, v);
	return 0;
}

int gt_gemm_cfg_parse(const char *text, struct gt_gemm_cfg *g, char *err, size_t errlen)
{
	gt_gemm_cfg_init(g);
	const char *p = text;
	char key[32], val[128];
	int r, have_op = 0, have = 0, have_ldd = 0, have_tc = 0, have_td = 0;
	while ((r = next_kv(&p, key, sizeof(key), val, sizeof(val))) > 0) {
		int64_t x = 0;
		int bad = 0;
		/* a value is read back as written: defaults fill only keys that are absent */
		have_ldd |= strcmp(key, "ldd") == 0;
		have_tc |= strcmp(key, "type_c") == 0;
		have_td |= strcmp(key, "type_d") == 0;
#define INT_KEY(name, field)                                                                               \
	else if (strcmp(key, name) == 0)                                                                   \
	{                                                                                                  \
		bad = gt_parse_i64(val, &x) < 0 || x < 0;                                                  \
		g->field = x;                                                                              \
		have++;                                                                                    \
	}
#define STR_KEY(name, field)                                                                               \
	else if (strcmp(key, name) == 0) bad = set_str(g->field, sizeof(g->field), val) < 0 ||             \
					      (!val[0] && strncmp(key, "type_", 5) == 0);
		if (strcmp(key, "op") == 0) {
			bad = strcmp(val, "gemm") != 0;
			have_op = 1;
		} else if (strcmp(key, "transa") == 0 || strcmp(key, "transb") == 0) {
			bad = strlen(val) != 1 || !strchr("NTC", val[0]);
			*(key[5] == 'a' ? &g->transa : &g->transb) = val[0];
		}
		INT_KEY("m", m)
		INT_KEY("n", n)
		INT_KEY("k", k)
		INT_KEY("lda", lda)
		INT_KEY("ldb", ldb)
		INT_KEY("ldc", ldc)
		INT_KEY("ldd", ldd)
		INT_KEY("batch", batch)
		INT_KEY("stride_a", stride_a)
		INT_KEY("stride_b", stride_b)
		INT_KEY("stride_c", stride_c)
		INT_KEY("stride_d", stride_d)
		STR_KEY("type_a", type_a)
		STR_KEY("type_b", type_b)
		STR_KEY("type_c", type_c)
		STR_KEY("type_d", type_d)
		STR_KEY("compute", compute)
		STR_KEY("scale", scale)
		STR_KEY("epilogue", epilogue)
		STR_KEY("tile", tile)
		STR_KEY("stages", stages)
		STR_KEY("cluster", cluster)
		STR_KEY("api", api)
		else if (strcmp(key, "algo") == 0 || strcmp(key, "custom") == 0)
		{
			bad = gt_parse_i64(val, &x) < 0 || x < 0 || x > 1000000;
			*(key[0] == 'a' ? &g->algo : &g->custom) = (int)x;
		}
		else
		{
			snprintf(err, errlen, "unknown key '%s' in a GEMM config", key);
			return -1;
		}
#undef INT_KEY
#undef STR_KEY
		if (bad) {
			snprintf(err, errlen, "bad value '%s' for '%s' in a GEMM config", val, key);
			return -1;
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "a word without '=' in a GEMM config");
		return -1;
	}
	if (!have_op) {
		snprintf(err, errlen, "not a GEMM config (no op=gemm)");
		return -1;
	}
	if (strcmp(g->scale, "-") == 0)
		g->scale[0] = 0;
	if (g->m <= 0 || g->n <= 0 || g->k <= 0 || !g->type_a[0] || !g->type_b[0] || !g->compute[0]) {
		snprintf(err, errlen, "a GEMM config needs m, n, k > 0, type_a, type_b and compute");
		return -1;
	}
	if (g->batch < 1) {
		snprintf(err, errlen, "batch must be >= 1");
		return -1;
	}
	if (!have_tc)
		strcpy(g->type_c, g->type_a);
	if (!have_td)
		strcpy(g->type_d, g->type_c);
	if (!have_ldd)
		g->ldd = g->ldc;
	return 0;
}

/* ---- NCCL ---- */
static const char *const nccl_types[] = {"int8",    "uint8",   "int32",  "uint32",   "int64",    "uint64",
					 "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
static const int nccl_type_sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

const char *gt_nccl_type_name(int t, char *buf, size_t len);
const char *gt_nccl_type_name(int t, char *buf, size_t len)
{
	if (t >= 0 && t < (int)(sizeof(nccl_types) / sizeof(nccl_types[0])))
		return nccl_types[t];
	snprintf(buf, len, "type%d", t);
	return buf;
}

int gt_nccl_type_size(const char *dtype)
{
	for (size_t i = 0; i < sizeof(nccl_types) / sizeof(nccl_types[0]); i++)
		if (strcmp(dtype, nccl_types[i]) == 0)
			return nccl_type_sizes[i];
	return 0;
}

int gt_nccl_cfg_format(const struct gt_nccl_cfg *c, char *buf, size_t len)
{
	struct gt_sbuf b = {buf, 0, len, 0};
	if (len == 0)
		return -1;
	buf[0] = 0;
	gt_sbuf_printf(&b, "op=%s count=%llu dtype=%s", c->op, (unsigned long long)c->count, c->dtype);
	if (c->redop[0])
		gt_sbuf_printf(&b, " redop=%s", c->redop);
	if (c->root >= 0)
		gt_sbuf_printf(&b, " %s=%d", strcmp(c->op, "send") == 0 || strcmp(c->op, "recv") == 0 ? "peer" : "root",
			       c->root);
	gt_sbuf_printf(&b, " nranks=%d", c->nranks);
	return b.overflow ? -1 : (int)b.len;
}

int gt_nccl_cfg_parse(const char *text, struct gt_nccl_cfg *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->root = -1;
	c->nranks = -1;
	const char *p = text;
	char key[32], val[128];
	int r;
	while ((r = next_kv(&p, key, sizeof(key), val, sizeof(val))) > 0) {
		int64_t x = 0;
		int bad = 0;
		if (strcmp(key, "op") == 0)
			bad = set_str(c->op, sizeof(c->op), val) < 0;
		else if (strcmp(key, "dtype") == 0)
			bad = set_str(c->dtype, sizeof(c->dtype), val) < 0;
		else if (strcmp(key, "redop") == 0)
			bad = set_str(c->redop, sizeof(c->redop), val) < 0;
		else if (strcmp(key, "count") == 0) {
			bad = gt_parse_i64(val, &x) < 0 || x < 0;
			c->count = (uint64_t)x;
		} else if (strcmp(key, "root") == 0 || strcmp(key, "peer") == 0 || strcmp(key, "nranks") == 0) {
			bad = gt_parse_i64(val, &x) < 0 || x < 0 || x > 1 << 24;
			*(key[0] == 'n' ? &c->nranks : &c->root) = (int)x;
		} else {
			snprintf(err, errlen, "unknown key '%s' in an NCCL config", key);
			return -1;
		}
		if (bad) {
			snprintf(err, errlen, "bad value '%s' for '%s' in an NCCL config", val, key);
			return -1;
		}
	}
	if (r < 0 || !c->op[0] || !c->dtype[0] || c->nranks < 1) {
		snprintf(err, errlen, "an NCCL config needs op, count, dtype and nranks");
		return -1;
	}
	return 0;
}
