/* trace/visit.c — one pass, many readers.  See visit.h. */
#include "trace/visit.h"

#include <stdio.h>

static int one(const struct gt_trace_visitor *v, const struct gt_trace_reader *r, const struct gt_rec_hdr *h)
{
	const struct gt_trace_ops *o = v->ops;
	if (o->any && o->any(v->ctx, r, h) < 0)
		return -1;
	switch (h->type) {
#define GT_VISIT(T, num, name, v1, thread)                                                         \
	case T: return o->name ? o->name(v->ctx, r, (const struct gt_rec_##name *)(const void *)h) : 0;
		GT_REC_TYPES(GT_VISIT)
#undef GT_VISIT
	default: return 0;
	}
}

void gt_trace_release(const struct gt_trace_visitor *v, size_t nv)
{
	for (size_t i = 0; i < nv; i++)
		if (v[i].ops->release)
			v[i].ops->release(v[i].ctx);
}

int gt_trace_visit(struct gt_trace_reader *r, const struct gt_trace_visitor *v, size_t nv, char *err, size_t errlen)
{
	const struct gt_rec_hdr *h;
	int rc;
	while ((rc = gt_tr_next(r, &h)) > 0) {
		for (size_t i = 0; i < nv; i++)
			if (one(&v[i], r, h) < 0) {
				if (err && errlen && !err[0])
					snprintf(err, errlen, "%s: out of memory at byte %llu", r->path,
						 (unsigned long long)(r->offset - h->size));
				gt_trace_release(v, nv);
				return -1;
			}
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", r->err);
		gt_trace_release(v, nv);
		return -1;
	}
	int bad = 0;
	for (size_t i = 0; i < nv; i++)
		if (v[i].ops->end && v[i].ops->end(v[i].ctx, r) < 0 && !bad) {
			bad = 1; /* the others still end (each frees what it holds there) */
			if (err && errlen && !err[0])
				snprintf(err, errlen, "%s: out of memory", r->path);
		}
	return bad ? -1 : 0;
}

int gt_trace_feed_plain(void *arg, const char *path, gt_trace_join_fn join, void *join_arg, char *err, size_t errlen)
{
	(void)arg;
	struct gt_trace_reader r;
	if (gt_tr_open(&r, path) < 0) {
		snprintf(err, errlen, "%s", r.err);
		return -1;
	}
	struct gt_trace_visitor v[GT_VISIT_MAX];
	size_t nv = 0;
	if (errlen)
		err[0] = '\0';
	int rc = join(join_arg, &r, v, &nv);
	if (rc == 0)
		rc = gt_trace_visit(&r, v, nv, err, errlen);
	else
		gt_trace_release(v, nv);
	gt_tr_close(&r);
	return rc < 0 ? -1 : 0;
}
