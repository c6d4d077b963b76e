/*
 * analyze/findings_counters.c — the findings that need hardware counters per kernel (findings.h,
 * docs/findings.md): memory access that wastes bandwidth (sectors per request) and low achieved
 * occupancy.  Only a gputap run made with per-kernel range metrics has them: its
 * DIR/<proc>/kernel_metrics.csv (docs/range-metrics.md), one row per launch, one column per metric.
 * The file is small (one row per measured launch) and read once, after the analysis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/findings.h"
#include "core/csvio.h"
#include "trace/rundir.h"

#define M_SECTORS "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
#define M_REQUESTS "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
#define M_OCC "sm__warps_active.avg.pct_of_peak_sustained_active"
#define M_TIME "gpu__time_duration.sum"
#define IDEAL_SPR 4.0     /* sectors per request of 32-bit loads a warp makes contiguous */
#define BAD_SPR 8.0       /* above this: the finding (8: 64-bit contiguous loads are still fine) */
#define LOW_OCC 25.0      /* achieved occupancy below this (% of the SM's warps) */
#define OCC_TARGET 50.0   /* what the low-occupancy gain assumes could be reached */
#define MIN_SHARE 0.05    /* kernels with at least this share of the measured time */

struct kagg {
	char *name;
	char where[96];
	double sectors, requests, time_ns, occ_wsum, occ_w;
	uint64_t launches;
};

struct acc {
	struct kagg *v;
	size_t n;
	int has_spr, has_occ, has_time;
	double total_ns;
	const char *tag;   /* the iteration range (--nvtx TAG): only launches inside it count; NULL: all */
	uint64_t launches; /* rows counted */
};

/* `path` (range names joined by '/', outermost first) has a range named `tag` */
static int in_range(const char *path, const char *tag)
{
	size_t tl = strlen(tag);
	for (const char *p = path; (p = strstr(p, tag)); p++)
		if ((p == path || p[-1] == '/') && (p[tl] == '\0' || p[tl] == '/'))
			return 1;
	return 0;
}

/* the column of `metric` ("<metric> (<unit>)" or the bare name), -1 if none */
static int col_of(const struct gt_csv *c, const char *metric)
{
	size_t ml = strlen(metric);
	for (size_t i = 0; i < c->nfields; i++)
		if (strncmp(c->fields[i], metric, ml) == 0 && (c->fields[i][ml] == '\0' || c->fields[i][ml] == ' '))
			return (int)i;
	return -1;
}

static double num(const struct gt_csv *c, int col)
{
	if (col < 0 || (size_t)col >= c->nfields || !c->fields[col][0])
		return NAN;
	char *e;
	double v = strtod(c->fields[col], &e);
	return *e ? NAN : v;
}

static struct kagg *agg_of(struct acc *a, const char *name, const char *proc)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].name, name) == 0)
			return &a->v[i];
	struct kagg *v = realloc(a->v, (a->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	a->v = v;
	struct kagg *k = &v[a->n];
	memset(k, 0, sizeof(*k));
	if (!(k->name = strdup(name)))
		return NULL;
	snprintf(k->where, sizeof(k->where), "%s", proc);
	a->n++;
	return k;
}

static int read_proc(struct acc *a, const char *dir, const char *proc)
{
	char path[4400], err[512];
	snprintf(path, sizeof(path), "%s/%s/kernel_metrics.csv", dir, proc);
	struct gt_csv c;
	if (gt_csv_open(&c, path, err, sizeof(err)) < 0)
		return 0;
	int rc = gt_csv_next(&c, err, sizeof(err));
	if (rc <= 0) {
		gt_csv_close(&c);
		return 0;
	}
	int ck = col_of(&c, "kernel"), cs = col_of(&c, M_SECTORS), cr = col_of(&c, M_REQUESTS), co = col_of(&c, M_OCC),
	    ct = col_of(&c, M_TIME), cg = col_of(&c, "range");
	if (ck < 0) {
		gt_csv_close(&c);
		return 0;
	}
	a->has_spr |= cs >= 0 && cr >= 0;
	a->has_occ |= co >= 0;
	a->has_time |= ct >= 0;
	while ((rc = gt_csv_next(&c, err, sizeof(err))) > 0) {
		if ((size_t)ck >= c.nfields)
			continue;
		if (a->tag && (cg < 0 || (size_t)cg >= c.nfields || !in_range(c.fields[cg], a->tag)))
			continue;
		a->launches++;
		struct kagg *k = agg_of(a, c.fields[ck], proc);
		if (!k)
			break;
		double s = num(&c, cs), r = num(&c, cr), o = num(&c, co), t = num(&c, ct);
		k->launches++;
		if (!isnan(s) && !isnan(r)) {
			k->sectors += s;
			k->requests += r;
		}
		if (!isnan(t)) {
			k->time_ns += t;
			a->total_ns += t;
		}
		if (!isnan(o)) {
			double w = isnan(t) || t <= 0 ? 1 : t;
			k->occ_wsum += o * w;
			k->occ_w += w;
		}
	}
	gt_csv_close(&c);
	return 1;
}

static void unskip(struct gt_fd_list *L, const char *id)
{
	for (size_t i = 0; i < L->nskipped; i++)
		if (strcmp(L->skipped[i].id, id) == 0) {
			memmove(&L->skipped[i], &L->skipped[i + 1], (L->nskipped - i - 1) * sizeof(*L->skipped));
			L->nskipped--;
			return;
		}
}

static void reskip(struct gt_fd_list *L, const char *id, const char *why)
{
	for (size_t i = 0; i < L->nskipped; i++)
		if (strcmp(L->skipped[i].id, id) == 0)
			snprintf(L->skipped[i].why, sizeof(L->skipped[i].why), "%s", why);
}


void gt_fd_counters(struct gt_fd_list *L, const struct gt_an_result *r, const char *dir)
{
	if (!L || !r || !dir || !gt_rundir_is_run(dir))
		return;
	struct gt_rundir_proc *procs = NULL;
	int n = gt_rundir_procs(dir, &procs);
	struct acc a = {0};
	/* iterations marked by an NVTX range: the launches inside it (the file's `range` column) */
	if (r->has_nvtx && r->nvtx_tag && strcmp(r->iter_source, "nvtx") == 0)
		a.tag = r->nvtx_tag;
	int files = 0;
	for (int i = 0; i < n; i++)
		files += read_proc(&a, dir, procs[i].name);
	free(procs);
	const char *how = "gputap run --metrics-mode kernel --metrics with the counters docs/findings.md names";
	char why[240];
	if (!files) {
		snprintf(why, sizeof(why), "no kernel_metrics.csv in the run: %s", how);
		reskip(L, "uncoalesced", why);
		reskip(L, "low-occupancy", why);
		return;
	}
	/* per iteration: the measured launches spread over the analysis' iterations */
	double iters = r->iters > 0 ? r->iters : 1;
	double T = L->iter_ms * 1e6;
	if (!r->kernel_count && !r->nccl_count && a.total_ns > 0) {
		/* per-kernel counters keep no kernel records (docs/range-metrics.md), and CUPTI's kernel replay
		 * stretches the host's time of every iteration far beyond the program's: the iteration time is
		 * the measured kernels' time per iteration (the GPU's work; the share is of that) */
		T = a.total_ns / iters;
		L->iter_ms = T / 1e6;
		if (!L->iters && r->iters > 0)
			L->iters = r->iters;
		for (size_t i = 0; i < L->n; i++)
			L->v[i].gain_pct = 100.0 * L->v[i].gain_ms / L->iter_ms;
		snprintf(L->iter_how, sizeof(L->iter_how),
			 "%d iterations (%s); iteration time = the kernels' measured time per iteration (per-kernel "
			 "counters were on: no kernel records, and the host's times include the counters' replay)",
			 r->iters > 0 ? r->iters : 1, r->iter_source);
	}
	const char *ids[2] = {"uncoalesced", "low-occupancy"};
	int has[2] = {a.has_spr && a.has_time, a.has_occ && a.has_time};
	for (int kind = 0; kind < 2; kind++) {
		if (!has[kind]) {
			snprintf(why, sizeof(why), "kernel_metrics.csv lacks %s: %s",
				 kind ? M_OCC " or " M_TIME : M_SECTORS ", " M_REQUESTS " or " M_TIME, how);
			reskip(L, ids[kind], why);
			continue;
		}
		unskip(L, ids[kind]);
		gt_fd_checked(L, ids[kind]);
		struct kagg *best = NULL;
		double bgain = 0;
		for (size_t i = 0; i < a.n; i++) {
			struct kagg *k = &a.v[i];
			if (k->time_ns < MIN_SHARE * a.total_ns)
				continue;
			double g = 0;
			if (kind == 0 && k->requests > 0 && k->sectors / k->requests > BAD_SPR)
				g = k->time_ns * (1.0 - IDEAL_SPR / (k->sectors / k->requests));
			if (kind == 1 && k->occ_w > 0 && k->occ_wsum / k->occ_w < LOW_OCC)
				g = k->time_ns * (1.0 - (k->occ_wsum / k->occ_w) / OCC_TARGET);
			if (g > bgain)
				bgain = g, best = k;
		}
		if (!best)
			continue;
		struct gt_fd_item *it = gt_fd_new_item(L, ids[kind]);
		if (!it)
			break;
		it->gain_ms = bgain / iters / 1e6;
		it->gain_pct = T > 0 ? 100.0 * bgain / iters / T : 0;
		it->upper_bound = 1;
		char b[600];
		char nm[160];
		gt_an_short_name(best->name, 100, nm, sizeof(nm));
		if (kind == 0) {
			double spr = best->sectors / best->requests;
			snprintf(it->title, sizeof(it->title), "Memory access that wastes bandwidth: %.1f sectors per request in %s",
				 spr, nm);
			snprintf(b, sizeof(b), "%s: %llu launches measured, %.3f ms; global loads: %.0f requests, %.0f sectors "
					       "(%.1f per request; 4 is one 128-byte line per warp of 32-bit loads)",
				 nm, (unsigned long long)best->launches, best->time_ns / 1e6, best->requests, best->sectors, spr);
			snprintf(it->method, sizeof(it->method),
				 "kernel time x (1 - 4 / sectors per request), per iteration: the time saved if its loads were "
				 "coalesced and it is bound by memory traffic (upper bound)");
			snprintf(it->fix_torch, sizeof(it->fix_torch),
				 "make the tensor contiguous in the dimension the kernel walks (.contiguous(), a different "
				 "layout/permute order, channels_last where the op expects it)");
			snprintf(it->fix_cuda, sizeof(it->fix_cuda),
				 "let consecutive threads read consecutive addresses (threadIdx.x along the contiguous "
				 "dimension), structure-of-arrays instead of array-of-structures, stage through shared memory");
			snprintf(it->reference, sizeof(it->reference),
				 "CUDA C++ Best Practices Guide, 'Coalesced Access to Global Memory'; Nsight Compute, Memory "
				 "Workload Analysis");
		} else {
			double occ = best->occ_wsum / best->occ_w;
			snprintf(it->title, sizeof(it->title), "Low achieved occupancy: %.1f%% of the SM's warps in %s", occ, nm);
			snprintf(b, sizeof(b), "%s: %llu launches measured, %.3f ms; achieved occupancy %.1f%% (" M_OCC ")", nm,
				 (unsigned long long)best->launches, best->time_ns / 1e6, occ);
			snprintf(it->method, sizeof(it->method),
				 "kernel time x (1 - occupancy / %.0f%%), per iteration: what reaching %.0f%% would save if the "
				 "kernel is latency-bound (upper bound; a kernel bound by its pipes gains nothing)",
				 OCC_TARGET, OCC_TARGET);
			snprintf(it->fix_torch, sizeof(it->fix_torch),
				 "larger batches or fused ops (torch.compile) give the GPU more parallel work per kernel");
			snprintf(it->fix_cuda, sizeof(it->fix_cuda),
				 "fewer registers (__launch_bounds__, -maxrregcount) or less shared memory per block, more "
				 "blocks or threads per block; cudaOccupancyMaxPotentialBlockSize");
			snprintf(it->reference, sizeof(it->reference),
				 "CUDA C++ Best Practices Guide, 'Occupancy'; Nsight Compute, Occupancy section");
		}
		gt_fd_evidence(it, "%s", b);
		snprintf(b, sizeof(b), "from %s/%s/kernel_metrics.csv (per-kernel range metrics)", dir, best->where);
		gt_fd_evidence(it, "%s", b);
		snprintf(it->where, sizeof(it->where), "%s, %s", best->where, nm);
	}
	for (size_t i = 0; i < a.n; i++)
		free(a.v[i].name);
	free(a.v);
	gt_fd_rank(L);
}

/* SMs of the GPUs a run names (run.json's "gpus" have a name, no SM count; a gputap trace has
 * neither), for the small-grid finding: the data-sheet count of the GPU the name says. */
static unsigned sms_of_name(const char *n)
{
	static const struct {
		const char *key;
		unsigned sms;
	} t[] = {
	    {"H100 PCIe", 114}, {"H100", 132}, {"H200", 132}, {"H800", 132}, {"GH200", 132}, {"B200", 148},
	    {"A100", 108},      {"A800", 108}, {"A10G", 80},  {"A10", 72},   {"L40", 142},   {"L4", 58},
	    {"V100", 80},       {"T4", 40},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strstr(n, t[i].key))
			return t[i].sms;
	return 0;
}

/* The value of "key" inside [p, end): a string into buf, or a number's text. 0 if absent. */
static int field(const char *p, const char *end, const char *key, char *buf, size_t cap)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\"", key);
	const char *q = strstr(p, k);
	if (!q || q >= end)
		return 0;
	q += strlen(k);
	while (q < end && (*q == ' ' || *q == ':' || *q == '\t' || *q == '\n'))
		q++;
	int str = q < end && *q == '"';
	q += str;
	size_t n = 0;
	while (q < end && n + 1 < cap && (str ? *q != '"' : (*q != ',' && *q != '}' && *q != '\n')))
		buf[n++] = *q++;
	buf[n] = '\0';
	return n > 0;
}

void gt_fd_rundir(struct gt_fd *f, const char *dir)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/run.json", dir);
	size_t len = 0;
	char *text = gt_read_file(path, &len);
	if (!text)
		return;
	const char *p = strstr(text, "\"gpus\"");
	const char *arr_end = p ? strchr(p, ']') : NULL;
	while (p && arr_end && (p = strchr(p, '{')) && p < arr_end) {
		const char *end = strchr(p, '}');
		if (!end)
			break;
		char idx[32], name[128], cc[32];
		if (field(p, end, "index", idx, sizeof(idx)) && field(p, end, "name", name, sizeof(name))) {
			unsigned maj = 0, min = 0;
			if (field(p, end, "compute_capability", cc, sizeof(cc)))
				sscanf(cc, "%u.%u", &maj, &min);
			long d = strtol(idx, NULL, 10);
			if (d >= 0 && d <= 1 << 20)
				gt_fd_device(f, -1, (int)d, sms_of_name(name), maj, min);
		}
		p = end + 1;
	}
	free(text);
}
