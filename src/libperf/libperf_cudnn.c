/* libperf_cudnn.c — a recorded cuDNN convolution read back from its config
 * and turned into the backend descriptors that rebuild it (pure: no GPU, no
 * cuDNN; see libperf_cudnn.h).
 *
 * Three kinds of records describe a convolution (docs/libtrace.md):
 *  - cuDNN 9's cudnnBackendExecuteInternal block: operation=CONV_FORWARD (or
 *    a backward one), xDesc/wDesc/yDesc with dataType, dimA, strideA (the
 *    filter with its format instead of strides), convDesc with padA,
 *    strideA, dilationA, groupCount, dataType (compute) and mathType,
 *    alpha, beta, engine_id and knobDesc.KNOB=value;
 *  - an execution plan (cudnnBackendExecute without an internal block):
 *    operation=CONVOLUTION_FORWARD, tensors with type, dimA, strideA,
 *    convDesc with computeType, lowerPadA, upperPadA, the engine;
 *  - the legacy API (cudnnConvolutionForward, ...BackwardData,
 *    ...BackwardFilter): descriptors as in the internal block, the legacy
 *    algorithm instead of an engine. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblog/liblog.h"
#include "libperf/libperf_cudnn.h"

static const struct {
	const char *name;
	int num, size;
} dtypes[] = {
	{"FLOAT", 0, 4},     {"DOUBLE", 1, 8},   {"HALF", 2, 2},      {"INT8", 3, 1},      {"INT32", 4, 4},
	{"UINT8", 6, 1},     {"BFLOAT16", 9, 2}, {"INT64", 10, 8},    {"BOOLEAN", 11, 1},  {"FP8_E4M3", 12, 1},
	{"FP8_E5M2", 13, 1},
};

int gt_cudnn_dtype(const char *name, int *size)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (strcmp(name, dtypes[i].name) == 0) {
			if (size)
				*size = dtypes[i].size;
			return dtypes[i].num;
		}
	return -1;
}

/* cudnnBackendKnobType_t, in number order (cuDNN 9.19) */
static const char *const knob_names[] = {
	"SPLIT_K",     "SWIZZLE",     "TILE_SIZE",   "USE_TEX",          "EDGE",        "KBLOCK",
	"LDGA",        "LDGB",        "CHUNK_K",     "SPLIT_H",          "WINO_TILE",   "MULTIPLY",
	"SPLIT_K_BUF", "TILEK",       "STAGES",      "REDUCTION_MODE",   "CTA_SPLIT_K_MODE", "SPLIT_K_SLC",
	"IDX_MODE",    "SLICED",      "SPLIT_RS",    "SINGLEBUFFER",     "LDGC",        "SPECFILT",
	"KERNEL_CFG",  "WORKSPACE",   "TILE_CGA",    "TILE_CGA_M",       "TILE_CGA_N",  "BLOCK_SIZE",
	"OCCUPANCY",   "ARRAY_SIZE_PER_THREAD", "NUM_C_PER_BLOCK", "SPLIT_COLS", "TILE_ROWS", "TILE_COLS",
	"LOAD_SIZE",   "CTA_COUNT",   "STREAM_K",    "SPLIT_P_SLC",      "TILE_M",      "TILE_N",
	"WARP_SPEC_CFG", "SWAP_AB",
};

int gt_cudnn_knob_num(const char *name)
{
	for (size_t i = 0; i < sizeof(knob_names) / sizeof(knob_names[0]); i++)
		if (strcmp(name, knob_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *gt_cudnn_knob_name(int num)
{
	return num >= 0 && (size_t)num < sizeof(knob_names) / sizeof(knob_names[0]) ? knob_names[num] : NULL;
}

uint64_t gt_cudnn_tensor_bytes(const struct gt_cudnn_tensor *t)
{
	uint64_t last = 0;
	for (int i = 0; i < t->nd; i++)
		last += (uint64_t)(t->dim[i] - 1) * (uint64_t)t->stride[i];
	return (last + 1) * (uint64_t)t->size;
}

double gt_cudnn_conv_flops(const struct gt_cudnn_conv *c)
{
	double f = 2.0;
	for (int i = 0; i < c->y.nd; i++)
		f *= (double)c->y.dim[i];
	for (int i = 1; i < c->w.nd; i++)
		f *= (double)c->w.dim[i];
	return f;
}

void gt_cudnn_engine_label(int64_t engine, const struct gt_cudnn_knob *k, int nk, char *buf, size_t len)
{
	struct gt_sbuf b = {buf, 0, len, 0};
	buf[0] = 0;
	gt_sbuf_printf(&b, "%lld", (long long)engine);
	for (int i = 0; i < nk; i++) {
		const char *n = gt_cudnn_knob_name(k[i].type);
		if (n)
			gt_sbuf_printf(&b, ":%s=%lld", n, (long long)k[i].value);
		else
			gt_sbuf_printf(&b, ":KNOB%d=%lld", k[i].type, (long long)k[i].value);
	}
}

int gt_cudnn_numerics_change(int dtype, unsigned allowed, unsigned cand, char *why, size_t whylen)
{
	unsigned added = cand & ~allowed;
	if (added & (1u << GT_CDN_NOTE_DOWN_CONVERT_INPUTS)) {
		snprintf(why, whylen, "down-converted inputs");
		return 1;
	}
	if (added & (1u << GT_CDN_NOTE_REDUCED_PRECISION_REDUCTION)) {
		snprintf(why, whylen, "reduced-precision reduction");
		return 1;
	}
	if ((added & (1u << GT_CDN_NOTE_TENSOR_CORE)) && (dtype == GT_CDN_DATA_FLOAT || dtype == GT_CDN_DATA_DOUBLE)) {
		snprintf(why, whylen, "TF32 tensor cores on %s data", dtype == GT_CDN_DATA_FLOAT ? "FP32" : "FP64");
		return 1;
	}
	return 0;
}

/* ---- reading a config ---- */

/* "8x3x32x32" -> {8,3,32,32}; the count, or -1. */
static int parse_dims(const char *s, int64_t *out, int max)
{
	int n = 0;
	while (*s) {
		char *end;
		long long v = strtoll(s, &end, 10);
		if (end == s || n >= max)
			return -1;
		out[n++] = v;
		if (*end == 'x')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return n;
}

/* The value of the first of `keys` (NULL-terminated) present in `cfg`. */
static int get_any(const char *cfg, const char *const *keys, char *out, size_t len)
{
	for (int i = 0; keys[i]; i++)
		if (gt_kv_get(cfg, NULL, keys[i], out, len))
			return 1;
	return 0;
}

/* `prefix.name` of the first prefix that has it. */
static int get_role(const char *cfg, const char *const *prefixes, const char *name, char *out, size_t len)
{
	char key[64];
	for (int i = 0; prefixes[i]; i++) {
		snprintf(key, sizeof(key), "%s.%s", prefixes[i], name);
		if (gt_kv_get(cfg, NULL, key, out, len))
			return 1;
	}
	return 0;
}

#define WHY(...) (snprintf(why, whylen, __VA_ARGS__), -1)

static int read_tensor(const char *cfg, const char *role, const char *const *prefixes, int filter,
		       struct gt_cudnn_tensor *t, char *why, size_t whylen)
{
	char v[160];
	if (!get_role(cfg, prefixes, "dataType", v, sizeof(v)) && !get_role(cfg, prefixes, "type", v, sizeof(v)))
		return WHY("skipped: the record has no %s tensor (%sDesc)", role, role);
	if ((t->dtype = gt_cudnn_dtype(v, &t->size)) < 0)
		return WHY("skipped: %s data type %s is not replayed", role, v);
	if (!get_role(cfg, prefixes, "dimA", v, sizeof(v)) || (t->nd = parse_dims(v, t->dim, GT_CDN_MAX_DIMS)) < 0)
		return WHY("skipped: the %s tensor has no readable dimensions", role);
	if (t->nd < 3 || t->nd > 5)
		return WHY("skipped: %d-dimensional %s tensor (convolutions of 1 to 3 spatial dimensions are replayed)",
			   t->nd, role);
	for (int i = 0; i < t->nd; i++)
		if (t->dim[i] <= 0)
			return WHY("skipped: the %s tensor has a dimension of %lld", role, (long long)t->dim[i]);
	int64_t vect = 0;
	if (get_role(cfg, prefixes, "vect", v, sizeof(v)) && (gt_parse_i64(v, &vect) < 0 || vect != 0))
		return WHY("skipped: vectorized %s tensor (vect=%s) is not replayed", role, v);
	if (get_role(cfg, prefixes, "strideA", v, sizeof(v))) {
		if (parse_dims(v, t->stride, GT_CDN_MAX_DIMS) != t->nd)
			return WHY("skipped: the %s tensor's strides do not match its dimensions", role);
		for (int i = 0; i < t->nd; i++)
			if (t->stride[i] <= 0)
				return WHY("skipped: the %s tensor has a stride of %lld", role, (long long)t->stride[i]);
		return 0;
	}
	char fmt[64] = "TENSOR_NCHW";
	if (!filter)
		return WHY("skipped: the %s tensor has no strides in the record", role);
	get_role(cfg, prefixes, "format", fmt, sizeof(fmt));
	int64_t s = 1;
	if (strcmp(fmt, "TENSOR_NCHW") == 0) {
		for (int i = t->nd - 1; i >= 0; i--) {
			t->stride[i] = s;
			s *= t->dim[i];
		}
	} else if (strcmp(fmt, "TENSOR_NHWC") == 0) {
		/* channels last: C fastest, then the spatial dimensions, then K */
		t->stride[1] = 1;
		s = t->dim[1];
		for (int i = t->nd - 1; i >= 2; i--) {
			t->stride[i] = s;
			s *= t->dim[i];
		}
		t->stride[0] = s;
	} else {
		return WHY("skipped: filter layout %s is not replayed", fmt);
	}
	return 0;
}

static int read_array(const char *cfg, const char *key, const char *alt, int64_t *out, int n, int64_t dflt,
		      char *why, size_t whylen)
{
	char v[160];
	const char *keys[] = {key, alt, NULL};
	if (!get_any(cfg, keys, v, sizeof(v))) {
		for (int i = 0; i < n; i++)
			out[i] = dflt;
		return 0;
	}
	if (parse_dims(v, out, GT_CDN_MAX_DIMS) != n)
		return WHY("skipped: %s=%s does not have %d spatial values", key, v, n);
	return 0;
}

static const char *fn_dir(const char *op, enum gt_cudnn_dir *dir)
{
	static const struct {
		const char *fn;
		enum gt_cudnn_dir dir;
	} legacy[] = {
		{"cudnnConvolutionForward", GT_CONV_FWD},
		{"cudnnConvolutionBackwardData", GT_CONV_BWD_DATA},
		{"cudnnConvolutionBackwardFilter", GT_CONV_BWD_FILTER},
	};
	for (size_t i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++)
		if (strcmp(op, legacy[i].fn) == 0) {
			*dir = legacy[i].dir;
			return op;
		}
	return NULL;
}

/* A graph operation name ("CONV_FORWARD", "CONVOLUTION_BACKWARD_DATA", "DGRAD", ...) -> direction. */
static int op_dir(const char *kind, enum gt_cudnn_dir *dir)
{
	int conv = strncmp(kind, "CONV", 4) == 0;
	if (strstr(kind, "DGRAD") || (conv && (strstr(kind, "BACKWARD_DATA") || strstr(kind, "BWD_DATA"))))
		*dir = GT_CONV_BWD_DATA;
	else if (strstr(kind, "WGRAD") || (conv && (strstr(kind, "BACKWARD_FILTER") || strstr(kind, "BWD_FILTER"))))
		*dir = GT_CONV_BWD_FILTER;
	else if (strstr(kind, "FPROP") || (conv && (strstr(kind, "FORWARD") || strstr(kind, "FWD"))))
		*dir = GT_CONV_FWD;
	else
		return -1;
	return 0;
}

/* The numerical notes a legacy math type permits. */
static unsigned math_allows(const char *math)
{
	unsigned tc = 1u << GT_CDN_NOTE_TENSOR_CORE;
	if (strcmp(math, "FMA_MATH") == 0)
		return 0;
	if (strcmp(math, "TENSOR_OP_MATH_ALLOW_CONVERSION") == 0)
		return tc | 1u << GT_CDN_NOTE_DOWN_CONVERT_INPUTS;
	return tc; /* DEFAULT_MATH, TENSOR_OP_MATH: tensor cores (TF32 for FP32 data) */
}

int gt_cudnn_conv_from_config(const char *cfg, struct gt_cudnn_conv *c, char *why, size_t whylen)
{
	memset(c, 0, sizeof(*c));
	c->engine = -1;
	c->allowed_notes = ~0u;
	char op[128], v[160];
	if (!gt_kv_get(cfg, NULL, "op", op, sizeof(op)))
		return WHY("skipped: the config names no cuDNN function (op=)");
	/* operations of the record: one convolution is replayed; other kinds and fused graphs say why */
	int nops = 0;
	char kinds[160] = "", first[64] = "";
	for (const char *p = cfg; (p = strstr(p, "operation=")) != NULL; p += 10) {
		if (p != cfg && p[-1] != ' ')
			continue;
		char k[64];
		size_t kl = strcspn(p + 10, " ");
		snprintf(k, sizeof(k), "%.*s", (int)(kl < 63 ? kl : 63), p + 10);
		if (nops == 0)
			snprintf(first, sizeof(first), "%s", k);
		size_t l = strlen(kinds);
		snprintf(kinds + l, sizeof(kinds) - l, "%s%s", nops ? "+" : "", k);
		nops++;
	}
	int legacy = 0;
	if (nops == 0) {
		if (!fn_dir(op, &c->dir)) {
			if (strcmp(op, "cudnnConvolutionBiasActivationForward") == 0)
				return WHY("skipped: %s (a fused convolution, bias and activation of the legacy API) is "
					   "not replayed",
					   op);
			return WHY("skipped: %s is not a convolution: libperf replays cuDNN convolutions", op);
		}
		legacy = 1;
	} else if (nops > 1) {
		return WHY("skipped: a graph of %d operations (%s): the log does not say how their tensors connect",
			   nops, kinds);
	} else if (op_dir(first, &c->dir) < 0) {
		return WHY("skipped: operation %s is not replayed: libperf replays cuDNN convolutions", first);
	}
	static const char *const xs[] = {"xDesc", "dxDesc", NULL}, *const ws[] = {"wDesc", "dwDesc", NULL},
				 *const ys[] = {"yDesc", "dyDesc", NULL};
	if (read_tensor(cfg, "x", xs, 0, &c->x, why, whylen) < 0 || read_tensor(cfg, "w", ws, 1, &c->w, why, whylen) < 0 ||
	    read_tensor(cfg, "y", ys, 0, &c->y, why, whylen) < 0)
		return -1;
	if (c->x.nd != c->w.nd || c->x.nd != c->y.nd)
		return WHY("skipped: x, w and y have %d, %d and %d dimensions", c->x.nd, c->w.nd, c->y.nd);
	c->sd = c->x.nd - 2;
	/* compute type, mode, math */
	static const char *const comp_keys[] = {"convDesc.dataType", "convDesc.computeType", NULL};
	if (!get_any(cfg, comp_keys, v, sizeof(v)))
		return WHY("skipped: the record has no convolution compute type");
	if ((c->compute = gt_cudnn_dtype(v, NULL)) < 0)
		return WHY("skipped: convolution compute type %s is not replayed", v);
	c->mode = 1;
	if (gt_kv_get(cfg, NULL, "convDesc.mode", v, sizeof(v))) {
		if (strcmp(v, "CROSS_CORRELATION") == 0)
			c->mode = 1;
		else if (strcmp(v, "CONVOLUTION") == 0)
			c->mode = 0;
		else
			return WHY("skipped: convolution mode %s is unknown", v);
	}
	if (gt_kv_get(cfg, NULL, "convDesc.reorderType", v, sizeof(v)) && strcmp(v, "0") != 0)
		return WHY("skipped: filter reordering (reorderType=%s) is not replayed", v);
	static const char *const len_keys[] = {"convDesc.arrayLength", "convDesc.nbDims", NULL};
	int64_t al;
	if (get_any(cfg, len_keys, v, sizeof(v)) && (gt_parse_i64(v, &al) < 0 || al != c->sd))
		return WHY("skipped: %s spatial convolution dimensions for %d-dimensional tensors", v, c->x.nd);
	if (read_array(cfg, "convDesc.padA", "convDesc.lowerPadA", c->pre, c->sd, 0, why, whylen) < 0 ||
	    read_array(cfg, "convDesc.padA", "convDesc.upperPadA", c->post, c->sd, 0, why, whylen) < 0 ||
	    read_array(cfg, "convDesc.strideA", NULL, c->stride, c->sd, 1, why, whylen) < 0 ||
	    read_array(cfg, "convDesc.dilationA", NULL, c->dil, c->sd, 1, why, whylen) < 0)
		return -1;
	for (int i = 0; i < c->sd; i++)
		if (c->stride[i] <= 0 || c->dil[i] <= 0 || c->pre[i] < 0 || c->post[i] < 0)
			return WHY("skipped: convolution stride, dilation or padding out of range");
	/* groups: as recorded, or what the channels say */
	if (c->w.dim[1] <= 0 || c->x.dim[1] % c->w.dim[1] != 0)
		return WHY("skipped: x has %lld channels, not a multiple of the filter's %lld", (long long)c->x.dim[1],
			   (long long)c->w.dim[1]);
	c->groups = c->x.dim[1] / c->w.dim[1];
	int64_t g;
	if (gt_kv_get(cfg, NULL, "convDesc.groupCount", v, sizeof(v)) && (gt_parse_i64(v, &g) < 0 || g != c->groups))
		return WHY("skipped: groupCount=%s but x has %lld channels and the filter %lld", v,
			   (long long)c->x.dim[1], (long long)c->w.dim[1]);
	if (c->w.dim[0] % c->groups != 0 || c->y.dim[1] != c->w.dim[0] || c->y.dim[0] != c->x.dim[0])
		return WHY("skipped: the record's shapes do not make a convolution (x %lldx%lld, w %lldx%lld, y %lldx%lld)",
			   (long long)c->x.dim[0], (long long)c->x.dim[1], (long long)c->w.dim[0],
			   (long long)c->w.dim[1], (long long)c->y.dim[0], (long long)c->y.dim[1]);
	for (int i = 0; i < c->sd; i++) {
		int64_t in = c->x.dim[2 + i], k = c->w.dim[2 + i];
		int64_t out = (in + c->pre[i] + c->post[i] - c->dil[i] * (k - 1) - 1) / c->stride[i] + 1;
		if (out != c->y.dim[2 + i])
			return WHY("skipped: spatial dimension %d: input %lld, filter %lld, padding %lld+%lld, stride "
				   "%lld, dilation %lld give %lld, the record says %lld",
				   i, (long long)in, (long long)k, (long long)c->pre[i], (long long)c->post[i],
				   (long long)c->stride[i], (long long)c->dil[i], (long long)out,
				   (long long)c->y.dim[2 + i]);
	}
	/* scalars */
	static const char *const alpha_keys[] = {"alpha", "operation.alpha", NULL},
				 *const beta_keys[] = {"beta", "operation.beta", NULL};
	c->alpha = 1.0;
	c->beta = 0.0;
	if (get_any(cfg, alpha_keys, v, sizeof(v)))
		c->alpha = strtod(v, NULL);
	if (get_any(cfg, beta_keys, v, sizeof(v)))
		c->beta = strtod(v, NULL);
	if (!isfinite(c->alpha) || !isfinite(c->beta))
		return WHY("skipped: alpha or beta is not a finite number");
	/* the engine and its knobs, or the legacy algorithm and math type */
	static const char *const eng_keys[] = {"engine_id", "engine.engine_id", NULL};
	if (get_any(cfg, eng_keys, v, sizeof(v)) && gt_parse_i64(v, &c->engine) < 0)
		return WHY("skipped: engine_id=%s is not a number", v);
	for (const char *p = cfg; (p = strstr(p, "knobDesc.")) != NULL; p += 9) {
		if (p != cfg && p[-1] != ' ' && p[-1] != '.')
			continue;
		const char *eq = strchr(p, '=');
		const char *sp = strchr(p, ' ');
		if (!eq || (sp && sp < eq))
			continue;
		char name[48];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - p - 9 < 47 ? eq - p - 9 : 47), p + 9);
		int64_t kv;
		char val[32];
		size_t vl = sp ? (size_t)(sp - eq - 1) : strlen(eq + 1);
		snprintf(val, sizeof(val), "%.*s", (int)(vl < 31 ? vl : 31), eq + 1);
		int kn = gt_cudnn_knob_num(name);
		if (kn < 0 || gt_parse_i64(val, &kv) < 0)
			return WHY("skipped: knob %s=%s of engine %lld is unknown to this gputap", name, val,
				   (long long)c->engine);
		if (c->nknobs >= GT_CDN_MAX_KNOBS)
			return WHY("skipped: engine %lld has more than %d knobs", (long long)c->engine, GT_CDN_MAX_KNOBS);
		c->knob[c->nknobs].type = kn;
		c->knob[c->nknobs].value = kv;
		c->nknobs++;
	}
	if (legacy) {
		if (gt_kv_get(cfg, NULL, "algo", v, sizeof(v)))
			snprintf(c->legacy_algo, sizeof(c->legacy_algo), "%s", v);
		char math[64] = "DEFAULT_MATH";
		gt_kv_get(cfg, NULL, "convDesc.mathType", math, sizeof(math));
		c->allowed_notes = math_allows(math);
		c->notes_known = 1;
	}
	uint64_t total = gt_cudnn_tensor_bytes(&c->x) + gt_cudnn_tensor_bytes(&c->w) + gt_cudnn_tensor_bytes(&c->y);
	if (total > (16ull << 30))
		return WHY("skipped: needs more than 16 GiB");
	return 0;
}

/* ---- the descriptor program ---- */

static struct gt_cdn_desc *add_desc(struct gt_cdn_prog *p, int type, const char *what)
{
	struct gt_cdn_desc *d = &p->d[p->n++];
	memset(d, 0, sizeof(*d));
	d->type = type;
	d->what = what;
	return d;
}

static void add_attr(struct gt_cdn_desc *d, int name, int type, int n, const int64_t *v)
{
	struct gt_cdn_attr *a = &d->a[d->nattr++];
	a->name = name;
	a->type = type;
	a->n = n;
	for (int i = 0; i < n; i++)
		a->v[i] = v[i];
}

static void add1(struct gt_cdn_desc *d, int name, int type, int64_t v)
{
	add_attr(d, name, type, 1, &v);
}

static void add_real(struct gt_cdn_desc *d, int name, int type, double v)
{
	struct gt_cdn_attr *a = &d->a[d->nattr++];
	a->name = name;
	a->type = type;
	a->n = 1;
	a->d = v;
}

static int add_tensor(struct gt_cdn_prog *p, const struct gt_cudnn_tensor *t, int64_t uid, const char *what)
{
	struct gt_cdn_desc *d = add_desc(p, GT_CDN_TENSOR_DESCRIPTOR, what);
	add1(d, GT_CDN_ATTR_TENSOR_DATA_TYPE, GT_CDN_TYPE_DATA_TYPE, t->dtype);
	add_attr(d, GT_CDN_ATTR_TENSOR_DIMENSIONS, GT_CDN_TYPE_INT64, t->nd, t->dim);
	add_attr(d, GT_CDN_ATTR_TENSOR_STRIDES, GT_CDN_TYPE_INT64, t->nd, t->stride);
	add1(d, GT_CDN_ATTR_TENSOR_UNIQUE_ID, GT_CDN_TYPE_INT64, uid);
	add1(d, GT_CDN_ATTR_TENSOR_BYTE_ALIGNMENT, GT_CDN_TYPE_INT64, GT_CDN_ALIGNMENT);
	return p->n - 1;
}

int gt_cudnn_prog_build(const struct gt_cudnn_conv *c, struct gt_cdn_prog *p, char *why, size_t whylen)
{
	memset(p, 0, sizeof(*p));
	p->engine_cfg = -1;
	if (c->sd < 1 || c->sd > GT_CDN_MAX_VALS || c->nknobs > GT_CDN_MAX_KNOBS)
		return WHY("skipped: convolution does not fit the descriptor program");
	static const char *const what[3][3] = {{"x tensor", "w tensor", "y tensor"},
					       {"dx tensor", "w tensor", "dy tensor"},
					       {"x tensor", "dw tensor", "dy tensor"}};
	const struct gt_cudnn_tensor *t[3] = {&c->x, &c->w, &c->y};
	int ti[3];
	for (int i = 0; i < 3; i++) {
		p->uid[i] = i + 1;
		p->bytes[i] = gt_cudnn_tensor_bytes(t[i]);
		ti[i] = add_tensor(p, t[i], p->uid[i], what[c->dir][i]);
	}
	struct gt_cdn_desc *cv = add_desc(p, GT_CDN_CONVOLUTION_DESCRIPTOR, "convolution");
	int ci = p->n - 1;
	add1(cv, GT_CDN_ATTR_CONVOLUTION_COMP_TYPE, GT_CDN_TYPE_DATA_TYPE, c->compute);
	add1(cv, GT_CDN_ATTR_CONVOLUTION_CONV_MODE, GT_CDN_TYPE_CONVOLUTION_MODE, c->mode);
	add1(cv, GT_CDN_ATTR_CONVOLUTION_SPATIAL_DIMS, GT_CDN_TYPE_INT64, c->sd);
	add_attr(cv, GT_CDN_ATTR_CONVOLUTION_DILATIONS, GT_CDN_TYPE_INT64, c->sd, c->dil);
	add_attr(cv, GT_CDN_ATTR_CONVOLUTION_FILTER_STRIDES, GT_CDN_TYPE_INT64, c->sd, c->stride);
	add_attr(cv, GT_CDN_ATTR_CONVOLUTION_PRE_PADDINGS, GT_CDN_TYPE_INT64, c->sd, c->pre);
	add_attr(cv, GT_CDN_ATTR_CONVOLUTION_POST_PADDINGS, GT_CDN_TYPE_INT64, c->sd, c->post);
	/* per direction: descriptor type, then the attribute names of x, w, y, conv, alpha, beta */
	static const int ops[3][7] = {
		{GT_CDN_OP_CONV_FWD_DESCRIPTOR, GT_CDN_ATTR_CONV_FWD_X, GT_CDN_ATTR_CONV_FWD_W, GT_CDN_ATTR_CONV_FWD_Y,
		 GT_CDN_ATTR_CONV_FWD_CONV_DESC, GT_CDN_ATTR_CONV_FWD_ALPHA, GT_CDN_ATTR_CONV_FWD_BETA},
		{GT_CDN_OP_CONV_BWD_DATA_DESCRIPTOR, GT_CDN_ATTR_CONV_BWD_DATA_DX, GT_CDN_ATTR_CONV_BWD_DATA_W,
		 GT_CDN_ATTR_CONV_BWD_DATA_DY, GT_CDN_ATTR_CONV_BWD_DATA_CONV_DESC, GT_CDN_ATTR_CONV_BWD_DATA_ALPHA,
		 GT_CDN_ATTR_CONV_BWD_DATA_BETA},
		{GT_CDN_OP_CONV_BWD_FILTER_DESCRIPTOR, GT_CDN_ATTR_CONV_BWD_FILTER_X, GT_CDN_ATTR_CONV_BWD_FILTER_DW,
		 GT_CDN_ATTR_CONV_BWD_FILTER_DY, GT_CDN_ATTR_CONV_BWD_FILTER_CONV_DESC,
		 GT_CDN_ATTR_CONV_BWD_FILTER_ALPHA, GT_CDN_ATTR_CONV_BWD_FILTER_BETA},
	};
	static const char *const op_what[3] = {"convolution forward operation", "convolution backward data operation",
					       "convolution backward filter operation"};
	const int *o = ops[c->dir];
	struct gt_cdn_desc *od = add_desc(p, o[0], op_what[c->dir]);
	int oi = p->n - 1;
	for (int i = 0; i < 3; i++)
		add1(od, o[1 + i], GT_CDN_TYPE_BACKEND_DESCRIPTOR, ti[i]);
	add1(od, o[4], GT_CDN_TYPE_BACKEND_DESCRIPTOR, ci);
	/* alpha and beta are doubles for double data, floats otherwise */
	int st = c->compute == GT_CDN_DATA_DOUBLE ? GT_CDN_TYPE_DOUBLE : GT_CDN_TYPE_FLOAT;
	add_real(od, o[5], st, c->alpha);
	add_real(od, o[6], st, c->beta);
	struct gt_cdn_desc *gd = add_desc(p, GT_CDN_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
	p->graph = p->n - 1;
	add1(gd, GT_CDN_ATTR_OPERATIONGRAPH_HANDLE, GT_CDN_TYPE_HANDLE, 0);
	add1(gd, GT_CDN_ATTR_OPERATIONGRAPH_OPS, GT_CDN_TYPE_BACKEND_DESCRIPTOR, oi);
	if (c->engine < 0)
		return 0;
	struct gt_cdn_desc *ed = add_desc(p, GT_CDN_ENGINE_DESCRIPTOR, "recorded engine");
	int ei = p->n - 1;
	add1(ed, GT_CDN_ATTR_ENGINE_OPERATION_GRAPH, GT_CDN_TYPE_BACKEND_DESCRIPTOR, p->graph);
	add1(ed, GT_CDN_ATTR_ENGINE_GLOBAL_INDEX, GT_CDN_TYPE_INT64, c->engine);
	int64_t kis[GT_CDN_MAX_KNOBS];
	for (int i = 0; i < c->nknobs; i++) {
		struct gt_cdn_desc *kd = add_desc(p, GT_CDN_KNOB_CHOICE_DESCRIPTOR, "recorded knob");
		kis[i] = p->n - 1;
		add1(kd, GT_CDN_ATTR_KNOB_CHOICE_KNOB_TYPE, GT_CDN_TYPE_KNOB_TYPE, c->knob[i].type);
		add1(kd, GT_CDN_ATTR_KNOB_CHOICE_KNOB_VALUE, GT_CDN_TYPE_INT64, c->knob[i].value);
	}
	struct gt_cdn_desc *cd = add_desc(p, GT_CDN_ENGINECFG_DESCRIPTOR, "recorded engine configuration");
	p->engine_cfg = p->n - 1;
	add1(cd, GT_CDN_ATTR_ENGINECFG_ENGINE, GT_CDN_TYPE_BACKEND_DESCRIPTOR, ei);
	if (c->nknobs)
		add_attr(cd, GT_CDN_ATTR_ENGINECFG_KNOB_CHOICES, GT_CDN_TYPE_BACKEND_DESCRIPTOR, c->nknobs, kis);
	return 0;
}
