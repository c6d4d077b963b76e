#include "export/model.h"

#include "core/demangle.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/sort.h"

#include "export/holdstat.h"


static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

const char *gt_strpool_intern(struct gt_strpool *p, const char *s, size_t len)
{
	if ((p->n + 1) * 2 > p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 256;
		char **ni = calloc(nc, sizeof(*ni));
		if (!ni)
			return NULL;
		for (size_t i = 0; i < p->cap; i++) {
			if (!p->items[i])
				continue;
			size_t j = hash_bytes(p->items[i], strlen(p->items[i])) & (nc - 1);
			while (ni[j])
				j = (j + 1) & (nc - 1);
			ni[j] = p->items[i];
		}
		free(p->items);
		p->items = ni;
		p->cap = nc;
	}
	size_t mask = p->cap - 1;
	size_t i = hash_bytes(s, len) & mask;
	for (; p->items[i]; i = (i + 1) & mask)
		if (strncmp(p->items[i], s, len) == 0 && p->items[i][len] == '\0')
			return p->items[i];
	char *c = malloc(len + 1);
	if (!c)
		return NULL;
	memcpy(c, s, len);
	c[len] = '\0';
	p->items[i] = c;
	p->n++;
	return c;
}

void gt_strpool_free(struct gt_strpool *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->items[i]);
	free(p->items);
	memset(p, 0, sizeof(*p));
}

/* ---- statistics ---- */

struct gt_stat *gt_stat_add(struct gt_stattab *t, const char *name, const char *style, uint64_t v)
{
	/* pool strings are malloc'd, so at least 8-aligned: the low bits can carry the style */
	uint64_t key = (uint64_t)(uintptr_t)name | (style ? (style[0] == 'S' ? 2u : 1u) : 0u);
	int is_new = 0;
	uint64_t *slot = gt_map_put(&t->index, key, &is_new);
	if (!slot)
		return NULL;
	struct gt_stat *s;
	if (is_new) {
		if (t->n == t->cap) {
			size_t nc = t->cap ? t->cap * 2 : 64;
			struct gt_stat *ns = realloc(t->s, nc * sizeof(*ns));
			if (!ns)
				return NULL;
			t->s = ns;
			t->cap = nc;
		}
		s = &t->s[t->n];
		memset(s, 0, sizeof(*s));
		s->name = name;
		s->style = style;
		s->min = UINT64_MAX;
		s->order = (uint32_t)t->n;
		gt_vec_init(&s->vals, sizeof(uint64_t));
		*slot = ++t->n;
	} else {
		s = &t->s[*slot - 1];
	}
	if (t->keep_vals) {
		uint64_t *p = gt_vec_push(&s->vals);
		if (!p)
			return NULL;
		*p = v;
	}
	s->count++;
	s->total += v;
	if (v < s->min)
		s->min = v;
	if (v > s->max)
		s->max = v;
	return s;
}

void gt_stat_finish(struct gt_stat *s)
{
	if (s->count == 0) {
		s->min = 0;
		return;
	}
	s->avg = (double)s->total / (double)s->count;
	size_t n = s->vals.n;
	if (n == 0) { /* sums only */
		s->med = s->avg;
		return;
	}
	uint64_t *v = s->vals.v;
	gt_sort(v, n, sizeof(*v), gt_cmp_u64);
	if (n % 2)
		s->med = (double)v[n / 2];
	else
		s->med = ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
	if (n < 2) {
		s->stddev = 0;
		return;
	}
	long double mean = (long double)s->total / (long double)n, acc = 0;
	for (size_t i = 0; i < n; i++) {
		long double d = (long double)v[i] - mean;
		acc += d * d;
	}
	s->stddev = (double)sqrtl(acc / (long double)(n - 1));
}

static int cmp_stat(const void *a, const void *b)
{
	const struct gt_stat *x = *(const struct gt_stat *const *)a, *y = *(const struct gt_stat *const *)b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return strcmp(x->style ? x->style : "", y->style ? y->style : "");
}

struct gt_stat **gt_stat_sorted(const struct gt_stattab *t)
{
	struct gt_stat **v = malloc((t->n ? t->n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		v[i] = &t->s[i];
	gt_sort(v, t->n, sizeof(*v), cmp_stat);
	return v;
}

void gt_stattab_free(struct gt_stattab *t)
{
	for (size_t i = 0; i < t->n; i++)
		gt_vec_free(&t->s[i].vals);
	free(t->s);
	gt_map_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* ---- names ---- */

static const char *const copy_dirs[GT_COPY_KIND_MAX] = {
	[GT_COPY_UNKNOWN] = "Unknown",	       [GT_COPY_HTOD] = "Host-to-Device",
	[GT_COPY_DTOH] = "Device-to-Host",     [GT_COPY_HTOA] = "Host-to-Array",
	[GT_COPY_ATOH] = "Array-to-Host",      [GT_COPY_ATOA] = "Array-to-Array",
	[GT_COPY_ATOD] = "Array-to-Device",    [GT_COPY_DTOA] = "Device-to-Array",
	[GT_COPY_DTOD] = "Device-to-Device",   [GT_COPY_HTOH] = "Host-to-Host",
	[GT_COPY_PTOP] = "Peer-to-Peer",
};
static const char *const copy_ops[GT_COPY_KIND_MAX] = {
	[GT_COPY_UNKNOWN] = "[CUDA memcpy Unknown]",
	[GT_COPY_HTOD] = "[CUDA memcpy Host-to-Device]",
	[GT_COPY_DTOH] = "[CUDA memcpy Device-to-Host]",
	[GT_COPY_HTOA] = "[CUDA memcpy Host-to-Array]",
	[GT_COPY_ATOH] = "[CUDA memcpy Array-to-Host]",
	[GT_COPY_ATOA] = "[CUDA memcpy Array-to-Array]",
	[GT_COPY_ATOD] = "[CUDA memcpy Array-to-Device]",
	[GT_COPY_DTOA] = "[CUDA memcpy Device-to-Array]",
	[GT_COPY_DTOD] = "[CUDA memcpy Device-to-Device]",
	[GT_COPY_HTOH] = "[CUDA memcpy Host-to-Host]",
	[GT_COPY_PTOP] = "[CUDA memcpy Peer-to-Peer]",
};

const char *gt_copy_op_name(unsigned kind)
{
	return copy_ops[kind < GT_COPY_KIND_MAX ? kind : 0];
}

const char *gt_copy_dir_name(unsigned kind)
{
	return copy_dirs[kind < GT_COPY_KIND_MAX ? kind : 0];
}

/* Host (pinned) memory is not device memory: cuMemAllocHost, cudaMallocHost,
 * cudaHostAlloc, cuMemFreeHost, cudaFreeHost are left out. */
int gt_api_is_alloc(const char *name)
{
	if (strstr(name, "Host"))
		return 0;
	if (strncmp(name, "cuMemAlloc", 10) == 0 || strncmp(name, "cudaMalloc", 10) == 0)
		return strstr(name, "Array") == NULL;
	return 0;
}

int gt_api_is_free(const char *name)
{
	if (strstr(name, "Host"))
		return 0;
	return strncmp(name, "cuMemFree", 9) == 0 || strcmp(name, "cudaFree") == 0 ||
	       strncmp(name, "cudaFree_", 9) == 0 || strncmp(name, "cudaFreeAsync", 13) == 0;
}

char *gt_utf8_clean(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(n * 3 + 1), *p = o;
	if (!o)
		return NULL;
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = u[i];
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		int ok = len > 0 && i + len <= n;
		for (size_t k = 1; ok && k < len; k++)
			ok = (u[i + k] & 0xC0) == 0x80;
		if (ok && len > 1) { /* reject overlong forms, surrogates, > U+10FFFF */
			unsigned cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
			for (size_t k = 1; k < len; k++)
				cp = (cp << 6) | (u[i + k] & 0x3F);
			ok = !((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
			       (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF);
		}
		if (ok) {
			memcpy(p, u + i, len);
			p += len;
			i += len;
		} else {
			memcpy(p, "\xEF\xBF\xBD", 3); /* U+FFFD */
			p += 3;
			i++;
		}
	}
	*p = '\0';
	return o;
}

/* ---- the pass ---- */

static const char style_pushpop[] = "PushPop";
static const char style_startend[] = "StartEnd";

int gt_model_open(struct gt_model *m, const char *trace_path, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", trace_path);
	if (gt_tr_open(&m->r, trace_path) < 0) {
		snprintf(err, errlen, "%s", m->r.err);
		return -1;
	}
	snprintf(m->path, sizeof(m->path), "%s", m->r.path);
	m->hdr = m->r.hdr;
	m->partial = m->r.partial;
	m->kern.keep_vals = m->memtime.keep_vals = m->memsize.keep_vals = 1;
	m->api.keep_vals = m->nvtx.keep_vals = 1;
	m->keep_links = 1;
	gt_vec_init(&m->apis, sizeof(struct gt_m_api));
	gt_vec_init(&m->gpuops, sizeof(struct gt_m_gpuops));
	gt_vec_init(&m->ranges, sizeof(struct gt_m_range));
	gt_vec_init(&m->marks, sizeof(struct gt_m_range));
	gt_vec_init(&m->windows, sizeof(struct gt_m_range));
	gt_vec_init(&m->mem_rec, sizeof(struct gt_m_memev));
	gt_vec_init(&m->mem_api, sizeof(struct gt_m_memev));
	gt_vec_init(&m->streams, sizeof(struct gt_m_stream));
	gt_vec_init(&m->tids, sizeof(uint32_t));
	return 0;
}

static void see_ts(struct gt_model *m, uint64_t t)
{
	if (!t)
		return;
	if (!m->first_ts || t < m->first_ts)
		m->first_ts = t;
	if (t > m->last_ts)
		m->last_ts = t;
}

static int see_tid(struct gt_model *m, uint32_t tid)
{
	int is_new = 0;
	uint64_t *s = gt_map_put(&m->tid_seen, (uint64_t)tid + 1, &is_new);
	if (!s)
		return -1;
	if (is_new) {
		uint32_t *t = gt_vec_push(&m->tids);
		if (!t)
			return -1;
		*t = tid;
	}
	return 0;
}

static int see_stream(struct gt_model *m, uint32_t dev, uint32_t stream)
{
	int is_new = 0;
	uint64_t *s = gt_map_put(&m->stream_seen, (((uint64_t)dev << 32) | stream) + 1, &is_new);
	if (!s)
		return -1;
	if (is_new) {
		struct gt_m_stream *e = gt_vec_push(&m->streams);
		if (!e)
			return -1;
		e->device = dev;
		e->stream = stream;
	}
	return 0;
}

static const char *str_of(struct gt_model *m, uint32_t id)
{
	const char *s = gt_tr_str(&m->r, id);
	return gt_strpool_intern(&m->pool, s, strlen(s));
}

const char *gt_model_kernel_name(struct gt_model *m, uint32_t id)
{
	uint64_t *v = gt_map_get(&m->kname, (uint64_t)id + 1);
	if (v)
		return (const char *)(uintptr_t)*v;
	const char *s = gt_tr_str(&m->r, id);
	char *d = gt_demangle(s);
	const char *p = d ? gt_strpool_intern(&m->pool, d, strlen(d)) : gt_strpool_intern(&m->pool, s, strlen(s));
	free(d);
	if (!p || !(v = gt_map_put(&m->kname, (uint64_t)id + 1, NULL)))
		return NULL;
	*v = (uint64_t)(uintptr_t)p;
	return p;
}

static uint64_t dur(uint64_t s, uint64_t e)
{
	return e > s ? e - s : 0;
}

static int gpu_op(struct gt_model *m, uint64_t corr, uint64_t start, uint64_t end, uint32_t dev, uint32_t stream)
{
	see_ts(m, start);
	see_ts(m, end);
	if (see_stream(m, dev, stream) < 0)
		return -1;
	if (!corr || !m->keep_links)
		return 0;
	int is_new = 0;
	uint64_t *slot = gt_map_put(&m->corr, corr, &is_new);
	if (!slot)
		return -1;
	struct gt_m_gpuops *g;
	if (is_new) {
		g = gt_vec_push(&m->gpuops);
		if (!g)
			return -1;
		*slot = m->gpuops.n;
		g->start = g->first_start = start;
		g->end = end;
		g->device = dev;
		g->stream = stream;
	} else {
		g = &GT_VEC_AT(&m->gpuops, struct gt_m_gpuops, *slot - 1);
		if (start < g->first_start) {
			g->first_start = g->start = start;
			g->device = dev;
			g->stream = stream;
		}
		if (end > g->end)
			g->end = end;
	}
	g->nops++;
	return 0;
}

/* Bytes of an allocation or free as a signed change: a size no GPU holds (a damaged record) is
 * capped at 2^53, so that its negation and the running sums stay defined. */
#define MEM_CAP ((int64_t)1 << 53)
static int64_t mem_delta(uint64_t bytes, int freed)
{
	int64_t v = bytes > (uint64_t)MEM_CAP ? MEM_CAP : (int64_t)bytes;
	return freed ? -v : v;
}

static int mem_event(struct gt_vec *v, uint64_t ts, int64_t delta, uint32_t dev)
{
	struct gt_m_memev *e = gt_vec_push(v);
	if (!e)
		return -1;
	e->ts = ts;
	e->seq = v->n;
	e->delta = delta;
	e->device = dev;
	return 0;
}

static int on_api(struct gt_model *m, const struct gt_rec_api *a)
{
	const char *name = str_of(m, a->name_id);
	if (!name)
		return -1;
	uint64_t d = dur(a->start_ns, a->end_ns);
	see_ts(m, a->start_ns);
	see_ts(m, a->end_ns);
	if (see_tid(m, a->h.tid) < 0)
		return -1;
	if (!gt_stat_add(&m->apiall, name, NULL, d))
		return -1;
	if (a->domain != GT_DOM_TAP && !gt_stat_add(&m->api, name, NULL, d))
		return -1;
	if (a->corr_id && m->keep_links) {
		struct gt_m_api *c = gt_vec_push(&m->apis);
		if (!c)
			return -1;
		c->start = a->start_ns;
		c->end = a->end_ns;
		c->corr = a->corr_id;
		c->tid = a->h.tid;
	}
	if ((a->flags & GT_API_FAILED) || !a->ptr)
		return 0;
	if (gt_api_is_alloc(name) && a->bytes) {
		uint64_t *b = gt_map_put(&m->ptr_api, a->ptr, NULL);
		if (!b)
			return -1;
		*b = a->bytes;
		return mem_event(&m->mem_api, a->end_ns, mem_delta(a->bytes, 0), UINT32_MAX);
	}
	if (gt_api_is_free(name)) {
		uint64_t *b = gt_map_get(&m->ptr_api, a->ptr);
		uint64_t bytes = b ? *b : a->bytes;
		if (b)
			*b = 0;
		if (bytes)
			return mem_event(&m->mem_api, a->start_ns, mem_delta(bytes, 1), UINT32_MAX);
	}
	return 0;
}

static int on_memory(struct gt_model *m, const struct gt_rec_memory *r)
{
	see_ts(m, r->ts_ns);
	if (r->op == GT_MEM_ALLOC) {
		uint64_t *b = gt_map_put(&m->ptr_rec, r->address, NULL);
		if (b)
			*b = r->bytes;
		return r->bytes ? mem_event(&m->mem_rec, r->ts_ns, mem_delta(r->bytes, 0), r->device) : 0;
	}
	if (r->op == GT_MEM_FREE) {
		uint64_t *b = gt_map_get(&m->ptr_rec, r->address);
		uint64_t bytes = r->bytes ? r->bytes : b ? *b : 0;
		if (b)
			*b = 0;
		return bytes ? mem_event(&m->mem_rec, r->ts_ns, mem_delta(bytes, 1), r->device) : 0;
	}
	return 0;
}

static int on_range(struct gt_model *m, const struct gt_rec_range *r)
{
	const char *text = str_of(m, r->name_id);
	const char *dom = r->domain_id ? gt_tr_str(&m->r, r->domain_id) : "";
	if (!text)
		return -1;
	/* nsys names a range "<domain>:<text>", the default domain being "" */
	size_t dl = strlen(dom), tl = strlen(text);
	char *full = malloc(dl + tl + 2);
	if (!full)
		return -1;
	memcpy(full, dom, dl);
	full[dl] = ':';
	memcpy(full + dl + 1, text, tl + 1);
	const char *name = gt_strpool_intern(&m->pool, full, dl + tl + 1);
	free(full);
	if (!name)
		return -1;
	if (see_tid(m, r->h.tid) < 0)
		return -1;
	see_ts(m, r->start_ns);
	see_ts(m, r->end_ns);
	struct gt_vec *to = r->kind == GT_RANGE_MARK ? &m->marks : r->kind == GT_RANGE_WINDOW ? &m->windows : &m->ranges;
	struct gt_m_range *g = gt_vec_push(to);
	if (!g)
		return -1;
	g->name = name;
	g->text = text;
	g->id = r->range_id;
	g->parent_id = r->parent_id;
	g->start = r->start_ns;
	g->end = r->end_ns;
	g->tid = r->h.tid;
	g->end_tid = r->end_tid;
	g->kind = r->kind;
	g->level = r->level;
	g->open = r->kind != GT_RANGE_MARK && r->end_ns < r->start_ns;
	return 0;
}

/* One callback per record type (trace/visit.h): what each adds to the model. */
static int v_api(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_api *a)
{
	(void)r;
	return on_api(ctx, a);
}

static int v_kernel(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_kernel *k)
{
	(void)r;
	struct gt_model *m = ctx;
	const char *name = gt_model_kernel_name(m, k->name_id);
	uint64_t d = dur(k->start_ns, k->end_ns);
	if (!name || !gt_stat_add(&m->kern, name, NULL, d))
		return -1;
	m->kernel_ns += d;
	m->kernel_count++;
	return gpu_op(m, k->corr_id, k->start_ns, k->end_ns, k->device, k->stream);
}

static int v_memcpy(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_memcpy *c)
{
	(void)r;
	struct gt_model *m = ctx;
	unsigned kind = c->copy_kind < GT_COPY_KIND_MAX ? c->copy_kind : GT_COPY_UNKNOWN;
	const char *op = gt_strpool_intern(&m->pool, gt_copy_op_name(kind), strlen(gt_copy_op_name(kind)));
	uint64_t d = dur(c->start_ns, c->end_ns);
	if (!op || !gt_stat_add(&m->memtime, op, NULL, d) || !gt_stat_add(&m->memsize, op, NULL, c->bytes))
		return -1;
	m->copy_bytes[kind] += c->bytes;
	m->copy_ns[kind] += d;
	m->copy_count[kind]++;
	return gpu_op(m, c->corr_id, c->start_ns, c->end_ns, c->device, c->stream);
}

static int v_memset(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_memset *s)
{
	(void)r;
	struct gt_model *m = ctx;
	const char *op = gt_strpool_intern(&m->pool, "[CUDA memset]", 13);
	uint64_t d = dur(s->start_ns, s->end_ns);
	if (!op || !gt_stat_add(&m->memtime, op, NULL, d) || !gt_stat_add(&m->memsize, op, NULL, s->bytes))
		return -1;
	m->memset_bytes += s->bytes;
	m->memset_ns += d;
	m->memset_count++;
	return gpu_op(m, s->corr_id, s->start_ns, s->end_ns, s->device, s->stream);
}

static int v_memory(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_memory *x)
{
	(void)r;
	return on_memory(ctx, x);
}

static int v_range(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_range *g)
{
	(void)r;
	return on_range(ctx, g);
}

static int v_counter(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_counter *c)
{
	(void)r;
	see_ts(ctx, c->ts_ns);
	return 0;
}

static int v_dropped(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_dropped *d)
{
	(void)r;
	struct gt_model *m = ctx;
	if (d->source == GT_DROP_CUPTI)
		m->dropped_cupti += d->count;
	else if (d->source == GT_DROP_CUPTI_NO_BUFFER)
		m->cupti_no_buffer += d->count;
	else
		m->dropped_tap += d->count;
	return 0;
}

static int v_note(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_note *n)
{
	(void)r;
	struct gt_model *m = ctx;
	see_ts(m, n->ts_ns);
	m->notes |= n->what < 32 ? 1u << n->what : 1u;
	return 0;
}

static int v_device(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_device *d)
{
	(void)r;
	struct gt_model *m = ctx;
	const char *name = str_of(m, d->name_id);
	uint64_t *v = gt_map_put(&m->device_name, (uint64_t)d->device + 1, NULL);
	if (!name || !v)
		return -1;
	*v = (uint64_t)(uintptr_t)name;
	return 0;
}

static int v_thread(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_thread *t)
{
	(void)r;
	struct gt_model *m = ctx;
	const char *name = str_of(m, t->name_id);
	uint64_t *v = gt_map_put(&m->thread_name, (uint64_t)t->h.tid + 1, NULL);
	if (!name || !v || see_tid(m, t->h.tid) < 0)
		return -1;
	*v = (uint64_t)(uintptr_t)name;
	return 0;
}

static int cmp_memev(const void *a, const void *b)
{
	const struct gt_m_memev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void finish(struct gt_model *m)
{
	for (size_t i = 0; i < m->apis.n; i++) {
		uint64_t *slot = gt_map_get(&m->corr, GT_VEC_AT(&m->apis, struct gt_m_api, i).corr);
		if (slot)
			GT_VEC_AT(&m->gpuops, struct gt_m_gpuops, *slot - 1).has_api = 1;
	}
	/* CUPTI's memory records see every device allocation (also the
	 * runtime's own); the API records are the fallback when they are off */
	m->mem = m->mem_rec.n ? &m->mem_rec : &m->mem_api;
	gt_sort(m->mem->v, m->mem->n, sizeof(struct gt_m_memev), cmp_memev);
	int64_t cur = 0, peak = 0;
	for (size_t i = 0; i < m->mem->n; i++) {
		if (__builtin_add_overflow(cur, GT_VEC_AT(m->mem, struct gt_m_memev, i).delta, &cur))
			cur = INT64_MAX; /* only damaged records get here: each change is at most 2^53 */
		if (cur < 0)
			cur = 0; /* a free of memory allocated before the tap started */
		if (cur > peak)
			peak = cur;
	}
	m->mem_peak = (uint64_t)peak;
	m->mem_final = (uint64_t)cur;
	struct gt_stattab *tabs[] = {&m->kern, &m->memtime, &m->memsize, &m->api, &m->apiall, &m->nvtx};
	for (size_t t = 0; t < sizeof(tabs) / sizeof(tabs[0]); t++)
		for (size_t i = 0; i < tabs[t]->n; i++)
			gt_stat_finish(&tabs[t]->s[i]);
}

static int model_any(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_hdr *h)
{
	(void)r;
	(void)h;
	((struct gt_model *)ctx)->nrecords++;
	return 0;
}


static int model_end(void *ctx, const struct gt_trace_reader *r)
{
	(void)r;
	struct gt_model *m = ctx;
	m->partial = m->r.partial;
	if (m->hold && gt_holdstat_end_trace(m->hold) < 0)
		return -1;
	/* NVTX statistics need the closing time of still-open ranges: after the pass */
	for (size_t i = 0; i < m->ranges.n; i++) {
		struct gt_m_range *g = &GT_VEC_AT(&m->ranges, struct gt_m_range, i);
		if (g->open)
			g->end = m->last_ts > g->start ? m->last_ts : g->start;
		const char *style = g->kind == GT_RANGE_STARTEND ? style_startend : style_pushpop;
		if (!gt_stat_add(&m->nvtx, g->name, style, dur(g->start, g->end)))
			return -1;
	}
	finish(m);
	return 0;
}

static const struct gt_trace_ops model_ops = {
	.any = model_any,
	.api = v_api,
	.kernel = v_kernel,
	.memcpy = v_memcpy,
	.memset = v_memset,
	.memory = v_memory,
	.range = v_range,
	.counter = v_counter,
	.dropped = v_dropped,
	.device = v_device,
	.thread = v_thread,
	.note = v_note,
	.end = model_end,
};

int gt_model_run_with(struct gt_model *m, const struct gt_trace_visitor *more, size_t nmore, char *err, size_t errlen)
{
	/* the model first; then, reading each record after it, the launch-hold figures
	 * (export/holdstat.h) and the writers' hooks (trace.json, timeline.log) */
	struct gt_trace_visitor v[GT_VISIT_MAX + 4] = {{&model_ops, m}};
	size_t n = 1;
	if (m->hold)
		v[n++] = (struct gt_trace_visitor){&gt_holdstat_ops, m->hold};
	for (int i = 0; i < 2; i++)
		if (m->hooks[i].ops)
			v[n++] = m->hooks[i];
	for (size_t i = 0; i < nmore && n < GT_VISIT_MAX + 4; i++)
		v[n++] = more[i];
	if (errlen)
		err[0] = '\0';
	return gt_trace_visit(&m->r, v, n, err, errlen);
}

int gt_model_run(struct gt_model *m, char *err, size_t errlen)
{
	return gt_model_run_with(m, NULL, 0, err, errlen);
}

uint64_t gt_model_lost(const struct gt_model *m)
{
	return m->hdr.lost_records > m->dropped_tap ? m->hdr.lost_records : m->dropped_tap;
}

uint64_t gt_model_cupti_dropped(const struct gt_model *m)
{
	return m->hdr.cupti_dropped > m->dropped_cupti ? m->hdr.cupti_dropped : m->dropped_cupti;
}

void gt_model_free(struct gt_model *m)
{
	gt_tr_close(&m->r);
	gt_stattab_free(&m->kern);
	gt_stattab_free(&m->memtime);
	gt_stattab_free(&m->memsize);
	gt_stattab_free(&m->api);
	gt_stattab_free(&m->apiall);
	gt_stattab_free(&m->nvtx);
	struct gt_vec *vs[] = {&m->apis, &m->gpuops, &m->ranges, &m->marks, &m->windows, &m->mem_rec, &m->mem_api, &m->streams, &m->tids};
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
		gt_vec_free(vs[i]);
	struct gt_map *ms[] = {&m->corr, &m->ptr_api, &m->ptr_rec, &m->stream_seen, &m->tid_seen, &m->thread_name, &m->device_name, &m->kname};
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		gt_map_free(ms[i]);
	gt_strpool_free(&m->pool);
}
