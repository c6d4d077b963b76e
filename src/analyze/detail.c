/*
 * analyze/detail.c — the per-op analyses, fed by the timeline sweep one op at a time in start order
 * (each op with its launch call, when the trace has it, and its iteration):
 *
 *  - idle time between consecutive ops of one stream, by cause, as HTA's idle time breakdown: host
 *    wait (the launch call of the op started after the previous op had ended: the CPU was late),
 *    kernel wait (a gap below the kernel-wait threshold: launch overhead), other;
 *  - the launch queue of each stream, as HTA's queue length: +1 when a launch call starts, -1 when
 *    its op starts on the GPU.  On one stream ops start in the order they were launched, so the ops
 *    still queued are a FIFO of start times: O(queue depth) memory per stream;
 *  - per kernel and rank: time, count, and the launches: launch delay (GPU start - end of the launch
 *    call, 0 if negative: HTA's launch_delay), every delay kept (8 bytes per launched op, as the
 *    launches themselves are held for the join) so that its percentiles are exact, short kernels
 *    (launch call <= runtime cutoff and op shorter than its launch call), delay and runtime outliers.
 *    A launch call with several ops (cudaGraphLaunch) counts once, with its first op: in the
 *    launch statistics and in the queue;
 *  - per memory-operation kind and GPU: bytes, time, the bandwidth of the ops running at once
 *    (HTA's memory bandwidth series: +bw at start, -bw at end), its largest value in each time
 *    bucket and GB/s moved per time bucket;
 *  - with per_iter_kernels, count and time per kernel name and iteration (gputap diff).
 *
 * Memory: one row per (kernel name, rank), per stream and per (GPU, kind), and one delay per launched
 * op (as the launch calls the sweep joins with).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/an_internal.h"
#include "core/sort.h"

/* open addressing: 64-bit key -> index + 1 */
struct map {
	uint64_t *k;
	uint32_t *v;
	size_t cap, n;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* Index of key, -1 if absent; with `add`, inserts `next` and returns it. */
static long map_get(struct map *m, uint64_t key, int add, uint32_t next)
{
	if (add && (m->n + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 256;
		uint64_t *k = calloc(nc, sizeof(*k));
		uint32_t *v = calloc(nc, sizeof(*v));
		if (!k || !v) {
			free(k);
			free(v);
			return -2;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->v[i]) {
				size_t j = mix(m->k[i]) & (nc - 1);
				while (v[j])
					j = (j + 1) & (nc - 1);
				k[j] = m->k[i];
				v[j] = m->v[i];
			}
		free(m->k);
		free(m->v);
		m->k = k;
		m->v = v;
		m->cap = nc;
	}
	if (!m->cap)
		return -1;
	size_t j = mix(key) & (m->cap - 1);
	while (m->v[j]) {
		if (m->k[j] == key)
			return (long)m->v[j] - 1;
		j = (j + 1) & (m->cap - 1);
	}
	if (!add)
		return -1;
	m->k[j] = key;
	m->v[j] = next + 1;
	m->n++;
	return (long)next;
}

static void map_free(struct map *m)
{
	free(m->k);
	free(m->v);
}

struct kacc { /* one kernel name of one rank */
	uint32_t name;
	int source;
	double time, min, max, cpu, delay, delay_max;
	uint64_t count, launched, short_n, dout, rout;
	uint64_t *delays; /* one per launched op (launched of them) */
	size_t cap_delays;
};

struct sacc { /* one stream of one GPU */
	size_t gpu;
	uint32_t stream;
	uint64_t ops, queued;
	int has_prev;
	uint64_t prev_end;
	double idle[GT_IDLE_N];
	uint64_t idle_n[GT_IDLE_N];
	/* the queue: start times of launched ops not started yet */
	uint64_t *fifo;
	size_t head, len, cap;
	uint32_t q, qmax;
	uint64_t t0, tlast;
	int started;
	double qsum, qarea;
	uint64_t changes;
	uint32_t *series;
};

struct macc { /* one memory-operation kind of one GPU */
	size_t gpu;
	int kind;
	uint64_t count, bytes;
	double time, cur, peak_max, psum;
	uint64_t pn;
	uint64_t tlast; /* when `cur` last changed */
	struct {
		uint64_t end;
		double bw;
	} *act; /* ops running now */
	size_t nact, capact;
	double *series; /* bytes per bucket */
	double *peak;   /* the largest `cur` in each bucket */
};

struct iacc {
	uint32_t name;
	long iter;
	uint64_t count;
	double time;
};

struct gt_dt {
	const struct gt_an_opts *o;
	size_t ngpus, nb;
	uint64_t *b0, *bw; /* per GPU: bucket start and width */
	uint64_t first, last; /* extent of all GPUs' ops (for the sink) */
	double kwait, rcut, dcut;
	struct map km, sm, mm, im;
	struct kacc *k;
	size_t nk, capk;
	struct sacc *s;
	size_t ns, caps;
	struct macc *m;
	size_t nm, capm;
	struct iacc *it;
	size_t nit, capit;
	uint8_t *mkind; /* per name index: memory kind + 1, 0 not known yet */
	size_t nmkind;
	const struct gt_names *names;
};

static const char *const mkinds[] = {"Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memcpy PtoP",
				     "Memcpy HtoH", "Memset",	   "Memcpy Unknown"};
enum { MK_N = sizeof(mkinds) / sizeof(mkinds[0]), MK_MEMSET = 5 };

/* Kind of a memory-operation name as the name table holds it ("[CUDA memcpy H2D]", "[CUDA memset]"). */
static int mkind_of(const char *n)
{
	if (!n)
		return MK_N - 1;
	if (strstr(n, "memset") || strstr(n, "Memset"))
		return MK_MEMSET;
	static const char *const tag[] = {"H2D", "D2H", "D2D", "P2P", "H2H"};
	for (int i = 0; i < 5; i++)
		if (strstr(n, tag[i]))
			return i;
	return MK_N - 1;
}

struct gt_dt *gt_dt_new(const struct gt_an_opts *o, size_t ngpus, const struct gt_names *names)
{
	struct gt_dt *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->o = o;
	d->names = names;
	d->ngpus = ngpus;
	d->nb = o->buckets > 0 ? (size_t)o->buckets : 20;
	d->kwait = o->kernel_wait_ns > 0 ? o->kernel_wait_ns : 30000.0;
	d->rcut = o->runtime_cutoff_ns > 0 ? o->runtime_cutoff_ns : 50000.0;
	d->dcut = o->delay_cutoff_ns > 0 ? o->delay_cutoff_ns : 100000.0;
	d->b0 = calloc(ngpus + 1, sizeof(*d->b0));
	d->bw = calloc(ngpus + 1, sizeof(*d->bw));
	if (!d->b0 || !d->bw) {
		gt_dt_free(d);
		return NULL;
	}
	return d;
}

void gt_dt_free(struct gt_dt *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nk; i++)
		free(d->k[i].delays);
	for (size_t i = 0; i < d->ns; i++) {
		free(d->s[i].fifo);
		free(d->s[i].series);
	}
	for (size_t i = 0; i < d->nm; i++) {
		free(d->m[i].act);
		free(d->m[i].series);
		free(d->m[i].peak);
	}
	free(d->k);
	free(d->s);
	free(d->m);
	free(d->it);
	free(d->mkind);
	free(d->b0);
	free(d->bw);
	map_free(&d->km);
	map_free(&d->sm);
	map_free(&d->mm);
	map_free(&d->im);
	free(d);
}

void gt_dt_extent(struct gt_dt *d, size_t g, uint64_t first, uint64_t last)
{
	if (g >= d->ngpus)
		return;
	if (first > last)
		first = last = 0;
	uint64_t w = (last - first + d->nb - 1) / d->nb;
	d->b0[g] = first;
	d->bw[g] = w ? w : 1;
	if (last > first) {
		if (!d->first || first < d->first)
			d->first = first;
		if (last > d->last)
			d->last = last;
	}
}

void gt_dt_begin(struct gt_dt *d, const struct gt_an_result *r)
{
	const struct gt_an_sink *k = d->o->sink;
	if (k && k->begin)
		k->begin(k->arg, r, d->first, d->last);
}

static size_t bucket(const struct gt_dt *d, size_t g, uint64_t t)
{
	if (t <= d->b0[g])
		return 0;
	uint64_t b = (t - d->b0[g]) / d->bw[g];
	return b < d->nb ? (size_t)b : d->nb - 1;
}

static int grow(void **v, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	void *nv = realloc(*v, nc * sz);
	if (!nv)
		return -1;
	memset((char *)nv + *cap * sz, 0, (nc - *cap) * sz);
	*v = nv;
	*cap = nc;
	return 0;
}

/* The queue length of stream s changes by `delta` at time t. */
static void q_change(struct gt_dt *d, struct sacc *s, uint64_t t, int delta)
{
	if (!s->started) {
		s->started = 1;
		s->t0 = s->tlast = t;
	}
	if (t < s->tlast) /* launch calls of one stream from several threads: not quite in order */
		t = s->tlast;
	s->qarea += (double)s->q * (double)(t - s->tlast);
	s->tlast = t;
	if (delta < 0 && s->q == 0)
		return;
	s->q = delta < 0 ? s->q - 1 : s->q + 1;
	s->qsum += s->q;
	s->changes++;
	if (s->q > s->qmax)
		s->qmax = s->q;
	size_t b = bucket(d, s->gpu, t);
	if (s->series && s->q > s->series[b])
		s->series[b] = s->q;
}

static struct sacc *stream_of(struct gt_dt *d, size_t g, uint32_t stream)
{
	uint64_t key = (uint64_t)g << 32 | stream;
	long i = map_get(&d->sm, key, 1, (uint32_t)d->ns);
	if (i < 0)
		return NULL;
	if ((size_t)i == d->ns) {
		if (grow((void **)&d->s, &d->caps, d->ns + 1, sizeof(*d->s)) < 0)
			return NULL;
		struct sacc *s = &d->s[d->ns++];
		s->gpu = g;
		s->stream = stream;
		if (!(s->series = calloc(d->nb, sizeof(*s->series))))
			return NULL;
	}
	return &d->s[i];
}

/* `first`: the first op of its launch call (0: a later op of a graph launch, already queued). */
static int stream_op(struct gt_dt *d, const struct gt_ev *e, const struct gt_launch *l, int first)
{
	struct sacc *s = stream_of(d, e->gpu, e->stream);
	if (!s)
		return -1;
	s->ops++;
	if (s->has_prev) { /* HTA: idle_interval = start - previous op's end, first op of a stream: none */
		int cause = GT_IDLE_OTHER;
		/* in integer ns: epoch times (~1.7e18 ns) are 256 ns apart as doubles */
		int64_t gap = (int64_t)(e->start - s->prev_end);
		if (l && l->start > s->prev_end)
			cause = GT_IDLE_HOST;
		else if ((double)gap < d->kwait)
			cause = GT_IDLE_KERNEL;
		s->idle[cause] += (double)gap;
		s->idle_n[cause]++;
	}
	s->has_prev = 1;
	s->prev_end = e->end;
	if (!l || !first)
		return 0;
	/* the queue: ops started by now leave it, this op's launch enters it */
	while (s->len && s->fifo[s->head] <= l->start) {
		q_change(d, s, s->fifo[s->head], -1);
		s->head = (s->head + 1) % s->cap;
		s->len--;
	}
	q_change(d, s, l->start, +1);
	if (s->len == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		uint64_t *f = malloc(nc * sizeof(*f));
		if (!f)
			return -1;
		for (size_t i = 0; i < s->len; i++)
			f[i] = s->fifo[(s->head + i) % s->cap];
		free(s->fifo);
		s->fifo = f;
		s->head = 0;
		s->cap = nc;
	}
	s->fifo[(s->head + s->len) % s->cap] = e->start;
	s->len++;
	s->queued++;
	return 0;
}

static int kernel_op(struct gt_dt *d, const struct gt_ev *e, int source, const struct gt_launch *l, int first)
{
	if (e->name == GT_NO_NAME)
		return 0;
	uint64_t key = (uint64_t)(uint32_t)source << 32 | e->name;
	long i = map_get(&d->km, key, 1, (uint32_t)d->nk);
	if (i < 0)
		return -1;
	if ((size_t)i == d->nk) {
		if (grow((void **)&d->k, &d->capk, d->nk + 1, sizeof(*d->k)) < 0)
			return -1;
		d->k[d->nk].name = e->name;
		d->k[d->nk].source = source;
		d->nk++;
	}
	struct kacc *k = &d->k[i];
	double dur = (double)(e->end - e->start);
	if (!k->count || dur < k->min)
		k->min = dur;
	if (dur > k->max)
		k->max = dur;
	k->time += dur;
	k->count++;
	if (!l || !first)
		return 0;
	if (grow((void **)&k->delays, &k->cap_delays, k->launched + 1, sizeof(*k->delays)) < 0)
		return -1;
	uint64_t lend = l->start + l->dur;
	uint64_t delay = e->start > lend ? e->start - lend : 0;
	k->delays[k->launched] = delay;
	k->launched++;
	k->cpu += l->dur;
	k->delay += (double)delay;
	if ((double)delay > k->delay_max)
		k->delay_max = (double)delay;
	if ((double)l->dur <= d->rcut && dur < (double)l->dur)
		k->short_n++;
	if ((double)delay > d->dcut)
		k->dout++;
	if ((double)l->dur > d->rcut)
		k->rout++;
	return 0;
}

/* `cur` held from m->tlast to t: the largest value of each bucket it covered */
static void mem_level(struct gt_dt *d, struct macc *m, uint64_t t)
{
	if (m->cur > 0) {
		size_t b = bucket(d, m->gpu, m->tlast), be = t > m->tlast ? bucket(d, m->gpu, t - 1) : b;
		for (size_t j = b; j <= be; j++)
			if (m->cur > m->peak[j])
				m->peak[j] = m->cur;
	}
	if (t > m->tlast)
		m->tlast = t;
}

static void mem_pop(struct gt_dt *d, struct macc *m, uint64_t until)
{
	for (;;) { /* the ops that ended by `until`, earliest end first */
		size_t best = m->nact;
		for (size_t i = 0; i < m->nact; i++)
			if (m->act[i].end <= until && (best == m->nact || m->act[i].end < m->act[best].end))
				best = i;
		if (best == m->nact)
			return;
		if (m->act[best].end != UINT64_MAX)
			mem_level(d, m, m->act[best].end);
		m->cur -= m->act[best].bw;
		if (m->cur < 1e-12)
			m->cur = 0;
		if (m->cur > 0) {
			m->psum += m->cur;
			m->pn++;
		}
		m->act[best] = m->act[--m->nact];
	}
}

/* The kind of a memory operation (index into mkinds), -1 out of memory. */
static int mem_kind(struct gt_dt *d, const struct gt_ev *e)
{
	if (e->name == GT_NO_NAME || !d->names || e->name >= d->names->n)
		return MK_N - 1;
	if (e->name >= d->nmkind && grow((void **)&d->mkind, &d->nmkind, (size_t)e->name + 1, 1) < 0)
		return -1;
	if (!d->mkind[e->name])
		d->mkind[e->name] = (uint8_t)(mkind_of(d->names->v[e->name].name) + 1);
	return d->mkind[e->name] - 1;
}

static int mem_op(struct gt_dt *d, const struct gt_ev *e, int kind)
{
	uint64_t key = (uint64_t)e->gpu << 8 | (uint64_t)kind;
	long i = map_get(&d->mm, key, 1, (uint32_t)d->nm);
	if (i < 0)
		return -1;
	if ((size_t)i == d->nm) {
		if (grow((void **)&d->m, &d->capm, d->nm + 1, sizeof(*d->m)) < 0)
			return -1;
		struct macc *m = &d->m[d->nm++];
		m->gpu = e->gpu;
		m->kind = kind;
		if (!(m->series = calloc(d->nb, sizeof(*m->series))) || !(m->peak = calloc(d->nb, sizeof(*m->peak))))
			return -1;
	}
	struct macc *m = &d->m[i];
	uint64_t dur = e->end - e->start;
	/* the bandwidth from the exact ns duration when the trace has it (Kineto: from its own
	 * "memory bandwidth (GB/s)", as HTA reads it), else from the op's times */
	uint64_t xdur = e->xdur ? e->xdur : dur;
	m->count++;
	m->bytes += e->bytes;
	m->time += (double)xdur;
	if (!e->bytes)
		return 0;
	double bw = (double)e->bytes / (double)(xdur ? xdur : 1); /* bytes per ns = GB/s */
	mem_pop(d, m, e->start);
	if (grow((void **)&m->act, &m->capact, m->nact + 1, sizeof(*m->act)) < 0)
		return -1;
	mem_level(d, m, e->start);
	m->act[m->nact].end = e->end;
	m->act[m->nact++].bw = bw;
	m->cur += bw;
	m->psum += m->cur;
	m->pn++;
	if (m->cur > m->peak_max)
		m->peak_max = m->cur;
	if (m->cur > m->peak[bucket(d, e->gpu, e->start)]) /* a zero-length op too */
		m->peak[bucket(d, e->gpu, e->start)] = m->cur;
	/* the bytes into the time buckets the op covers, in proportion */
	size_t g = e->gpu, b = bucket(d, g, e->start), be = bucket(d, g, e->end ? e->end - 1 : 0);
	if (!dur || b == be) {
		m->series[b] += (double)e->bytes;
		return 0;
	}
	for (size_t j = b; j <= be; j++) {
		uint64_t lo = d->b0[g] + (uint64_t)j * d->bw[g], hi = lo + d->bw[g];
		uint64_t a = e->start > lo ? e->start : lo, z = e->end < hi ? e->end : hi;
		if (j == d->nb - 1)
			z = e->end;
		if (z > a)
			m->series[j] += (double)e->bytes * (double)(z - a) / (double)dur;
	}
	return 0;
}

static int iter_op(struct gt_dt *d, const struct gt_ev *e, long iter)
{
	if (e->name == GT_NO_NAME)
		return 0;
	uint64_t key = (uint64_t)e->name << 32 | (uint32_t)(iter + 1);
	long i = map_get(&d->im, key, 1, (uint32_t)d->nit);
	if (i < 0)
		return -1;
	if ((size_t)i == d->nit) {
		if (grow((void **)&d->it, &d->capit, d->nit + 1, sizeof(*d->it)) < 0)
			return -1;
		d->it[d->nit].name = e->name;
		d->it[d->nit].iter = iter;
		d->nit++;
	}
	d->it[i].count++;
	d->it[i].time += (double)(e->end - e->start);
	return 0;
}

int gt_dt_op(struct gt_dt *d, const struct gt_ev *e, int source, struct gt_launch *l, long iter)
{
	if (e->gpu >= d->ngpus)
		return 0;
	int first = l && !(l->flags & GT_L_OPS); /* ops come in start order: the first of a graph launch */
	if (l)
		l->flags |= GT_L_OPS;
	if (stream_op(d, e, l, first) < 0 || kernel_op(d, e, source, l, first) < 0)
		return -1;
	int mk = e->cat == GT_CAT_MEMOP ? mem_kind(d, e) : 0;
	if (mk < 0 || (e->cat == GT_CAT_MEMOP && mem_op(d, e, mk) < 0))
		return -1;
	const struct gt_an_sink *k = d->o->sink;
	if (k && k->op)
		k->op(k->arg, e->gpu, e->stream, e->start, e->end, e->cat != GT_CAT_MEMOP ? 0 : mk == MK_MEMSET ? 2 : 1,
		      e->cat == GT_CAT_COMM);
	if (d->o->per_iter_kernels && iter_op(d, e, iter) < 0)
		return -1;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The p-quantile of n sorted values, interpolated between the two nearest as numpy's default
 * ("linear"); NAN when there is none: unknown, never 0. */
static double percentile(const uint64_t *v, uint64_t n, double p)
{
	if (!v || !n)
		return NAN;
	double h = p * (double)(n - 1);
	uint64_t lo = (uint64_t)h, hi = lo + 1 < n ? lo + 1 : lo;
	return (double)v[lo] + (h - (double)lo) * ((double)v[hi] - (double)v[lo]);
}

static int kern_cmp(const void *a, const void *b)
{
	const struct gt_an_kernel *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	if (x->cat != y->cat)
		return x->cat < y->cat ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int stream_cmp(const void *a, const void *b)
{
	const struct gt_an_stream *x = a, *y = b;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int membw_cmp(const void *a, const void *b)
{
	const struct gt_an_membw *x = a, *y = b;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return strcmp(x->kind, y->kind);
}

static int iterk_cmp(const void *a, const void *b)
{
	const struct gt_an_iterk *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->iter < y->iter ? -1 : x->iter > y->iter;
}

int gt_dt_finish(struct gt_dt *d, struct gt_an_result *r, const struct gt_names *names)
{
	r->nbuckets = d->nb;
	r->top = d->o->top > 0 ? d->o->top : 5;
	r->kernel_wait_ns = d->kwait;
	r->runtime_cutoff_ns = d->rcut;
	r->delay_cutoff_ns = d->dcut;
	for (size_t g = 0; g < r->ngpu && g < d->ngpus; g++) {
		r->gpu[g].bucket0_ns = d->b0[g];
		r->gpu[g].bucket_ns = d->bw[g];
	}
	/* streams: close the queues */
	r->streams = calloc(d->ns ? d->ns : 1, sizeof(*r->streams));
	if (!r->streams)
		return -1;
	for (size_t i = 0; i < d->ns; i++) {
		struct sacc *s = &d->s[i];
		while (s->len) {
			q_change(d, s, s->fifo[s->head], -1);
			s->head = (s->head + 1) % s->cap;
			s->len--;
		}
		struct gt_an_stream *o = &r->streams[r->nstreams++];
		o->gpu = s->gpu;
		o->stream = s->stream;
		o->ops = s->ops;
		memcpy(o->idle_ns, s->idle, sizeof(o->idle_ns));
		memcpy(o->idle_n, s->idle_n, sizeof(o->idle_n));
		o->queued = s->queued;
		o->queue_max = s->qmax;
		o->queue_mean = s->changes ? s->qsum / (double)s->changes : 0;
		o->queue_time_mean = s->tlast > s->t0 ? s->qarea / (double)(s->tlast - s->t0) : 0;
		o->queue_series = s->series;
		s->series = NULL;
	}
	gt_sort(r->streams, r->nstreams, sizeof(*r->streams), stream_cmp);
	/* kernels */
	r->kernels = calloc(d->nk ? d->nk : 1, sizeof(*r->kernels));
	if (!r->kernels)
		return -1;
	for (size_t i = 0; i < d->nk; i++) {
		const struct kacc *k = &d->k[i];
		if (k->name >= names->n)
			continue;
		struct gt_an_kernel *o = &r->kernels[r->nkernels];
		if (!(o->name = strdup(names->v[k->name].name)))
			return -1;
		r->nkernels++;
		o->source = k->source;
		o->cat = names->v[k->name].cat;
		o->time_ns = k->time;
		o->min_ns = k->min;
		o->max_ns = k->max;
		o->count = k->count;
		o->launched = k->launched;
		o->cpu_ns = k->cpu;
		if (k->delays)
			gt_sort(k->delays, k->launched, sizeof(*k->delays), u64_cmp);
		/* no launch call in the trace: the delays cannot be known (NAN: "-" and null) */
		o->delay_ns = k->delay;
		o->delay_max_ns = k->launched ? k->delay_max : NAN;
		o->delay_p50_ns = percentile(k->delays, k->launched, 0.50);
		o->delay_p90_ns = percentile(k->delays, k->launched, 0.90);
		o->delay_p99_ns = percentile(k->delays, k->launched, 0.99);
		o->short_n = k->short_n;
		o->delay_outliers = k->dout;
		o->runtime_outliers = k->rout;
	}
	gt_sort(r->kernels, r->nkernels, sizeof(*r->kernels), kern_cmp);
	/* memory bandwidth */
	r->membw = calloc(d->nm ? d->nm : 1, sizeof(*r->membw));
	if (!r->membw)
		return -1;
	for (size_t i = 0; i < d->nm; i++) {
		struct macc *m = &d->m[i];
		mem_pop(d, m, UINT64_MAX);
		struct gt_an_membw *o = &r->membw[r->nmembw++];
		o->gpu = m->gpu;
		snprintf(o->kind, sizeof(o->kind), "%s", mkinds[m->kind]);
		o->count = m->count;
		o->bytes = m->bytes;
		o->time_ns = m->time;
		o->avg_gbps = m->time > 0 ? (double)m->bytes / m->time : 0;
		o->peak_gbps = m->peak_max;
		o->mean_gbps = m->pn ? m->psum / (double)m->pn : 0;
		double w = m->gpu < d->ngpus ? (double)d->bw[m->gpu] : 1;
		for (size_t b = 0; b < d->nb; b++)
			m->series[b] /= w; /* bytes per ns = GB/s */
		o->series = m->series;
		m->series = NULL;
		o->peak_series = m->peak;
		m->peak = NULL;
	}
	gt_sort(r->membw, r->nmembw, sizeof(*r->membw), membw_cmp);
	/* kernels per iteration */
	if (d->nit) {
		r->iterk = calloc(d->nit, sizeof(*r->iterk));
		if (!r->iterk)
			return -1;
		for (size_t i = 0; i < d->nit; i++) {
			if (d->it[i].name >= names->n)
				continue;
			struct gt_an_iterk *o = &r->iterk[r->niterk];
			if (!(o->name = strdup(names->v[d->it[i].name].name)))
				return -1;
			r->niterk++;
			o->iter = d->it[i].iter;
			o->count = d->it[i].count;
			o->time_ns = d->it[i].time;
		}
		gt_sort(r->iterk, r->niterk, sizeof(*r->iterk), iterk_cmp);
	}
	return 0;
}
