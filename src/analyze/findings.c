/*
 * analyze/findings.c — the findings collector and the findings (findings.h, docs/findings.md).
 *
 * Readers hand over what the analysis does not keep (API call names, copy memory kinds, grids, SM
 * counts); the analysis' sweep hands over every GPU op in start order, from which the GPU idle gaps
 * are measured and each gap is given one cause:
 *   step        the op after the gap was launched by the next iteration (the GPU waited between steps);
 *   alloc, sync-copy, sync
 *               a call of that kind (cudaMalloc/cudaFree, cudaMemcpy, cudaStreamSynchronize, ...) of the
 *               same process returned inside the gap: the host had waited for the GPU, or for the
 *               driver, and the GPU then waited for the host to launch again;
 *   launch      the op's launch call ended after the GPU had gone idle (the host was late), gap < 200 µs;
 *   host        the same, gap of 200 µs or more (host work inside the step);
 *   other       the launch was early: a dependency (event, another stream), not counted.
 * The gains of those findings are the gaps' time per iteration: what the GPU would not have waited
 * had the host been ahead of it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yajl/yajl_gen.h>

#include "analyze/an_internal.h"
#include "analyze/emit.h"
#include "analyze/findings.h"
#include "core/demangle.h"
#include "core/sort.h"

enum { K_NONE = 0, K_SYNC, K_SYNCCOPY, K_ALLOC, K_CPUOP };
enum { C_STEP, C_ALLOC, C_SYNCCOPY, C_SYNC, C_LAUNCH, C_HOST, C_N };
#define FD_HOST_GAP_NS 200000.0 /* a host gap this long is host work, not launch overhead */
#define FD_MAXAPI 126           /* distinct synchronizing/allocating API names kept */
#define FD_BIG_MEMSET (1u << 20)
#define FD_MIN_COPY (64u << 10) /* smaller copies: latency, not bandwidth (nsys's rule skips them too) */
#define FD_TF32_SPEEDUP 6.0 /* TF32 tensor cores over FP32 CUDA cores on a large GEMM: 7.2x measured on an H100 */
#define FD_MIN_GAIN_MS 0.01 /* a finding below 10 us per iteration is not listed */

struct fd_call {
	uint64_t start, end;
	uint32_t source;
	uint16_t kind;
	uint16_t api;
};

struct fd_agg {
	uint64_t count, bytes;
	double ns;
	struct gt_fd_event ev[3];
	int nev;
	int source, device;
	uint32_t stream;
};

struct fd_kcfg {
	uint32_t blocks, threads;
	int source, device;
	uint32_t stream;
	uint64_t count, first;
	double ns;
	double in_ns; /* inside the iterations (the sweep, through the launch's flag) */
	uint64_t in_count;
};
struct fd_kname {
	const char *name; /* the analysis' name table's (valid until the analysis ends) */
	struct fd_kcfg cfg[4];
	int ncfg;
	uint64_t count, first;
	double ns;
	int source, device;
	uint32_t stream;
	double in_ns; /* inside the iterations (the sweep) */
	uint64_t in_count;
};

/* A copy or memset the sweep looks for by its launch (pageable copies, large memsets): its numbers
 * are counted there, only inside the iterations. */
enum { FL_PG_H2D, FL_PG_D2H, FL_MEMSET, FL_BULK };
#define FD_GRID_FLAG 4096 /* launches of fewer blocks are looked for in the sweep (no GPU has more SMs) */
#define FD_GRID_MIN_NS 5000.0 /* and of 5 us or more (small-grid judges kernels of 20 us or more on average) */
struct fd_flag {
	uint32_t source, corr;
	uint32_t flag;
	uint64_t bytes; /* the reader's (the sweep's ops carry none from some readers) */
};

struct fd_gflag {
	uint64_t start;
	uint32_t source;
	uint32_t kcfg; /* kernel name index * 8 + configuration */
};

struct fd_stream {
	int source, device;
	uint32_t stream;
	double kern_ns, copy_ns;
	uint64_t kernels, copies;
};

struct fd_dev {
	int source, device;
	unsigned sms, ccmaj, ccmin;
};

struct fd_src {
	uint64_t base;
	uint64_t api_calls, copies, copies_kind_known, kernels, kernels_grid;
	struct fd_agg pageable[2]; /* H2D, D2H */
	struct fd_agg memset_big;
	double pinned_gbps[2];
	uint64_t api_n[FD_MAXAPI];
	double api_ns[FD_MAXAPI];
	uint8_t *akind; /* gputap trace: API kind + 1 by string id, 0 not looked up */
	size_t nakind;
};

struct fd_gpu {
	uint64_t busy_until;
	long last_iter, prev_iter;
	int any;
	double ns[C_N], max[C_N];
	uint64_t n[C_N], iters_with[C_N];
	long last_it[C_N];
	struct gt_fd_event ev[C_N][3];
	int nev[C_N];
	double api_ns[FD_MAXAPI];
	uint64_t api_n[FD_MAXAPI];
	int pend; /* a gap ended by an op of unknown launch, judged by the next op */
	uint64_t pend_a, pend_b, pend_idle;
	long pend_last;
	double sync_left; /* what the last synchronization's wait has not yet explained of the gaps after it */
	int sync_cause, sync_api;
};

struct gt_fd {
	char *api[FD_MAXAPI]; /* synchronizing/allocating API names (and PyTorch operators) */
	int napi;
	struct fd_call *calls;
	size_t ncalls, calls_cap;
	struct fd_call *cpuops;
	size_t ncpuops, cpuops_cap;
	size_t *src_off; /* per source: first call in the calls sorted by (source, end) */
	struct fd_src *src;
	size_t nsrc;
	struct fd_kname *kx; /* by the analysis' name index */
	size_t kx_cap, nkx;
	struct fd_stream *st;
	size_t nst, st_cap, st_last;
	struct fd_dev *dev;
	size_t ndev;
	struct fd_flag *fl;
	size_t nfl, fl_cap;
	struct fd_gflag *gf; /* small-grid launches, by (source, start) */
	size_t ngf, gf_cap;
	size_t gf_cur; /* where the last look-up found its place: the sweep asks in start order */
	struct fd_gpu *gpu;
	size_t ngpu;
	const struct gt_an_result *r;
	int oom;
	char kc_name[4][48]; /* the last API names looked up (gt_fd_api), and their kinds */
	int kc_kind[4], kc_next;
};

struct gt_fd *gt_fd_new(void)
{
	return calloc(1, sizeof(struct gt_fd));
}

void gt_fd_free(struct gt_fd *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->napi; i++)
		free(f->api[i]);
	free(f->calls);
	free(f->cpuops);
	free(f->src_off);
	for (size_t i = 0; i < f->nsrc; i++)
		free(f->src[i].akind);
	free(f->src);
	free(f->kx);
	free(f->st);
	free(f->dev);
	free(f->fl);
	free(f->gf);
	free(f->gpu);
	free(f);
}

static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, nc * sz);
	if (!q)
		return -1;
	memset((char *)q + *cap * sz, 0, (nc - *cap) * sz);
	*p = q;
	*cap = nc;
	return 0;
}

static struct fd_src *src_of(struct gt_fd *f, int source)
{
	if (source < 0)
		return NULL;
	if ((size_t)source >= f->nsrc) {
		size_t cap = f->nsrc;
		if (grow((void **)&f->src, &cap, (size_t)source + 1, sizeof(*f->src)) < 0) {
			f->oom = 1;
			return NULL;
		}
		f->nsrc = cap;
	}
	return &f->src[source];
}

void gt_fd_timebase(struct gt_fd *f, int source, uint64_t base_ns)
{
	struct fd_src *s = src_of(f, source);
	if (s)
		s->base = base_ns;
}

static int api_index(struct gt_fd *f, const char *name)
{
	for (int i = 0; i < f->napi; i++)
		if (strcmp(f->api[i], name) == 0)
			return i;
	if (f->napi == FD_MAXAPI)
		return -1; /* more distinct names than that: the rest are not told apart */
	if (!(f->api[f->napi] = strdup(name))) {
		f->oom = 1;
		return -1;
	}
	return f->napi++;
}

/* What a host API call is to the findings, from its name (driver, runtime or the tap's own names). */
static int api_kind(const char *n)
{
	if (strstr(n, "Synchronize"))
		return K_SYNC;
	if (strstr(n, "Async") || strstr(n, "Peer") || strstr(n, "Graph"))
		return K_NONE;
	if (strstr(n, "Memcpy") || strstr(n, "cuMemset") || strstr(n, "cudaMemset"))
		return K_SYNCCOPY;
	if (strstr(n, "Malloc") || strstr(n, "MemAlloc") || strstr(n, "Free") || strstr(n, "MemHostAlloc"))
		return K_ALLOC;
	return K_NONE;
}

static int push_call(struct gt_fd *f, struct fd_call **v, size_t *n, size_t *cap, const struct fd_call *c)
{
	if (grow((void **)v, cap, *n + 1, sizeof(**v)) < 0) {
		f->oom = 1;
		return -1;
	}
	(*v)[(*n)++] = *c;
	return 0;
}

int gt_fd_api(struct gt_fd *f, int source, const char *name, uint64_t start, uint64_t end)
{
	struct fd_src *s = src_of(f, source);
	if (!s)
		return -1;
	s->api_calls++;
	/* a trace's runtime calls are a few names over and over: the last names looked up, remembered */
	int k = -1;
	for (int i = 0; i < 4; i++)
		if (f->kc_name[i][0] && strcmp(f->kc_name[i], name) == 0) {
			k = f->kc_kind[i];
			break;
		}
	if (k < 0) {
		k = api_kind(name);
		if (strlen(name) < sizeof(f->kc_name[0])) {
			f->kc_next = (f->kc_next + 1) % 4;
			snprintf(f->kc_name[f->kc_next], sizeof(f->kc_name[0]), "%s", name);
			f->kc_kind[f->kc_next] = k;
		}
	}
	if (k == K_NONE)
		return 0;
	int a = api_index(f, name);
	if (a < 0)
		return f->oom ? -1 : 0;
	s->api_n[a]++;
	s->api_ns[a] += (double)(end > start ? end - start : 0);
	struct fd_call c = {start, end > start ? end : start, (uint32_t)source, (uint16_t)k, (uint16_t)a};
	return push_call(f, &f->calls, &f->ncalls, &f->calls_cap, &c);
}

int gt_fd_api_id(struct gt_fd *f, int source, uint32_t id, const char *name, uint64_t start, uint64_t end)
{
	struct fd_src *s = src_of(f, source);
	if (!s)
		return -1;
	if (id >= s->nakind) {
		size_t cap = s->nakind;
		if (id > (1u << 24) || grow((void **)&s->akind, &cap, (size_t)id + 1, 1) < 0)
			return gt_fd_api(f, source, name, start, end);
		s->nakind = cap;
	}
	if (!s->akind[id])
		s->akind[id] = (uint8_t)(api_kind(name) + 1);
	if (s->akind[id] == K_NONE + 1) {
		s->api_calls++;
		return 0;
	}
	return gt_fd_api(f, source, name, start, end);
}

int gt_fd_cpu_op(struct gt_fd *f, int source, const char *name, uint64_t start, uint64_t end)
{
	if (strncmp(name, "aten::", 6) != 0)
		return 0;
	if (strcmp(name, "aten::item") && strcmp(name, "aten::_local_scalar_dense") && strcmp(name, "aten::nonzero") &&
	    strcmp(name, "aten::is_nonzero") && strcmp(name, "aten::equal") && strcmp(name, "aten::to") &&
	    strcmp(name, "aten::cpu"))
		return 0;
	int a = api_index(f, name);
	if (a < 0)
		return f->oom ? -1 : 0;
	struct fd_call c = {start, end, (uint32_t)source, K_CPUOP, (uint16_t)a};
	return push_call(f, &f->cpuops, &f->ncpuops, &f->cpuops_cap, &c);
}

static struct fd_stream *stream_of(struct gt_fd *f, int source, int device, uint32_t stream)
{
	if (f->st_last < f->nst) {
		struct fd_stream *s = &f->st[f->st_last];
		if (s->source == source && s->device == device && s->stream == stream)
			return s;
	}
	for (size_t i = 0; i < f->nst; i++)
		if (f->st[i].source == source && f->st[i].device == device && f->st[i].stream == stream) {
			f->st_last = i;
			return &f->st[i];
		}
	if (f->nst > 4096 || grow((void **)&f->st, &f->st_cap, f->nst + 1, sizeof(*f->st)) < 0)
		return NULL;
	struct fd_stream *s = &f->st[f->nst];
	s->source = source;
	s->device = device;
	s->stream = stream;
	f->st_last = f->nst++;
	return s;
}

static void agg_add(struct fd_agg *a, int source, int device, uint32_t stream, uint64_t start, uint64_t end,
		    uint64_t bytes, const char *what)
{
	if (!a->count) {
		a->source = source;
		a->device = device;
		a->stream = stream;
	}
	a->count++;
	a->bytes += bytes;
	a->ns += (double)(end - start);
	if (a->nev < 3) {
		struct gt_fd_event *e = &a->ev[a->nev++];
		e->ts_ns = start;
		e->dur_ns = end - start;
		snprintf(e->what, sizeof(e->what), "%s", what);
		snprintf(e->where, sizeof(e->where), "device %d stream %u", device, stream);
	}
}

int gt_fd_kernel(struct gt_fd *f, int source, int device, uint32_t stream, uint32_t ni, const char *name,
		 uint64_t start, uint64_t end, const uint32_t grid[3], const uint32_t block[3])
{
	struct fd_src *s = src_of(f, source);
	if (!s || end < start)
		return s ? 0 : -1;
	s->kernels++;
	double ns = (double)(end - start);
	size_t i = ni;
	if (i >= GT_TL_MAX_GPUS * 64ull || grow((void **)&f->kx, &f->kx_cap, i + 1, sizeof(*f->kx)) < 0) {
		f->oom = 1;
		return -1;
	}
	if (i + 1 > f->nkx)
		f->nkx = i + 1;
	struct fd_kname *k = &f->kx[i];
	if (!k->count) {
		k->name = name;
		k->first = start;
		k->source = source;
		k->device = device;
		k->stream = stream;
	}
	k->count++;
	k->ns += ns;
	uint64_t blocks = grid ? (uint64_t)grid[0] * grid[1] * grid[2] : 0;
	uint64_t threads = block ? (uint64_t)block[0] * block[1] * block[2] : 0;
	if (!blocks)
		return 0;
	s->kernels_grid++;
	if (blocks > UINT32_MAX)
		blocks = UINT32_MAX;
	int j;
	for (j = 0; j < k->ncfg; j++)
		if (k->cfg[j].blocks == blocks && k->cfg[j].threads == threads && k->cfg[j].device == device &&
		    k->cfg[j].source == source)
			break;
	if (j == k->ncfg) {
		if (k->ncfg == 4)
			return 0; /* a fifth shape: the four first are enough to judge the kernel */
		k->ncfg++;
		k->cfg[j] = (struct fd_kcfg){(uint32_t)blocks, (uint32_t)threads, source, device, stream, 0, start, 0, 0, 0};
	}
	k->cfg[j].count++;
	k->cfg[j].ns += ns;
	/* small grids: the sweep counts this launch's time in its configuration when it is in an iteration
	 * (found by its source and GPU start: the reader and the sweep see the same op) */
	if (blocks < FD_GRID_FLAG && ns >= FD_GRID_MIN_NS && ni < (1u << 28)) {
		if (grow((void **)&f->gf, &f->gf_cap, f->ngf + 1, sizeof(*f->gf)) < 0) {
			f->oom = 1;
			return -1;
		}
		f->gf[f->ngf++] = (struct fd_gflag){start, (uint32_t)source, (uint32_t)(ni * 8 + (size_t)j)};
	}
	return 0;
}

static int memkind(const char *s, size_t n)
{
	static const struct {
		const char *name;
		int kind;
	} t[] = {{"Pageable", 1}, {"Pinned", 2}, {"Device", 3}, {"Array", 4}, {"Managed", 5}};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].name) == n && strncasecmp(s, t[i].name, n) == 0)
			return t[i].kind;
	return 0;
}

void gt_fd_kineto_copy(const char *name, int *kind, int *src_kind, int *dst_kind)
{
	*kind = GT_COPY_UNKNOWN;
	*src_kind = *dst_kind = 0;
	if (strncasecmp(name, "Memcpy ", 7) != 0)
		return;
	const char *d = name + 7;
	if (strncasecmp(d, "HtoD", 4) == 0)
		*kind = GT_COPY_HTOD;
	else if (strncasecmp(d, "DtoH", 4) == 0)
		*kind = GT_COPY_DTOH;
	else if (strncasecmp(d, "DtoD", 4) == 0)
		*kind = GT_COPY_DTOD;
	else if (strncasecmp(d, "HtoH", 4) == 0)
		*kind = GT_COPY_HTOH;
	const char *p = strchr(name, '('), *arrow = p ? strstr(p, " -> ") : NULL, *q = arrow ? strchr(arrow, ')') : NULL;
	if (!p || !arrow || !q)
		return;
	*src_kind = memkind(p + 1, (size_t)(arrow - p - 1));
	*dst_kind = memkind(arrow + 4, (size_t)(q - arrow - 4));
}

static int flag_op(struct gt_fd *f, int source, uint64_t corr, int flag, uint64_t bytes)
{
	if (!corr || corr > UINT32_MAX)
		return 0; /* no launch to find it by */
	if (grow((void **)&f->fl, &f->fl_cap, f->nfl + 1, sizeof(*f->fl)) < 0) {
		f->oom = 1;
		return -1;
	}
	f->fl[f->nfl++] = (struct fd_flag){(uint32_t)source, (uint32_t)corr, (uint32_t)flag, bytes};
	return 0;
}

int gt_fd_memcpy(struct gt_fd *f, int source, int device, uint32_t stream, uint64_t start, uint64_t end,
		 uint64_t bytes, uint64_t corr, int kind, int src_kind, int dst_kind)
{
	struct fd_src *s = src_of(f, source);
	if (!s || end < start)
		return s ? 0 : -1;
	int host = kind == GT_COPY_HTOD ? src_kind : kind == GT_COPY_DTOH ? dst_kind : 0;
	/* bulk copies that could overlap compute: not pageable (those cannot), not a few bytes (latency);
	 * counted per stream in the sweep, inside the iterations */
	if ((kind == GT_COPY_HTOD || kind == GT_COPY_DTOH) && host != 1 && bytes >= FD_MIN_COPY &&
	    flag_op(f, source, corr, FL_BULK, bytes) < 0)
		return -1;
	s->copies++;
	if (kind != GT_COPY_HTOD && kind != GT_COPY_DTOH)
		return 0;
	if (!host)
		return 0;
	s->copies_kind_known++;
	int d = kind == GT_COPY_DTOH;
	if (host == 1) {
		/* a small pageable copy costs its latency, not bandwidth: pinning does not help it */
		return bytes >= FD_MIN_COPY ? flag_op(f, source, corr, d ? FL_PG_D2H : FL_PG_H2D, bytes) : 0;
	} else if (host == 2 && bytes >= FD_BIG_MEMSET && end > start) {
		double gbps = (double)bytes / (double)(end - start);
		if (gbps > s->pinned_gbps[d])
			s->pinned_gbps[d] = gbps;
	}
	return 0;
}

int gt_fd_memset(struct gt_fd *f, int source, int device, uint32_t stream, uint64_t start, uint64_t end,
		 uint64_t bytes, uint64_t corr)
{
	struct fd_src *s = src_of(f, source);
	if (!s || end < start)
		return s ? 0 : -1;
	if (bytes >= FD_BIG_MEMSET)
		return flag_op(f, source, corr, FL_MEMSET, bytes);
	return 0;
}

void gt_fd_device(struct gt_fd *f, int source, int device, unsigned sms, unsigned cc_major, unsigned cc_minor)
{
	for (size_t i = 0; i < f->ndev; i++)
		if (f->dev[i].source == source && f->dev[i].device == device) {
			if (sms)
				f->dev[i].sms = sms;
			if (cc_major)
				f->dev[i].ccmaj = cc_major, f->dev[i].ccmin = cc_minor;
			return;
		}
	struct fd_dev *d = realloc(f->dev, (f->ndev + 1) * sizeof(*d));
	if (!d) {
		f->oom = 1;
		return;
	}
	f->dev = d;
	f->dev[f->ndev++] = (struct fd_dev){source, device, sms, cc_major, cc_minor};
}

static const struct fd_dev *dev_of(const struct gt_fd *f, int source, int device)
{
	for (size_t i = 0; i < f->ndev; i++)
		if (f->dev[i].source == source && (f->dev[i].device == device || device < 0))
			return &f->dev[i];
	/* a Kineto trace names its devices once for all ranks (deviceProperties): any source's */
	for (size_t i = 0; i < f->ndev; i++)
		if (f->dev[i].source == -1 && f->dev[i].device == device)
			return &f->dev[i];
	return NULL;
}

/* ---- the sweep: GPU idle gaps and their causes ---- */

static int call_end_cmp(const void *a, const void *b)
{
	const struct fd_call *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int call_start_cmp(const void *a, const void *b)
{
	const struct fd_call *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int flag_cmp(const void *a, const void *b)
{
	const struct fd_flag *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int gflag_cmp(const void *a, const void *b)
{
	const struct fd_gflag *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static const struct fd_gflag *gflag_find(struct gt_fd *f, uint32_t source, uint64_t start)
{
	/* the sweep asks in start order (per GPU): step on from the last place while that is not past
	 * the one asked for, else search */
	size_t lo = f->gf_cur;
	const struct fd_gflag *x = lo < f->ngf ? &f->gf[lo] : NULL;
	if (x && x->source == source && x->start <= start) {
		while (lo < f->ngf && f->gf[lo].source == source && f->gf[lo].start < start && lo - f->gf_cur < 64)
			lo++;
		if (lo < f->ngf && f->gf[lo].source == source && f->gf[lo].start < start)
			x = NULL; /* far ahead: search */
	} else {
		x = NULL;
	}
	if (!x) {
		size_t hi = f->ngf;
		lo = 0;
		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;
			const struct fd_gflag *y = &f->gf[m];
			if (y->source < source || (y->source == source && y->start < start))
				lo = m + 1;
			else
				hi = m;
		}
	}
	f->gf_cur = lo;
	return lo < f->ngf && f->gf[lo].source == source && f->gf[lo].start == start ? &f->gf[lo] : NULL;
}

static const struct fd_flag *flag_find(const struct gt_fd *f, uint32_t source, uint32_t corr)
{
	size_t lo = 0, hi = f->nfl;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		const struct fd_flag *x = &f->fl[m];
		if (x->source < source || (x->source == source && x->corr < corr))
			lo = m + 1;
		else
			hi = m;
	}
	return lo < f->nfl && f->fl[lo].source == source && f->fl[lo].corr == corr ? &f->fl[lo] : NULL;
}

void gt_fd_begin(struct gt_fd *f, const struct gt_an_result *r)
{
	f->r = r;
	free(f->gpu);
	f->ngpu = r->ngpu;
	f->gpu = calloc(r->ngpu ? r->ngpu : 1, sizeof(*f->gpu));
	if (!f->gpu) {
		f->oom = 1;
		f->ngpu = 0;
	}
	for (size_t g = 0; g < f->ngpu; g++) {
		f->gpu[g].last_iter = f->gpu[g].prev_iter = -2;
		for (int c = 0; c < C_N; c++)
			f->gpu[g].last_it[c] = -2;
	}
	if (f->ncalls)
		gt_sort(f->calls, f->ncalls, sizeof(*f->calls), call_end_cmp);
	if (f->ncpuops)
		gt_sort(f->cpuops, f->ncpuops, sizeof(*f->cpuops), call_start_cmp);
	if (f->nfl)
		gt_sort(f->fl, f->nfl, sizeof(*f->fl), flag_cmp);
	if (f->ngf)
		gt_sort(f->gf, f->ngf, sizeof(*f->gf), gflag_cmp);
	f->gf_cur = 0;
	size_t nsrc = f->nsrc + 1;
	for (size_t i = 0; i < r->ngpu; i++)
		if ((size_t)r->gpu[i].source + 1 > nsrc)
			nsrc = (size_t)r->gpu[i].source + 1;
	free(f->src_off);
	f->src_off = calloc(nsrc + 1, sizeof(*f->src_off));
	if (!f->src_off) {
		f->oom = 1;
		return;
	}
	size_t j = 0;
	for (size_t s = 0; s <= nsrc; s++) {
		while (j < f->ncalls && f->calls[j].source < s)
			j++;
		f->src_off[s] = j;
	}
	f->src_off[nsrc] = f->ncalls;
	if (!f->nsrc || nsrc > f->nsrc) /* every source the GPUs name has a row */
		src_of(f, (int)nsrc - 1);
}

/* The last synchronizing call of `source` that returned in (a, b], NULL if none. */
static const struct fd_call *returned_in(const struct gt_fd *f, int source, uint64_t a, uint64_t b)
{
	if (!f->src_off || (size_t)source >= f->nsrc)
		return NULL;
	size_t lo = f->src_off[source], hi = f->src_off[source + 1];
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (f->calls[m].end <= a)
			lo = m + 1;
		else
			hi = m;
	}
	const struct fd_call *best = NULL;
	for (size_t i = lo; i < f->src_off[source + 1] && f->calls[i].end <= b; i++)
		if (!best || f->calls[i].kind == K_ALLOC || best->kind != K_ALLOC)
			best = &f->calls[i];
	return best;
}

/* One GPU idle gap (a, b) of GPU g, `idle` ns of it idle (less than b - a where ops of unknown launch
 * ran inside), ended by an op of iteration `iter` launched by `l` (NULL: unknown); `last` the
 * iteration of the op before it: its cause, and its time counted (docs/findings.md). */
static void gap_add(struct gt_fd *f, struct fd_gpu *g, int source, uint64_t a, uint64_t b, uint64_t idle, long iter,
		    long last, const struct gt_launch *l)
{
	double gap = (double)idle;
	int cause = -1;
	const struct fd_call *c = NULL;
	if (iter >= 0 && last >= 0 && iter != last) {
		/* between steps; an allocator call that returned in the gap is the cause still */
		c = returned_in(f, source, a, b);
		cause = c && c->kind == K_ALLOC ? C_ALLOC : C_STEP;
		if (cause == C_STEP)
			c = NULL;
	} else if ((c = returned_in(f, source, a, b)))
		cause = c->kind == K_ALLOC ? C_ALLOC : c->kind == K_SYNCCOPY ? C_SYNCCOPY : C_SYNC;
	else if (l && l->start + l->dur > a)
		cause = gap >= FD_HOST_GAP_NS ? C_HOST : C_LAUNCH;
	/* a synchronizing call costs the gap after it only as far as the host had been ahead of the GPU
	 * (the time it waited in the call): in a host-bound program the GPU would have waited for the
	 * launch anyway, and the rest of the gap is the host's (launch-bound or host work).  Allocator
	 * calls cost the gap up to the return of the last of them in it: the host's time in cudaFree and
	 * cudaMalloc (several calls, one waiting for the device) is the churn's */
	double credit = c ? (double)(c->kind == K_ALLOC ? c->end - a : c->end - c->start) : gap;
	if (c && cause != C_STEP && credit < gap) {
		double rest = gap - credit;
		gap = credit;
		if (l && l->start + l->dur > a) {
			int rc = rest >= FD_HOST_GAP_NS ? C_HOST : C_LAUNCH;
			g->ns[rc] += rest;
			g->n[rc]++;
			if (rest > g->max[rc])
				g->max[rc] = rest;
		}
	}
	/* after a synchronization the GPU has no queued work until the host gets ahead again: the
	 * late launches that follow (a few bytes zeroed, then the next kernel) are the synchronization's
	 * too, as far as the host had waited in it */
	if (cause == C_LAUNCH && g->sync_left > 0) {
		double take = gap < g->sync_left ? gap : g->sync_left;
		g->ns[g->sync_cause] += take;
		g->api_ns[g->sync_api] += take;
		g->sync_left -= take;
		gap -= take;
		if (gap <= 0)
			cause = -1;
	} else if (c && (cause == C_SYNC || cause == C_SYNCCOPY)) {
		g->sync_left = credit > gap ? credit - gap : 0;
		g->sync_cause = cause;
		g->sync_api = c->api;
	} else {
		g->sync_left = 0;
	}
	if (cause >= 0) {
		g->ns[cause] += gap;
		g->n[cause]++;
		if (gap > g->max[cause])
			g->max[cause] = gap;
		if (iter != g->last_it[cause]) {
			g->last_it[cause] = iter;
			g->iters_with[cause]++;
		}
		if (c) {
			g->api_ns[c->api] += gap;
			g->api_n[c->api]++;
		}
		/* keep the first gap and the two largest after it */
		int k = g->nev[cause] < 3 ? g->nev[cause]++ : -1;
		if (k < 0) {
			int mi = 1;
			if (g->ev[cause][2].dur_ns < g->ev[cause][1].dur_ns)
				mi = 2;
			if ((uint64_t)gap > g->ev[cause][mi].dur_ns)
				k = mi;
		}
		if (k >= 0) {
			struct gt_fd_event *ev = &g->ev[cause][k];
			ev->ts_ns = a;
			ev->dur_ns = b - a;
			if (c) /* the call's time is added when the finding is made (view_us, the operator) */
				snprintf(ev->what, sizeof(ev->what), "GPU idle after %s returned", f->api[c->api]);
			else if (cause == C_STEP)
				snprintf(ev->what, sizeof(ev->what), "GPU idle between iteration %ld and %ld",
					 last, iter);
			else
				snprintf(ev->what, sizeof(ev->what), "GPU idle until the next launch call returned");
			ev->call_ns = c ? c->start : 0;
			ev->call_dur_ns = c ? c->end - c->start : 0;
		}
	}
}

void gt_fd_op(struct gt_fd *f, const struct gt_ev *e, int source, const struct gt_launch *l, long iter)
{
	if (e->gpu >= f->ngpu)
		return;
	struct fd_gpu *g = &f->gpu[e->gpu];
	const size_t nit = f->r ? f->r->gpu[e->gpu].niters : 0;
	if (iter < 0 && nit && !l && e->cat == GT_CAT_MEMOP) {
		/* a copy or memset whose API call carries no correlation id (the driver's cuMemset*Async in a
		 * gputap trace): the iteration whose window holds its GPU start, as the analysis places ops
		 * without one */
		const struct gt_an_window *w = f->r->gpu[e->gpu].iters;
		size_t lo = 0, hi = nit;
		while (lo < hi) {
			size_t m = lo + (hi - lo) / 2;
			if (w[m].start_ns <= e->start)
				lo = m + 1;
			else
				hi = m;
		}
		if (lo > 0 && e->start < w[lo - 1].end_ns)
			iter = (long)(lo - 1);
	}
	/* what counts: ops of an iteration (all ops when there are none); the first of 3 or more iterations is
	 * warm-up (lazy loading, library set-up): its gaps are not counted */
	const int in = nit == 0 || iter >= 0;
	const int warm = nit >= 3 && iter == 0;
	if (in) {
		if (e->cat != GT_CAT_MEMOP && e->name < f->nkx) {
			f->kx[e->name].in_ns += (double)(e->end - e->start);
			f->kx[e->name].in_count++;
		}
		if (e->cat != GT_CAT_MEMOP) { /* streams that run kernels, and their bulk copies (below) */
			struct fd_stream *st = stream_of(f, source, f->r->gpu[e->gpu].device, e->stream);
			if (st) {
				st->kern_ns += (double)(e->end - e->start);
				st->kernels++;
			}
		}
		const struct fd_gflag *gfl = e->cat != GT_CAT_MEMOP && f->ngf && (double)(e->end - e->start) >= FD_GRID_MIN_NS
						     ? gflag_find(f, (uint32_t)source, e->start)
						     : NULL;
		if (gfl) {
			size_t ki = gfl->kcfg / 8, j = gfl->kcfg % 8;
			if (ki < f->nkx && j < (size_t)f->kx[ki].ncfg) {
				f->kx[ki].cfg[j].in_ns += (double)(e->end - e->start);
				f->kx[ki].cfg[j].in_count++;
			}
		}
		const struct fd_flag *fl = e->cat == GT_CAT_MEMOP && e->corr ? flag_find(f, (uint32_t)source, e->corr) : NULL;
		if (fl && fl->flag == FL_BULK) {
			struct fd_stream *st = stream_of(f, source, f->r->gpu[e->gpu].device, e->stream);
			if (st) {
				st->copy_ns += (double)(e->end - e->start);
				st->copies++;
			}
			fl = NULL;
		}
		struct fd_src *s = fl && (size_t)source < f->nsrc ? &f->src[source] : NULL;
		if (s) {
			struct fd_agg *a = fl->flag == FL_MEMSET ? &s->memset_big : &s->pageable[fl->flag == FL_PG_D2H];
			const char *what = fl->flag == FL_MEMSET ? "memset"
					   : fl->flag == FL_PG_D2H ? "memcpy DtoH to pageable memory"
								   : "memcpy HtoD from pageable memory";
			char w[160];
			uint64_t by = e->bytes ? e->bytes : fl->bytes;
			snprintf(w, sizeof(w), "%s, %.1f MB, iteration %ld", what, (double)by / 1e6, iter);
			agg_add(a, source, f->r->gpu[e->gpu].device, e->stream, e->start, e->end, by, w);
		}
	}
	const int prev_in = nit == 0 || g->prev_iter >= 0;
	g->prev_iter = iter;
	if (l && g->any && l->start + l->dur <= g->busy_until)
		g->sync_left = 0; /* launched before the GPU went idle: the host is ahead again */
	const int gap = g->any && e->start > g->busy_until && in && prev_in && !warm;
	const int unknown = !l && nit && e->cat == GT_CAT_MEMOP;
	if (g->pend && !(in && !warm))
		g->pend = 0;
	if (gap && unknown) {
		/* its API call carries no correlation id (a gputap trace's cuMemset*Async, some
		 * cudaMemcpyAsync): when the host launched it, and which iteration did, are unknown; the next
		 * op's launch and iteration tell whether the host was late or the step had ended.  Idle time
		 * on both sides of such an op (a few bytes zeroed between a synchronization and the next
		 * launch) is one gap */
		if (!g->pend) {
			g->pend = 1;
			g->pend_a = g->busy_until;
			g->pend_idle = 0;
			g->pend_last = g->last_iter;
		}
		g->pend_b = e->start;
		g->pend_idle += e->start - g->busy_until;
	} else if (g->pend && (gap || !unknown)) {
		uint64_t idle = g->pend_idle + (gap ? e->start - g->busy_until : 0);
		gap_add(f, g, source, g->pend_a, gap ? e->start : g->pend_b, idle, iter, g->pend_last, l);
		g->pend = 0;
	} else if (gap) {
		gap_add(f, g, source, g->busy_until, e->start, e->start - g->busy_until, iter, g->last_iter, l);
	}
	if (!g->any || e->end > g->busy_until)
		g->busy_until = e->end;
	g->any = 1;
	if (iter >= 0)
		g->last_iter = iter;
}

/* ---- the findings ---- */

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The iteration time of a GPU: the mean over its iterations (the first left out when there are 3 or
 * more: warm-up) of the longer of the iteration's period on the host (its start to the next one's;
 * none for the last) and its work's span on the GPU.
 * *n: the iterations (1 when there are none: the whole input is one). */
static double iter_time(const struct gt_an_gpu *g, int *n)
{
	*n = 1;
	if (!g->niters)
		return g->total.span_ns;
	*n = (int)g->niters;
	double *v = malloc(g->niters * sizeof(double));
	if (!v)
		return g->total.span_ns / (double)g->niters;
	size_t k = 0;
	for (size_t i = g->niters >= 3 ? 1 : 0; i < g->niters; i++) {
		const struct gt_an_window *w = &g->iters[i];
		if (!w->kernels && !w->memops)
			continue;
		/* on the host: from this iteration's start to the next one's (the gap between steps belongs to a
		 * step); the last one's range can end long after its work (the loop's own tail): its GPU span */
		uint64_t hs = i + 1 < g->niters ? g->iters[i + 1].start_ns : w->start_ns;
		double cpu = hs > w->start_ns ? (double)(hs - w->start_ns) : 0;
		v[k++] = cpu > w->span_ns ? cpu : w->span_ns;
	}
	double T = g->total.span_ns / (double)g->niters;
	if (k) { /* the mean: the gaps' gains are means over the iterations too */
		double sum = 0;
		for (size_t i = 0; i < k; i++)
			sum += v[i];
		T = sum / (double)k;
	}
	free(v);
	return T;
}

struct gt_fd_item *gt_fd_new_item(struct gt_fd_list *L, const char *id)
{
	struct gt_fd_item *v = realloc(L->v, (L->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	L->v = v;
	struct gt_fd_item *it = &v[L->n++];
	memset(it, 0, sizeof(*it));
	snprintf(it->id, sizeof(it->id), "%s", id);
	return it;
}

void gt_fd_evidence(struct gt_fd_item *it, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **v = realloc(it->evidence, (it->nevidence + 1) * sizeof(*v));
	if (!v)
		return;
	it->evidence = v;
	if ((v[it->nevidence] = strdup(buf)))
		it->nevidence++;
}

static void skip(struct gt_fd_list *L, const char *id, const char *why)
{
	struct gt_fd_skip *v = realloc(L->skipped, (L->nskipped + 1) * sizeof(*v));
	if (!v)
		return;
	L->skipped = v;
	snprintf(v[L->nskipped].id, sizeof(v[0].id), "%s", id);
	snprintf(v[L->nskipped].why, sizeof(v[0].why), "%s", why);
	L->nskipped++;
}

void gt_fd_checked(struct gt_fd_list *L, const char *id)
{
	char **v = realloc(L->checked, (L->nchecked + 1) * sizeof(*v));
	if (!v)
		return;
	L->checked = v;
	if ((v[L->nchecked] = strdup(id)))
		L->nchecked++;
}

static void fixes(struct gt_fd_item *it, const char *torch, const char *cuda, const char *ref)
{
	snprintf(it->fix_torch, sizeof(it->fix_torch), "%s", torch);
	snprintf(it->fix_cuda, sizeof(it->fix_cuda), "%s", cuda);
	snprintf(it->reference, sizeof(it->reference), "%s", ref);
}

/* The event's time as the input's Perfetto view shows it: µs from the trace's start (gputap), or the
 * trace's own µs (Kineto, nsys: base 0). */
static double view_us(const struct gt_fd *f, int source, uint64_t t)
{
	uint64_t b = source >= 0 && (size_t)source < f->nsrc ? f->src[source].base : 0;
	return t >= b ? (double)(t - b) / 1e3 : -(double)(b - t) / 1e3;
}

static void set_gain(struct gt_fd_item *it, double gain_ns, double iter_ns)
{
	it->gain_ms = gain_ns / 1e6;
	it->gain_pct = iter_ns > 0 ? 100.0 * gain_ns / iter_ns : 0;
}

static void copy_events(const struct gt_fd *f, struct gt_fd_item *it, const struct gt_fd_event *ev, int n, int source,
			const char *where)
{
	for (int i = 0; i < n && i < 3; i++) {
		it->ev[i] = ev[i];
		it->ev[i].ts_us = view_us(f, source, ev[i].ts_ns);
		if (where)
			snprintf(it->ev[i].where, sizeof(it->ev[i].where), "%s", where);
	}
	it->nev = n < 3 ? n : 3;
}

static const char *short_name(const char *n, char *buf, size_t cap)
{
	const char *d = gt_demangle_to(n, buf, cap);
	return d ? d : n;
}

struct gapbest {
	size_t g;
	double per_iter, iter_ns;
	int n;
	int ok;
};

/* The GPU where gaps of `cause` cost most per iteration. */
static struct gapbest best_gpu(const struct gt_fd *f, const struct gt_an_result *r, int cause)
{
	struct gapbest b = {0, 0, 0, 1, 0};
	for (size_t g = 0; g < f->ngpu && g < r->ngpu; g++) {
		int n;
		double T = iter_time(&r->gpu[g], &n);
		if (r->gpu[g].niters >= 3)
			n--; /* the first iteration's gaps are warm-up, not counted */
		double p = f->gpu[g].ns[cause] / n;
		if (!b.ok || p > b.per_iter) {
			b = (struct gapbest){g, p, T, n, 1};
		}
	}
	return b;
}

static int ngpus_with(const struct gt_fd *f, int cause)
{
	int k = 0;
	for (size_t g = 0; g < f->ngpu; g++)
		k += f->gpu[g].n[cause] > 0;
	return k;
}

/* The API name that the most gap time of GPU g followed, and its share. */
static int top_api(const struct gt_fd *f, const struct fd_gpu *g, int kind)
{
	int best = -1;
	for (int a = 0; a < f->napi; a++)
		if (g->api_n[a] && api_kind(f->api[a]) == kind && (best < 0 || g->api_ns[a] > g->api_ns[best]))
			best = a;
	return best;
}

/* A PyTorch operator around a call of `source` starting at t (aten::item, ...), NULL if none. */
static const char *cpuop_around(const struct gt_fd *f, int source, uint64_t t)
{
	const char *best = NULL;
	for (size_t i = 0; i < f->ncpuops; i++) {
		const struct fd_call *c = &f->cpuops[i];
		if ((int)c->source != source)
			continue;
		if (c->start > t)
			break;
		if (c->end >= t)
			best = f->api[c->api];
	}
	return best;
}

static void gap_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L, int cause)
{
	static const char *ids[C_N] = {"step-gap", "alloc-churn", "sync-copy", "host-sync", "launch-bound", "host-gap"};
	struct gapbest b = best_gpu(f, r, cause);
	if (!b.ok || b.per_iter <= 0)
		return;
	struct fd_gpu *g = &f->gpu[b.g];
	const struct gt_an_gpu *ag = &r->gpu[b.g];
	struct gt_fd_item *it = gt_fd_new_item(L, ids[cause]);
	if (!it)
		return;
	set_gain(it, b.per_iter, b.iter_ns);
	double per = (double)g->n[cause] / b.n;
	int others = ngpus_with(f, cause) - 1;
	char gl[96];
	snprintf(gl, sizeof(gl), "%s%s", ag->label, others > 0 ? " (and other GPUs)" : "");
	if (others > 0)
		snprintf(gl, sizeof(gl), "%s and %d other GPU%s", ag->label, others, others > 1 ? "s" : "");
	gt_fd_evidence(it, "GPU idle %.3f ms per iteration (%.1f%% of %.3f ms) in %.1f gaps per iteration on %s; in %llu of %d "
		 "iterations; largest gap %.3f ms",
	     b.per_iter / 1e6, it->gain_pct, b.iter_ns / 1e6, per, ag->label, (unsigned long long)g->iters_with[cause],
	     b.n, g->max[cause] / 1e6);
	int src = ag->source;
	int a = -1;
	switch (cause) {
	case C_STEP:
		snprintf(it->title, sizeof(it->title), "GPU waits for the host between steps (data preparation, "
						       "step-end work)");
		gt_fd_evidence(it, "the gap lies between the last GPU op of one iteration and the first op of the next: the "
			 "host had not yet launched the next step");
		snprintf(it->method, sizeof(it->method),
			 "sum of the GPU idle gaps at iteration boundaries per iteration (upper bound: what prefetching "
			 "the next batch while the GPU runs could hide)");
		it->upper_bound = 1;
		fixes(it,
		      "prepare batches ahead: DataLoader(num_workers>0, pin_memory=True, prefetch_factor=2..4), "
		      ".to(device, non_blocking=True); move preprocessing into the workers or onto the GPU; no "
		      ".item()/print of GPU values at the end of the step",
		      "double-buffer: prepare batch i+1 on a host thread while the GPU runs step i, copy it with "
		      "cudaMemcpyAsync from pinned memory on a side stream, wait with cudaStreamWaitEvent",
		      "PyTorch Performance Tuning Guide, 'Enable async data loading and augmentation'; CUDA C++ Best "
		      "Practices Guide, 'Asynchronous and Overlapping Transfers with Computation'");
		break;
	case C_ALLOC:
		a = top_api(f, g, K_ALLOC);
		snprintf(it->title, sizeof(it->title), "Device memory allocated and freed every step (%s ...): the GPU idles "
						       "around the allocator calls", a >= 0 ? f->api[a] : "cudaMalloc/cudaFree");
		snprintf(it->method, sizeof(it->method),
			 "GPU idle gaps during which an allocation or free call returned (cudaFree waits for the "
			 "device; the GPU then waits for the next launch), per iteration");
		fixes(it,
		      "keep PyTorch's caching allocator on (no PYTORCH_NO_CUDA_MEMORY_CACHING=1, no "
		      "torch.cuda.empty_cache() in the loop); allocate buffers once outside the step and reuse them",
		      "allocate once outside the loop and reuse; or cudaMallocAsync/cudaFreeAsync (stream-ordered, "
		      "pooled) instead of cudaMalloc/cudaFree",
		      "CUDA C++ Programming Guide, 'Stream Ordered Memory Allocator'; PyTorch docs, 'CUDA semantics: "
		      "Memory management'");
		break;
	case C_SYNCCOPY:
		a = top_api(f, g, K_SYNCCOPY);
		snprintf(it->title, sizeof(it->title), "Synchronous copies inside the step (%s) block the host; the GPU "
						       "idles after each", a >= 0 ? f->api[a] : "cudaMemcpy");
		snprintf(it->method, sizeof(it->method),
			 "GPU idle gaps during which a synchronous copy or memset call returned, per iteration (the "
			 "GPU waited for the host to launch again after the copy)");
		fixes(it,
		      "copy with .to(device, non_blocking=True) from pinned memory (pin_memory()); keep results on "
		      "the GPU instead of .cpu()/.numpy() inside the step",
		      "cudaMemcpyAsync / cudaMemsetAsync on a stream, from pinned (cudaMallocHost) buffers, and "
		      "synchronize once per step at most (events for dependencies)",
		      "CUDA C++ Best Practices Guide, 'Asynchronous and Overlapping Transfers with Computation'");
		break;
	case C_SYNC:
		a = top_api(f, g, K_SYNC);
		snprintf(it->title, sizeof(it->title), "Host synchronization inside the step (%s) leaves the GPU idle",
			 a >= 0 ? f->api[a] : "cudaStreamSynchronize");
		snprintf(it->method, sizeof(it->method),
			 "GPU idle gaps during which a synchronizing call returned, per iteration: after it the GPU "
			 "had no queued work until the host launched again");
		fixes(it,
		      "remove .item(), .cpu(), print() of GPU tensors, torch.cuda.synchronize() and data-dependent "
		      "Python control flow from the step; accumulate metrics on the GPU and read them every N steps",
		      "drop cudaStreamSynchronize/cudaDeviceSynchronize from the loop; order streams with "
		      "cudaEventRecord + cudaStreamWaitEvent; synchronize once per step at most",
		      "CUDA C++ Best Practices Guide, 'Asynchronous and Overlapping Transfers with Computation'; "
		      "PyTorch Performance Tuning Guide, 'Avoid unnecessary CPU-GPU synchronization'");
		break;
	case C_LAUNCH:
	case C_HOST: {
		uint64_t ops = 0, launched = 0, shortk = 0;
		double cpu = 0, kt = 0;
		uint64_t kc = 0;
		for (size_t i = 0; i < r->nkernels; i++) {
			const struct gt_an_kernel *k = &r->kernels[i];
			if (k->source != src || k->cat != 0)
				continue;
			ops += k->count;
			launched += k->launched;
			shortk += k->short_n;
			cpu += k->cpu_ns;
			kt += k->time_ns;
			kc += k->count;
		}
		if (cause == C_LAUNCH) {
			/* the kernels of the iterations (the sweep's count): r->kernels holds the whole input's,
			 * also where --nvtx picks some ranges of it */
			uint64_t ikc = 0;
			double ikt = 0;
			for (size_t i = 0; i < f->nkx; i++)
				if (f->kx[i].source == src)
					ikc += f->kx[i].in_count, ikt += f->kx[i].in_ns;
			double nit = ag->niters ? (double)ag->niters : 1.0;
			if (!ikc)
				ikc = kc, ikt = kt, nit = b.n;
			snprintf(it->title, sizeof(it->title),
				 "GPU idle because the host cannot launch fast enough (%.0f kernels per iteration, %.1f us "
				 "each on average)",
				 (double)ikc / nit, ikt / (double)ikc / 1e3);
			snprintf(it->method, sizeof(it->method),
				 "sum of the GPU idle gaps shorter than %.0f us whose next op was launched only after the GPU "
				 "had gone idle, per iteration: the time a CUDA graph or fused kernels would not wait",
				 FD_HOST_GAP_NS / 1e3);
			fixes(it,
			      "capture the step with CUDA graphs (torch.compile(mode=\"reduce-overhead\") or "
			      "torch.cuda.CUDAGraph / torch.cuda.make_graphed_callables); fuse small ops "
			      "(torch.compile); larger batches per launch",
			      "capture the launch sequence once in a CUDA graph (cudaStreamBeginCapture ... "
			      "cudaGraphInstantiate, then cudaGraphLaunch per step) or fuse the small kernels",
			      "CUDA C++ Programming Guide, 'CUDA Graphs'; PyTorch docs, 'CUDA Graphs' (torch.cuda.graphs)");
		} else {
			snprintf(it->title, sizeof(it->title),
				 "GPU idle while the host works inside the step (gaps of %.1f ms on average)",
				 g->n[cause] ? g->ns[cause] / (double)g->n[cause] / 1e6 : 0.0);
			snprintf(it->method, sizeof(it->method),
				 "sum of the GPU idle gaps of %.0f us or more inside an iteration whose next op was launched "
				 "only after the GPU had gone idle, per iteration (upper bound: the host work may be needed)",
				 FD_HOST_GAP_NS / 1e3);
			it->upper_bound = 1;
			fixes(it,
			      "move host work (Python bookkeeping, CPU tensor math, logging) out of the step or into a "
			      "background thread; launch GPU work before the host work it does not depend on",
			      "enqueue the GPU work first and do host work while it runs; hand host work to another thread",
			      "CUDA C++ Best Practices Guide, 'Concurrent Kernel Execution and Overlap'");
		}
		if (launched)
			gt_fd_evidence(it, "in the whole input: %llu kernels launched, mean launch call %.1f us, mean kernel "
				 "%.1f us; %llu kernels shorter than their own launch call",
			     (unsigned long long)ops, cpu / (double)launched / 1e3, kc ? kt / (double)kc / 1e3 : 0.0,
			     (unsigned long long)shortk);
		break;
	}
	}
	if (a >= 0 && g->api_n[a]) {
		double per_call = g->api_ns[a] / (double)g->api_n[a];
		struct fd_src *s = (size_t)src < f->nsrc ? &f->src[src] : NULL;
		gt_fd_evidence(it, "%s: %llu calls in all (%.1f per iteration, %.3f ms each on average); %llu of them left the GPU "
			 "idle, %.3f ms per gap",
		     f->api[a], (unsigned long long)(s ? s->api_n[a] : g->api_n[a]),
		     (double)(s ? s->api_n[a] : g->api_n[a]) / b.n, s && s->api_n[a] ? s->api_ns[a] / (double)s->api_n[a] / 1e6 : 0.0,
		     (unsigned long long)g->api_n[a], per_call / 1e6);
	}
	/* the events, and the PyTorch operator around a synchronization */
	copy_events(f, it, g->ev[cause], g->nev[cause], src, ag->label);
	for (int i = 0; i < it->nev; i++) {
		struct gt_fd_event *ev = &it->ev[i];
		const struct gt_fd_event *o = &g->ev[cause][i];
		if (o->call_ns && (cause == C_SYNC || cause == C_SYNCCOPY || cause == C_ALLOC)) {
			uint64_t cs = o->call_ns;
			const char *op = cpuop_around(f, src, cs);
			size_t len = strlen(ev->what);
			snprintf(ev->what + len, sizeof(ev->what) - len, " (call at %.3f us, %.3f ms long%s%s)",
				 view_us(f, src, cs), (double)o->call_dur_ns / 1e6, op ? ", inside " : "", op ? op : "");
		}
	}
	if (cause == C_SYNC && it->nev) {
		const char *op = NULL;
		for (int i = 0; i < it->nev && !op; i++)
			if (g->ev[cause][i].call_ns)
				op = cpuop_around(f, src, g->ev[cause][i].call_ns);
		if (op)
			gt_fd_evidence(it, "the synchronization happens inside the PyTorch operator %s (%s)", op,
			     strcmp(op, "aten::item") == 0 || strcmp(op, "aten::_local_scalar_dense") == 0
				 ? "a tensor's .item(): a copy to the host and a wait"
				 : "it needs a value on the host");
	}
	snprintf(it->where, sizeof(it->where), "%s%s%s", gl, a >= 0 ? ", " : "", a >= 0 ? f->api[a] : "");
}

static void pageable_dir(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L, int d);

static const char *dirname_of(int d)
{
	return d ? "DtoH" : "HtoD";
}

static void pageable_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L)
{
	size_t first = L->n;
	pageable_dir(f, r, L, 0);
	pageable_dir(f, r, L, 1);
	if (L->n == first + 2) { /* both directions: one finding, the larger first, the gains added */
		struct gt_fd_item *x = &L->v[first], *y = &L->v[first + 1];
		if (y->gain_ms > x->gain_ms) {
			struct gt_fd_item t = *x;
			*x = *y;
			*y = t;
		}
		gt_fd_evidence(x, "also %s: %s; estimated gain %.3f ms per iteration, added to this one", y->where, y->title,
		     y->gain_ms);
		x->gain_ms += y->gain_ms;
		x->gain_pct += y->gain_pct;
		for (size_t j = 0; j < y->nevidence; j++)
			free(y->evidence[j]);
		free(y->evidence);
		L->n--;
	}
}

static void pageable_dir(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L, int d)
{
	{
		double best = 0, bT = 0;
		int bsrc = -1, bn = 1;
		for (size_t s = 0; s < f->nsrc; s++) {
			struct fd_agg *a = &f->src[s].pageable[d];
			if (!a->count)
				continue;
			/* pinned bandwidth: the best pinned copy of the same direction seen, else the link's nominal */
			double pin = f->src[s].pinned_gbps[d];
			const struct fd_dev *dv = dev_of(f, (int)s, a->device);
			double nominal = dv && dv->ccmaj >= 9 ? 50.0 : dv && dv->ccmaj == 8 ? 24.0 : 12.0;
			if (pin <= 0)
				pin = nominal;
			double ideal = (double)a->bytes / pin;
			double gain = a->ns > ideal ? a->ns - ideal : 0;
			int n = 1;
			double T = 0;
			for (size_t g = 0; g < r->ngpu; g++)
				if (r->gpu[g].source == (int)s && r->gpu[g].device == a->device)
					T = iter_time(&r->gpu[g], &n);
			if (gain / n > best) {
				best = gain / n;
				bsrc = (int)s;
				bT = T;
				bn = n;
			}
		}
		if (bsrc < 0)
			return;
		struct fd_src *s = &f->src[bsrc];
		struct fd_agg *a = &s->pageable[d];
		struct gt_fd_item *it = gt_fd_new_item(L, "pageable-copy");
		if (!it)
			return;
		set_gain(it, best, bT);
		double gbps = a->ns > 0 ? (double)a->bytes / a->ns : 0;
		snprintf(it->title, sizeof(it->title), "Copies %s pageable host memory (%s) run at %.1f GB/s", d ? "to" : "from",
			 dirname_of(d), gbps);
		gt_fd_evidence(it, "%llu copies %s in all (%.1f per iteration), %.1f MB per iteration, %.3f ms per iteration on the GPU",
		     (unsigned long long)a->count, dirname_of(d), (double)a->count / bn, (double)a->bytes / bn / 1e6,
		     a->ns / bn / 1e6);
		const struct fd_dev *dv = dev_of(f, bsrc, a->device);
		if (s->pinned_gbps[d] > 0)
			snprintf(it->method, sizeof(it->method),
				 "copy time minus the same bytes at %.1f GB/s, the fastest pinned %s copy of 1 MiB or more in "
				 "this input, per iteration",
				 s->pinned_gbps[d], dirname_of(d));
		else
			snprintf(it->method, sizeof(it->method),
				 "copy time minus the same bytes at %.0f GB/s, an assumed pinned bandwidth (%s; no pinned copy "
				 "of 1 MiB or more in this input to measure it), per iteration",
				 dv && dv->ccmaj >= 9 ? 50.0 : dv && dv->ccmaj == 8 ? 24.0 : 12.0,
				 dv && dv->ccmaj >= 9 ? "PCIe Gen5 x16" : dv && dv->ccmaj == 8 ? "PCIe Gen4 x16" : "PCIe Gen3 x16, the GPU unknown");
		gt_fd_evidence(it, "a copy from pageable memory is staged by the driver through a pinned buffer and cannot "
			 "overlap other work");
		fixes(it,
		      "pin the host tensors: DataLoader(pin_memory=True) or tensor.pin_memory(), then .to(device, "
		      "non_blocking=True)",
		      "allocate the host buffer with cudaMallocHost/cudaHostAlloc, or cudaHostRegister it, and copy with "
		      "cudaMemcpyAsync",
		      "CUDA C++ Best Practices Guide, 'Pinned Memory'; PyTorch docs, 'CUDA semantics: Use pinned memory "
		      "buffers'");
		char wh[96];
		snprintf(wh, sizeof(wh), "stream %u", a->stream);
		for (size_t g = 0; g < r->ngpu; g++)
			if (r->gpu[g].source == bsrc && r->gpu[g].device == a->device)
				snprintf(wh, sizeof(wh), "%s stream %u", r->gpu[g].label, a->stream);
		snprintf(it->where, sizeof(it->where), "%s", wh);
		copy_events(f, it, a->ev, a->nev, bsrc, wh);
	}
}

static void memset_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L)
{
	/* cudaMemset of 1 MiB or more, and PyTorch's zero-fill kernels */
	double best = 0, bT = 0;
	int bsrc = -1, bn = 1;
	for (size_t s = 0; s < f->nsrc; s++) {
		struct fd_agg *a = &f->src[s].memset_big;
		if (!a->count)
			continue;
		int n = 1;
		double T = 0;
		for (size_t g = 0; g < r->ngpu; g++)
			if (r->gpu[g].source == (int)s && r->gpu[g].device == a->device)
				T = iter_time(&r->gpu[g], &n);
		if (a->ns / n > best && (double)a->count >= (double)n) {
			best = a->ns / n;
			bsrc = (int)s;
			bT = T;
			bn = n;
		}
	}
	double fill_ns = 0;
	uint64_t fill_n = 0;
	const char *fill_name = NULL;
	for (size_t i = 0; i < f->nkx; i++)
		if (f->kx[i].name && (strstr(f->kx[i].name, "FillFunctor") || strstr(f->kx[i].name, "fill_kernel"))) {
			fill_ns += f->kx[i].in_ns;
			fill_n += f->kx[i].in_count;
			if (!fill_name || f->kx[i].in_ns > 0)
				fill_name = f->kx[i].name;
		}
	int fn = 1;
	double fT = 0;
	if (r->ngpu)
		fT = iter_time(&r->gpu[0], &fn);
	if (bsrc < 0 && (fill_n < (uint64_t)fn || fill_ns <= 0))
		return;
	struct gt_fd_item *it = gt_fd_new_item(L, "memset");
	if (!it)
		return;
	if (bsrc >= 0) {
		struct fd_agg *a = &f->src[bsrc].memset_big;
		set_gain(it, best, bT);
		snprintf(it->title, sizeof(it->title), "Large memsets every step (%.1f MB per iteration)",
			 (double)a->bytes / bn / 1e6);
		gt_fd_evidence(it, "%llu memsets of 1 MiB or more in all (%.1f per iteration, %.1f MB each on average), %.3f ms "
			 "per iteration on the GPU",
		     (unsigned long long)a->count, (double)a->count / bn, (double)a->bytes / (double)a->count / 1e6,
		     a->ns / bn / 1e6);
		char wh[96] = "";
		for (size_t g = 0; g < r->ngpu; g++)
			if (r->gpu[g].source == bsrc && r->gpu[g].device == a->device)
				snprintf(wh, sizeof(wh), "%s stream %u", r->gpu[g].label, a->stream);
		snprintf(it->where, sizeof(it->where), "%s", wh);
		copy_events(f, it, a->ev, a->nev, bsrc, wh);
	} else {
		set_gain(it, fill_ns / fn, fT);
		char buf[256];
		snprintf(it->title, sizeof(it->title), "Zero-fill kernels every step (%.0f per iteration)",
			 (double)fill_n / fn);
		gt_fd_evidence(it, "%llu fill kernels (%s) in all, %.3f ms per iteration", (unsigned long long)fill_n,
		     short_name(fill_name, buf, sizeof(buf)), fill_ns / fn / 1e6);
		snprintf(it->where, sizeof(it->where), "%s", short_name(fill_name, buf, sizeof(buf)));
	}
	snprintf(it->method, sizeof(it->method),
		 "the memset/fill time per iteration (upper bound: it is saved only where the buffer is overwritten "
		 "anyway or the zeroing can be folded into the kernel that follows)");
	it->upper_bound = 1;
	fixes(it,
	      "optimizer.zero_grad(set_to_none=True) (the default since 2.0); torch.empty instead of torch.zeros "
	      "for buffers that are fully written",
	      "drop cudaMemset of buffers the next kernel overwrites; zero inside the kernel that first writes the "
	      "buffer",
	      "PyTorch Performance Tuning Guide, 'Use parameter.grad = None instead of model.zero_grad()'");
}

static int is_fp32_gemm(const char *n)
{
	if (strstr(n, "tf32") || strstr(n, "TF32") || strstr(n, "tensorop") || strstr(n, "1688") || strstr(n, "16816") ||
	    strstr(n, "bf16") || strstr(n, "f16") || strstr(n, "hgemm") || strstr(n, "i8"))
		return 0;
	if (strstr(n, "sgemm"))
		return 1;
	if (strstr(n, "gemm") && strstr(n, "f32f32_f32f32"))
		return 1;
	return 0;
}

static void fp32_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L)
{
	double ns = 0;
	uint64_t n = 0;
	long top = -1;
	int dev = -1, src = 0;
	for (size_t i = 0; i < f->nkx; i++)
		if (f->kx[i].name && is_fp32_gemm(f->kx[i].name)) {
			ns += f->kx[i].in_ns;
			n += f->kx[i].in_count;
			if (top < 0 || f->kx[i].in_ns > f->kx[top].in_ns)
				top = (long)i, dev = f->kx[i].device, src = f->kx[i].source;
		}
	if (top < 0)
		return;
	const struct fd_dev *dv = dev_of(f, src, dev);
	if (dv && dv->ccmaj && dv->ccmaj < 8)
		return; /* no TF32 before Ampere */
	int nit = 1;
	double T = 0;
	size_t ng = 0;
	for (size_t g = 0; g < r->ngpu; g++) {
		int k;
		double t = iter_time(&r->gpu[g], &k);
		if (!ng || t > T)
			T = t, nit = k;
		ng++;
	}
	if (!ng)
		return;
	struct gt_fd_item *it = gt_fd_new_item(L, "fp32-gemm");
	if (!it)
		return;
	double per = ns / (double)nit / (double)ng;
	set_gain(it, per * (1.0 - 1.0 / FD_TF32_SPEEDUP), T);
	char buf[200];
	snprintf(it->title, sizeof(it->title), "FP32 GEMMs on CUDA cores where TF32 or BF16 tensor cores would do "
					       "(%.3f ms per iteration)",
		 per / 1e6);
	gt_fd_evidence(it, "%llu FP32 GEMM kernels in all (%.1f per iteration per GPU), %.3f ms per iteration; the largest: %s "
		 "(%llu launches, %.3f ms)",
	     (unsigned long long)n, (double)n / nit / (double)ng, per / 1e6, short_name(f->kx[top].name, buf, sizeof(buf)),
	     (unsigned long long)f->kx[top].count, f->kx[top].ns / 1e6);
	if (dv && dv->ccmaj)
		gt_fd_evidence(it, "the GPU has compute capability %u.%u: tensor cores with TF32 and BF16", dv->ccmaj, dv->ccmin);
	else
		gt_fd_evidence(it, "the GPU's compute capability is not in the input: assumed Ampere or later (TF32 tensor cores)");
	snprintf(it->method, sizeof(it->method),
		 "FP32 GEMM time per iteration x (1 - 1/%.0f): TF32 tensor-core GEMMs run about %.0fx faster than FP32 "
		 "CUDA-core GEMMs of the same shape on A100/H100 (an estimate; BF16 gains more, precision permitting)",
		 FD_TF32_SPEEDUP, FD_TF32_SPEEDUP);
	snprintf(it->where, sizeof(it->where), "%s", short_name(f->kx[top].name, buf, sizeof(buf)));
	fixes(it,
	      "torch.backends.cuda.matmul.allow_tf32 = True (or torch.set_float32_matmul_precision(\"high\")); "
	      "or torch.autocast(\"cuda\", dtype=torch.bfloat16)",
	      "cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH), or cublasGemmEx with "
	      "CUBLAS_COMPUTE_32F_FAST_TF32, or BF16 inputs",
	      "PyTorch docs, 'CUDA semantics: TensorFloat-32 (TF32) on Ampere (and later) devices'; cuBLAS docs, "
	      "cublasSetMathMode");
	it->nev = 1;
	it->ev[0].ts_ns = f->kx[top].first;
	it->ev[0].dur_ns = 0;
	it->ev[0].ts_us = view_us(f, src, f->kx[top].first);
	snprintf(it->ev[0].what, sizeof(it->ev[0].what), "first launch of %.140s", short_name(f->kx[top].name, buf, sizeof(buf)));
	snprintf(it->ev[0].where, sizeof(it->ev[0].where), "device %d stream %u", dev, f->kx[top].stream);
}

static void grid_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L)
{
	/* the kernel configuration whose grid leaves the most SM time unused */
	double best = 0;
	long bk = -1;
	int bc = 0;
	unsigned bsms = 0;
	for (size_t i = 0; i < f->nkx; i++) {
		struct fd_kname *k = &f->kx[i];
		if (!k->name || gt_an_is_nccl(k->name))
			continue; /* NCCL picks its own channel count: few blocks by design */
		for (int j = 0; j < k->ncfg; j++) {
			struct fd_kcfg *c = &k->cfg[j];
			const struct fd_dev *dv = dev_of(f, c->source, c->device);
			if (!dv || !dv->sms || c->blocks >= dv->sms || !c->count)
				continue;
			double mean = c->ns / (double)c->count;
			if (mean < 20000.0) /* short kernels: launch-bound territory, not grid size */
				continue;
			double lost = c->in_ns * (1.0 - (double)c->blocks / dv->sms); /* inside the iterations */
			if (lost > best)
				best = lost, bk = (long)i, bc = j, bsms = dv->sms;
		}
	}
	if (bk < 0)
		return;
	struct fd_kcfg *c = &f->kx[bk].cfg[bc];
	int n = 1;
	double T = 0;
	const char *lab = "";
	for (size_t g = 0; g < r->ngpu; g++)
		if (r->gpu[g].source == c->source && r->gpu[g].device == c->device)
			T = iter_time(&r->gpu[g], &n), lab = r->gpu[g].label;
	struct gt_fd_item *it = gt_fd_new_item(L, "small-grid");
	if (!it)
		return;
	set_gain(it, best / n, T);
	it->upper_bound = 1;
	char buf[200];
	const char *nm = short_name(f->kx[bk].name, buf, sizeof(buf));
	snprintf(it->title, sizeof(it->title), "Kernel grid too small to fill the GPU: %u blocks on %u SMs (%.60s)",
		 c->blocks, bsms, nm);
	gt_fd_evidence(it, "%s: %llu launches (%.1f per iteration) of %u blocks x %u threads, %.3f ms each on average, %.3f ms "
		 "per iteration; the GPU has %u SMs, so at least %u SMs stay idle while it runs",
	     nm, (unsigned long long)c->count, (double)c->count / n, c->blocks, c->threads, c->ns / (double)c->count / 1e6,
	     c->ns / n / 1e6, bsms, bsms - c->blocks);
	snprintf(it->method, sizeof(it->method),
		 "kernel time per iteration x (1 - blocks/SMs): the time saved if the same work were spread over every "
		 "SM (upper bound: assumes the work divides evenly and the kernel is not limited by one block's "
		 "serial part)");
	snprintf(it->where, sizeof(it->where), "%s stream %u, %s", lab, c->stream, nm);
	fixes(it,
	      "a larger batch, or let torch.compile retile the op; for a custom kernel (Triton/CUDA extension) pick a "
	      "grid of at least one block per SM",
	      "launch at least as many blocks as SMs (better 2-4 per SM; cudaOccupancyMaxActiveBlocksPerMultiprocessor), "
	      "a grid-stride loop, or split the work (split-K) across more blocks",
	      "CUDA C++ Best Practices Guide, 'Execution Configuration Optimizations: Occupancy'");
	it->nev = 1;
	it->ev[0].ts_ns = c->first;
	it->ev[0].ts_us = view_us(f, c->source, c->first);
	snprintf(it->ev[0].what, sizeof(it->ev[0].what), "first launch with %u blocks", c->blocks);
	snprintf(it->ev[0].where, sizeof(it->ev[0].where), "%s stream %u", lab, c->stream);
}

/* Copies not overlapped with kernels, on a stream that also runs kernels. */
static void serial_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L)
{
	double best = 0, bT = 0;
	size_t bg = 0;
	int found = 0;
	double bexp = 0, bcomp = 0;
	for (size_t g = 0; g < r->ngpu; g++) {
		const struct gt_an_gpu *ag = &r->gpu[g];
		int shared = 0;
		double copy = 0;
		for (size_t i = 0; i < f->nst; i++) {
			const struct fd_stream *s = &f->st[i];
			if (s->source != ag->source || s->device != ag->device)
				continue;
			copy += s->copy_ns;
			if (s->copies && s->kernels)
				shared = 1;
		}
		if (!shared || copy <= 0)
			continue;
		int n;
		double T = iter_time(ag, &n);
		double exp_sum = 0, comp_sum = 0;
		const struct gt_an_window *w = ag->niters ? ag->iters : &ag->total;
		size_t nw = ag->niters ? ag->niters : 1;
		for (size_t i = 0; i < nw; i++) {
			double kern = w[i].compute_ns + w[i].comm_ns - w[i].overlap_ns;
			double ex = w[i].busy_ns - kern;
			double share = w[i].memop_ns > 0 ? 1.0 : 0;
			if (ex > 0)
				exp_sum += ex * share;
			comp_sum += w[i].compute_ns;
		}
		/* memsets are memops too: count only the copies' share of the memory time */
		double memop = 0;
		for (size_t i = 0; i < nw; i++)
			memop += w[i].memop_ns;
		if (memop > 0 && copy < memop)
			exp_sum *= copy / memop;
		double gain = (exp_sum < comp_sum ? exp_sum : comp_sum) / n;
		if (gain > best) {
			best = gain, bg = g, bT = T, found = 1;
			bexp = exp_sum / n, bcomp = comp_sum / n;
		}
	}
	if (!found)
		return;
	const struct gt_an_gpu *ag = &r->gpu[bg];
	struct gt_fd_item *it = gt_fd_new_item(L, "copy-compute-serial");
	if (!it)
		return;
	set_gain(it, best, bT);
	it->upper_bound = 1;
	snprintf(it->title, sizeof(it->title), "Copies serialized with compute on one stream (%.3f ms per iteration "
					       "not overlapped)",
		 bexp / 1e6);
	gt_fd_evidence(it, "per iteration on %s: %.3f ms of copies run while no kernel runs, %.3f ms of compute that could hide "
		 "them",
	     ag->label, bexp / 1e6, bcomp / 1e6);
	for (size_t i = 0; i < f->nst; i++) {
		const struct fd_stream *s = &f->st[i];
		if (s->source == ag->source && s->device == ag->device && s->copies && s->kernels)
			gt_fd_evidence(it, "stream %u runs %llu copies (%.3f ms) and %llu kernels (%.3f ms): on one stream they "
				 "cannot overlap",
			     s->stream, (unsigned long long)s->copies, s->copy_ns / 1e6, (unsigned long long)s->kernels,
			     s->kern_ns / 1e6);
	}
	snprintf(it->method, sizeof(it->method),
		 "min(copy time not overlapped with kernels, compute time) per iteration: what a copy on a second "
		 "stream could hide behind compute (upper bound: the data dependencies may allow less)");
	snprintf(it->where, sizeof(it->where), "%s", ag->label);
	fixes(it,
	      "copy the next batch on a side stream: with torch.cuda.stream(s): x = x_cpu.pin_memory().to(dev, "
	      "non_blocking=True); then torch.cuda.current_stream().wait_stream(s) (or a prefetching loader)",
	      "split the data into chunks; cudaMemcpyAsync chunk i+1 on a copy stream while kernels work on chunk i "
	      "on the compute stream; order with cudaEventRecord/cudaStreamWaitEvent; pinned host memory",
	      "CUDA C++ Best Practices Guide, 'Asynchronous and Overlapping Transfers with Computation'");
}

static void comm_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L)
{
	double best = 0, bT = 0, bcomm = 0, bov = 0, worst = 0;
	size_t bg = 0, wg = 0;
	int found = 0;
	for (size_t g = 0; g < r->ngpu; g++) {
		const struct gt_an_gpu *ag = &r->gpu[g];
		int n;
		double T = iter_time(ag, &n);
		double ex = 0, comm = 0, ov = 0;
		if (ag->niters)
			for (size_t i = 0; i < ag->niters; i++)
				ex += ag->iters[i].exposed_ns, comm += ag->iters[i].comm_ns, ov += ag->iters[i].overlap_ns;
		else
			ex = ag->total.exposed_ns, comm = ag->total.comm_ns, ov = ag->total.overlap_ns;
		if (comm <= 0)
			continue;
		/* the least exposed GPU: what even the last rank to arrive waits (the rest of the others' wait is
		 * the straggler's) */
		if (!found || ex / n < best)
			best = ex / n, bg = g, bT = T, bcomm = comm / n, bov = ov / n, found = 1;
		if (ex / n > worst)
			worst = ex / n, wg = g;
	}
	if (!found || best <= 0)
		return;
	struct gt_fd_item *it = gt_fd_new_item(L, "exposed-comm");
	if (!it)
		return;
	set_gain(it, best, bT);
	it->upper_bound = 1;
	snprintf(it->title, sizeof(it->title), "Communication not hidden behind compute (%.3f ms per iteration exposed)",
		 best / 1e6);
	gt_fd_evidence(it, "on %s per iteration: %.3f ms of NCCL kernels, %.3f ms of them overlapped with compute (%.0f%%), %.3f "
		 "ms exposed",
	     r->gpu[bg].label, bcomm / 1e6, bov / 1e6, bcomm > 0 ? 100.0 * bov / bcomm : 0.0, best / 1e6);
	if (r->ngpu > 1 && wg != bg)
		gt_fd_evidence(it, "the most exposed GPU, %s, has %.3f ms per iteration exposed: the difference is waiting for other "
			 "ranks (see straggler)",
		     r->gpu[wg].label, worst / 1e6);
	for (size_t i = 0; i < r->nnccl && i < 3; i++)
		gt_fd_evidence(it, "%s: %llu calls, %.3f ms per iteration", r->nccl[i].name, (unsigned long long)r->nccl[i].count,
		     r->nccl[i].time_per_iter_ns / 1e6);
	snprintf(it->method, sizeof(it->method),
		 "NCCL kernel time not overlapped with compute kernels, per iteration, on the GPU where it is least (the "
		 "rest of the other GPUs' is waiting for a late rank: the straggler finding's); upper bound: full overlap");
	snprintf(it->where, sizeof(it->where), "%s", r->gpu[bg].label);
	fixes(it,
	      "DDP: let gradient all-reduce overlap backward (default buckets; tune bucket_cap_mb, "
	      "gradient_as_bucket_view=True, no sync in the loop); FSDP: forward_prefetch/backward_prefetch; "
	      "no_sync() for gradient accumulation",
	      "run NCCL on its own stream and launch independent compute meanwhile; split large collectives into "
	      "buckets that start as soon as their data is ready",
	      "PyTorch docs, 'DistributedDataParallel' notes (bucket_cap_mb); NCCL User Guide, 'CUDA Stream Semantics'");
	(void)f;
}


static void straggler_finding(struct gt_fd *f, const struct gt_an_result *r, struct gt_fd_list *L)
{
	/* per source: compute time per iteration (its busiest GPU) */
	int nsrc = 0;
	for (size_t g = 0; g < r->ngpu; g++)
		if (r->gpu[g].source + 1 > nsrc)
			nsrc = r->gpu[g].source + 1;
	double *c = calloc((size_t)nsrc + 1, sizeof(double)), *sorted = calloc((size_t)nsrc + 1, sizeof(double));
	double *wait = calloc((size_t)nsrc + 1, sizeof(double));
	if (!c || !sorted || !wait)
		goto out;
	int k = 0;
	double T = 0;
	for (size_t g = 0; g < r->ngpu; g++) {
		int n;
		double t = iter_time(&r->gpu[g], &n);
		double comp = 0, ex = 0;
		if (r->gpu[g].niters)
			for (size_t i = 0; i < r->gpu[g].niters; i++)
				comp += r->gpu[g].iters[i].compute_ns, ex += r->gpu[g].iters[i].exposed_ns;
		else
			comp = r->gpu[g].total.compute_ns, ex = r->gpu[g].total.exposed_ns;
		int s = r->gpu[g].source;
		if (comp / n > c[s])
			c[s] = comp / n, wait[s] = ex / n;
		if (t > T)
			T = t;
	}
	for (int s = 0; s < nsrc; s++)
		if (c[s] > 0)
			sorted[k++] = c[s];
	if (k < 2)
		goto out;
	int slow = 0;
	for (int s = 0; s < nsrc; s++)
		if (c[s] > c[slow])
			slow = s;
	/* the median of the other ranks (with two ranks: the other one) */
	k = 0;
	for (int s = 0; s < nsrc; s++)
		if (c[s] > 0 && s != slow)
			sorted[k++] = c[s];
	gt_sort(sorted, (size_t)k, sizeof(double), dbl_cmp);
	double med = k % 2 ? sorted[k / 2] : (sorted[k / 2 - 1] + sorted[k / 2]) / 2;
	double gain = c[slow] - med;
	/* the others wait for it in their collectives: their exposed communication bounds the gain */
	double others = 0;
	int no = 0;
	for (int s = 0; s < nsrc; s++)
		if (s != slow && c[s] > 0)
			others += wait[s], no++;
	if (no)
		others /= no;
	if (others < gain)
		gain = others;
	if (gain <= 0 || c[slow] < med * 1.02)
		goto out;
	struct gt_fd_item *it = gt_fd_new_item(L, "straggler");
	if (!it)
		goto out;
	set_gain(it, gain, T);
	it->upper_bound = 1;
	char lab[64];
	gt_an_source_label(r, slow, lab, sizeof(lab));
	snprintf(it->title, sizeof(it->title), "Straggler rank %s: the other ranks wait for it in their collectives", lab);
	gt_fd_evidence(it, "%s computes %.3f ms per iteration, the median of the other ranks %.3f ms (+%.1f%%); the other ranks' exposed "
		 "communication is %.3f ms per iteration",
	     lab, c[slow] / 1e6, med / 1e6, med > 0 ? 100.0 * (c[slow] - med) / med : 0.0, others / 1e6);
	snprintf(it->method, sizeof(it->method),
		 "min(the slow rank's compute time - the median of the other ranks', the other ranks' exposed communication) per "
		 "iteration: what the others would not wait if it were as fast as the median (upper bound)");
	snprintf(it->where, sizeof(it->where), "%s", lab);
	fixes(it,
	      "find why this rank has more work or runs slower: uneven data shards or sequence lengths, a data loader "
	      "that is slower on this rank, a throttled or different GPU; balance the work (bucket by length)",
	      "balance the work per rank; check the GPU's clocks and power (gputap run --tools power) on that rank",
	      "docs/fleet.md (gputap fleet: late ranks per collective); PyTorch docs, 'DistributedDataParallel'");
	(void)f;
out:
	free(c);
	free(sorted);
	free(wait);
}

static int item_cmp(const void *a, const void *b)
{
	const struct gt_fd_item *x = a, *y = b;
	if (x->gain_ms != y->gain_ms)
		return x->gain_ms > y->gain_ms ? -1 : 1;
	return strcmp(x->id, y->id);
}

void gt_fd_rank(struct gt_fd_list *L)
{
	if (L->n)
		gt_sort(L->v, L->n, sizeof(*L->v), item_cmp);
}

struct gt_fd_list *gt_fd_finish(struct gt_fd *f, const struct gt_an_result *r)
{
	struct gt_fd_list *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	if (!r->has_timeline || !r->ngpu) {
		gt_fd_list_free(L);
		return gt_fd_none("the input has no timeline (nsys summary CSVs): no gaps, calls or copies to look at");
	}
	/* the iteration time of the input: the longest of its GPUs' */
	for (size_t g = 0; g < r->ngpu; g++) {
		int n;
		double T = iter_time(&r->gpu[g], &n);
		if (T / 1e6 > L->iter_ms)
			L->iter_ms = T / 1e6;
	}
	L->iters = r->gpu[0].niters ? (int)r->gpu[0].niters : 0;
	if (L->iters)
		snprintf(L->iter_how, sizeof(L->iter_how), "%d iterations (%s); iteration time = the mean over them "
							   "(the first left out of 3 or more) of max(host period, GPU span)",
			 L->iters, r->iter_source);
	else
		snprintf(L->iter_how, sizeof(L->iter_how), "no iterations found: the whole input counts as one iteration "
							   "(--nvtx TAG or --iters N sets them)");
	uint64_t api = 0, kinds = 0, grids = 0, copies = 0;
	for (size_t s = 0; s < f->nsrc; s++) {
		api += f->src[s].api_calls;
		kinds += f->src[s].copies_kind_known;
		grids += f->src[s].kernels_grid;
		copies += f->src[s].copies;
	}
	int has_launch = 0;
	for (size_t i = 0; i < r->nkernels && !has_launch; i++)
		has_launch = r->kernels[i].launched > 0;
	int ranks = 0;
	for (size_t g = 0; g < r->ngpu; g++)
		if (r->gpu[g].source + 1 > ranks)
			ranks = r->gpu[g].source + 1;
	/* gaps: need launches (when the host launched each op) */
	if (has_launch) {
		static const char *ids[C_N] = {"step-gap", "alloc-churn", "sync-copy", "host-sync", "launch-bound",
					       "host-gap"};
		for (int c = 0; c < C_N; c++) {
			if (c == C_STEP && !L->iters) {
				skip(L, ids[c], "no iterations in this input: no step boundaries (--nvtx TAG or ProfilerStep#N "
						"ranges make them)");
				continue;
			}
			if ((c == C_ALLOC || c == C_SYNCCOPY || c == C_SYNC) && !api) {
				skip(L, ids[c], "this trace has no API call names");
				continue;
			}
			gt_fd_checked(L, ids[c]);
			gap_finding(f, r, L, c);
		}
	} else {
		const char *why = "this trace has no API records (launch calls): when the host launched each op is unknown";
		skip(L, "launch-bound", why);
		skip(L, "host-gap", why);
		skip(L, "host-sync", why);
		skip(L, "sync-copy", why);
		skip(L, "alloc-churn", why);
		skip(L, "step-gap", why);
	}
	if (kinds) {
		gt_fd_checked(L, "pageable-copy");
		pageable_finding(f, r, L);
	} else {
		skip(L, "pageable-copy", copies ? "the copies carry no host memory kind (pageable/pinned)"
						: "no host-device copies in this input");
	}
	gt_fd_checked(L, "memset");
	memset_finding(f, r, L);
	if (grids && f->ndev) {
		gt_fd_checked(L, "small-grid");
		grid_finding(f, r, L);
	} else {
		skip(L, "small-grid", !grids ? "the kernels carry no grid sizes" : "the GPU's SM count is not in the input");
	}
	gt_fd_checked(L, "copy-compute-serial");
	serial_finding(f, r, L);
	if (f->nkx) {
		gt_fd_checked(L, "fp32-gemm");
		fp32_finding(f, r, L);
	} else {
		skip(L, "fp32-gemm", "no kernel names");
	}
	if (r->nccl_count) {
		gt_fd_checked(L, "exposed-comm");
		comm_finding(f, r, L);
	} else {
		skip(L, "exposed-comm", "no communication (NCCL kernels) in this input");
	}
	if (ranks >= 2 && r->nccl_count) {
		gt_fd_checked(L, "straggler");
		straggler_finding(f, r, L);
	} else {
		skip(L, "straggler", ranks < 2 ? "one rank: give the traces of every rank to compare them"
					       : "no communication: the ranks do not wait for each other");
	}
	/* a gputap run's kernel_metrics.csv can show these (gt_fd_counters replaces the reasons) */
	skip(L, "uncoalesced", "needs per-kernel memory counters (sectors per request): only a gputap run made with "
			       "--metrics has them (kernel_metrics.csv)");
	skip(L, "low-occupancy", "needs per-kernel achieved-occupancy counters: only a gputap run made with --metrics "
				 "has them (kernel_metrics.csv)");
	gt_fd_rank(L);
	return L;
}

struct gt_fd_list *gt_fd_none(const char *why)
{
	struct gt_fd_list *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	static const char *all[] = {"launch-bound", "host-gap", "host-sync", "sync-copy", "alloc-churn", "step-gap",
				    "pageable-copy", "memset", "small-grid", "copy-compute-serial", "fp32-gemm",
				    "exposed-comm", "straggler", "uncoalesced", "low-occupancy"};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		skip(L, all[i], why);
	snprintf(L->iter_how, sizeof(L->iter_how), "no timeline");
	return L;
}

void gt_fd_list_free(struct gt_fd_list *L)
{
	if (!L)
		return;
	for (size_t i = 0; i < L->n; i++) {
		for (size_t j = 0; j < L->v[i].nevidence; j++)
			free(L->v[i].evidence[j]);
		free(L->v[i].evidence);
	}
	free(L->v);
	free(L->skipped);
	for (size_t i = 0; i < L->nchecked; i++)
		free(L->checked[i]);
	free(L->checked);
	free(L);
}

/* ---- output ---- */

/* Bytes a terminal acts on are written as \xNN (names come from the input). */
static void tputs(const char *s, FILE *o)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch < 0x20 || ch == 0x7f)
			fprintf(o, "\\x%02x", ch);
		else
			fputc(ch, o);
	}
}

/* Listed: at least min_gain % of an iteration and at least FD_MIN_GAIN_MS (microseconds per iteration are
 * not worth a user's time, whatever their share of a tiny iteration). */
int gt_fd_listed(const struct gt_fd_item *it, double min_gain)
{
	return it->gain_pct >= min_gain && it->gain_ms >= FD_MIN_GAIN_MS;
}

size_t gt_fd_shown(const struct gt_fd_list *L, double min_gain)
{
	size_t k = 0;
	for (size_t i = 0; i < L->n; i++)
		k += gt_fd_listed(&L->v[i], min_gain);
	return k;
}

/* A gain in ms, or in us when it is small. */
static const char *fmt_ms(char *b, size_t cap, double ms)
{
	if (ms >= 0.1)
		snprintf(b, cap, "%.3f ms", ms);
	else
		snprintf(b, cap, "%.1f us", ms * 1e3);
	return b;
}

void gt_fd_print_text(const struct gt_fd_list *L, double min_gain, int brief, FILE *o)
{
	size_t ns = gt_fd_shown(L, min_gain);
	if (L->iter_ms > 0)
		fprintf(o, "Findings (estimated gain >= %.1f%% of an iteration of %.3f ms, and >= %.0f us): %zu\n",
			min_gain, L->iter_ms, FD_MIN_GAIN_MS * 1e3, ns);
	else /* no timeline: no iteration time to take a share of (the checks below say why) */
		fprintf(o, "Findings: %zu (no iteration time in this input)\n", ns);
	size_t k = 0;
	for (size_t i = 0; i < L->n; i++) {
		const struct gt_fd_item *it = &L->v[i];
		if (!(gt_fd_listed(it, min_gain)))
			continue;
		k++;
		fprintf(o, "%s%zu. [%s] ", brief ? "  " : "\n", k, it->id);
		tputs(it->title, o);
		char gb[32];
		fprintf(o, "\n%s   gain: %s%s per iteration (%.1f%%)\n", brief ? "  " : "", it->upper_bound ? "up to " : "",
			fmt_ms(gb, sizeof(gb), it->gain_ms), it->gain_pct);
		if (brief)
			continue;
		fprintf(o, "   where: ");
		tputs(it->where, o);
		fputc('\n', o);
		for (size_t j = 0; j < it->nevidence; j++) {
			fputs("   evidence: ", o);
			tputs(it->evidence[j], o);
			fputc('\n', o);
		}
		for (int j = 0; j < it->nev; j++) {
			fprintf(o, "   event: at %.3f us", it->ev[j].ts_us);
			if (it->ev[j].dur_ns)
				fprintf(o, " for %.3f us", (double)it->ev[j].dur_ns / 1e3);
			fputs(" on ", o);
			tputs(it->ev[j].where, o);
			fputs(": ", o);
			tputs(it->ev[j].what, o);
			fputc('\n', o);
		}
		fputs("   how estimated: ", o);
		tputs(it->method, o);
		fputs("\n   fix (PyTorch): ", o);
		tputs(it->fix_torch, o);
		fputs("\n   fix (CUDA C): ", o);
		tputs(it->fix_cuda, o);
		fputs("\n   reference: ", o);
		tputs(it->reference, o);
		fputc('\n', o);
	}
	size_t below = L->n - ns;
	if (brief) {
		if (below)
			fprintf(o, "  (%zu more below the threshold; 'gputap advise' shows the evidence and fixes)\n", below);
		else if (ns)
			fprintf(o, "  ('gputap advise' shows the evidence and fixes)\n");
		return;
	}
	if (below) {
		fprintf(o, "\nBelow the threshold (not listed):");
		for (size_t i = 0; i < L->n; i++)
			if (!(gt_fd_listed(&L->v[i], min_gain)))
				fprintf(o, " %s (%.2f%%)", L->v[i].id, L->v[i].gain_pct);
		fputc('\n', o);
	}
	fprintf(o, "\nIterations: ");
	tputs(L->iter_how, o);
	fputc('\n', o);
	if (L->nchecked) {
		fprintf(o, "Checked:");
		for (size_t i = 0; i < L->nchecked; i++)
			fprintf(o, " %s", L->checked[i]);
		fputc('\n', o);
	}
	for (size_t i = 0; i < L->nskipped; i++) {
		fprintf(o, "Not checked: %s: ", L->skipped[i].id);
		tputs(L->skipped[i].why, o);
		fputc('\n', o);
	}
}

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))
static void jstr(yajl_gen g, const char *k, const char *v)
{
	GS(g, k);
	GS(g, v);
}

static void jnum(yajl_gen g, const char *k, double v)
{
	GS(g, k);
	char b[64];
	if (!isfinite(v))
		v = 0;
	int n = snprintf(b, sizeof(b), "%.6f", v);
	yajl_gen_number(g, b, (size_t)n);
}

void gt_fd_json(void *gen, const struct gt_fd_list *L, double min_gain)
{
	yajl_gen g = gen;
	yajl_gen_map_open(g);
	GS(g, "schema_version");
	yajl_gen_integer(g, GT_FD_SCHEMA_VERSION);
	jnum(g, "min_gain_pct", min_gain);
	jnum(g, "iteration_ms", L->iter_ms);
	GS(g, "iterations");
	yajl_gen_integer(g, L->iters);
	jstr(g, "iterations_how", L->iter_how);
	GS(g, "findings");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < L->n; i++) {
		const struct gt_fd_item *it = &L->v[i];
		if (!(gt_fd_listed(it, min_gain)))
			continue;
		yajl_gen_map_open(g);
		jstr(g, "id", it->id);
		jstr(g, "title", it->title);
		jnum(g, "gain_ms_per_iteration", it->gain_ms);
		jnum(g, "gain_pct", it->gain_pct);
		GS(g, "gain_is_upper_bound");
		yajl_gen_bool(g, it->upper_bound);
		jstr(g, "gain_method", it->method);
		jstr(g, "where", it->where);
		gt_an_jstrs(g, "evidence", it->evidence, it->nevidence);
		GS(g, "events");
		yajl_gen_array_open(g);
		for (int j = 0; j < it->nev; j++) {
			yajl_gen_map_open(g);
			jnum(g, "ts_us", it->ev[j].ts_us);
			jnum(g, "dur_us", (double)it->ev[j].dur_ns / 1e3);
			jstr(g, "where", it->ev[j].where);
			jstr(g, "what", it->ev[j].what);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		GS(g, "fix");
		yajl_gen_map_open(g);
		jstr(g, "pytorch", it->fix_torch);
		jstr(g, "cuda", it->fix_cuda);
		yajl_gen_map_close(g);
		jstr(g, "reference", it->reference);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "below_min_gain");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < L->n; i++) {
		const struct gt_fd_item *it = &L->v[i];
		if (gt_fd_listed(it, min_gain))
			continue;
		yajl_gen_map_open(g);
		jstr(g, "id", it->id);
		jnum(g, "gain_ms_per_iteration", it->gain_ms);
		jnum(g, "gain_pct", it->gain_pct);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "checked");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < L->nchecked; i++)
		GS(g, L->checked[i]);
	yajl_gen_array_close(g);
	GS(g, "not_checked");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < L->nskipped; i++) {
		yajl_gen_map_open(g);
		jstr(g, "id", L->skipped[i].id);
		jstr(g, "why", L->skipped[i].why);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void hputs(const char *s, FILE *o)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '<')
			fputs("&lt;", o);
		else if (ch == '>')
			fputs("&gt;", o);
		else if (ch == '&')
			fputs("&amp;", o);
		else if (ch == '"')
			fputs("&quot;", o);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(o, "\\x%02x", ch);
		else
			fputc(ch, o);
	}
}

void gt_fd_print_html(const struct gt_fd_list *L, double min_gain, FILE *o)
{
	size_t ns = gt_fd_shown(L, min_gain);
	if (L->iter_ms > 0)
		fprintf(o,
			"<h2 id=\"findings\">Findings</h2>\n<p class=\"sub\">Estimated gain of at least %.1f%% of an "
			"iteration (%.3f ms): %zu. <code>gputap advise</code> prints the same with every event; "
			"docs/findings.md defines each.</p>\n",
			min_gain, L->iter_ms, ns);
	else
		fprintf(o,
			"<h2 id=\"findings\">Findings</h2>\n<p class=\"sub\">%zu (no iteration time in this input). "
			"docs/findings.md defines each kind.</p>\n",
			ns);
	if (ns) {
		fputs("<ol>\n", o);
		for (size_t i = 0; i < L->n; i++) {
			const struct gt_fd_item *it = &L->v[i];
			if (!(gt_fd_listed(it, min_gain)))
				continue;
			fputs("<li><p><b>", o);
			hputs(it->title, o);
			char gb[32];
			fprintf(o, "</b> <code>%s</code><br>gain: %s%s per iteration (%.1f%%) &middot; ", it->id,
				it->upper_bound ? "up to " : "", fmt_ms(gb, sizeof(gb), it->gain_ms), it->gain_pct);
			hputs(it->where, o);
			fputs("</p><ul>", o);
			for (size_t j = 0; j < it->nevidence; j++) {
				fputs("<li>", o);
				hputs(it->evidence[j], o);
				fputs("</li>", o);
			}
			for (int j = 0; j < it->nev; j++) {
				fprintf(o, "<li>event at %.3f us (%.3f us) on ", it->ev[j].ts_us, (double)it->ev[j].dur_ns / 1e3);
				hputs(it->ev[j].where, o);
				fputs(": ", o);
				hputs(it->ev[j].what, o);
				fputs("</li>", o);
			}
			fputs("<li>how estimated: ", o);
			hputs(it->method, o);
			fputs("</li><li>fix (PyTorch): ", o);
			hputs(it->fix_torch, o);
			fputs("</li><li>fix (CUDA C): ", o);
			hputs(it->fix_cuda, o);
			fputs("</li><li>reference: ", o);
			hputs(it->reference, o);
			fputs("</li></ul></li>\n", o);
		}
		fputs("</ol>\n", o);
	}
	if (L->n > ns) {
		fputs("<p class=\"note\">Below the threshold:", o);
		for (size_t i = 0; i < L->n; i++)
			if (!(gt_fd_listed(&L->v[i], min_gain)))
				fprintf(o, " %s (%.2f%%)", L->v[i].id, L->v[i].gain_pct);
		fputs("</p>\n", o);
	}
	if (L->nskipped) {
		fputs("<p class=\"note\">Not checked:", o);
		for (size_t i = 0; i < L->nskipped; i++) {
			fprintf(o, "%s %s: ", i ? ";" : "", L->skipped[i].id);
			hputs(L->skipped[i].why, o);
		}
		fputs("</p>\n", o);
	}
}
