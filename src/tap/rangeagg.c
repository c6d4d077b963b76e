/* Per-range results: path table, launch links, counters, and their JSON. */
#include "tap/rangeagg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sort.h"

size_t gt_ra_mem_size(void)
{
	return sizeof(struct gt_ra_node) * GT_RA_NODES + sizeof(uint64_t) * GT_RA_LINKS +
	       sizeof(uint32_t) * GT_RA_SET_MAX * GT_RA_SETS;
}

void gt_ra_init(struct gt_ra *a, void *mem)
{
	memset(a, 0, sizeof(*a));
	a->nodes = mem;
	a->links = (_Atomic uint64_t *)((unsigned char *)mem + sizeof(struct gt_ra_node) * GT_RA_NODES);
	a->sets = (void *)((unsigned char *)mem + sizeof(struct gt_ra_node) * GT_RA_NODES + sizeof(uint64_t) * GT_RA_LINKS);
}

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static struct gt_ra_node *node_at(const struct gt_ra *a, uint32_t node)
{
	return node && node <= GT_RA_NODES ? &a->nodes[node - 1] : NULL;
}

uint32_t gt_ra_node(struct gt_ra *a, uint32_t parent, uint32_t name_id)
{
	if (!a->nodes)
		return 0;
	uint64_t key = ((uint64_t)parent << 32 | name_id) + 1;
	uint32_t i = (uint32_t)mix(key) & (GT_RA_NODES - 1);
	for (uint32_t probe = 0; probe < GT_RA_NODES; probe++, i = (i + 1) & (GT_RA_NODES - 1)) {
		struct gt_ra_node *n = &a->nodes[i];
		uint64_t k = atomic_load_explicit(&n->key, memory_order_acquire);
		if (k == key)
			return i + 1;
		if (k != 0)
			continue;
		uint64_t expect = 0;
		if (atomic_compare_exchange_strong(&n->key, &expect, key)) {
			const struct gt_ra_node *p = node_at(a, parent);
			n->level = p ? p->level + 1 : 0;
			atomic_store_explicit(&n->wall_min_ns, UINT64_MAX, memory_order_relaxed);
			atomic_store_explicit(&n->gpu_min_ns, UINT64_MAX, memory_order_relaxed);
			atomic_store_explicit(&n->seq, atomic_fetch_add(&a->next_seq, 1) + 1, memory_order_release);
			return i + 1;
		}
		if (expect == key)
			return i + 1;
	}
	atomic_fetch_add_explicit(&a->lost_ranges, 1, memory_order_relaxed);
	return 0;
}

uint32_t gt_ra_parent(const struct gt_ra *a, uint32_t node)
{
	const struct gt_ra_node *n = node_at(a, node);
	return n ? (uint32_t)((atomic_load_explicit(&n->key, memory_order_relaxed) - 1) >> 32) : 0;
}

uint32_t gt_ra_name(const struct gt_ra *a, uint32_t node)
{
	const struct gt_ra_node *n = node_at(a, node);
	return n ? (uint32_t)(atomic_load_explicit(&n->key, memory_order_relaxed) - 1) : 0;
}

static void amax(_Atomic uint64_t *p, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);
	while (v > cur && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

static void amin(_Atomic uint64_t *p, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(p, memory_order_relaxed);
	while (v < cur && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

static void amax_i(_Atomic int64_t *p, int64_t v)
{
	int64_t cur = atomic_load_explicit(p, memory_order_relaxed);
	while (v > cur && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed, memory_order_relaxed))
		;
}

void gt_ra_close(struct gt_ra *a, uint32_t node, uint64_t wall_ns, int64_t peak)
{
	struct gt_ra_node *n = node_at(a, node);
	if (!n)
		return;
	atomic_fetch_add_explicit(&n->calls, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->wall_ns, wall_ns, memory_order_relaxed);
	amin(&n->wall_min_ns, wall_ns);
	amax(&n->wall_max_ns, wall_ns);
	amax_i(&n->peak_bytes, peak);
}

void gt_ra_link(struct gt_ra *a, uint64_t corr, uint32_t node)
{
	if (!a->links || !node || corr == 0)
		return;
	atomic_store_explicit(&a->links[corr & (GT_RA_LINKS - 1)], corr << 16 | node, memory_order_relaxed);
}

void gt_ra_link_set(struct gt_ra *a, uint64_t corr, const uint32_t *nodes, int n)
{
	if (n <= 1) {
		gt_ra_link(a, corr, n == 1 ? nodes[0] : 0);
		return;
	}
	if (!a->links || !a->sets || corr == 0)
		return;
	uint32_t k = atomic_fetch_add_explicit(&a->next_set, 1, memory_order_relaxed) & (GT_RA_SETS - 1);
	for (int i = 0; i < GT_RA_SET_MAX; i++)
		atomic_store_explicit(&a->sets[k][i], i < n ? nodes[i] : 0, memory_order_relaxed);
	atomic_store_explicit(&a->links[corr & (GT_RA_LINKS - 1)], corr << 16 | GT_RA_SET_TAG | k, memory_order_release);
}

/* The nodes of `nodes` and every node above them, each once, into out (at most max): what an event
 * that counts in several open ranges at once counts in. */
static int path_union(const struct gt_ra *a, const uint32_t *nodes, int n, uint32_t *out, int max)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		for (uint32_t x = nodes[i]; x && node_at(a, x) && k < max; x = gt_ra_parent(a, x)) {
			int dup = 0;
			for (int j = 0; j < k && !dup; j++)
				dup = out[j] == x;
			if (dup)
				break; /* this node and those above it are in already */
			out[k++] = x;
		}
	}
	return k;
}

static void count_in(struct gt_ra_node *n, uint64_t ns, int timed)
{
	if (!n)
		return;
	atomic_fetch_add_explicit(&n->kernels, 1, memory_order_relaxed);
	if (!timed)
		return;
	atomic_fetch_add_explicit(&n->timed, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n->gpu_ns, ns, memory_order_relaxed);
	amin(&n->gpu_min_ns, ns);
	amax(&n->gpu_max_ns, ns);
}

static void kernel_add(struct gt_ra *a, uint64_t corr, uint64_t ns, int timed)
{
	if (!a->links)
		return;
	atomic_fetch_add_explicit(&a->kernels_total, 1, memory_order_relaxed);
	uint64_t v = atomic_load_explicit(&a->links[corr & (GT_RA_LINKS - 1)], memory_order_acquire);
	if (v == 0)
		return; /* launched outside every range */
	if (v >> 16 != (corr & (UINT64_MAX >> 16))) {
		/* the slot holds another launch: this kernel's link was overwritten (or it ran outside ranges) */
		if ((v >> 16) > corr)
			atomic_fetch_add_explicit(&a->lost_links, 1, memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&a->kernels_in_ranges, 1, memory_order_relaxed);
	uint32_t node = (uint32_t)(v & 0xffff);
	if (!(node & GT_RA_SET_TAG)) {
		for (int d = 0; node && d < GT_RA_MAX_DEPTH; d++) {
			count_in(node_at(a, node), ns, timed);
			node = gt_ra_parent(a, node);
		}
		return;
	}
	/* several ranges: the union of their paths, each node once */
	uint32_t set[GT_RA_SET_MAX], all[GT_RA_SET_MAX * GT_RA_MAX_DEPTH];
	int n = 0;
	while (n < GT_RA_SET_MAX && (set[n] = atomic_load_explicit(&a->sets[node & (GT_RA_SETS - 1)][n], memory_order_relaxed)))
		n++;
	int k = path_union(a, set, n, all, (int)(sizeof(all) / sizeof(all[0])));
	for (int i = 0; i < k; i++)
		count_in(node_at(a, all[i]), ns, timed);
}

void gt_ra_kernel(struct gt_ra *a, uint64_t corr, uint64_t ns)
{
	kernel_add(a, corr, ns, 1);
}

void gt_ra_kernel_untimed(struct gt_ra *a, uint64_t corr)
{
	kernel_add(a, corr, 0, 0);
}

void gt_ra_mem(struct gt_ra *a, uint32_t node, int alloc, uint64_t bytes)
{
	for (int d = 0; node && d < GT_RA_MAX_DEPTH; d++) {
		struct gt_ra_node *n = node_at(a, node);
		if (!n)
			return;
		atomic_fetch_add_explicit(alloc ? &n->alloc_count : &n->free_count, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(alloc ? &n->alloc_bytes : &n->free_bytes, bytes, memory_order_relaxed);
		node = gt_ra_parent(a, node);
	}
}

void gt_ra_mem_set(struct gt_ra *a, const uint32_t *nodes, int n, int alloc, uint64_t bytes)
{
	uint32_t all[256];
	int k = path_union(a, nodes, n, all, (int)(sizeof(all) / sizeof(all[0])));
	for (int i = 0; i < k; i++) {
		struct gt_ra_node *x = node_at(a, all[i]);
		atomic_fetch_add_explicit(alloc ? &x->alloc_count : &x->free_count, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(alloc ? &x->alloc_bytes : &x->free_bytes, bytes, memory_order_relaxed);
	}
}

void gt_ra_reset(struct gt_ra *a)
{
	if (!a->nodes)
		return;
	for (uint32_t i = 0; i < GT_RA_NODES; i++) {
		struct gt_ra_node *n = &a->nodes[i];
		if (!atomic_load(&n->key))
			continue;
		_Atomic uint64_t *z[] = {&n->calls,       &n->wall_ns,     &n->wall_max_ns, &n->kernels,
					 &n->gpu_ns,      &n->gpu_max_ns,  &n->alloc_count, &n->alloc_bytes,
					 &n->free_count,  &n->free_bytes,  &n->timed};
		for (size_t k = 0; k < sizeof(z) / sizeof(z[0]); k++)
			atomic_store(z[k], 0);
		atomic_store(&n->wall_min_ns, UINT64_MAX);
		atomic_store(&n->gpu_min_ns, UINT64_MAX);
		atomic_store(&n->peak_bytes, 0);
	}
	atomic_store(&a->lost_ranges, 0);
	atomic_store(&a->lost_links, 0);
	atomic_store(&a->kernels_total, 0);
	atomic_store(&a->kernels_in_ranges, 0);
}

/* ---- JSON text ---- */

static void jb_grow(struct gt_jbuf *b, size_t need)
{
	if (b->failed || b->len + need + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + need + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->failed = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void gt_jb_put(struct gt_jbuf *b, const char *s, size_t n)
{
	jb_grow(b, n);
	if (b->failed)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void gt_jb_puts(struct gt_jbuf *b, const char *s)
{
	gt_jb_put(b, s, strlen(s));
}

void gt_jb_printf(struct gt_jbuf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	gt_jb_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || len > n || (len == 2 && c < 0xc2) || (len == 4 && c > 0xf4))
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
		return 0;
	if (len == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
		return 0;
	return len;
}

void gt_jb_str(struct gt_jbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	gt_jb_put(b, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned c = u[i];
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			gt_jb_put(b, e, 2);
			i++;
		} else if (c < 0x20) {
			gt_jb_printf(b, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			gt_jb_put(b, (const char *)u + i, 1);
			i++;
		} else {
			size_t l = utf8_len(u + i, n - i);
			if (l) {
				gt_jb_put(b, (const char *)u + i, l);
				i += l;
			} else {
				gt_jb_puts(b, "\\ufffd");
				i++;
			}
		}
	}
	gt_jb_put(b, "\"", 1);
}

static void put_path(const struct gt_ra *a, struct gt_jbuf *b, uint32_t node, gt_ra_name_fn name, void *arg)
{
	uint32_t chain[GT_RA_MAX_DEPTH];
	int n = 0;
	for (uint32_t x = node; x && n < GT_RA_MAX_DEPTH; x = gt_ra_parent(a, x))
		chain[n++] = x;
	struct gt_jbuf p = {0};
	for (int i = n - 1; i >= 0; i--) {
		uint32_t len = 0;
		const char *s = name(gt_ra_name(a, chain[i]), &len, arg);
		if (!s) {
			s = "?";
			len = 1;
		}
		gt_jb_put(&p, s, len);
		if (i)
			gt_jb_put(&p, "/", 1);
	}
	gt_jb_puts(b, "\"path\":");
	gt_jb_str(b, p.p ? p.p : "", p.len);
	uint32_t len = 0;
	const char *s = name(gt_ra_name(a, node), &len, arg);
	gt_jb_puts(b, ",\"name\":");
	gt_jb_str(b, s ? s : "?", s ? len : 1);
	free(p.p);
}

struct order {
	uint32_t seq, node;
};

static int cmp_order(const void *x, const void *y)
{
	const struct order *a = x, *b = y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void gt_ra_json(const struct gt_ra *a, struct gt_jbuf *b, gt_ra_name_fn name, void *arg, const uint32_t *open)
{
	gt_jb_puts(b, "\"ranges\":[");
	if (!a->nodes) {
		gt_jb_puts(b, "]");
		return;
	}
	struct order *ord = malloc(sizeof(*ord) * GT_RA_NODES);
	if (!ord) {
		b->failed = 1;
		return;
	}
	size_t n = 0;
	for (uint32_t i = 0; i < GT_RA_NODES; i++) {
		uint32_t seq = atomic_load_explicit(&a->nodes[i].seq, memory_order_acquire);
		if (seq)
			ord[n++] = (struct order){seq, i + 1};
	}
	gt_sort(ord, n, sizeof(*ord), cmp_order);
	int first = 1;
	for (size_t k = 0; k < n; k++) {
		uint32_t node = ord[k].node;
		const struct gt_ra_node *x = &a->nodes[node - 1];
		uint64_t calls = atomic_load(&x->calls), kernels = atomic_load(&x->kernels);
		uint32_t nopen = open ? open[node - 1] : 0;
		if (!calls && !nopen)
			continue;
		uint64_t wmin = atomic_load(&x->wall_min_ns), gmin = atomic_load(&x->gpu_min_ns);
		int64_t peak = atomic_load(&x->peak_bytes);
		gt_jb_puts(b, first ? "\n{" : ",\n{");
		first = 0;
		put_path(a, b, node, name, arg);
		gt_jb_printf(b, ",\"level\":%u,\"calls\":%llu,\"open\":%u", x->level, (unsigned long long)calls, nopen);
		gt_jb_printf(b, ",\"wall_ns\":%llu,\"wall_min_ns\":%llu,\"wall_max_ns\":%llu",
			     (unsigned long long)atomic_load(&x->wall_ns), (unsigned long long)(calls ? wmin : 0),
			     (unsigned long long)atomic_load(&x->wall_max_ns));
		uint64_t timed = atomic_load(&x->timed);
		if (kernels && !timed) /* counted, never timed (kernel records off): not 0 ns */
			gt_jb_printf(b, ",\"kernels\":%llu,\"gpu_ns\":null,\"gpu_min_ns\":null,\"gpu_max_ns\":null",
				     (unsigned long long)kernels);
		else
			gt_jb_printf(b, ",\"kernels\":%llu,\"gpu_ns\":%llu,\"gpu_min_ns\":%llu,\"gpu_max_ns\":%llu",
				     (unsigned long long)kernels, (unsigned long long)atomic_load(&x->gpu_ns),
				     (unsigned long long)(timed ? gmin : 0), (unsigned long long)atomic_load(&x->gpu_max_ns));
		gt_jb_printf(b, ",\"timed_kernels\":%llu", (unsigned long long)timed);
		gt_jb_printf(b,
			     ",\"alloc_count\":%llu,\"alloc_bytes\":%llu,\"free_count\":%llu,\"free_bytes\":%llu,"
			     "\"peak_bytes\":%lld}",
			     (unsigned long long)atomic_load(&x->alloc_count),
			     (unsigned long long)atomic_load(&x->alloc_bytes),
			     (unsigned long long)atomic_load(&x->free_count),
			     (unsigned long long)atomic_load(&x->free_bytes), (long long)(peak > 0 ? peak : 0));
	}
	free(ord);
	gt_jb_puts(b, "]");
}
