/*
 * analyze/colls.c — one row per NCCL collective per rank, so that the ranks of a job can be matched
 * (`gputap analyze --collectives`, used by `gputap fleet`).
 *
 * Which collective an NCCL kernel ran comes, best first, from:
 *  - "nccl": the records NCCL's profiler plugin interface gave the tap (GT_REC_NCCL_COLL: communicator
 *    hash, sequence number, algorithm, protocol, data type and count: the message size in bytes).  A
 *    record starts next to the launch of the kernel that runs it, on the same host thread: on NCCL
 *    2.28 a few microseconds after the launch call returns (measured on real DDP runs: 0.3-7.6 us
 *    after, the next launch 130 us or more later); a record made before the launch (at the end of
 *    the NCCL group) is possible too.  So each record has two candidates: the last NCCL kernel its
 *    thread launched at or before the record's start (B_k: the largest correlation id of an API call
 *    of that thread that started at or before it; ids grow with launch time within a process, as for
 *    the iterations in timeline.c), and the first one its thread launched at or after it (C_k: the
 *    smallest id of a call of that thread that started at or after it).  By thread: a program's
 *    threads call NCCL at once (PyTorch's main thread in forward and autograd's in backward, seen on
 *    every real DDP and FSDP run: the records and the launches of each on its own thread), and another
 *    thread's launch between a record and its own would otherwise be taken for it.  A kernel whose
 *    launch was not seen, or a trace that does not name threads, matches any.  Per process the rule that agrees more often with the
 *    kernels' own names (an AllReduce record on an ncclDevKernel_AllReduce_... kernel) wins; when
 *    the names cannot tell (a job of AllReduces only), the one whose kernels were launched closer to
 *    their records.  Several records of one group share one kernel: each is a row with the kernel's
 *    times; of records that fall on one kernel, one that started more than GROUP_SPREAD_NS further
 *    from its launch than the nearest is dropped (a collective captured into a CUDA graph has a record
 *    but no kernel launch of its own; its replays' kernels come without records, matched by order).
 *    A send or receive record (NCCL >= 2.26, interface 4 on: its peer, and the tap's count of the
 *    earlier ones of that direction with that peer as its sequence number) is named for the pair,
 *    "SendRecv <sender>><receiver>" in the communicator's ranks, on both sides: the k-th send from
 *    A to B and the k-th receive by B from A are one operation of those two ranks.
 *  - "trace": the trace's own arguments (Kineto kernel args "Process Group Name" and "Seq");
 *    PyTorch's kernel args also give the message: "In msg nelems", "Out msg nelems" and "dtype"
 *    (its names turned into NCCL's: "Float" is ncclFloat32), whatever the match;
 *  - "order": the order of the rank's NCCL kernels (by launch, else by GPU start) per communicator
 *    when the trace names it, else over all of the rank's NCCL kernels, and per kind (as NCCL numbers
 *    them; a PyTorch-profiler send or receive named for its pair from its "Dst Rank" / "Src Rank" and
 *    the trace's rank).  Ranks of one job issue their collectives in the same order, which is what
 *    NCCL itself relies on.
 * Memory: 200 bytes per NCCL kernel of the input (one rank, for `gputap fleet`).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "analyze/an_internal.h"
#include "core/sort.h"

struct krow { /* an NCCL kernel */
	struct gt_an_coll c;
	uint64_t corr;
	uint32_t tid; /* the thread that launched it (0: no launch seen, or the trace does not say) */
	int has_seq;
	int p2p;   /* a PyTorch-profiler send (1) or receive (2), 0 otherwise */
	long peer; /* its other rank */
};

struct nrec { /* a plugin record */
	int source;
	uint32_t tid; /* the thread that called NCCL */
	uint64_t key; /* source and thread: B_k and C_k are the calls of the record's own thread */
	uint64_t start, bound; /* bound: C_k, UINT64_MAX when no API call followed */
	uint64_t last;         /* B_k, 0 when no API call came before */
	uint64_t comm, seq, count;
	char func[32], algo[16], proto[16], dtype[16];
	char pair[32]; /* a Send or Recv: "SendRecv <sender>><receiver>", the row's name on both sides */
};

struct gt_colls {
	struct krow *k;
	size_t nk, kcap;
	long *rank; /* per source, its rank (-1 unknown): a PyTorch-profiler trace's */
	size_t nrank;
	struct nrec *n;
	size_t nn, ncap;
	size_t *ord; /* the records by (key, start): gt_colls_finish's launch scan */
};

struct gt_colls *gt_colls_new(void)
{
	return calloc(1, sizeof(struct gt_colls));
}

void gt_colls_free(struct gt_colls *cs)
{
	if (!cs)
		return;
	free(cs->k);
	free(cs->n);
	free(cs->ord);
	free(cs->rank);
	free(cs);
}

void gt_colls_p2p(struct gt_colls *cs, int send, long peer)
{
	if (cs->nk) {
		cs->k[cs->nk - 1].p2p = send ? 1 : 2;
		cs->k[cs->nk - 1].peer = peer;
	}
}

void gt_colls_source_rank(struct gt_colls *cs, int source, long rank)
{
	if (source < 0)
		return;
	if ((size_t)source >= cs->nrank) {
		size_t n = (size_t)source + 1;
		long *v = realloc(cs->rank, n * sizeof(*v));
		if (!v)
			return; /* the pairs stay unnamed: matched by order as other kernels */
		for (size_t i = cs->nrank; i < n; i++)
			v[i] = -1;
		cs->rank = v;
		cs->nrank = n;
	}
	cs->rank[source] = rank;
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* NCCL's name of a PyTorch element type as its profiler names it in a collective's "dtype" argument
 * (c10's ScalarType names; bool travels as uint8); NULL for one NCCL has no type of. */
static const char *torch_dtype(const char *name)
{
	static const char *const tab[][2] = {
	    {"Float", "ncclFloat32"},	 {"BFloat16", "ncclBfloat16"},	   {"Half", "ncclFloat16"},
	    {"Double", "ncclFloat64"},	 {"Int", "ncclInt32"},		   {"Long", "ncclInt64"},
	    {"Char", "ncclInt8"},	 {"Byte", "ncclUint8"},		   {"Bool", "ncclUint8"},
	    {"UInt32", "ncclUint32"},	 {"UInt64", "ncclUint64"},	   {"Float8_e4m3fn", "ncclFloat8e4m3"},
	    {"Float8_e5m2", "ncclFloat8e5m2"}};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(name, tab[i][0]) == 0)
			return tab[i][1];
	return NULL;
}

int gt_colls_kernel(struct gt_colls *cs, int source, int device, uint64_t start, uint64_t end, uint64_t corr,
		    const char *name, const char *comm, uint64_t seq, uint64_t count, const char *dtype)
{
	if (cs->nk == cs->kcap) {
		size_t nc = cs->kcap ? cs->kcap * 2 : 256;
		struct krow *v = realloc(cs->k, nc * sizeof(*v));
		if (!v)
			return -1;
		cs->k = v;
		cs->kcap = nc;
	}
	struct krow *k = &cs->k[cs->nk++];
	memset(k, 0, sizeof(*k));
	k->c.source = source;
	k->c.device = device;
	k->c.start_ns = start;
	k->c.end_ns = end > start ? end : start;
	k->c.iteration = -1;
	k->corr = corr;
	gt_an_nccl_collective(name, k->c.name, sizeof(k->c.name));
	copy(k->c.comm, sizeof(k->c.comm), comm);
	k->has_seq = seq != GT_SEQ_UNKNOWN;
	k->c.seq = k->has_seq ? seq : 0;
	copy(k->c.match, sizeof(k->c.match), comm && comm[0] && k->has_seq ? "trace" : "order");
	if (dtype && dtype[0]) {
		const char *nccl = gt_colls_dtype_size(dtype) ? dtype : torch_dtype(dtype);
		const char *d = nccl ? nccl : dtype;
		snprintf(k->c.dtype, sizeof(k->c.dtype), "%.*s", (int)gt_an_utf8_cut(d, strlen(d), sizeof(k->c.dtype) - 1),
			 d);
	}
	k->c.count = count;
	k->c.bytes = count * gt_colls_dtype_size(k->c.dtype);
	return 0;
}

/* NCCL's data types as its profiler interface names them (ncclDataType_t's names; the v1 interface's
 * numbers are turned into these by the tap), with the older aliases. */
unsigned gt_colls_dtype_size(const char *name)
{
	static const struct {
		const char *name;
		unsigned size;
	} tab[] = {{"ncclInt8", 1},	 {"ncclChar", 1},	 {"ncclUint8", 1},	  {"ncclFloat8e4m3", 1},
		   {"ncclFloat8e5m2", 1}, {"ncclFloat16", 2},	 {"ncclHalf", 2},	  {"ncclBfloat16", 2},
		   {"ncclInt32", 4},	 {"ncclInt", 4},	 {"ncclUint32", 4},	  {"ncclFloat32", 4},
		   {"ncclFloat", 4},	 {"ncclInt64", 8},	 {"ncclUint64", 8},	  {"ncclFloat64", 8},
		   {"ncclDouble", 8}};
	for (size_t i = 0; name && i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strcmp(name, tab[i].name) == 0)
			return tab[i].size;
	return 0;
}

/* The name of a send (`send`) or receive of rank `me` with `peer`, the same on both sides. */
static void pair_name(char *buf, size_t len, int send, long me, long peer)
{
	snprintf(buf, len, "SendRecv %ld>%ld", send ? me : peer, send ? peer : me);
}

int gt_colls_nccl(struct gt_colls *cs, int source, const struct gt_rec_nccl_coll *rec, const char *func,
		  const char *algo, const char *proto, const char *dtype)
{
	int send = func && strcmp(func, "Send") == 0, recv = func && strcmp(func, "Recv") == 0;
	/* a send to itself or a receive from itself (an all-to-all's own share): no other rank takes part */
	if ((send || recv) && rec->rank >= 0 && rec->rank == rec->root)
		return 0;
	if (cs->nn == cs->ncap) {
		size_t nc = cs->ncap ? cs->ncap * 2 : 256;
		struct nrec *v = realloc(cs->n, nc * sizeof(*v));
		if (!v)
			return -1;
		cs->n = v;
		cs->ncap = nc;
	}
	struct nrec *n = &cs->n[cs->nn++];
	memset(n, 0, sizeof(*n));
	n->source = source;
	n->tid = rec->h.tid;
	n->key = (uint64_t)(uint32_t)source << 32 | rec->h.tid;
	n->start = rec->start_ns;
	n->bound = UINT64_MAX;
	n->comm = rec->comm_hash;
	n->seq = rec->seq;
	n->count = rec->count;
	copy(n->func, sizeof(n->func), func);
	copy(n->algo, sizeof(n->algo), algo);
	copy(n->proto, sizeof(n->proto), proto);
	copy(n->dtype, sizeof(n->dtype), dtype);
	if ((send || recv) && rec->rank >= 0 && rec->root >= 0)
		pair_name(n->pair, sizeof(n->pair), send, rec->rank, rec->root);
	return 0;
}

static int k_corr_cmp(const void *a, const void *b)
{
	const struct krow *x = a, *y = b;
	if (x->c.source != y->c.source)
		return x->c.source < y->c.source ? -1 : 1;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	if (x->c.start_ns != y->c.start_ns)
		return x->c.start_ns < y->c.start_ns ? -1 : 1;
	return 0;
}

static int n_start_cmp(const void *a, const void *b)
{
	const struct nrec *x = a, *y = b;
	if (x->source != y->source)
		return x->source < y->source ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct nord {
	uint64_t key, start;
	size_t i;
};

static int nord_cmp(const void *a, const void *b)
{
	const struct nord *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* cs->ord: the records (in their (source, start) order) by (source, thread, start). */
static int order_by_thread(struct gt_colls *cs)
{
	free(cs->ord);
	cs->ord = malloc((cs->nn ? cs->nn : 1) * sizeof(size_t));
	struct nord *t = malloc((cs->nn ? cs->nn : 1) * sizeof(*t));
	if (!cs->ord || !t) {
		free(t);
		return -1;
	}
	for (size_t i = 0; i < cs->nn; i++)
		t[i] = (struct nord){cs->n[i].key, cs->n[i].start, i};
	gt_sort(t, cs->nn, sizeof(*t), nord_cmp);
	for (size_t i = 0; i < cs->nn; i++)
		cs->ord[i] = t[i].i;
	free(t);
	return 0;
}

/* rows [lo, hi) of `source` in a (source, key)-sorted array */
#define RANGE_OF(arr, n, field, src, lo, hi)                                                              \
	do {                                                                                               \
		size_t a_ = 0, b_ = (n);                                                                   \
		while (a_ < b_) {                                                                          \
			size_t m_ = a_ + (b_ - a_) / 2;                                                    \
			if ((arr)[m_].field < (src))                                                       \
				a_ = m_ + 1;                                                               \
			else                                                                               \
				b_ = m_;                                                                   \
		}                                                                                          \
		(lo) = a_;                                                                                 \
		b_ = (n);                                                                                  \
		while (a_ < b_) {                                                                          \
			size_t m_ = a_ + (b_ - a_) / 2;                                                    \
			if ((arr)[m_].field <= (src))                                                      \
				a_ = m_ + 1;                                                               \
			else                                                                               \
				b_ = m_;                                                                   \
		}                                                                                          \
		(hi) = a_;                                                                                 \
	} while (0)

/* The launch scan: launch time and thread of each NCCL kernel, and B_k and C_k of each plugin
 * record: the calls of the record's own thread (two threads that call NCCL at once, as a program's
 * main thread in forward and autograd's in backward may, each have their own neighbours). */
static void on_launch(void *arg, const struct gt_launch *l)
{
	struct gt_colls *cs = arg;
	int src = (int)l->source;
	size_t lo, hi;
	RANGE_OF(cs->k, cs->nk, c.source, src, lo, hi);
	while (lo < hi) { /* the kernel launched by this call */
		size_t m = lo + (hi - lo) / 2;
		if (cs->k[m].corr < l->corr)
			lo = m + 1;
		else
			hi = m;
	}
	for (size_t i = lo; i < cs->nk && cs->k[i].c.source == src && cs->k[i].corr == l->corr; i++) {
		if (!cs->k[i].c.launch_ns || l->start < cs->k[i].c.launch_ns)
			cs->k[i].c.launch_ns = l->start;
		cs->k[i].tid = l->tid;
	}
	if (!cs->nn)
		return;
	uint64_t key = (uint64_t)(uint32_t)src << 32 | l->tid;
	const size_t *o = cs->ord;
	size_t a = 0, b = cs->nn; /* the records of this source and thread: o[lo .. hi) */
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (cs->n[o[m]].key < key)
			a = m + 1;
		else
			b = m;
	}
	lo = a;
	for (b = cs->nn; a < b;) {
		size_t m = a + (b - a) / 2;
		if (cs->n[o[m]].key <= key)
			a = m + 1;
		else
			b = m;
	}
	hi = a;
	a = lo, b = hi; /* records that started at or before this call */
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (cs->n[o[m]].start <= l->start)
			a = m + 1;
		else
			b = m;
	}
	if (a > lo && l->corr < cs->n[o[a - 1]].bound)
		cs->n[o[a - 1]].bound = l->corr;
	a = lo, b = hi; /* the first record that started at or after this call */
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (cs->n[o[m]].start < l->start)
			a = m + 1;
		else
			b = m;
	}
	if (a < hi && l->corr > cs->n[o[a]].last)
		cs->n[o[a]].last = l->corr;
}

/* A kernel launched by thread `tid`, or one whose thread is not known (either side). */
static int same_thread(const struct krow *k, uint32_t tid)
{
	return !k->tid || !tid || k->tid == tid;
}

/* The NCCL kernel of `source` launched by thread `tid` with the smallest id >= `id` (after = 1) or
 * the largest id <= `id` (after = 0); SIZE_MAX if none. */
static size_t kernel_near(const struct gt_colls *cs, int source, uint32_t tid, uint64_t id, int after)
{
	size_t lo, hi;
	RANGE_OF(cs->k, cs->nk, c.source, source, lo, hi);
	size_t first = lo, end = hi;
	while (lo < hi) { /* lo: the first kernel past the id (after: at or past it) */
		size_t m = lo + (hi - lo) / 2;
		if (after ? cs->k[m].corr < id : cs->k[m].corr <= id)
			lo = m + 1;
		else
			hi = m;
	}
	if (after) {
		while (lo < end && !same_thread(&cs->k[lo], tid))
			lo++;
		return lo < end && cs->k[lo].corr ? lo : SIZE_MAX;
	}
	while (lo > first && !same_thread(&cs->k[lo - 1], tid))
		lo--;
	return lo > first && cs->k[lo - 1].corr ? lo - 1 : SIZE_MAX;
}

/* The record's kind on that kernel: the kernel's own name says the same ("Send" on a SendRecv kernel). */
static int same_kind(const struct nrec *n, const struct krow *k)
{
	return n->func[0] && strstr(k->c.name, n->func) != NULL;
}

/* The most sends and receives one kernel may run and still be a row per pair (docs/fleet.md). */
#define P2P_PER_KERNEL 8

/* How far apart the records of one NCCL group may start (they are made together, at the group's end). */
#define GROUP_SPREAD_NS 1000000ull

static uint64_t gap(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Per record, its kernel (index into cs->k, SIZE_MAX none): by the rule that fits its process best. */
static void pick_kernels(const struct gt_colls *cs, size_t *pick, size_t *after, size_t *before)
{
	for (size_t i = 0; i < cs->nn; i++) {
		const struct nrec *n = &cs->n[i];
		after[i] = n->bound == UINT64_MAX ? SIZE_MAX : kernel_near(cs, n->source, n->tid, n->bound, 1);
		before[i] = n->last ? kernel_near(cs, n->source, n->tid, n->last, 0) : SIZE_MAX;
	}
	for (size_t lo = 0, hi; lo < cs->nn; lo = hi) {
		long names = 0, closer = 0; /* > 0: the "after" rule fits better */
		for (hi = lo; hi < cs->nn && cs->n[hi].source == cs->n[lo].source; hi++) {
			const struct nrec *n = &cs->n[hi];
			const struct krow *ka = after[hi] == SIZE_MAX ? NULL : &cs->k[after[hi]];
			const struct krow *kb = before[hi] == SIZE_MAX ? NULL : &cs->k[before[hi]];
			names += (ka && same_kind(n, ka)) - (kb && same_kind(n, kb));
			if (ka && kb && ka->c.launch_ns && kb->c.launch_ns)
				closer += gap(ka->c.launch_ns, n->start) < gap(kb->c.launch_ns, n->start) ? 1 : -1;
		}
		int use_after = names ? names > 0 : closer > 0;
		for (size_t i = lo; i < hi; i++)
			pick[i] = use_after ? after[i] : before[i];
		/* Records that fall on one kernel: those of one NCCL group start together; one made far
		 * from the kernel's launch belongs to no launched kernel (a collective captured into a CUDA
		 * graph: its replays come without records) and is dropped. */
		for (size_t a = lo, b; a < hi; a = b) {
			uint64_t best = UINT64_MAX;
			for (b = a; b < hi && pick[b] == pick[a]; b++)
				if (pick[b] != SIZE_MAX && cs->k[pick[b]].c.launch_ns &&
				    gap(cs->k[pick[b]].c.launch_ns, cs->n[b].start) < best)
					best = gap(cs->k[pick[b]].c.launch_ns, cs->n[b].start);
			if (b - a < 2 || best == UINT64_MAX)
				continue;
			for (size_t i = a; i < b; i++)
				if (gap(cs->k[pick[i]].c.launch_ns, cs->n[i].start) > best + GROUP_SPREAD_NS)
					pick[i] = SIZE_MAX;
		}
	}
}

static int add_row(struct gt_an_coll **v, size_t *n, size_t *cap, const struct gt_an_coll *c)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct gt_an_coll *p = realloc(*v, nc * sizeof(*p));
		if (!p)
			return -1;
		*v = p;
		*cap = nc;
	}
	(*v)[(*n)++] = *c;
	return 0;
}

/* The iteration windows of a source: those of its first GPU (every GPU of a source shares them). */
static const struct gt_an_gpu *source_gpu(const struct gt_an_result *r, int source)
{
	for (size_t i = 0; i < r->ngpu; i++)
		if (r->gpu[i].source == source)
			return &r->gpu[i];
	return NULL;
}

static long window_of(const struct gt_an_gpu *g, uint64_t t, int last_open)
{
	if (!g || !g->niters || t < g->iters[0].start_ns)
		return -1;
	size_t lo = 0, hi = g->niters; /* iters[lo].start <= t */
	while (hi - lo > 1) {
		size_t m = lo + (hi - lo) / 2;
		if (g->iters[m].start_ns <= t)
			lo = m;
		else
			hi = m;
	}
	if (lo + 1 == g->niters && !last_open && t > g->iters[lo].end_ns)
		return -1;
	return (long)lo;
}

struct cseq {
	int source;
	char comm[64];
	char name[32]; /* NCCL numbers each kind of a communicator apart; a pair's sends as its own */
	uint64_t next;
};

int gt_colls_finish(struct gt_colls *cs, struct gt_tl *tl, struct gt_an_result *r)
{
	gt_sort(cs->k, cs->nk, sizeof(*cs->k), k_corr_cmp);
	gt_sort(cs->n, cs->nn, sizeof(*cs->n), n_start_cmp);
	if (order_by_thread(cs) < 0)
		return -1;
	if (tl->nlaunches && gt_tl_each_launch(tl, on_launch, cs) < 0)
		return -1;
	/* C_k = the smallest id at or after record k: a minimum over the thread's records after it too;
	 * B_k the largest id at or before it: a maximum over the thread's records before it too */
	const size_t *o = cs->ord;
	for (size_t i = cs->nn; i-- > 1;)
		if (cs->n[o[i - 1]].key == cs->n[o[i]].key && cs->n[o[i]].bound < cs->n[o[i - 1]].bound)
			cs->n[o[i - 1]].bound = cs->n[o[i]].bound;
	for (size_t i = 1; i < cs->nn; i++)
		if (cs->n[o[i - 1]].key == cs->n[o[i]].key && cs->n[o[i - 1]].last > cs->n[o[i]].last)
			cs->n[o[i]].last = cs->n[o[i - 1]].last;

	struct gt_an_coll *out = NULL;
	size_t nout = 0, cap = 0;
	struct cseq *sq = NULL;
	size_t nsq = 0;
	unsigned char *used = calloc(cs->nk ? cs->nk : 1, 1);
	size_t *pick = malloc((cs->nn ? cs->nn : 1) * 3 * sizeof(size_t));
	if (!used || !pick) {
		free(used);
		free(pick);
		return -1;
	}
	pick_kernels(cs, pick, pick + cs->nn, pick + 2 * cs->nn);
	/* sends and receives per kernel: one that runs more than P2P_PER_KERNEL of them (an all-to-all of
	 * many ranks: a send and a receive per peer) stays one row matched by order, not a row per pair */
	unsigned short *np2p = calloc(cs->nk ? cs->nk : 1, sizeof(*np2p));
	if (!np2p) {
		free(used);
		free(pick);
		return -1;
	}
	for (size_t i = 0; i < cs->nn; i++)
		if (pick[i] != SIZE_MAX && cs->n[i].pair[0] && np2p[pick[i]] < USHRT_MAX)
			np2p[pick[i]]++;
	/* plugin records onto kernels */
	for (size_t i = 0; i < cs->nn; i++) {
		const struct nrec *n = &cs->n[i];
		size_t lo = pick[i];
		if (lo == SIZE_MAX || (n->pair[0] && np2p[lo] > P2P_PER_KERNEL))
			continue;
		struct gt_an_coll c = cs->k[lo].c;
		used[lo] = 1;
		snprintf(c.comm, sizeof(c.comm), "0x%016llx", (unsigned long long)n->comm);
		c.seq = n->seq;
		c.count = n->count;
		if (n->func[0])
			copy(c.name, sizeof(c.name), n->pair[0] ? n->pair : n->func);
		copy(c.algo, sizeof(c.algo), n->algo);
		copy(c.proto, sizeof(c.proto), n->proto);
		copy(c.dtype, sizeof(c.dtype), n->dtype);
		c.bytes = n->count * gt_colls_dtype_size(n->dtype);
		copy(c.match, sizeof(c.match), "nccl");
		if (add_row(&out, &nout, &cap, &c) < 0)
			goto nomem;
	}
	/* the other kernels: the trace's own numbers, else their order per communicator */
	for (size_t i = 0; i < cs->nk; i++) {
		if (used[i])
			continue;
		struct gt_an_coll c = cs->k[i].c;
		long me = cs->k[i].p2p && (size_t)c.source < cs->nrank ? cs->rank[c.source] : -1;
		if (me >= 0) /* a PyTorch-profiler send or receive: named for its pair, as the plugin's are */
			pair_name(c.name, sizeof(c.name), cs->k[i].p2p == 1, me, cs->k[i].peer);
		if (!cs->k[i].has_seq) {
			size_t j = 0;
			while (j < nsq && !(sq[j].source == c.source && strcmp(sq[j].comm, c.comm) == 0 &&
					    strcmp(sq[j].name, c.name) == 0))
				j++;
			if (j == nsq) {
				struct cseq *p = realloc(sq, (nsq + 1) * sizeof(*p));
				if (!p)
					goto nomem;
				sq = p;
				memset(&sq[nsq], 0, sizeof(sq[nsq]));
				sq[nsq].source = c.source;
				copy(sq[nsq].comm, sizeof(sq[nsq].comm), c.comm);
				copy(sq[nsq].name, sizeof(sq[nsq].name), c.name);
				nsq++;
			}
			c.seq = sq[j].next++;
			copy(c.match, sizeof(c.match), "order");
		}
		if (add_row(&out, &nout, &cap, &c) < 0)
			goto nomem;
	}
	/* iteration: the one that launched it, else the window of its GPU start */
	for (size_t i = 0; i < nout; i++) {
		const struct gt_an_gpu *g = source_gpu(r, out[i].source);
		out[i].iteration = out[i].launch_ns ? window_of(g, out[i].launch_ns, 0) : window_of(g, out[i].start_ns, 1);
	}
	/* labels of the sources, as the GPU rows name them */
	size_t nsrc = 0;
	for (size_t i = 0; i < tl->nlabels; i++)
		if (tl->labels[i])
			nsrc = i + 1;
	for (size_t i = 0; i < nout; i++)
		if ((size_t)out[i].source + 1 > nsrc)
			nsrc = (size_t)out[i].source + 1;
	r->coll_labels = calloc(nsrc ? nsrc : 1, sizeof(char *));
	if (!r->coll_labels)
		goto nomem;
	r->ncoll_labels = nsrc;
	for (size_t i = 0; i < nsrc; i++) {
		char b[64];
		if (i < tl->nlabels && tl->labels[i])
			snprintf(b, sizeof(b), "%.*s", (int)gt_an_utf8_cut(tl->labels[i], strlen(tl->labels[i]), 60),
				 tl->labels[i]);
		else
			snprintf(b, sizeof(b), "rank%zu", i);
		if (!(r->coll_labels[i] = strdup(b)))
			goto nomem;
	}
	free(used);
	free(pick);
	free(np2p);
	free(sq);
	r->colls = out;
	r->ncolls = nout;
	r->has_colls = 1;
	return 0;
nomem:
	free(used);
	free(pick);
	free(np2p);
	free(sq);
	free(out);
	return -1;
}

/* JSON "collectives": [ {rank (the input's label), source (the input's number, as the timeline's), device,
 * comm, seq, name, algo, proto, count, dtype, bytes, iteration, start_ns, end_ns, launch_ns, match} ] — called by the
 * JSON printer for each result that has them. */
static void js(yajl_gen g, const char *k, const char *v)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
	yajl_gen_string(g, (const unsigned char *)v, strlen(v));
}

static void ju(yajl_gen g, const char *k, unsigned long long v)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%llu", v);
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
	yajl_gen_number(g, b, (size_t)n);
}

void gt_an_json_collectives(void *gen, const struct gt_an_result *r)
{
	yajl_gen g = gen;
	if (!r->has_colls)
		return;
	yajl_gen_string(g, (const unsigned char *)"collectives", 11);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->ncolls; i++) {
		const struct gt_an_coll *c = &r->colls[i];
		yajl_gen_map_open(g);
		js(g, "rank", (size_t)c->source < r->ncoll_labels ? r->coll_labels[c->source] : "");
		ju(g, "source", (unsigned long long)(c->source < 0 ? 0 : c->source));
		ju(g, "device", (unsigned long long)(c->device < 0 ? 0 : c->device));
		js(g, "comm", c->comm);
		ju(g, "seq", c->seq);
		js(g, "name", c->name);
		js(g, "algo", c->algo);
		js(g, "proto", c->proto);
		ju(g, "count", c->count);
		js(g, "dtype", c->dtype);
		ju(g, "bytes", c->bytes);
		yajl_gen_string(g, (const unsigned char *)"iteration", 9);
		if (c->iteration < 0)
			yajl_gen_null(g);
		else
			yajl_gen_integer(g, c->iteration);
		ju(g, "start_ns", c->start_ns);
		ju(g, "end_ns", c->end_ns);
		ju(g, "launch_ns", c->launch_ns);
		js(g, "match", c->match);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}
