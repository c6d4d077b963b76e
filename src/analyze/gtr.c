/*
 * analyze/gtr.c — a gputap trace (trace.gtr) as analyzer input: KERNEL, MEMCPY and MEMSET records
 * feed the timeline, RANGE records with the iteration tag give the iterations, API records (start,
 * correlation id) say which iteration launched each op.  One trace = one source (rank), named by its
 * process folder; its devices are its GPUs.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/an_internal.h"
#include "analyze/input.h"
#include "analyze/findings.h"
#include "core/demangle.h"
#include "trace/trace_io.h"
#include "trace/visit.h"

/* string id -> name-table index + 1 (0: not looked up yet); never larger than the string table */
struct idcache {
	uint32_t *v;
	size_t n;
};

static long cached_name(struct gt_an_ctx *c, struct idcache *ic, const struct gt_trace_reader *r, uint32_t id,
			int kind)
{
	if (id >= r->nstrings) /* no such string: the cache stays as large as the string table */
		return gt_names_get(&c->names, kind, "(unnamed kernel)", 16);
	if (id >= ic->n) {
		size_t nn = ic->n ? ic->n : 256;
		while (nn <= id)
			nn *= 2;
		uint32_t *v = realloc(ic->v, nn * sizeof(*v));
		if (!v)
			return -1;
		memset(v + ic->n, 0, (nn - ic->n) * sizeof(*v));
		ic->v = v;
		ic->n = nn;
	}
	if (!ic->v[id]) {
		const char *s = gt_tr_str(r, id);
		if (!s[0])
			s = "(unnamed kernel)";
		char *d = kind == GT_NK_KERNEL ? gt_demangle(s) : NULL;
		if (d)
			s = d;
		long i = gt_names_get(&c->names, kind, s, strlen(s));
		free(d);
		if (i < 0)
			return -1;
		ic->v[id] = (uint32_t)i + 1;
	}
	return (long)ic->v[id] - 1;
}

/* ids and times as every reader checks them (an_internal.h): a message into why, or 0 */
static int bad_op(char *why, size_t cap, uint32_t device, uint64_t s, uint64_t e)
{
	if (device > GT_AN_MAX_ID)
		snprintf(why, cap, "device %u is not a device id (" GT_AN_ID_RANGE ")", device);
	else if (s > GT_AN_MAX_NS || e > GT_AN_MAX_NS)
		snprintf(why, cap, "%s %llu is past the clock's range (at most %llu ns)", s > GT_AN_MAX_NS ? "start_ns" : "end_ns",
			 (unsigned long long)(s > GT_AN_MAX_NS ? s : e), (unsigned long long)GT_AN_MAX_NS);
	else
		return 0;
	return 1;
}

static int add(struct gt_an_ctx *c, int source, long ni, uint32_t device, uint64_t s, uint64_t e, uint64_t corr,
	       uint32_t stream, uint64_t bytes)
{
	if (bad_op(c->tl.err, sizeof(c->tl.err), device, s, e))
		return -1;
	long g = gt_tl_gpu(&c->tl, source, (int)device);
	if (g < 0 || ni < 0)
		return -1;
	struct gt_name *n = &c->names.v[ni];
	n->time_ns += (double)(e > s ? e - s : 0);
	n->count++;
	if (c->colls && n->cat == GT_CAT_COMM &&
	    gt_colls_kernel(c->colls, source, (int)device, s, e, corr, n->name, NULL, GT_SEQ_UNKNOWN, 0, NULL) < 0)
		return -1;
	return gt_tl_op(&c->tl, (uint32_t)g, s, e, n->cat, corr, (uint32_t)ni, stream, bytes);
}

/* One trace read as a visitor (trace/visit.h), so that gputap run reads each trace once for every
 * output: the analysis, the model behind the CSVs and trace.json, the report. */
struct gtr {
	struct gt_an_ctx *c;
	const char *path;
	int source;
	struct idcache ic;
	char *err;
	size_t errlen;
};

static int fail(struct gtr *g, const struct gt_trace_reader *r)
{
	if (g->errlen && !g->err[0])
		snprintf(g->err, g->errlen, "%s: byte %llu: %s", g->path, (unsigned long long)r->offset,
			 g->c->tl.err[0] ? g->c->tl.err : "out of memory");
	return -1;
}

static int v_kernel(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_kernel *k)
{
	struct gtr *g = ctx;
	long ni = cached_name(g->c, &g->ic, r, k->name_id, GT_NK_KERNEL);
	if (add(g->c, g->source, ni, k->device, k->start_ns, k->end_ns, k->corr_id, k->stream, 0) < 0)
		return fail(g, r);
	if (g->c->fd && gt_fd_kernel(g->c->fd, g->source, (int)k->device, k->stream, (uint32_t)ni,
				     g->c->names.v[ni].name, k->start_ns, k->end_ns, k->grid, k->block) < 0)
		return fail(g, r);
	return 0;
}

static int v_memcpy(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_memcpy *m)
{
	struct gtr *g = ctx;
	const char *nm = gt_an_copykind_name(m->copy_kind);
	if (add(g->c, g->source, gt_names_get(&g->c->names, GT_NK_MEMOP, nm, strlen(nm)), m->device, m->start_ns,
		m->end_ns, m->corr_id, m->stream, m->bytes) < 0)
		return fail(g, r);
	if (g->c->fd && gt_fd_memcpy(g->c->fd, g->source, (int)m->device, m->stream, m->start_ns, m->end_ns, m->bytes,
				     m->corr_id, m->copy_kind, m->src_kind, m->dst_kind) < 0)
		return fail(g, r);
	return 0;
}

static int v_memset(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_memset *m)
{
	struct gtr *g = ctx;
	if (add(g->c, g->source, gt_names_get(&g->c->names, GT_NK_MEMOP, "[CUDA memset]", 13), m->device, m->start_ns,
		m->end_ns, m->corr_id, m->stream, m->bytes) < 0)
		return fail(g, r);
	if (g->c->fd &&
	    gt_fd_memset(g->c->fd, g->source, (int)m->device, m->stream, m->start_ns, m->end_ns, m->bytes,
			 m->corr_id) < 0)
		return fail(g, r);
	return 0;
}

static int v_device(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_device *d)
{
	struct gtr *g = ctx;
	(void)r;
	if (g->c->fd)
		gt_fd_device(g->c->fd, g->source, (int)d->device, d->sm_count, d->cc_major, d->cc_minor);
	return 0;
}

static int v_api(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_api *a)
{
	struct gtr *g = ctx;
	if (bad_op(g->c->tl.err, sizeof(g->c->tl.err), 0, a->start_ns, a->end_ns) ||
	    gt_tl_launch2(&g->c->tl, g->source, a->start_ns, a->end_ns, a->corr_id, NULL, a->h.tid) < 0)
		return fail(g, r);
	if (g->c->fd &&
	    gt_fd_api_id(g->c->fd, g->source, a->name_id, gt_tr_str(r, a->name_id), a->start_ns, a->end_ns) < 0)
		return fail(g, r);
	return 0;
}

static int v_nccl(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_nccl_coll *n)
{
	struct gtr *g = ctx;
	if (g->c->colls && gt_colls_nccl(g->c->colls, g->source, n, gt_tr_str(r, n->func_id), gt_tr_str(r, n->algo_id),
					 gt_tr_str(r, n->proto_id), gt_tr_str(r, n->dtype_id)) < 0)
		return fail(g, r);
	return 0;
}

static int v_range(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_range *rg)
{
	struct gtr *g = ctx;
	struct gt_an_ctx *c = g->c;
	if (rg->kind == GT_RANGE_MARK)
		return 0;
	if (rg->kind == GT_RANGE_WINDOW) {
		/* a capture window: one iteration when the windows are the units, else not a range of the program */
		c->windows_seen++;
		if (!c->tag_is_windows)
			return 0;
	} else {
		const char *rn = gt_tr_str(r, rg->name_id);
		/* NCCL's own ranges (its NVTX domain "NCCL": ncclAllReduce, ncclCommDestroy...) mark its API
		 * calls, never the program's iterations: not candidates for the default pick (on a real
		 * 4-rank job two ncclCommDestroy ranges, seconds long, outweighed ten train_step steps) */
		const char *dom = rg->domain_id ? gt_tr_str(r, rg->domain_id) : NULL;
		if (!dom || strcasecmp(dom, "NCCL") != 0)
			gt_an_range_seen(c, rn, (double)(rg->end_ns > rg->start_ns ? rg->end_ns - rg->start_ns : 0), 1);
		gt_an_range_at(c, g->source, rn, rg->start_ns, rg->end_ns);
		if (!gt_an_is_iter_range(c, rn))
			return 0;
	}
	if (bad_op(c->tl.err, sizeof(c->tl.err), 0, rg->start_ns, rg->end_ns))
		return fail(g, r);
	c->has_nvtx = 1;
	c->nvtx_count++;
	c->nvtx_total_ns += (double)(rg->end_ns > rg->start_ns ? rg->end_ns - rg->start_ns : 0);
	if (gt_tl_range(&c->tl, g->source, rg->start_ns, rg->end_ns) < 0)
		return fail(g, r);
	return 0;
}

static int v_any(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_hdr *h)
{
	(void)h;
	struct gtr *g = ctx;
	if ((r->nrecords & 0xfffff) == 0)
		gt_an_progress(g->c, g->path, r->offset, 0);
	return 0;
}

static int v_end(void *ctx, const struct gt_trace_reader *r)
{
	struct gtr *g = ctx;
	if (r->partial)
		gt_an_note(g->c, "%s: the trace is partial (the run did not end cleanly or lost records)", g->path);
	return 0;
}

static const struct gt_trace_ops gtr_ops = {
	.any = v_any,
	.kernel = v_kernel,
	.memcpy = v_memcpy,
	.memset = v_memset,
	.device = v_device,
	.api = v_api,
	.nccl_coll = v_nccl,
	.range = v_range,
	.end = v_end,
};

struct feed_arg {
	struct gt_an_ctx *c;
	struct gtr g;
	const char *label;
};

/* Called with the trace open, before its first record: the source and its label. */
static int gtr_join(void *arg, const struct gt_trace_reader *r, struct gt_trace_visitor *v, size_t *nv)
{
	struct feed_arg *a = arg;
	struct gt_an_ctx *c = a->c;
	a->g.source = c->nsources++;
	char proc[sizeof(r->hdr.proc) + 1];
	memcpy(proc, r->hdr.proc, sizeof(r->hdr.proc));
	proc[sizeof(r->hdr.proc)] = '\0';
	const char *label = a->label && a->label[0] ? a->label : proc[0] ? proc : NULL;
	if (label && gt_an_label(c, a->g.source, label, a->g.path) < 0) {
		snprintf(a->g.err, a->g.errlen, "%s: out of memory", a->g.path);
		return -1;
	}
	c->has_tl = 1;
	c->has_mem = 1;
	if (c->fd)
		gt_fd_timebase(c->fd, a->g.source, r->hdr.start_ns);
	v[*nv] = (struct gt_trace_visitor){&gtr_ops, &a->g};
	(*nv)++;
	return 0;
}

int gt_an_read_gtr(struct gt_an_ctx *c, const char *path, const char *label, char *err, size_t errlen)
{
	struct feed_arg a = {c, {c, path, 0, {0}, err, errlen}, label};
	gt_trace_feed_fn feed = c->o->gtr_feed ? c->o->gtr_feed : gt_trace_feed_plain;
	int rc = feed(c->o->gtr_feed_arg, path, gtr_join, &a, err, errlen);
	free(a.g.ic.v);
	return rc < 0 ? -1 : 0;
}
