/*
 * analyze/timeline.c — GPU intervals in, merged-interval numbers out.
 *
 * Readers hand intervals in any order.  They are collected in a chunk of fixed size; a full chunk
 * is sorted by start and written to a temporary file as a run; at the end the runs are merged
 * (k-way, one small buffer per run).  So memory is one chunk plus k buffers whatever the input size.
 *
 * The sweep sees every interval in start order and keeps, per GPU and per class of work (all,
 * kernels, compute, communication, memory operations), the one merged interval still open: a new
 * interval either extends it or closes it (its length is added) and opens the next.  This is the
 * merge HTA does with pandas, in O(1) memory per GPU and iteration.  overlap = |compute| + |comm| -
 * |kernels|, since kernels = compute ∪ comm.
 *
 * Iterations.  The CPU runs ahead of the GPU, so an iteration's GPU work is the work its CPU range
 * *launched* (as HTA assigns kernels to the step of their runtime call), not the work that ran
 * during it.  Correlation ids are handed out by CUPTI from one counter at API entry, so they grow
 * with launch time within a process: per range start b_i, C_i = the smallest id of an API call of
 * that process that started at or after b_i (C_n: after the end of the last range).  An op with id c
 * then belongs to iteration i when C_i <= c < C_{i+1}.  The C_i need one streaming pass over the API
 * calls (buffered and spilled to a temporary file like the intervals) and O(iterations) memory.
 * Each iteration keeps its own open merged intervals, since iterations overlap on the GPU.  Ops with
 * no correlated launch are cut at the range starts by their GPU time instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/an_internal.h"
#include "analyze/findings.h"
#include "core/sort.h"

enum { U_ALL, U_KERN, U_COMP, U_COMM, U_MEM, U_N };

size_t gt_an_sort_chunk = 1u << 20;

int gt_tl_init(struct gt_tl *tl, size_t chunk_events)
{
	memset(tl, 0, sizeof(*tl));
	tl->chunk_cap = chunk_events ? chunk_events : gt_an_sort_chunk;
	tl->chunk = malloc(tl->chunk_cap * sizeof(*tl->chunk));
	return tl->chunk ? 0 : -ENOMEM;
}

void gt_tl_free(struct gt_tl *tl)
{
	free(tl->chunk);
	if (tl->spill)
		fclose(tl->spill);
	free(tl->run_off);
	free(tl->run_len);
	free(tl->gpus);
	free(tl->gpu_slots);
	free(tl->ranges);
	free(tl->lbuf);
	if (tl->lspill)
		fclose(tl->lspill);
	for (size_t i = 0; i < tl->nlabels; i++)
		free(tl->labels[i]);
	free(tl->labels);
	gt_dt_free(tl->dt);
	memset(tl, 0, sizeof(*tl));
}

static size_t gpu_slot(int source, int device, size_t mask)
{
	uint64_t h = (((uint64_t)(uint32_t)source << 32) | (uint32_t)device) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 29) & mask;
}

/* A hash of (source, device): inputs with tens of thousands of devices stay linear. */
long gt_tl_gpu(struct gt_tl *tl, int source, int device)
{
	size_t mask = tl->gpu_nslots - 1;
	if (tl->gpu_nslots)
		for (size_t h = gpu_slot(source, device, mask); tl->gpu_slots[h]; h = (h + 1) & mask) {
			size_t i = tl->gpu_slots[h] - 1;
			if (tl->gpus[i].source == source && tl->gpus[i].device == device)
				return (long)i;
		}
	if (tl->ngpus >= GT_TL_MAX_GPUS) {
		snprintf(tl->err, sizeof(tl->err), "more than %u GPUs", GT_TL_MAX_GPUS);
		return -1;
	}
	if (tl->ngpus == tl->gpus_cap) {
		size_t nc = tl->gpus_cap ? tl->gpus_cap * 2 : 16;
		void *g = realloc(tl->gpus, nc * sizeof(*tl->gpus));
		if (!g)
			return -1;
		tl->gpus = g;
		tl->gpus_cap = nc;
	}
	if ((tl->ngpus + 1) * 2 > tl->gpu_nslots) {
		size_t ns = tl->gpu_nslots ? tl->gpu_nslots * 2 : 64;
		uint32_t *sl = calloc(ns, sizeof(*sl));
		if (!sl)
			return -1;
		for (size_t i = 0; i < tl->ngpus; i++) {
			size_t h = gpu_slot(tl->gpus[i].source, tl->gpus[i].device, ns - 1);
			while (sl[h])
				h = (h + 1) & (ns - 1);
			sl[h] = (uint32_t)(i + 1);
		}
		free(tl->gpu_slots);
		tl->gpu_slots = sl;
		tl->gpu_nslots = ns;
		mask = ns - 1;
	}
	size_t h = gpu_slot(source, device, mask);
	while (tl->gpu_slots[h])
		h = (h + 1) & mask;
	tl->gpu_slots[h] = (uint32_t)(tl->ngpus + 1);
	tl->gpus[tl->ngpus].source = source;
	tl->gpus[tl->ngpus].device = device;
	tl->gpus[tl->ngpus].first = UINT64_MAX;
	tl->gpus[tl->ngpus].last = 0;
	return (long)tl->ngpus++;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct gt_ev *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* Traces are mostly in time order already: check before paying for a sort. */
static void sort_chunk(struct gt_tl *tl)
{
	for (size_t i = 1; i < tl->nchunk; i++)
		if (ev_cmp(&tl->chunk[i - 1], &tl->chunk[i]) > 0) {
			gt_sort(tl->chunk, tl->nchunk, sizeof(*tl->chunk), ev_cmp);
			return;
		}
}

static int spill_chunk(struct gt_tl *tl)
{
	if (!tl->spill && !(tl->spill = tmpfile())) {
		snprintf(tl->err, sizeof(tl->err), "cannot create a temporary file for sorting: %s",
			 strerror(errno));
		return -1;
	}
	sort_chunk(tl);
	uint64_t *o = realloc(tl->run_off, (tl->nruns + 1) * sizeof(*o));
	if (o)
		tl->run_off = o;
	uint64_t *l = realloc(tl->run_len, (tl->nruns + 1) * sizeof(*l));
	if (l)
		tl->run_len = l;
	if (!o || !l)
		return -1;
	uint64_t off = 0;
	for (size_t i = 0; i < tl->nruns; i++)
		off += tl->run_len[i];
	tl->run_off[tl->nruns] = off;
	tl->run_len[tl->nruns] = tl->nchunk;
	if (fwrite(tl->chunk, sizeof(*tl->chunk), tl->nchunk, tl->spill) != tl->nchunk) {
		snprintf(tl->err, sizeof(tl->err), "writing the temporary sort file failed: %s", strerror(errno));
		return -1;
	}
	tl->nruns++;
	tl->nchunk = 0;
	return 0;
}

int gt_tl_op(struct gt_tl *tl, uint32_t gpu, uint64_t start, uint64_t end, int cat, uint64_t corr, uint32_t name,
	     uint32_t stream, uint64_t bytes)
{
	if (end < start)
		end = start;
	if (tl->nchunk == tl->chunk_cap && spill_chunk(tl) < 0)
		return -1;
	struct gt_ev *e = &tl->chunk[tl->nchunk++];
	e->start = start;
	e->end = end;
	e->bytes = bytes < (1ull << 40) ? bytes : (1ull << 40) - 1;
	e->xdur = 0;
	e->corr = corr <= UINT32_MAX ? (uint32_t)corr : 0;
	e->name = name;
	e->stream = stream;
	e->gpu = gpu & 0xffffffu;
	e->cat = (uint32_t)cat & 0xffu;
	tl->nevents++;
	if (gpu < tl->ngpus) {
		if (start < tl->gpus[gpu].first)
			tl->gpus[gpu].first = start;
		if (end > tl->gpus[gpu].last)
			tl->gpus[gpu].last = end;
	}
	return 0;
}

void gt_tl_op_xdur(struct gt_tl *tl, uint64_t ns)
{
	if (tl->nchunk && ns && ns < (1u << 24))
		tl->chunk[tl->nchunk - 1].xdur = ns;
}

int gt_tl_event_c(struct gt_tl *tl, uint32_t gpu, uint64_t start, uint64_t end, int cat, uint64_t corr)
{
	return gt_tl_op(tl, gpu, start, end, cat, corr, GT_NO_NAME, 0, 0);
}

int gt_tl_event(struct gt_tl *tl, uint32_t gpu, uint64_t start, uint64_t end, int cat)
{
	return gt_tl_event_c(tl, gpu, start, end, cat, 0);
}

#define LBUF_N 65536u /* API calls buffered before they go to the temporary file (1 MiB) */

static int flush_launches(struct gt_tl *tl)
{
	if (!tl->lspill && !(tl->lspill = tmpfile())) {
		snprintf(tl->err, sizeof(tl->err), "cannot create a temporary file for API calls: %s", strerror(errno));
		return -1;
	}
	if (fwrite(tl->lbuf, sizeof(*tl->lbuf), tl->nlbuf, tl->lspill) != tl->nlbuf) {
		snprintf(tl->err, sizeof(tl->err), "writing the temporary API-call file failed: %s", strerror(errno));
		return -1;
	}
	tl->nlbuf = 0;
	return 0;
}

/* The launch calls HTA's launch statistics count. */
static int hta_launch_name(const char *n)
{
	return n && (strcmp(n, "cudaLaunchKernel") == 0 || strcmp(n, "cudaLaunchKernelExC") == 0 ||
		     strcmp(n, "cudaMemcpyAsync") == 0 || strcmp(n, "cudaMemsetAsync") == 0);
}

/* a launch per API call, millions of them, spilled to a file when many: kept at 24 bytes */
_Static_assert(sizeof(struct gt_launch) == 24, "struct gt_launch grew");

int gt_tl_launch2(struct gt_tl *tl, int source, uint64_t start, uint64_t end, uint64_t corr, const char *name,
		  uint32_t tid)
{
	if (!corr || corr > UINT32_MAX || source < 0)
		return 0;
	if (source > UINT16_MAX) { /* said once, by the analysis (analyze.c) */
		tl->launches_past_sources++;
		return 0;
	}
	if (!tl->lbuf && !(tl->lbuf = malloc(LBUF_N * sizeof(*tl->lbuf))))
		return -1;
	if (tl->nlbuf == LBUF_N && flush_launches(tl) < 0)
		return -1;
	uint64_t d = end > start ? end - start : 0;
	tl->lbuf[tl->nlbuf++] = (struct gt_launch){start, (uint32_t)corr, d > UINT32_MAX ? UINT32_MAX : (uint32_t)d, tid,
						   (uint16_t)source, hta_launch_name(name) ? GT_L_HTA : 0u};
	tl->nlaunches++;
	return 0;
}

int gt_tl_launch(struct gt_tl *tl, int source, uint64_t start, uint64_t corr)
{
	return gt_tl_launch2(tl, source, start, start, corr, NULL, 0);
}

int gt_tl_label(struct gt_tl *tl, int source, const char *label)
{
	if (source < 0)
		return -1;
	if ((size_t)source >= tl->nlabels) {
		char **v = realloc(tl->labels, ((size_t)source + 1) * sizeof(*v));
		if (!v)
			return -1;
		memset(v + tl->nlabels, 0, ((size_t)source + 1 - tl->nlabels) * sizeof(*v));
		tl->labels = v;
		tl->nlabels = (size_t)source + 1;
	}
	char *d = strdup(label);
	if (!d)
		return -1;
	free(tl->labels[source]);
	tl->labels[source] = d;
	return 0;
}

int gt_tl_range(struct gt_tl *tl, int source, uint64_t start, uint64_t end)
{
	if (tl->nranges == tl->ranges_cap) {
		size_t nc = tl->ranges_cap ? tl->ranges_cap * 2 : 64;
		struct gt_range *r = realloc(tl->ranges, nc * sizeof(*r));
		if (!r)
			return -1;
		tl->ranges = r;
		tl->ranges_cap = nc;
	}
	tl->ranges[tl->nranges++] = (struct gt_range){start, end < start ? start : end, source};
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct gt_range *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* ---- the sweep ---- */

struct acc { /* one merged interval per class, and the window it accumulates into */
	uint64_t cs[U_N], ce[U_N];
	int open[U_N];
};

struct gstate {
	int source;
	uint64_t last_step;   /* start of the source's last range when it has 2 or more, else UINT64_MAX */
	struct acc tot;
	struct acc *acc;      /* one per window: iterations overlap on the GPU */
	long w;               /* window of the last op placed by time, -1 before the first */
	const uint64_t *bnd;  /* window starts of this GPU's source */
	size_t nbnd;
	const uint64_t *cor;  /* nbnd + 1 correlation-id boundaries, NULL: place every op by time */
	struct gt_an_window *win; /* nbnd windows */
};

static void add_piece(struct gt_an_window *w, int u, uint64_t a, uint64_t b)
{
	double d = (double)(b - a);
	switch (u) {
	case U_ALL:
		w->busy_ns += d;
		if (!w->first_ns || a < w->first_ns)
			w->first_ns = a;
		if (b > w->last_ns)
			w->last_ns = b;
		break;
	case U_KERN: w->idle_ns += d; break; /* |kernels| parked here until finish_window */
	case U_COMP: w->compute_ns += d; break;
	case U_COMM: w->comm_ns += d; break;
	case U_MEM: w->memop_ns += d; break;
	}
}

static void flush(struct acc *a, int u, struct gt_an_window *w)
{
	if (a->open[u] && w)
		add_piece(w, u, a->cs[u], a->ce[u]);
	a->open[u] = 0;
}

static void feed(struct acc *a, int u, uint64_t s, uint64_t e, struct gt_an_window *w)
{
	if (a->open[u] && s <= a->ce[u]) {
		if (s < a->cs[u]) /* only when ops placed by time and by launch share a window */
			a->cs[u] = s;
		if (e > a->ce[u])
			a->ce[u] = e;
		return;
	}
	flush(a, u, w);
	a->open[u] = 1;
	a->cs[u] = s;
	a->ce[u] = e;
}

static void finish_window(struct gt_an_window *w)
{
	double kern = w->idle_ns;
	w->span_ns = w->last_ns > w->first_ns ? (double)(w->last_ns - w->first_ns) : 0;
	w->idle_ns = w->span_ns - w->busy_ns;
	if (w->idle_ns < 0)
		w->idle_ns = 0;
	w->overlap_ns = w->compute_ns + w->comm_ns - kern;
	if (w->overlap_ns < 0)
		w->overlap_ns = 0;
	w->exposed_ns = w->comm_ns - w->overlap_ns;
	w->non_compute_ns = w->span_ns - w->compute_ns - w->idle_ns;
}

static void sum_window(struct gt_an_window *t, const struct gt_an_window *w)
{
	if (w->first_ns && (!t->first_ns || w->first_ns < t->first_ns))
		t->first_ns = w->first_ns;
	if (w->last_ns > t->last_ns)
		t->last_ns = w->last_ns;
	if (w->start_ns && (!t->start_ns || w->start_ns < t->start_ns))
		t->start_ns = w->start_ns;
	if (w->end_ns > t->end_ns)
		t->end_ns = w->end_ns;
	t->span_ns += w->span_ns;
	t->busy_ns += w->busy_ns;
	t->idle_ns += w->idle_ns;
	t->kernel_ns += w->kernel_ns;
	t->kernels += w->kernels;
	t->memops += w->memops;
	t->compute_ns += w->compute_ns;
	t->comm_ns += w->comm_ns;
	t->overlap_ns += w->overlap_ns;
	t->exposed_ns += w->exposed_ns;
	t->memop_ns += w->memop_ns;
	t->non_compute_ns += w->non_compute_ns;
}

/* Iteration of correlation id c: the largest i < n with cor[i] <= c, -1 when c is before cor[0] or
 * at or after cor[n] (launched before the first range or after the end of the last one). */
static long iter_of(const uint64_t *cor, size_t n, uint64_t c)
{
	if (c < cor[0] || c >= cor[n])
		return -1;
	size_t lo = 0, hi = n; /* cor[lo] <= c; answer in [lo, hi) */
	while (hi - lo > 1) {
		size_t m = lo + (hi - lo) / 2;
		if (cor[m] <= c)
			lo = m;
		else
			hi = m;
	}
	return (long)lo;
}

static void count_op(struct gt_an_window *w, const struct gt_ev *e)
{
	if (e->cat == GT_CAT_MEMOP) {
		w->memops++;
	} else {
		w->kernels++;
		w->kernel_ns += (double)(e->end - e->start);
	}
}

/* The launches, sorted by (source, correlation id), for the join with the GPU ops. */
struct ljoin {
	struct gt_launch *v;
	size_t n, cap;
	int failed;
};

static void ljoin_add(void *arg, const struct gt_launch *l)
{
	struct ljoin *j = arg;
	if (j->failed)
		return;
	if (j->n == j->cap) {
		size_t nc = j->cap ? j->cap * 2 : 4096;
		struct gt_launch *v = realloc(j->v, nc * sizeof(*v));
		if (!v) {
			j->failed = 1;
			return;
		}
		j->v = v;
		j->cap = nc;
	}
	j->v[j->n++] = *l;
}

static int launch_cmp(const void *a, const void *b)
{
	const struct gt_launch *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static struct gt_launch *ljoin_find(const struct ljoin *j, uint32_t source, uint32_t corr)
{
	if (!corr)
		return NULL;
	size_t lo = 0, hi = j->n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		const struct gt_launch *l = &j->v[m];
		if (l->source < source || (l->source == source && l->corr < corr))
			lo = m + 1;
		else
			hi = m;
	}
	return lo < j->n && j->v[lo].source == source && j->v[lo].corr == corr ? &j->v[lo] : NULL;
}

static void sweep_one(struct gt_tl *tl, struct gstate *gs, struct gt_an_gpu *gpus, const struct gt_ev *e,
		      const struct ljoin *lj)
{
	struct gstate *g = &gs[e->gpu];
	struct gt_an_window *tw = &gpus[e->gpu].total;
	struct gt_launch *l = ljoin_find(lj, (uint32_t)g->source, e->corr);
	double dur = (double)(e->end - e->start);
	int last_step = l && l->start >= g->last_step;
	if (!l) {
		tl->hta.nolaunch_ops++;
		tl->hta.nolaunch_ns += dur;
	} else if (last_step) {
		tl->hta.last_step_ops++;
		tl->hta.last_step_ns += dur;
	}
	if ((tl->launched_only && !l) || (tl->without_last_step && last_step)) {
		tl->hta.left_out_ops++;
		tl->hta.left_out_ns += dur;
		if (tl->names && e->name < tl->names->n) { /* out of the class tables too */
			struct gt_name *n = &tl->names->v[e->name];
			n->time_ns -= dur;
			if (n->count)
				n->count--;
		}
		return;
	}
	long iter = -1;
	int us[3], nu = 0;
	us[nu++] = U_ALL;
	if (e->cat == GT_CAT_MEMOP) {
		us[nu++] = U_MEM;
	} else {
		us[nu++] = U_KERN;
		us[nu++] = e->cat == GT_CAT_COMM ? U_COMM : U_COMP;
	}
	for (int i = 0; i < nu; i++)
		feed(&g->tot, us[i], e->start, e->end, tw);
	count_op(tw, e);
	if (!g->nbnd)
		goto detail;
	if (g->cor && e->corr) { /* by its launch: the whole op goes to one iteration */
		long w = iter_of(g->cor, g->nbnd, e->corr);
		if (w < 0) {
			tl->outside++;
			goto detail;
		}
		tl->by_launch++;
		if (l)
			tl->by_launch_event++;
		else
			tl->by_launch_range++;
		iter = w;
		for (int i = 0; i < nu; i++)
			feed(&g->acc[w], us[i], e->start, e->end, &g->win[w]);
		count_op(&g->win[w], e);
		goto detail;
	}
	/* by GPU time: counted in the window of its start, cut at the window starts */
	tl->by_time++;
	while ((size_t)(g->w + 1) < g->nbnd && e->start >= g->bnd[g->w + 1])
		g->w++;
	iter = g->w;
	if (g->w >= 0)
		count_op(&g->win[g->w], e);
	uint64_t a = e->start;
	for (long j = g->w;; j++) {
		uint64_t hi = (size_t)(j + 1) < g->nbnd ? g->bnd[j + 1] : UINT64_MAX;
		uint64_t b = e->end < hi ? e->end : hi;
		if (j >= 0)
			for (int i = 0; i < nu; i++)
				feed(&g->acc[j], us[i], a, b, &g->win[j]);
		if (e->end <= hi)
			break;
		a = hi;
	}
detail:
	if (tl->dt && gt_dt_op(tl->dt, e, g->source, l, iter) < 0 && !tl->err[0])
		snprintf(tl->err, sizeof(tl->err), "out of memory in the per-op analyses");
	if (tl->fd)
		gt_fd_op(tl->fd, e, g->source, l, iter);
}

struct run_rd {
	uint64_t next, left; /* next event index in file, events left */
	struct gt_ev *buf;
	size_t n, pos;
};

static int run_fill(struct gt_tl *tl, struct run_rd *r, size_t bufn)
{
	size_t want = r->left < bufn ? (size_t)r->left : bufn;
	if (fseeko(tl->spill, (off_t)(r->next * sizeof(struct gt_ev)), SEEK_SET) != 0 ||
	    fread(r->buf, sizeof(struct gt_ev), want, tl->spill) != want) {
		snprintf(tl->err, sizeof(tl->err), "reading the temporary sort file failed");
		return -1;
	}
	r->next += want;
	r->left -= want;
	r->n = want;
	r->pos = 0;
	return 0;
}

/* Number of b[0..n) that are <= t (the sorted starts). */
static size_t upper(const uint64_t *b, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (b[m] <= t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

int gt_tl_each_launch(struct gt_tl *tl, void (*fn)(void *arg, const struct gt_launch *l), void *arg)
{
	if (tl->lspill) {
		if (tl->nlbuf && flush_launches(tl) < 0)
			return -1;
		rewind(tl->lspill);
		size_t n;
		while ((n = fread(tl->lbuf, sizeof(*tl->lbuf), LBUF_N, tl->lspill)) > 0)
			for (size_t i = 0; i < n; i++)
				fn(arg, &tl->lbuf[i]);
		if (ferror(tl->lspill)) {
			snprintf(tl->err, sizeof(tl->err), "reading the temporary API-call file failed");
			return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < tl->nlbuf; i++)
		fn(arg, &tl->lbuf[i]);
	return 0;
}

/* One pass over the API calls: per source with ranges, the correlation-id boundaries C_0..C_n
 * (UINT64_MAX: no call at or after that boundary).  has[s] = 1 when source s had any API call. */
static int launch_bounds(struct gt_tl *tl, size_t nsrc, uint64_t **sb, uint64_t **se, const size_t *snb,
			 uint64_t **cor, int *has)
{
	if (tl->lspill) {
		if (tl->nlbuf && flush_launches(tl) < 0)
			return -1;
		rewind(tl->lspill);
	}
	for (;;) {
		size_t n = tl->nlbuf;
		if (tl->lspill) {
			n = fread(tl->lbuf, sizeof(*tl->lbuf), LBUF_N, tl->lspill);
			if (n == 0)
				break;
		}
		for (size_t i = 0; i < n; i++) {
			const struct gt_launch *l = &tl->lbuf[i];
			size_t src = l->source;
			if (src >= nsrc || !snb[src] || !cor[src])
				continue;
			has[src] = 1;
			size_t nb = snb[src], j = upper(sb[src], nb, l->start);
			uint64_t *c = cor[src];
			if (j > 0 && l->corr < c[j - 1])
				c[j - 1] = l->corr;
			if (l->start > se[src][nb - 1] && l->corr < c[nb])
				c[nb] = l->corr;
		}
		if (!tl->lspill)
			break;
	}
	if (tl->lspill && ferror(tl->lspill)) {
		snprintf(tl->err, sizeof(tl->err), "reading the temporary API-call file failed");
		return -1;
	}
	for (size_t src = 0; src < nsrc; src++) /* C_i = min over every boundary at or after b_i */
		if (cor[src])
			for (size_t j = snb[src]; j-- > 0;)
				if (cor[src][j + 1] < cor[src][j])
					cor[src][j] = cor[src][j + 1];
	return 0;
}

/* ---- gt_tl_finish, phase by phase ---- */

/* A phase's failure: the message is tl->err (else out of memory), or out of memory. */
enum { TL_FAIL = -1, TL_NOMEM = -2 };

/* The windows of every source, made before the sweep: a source's windows are its iteration ranges,
 * else (--iters) equal cuts of its extent. */
struct wins {
	size_t nsrc;
	uint64_t *smin, *smax;    /* per source: its extent (first start, last end), when it is cut */
	size_t *rfirst, *rcount;  /* per source: its ranges in tl->ranges (sorted by source) */
	uint64_t **sb, **se;      /* per source: its windows' starts and ends (in bnd_all, ends) */
	uint64_t **cor;           /* per source with ranges: rcount + 1 correlation-id bounds (in cor_all) */
	size_t *snb;              /* per source: how many windows */
	int *has;                 /* per source: 1 when its launches gave the bounds */
	uint64_t *bnd_all, *ends, *cor_all; /* what sb, se and cor point into */
};

static void wins_free(struct wins *w)
{
	free(w->smin);
	free(w->smax);
	free(w->rfirst);
	free(w->rcount);
	free(w->bnd_all);
	free(w->ends);
	free(w->cor_all);
	free(w->sb);
	free(w->se);
	free(w->cor);
	free(w->snb);
	free(w->has);
}

/* The sources (of the GPUs and of the ranges) and where each one's ranges are. */
static int wins_open(const struct gt_tl *tl, struct wins *w)
{
	size_t nsrc = 0;
	for (size_t i = 0; i < tl->ngpus; i++)
		if ((size_t)tl->gpus[i].source + 1 > nsrc)
			nsrc = (size_t)tl->gpus[i].source + 1;
	for (size_t i = 0; i < tl->nranges; i++)
		if ((size_t)tl->ranges[i].source + 1 > nsrc)
			nsrc = (size_t)tl->ranges[i].source + 1;
	w->nsrc = nsrc;
	w->smin = calloc(nsrc + 1, sizeof(uint64_t));
	w->smax = calloc(nsrc + 1, sizeof(uint64_t));
	w->rfirst = calloc(nsrc + 1, sizeof(size_t));
	w->rcount = calloc(nsrc + 1, sizeof(size_t));
	w->sb = calloc(nsrc + 1, sizeof(*w->sb));
	w->se = calloc(nsrc + 1, sizeof(*w->se));
	w->cor = calloc(nsrc + 1, sizeof(*w->cor));
	w->snb = calloc(nsrc + 1, sizeof(*w->snb));
	w->has = calloc(nsrc + 1, sizeof(*w->has));
	if (!w->smin || !w->smax || !w->rfirst || !w->rcount || !w->sb || !w->se || !w->cor || !w->snb || !w->has)
		return TL_NOMEM;
	for (size_t i = 0; i < tl->nranges; i++) {
		size_t s = (size_t)tl->ranges[i].source;
		if (w->rcount[s]++ == 0)
			w->rfirst[s] = i;
	}
	return 0;
}

/* With --iters, a source without ranges is cut by its extent, known only after reading everything:
 * one extra pass over the chunk or the spill file. */
static int source_extents(struct gt_tl *tl, struct wins *w, int iters)
{
	int need_extent = 0;
	for (size_t s = 0; s < w->nsrc; s++)
		if (!w->rcount[s] && iters > 0)
			need_extent = 1;
	if (!need_extent)
		return 0;
	if (tl->nruns == 0) {
		for (size_t i = 0; i < tl->nchunk; i++) {
			size_t s = (size_t)tl->gpus[tl->chunk[i].gpu].source;
			if (!w->smin[s] || tl->chunk[i].start < w->smin[s])
				w->smin[s] = tl->chunk[i].start;
			if (tl->chunk[i].end > w->smax[s])
				w->smax[s] = tl->chunk[i].end;
		}
		return 0;
	}
	if (tl->nchunk && spill_chunk(tl) < 0)
		return TL_FAIL;
	rewind(tl->spill);
	struct gt_ev ev;
	while (fread(&ev, sizeof(ev), 1, tl->spill) == 1) {
		size_t s = (size_t)tl->gpus[ev.gpu].source;
		if (!w->smin[s] || ev.start < w->smin[s])
			w->smin[s] = ev.start;
		if (ev.end > w->smax[s])
			w->smax[s] = ev.end;
	}
	return 0;
}

/* Window starts and ends per source; with ranges, room for the correlation-id boundaries (unknown:
 * UINT64_MAX until launch_bounds sets them). */
static int window_bounds(const struct gt_tl *tl, struct wins *w, int iters)
{
	size_t nb = 0, ncor = 0;
	for (size_t s = 0; s < w->nsrc; s++) {
		nb += w->rcount[s] ? w->rcount[s] : (iters > 0 ? (size_t)iters : 0);
		ncor += w->rcount[s] ? w->rcount[s] + 1 : 0;
	}
	w->bnd_all = calloc(nb + 1, sizeof(uint64_t));
	w->ends = calloc(nb + 1, sizeof(uint64_t));
	w->cor_all = malloc((ncor + 1) * sizeof(uint64_t));
	if (!w->bnd_all || !w->ends || !w->cor_all)
		return TL_NOMEM;
	for (size_t i = 0; i < ncor; i++)
		w->cor_all[i] = UINT64_MAX;
	size_t k = 0, kc = 0;
	for (size_t s = 0; s < w->nsrc; s++) {
		w->sb[s] = w->bnd_all + k;
		w->se[s] = w->ends + k;
		if (w->rcount[s]) {
			for (size_t i = 0; i < w->rcount[s]; i++) {
				w->bnd_all[k] = tl->ranges[w->rfirst[s] + i].start;
				w->ends[k++] = tl->ranges[w->rfirst[s] + i].end;
			}
			w->snb[s] = w->rcount[s];
			w->cor[s] = w->cor_all + kc;
			kc += w->rcount[s] + 1;
		} else if (iters > 0 && w->smax[s] > w->smin[s]) {
			uint64_t span = w->smax[s] - w->smin[s];
			for (int i = 0; i < iters; i++) {
				w->bnd_all[k] = w->smin[s] + (uint64_t)((double)span * i / iters);
				w->ends[k++] = w->smin[s] + (uint64_t)((double)span * (i + 1) / iters);
			}
			w->snb[s] = (size_t)iters;
		}
	}
	return 0;
}

/* Each GPU's row (label, windows) and its sweep state. */
static int gpus_open(struct gt_tl *tl, struct gt_an_result *r, struct gstate *gs, const struct wins *w)
{
	for (size_t i = 0; i < tl->ngpus; i++) {
		size_t s = (size_t)tl->gpus[i].source;
		struct gt_an_gpu *gp = &r->gpu[i];
		const char *lab = s < tl->nlabels ? tl->labels[s] : NULL;
		if (lab)
			snprintf(gp->label, sizeof(gp->label), "%.40s/gpu%d", lab, tl->gpus[i].device);
		else
			snprintf(gp->label, sizeof(gp->label), "rank%d/gpu%d", tl->gpus[i].source, tl->gpus[i].device);
		gp->source = tl->gpus[i].source;
		gp->device = tl->gpus[i].device;
		gs[i].w = -1;
		gs[i].source = (int)s;
		gs[i].last_step = tl->ranges_are_steps && w->rcount[s] >= 2
					  ? tl->ranges[w->rfirst[s] + w->rcount[s] - 1].start
					  : UINT64_MAX;
		if (tl->dt)
			gt_dt_extent(tl->dt, i, tl->gpus[i].first, tl->gpus[i].last);
		gs[i].bnd = w->sb[s];
		gs[i].nbnd = w->snb[s];
		gs[i].cor = w->has[s] ? w->cor[s] : NULL;
		if (w->snb[s]) {
			gp->iters = calloc(w->snb[s], sizeof(*gp->iters));
			gs[i].acc = calloc(w->snb[s], sizeof(*gs[i].acc));
			if (!gp->iters || !gs[i].acc)
				return TL_NOMEM;
			gp->niters = w->snb[s];
			for (size_t j = 0; j < w->snb[s]; j++) {
				gp->iters[j].start_ns = w->sb[s][j];
				gp->iters[j].end_ns = j + 1 < w->snb[s] ? w->sb[s][j + 1] : w->se[s][j];
			}
		}
		gs[i].win = gp->iters;
	}
	return 0;
}

/* The heap of spilled runs, ordered by each run's next event. */
static int run_less(const struct run_rd *rd, size_t a, size_t b)
{
	return ev_cmp(&rd[a].buf[rd[a].pos], &rd[b].buf[rd[b].pos]) < 0;
}

static void heap_up(size_t *heap, size_t c, const struct run_rd *rd)
{
	while (c && run_less(rd, heap[c], heap[(c - 1) / 2])) {
		size_t t = heap[c];
		heap[c] = heap[(c - 1) / 2];
		heap[(c - 1) / 2] = t;
		c = (c - 1) / 2;
	}
}

static void heap_down(size_t *heap, size_t hn, const struct run_rd *rd)
{
	size_t c = 0;
	for (;;) {
		size_t l = 2 * c + 1, m = c;
		if (l < hn && run_less(rd, heap[l], heap[m]))
			m = l;
		if (l + 1 < hn && run_less(rd, heap[l + 1], heap[m]))
			m = l + 1;
		if (m == c)
			break;
		size_t t = heap[c];
		heap[c] = heap[m];
		heap[m] = t;
		c = m;
	}
}

/* The spilled runs merged (k-way, one buffer per run in the chunk's memory) into the sweep. */
static int merge_runs(struct gt_tl *tl, struct gstate *gs, struct gt_an_gpu *gpus, const struct ljoin *lj)
{
	if (tl->nchunk && spill_chunk(tl) < 0)
		return TL_FAIL;
	fflush(tl->spill);
	size_t nr = tl->nruns, bufn = tl->chunk_cap / nr;
	if (bufn < 1) { /* more runs than chunk slots: grow the chunk to one slot per run */
		bufn = 1;
		struct gt_ev *nc = realloc(tl->chunk, nr * sizeof(*nc));
		if (!nc)
			return TL_FAIL;
		tl->chunk = nc;
		tl->chunk_cap = nr;
	}
	int rc = TL_FAIL;
	struct run_rd *rd = calloc(nr, sizeof(*rd));
	size_t *heap = calloc(nr, sizeof(*heap));
	if (!rd || !heap)
		goto out;
	size_t hn = 0;
	for (size_t i = 0; i < nr; i++) {
		rd[i].buf = tl->chunk + i * bufn; /* the chunk's memory is free now: reuse it */
		rd[i].next = tl->run_off[i];
		rd[i].left = tl->run_len[i];
		if (run_fill(tl, &rd[i], bufn) < 0)
			goto out;
		if (rd[i].n) {
			heap[hn] = i;
			heap_up(heap, hn++, rd);
		}
	}
	while (hn) {
		struct run_rd *top = &rd[heap[0]];
		sweep_one(tl, gs, gpus, &top->buf[top->pos], lj);
		if (++top->pos == top->n) {
			if (top->left) {
				if (run_fill(tl, top, bufn) < 0)
					goto out;
			} else {
				heap[0] = heap[--hn];
			}
		}
		heap_down(heap, hn, rd);
	}
	rc = 0;
out:
	free(rd);
	free(heap);
	return rc;
}

/* Close what is still open: each GPU's merged intervals into its total and windows, and the total
 * of all GPUs. */
static void close_windows(struct gstate *gs, struct gt_an_result *r)
{
	memset(&r->total, 0, sizeof(r->total));
	for (size_t i = 0; i < r->ngpu; i++) {
		struct gstate *g = &gs[i];
		struct gt_an_gpu *gp = &r->gpu[i];
		for (int u = 0; u < U_N; u++)
			flush(&g->tot, u, &gp->total);
		for (size_t j = 0; j < g->nbnd; j++)
			for (int u = 0; u < U_N; u++)
				flush(&g->acc[j], u, &g->win[j]);
		finish_window(&gp->total);
		gp->total.start_ns = gp->total.first_ns;
		gp->total.end_ns = gp->total.last_ns;
		for (size_t j = 0; j < gp->niters; j++) {
			finish_window(&gp->iters[j]);
			if (j + 1 == gp->niters && gp->iters[j].last_ns > gp->iters[j].end_ns)
				gp->iters[j].end_ns = gp->iters[j].last_ns;
		}
		sum_window(&r->total, &gp->total);
	}
}

/* NVTX range time, as nsys's nvtx_gpu_proj_trace when the launches are known: per range, the first
 * start to the last end of the GPU work it launched, over the source's GPUs; else the CPU range. */
static void nvtx_time(struct gt_tl *tl, const struct gt_an_result *r, const struct wins *w)
{
	tl->nvtx_total_ns = 0;
	int nproj = 0, ncpu = 0;
	for (size_t s = 0; s < w->nsrc; s++) {
		if (!w->rcount[s])
			continue;
		if (!w->has[s]) {
			ncpu++;
			for (size_t i = 0; i < w->rcount[s]; i++)
				tl->nvtx_total_ns += (double)(w->se[s][i] - w->sb[s][i]);
			continue;
		}
		nproj++;
		for (size_t j = 0; j < w->snb[s]; j++) {
			uint64_t lo = 0, hi = 0;
			for (size_t i = 0; i < r->ngpu; i++) {
				const struct gt_an_window *gw = (size_t)r->gpu[i].source == s ? &r->gpu[i].iters[j] : NULL;
				if (!gw || !gw->last_ns)
					continue;
				if (!lo || gw->first_ns < lo)
					lo = gw->first_ns;
				if (gw->last_ns > hi)
					hi = gw->last_ns;
			}
			tl->nvtx_total_ns += (double)(hi - lo);
		}
	}
	tl->nvtx_projected = nproj ? (ncpu ? 2 : 1) : 0;
}

/* The phases: the windows of each source, the GPUs' rows, the launches for the join, the sweep in
 * start order, closing what is open, the NVTX time. */
static int tl_finish(struct gt_tl *tl, struct gt_an_result *r, int iters, struct gstate *gs, struct wins *w,
		     struct ljoin *lj)
{
	int rc;
	gt_sort(tl->ranges, tl->nranges, sizeof(*tl->ranges), range_cmp);
	/* windows must be known before the sweep */
	if ((rc = wins_open(tl, w)) < 0 || (rc = source_extents(tl, w, iters)) < 0 ||
	    (rc = window_bounds(tl, w, iters)) < 0)
		return rc;
	if (tl->nlaunches && tl->nranges && launch_bounds(tl, w->nsrc, w->sb, w->se, w->snb, w->cor, w->has) < 0)
		return TL_FAIL;
	if ((rc = gpus_open(tl, r, gs, w)) < 0)
		return rc;
	if (tl->dt)
		gt_dt_begin(tl->dt, r);
	if (tl->fd)
		gt_fd_begin(tl->fd, r);
	/* the launches, for the per-op join: sorted by (source, correlation id) */
	if (tl->nlaunches && gt_tl_each_launch(tl, ljoin_add, lj) < 0)
		return TL_FAIL;
	if (lj->failed)
		return TL_NOMEM;
	gt_sort(lj->v, lj->n, sizeof(*lj->v), launch_cmp);
	/* the sweep, in start order */
	if (tl->nruns == 0) {
		sort_chunk(tl);
		for (size_t i = 0; i < tl->nchunk; i++)
			sweep_one(tl, gs, r->gpu, &tl->chunk[i], lj);
	} else if ((rc = merge_runs(tl, gs, r->gpu, lj)) < 0) {
		return rc;
	}
	close_windows(gs, r);
	if (tl->err[0])
		return TL_FAIL;
	if (tl->dt && gt_dt_finish(tl->dt, r, tl->names) < 0)
		return TL_NOMEM;
	nvtx_time(tl, r, w);
	return 0;
}

int gt_tl_finish(struct gt_tl *tl, struct gt_an_result *r, int iters, char *err, size_t errlen)
{
	size_t ng = tl->ngpus;
	struct wins w = {0};
	struct ljoin lj = {0};
	int rc = TL_NOMEM;
	r->gpu = calloc(ng ? ng : 1, sizeof(*r->gpu));
	struct gstate *gs = calloc(ng ? ng : 1, sizeof(*gs));
	if (r->gpu && gs) {
		r->ngpu = ng;
		rc = tl_finish(tl, r, iters, gs, &w, &lj);
	}
	if (rc == TL_FAIL)
		snprintf(err, errlen, "%s", tl->err[0] ? tl->err : "out of memory while sorting the timeline");
	else if (rc == TL_NOMEM)
		snprintf(err, errlen, "out of memory while sorting the timeline");
	if (gs)
		for (size_t i = 0; i < ng; i++)
			free(gs[i].acc);
	free(gs);
	wins_free(&w);
	free(lj.v);
	return rc < 0 ? -1 : 0;
}
