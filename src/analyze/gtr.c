/*
 * analyze/gtr.c — a gputap trace (trace.gtr) as analyzer input: KERNEL, MEMCPY and MEMSET records
 * feed the timeline, RANGE records with the iteration tag give the iterations, API records (start,
 * correlation id) say which iteration launched each op.  One trace = one source (rank), named by its
 * process folder; its devices are its GPUs.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/an_internal.h"
#include "core/demangle.h"
#include "core/trace_io.h"

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
	    gt_colls_kernel(c->colls, source, (int)device, s, e, corr, n->name, NULL, GT_SEQ_UNKNOWN) < 0)
		return -1;
	return gt_tl_op(&c->tl, (uint32_t)g, s, e, n->cat, corr, (uint32_t)ni, stream, bytes);
}

int gt_an_read_gtr(struct gt_an_ctx *c, const char *path, const char *label, char *err, size_t errlen)
{
	struct gt_trace_reader r;
	if (gt_tr_open(&r, path) < 0) {
		snprintf(err, errlen, "%s", r.err);
		return -1;
	}
	int source = c->nsources++;
	char proc[sizeof(r.hdr.proc) + 1];
	memcpy(proc, r.hdr.proc, sizeof(r.hdr.proc));
	proc[sizeof(r.hdr.proc)] = '\0';
	if (!label || !label[0])
		label = proc[0] ? proc : NULL;
	if (label && gt_an_label(c, source, label, path) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		gt_tr_close(&r);
		return -1;
	}
	struct idcache ic = {0};
	const struct gt_rec_hdr *h;
	int rc, bad = 0;
	c->has_tl = 1;
	c->has_mem = 1;
	while ((rc = gt_tr_next(&r, &h)) > 0) {
		switch (h->type) {
		case GT_REC_KERNEL: {
			const struct gt_rec_kernel *k = (const void *)h;
			bad |= add(c, source, cached_name(c, &ic, &r, k->name_id, GT_NK_KERNEL), k->device, k->start_ns,
				   k->end_ns, k->corr_id, k->stream, 0) < 0;
			break;
		}
		case GT_REC_MEMCPY: {
			const struct gt_rec_memcpy *m = (const void *)h;
			const char *nm = gt_an_copykind_name(m->copy_kind);
			bad |= add(c, source, gt_names_get(&c->names, GT_NK_MEMOP, nm, strlen(nm)), m->device,
				   m->start_ns, m->end_ns, m->corr_id, m->stream, m->bytes) < 0;
			break;
		}
		case GT_REC_MEMSET: {
			const struct gt_rec_memset *m = (const void *)h;
			bad |= add(c, source, gt_names_get(&c->names, GT_NK_MEMOP, "[CUDA memset]", 13), m->device,
				   m->start_ns, m->end_ns, m->corr_id, m->stream, m->bytes) < 0;
			break;
		}
		case GT_REC_API: {
			const struct gt_rec_api *a = (const void *)h;
			bad |= bad_op(c->tl.err, sizeof(c->tl.err), 0, a->start_ns, a->end_ns) ||
			       gt_tl_launch2(&c->tl, source, a->start_ns, a->end_ns, a->corr_id, NULL) < 0;
			break;
		}
		case GT_REC_NCCL_COLL: {
			const struct gt_rec_nccl_coll *n = (const void *)h;
			if (c->colls)
				bad |= gt_colls_nccl(c->colls, source, n, gt_tr_str(&r, n->func_id), gt_tr_str(&r, n->algo_id),
						     gt_tr_str(&r, n->proto_id)) < 0;
			break;
		}
		case GT_REC_RANGE: {
			const struct gt_rec_range *g = (const void *)h;
			if (g->kind == GT_RANGE_MARK || g->kind == GT_RANGE_WINDOW)
				break;
			const char *rn = gt_tr_str(&r, g->name_id);
			gt_an_range_seen(c, rn, (double)(g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0), 1);
			if (!gt_an_is_iter_range(c, rn))
				break;
			if ((bad = bad_op(c->tl.err, sizeof(c->tl.err), 0, g->start_ns, g->end_ns)))
				break;
			c->has_nvtx = 1;
			c->nvtx_count++;
			c->nvtx_total_ns += (double)(g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0);
			bad |= gt_tl_range(&c->tl, source, g->start_ns, g->end_ns) < 0;
			break;
		}
		default: break;
		}
		if (bad) {
			snprintf(err, errlen, "%s: byte %llu: %s", path, (unsigned long long)r.offset,
				 c->tl.err[0] ? c->tl.err : "out of memory");
			rc = -1;
			break;
		}
		if ((r.nrecords & 0xfffff) == 0)
			gt_an_progress(c, path, r.offset, 0);
	}
	if (rc < 0 && !bad)
		snprintf(err, errlen, "%s", r.err);
	if (rc == 0 && r.partial)
		gt_an_note(c, "%s: the trace is partial (the run did not end cleanly or lost records)", path);
	free(ic.v);
	gt_tr_close(&r);
	return rc < 0 ? -1 : 0;
}
