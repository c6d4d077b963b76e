/* metrics.log and timeline.log (the alnair interposer's formats) rebuilt from a trace. */
#include <stdlib.h>
#include <string.h>

#include "trace/alnair_log.h"
#include "export/writers.h"
#include "core/sort.h"

static int timeline_api(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_api *a)
{
	char line[8192];
	uint64_t d = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
	gt_alnair_timelineline(line, sizeof(line), gt_tr_str(r, a->name_id), a->start_ns, d / 1000, a->bytes,
			       a->copy_kind);
	fputs(line, (FILE *)ctx);
	return 0;
}

static const struct gt_trace_ops timeline_ops = {.api = timeline_api};

/* One line per API record, in the order of the trace. */
void gt_alnair_timeline_hook(struct gt_model *m, FILE *f, int hook_slot)
{
	m->hooks[hook_slot] = (struct gt_trace_visitor){&timeline_ops, f};
}

static int cmp_order(const void *a, const void *b)
{
	const struct gt_stat *x = *(const struct gt_stat *const *)a, *y = *(const struct gt_stat *const *)b;
	return x->order < y->order ? -1 : x->order > y->order;
}

int gt_alnair_metrics(FILE *f, const struct gt_model *m)
{
	char line[8192];
	gt_alnair_memline(line, sizeof(line), m->mem_final);
	fputs(line, f);
	const struct gt_stattab *t = &m->apiall;
	for (unsigned i = 0; i < gt_alnair_nnames; i++) {
		uint64_t count = 0, total = 0;
		for (size_t k = 0; k < t->n; k++)
			if (strcmp(t->s[k].name, gt_alnair_names[i]) == 0) {
				count = t->s[k].count;
				total = t->s[k].total;
			}
		gt_alnair_metricline(line, sizeof(line), gt_alnair_names[i], count, total / 1000);
		fputs(line, f);
	}
	const struct gt_stat **v = malloc((t->n ? t->n : 1) * sizeof(*v));
	if (!v)
		return -1;
	size_t n = 0;
	for (size_t k = 0; k < t->n; k++) {
		unsigned i;
		for (i = 0; i < gt_alnair_nnames; i++)
			if (strcmp(t->s[k].name, gt_alnair_names[i]) == 0)
				break;
		if (i == gt_alnair_nnames)
			v[n++] = &t->s[k];
	}
	gt_sort(v, n, sizeof(*v), cmp_order);
	for (size_t k = 0; k < n; k++) {
		gt_alnair_metricline(line, sizeof(line), v[k]->name, v[k]->count, v[k]->total / 1000);
		fputs(line, f);
	}
	free(v);
	return 0;
}
