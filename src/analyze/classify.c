/*
 * analyze/classify.c — the name table, the kernel-name -> class map, NCCL collectives and the
 * GPU Performance Analyzer's spelling of memory operations.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "analyze/an_internal.h"
#include "core/csvio.h"
#include "core/jsondepth.h"

/* ---------------- name table ---------------- */

void gt_names_init(struct gt_names *t) { memset(t, 0, sizeof(*t)); }

void gt_names_free(struct gt_names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* 8 bytes at a time: kernel names are long (C++ signatures), and this runs once per event */
uint64_t gt_an_hash_name(int kind, const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)kind << 56) ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	uint64_t w = 0;
	memcpy(&w, s + i, len - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

static int names_grow(struct gt_names *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 256;
	uint32_t *slots = calloc(ns, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		const struct gt_name *e = &t->v[i];
		size_t h = gt_an_hash_name(e->kind, e->name, strlen(e->name)) & (ns - 1);
		while (slots[h])
			h = (h + 1) & (ns - 1);
		slots[h] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	return 0;
}

long gt_names_get(struct gt_names *t, int kind, const char *name, size_t len)
{
	/* a name is text up to its first NUL: readers may hand a length that runs past one (an nsys
	 * BLOB, a JSON "\u0000", a trace string), and the stored copy ends there */
	len = strnlen(name, len);
	if ((t->n + 1) * 2 > t->nslots && names_grow(t) < 0)
		return -1;
	size_t h = gt_an_hash_name(kind, name, len) & (t->nslots - 1);
	while (t->slots[h]) {
		struct gt_name *e = &t->v[t->slots[h] - 1];
		if (e->kind == kind && strncmp(e->name, name, len) == 0 && e->name[len] == '\0')
			return (long)(t->slots[h] - 1);
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 64;
		struct gt_name *v = realloc(t->v, nc * sizeof(*v));
		if (!v)
			return -1;
		t->v = v;
		t->cap = nc;
	}
	char *copy = strndup(name, len);
	if (!copy)
		return -1;
	struct gt_name *e = &t->v[t->n];
	memset(e, 0, sizeof(*e));
	e->name = copy;
	e->kind = (uint8_t)kind;
	e->cat = kind == GT_NK_MEMOP ? GT_CAT_MEMOP : gt_an_is_nccl(copy) ? GT_CAT_COMM : GT_CAT_COMPUTE;
	t->slots[h] = (uint32_t)(t->n + 1);
	return (long)t->n++;
}

/* ---------------- NCCL and memory operations ---------------- */

static const char *strcasestr_n(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return hay;
	return NULL;
}

int gt_an_is_nccl(const char *name) { return strcasestr_n(name, "nccl") != NULL; }

static size_t token_len(const char *s)
{
	size_t n = 0;
	while (s[n] && s[n] != '_' && s[n] != '(' && s[n] != '<' && s[n] != ' ' && s[n] != ',')
		n++;
	return n;
}

void gt_an_nccl_collective(const char *name, char *buf, size_t len)
{
	/* ncclDevKernel_AllGather_RING_LL(...), ncclKernel_AllReduce_RING_LL_Sum_float(...),
	 * ncclDevKernel_Generic_4, void ncclKernel_SendRecv<...>: the token after "Kernel_".
	 * Otherwise the GPU Performance Analyzer's rule (second '_'-separated token), else "nccl". */
	const char *p = strcasestr_n(name, "nccl");
	const char *k = p ? strcasestr_n(p, "kernel_") : NULL;
	const char *tok = NULL;
	if (k)
		tok = k + 7;
	else if (p && strchr(p, '_'))
		tok = strchr(p, '_') + 1;
	size_t n = tok ? token_len(tok) : 0;
	if (n == 0) {
		snprintf(buf, len, "nccl");
		return;
	}
	snprintf(buf, len, "%.*s", (int)n, tok);
}

static const struct {
	const char *from, *to;
} dirs[] = {
    {"Host-to-Device", "H2D"}, {"Device-to-Host", "D2H"}, {"Device-to-Device", "D2D"},
    {"Host-to-Host", "H2H"},   {"Peer-to-Peer", "P2P"},   {"Host-to-Array", "H2A"},
    {"Array-to-Host", "A2H"},  {"Array-to-Array", "A2A"}, {"Array-to-Device", "A2D"},
    {"Device-to-Array", "D2A"}, {"HtoD", "H2D"},           {"DtoH", "D2H"},
    {"DtoD", "D2D"},           {"HtoH", "H2H"},           {"PtoP", "P2P"},
    {"HtoA", "H2A"},           {"AtoH", "A2H"},           {"AtoA", "A2A"},
    {"AtoD", "A2D"},           {"DtoA", "D2A"},
};

static const char *norm_dir(const char *s, size_t *consumed)
{
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i].from);
		if (strncmp(s, dirs[i].from, n) == 0) {
			*consumed = n;
			return dirs[i].to;
		}
	}
	return NULL;
}

void gt_an_memop_name(const char *name, char *buf, size_t len)
{
	/* Kineto: "Memcpy HtoD (Pageable -> Device)", "Memset (Device)" */
	if (strncmp(name, "Memset", 6) == 0) {
		snprintf(buf, len, "[CUDA memset]");
		return;
	}
	if (strncmp(name, "Memcpy ", 7) == 0) {
		size_t c = 0;
		const char *d = norm_dir(name + 7, &c);
		if (d)
			snprintf(buf, len, "[CUDA memcpy %s]", d);
		else
			snprintf(buf, len, "[CUDA memcpy %.*s]", (int)token_len(name + 7), name + 7);
		return;
	}
	/* nsys: rewrite the direction, keep the rest ("[CUDA Unified Memory memcpy HtoD]"). */
	size_t o = 0;
	for (const char *s = name; *s && o + 1 < len;) {
		size_t c = 0;
		const char *d = (s == name || s[-1] == ' ') ? norm_dir(s, &c) : NULL;
		if (d && (s[c] == ']' || s[c] == ' ' || s[c] == '\0')) {
			for (const char *q = d; *q && o + 1 < len; q++)
				buf[o++] = *q;
			s += c;
		} else {
			buf[o++] = *s++;
		}
	}
	buf[o] = '\0';
}

const char *gt_an_copykind_name(unsigned kind)
{
	static const char *const n[] = {"[CUDA memcpy Unknown]", "[CUDA memcpy H2D]", "[CUDA memcpy D2H]",
					"[CUDA memcpy H2A]",     "[CUDA memcpy A2H]", "[CUDA memcpy A2A]",
					"[CUDA memcpy A2D]",     "[CUDA memcpy D2A]", "[CUDA memcpy D2D]",
					"[CUDA memcpy H2H]",     "[CUDA memcpy P2P]"};
	return kind < sizeof(n) / sizeof(n[0]) ? n[kind] : n[0];
}

/* ---------------- the map ---------------- */

struct gt_an_map {
	char **keys;      /* lower-cased */
	size_t *key_class; /* index into classes */
	size_t nkeys;
	char **classes; /* classes[0] = "others" */
	size_t nclasses;
};

void gt_an_map_free(struct gt_an_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nkeys; i++)
		free(m->keys[i]);
	for (size_t i = 0; i < m->nclasses; i++)
		free(m->classes[i]);
	free(m->keys);
	free(m->key_class);
	free(m->classes);
	free(m);
}

static char *lower_dup(const char *s)
{
	char *d = strdup(s);
	if (d)
		for (char *p = d; *p; p++)
			*p = (char)tolower((unsigned char)*p);
	return d;
}

/* The default map (docs/analyze.md, "Kernel classes"): case-insensitive substrings, the first
 * match winning.  analyze and report both use it when no map is given. */
static const char *const default_keys[] = {"flash", "fmha", "attention", "sdpa", "conv", "winograd",
					   "implicit_convolve", "gemm", "nvjet", "cutlass", "xmma", "matmul",
					   "splitk", "softmax", "norm", "reduce", "elementwise", "vectorized",
					   "copy", "fill"};
static const char *const default_classes[] = {
	"attention", "attention", "attention", "attention", "convolution", "convolution", "convolution",
	"gemm",      "gemm",      "gemm",      "gemm",      "gemm",        "gemm",        "softmax",
	"normalization", "reduction", "elementwise", "elementwise", "copy/fill", "copy/fill"};

int gt_an_map_default(struct gt_an_map **out, char *err, size_t errlen)
{
	return gt_an_map_new(out, default_keys, default_classes, sizeof(default_keys) / sizeof(default_keys[0]),
			     "the default map", err, errlen);
}

int gt_an_map_new(struct gt_an_map **out, const char *const *keys, const char *const *classes, size_t n,
		  const char *origin, char *err, size_t errlen)
{
	struct gt_an_map *m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->keys = calloc(n + 1, sizeof(char *));
	m->key_class = calloc(n + 1, sizeof(size_t));
	m->classes = calloc(n + 2, sizeof(char *));
	if (!m->keys || !m->key_class || !m->classes)
		goto nomem;
	m->classes[m->nclasses++] = strdup("others");
	if (!m->classes[0])
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		if (keys[i][0] == '\0') {
			snprintf(err, errlen, "%s: kernel_to_class_map: an empty key would match every kernel", origin);
			gt_an_map_free(m);
			return -1;
		}
		char *k = lower_dup(keys[i]), *c = lower_dup(classes[i]);
		if (!k || !c) {
			free(k);
			free(c);
			goto nomem;
		}
		size_t ci = 0;
		while (ci < m->nclasses && strcmp(m->classes[ci], c) != 0)
			ci++;
		if (ci == m->nclasses)
			m->classes[m->nclasses++] = c;
		else
			free(c);
		m->keys[m->nkeys] = k;
		m->key_class[m->nkeys++] = ci;
	}
	/* A key inside another key of a different class: every kernel that matches the longer key also
	 * matches the shorter one, so the result would depend on map order. */
	for (size_t i = 0; i < m->nkeys; i++)
		for (size_t j = 0; j < m->nkeys; j++) {
			if (i == j || m->key_class[i] == m->key_class[j] || !strstr(m->keys[j], m->keys[i]))
				continue;
			snprintf(err, errlen,
				 "%s: kernel_to_class_map: keys \"%s\" (class %s) and \"%s\" (class %s) overlap: "
				 "every kernel matching \"%s\" also matches \"%s\"",
				 origin, keys[i], m->classes[m->key_class[i]], keys[j], m->classes[m->key_class[j]],
				 keys[j], keys[i]);
			gt_an_map_free(m);
			return -1;
		}
	*out = m;
	return 0;
nomem:
	gt_an_map_free(m);
	snprintf(err, errlen, "%s: out of memory", origin);
	return -1;
}

size_t gt_an_map_nclasses(const struct gt_an_map *m) { return m ? m->nclasses : 1; }
const char *gt_an_map_class(const struct gt_an_map *m, size_t i) { return m ? m->classes[i] : "others"; }

size_t gt_an_map_classify(const struct gt_an_map *m, const char *name, const char **k1, const char **k2)
{
	if (k1)
		*k1 = *k2 = NULL;
	if (!m || m->nkeys == 0)
		return 0;
	char small[512];
	size_t len = strlen(name);
	char *low = len < sizeof(small) ? small : malloc(len + 1);
	if (!low)
		return 0;
	for (size_t i = 0; i <= len; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	size_t cls = 0, first = 0;
	int found = 0;
	for (size_t i = 0; i < m->nkeys; i++) {
		if (!strstr(low, m->keys[i]))
			continue;
		if (!found) {
			found = 1;
			first = i;
			cls = m->key_class[i];
		} else if (m->key_class[i] != cls && k1 && !*k1) {
			*k1 = m->keys[first];
			*k2 = m->keys[i];
		}
	}
	if (low != small)
		free(low);
	return cls;
}

/* ---------------- JSON with comments ---------------- */

char *gt_an_strip_json(const char *text, size_t len)
{
	char *o = malloc(len + 1);
	if (!o)
		return NULL;
	size_t n = 0;
	long last_comma = -1; /* output index of a comma not yet followed by a value */
	for (size_t i = 0; i < len;) {
		char ch = text[i];
		if (ch == '"') {
			last_comma = -1;
			o[n++] = text[i++];
			while (i < len && text[i] != '"') {
				if (text[i] == '\\' && i + 1 < len)
					o[n++] = text[i++];
				o[n++] = text[i++];
			}
			if (i < len)
				o[n++] = text[i++];
			continue;
		}
		if (ch == '/' && i + 1 < len && text[i + 1] == '/') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		if (ch == '/' && i + 1 < len && text[i + 1] == '*') {
			i += 2;
			while (i + 1 < len && !(text[i] == '*' && text[i + 1] == '/')) {
				if (text[i] == '\n')
					o[n++] = '\n'; /* keep line numbers */
				i++;
			}
			i = i + 2 <= len ? i + 2 : len;
			continue;
		}
		if ((ch == '}' || ch == ']') && last_comma >= 0)
			o[last_comma] = ' ';
		if (ch == ',')
			last_comma = (long)n;
		else if (!isspace((unsigned char)ch))
			last_comma = -1;
		o[n++] = text[i++];
	}
	o[n] = '\0';
	return o;
}

/* yajl_tree gives no position; a callback-less pass finds the line of a syntax error. */
static long json_error_line(const char *text, size_t len)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	if (!h)
		return 0;
	long line = 0;
	if (yajl_parse(h, (const unsigned char *)text, len) != yajl_status_ok ||
	    yajl_complete_parse(h) != yajl_status_ok) {
		size_t at = yajl_get_bytes_consumed(h);
		line = 1;
		for (size_t i = 0; i < at && i < len; i++)
			line += text[i] == '\n';
	}
	yajl_free(h);
	return line;
}

yajl_val gt_an_load_json(const char *path, char *err, size_t errlen);
yajl_val gt_an_load_json(const char *path, char *err, size_t errlen)
{
	size_t len = 0;
	char *buf = gt_read_file(path, &len);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	char *clean = gt_an_strip_json(buf, len);
	free(buf);
	if (!clean) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	long deep = gt_json_too_deep(clean, strlen(clean), GT_JSON_MAX_DEPTH);
	if (deep) {
		snprintf(err, errlen, "%s:%ld: JSON nested deeper than %d levels: refused", path, deep, GT_JSON_MAX_DEPTH);
		free(clean);
		return NULL;
	}
	char yerr[256] = "";
	yajl_val v = yajl_tree_parse(clean, yerr, sizeof(yerr));
	if (!v) {
		long line = json_error_line(clean, strlen(clean));
		for (char *p = yerr; *p; p++)
			if (*p == '\n')
				*p = ' ';
		snprintf(err, errlen, "%s:%ld: invalid JSON: %s", path, line, yerr[0] ? yerr : "syntax error");
	}
	free(clean);
	return v;
}

int gt_an_map_from_json(struct gt_an_map **out, yajl_val obj, const char *origin, char *err, size_t errlen);
int gt_an_map_from_json(struct gt_an_map **out, yajl_val obj, const char *origin, char *err, size_t errlen)
{
	if (!YAJL_IS_OBJECT(obj)) {
		snprintf(err, errlen, "%s: kernel_to_class_map must be an object of \"key\": \"class\"", origin);
		return -1;
	}
	size_t n = obj->u.object.len;
	const char **keys = calloc(n + 1, sizeof(char *)), **cls = calloc(n + 1, sizeof(char *));
	if (!keys || !cls) {
		free(keys);
		free(cls);
		snprintf(err, errlen, "%s: out of memory", origin);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		yajl_val v = obj->u.object.values[i];
		if (!YAJL_IS_STRING(v)) {
			snprintf(err, errlen, "%s: kernel_to_class_map: the class of \"%s\" must be a string", origin,
				 obj->u.object.keys[i]);
			free(keys);
			free(cls);
			return -1;
		}
		keys[i] = obj->u.object.keys[i];
		cls[i] = YAJL_GET_STRING(v);
	}
	int rc = gt_an_map_new(out, keys, cls, n, origin, err, errlen);
	free(keys);
	free(cls);
	return rc;
}

int gt_an_map_load(struct gt_an_map **out, const char *path, char *err, size_t errlen)
{
	yajl_val root = gt_an_load_json(path, err, errlen);
	if (!root)
		return -1;
	const char *sub[] = {"kernel_to_class_map", NULL};
	yajl_val m = YAJL_IS_OBJECT(root) ? yajl_tree_get(root, sub, yajl_t_object) : NULL;
	int rc = gt_an_map_from_json(out, m ? m : root, path, err, errlen);
	yajl_tree_free(root);
	return rc;
}
