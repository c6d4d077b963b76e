/*
 * tap/ncclprof.c — the tap as NCCL's profiler plugin (NCCL >= 2.23).
 *
 * With NCCL_PROFILER_PLUGIN=/path/to/libgputap.so NCCL loads this library (the same one the tap
 * preloaded: dlopen returns the loaded copy) and looks for the newest `ncclProfiler_v<N>` it knows;
 * this file exports v1 (NCCL 2.23) to v5 (2.28 and later).  Each collective becomes one
 * GT_REC_NCCL_COLL record: communicator hash, sequence number, collective, algorithm, protocol,
 * data type, count, rank — what `gputap analyze --collectives` and `gputap fleet` match ranks by.
 *
 * The structures below are our own minimal declarations of the layouts NCCL's ext-profiler headers
 * document (only the parts read here; the descriptor union is as large as NCCL's, and we only ever
 * read through the pointer NCCL hands us).  Versions 1-3 carry the communicator hash in the
 * collective's descriptor, 4 and 5 give it once per communicator at init.  Version 1 gives the
 * collective, algorithm, protocol and data type as NCCL 2.23's enum numbers; later ones as names.
 *
 * From version 4 on, sends and receives too (NCCL gives them no sequence number): a "Send" or "Recv"
 * record whose `root` is the peer and whose `seq` is this process's count of earlier ones of that
 * direction to that peer on that communicator — NCCL requires the two sides of a pair to issue their
 * sends and receives in the same order, so the k-th send from A to B is the k-th receive by B from A.
 *
 * Guest rules: nothing here allocates, locks or prints; an event that finds no free slot, or a
 * communicator beyond the context table, is counted as lost, never an error returned to NCCL.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "tap/tap.h"

typedef int gt_nccl_result; /* ncclResult_t: ncclSuccess = 0 */
#define NCCL_OK 0
#define NCCL_PROFILE_COLL (1 << 1) /* ncclProfileColl: the same bit in every version */
#define NCCL_PROFILE_P2P (1 << 2)  /* ncclProfileP2p: a send or a receive (asked for from version 4 on) */

/* ---- our declarations of NCCL's descriptor layouts (collective events only) ---- */
struct coll_v1 {
	const char *name;
	uint64_t comm_hash, seq;
	uint8_t func;
	const void *sendbuf;
	void *recvbuf;
	size_t count;
	int root;
	uint8_t dtype;
	uint32_t op;
	size_t traffic_bytes;
	uint8_t nchannels, nwarps, algo, proto;
	int is_collnet, is_nvls;
};
struct coll_v2 {
	const char *name;
	uint64_t comm_hash, seq;
	const char *func;
	const void *sendbuf;
	void *recvbuf;
	size_t count;
	int root;
	const char *dtype;
	size_t traffic_bytes;
	uint8_t nchannels, nwarps;
	const char *algo, *proto;
};
struct coll_v3 {
	const char *name;
	uint64_t comm_hash, seq;
	const char *func;
	const void *sendbuf;
	void *recvbuf;
	size_t count;
	int root;
	const char *dtype;
	uint8_t nchannels, nwarps;
	const char *algo, *proto;
};
struct coll_v4 { /* v5 appends a parent pointer */
	uint64_t seq;
	const char *func;
	const void *sendbuf;
	void *recvbuf;
	size_t count;
	int root;
	const char *dtype;
	uint8_t nchannels, nwarps;
	const char *algo, *proto;
};
struct p2p_v4 { /* v5 appends a parent pointer */
	const char *func; /* "Send", "Recv" */
	void *buff;
	const char *dtype;
	size_t count;
	int peer; /* the other rank, in the communicator */
	uint8_t nchannels;
};
union coll_any {
	struct coll_v1 v1;
	struct coll_v2 v2;
	struct coll_v3 v3;
	struct coll_v4 v4;
	struct p2p_v4 p2p;
	char room[128]; /* NCCL's union is larger (proxy, kernel-channel events); never copied */
};
struct descr_u8 { /* versions 1-4: uint8_t type */
	uint8_t type;
	void *parent;
	int rank;
	union coll_any u;
};
struct descr_u64 { /* version 5: uint64_t type */
	uint64_t type;
	void *parent;
	int rank;
	union coll_any u;
};

/* ---- contexts (one per communicator) and event slots: fixed tables, no allocation ---- */
#define GT_NP_CTX 1024
#define GT_NP_SLOTS 4096

struct np_ctx {
	int version;
	int nranks;
	uint64_t comm_hash;
};
static struct np_ctx ctxs[GT_NP_CTX];
static _Atomic unsigned nctx;
static struct np_ctx lost_ctx[6]; /* per version, when the table is full: no communicator hash */

struct np_ev {
	_Atomic int used;
	struct gt_rec_nccl_coll rec;
};
static struct np_ev evs[GT_NP_SLOTS];
static _Atomic unsigned next_slot;

static struct np_ctx *new_ctx(int version, uint64_t hash, int nranks)
{
	gt_tap_touch(); /* a communicator is created: NCCL, so CUDA, is in use */
	unsigned i = atomic_fetch_add_explicit(&nctx, 1, memory_order_relaxed);
	struct np_ctx *c = i < GT_NP_CTX ? &ctxs[i] : &lost_ctx[version];
	if (i < GT_NP_CTX) {
		c->comm_hash = hash;
		c->nranks = nranks;
	}
	c->version = version;
	return c;
}

/* Sends and receives so far per (communicator, direction, peer): an open-addressed table of fixed
 * size, its keys claimed by compare-and-swap (NCCL may report communicators from several threads). */
#define GT_NP_PAIRS 8192
struct np_pair {
	_Atomic uint64_t key; /* 0 free; else (context + 1) << 33 | is_send << 32 | peer */
	_Atomic uint64_t n;
};
static struct np_pair pairs[GT_NP_PAIRS];

static int p2p_next(const struct np_ctx *c, int is_send, int peer, uint64_t *seq)
{
	if (c < ctxs || c >= ctxs + GT_NP_CTX || peer < 0)
		return -1;
	uint64_t key = ((uint64_t)(c - ctxs) + 1) << 33 | (uint64_t)(is_send != 0) << 32 | (uint32_t)peer;
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	for (unsigned k = 0; k < 64; k++) {
		struct np_pair *p = &pairs[((h >> 51) + k) & (GT_NP_PAIRS - 1)];
		uint64_t cur = atomic_load_explicit(&p->key, memory_order_acquire);
		if (cur == 0 && atomic_compare_exchange_strong(&p->key, &cur, key))
			cur = key;
		if (cur == key) {
			*seq = atomic_fetch_add_explicit(&p->n, 1, memory_order_relaxed);
			return 0;
		}
	}
	return -1;
}

static struct np_ev *claim(void)
{
	for (unsigned k = 0; k < 64; k++) {
		struct np_ev *e = &evs[atomic_fetch_add_explicit(&next_slot, 1, memory_order_relaxed) % GT_NP_SLOTS];
		int z = 0;
		if (atomic_compare_exchange_strong(&e->used, &z, 1))
			return e;
	}
	atomic_fetch_add_explicit(&gt_tap.pool.lost, 1, memory_order_relaxed);
	return NULL;
}

static uint32_t intern(const char *s)
{
	return s && s[0] ? gt_strtab_intern(&gt_tap.strs, s, strnlen(s, 64)) : 0;
}

/* NCCL 2.23's enum numbering (ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*, ncclDataType_t) */
static const char *const v1_func[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
				      "AllReduce", "SendRecv",  "Send",      "Recv"};
static const char *const v1_algo[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
static const char *const v1_proto[] = {"LL", "LL128", "SIMPLE"};
static const char *const v1_dtype[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32", "ncclInt64",
				       "ncclUint64",  "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16"};
#define PICK(tab, i) ((size_t)(i) < sizeof(tab) / sizeof(tab[0]) ? tab[i] : NULL)

/* A free event slot with its record's header and what the communicator says filled in; NULL when
 * none is free (counted as lost). */
static struct np_ev *new_event(const struct np_ctx *c, int rank)
{
	struct np_ev *e = claim();
	if (!e)
		return NULL;
	struct gt_rec_nccl_coll *r = &e->rec;
	memset(r, 0, sizeof(*r));
	r->h.type = GT_REC_NCCL_COLL;
	r->h.size = sizeof(*r);
	r->rank = rank;
	r->nranks = c->nranks;
	r->plugin_version = (uint8_t)c->version;
	r->comm_hash = c->comm_hash; /* versions 1-3: the descriptor's, below */
	return e;
}

static gt_nccl_result start_coll(struct np_ctx *c, void **handle, int rank, const union coll_any *u)
{
	*handle = NULL;
	if (!atomic_load_explicit(&gt_tap.on, memory_order_relaxed))
		return NCCL_OK;
	struct np_ev *e = new_event(c, rank);
	if (!e)
		return NCCL_OK;
	struct gt_rec_nccl_coll *r = &e->rec;
	switch (c->version) {
	case 1:
		r->comm_hash = u->v1.comm_hash;
		r->seq = u->v1.seq;
		r->count = u->v1.count;
		r->root = u->v1.root;
		r->nchannels = u->v1.nchannels;
		r->nwarps = u->v1.nwarps;
		r->func_id = intern(PICK(v1_func, u->v1.func));
		r->algo_id = intern(PICK(v1_algo, u->v1.algo));
		r->proto_id = intern(PICK(v1_proto, u->v1.proto));
		r->dtype_id = intern(PICK(v1_dtype, u->v1.dtype));
		break;
	case 2:
		r->comm_hash = u->v2.comm_hash;
		r->seq = u->v2.seq;
		r->count = u->v2.count;
		r->root = u->v2.root;
		r->nchannels = u->v2.nchannels;
		r->nwarps = u->v2.nwarps;
		r->func_id = intern(u->v2.func);
		r->algo_id = intern(u->v2.algo);
		r->proto_id = intern(u->v2.proto);
		r->dtype_id = intern(u->v2.dtype);
		break;
	case 3:
		r->comm_hash = u->v3.comm_hash;
		r->seq = u->v3.seq;
		r->count = u->v3.count;
		r->root = u->v3.root;
		r->nchannels = u->v3.nchannels;
		r->nwarps = u->v3.nwarps;
		r->func_id = intern(u->v3.func);
		r->algo_id = intern(u->v3.algo);
		r->proto_id = intern(u->v3.proto);
		r->dtype_id = intern(u->v3.dtype);
		break;
	default: /* 4, 5: the communicator's hash came at its init */
		r->seq = u->v4.seq;
		r->count = u->v4.count;
		r->root = u->v4.root;
		r->nchannels = u->v4.nchannels;
		r->nwarps = u->v4.nwarps;
		r->func_id = intern(u->v4.func);
		r->algo_id = intern(u->v4.algo);
		r->proto_id = intern(u->v4.proto);
		r->dtype_id = intern(u->v4.dtype);
		break;
	}
	r->start_ns = gt_now_ns();
	*handle = e;
	return NCCL_OK;
}

static gt_nccl_result start_p2p(struct np_ctx *c, void **handle, int rank, const struct p2p_v4 *p)
{
	*handle = NULL;
	if (!atomic_load_explicit(&gt_tap.on, memory_order_relaxed) || !p->func)
		return NCCL_OK;
	int is_send = strcmp(p->func, "Send") == 0;
	uint64_t seq;
	if ((!is_send && strcmp(p->func, "Recv") != 0) || p2p_next(c, is_send, p->peer, &seq) < 0) {
		atomic_fetch_add_explicit(&gt_tap.pool.lost, 1, memory_order_relaxed);
		return NCCL_OK;
	}
	struct np_ev *e = new_event(c, rank);
	if (!e)
		return NCCL_OK;
	struct gt_rec_nccl_coll *r = &e->rec;
	r->seq = seq;
	r->count = p->count;
	r->root = p->peer;
	r->nchannels = p->nchannels;
	r->func_id = intern(is_send ? "Send" : "Recv");
	r->dtype_id = intern(p->dtype);
	r->start_ns = gt_now_ns();
	*handle = e;
	return NCCL_OK;
}

static gt_nccl_result stop_event(void *handle)
{
	struct np_ev *e = handle;
	if (!e)
		return NCCL_OK;
	e->rec.end_ns = gt_now_ns();
	if (atomic_load_explicit(&gt_tap.on, memory_order_relaxed))
		gt_tap_put(&e->rec, sizeof(e->rec));
	atomic_store_explicit(&e->used, 0, memory_order_release);
	return NCCL_OK;
}

static gt_nccl_result record_state(void *handle, int state, void *args)
{
	return NCCL_OK;
}

static gt_nccl_result finalize(void *ctx)
{
	return NCCL_OK;
}

static gt_nccl_result start_any(struct np_ctx *c, void **handle, uint64_t type, int rank, const union coll_any *u)
{
	if (c && type == NCCL_PROFILE_COLL)
		return start_coll(c, handle, rank, u);
	if (c && type == NCCL_PROFILE_P2P && c->version >= 4)
		return start_p2p(c, handle, rank, &u->p2p);
	if (handle)
		*handle = NULL;
	return NCCL_OK;
}

static gt_nccl_result start_u8(void *ctx, void **handle, void *descr)
{
	const struct descr_u8 *d = descr;
	return d ? start_any(ctx, handle, d->type, d->rank, &d->u) : start_any(NULL, handle, 0, 0, NULL);
}

static gt_nccl_result start_u64(void *ctx, void **handle, void *descr)
{
	const struct descr_u64 *d = descr;
	return d ? start_any(ctx, handle, d->type, d->rank, &d->u) : start_any(NULL, handle, 0, 0, NULL);
}

static gt_nccl_result init_old(int version, void **ctx, int *mask)
{
	*ctx = new_ctx(version, 0, 0);
	*mask = NCCL_PROFILE_COLL;
	return NCCL_OK;
}
static gt_nccl_result init_v1(void **ctx, int *mask) { return init_old(1, ctx, mask); }
static gt_nccl_result init_v2(void **ctx, int *mask) { return init_old(2, ctx, mask); }
static gt_nccl_result init_v3(void **ctx, int *mask) { return init_old(3, ctx, mask); }

static gt_nccl_result init_v4(void **ctx, int *mask, const char *name, uint64_t hash, int nnodes, int nranks, int rank,
			      void *logfn)
{
	*ctx = new_ctx(4, hash, nranks);
	*mask = NCCL_PROFILE_COLL | NCCL_PROFILE_P2P;
	return NCCL_OK;
}

static gt_nccl_result init_v5(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes, int nranks,
			      int rank, void *logfn)
{
	*ctx = new_ctx(5, comm_id, nranks);
	*mask = NCCL_PROFILE_COLL | NCCL_PROFILE_P2P;
	return NCCL_OK;
}

/* The exported tables: name, init, startEvent, stopEvent, recordEventState, finalize. */
#define PLUGIN(N, INIT, START)                                                                             \
	struct gt_nccl_profiler_v##N {                                                                     \
		const char *name;                                                                          \
		__typeof__(&INIT) init;                                                                    \
		gt_nccl_result (*start)(void *, void **, void *);                                          \
		gt_nccl_result (*stop)(void *);                                                            \
		gt_nccl_result (*state)(void *, int, void *);                                              \
		gt_nccl_result (*finalize)(void *);                                                        \
	};                                                                                                 \
	extern GT_EXPORT const struct gt_nccl_profiler_v##N ncclProfiler_v##N;                             \
	GT_EXPORT const struct gt_nccl_profiler_v##N ncclProfiler_v##N = {"gputap", INIT, START, stop_event, \
									   record_state, finalize};

PLUGIN(1, init_v1, start_u8)
PLUGIN(2, init_v2, start_u8)
PLUGIN(3, init_v3, start_u8)
PLUGIN(4, init_v4, start_u8)
PLUGIN(5, init_v5, start_u64)
