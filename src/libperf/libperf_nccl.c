/* libperf: replay of recorded NCCL collectives on the GPUs of one machine.
 *
 * All ranks live in this one process: ncclCommInitAll gives one communicator
 * per GPU, each collective is issued for every GPU between ncclGroupStart and
 * ncclGroupEnd, and each GPU's stream carries its own pair of CUDA events per
 * timed run.  A run's time is the slowest GPU's (a collective ends when its
 * last rank does); the row reports the median over the runs.
 *
 * NCCL is loaded with dlopen (no nccl.h needed at build time); the few entry
 * points, ncclDataType_t and ncclRedOp_t are declared here with the numbers
 * of nccl.h (stable across NCCL 2.x). */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libperf/libperf.h"
#include "core/sort.h"

/* ---- the plan (pure) ---- */

/* nccl.h: ncclInt8 = 0 ... ncclFloat8e5m2 = 11, in the config grammar's names */
static const char *const dtype_names[] = {"int8",    "uint8",   "int32",  "uint32",   "int64",      "uint64",
					  "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
static const int dtype_sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
/* nccl.h: ncclSum = 0, ncclProd, ncclMax, ncclMin, ncclAvg */
static const char *const redop_names[] = {"sum", "prod", "max", "min", "avg"};

int gt_nccl_dtype_num(const char *dtype)
{
	for (size_t i = 0; i < sizeof(dtype_names) / sizeof(dtype_names[0]); i++)
		if (strcmp(dtype, dtype_names[i]) == 0)
			return (int)i;
	return -1;
}

static const struct {
	const char *op;
	enum gt_nccl_coll coll;
	int reduces, rooted;
} colls[] = {
	{"allreduce", GT_NCCL_ALLREDUCE, 1, 0}, {"allgather", GT_NCCL_ALLGATHER, 0, 0},
	{"reducescatter", GT_NCCL_REDUCESCATTER, 1, 0}, {"broadcast", GT_NCCL_BROADCAST, 0, 1},
	{"reduce", GT_NCCL_REDUCE, 1, 1}, {"alltoall", GT_NCCL_ALLTOALL, 0, 0},
	{"gather", GT_NCCL_GATHER, 0, 1}, {"scatter", GT_NCCL_SCATTER, 0, 1},
	{"send", GT_NCCL_SENDRECV, 0, 0}, {"recv", GT_NCCL_SENDRECV, 0, 0},
};

int gt_nccl_plan_make(const struct gt_nccl_cfg *c, int gpus, struct gt_nccl_plan *p, char *why, size_t whylen)
{
	memset(p, 0, sizeof(*p));
	p->redop = -1;
	size_t ci = 0;
	while (ci < sizeof(colls) / sizeof(colls[0]) && strcmp(colls[ci].op, c->op) != 0)
		ci++;
	if (ci == sizeof(colls) / sizeof(colls[0])) {
		snprintf(why, whylen, "skipped: NCCL %s is not replayed", c->op);
		return -1;
	}
	p->coll = colls[ci].coll;
	if (gpus < 2) {
		snprintf(why, whylen, "skipped: single GPU");
		return -1;
	}
	if (c->nranks < 2) {
		snprintf(why, whylen, "skipped: recorded over one rank (no communication to replay)");
		return -1;
	}
	p->dtype = gt_nccl_dtype_num(c->dtype);
	if (p->dtype < 0) {
		snprintf(why, whylen, "skipped: NCCL data type %s is unknown", c->dtype);
		return -1;
	}
	p->type_size = dtype_sizes[p->dtype];
	if (colls[ci].reduces) {
		const char *op = c->redop[0] ? c->redop : "sum";
		for (int i = 0; i < (int)(sizeof(redop_names) / sizeof(redop_names[0])); i++)
			if (strcmp(op, redop_names[i]) == 0)
				p->redop = i;
		if (p->redop < 0) {
			snprintf(why, whylen, "skipped: reduction %s (user-defined) is not replayable", op);
			return -1;
		}
	}
	if (c->count == 0) {
		snprintf(why, whylen, "skipped: count 0");
		return -1;
	}
	int n = c->nranks < gpus ? c->nranks : gpus;
	p->ranks = n;
	p->count = c->count;
	uint64_t cnt = c->count, all = c->count * (uint64_t)n;
	if (all / (uint64_t)n != cnt) {
		snprintf(why, whylen, "skipped: count too large");
		return -1;
	}
	double part = (double)(n - 1) / (double)n;
	switch (p->coll) {
	case GT_NCCL_ALLREDUCE:
		p->send_elems = p->recv_elems = cnt;
		p->bytes = cnt;
		p->bus_factor = 2 * part;
		break;
	case GT_NCCL_ALLGATHER:
	case GT_NCCL_GATHER: /* count is what each rank sends */
		p->send_elems = cnt;
		p->recv_elems = all;
		p->bytes = all;
		p->bus_factor = part;
		break;
	case GT_NCCL_REDUCESCATTER:
	case GT_NCCL_SCATTER: /* count is what each rank receives */
		p->send_elems = all;
		p->recv_elems = cnt;
		p->bytes = all;
		p->bus_factor = part;
		break;
	case GT_NCCL_ALLTOALL: /* count goes to each peer */
		p->send_elems = p->recv_elems = all;
		p->bytes = all;
		p->bus_factor = part;
		break;
	case GT_NCCL_BROADCAST:
	case GT_NCCL_REDUCE:
	case GT_NCCL_SENDRECV:
		p->send_elems = p->recv_elems = cnt;
		p->bytes = cnt;
		p->bus_factor = 1;
		break;
	}
	uint64_t ts = (uint64_t)p->type_size;
	if (p->send_elems > GT_NCCL_MAX_BYTES_PER_GPU / ts || p->recv_elems > GT_NCCL_MAX_BYTES_PER_GPU / ts ||
	    (p->send_elems + p->recv_elems) * ts > GT_NCCL_MAX_BYTES_PER_GPU) {
		snprintf(why, whylen, "skipped: needs more than %llu GiB per GPU",
			 (unsigned long long)(GT_NCCL_MAX_BYTES_PER_GPU >> 30));
		return -1;
	}
	p->bytes *= ts;
	p->root = colls[ci].rooted && c->root > 0 ? c->root % n : 0;
	char *w = p->note;
	size_t left = sizeof(p->note);
	int k = 0;
	if (n < c->nranks)
		k += snprintf(w + k, left - (size_t)k, "%d of %d ranks", n, c->nranks);
	if (colls[ci].rooted && c->root >= n)
		k += snprintf(w + k, left - (size_t)k, "%sroot %d as %d", k ? ", " : "", c->root, p->root);
	if (p->coll == GT_NCCL_SENDRECV)
		snprintf(w + k, left - (size_t)k, "%sas a ring of send/recv", k ? ", " : "");
	return 0;
}

/* ---- NCCL, loaded with dlopen ---- */
typedef int nccl_result;
typedef void *nccl_comm;

struct nccl_api {
	void *h;
	nccl_result (*get_version)(int *);
	const char *(*error_string)(nccl_result);
	nccl_result (*comm_init_all)(nccl_comm *, int, const int *);
	nccl_result (*comm_destroy)(nccl_comm);
	nccl_result (*group_start)(void);
	nccl_result (*group_end)(void);
	nccl_result (*allreduce)(const void *, void *, size_t, int, int, nccl_comm, cu_stream);
	nccl_result (*allgather)(const void *, void *, size_t, int, nccl_comm, cu_stream);
	nccl_result (*reducescatter)(const void *, void *, size_t, int, int, nccl_comm, cu_stream);
	nccl_result (*broadcast)(const void *, void *, size_t, int, int, nccl_comm, cu_stream);
	nccl_result (*reduce)(const void *, void *, size_t, int, int, int, nccl_comm, cu_stream);
	nccl_result (*send)(const void *, size_t, int, int, nccl_comm, cu_stream);
	nccl_result (*recv)(void *, size_t, int, int, nccl_comm, cu_stream);
	/* newer NCCL only (2.28): NULL when missing */
	nccl_result (*alltoall)(const void *, void *, size_t, int, nccl_comm, cu_stream);
	nccl_result (*gather)(const void *, void *, size_t, int, int, nccl_comm, cu_stream);
	nccl_result (*scatter)(const void *, void *, size_t, int, int, nccl_comm, cu_stream);
};

#define MAX_GPUS 64
#define MAX_SETS 8

/* The communicators, streams and events over the first k GPUs. */
struct comm_set {
	int k;
	int failed; /* ncclCommInitAll failed: err says why */
	char err[160];
	nccl_comm comm[MAX_GPUS];
	cu_stream st[MAX_GPUS];
	cu_event *ev[MAX_GPUS]; /* 2 x iters per GPU */
};

struct gt_nccl_replayer {
	const struct gt_cu_api *cu;
	int gpus, iters, warmup;
	int tried_load; /* NCCL load attempted; nccl.h set when it worked */
	char load_err[200];
	char version[32];
	struct nccl_api nccl;
	cu_context ctx[MAX_GPUS];
	int nctx;
	struct comm_set *sets[MAX_SETS];
	float *ms; /* iters x gpus */
};

static int load_nccl(struct gt_nccl_replayer *r)
{
	if (r->tried_load)
		return r->nccl.h ? 0 : -1;
	r->tried_load = 1;
	/* NVLink multicast (NVLS) reserves multicast objects that other jobs on a shared
	 * machine may need; a measurement tool must not take them.  The user can still
	 * turn it on by setting the variable. */
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	char why[160];
	void *h = gt_libperf_open_lib("libnccl.so.2", "GPUTAP_NCCL_LIB", why, sizeof(why));
	if (!h) {
		snprintf(r->load_err, sizeof(r->load_err),
			 "skipped: NCCL (libnccl.so.2) not found (%.100s); set GPUTAP_NCCL_LIB", why);
		return -1;
	}
	struct nccl_api *n = &r->nccl;
	int miss = 0;
#define L(field, name)                                              \
	do {                                                        \
		*(void **)&n->field = dlsym(h, name);               \
		if (!n->field)                                      \
			miss = 1;                                   \
	} while (0)
	L(get_version, "ncclGetVersion");
	L(error_string, "ncclGetErrorString");
	L(comm_init_all, "ncclCommInitAll");
	L(comm_destroy, "ncclCommDestroy");
	L(group_start, "ncclGroupStart");
	L(group_end, "ncclGroupEnd");
	L(allreduce, "ncclAllReduce");
	L(allgather, "ncclAllGather");
	L(reducescatter, "ncclReduceScatter");
	L(broadcast, "ncclBroadcast");
	L(reduce, "ncclReduce");
	L(send, "ncclSend");
	L(recv, "ncclRecv");
#undef L
	*(void **)&n->alltoall = dlsym(h, "ncclAlltoAll");
	*(void **)&n->gather = dlsym(h, "ncclGather");
	*(void **)&n->scatter = dlsym(h, "ncclScatter");
	if (miss) {
		snprintf(r->load_err, sizeof(r->load_err), "skipped: this NCCL lacks entry points libperf needs (too old?)");
		dlclose(h);
		memset(n, 0, sizeof(*n));
		return -1;
	}
	n->h = h;
	int v = 0;
	if (n->get_version(&v) == 0 && v > 0) {
		/* 2.9 and later: major*10000 + minor*100 + patch; before: major*1000 + minor*100 + patch */
		int major = v >= 10000 ? v / 10000 : v / 1000, minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
		snprintf(r->version, sizeof(r->version), "NCCL %d.%d.%d", major, minor, v % 100);
	}
	return 0;
}

const char *gt_nccl_replayer_version(const struct gt_nccl_replayer *r)
{
	return r ? r->version : "";
}

struct gt_nccl_replayer *gt_nccl_replayer_new(const struct gt_cu_api *cu, int gpus, int iters, int warmup)
{
	struct gt_nccl_replayer *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cu = cu;
	r->gpus = gpus > MAX_GPUS ? MAX_GPUS : gpus;
	r->iters = iters > 0 ? iters : 1;
	r->warmup = warmup < 0 ? 0 : warmup;
	r->ms = calloc((size_t)r->iters * (size_t)(r->gpus > 0 ? r->gpus : 1), sizeof(*r->ms));
	if (!r->ms) {
		free(r);
		return NULL;
	}
	return r;
}

static const char *cu_name(const struct gt_cu_api *cu, cu_result e)
{
	const char *s = NULL;
	if (cu->error_name && cu->error_name(e, &s) == 0 && s)
		return s;
	return "CUDA error";
}

static const char *nccl_name(const struct gt_nccl_replayer *r, nccl_result e)
{
	const char *s = r->nccl.error_string ? r->nccl.error_string(e) : NULL;
	return s ? s : "NCCL error";
}

static void free_set(struct gt_nccl_replayer *r, struct comm_set *s)
{
	const struct gt_cu_api *cu = r->cu;
	for (int d = 0; d < s->k; d++) {
		if (d < r->nctx)
			cu->ctx_set(r->ctx[d]);
		if (s->st[d])
			cu->stream_sync(s->st[d]);
		if (s->comm[d])
			r->nccl.comm_destroy(s->comm[d]);
		if (s->ev[d]) {
			for (int i = 0; i < 2 * r->iters; i++)
				if (s->ev[d][i])
					cu->event_destroy(s->ev[d][i]);
			free(s->ev[d]);
		}
		if (s->st[d])
			cu->stream_destroy(s->st[d]);
	}
	free(s);
}

/* The communicators over the first k GPUs, made on first use. */
static struct comm_set *get_set(struct gt_nccl_replayer *r, int k)
{
	const struct gt_cu_api *cu = r->cu;
	int slot = -1;
	for (int i = 0; i < MAX_SETS; i++) {
		if (r->sets[i] && r->sets[i]->k == k)
			return r->sets[i];
		if (!r->sets[i] && slot < 0)
			slot = i;
	}
	if (slot < 0) { /* more distinct rank counts than slots: drop the first */
		free_set(r, r->sets[0]);
		r->sets[0] = NULL;
		slot = 0;
	}
	struct comm_set *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->k = k;
	r->sets[slot] = s;
	cu_result e = 0;
	while (r->nctx < k) {
		cu_device dev;
		if ((e = cu->device_get(&dev, r->nctx)) != 0 || (e = cu->ctx_retain(&r->ctx[r->nctx], dev)) != 0) {
			snprintf(s->err, sizeof(s->err), "error: cannot use CUDA device %d: %s", r->nctx, cu_name(cu, e));
			s->failed = 1;
			return s;
		}
		r->nctx++;
	}
	for (int d = 0; d < k; d++) {
		cu->ctx_set(r->ctx[d]);
		s->ev[d] = calloc((size_t)(2 * r->iters), sizeof(cu_event));
		if (!s->ev[d] || (e = cu->stream_create(&s->st[d], 1 /* non-blocking */)) != 0) {
			snprintf(s->err, sizeof(s->err), "error: cannot create a stream on GPU %d: %s", d, cu_name(cu, e));
			s->failed = 1;
			return s;
		}
		for (int i = 0; i < 2 * r->iters; i++)
			if ((e = cu->event_create(&s->ev[d][i], 0)) != 0) {
				snprintf(s->err, sizeof(s->err), "error: cannot create events on GPU %d: %s", d,
					 cu_name(cu, e));
				s->failed = 1;
				return s;
			}
	}
	int devs[MAX_GPUS];
	for (int d = 0; d < k; d++)
		devs[d] = d;
	nccl_result ne = r->nccl.comm_init_all(s->comm, k, devs);
	if (ne != 0) {
		memset(s->comm, 0, sizeof(s->comm));
		snprintf(s->err, sizeof(s->err), "error: ncclCommInitAll over %d GPUs failed: %s", k, nccl_name(r, ne));
		s->failed = 1;
	}
	return s;
}

/* Issue the collective on every GPU of the set as one group. */
static nccl_result launch(struct gt_nccl_replayer *r, struct comm_set *s, const struct gt_nccl_plan *p,
			  cu_ptr *sendb, cu_ptr *recvb)
{
	const struct nccl_api *n = &r->nccl;
	nccl_result e = n->group_start(), e2;
	if (e != 0)
		return e;
	int k = s->k;
	for (int d = 0; d < k && e == 0; d++) {
		const void *sb = (const void *)(uintptr_t)sendb[d];
		void *rb = (void *)(uintptr_t)recvb[d];
		switch (p->coll) {
		case GT_NCCL_ALLREDUCE:
			e = n->allreduce(sb, rb, p->count, p->dtype, p->redop, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_ALLGATHER:
			e = n->allgather(sb, rb, p->count, p->dtype, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_REDUCESCATTER:
			e = n->reducescatter(sb, rb, p->count, p->dtype, p->redop, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_BROADCAST:
			e = n->broadcast(sb, rb, p->count, p->dtype, p->root, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_REDUCE:
			e = n->reduce(sb, rb, p->count, p->dtype, p->redop, p->root, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_ALLTOALL:
			e = n->alltoall(sb, rb, p->count, p->dtype, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_GATHER:
			e = n->gather(sb, rb, p->count, p->dtype, p->root, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_SCATTER:
			e = n->scatter(sb, rb, p->count, p->dtype, p->root, s->comm[d], s->st[d]);
			break;
		case GT_NCCL_SENDRECV:
			e = n->send(sb, p->count, p->dtype, (d + 1) % k, s->comm[d], s->st[d]);
			if (e == 0)
				e = n->recv(rb, p->count, p->dtype, (d + k - 1) % k, s->comm[d], s->st[d]);
			break;
		}
	}
	e2 = n->group_end();
	return e ? e : e2;
}

static void run_plan(struct gt_nccl_replayer *r, struct comm_set *s, const struct gt_nccl_plan *p,
		     struct gt_nccl_result *res)
{
	const struct gt_cu_api *cu = r->cu;
	cu_ptr sendb[MAX_GPUS] = {0}, recvb[MAX_GPUS] = {0};
	size_t sbytes = (size_t)(p->send_elems * (uint64_t)p->type_size);
	size_t rbytes = (size_t)(p->recv_elems * (uint64_t)p->type_size);
	cu_result e = 0;
	nccl_result ne = 0;
	int k = s->k;
	for (int d = 0; d < k; d++) {
		cu->ctx_set(r->ctx[d]);
		if ((e = cu->mem_alloc(&sendb[d], sbytes)) != 0 || (e = cu->mem_alloc(&recvb[d], rbytes)) != 0) {
			snprintf(res->status, sizeof(res->status), "error: cannot allocate %zu bytes on GPU %d: %s",
				 sbytes + rbytes, d, cu_name(cu, e));
			goto out;
		}
		/* 0x3C..: small finite values in every floating type, as for the GEMMs */
		cu->memset8(sendb[d], 0x3c, sbytes);
		cu->memset8(recvb[d], 0, rbytes);
		/* the memsets run on the legacy stream, which the non-blocking streams do not wait for */
		cu->ctx_sync();
	}
	for (int i = 0; i < r->warmup; i++)
		if ((ne = launch(r, s, p, sendb, recvb)) != 0)
			goto nccl_failed;
	for (int i = 0; i < r->iters; i++) {
		for (int d = 0; d < k; d++) {
			cu->ctx_set(r->ctx[d]);
			if ((e = cu->event_record(s->ev[d][2 * i], s->st[d])) != 0)
				goto cuda_failed;
		}
		if ((ne = launch(r, s, p, sendb, recvb)) != 0)
			goto nccl_failed;
		for (int d = 0; d < k; d++) {
			cu->ctx_set(r->ctx[d]);
			if ((e = cu->event_record(s->ev[d][2 * i + 1], s->st[d])) != 0)
				goto cuda_failed;
		}
	}
	for (int d = 0; d < k; d++) {
		cu->ctx_set(r->ctx[d]);
		if ((e = cu->stream_sync(s->st[d])) != 0)
			goto cuda_failed;
	}
	/* a run lasts until its slowest GPU is done */
	for (int i = 0; i < r->iters; i++) {
		float worst = 0;
		for (int d = 0; d < k; d++) {
			float ms = 0;
			cu->ctx_set(r->ctx[d]);
			if ((e = cu->event_elapsed(&ms, s->ev[d][2 * i], s->ev[d][2 * i + 1])) != 0)
				goto cuda_failed;
			if (ms > worst)
				worst = ms;
		}
		r->ms[i] = worst;
	}
	gt_sort(r->ms, (size_t)r->iters, sizeof(*r->ms), gt_cmp_float);
	double med = r->iters % 2 ? r->ms[r->iters / 2] : 0.5 * (r->ms[r->iters / 2 - 1] + r->ms[r->iters / 2]);
	res->us = med * 1000.0;
	res->ranks = k;
	res->bytes = p->bytes;
	if (res->us > 0) {
		res->algbw = (double)p->bytes / (res->us * 1e3); /* bytes/us / 1e3 = GB/s */
		res->busbw = res->algbw * p->bus_factor;
	}
	if (p->note[0])
		snprintf(res->status, sizeof(res->status), "ok (%s)", p->note);
	else
		snprintf(res->status, sizeof(res->status), "ok");
	goto out;
nccl_failed:
	snprintf(res->status, sizeof(res->status), "error: NCCL: %s", nccl_name(r, ne));
	goto out;
cuda_failed:
	snprintf(res->status, sizeof(res->status), "error: CUDA: %s", cu_name(cu, e));
out:
	for (int d = 0; d < k; d++) {
		cu->ctx_set(r->ctx[d]);
		if (s->st[d])
			cu->stream_sync(s->st[d]);
		if (sendb[d])
			cu->mem_free(sendb[d]);
		if (recvb[d])
			cu->mem_free(recvb[d]);
	}
}

void gt_nccl_replay(struct gt_nccl_replayer *r, const char *config, struct gt_nccl_result *res)
{
	memset(res, 0, sizeof(*res));
	res->us = res->algbw = res->busbw = -1;
	struct gt_nccl_cfg c;
	struct gt_nccl_plan p;
	char err[160];
	if (gt_nccl_cfg_parse(config, &c, err, sizeof(err)) < 0) {
		snprintf(res->status, sizeof(res->status), "error: %s", err);
		return;
	}
	if (gt_nccl_plan_make(&c, r->gpus, &p, res->status, sizeof(res->status)) < 0)
		return;
	res->bytes = p.bytes;
	if (load_nccl(r) < 0) {
		snprintf(res->status, sizeof(res->status), "%s", r->load_err);
		return;
	}
	if ((p.coll == GT_NCCL_ALLTOALL && !r->nccl.alltoall) || (p.coll == GT_NCCL_GATHER && !r->nccl.gather) ||
	    (p.coll == GT_NCCL_SCATTER && !r->nccl.scatter)) {
		snprintf(res->status, sizeof(res->status), "skipped: this NCCL has no %s", c.op);
		return;
	}
	struct comm_set *s = get_set(r, p.ranks);
	if (!s) {
		snprintf(res->status, sizeof(res->status), "error: out of memory");
		return;
	}
	if (s->failed) {
		snprintf(res->status, sizeof(res->status), "%s", s->err);
		return;
	}
	run_plan(r, s, &p, res);
}

void gt_nccl_replayer_free(struct gt_nccl_replayer *r)
{
	if (!r)
		return;
	for (int i = 0; i < MAX_SETS; i++)
		if (r->sets[i])
			free_set(r, r->sets[i]);
	for (int d = 0; d < r->nctx; d++) {
		cu_device dev;
		if (r->cu->device_get(&dev, d) == 0)
			r->cu->ctx_release(dev);
	}
	/* NCCL stays loaded: its threads may outlive the communicators by a moment */
	free(r->ms);
	free(r);
}
