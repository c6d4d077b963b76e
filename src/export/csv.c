/* The nsys-compatible CSVs (`nsys stats --format csv` reports). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/ofile.h"
#include "core/csvio.h"
#include "export/writers.h"
#include "core/sort.h"

void gt_fmt1(char *buf, size_t cap, double x)
{
	double r = round(x * 10.0) / 10.0;
	if (r == 0)
		r = 0; /* no "-0.0" */
	snprintf(buf, cap, "%.1f", r);
}

void gt_csv_field(FILE *f, const char *s)
{
	char *c = gt_utf8_clean(s);
	gt_csv_put(f, c);
	free(c);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* the common shape: Time (%),Total Time (ns),N,Avg,Med,Min,Max,StdDev,[Style,]Name */
static void time_rows(FILE *f, const struct gt_stattab *t, const char *header, int with_style)
{
	fputs(header, f);
	struct gt_stat **v = gt_stat_sorted(t);
	if (!v)
		return;
	uint64_t grand = 0;
	for (size_t i = 0; i < t->n; i++)
		grand += t->s[i].total;
	for (size_t i = 0; i < t->n; i++) {
		const struct gt_stat *s = v[i];
		char p[64], a[64], md[64], sd[64];
		gt_fmt1(p, sizeof(p), pct(s->total, grand));
		gt_fmt1(a, sizeof(a), s->avg);
		gt_fmt1(md, sizeof(md), s->med);
		gt_fmt1(sd, sizeof(sd), s->stddev);
		fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",%s,%s,%" PRIu64 ",%" PRIu64 ",%s,", p, s->total, s->count, a,
			md, s->min, s->max, sd);
		if (with_style)
			fprintf(f, "%s,", s->style ? s->style : "");
		gt_csv_field(f, s->name);
		fputc('\n', f);
	}
	free(v);
}

void gt_csv_kern_sum(FILE *f, const struct gt_model *m)
{
	time_rows(f, &m->kern,
		  "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n", 0);
}

void gt_csv_mem_time_sum(FILE *f, const struct gt_model *m)
{
	time_rows(f, &m->memtime,
		  "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation\n", 0);
}

void gt_csv_api_sum(FILE *f, const struct gt_model *m)
{
	time_rows(f, &m->api,
		  "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n", 0);
}

void gt_csv_nvtx_sum(FILE *f, const struct gt_model *m)
{
	time_rows(f, &m->nvtx,
		  "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n",
		  1);
}

void gt_csv_mem_size_sum(FILE *f, const struct gt_model *m)
{
	fputs("Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation\n", f);
	struct gt_stat **v = gt_stat_sorted(&m->memsize);
	if (!v)
		return;
	for (size_t i = 0; i < m->memsize.n; i++) {
		const struct gt_stat *s = v[i];
		/* nsys prints sizes in MB = 10^6 bytes, three decimals */
		fprintf(f, "%.3f,%" PRIu64 ",%.3f,%.3f,%.3f,%.3f,%.3f,", (double)s->total / 1e6, s->count,
			s->avg / 1e6, s->med / 1e6, (double)s->min / 1e6, (double)s->max / 1e6, s->stddev / 1e6);
		gt_csv_field(f, s->name);
		fputc('\n', f);
	}
	free(v);
}

/* ---- nvtx_gpu_proj_trace ---- */

struct proj {
	const struct gt_m_range *r;
	long parent;  /* index into the candidate array, -1 if none */
	unsigned level;
	uint64_t pstart, pend, nops, last_corr, nchild;
};

static int cmp_proj(const void *a, const void *b)
{
	const struct gt_m_range *x = ((const struct proj *)a)->r, *y = ((const struct proj *)b)->r;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the enclosing one first */
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_api(const void *a, const void *b)
{
	const struct gt_m_api *x = *(const struct gt_m_api *const *)a, *y = *(const struct gt_m_api *const *)b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

static int cmp_out(const void *a, const void *b)
{
	const struct proj *x = *(const struct proj *const *)a, *y = *(const struct proj *const *)b;
	if (x->pstart != y->pstart)
		return x->pstart < y->pstart ? -1 : 1;
	uint64_t dx = x->pend - x->pstart, dy = y->pend - y->pstart;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->r->id < y->r->id ? -1 : x->r->id > y->r->id;
}

static void range_stack(FILE *f, const struct proj *all, const struct proj *p)
{
	if (p->parent >= 0)
		range_stack(f, all, &all[p->parent]);
	fprintf(f, ":%" PRIu64, p->r->id);
}

/*
 * As nsys: a GPU operation belongs to every range (of the thread that made
 * the launching API call) that encloses that call; ranges closed on another
 * thread are left out; the parent of a range is the tightest range of the
 * same thread enclosing it; only ranges with at least one GPU operation are
 * listed, ordered by projected start, then longer first.
 */
int gt_csv_nvtx_proj_trace(FILE *f, const struct gt_model *m)
{
	fputs("Name,Projected Start (ns),Projected Duration (ns),Orig Start (ns),Orig Duration (ns),Style,PID,TID,"
	      "NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack\n",
	      f);
	size_t n = 0;
	struct proj *p = calloc(m->ranges.n ? m->ranges.n : 1, sizeof(*p));
	const struct gt_m_api **api = calloc(m->apis.n ? m->apis.n : 1, sizeof(*api));
	long *stack = calloc(m->ranges.n ? m->ranges.n : 1, sizeof(*stack));
	size_t *active = calloc(m->ranges.n ? m->ranges.n : 1, sizeof(*active));
	struct proj **out = calloc(m->ranges.n ? m->ranges.n : 1, sizeof(*out));
	int rc = -1;
	if (!p || !api || !stack || !active || !out)
		goto done;
	for (size_t i = 0; i < m->ranges.n; i++) {
		const struct gt_m_range *r = &GT_VEC_AT(&m->ranges, struct gt_m_range, i);
		if (r->kind == GT_RANGE_STARTEND && r->end_tid && r->end_tid != r->tid)
			continue;
		p[n].r = r;
		p[n].parent = -1;
		p[n].pstart = UINT64_MAX;
		n++;
	}
	gt_sort(p, n, sizeof(*p), cmp_proj);
	/* parents: sweep each thread's ranges by start with a stack of open ones */
	size_t sp = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || p[i].r->tid != p[i - 1].r->tid)
			sp = 0;
		while (sp && p[stack[sp - 1]].r->end < p[i].r->end)
			sp--;
		if (sp) {
			p[i].parent = stack[sp - 1];
			p[i].level = p[stack[sp - 1]].level + 1;
		}
		stack[sp++] = (long)i;
	}
	/* attribute each launching API call to the ranges enclosing it */
	size_t na = 0;
	for (size_t i = 0; i < m->apis.n; i++) {
		const struct gt_m_api *a = &GT_VEC_AT(&m->apis, struct gt_m_api, i);
		if (gt_map_get(&m->corr, a->corr))
			api[na++] = a;
	}
	gt_sort(api, na, sizeof(*api), cmp_api);
	size_t ri = 0, nact = 0;
	for (size_t i = 0; i < na; i++) {
		const struct gt_m_api *a = api[i];
		if (i > 0 && a->tid != api[i - 1]->tid)
			nact = 0;
		while (ri < n && p[ri].r->tid < a->tid)
			ri++;
		while (ri < n && p[ri].r->tid == a->tid && p[ri].r->start <= a->start)
			active[nact++] = ri++;
		size_t keep = 0;
		const struct gt_m_gpuops *g =
			&GT_VEC_AT(&m->gpuops, struct gt_m_gpuops, *gt_map_get(&m->corr, a->corr) - 1);
		for (size_t k = 0; k < nact; k++) {
			struct proj *q = &p[active[k]];
			if (q->r->end < a->start)
				continue; /* ended before this call: cannot hold any later one */
			active[keep++] = active[k];
			if (q->r->end < a->end || q->last_corr == a->corr)
				continue;
			q->last_corr = a->corr;
			q->nops++;
			if (g->start < q->pstart)
				q->pstart = g->start;
			if (g->end > q->pend)
				q->pend = g->end;
		}
		nact = keep;
	}
	size_t no = 0;
	for (size_t i = 0; i < n; i++) {
		if (!p[i].nops)
			continue;
		out[no++] = &p[i];
		if (p[i].parent >= 0)
			p[p[i].parent].nchild++;
	}
	gt_sort(out, no, sizeof(*out), cmp_out);
	for (size_t i = 0; i < no; i++) {
		const struct proj *q = out[i];
		gt_csv_field(f, q->r->name);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%u,%u,%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",",
			q->pstart, q->pend - q->pstart, q->r->start, q->r->end - q->r->start,
			q->r->kind == GT_RANGE_STARTEND ? "StartEnd" : "PushPop", m->hdr.pid, q->r->tid, q->nops,
			q->level, q->nchild, q->r->id);
		if (q->parent >= 0)
			fprintf(f, "%" PRIu64, p[q->parent].r->id);
		fputc(',', f);
		range_stack(f, p, q);
		fputc('\n', f);
	}
	rc = 0;
done:
	free(p);
	free(api);
	free(stack);
	free(active);
	free(out);
	return rc;
}

int gt_csv_write_all(const struct gt_model *m, const char *outdir, const char *prefix, char *err, size_t errlen)
{
	static const struct {
		const char *report;
		void (*fn)(FILE *, const struct gt_model *);
	} simple[] = {
		{"cuda_gpu_kern_sum", gt_csv_kern_sum},	     {"cuda_gpu_mem_time_sum", gt_csv_mem_time_sum},
		{"cuda_gpu_mem_size_sum", gt_csv_mem_size_sum}, {"cuda_api_sum", gt_csv_api_sum},
		{"nvtx_sum", gt_csv_nvtx_sum},
	};
	char name[512];
	struct gt_ofile o;
	for (size_t i = 0; i <= sizeof(simple) / sizeof(simple[0]); i++) {
		int last = i == sizeof(simple) / sizeof(simple[0]);
		snprintf(name, sizeof(name), "%s_%s.csv", prefix, last ? "nvtx_gpu_proj_trace" : simple[i].report);
		if (gt_ofile_open(&o, outdir, name, err, errlen) < 0)
			return -1;
		if (!last) {
			simple[i].fn(o.f, m);
		} else if (gt_csv_nvtx_proj_trace(o.f, m) < 0) {
			snprintf(err, errlen, "%s: out of memory", o.path);
			gt_ofile_abort(&o);
			return -1;
		}
		if (gt_ofile_commit(&o, err, errlen) < 0)
			return -1;
	}
	return 0;
}
