/* libperf_cudnn_gpu.c — the GPU side of the cuDNN replay: load libcudnn with
 * dlopen, walk the descriptor program of libperf_cudnn.c with the backend
 * API, ask the heuristics for engine configurations, and time the recorded
 * engine and every offered one (see libperf_cudnn.h, docs/libtrace.md).
 *
 * The few entry points used are declared here (cudnn_graph.h, cuDNN 9). */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libperf/libperf_cudnn.h"

typedef int cdn_status;
typedef void *cdn_handle, *cdn_desc;

struct cudnn_api {
	void *h;
	size_t (*get_version)(void);
	const char *(*error_string)(cdn_status);
	void (*last_error)(char *, size_t);
	cdn_status (*create)(cdn_handle *);
	cdn_status (*destroy)(cdn_handle);
	cdn_status (*set_stream)(cdn_handle, cu_stream);
	cdn_status (*create_desc)(int, cdn_desc *);
	cdn_status (*destroy_desc)(cdn_desc);
	cdn_status (*finalize)(cdn_desc);
	cdn_status (*set_attr)(cdn_desc, int, int, int64_t, const void *);
	cdn_status (*get_attr)(cdn_desc, int, int, int64_t, int64_t *, void *);
	cdn_status (*execute)(cdn_handle, cdn_desc, cdn_desc);
};

/* Largest workspace an engine may ask for; engines that need more are not timed. */
#define MAX_WORKSPACE (4ull << 30)
/* engine configurations kept per heuristic mode */
#define MAX_CFGS 64

struct gt_cudnn_replayer {
	const struct gt_cu_api *cu;
	cu_stream st;
	int iters, warmup, max_algos;
	cu_event *ev;
	float *ms;
	int tried_load;
	struct cudnn_api dn;
	cdn_handle handle;
	char version[48];
	char load_err[200];
	cu_ptr ws;
	uint64_t ws_bytes;
	struct gt_cdn_prog prog;
	cdn_desc descs[GT_CDN_MAX_DESCS];
};

static const char *dn_err(const struct gt_cudnn_replayer *r, cdn_status s, char *buf, size_t len)
{
	const char *name = r->dn.error_string ? r->dn.error_string(s) : NULL;
	snprintf(buf, len, "%s", name ? name : "cuDNN error");
	if (r->dn.last_error) {
		char detail[160] = "";
		r->dn.last_error(detail, sizeof(detail));
		/* the first line only: cuDNN's messages carry a trace after it */
		detail[strcspn(detail, "\r\n")] = 0;
		if (detail[0]) {
			size_t l = strlen(buf);
			snprintf(buf + l, len - l, " (%s)", detail);
		}
	}
	for (char *p = buf; *p; p++)
		if (*p == ',' || *p == '"')
			*p = ';';
	return buf;
}

static int load_cudnn(struct gt_cudnn_replayer *r)
{
	if (r->tried_load)
		return r->dn.h ? 0 : -1;
	r->tried_load = 1;
	char why[160];
	void *h = gt_libperf_open_lib("libcudnn.so.9", "GPUTAP_CUDNN_LIB", why, sizeof(why));
	if (!h) {
		snprintf(r->load_err, sizeof(r->load_err), "skipped: cuDNN 9 (libcudnn.so.9) not found (%.100s); set GPUTAP_CUDNN_LIB",
			 why);
		return -1;
	}
	struct cudnn_api *d = &r->dn;
	int miss = 0;
#define L(field, name)                                        \
	do {                                                  \
		*(void **)&d->field = dlsym(h, name);         \
		if (!d->field)                                \
			miss = 1;                             \
	} while (0)
	L(get_version, "cudnnGetVersion");
	L(error_string, "cudnnGetErrorString");
	L(create, "cudnnCreate");
	L(destroy, "cudnnDestroy");
	L(set_stream, "cudnnSetStream");
	L(create_desc, "cudnnBackendCreateDescriptor");
	L(destroy_desc, "cudnnBackendDestroyDescriptor");
	L(finalize, "cudnnBackendFinalize");
	L(set_attr, "cudnnBackendSetAttribute");
	L(get_attr, "cudnnBackendGetAttribute");
	L(execute, "cudnnBackendExecute");
#undef L
	*(void **)&d->last_error = dlsym(h, "cudnnGetLastErrorString");
	if (miss) {
		snprintf(r->load_err, sizeof(r->load_err),
			 "skipped: this cuDNN has no backend API (cudnnBackend* entry points; cuDNN 8 or later needed)");
		dlclose(h);
		memset(d, 0, sizeof(*d));
		return -1;
	}
	size_t v = d->get_version();
	if (v < 90000) {
		snprintf(r->load_err, sizeof(r->load_err), "skipped: cuDNN %zu.%zu is older than 9 (libcudnn.so.9 needed)",
			 v / 1000, v / 100 % 10);
		dlclose(h);
		memset(d, 0, sizeof(*d));
		return -1;
	}
	snprintf(r->version, sizeof(r->version), "cuDNN %zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
	char e[200];
	cdn_status s = d->create(&r->handle);
	if (s == 0)
		s = d->set_stream(r->handle, r->st);
	if (s != 0) {
		d->h = h;
		snprintf(r->load_err, sizeof(r->load_err), "error: cudnnCreate failed: %.150s", dn_err(r, s, e, sizeof(e)));
		d->h = NULL;
		return -1;
	}
	d->h = h;
	return 0;
}

const char *gt_cudnn_replayer_version(const struct gt_cudnn_replayer *r)
{
	return r ? r->version : "";
}

const char *gt_cudnn_replayer_load_error(const struct gt_cudnn_replayer *r)
{
	return r ? r->load_err : "";
}

struct gt_cudnn_replayer *gt_cudnn_replayer_new(const struct gt_cu_api *cu, cu_stream st,
						const struct gt_libperf_opts *o)
{
	struct gt_cudnn_replayer *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cu = cu;
	r->st = st;
	r->iters = o->iters > 0 ? o->iters : 1;
	r->warmup = o->warmup < 0 ? 0 : o->warmup;
	r->max_algos = o->max_algos > 0 ? o->max_algos : 16;
	r->ev = calloc((size_t)r->iters * 2, sizeof(*r->ev));
	r->ms = calloc((size_t)r->iters, sizeof(*r->ms));
	if (!r->ev || !r->ms) {
		gt_cudnn_replayer_free(r);
		return NULL;
	}
	for (int i = 0; i < r->iters * 2; i++)
		if (cu->event_create(&r->ev[i], 0) != 0) {
			r->ev[i] = NULL;
			snprintf(r->load_err, sizeof(r->load_err), "error: cannot create CUDA events");
			r->tried_load = 1;
			break;
		}
	return r;
}

void gt_cudnn_replayer_free(struct gt_cudnn_replayer *r)
{
	if (!r)
		return;
	if (r->ev) {
		for (int i = 0; i < r->iters * 2; i++)
			if (r->ev[i])
				r->cu->event_destroy(r->ev[i]);
		free(r->ev);
	}
	free(r->ms);
	if (r->ws)
		r->cu->mem_free(r->ws);
	if (r->dn.h && r->handle)
		r->dn.destroy(r->handle);
	/* libcudnn stays loaded: it registers exit handlers of its own */
	free(r);
}

/* ---- walking the descriptor program ---- */

/* Create, set and finalize descriptors [from, to) of the program.  0, or the
 * failing index with `why`. */
static int prog_make(struct gt_cudnn_replayer *r, int from, int to, char *why, size_t whylen)
{
	const struct gt_cdn_prog *p = &r->prog;
	char e[200];
	for (int i = from; i < to; i++) {
		const struct gt_cdn_desc *d = &p->d[i];
		cdn_status s = r->dn.create_desc(d->type, &r->descs[i]);
		if (s != 0) {
			r->descs[i] = NULL;
			snprintf(why, whylen, "cannot create the %s: %s", d->what, dn_err(r, s, e, sizeof(e)));
			return -1;
		}
		for (int j = 0; j < d->nattr; j++) {
			const struct gt_cdn_attr *a = &d->a[j];
			int64_t i64[GT_CDN_MAX_VALS];
			int32_t i32[GT_CDN_MAX_VALS];
			cdn_desc ds[GT_CDN_MAX_VALS];
			float f;
			double dd;
			const void *val;
			switch (a->type) {
			case GT_CDN_TYPE_INT64:
				for (int k = 0; k < a->n; k++)
					i64[k] = a->v[k];
				val = i64;
				break;
			case GT_CDN_TYPE_BACKEND_DESCRIPTOR:
				for (int k = 0; k < a->n; k++)
					ds[k] = r->descs[a->v[k]];
				val = ds;
				break;
			case GT_CDN_TYPE_FLOAT:
				f = (float)a->d;
				val = &f;
				break;
			case GT_CDN_TYPE_DOUBLE:
				dd = a->d;
				val = &dd;
				break;
			case GT_CDN_TYPE_HANDLE:
				val = &r->handle;
				break;
			default: /* enums: DATA_TYPE, CONVOLUTION_MODE, KNOB_TYPE, HEUR_MODE */
				for (int k = 0; k < a->n; k++)
					i32[k] = (int32_t)a->v[k];
				val = i32;
				break;
			}
			s = r->dn.set_attr(r->descs[i], a->name, a->type, a->n, val);
			/* the graph's handle attribute is deprecated in later cuDNN 9 releases: without it
			 * the graph still finalizes there */
			if (s != 0 && a->type == GT_CDN_TYPE_HANDLE)
				s = 0;
			if (s != 0) {
				snprintf(why, whylen, "cuDNN rejected attribute %d of the %s: %s", a->name, d->what,
					 dn_err(r, s, e, sizeof(e)));
				return -1;
			}
		}
		s = r->dn.finalize(r->descs[i]);
		if (s != 0) {
			snprintf(why, whylen, "cuDNN cannot finalize the %s: %s", d->what, dn_err(r, s, e, sizeof(e)));
			return -1;
		}
	}
	return 0;
}

static void prog_free(struct gt_cudnn_replayer *r)
{
	/* the latest first: configurations before engines before graphs */
	for (int i = r->prog.n - 1; i >= 0; i--)
		if (r->descs[i]) {
			r->dn.destroy_desc(r->descs[i]);
			r->descs[i] = NULL;
		}
}

/* One engine configuration's identity: global index, knobs, numerical notes. */
struct cand {
	cdn_desc cfg;
	int64_t engine;
	int nknobs;
	struct gt_cudnn_knob knob[GT_CDN_MAX_KNOBS];
	unsigned notes;
	char label[128];
};

static int describe_cfg(struct gt_cudnn_replayer *r, cdn_desc cfg, struct cand *c)
{
	cdn_desc eng = NULL, kd[GT_CDN_MAX_KNOBS] = {0};
	int64_t n = 0;
	int rc = -1;
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->engine = -1;
	if (r->dn.create_desc(GT_CDN_ENGINE_DESCRIPTOR, &eng) != 0)
		return -1;
	if (r->dn.get_attr(cfg, GT_CDN_ATTR_ENGINECFG_ENGINE, GT_CDN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &eng) != 0 ||
	    r->dn.get_attr(eng, GT_CDN_ATTR_ENGINE_GLOBAL_INDEX, GT_CDN_TYPE_INT64, 1, &n, &c->engine) != 0)
		goto out;
	int32_t notes[16];
	if (r->dn.get_attr(eng, GT_CDN_ATTR_ENGINE_NUMERICAL_NOTE, GT_CDN_TYPE_NUMERICAL_NOTE, 16, &n, notes) == 0)
		for (int64_t i = 0; i < n && i < 16; i++)
			if (notes[i] >= 0 && notes[i] < 32)
				c->notes |= 1u << notes[i];
	int nk = 0;
	for (; nk < GT_CDN_MAX_KNOBS; nk++)
		if (r->dn.create_desc(GT_CDN_KNOB_CHOICE_DESCRIPTOR, &kd[nk]) != 0)
			break;
	n = 0;
	if (nk && r->dn.get_attr(cfg, GT_CDN_ATTR_ENGINECFG_KNOB_CHOICES, GT_CDN_TYPE_BACKEND_DESCRIPTOR, nk, &n, kd) == 0)
		for (int64_t i = 0; i < n && i < nk; i++) {
			int32_t t = -1;
			int64_t v = 0, m = 0;
			if (r->dn.get_attr(kd[i], GT_CDN_ATTR_KNOB_CHOICE_KNOB_TYPE, GT_CDN_TYPE_KNOB_TYPE, 1, &m, &t) == 0 &&
			    r->dn.get_attr(kd[i], GT_CDN_ATTR_KNOB_CHOICE_KNOB_VALUE, GT_CDN_TYPE_INT64, 1, &m, &v) == 0)
				c->knob[c->nknobs++] = (struct gt_cudnn_knob){t, v};
		}
	for (int i = 0; i < nk; i++)
		r->dn.destroy_desc(kd[i]);
	gt_cudnn_engine_label(c->engine, c->knob, c->nknobs, c->label, sizeof(c->label));
	rc = 0;
out:
	r->dn.destroy_desc(eng);
	return rc;
}

/* Numerical notes of a finalized engine descriptor. */
static unsigned engine_notes(struct gt_cudnn_replayer *r, cdn_desc eng)
{
	int32_t notes[16];
	int64_t n = 0;
	unsigned m = 0;
	if (r->dn.get_attr(eng, GT_CDN_ATTR_ENGINE_NUMERICAL_NOTE, GT_CDN_TYPE_NUMERICAL_NOTE, 16, &n, notes) == 0)
		for (int64_t i = 0; i < n && i < 16; i++)
			if (notes[i] >= 0 && notes[i] < 32)
				m |= 1u << notes[i];
	return m;
}

struct exec_call {
	struct gt_cudnn_replayer *r;
	cdn_desc plan, pack;
};

static int run_exec(void *arg)
{
	const struct exec_call *x = arg;
	return x->r->dn.execute(x->r->handle, x->plan, x->pack) != 0;
}

/* Plan, variant pack and timing of one engine configuration: median us, or
 * -1 with `why` (not supported here, too much workspace, failed). */
static double time_cfg(struct gt_cudnn_replayer *r, cdn_desc cfg, const cu_ptr bufs[3], char *why, size_t whylen)
{
	cdn_desc plan = NULL, pack = NULL;
	double us = -1;
	char e[200];
	cdn_status s;
	if ((s = r->dn.create_desc(GT_CDN_EXECUTION_PLAN_DESCRIPTOR, &plan)) != 0) {
		snprintf(why, whylen, "cannot create an execution plan: %s", dn_err(r, s, e, sizeof(e)));
		return -1;
	}
	if ((s = r->dn.set_attr(plan, GT_CDN_ATTR_EXECUTION_PLAN_HANDLE, GT_CDN_TYPE_HANDLE, 1, &r->handle)) != 0 ||
	    (s = r->dn.set_attr(plan, GT_CDN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, GT_CDN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg)) !=
		    0 ||
	    (s = r->dn.finalize(plan)) != 0) {
		snprintf(why, whylen, "no execution plan: %s", dn_err(r, s, e, sizeof(e)));
		goto out;
	}
	int64_t wsb = 0, n = 0;
	if ((s = r->dn.get_attr(plan, GT_CDN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, GT_CDN_TYPE_INT64, 1, &n, &wsb)) != 0) {
		snprintf(why, whylen, "no workspace size: %s", dn_err(r, s, e, sizeof(e)));
		goto out;
	}
	if (wsb < 0 || (uint64_t)wsb > MAX_WORKSPACE) {
		snprintf(why, whylen, "needs %lld MiB of workspace (at most %llu MiB are given)", (long long)(wsb / (1 << 20)),
			 MAX_WORKSPACE >> 20);
		goto out;
	}
	if ((uint64_t)wsb > r->ws_bytes) {
		if (r->ws)
			r->cu->mem_free(r->ws);
		r->ws = 0;
		r->ws_bytes = 0;
		if (r->cu->mem_alloc(&r->ws, (size_t)wsb) != 0) {
			r->ws = 0;
			snprintf(why, whylen, "cannot allocate %lld MiB of workspace", (long long)(wsb / (1 << 20)));
			goto out;
		}
		r->ws_bytes = (uint64_t)wsb;
	}
	int64_t uids[3] = {r->prog.uid[0], r->prog.uid[1], r->prog.uid[2]};
	void *ptrs[3] = {(void *)bufs[0], (void *)bufs[1], (void *)bufs[2]};
	void *ws = wsb > 0 ? (void *)r->ws : NULL;
	if ((s = r->dn.create_desc(GT_CDN_VARIANT_PACK_DESCRIPTOR, &pack)) != 0 ||
	    (s = r->dn.set_attr(pack, GT_CDN_ATTR_VARIANT_PACK_UNIQUE_IDS, GT_CDN_TYPE_INT64, 3, uids)) != 0 ||
	    (s = r->dn.set_attr(pack, GT_CDN_ATTR_VARIANT_PACK_DATA_POINTERS, GT_CDN_TYPE_VOID_PTR, 3, ptrs)) != 0 ||
	    (s = r->dn.set_attr(pack, GT_CDN_ATTR_VARIANT_PACK_WORKSPACE, GT_CDN_TYPE_VOID_PTR, 1, &ws)) != 0 ||
	    (s = r->dn.finalize(pack)) != 0) {
		snprintf(why, whylen, "variant pack rejected: %s", dn_err(r, s, e, sizeof(e)));
		goto out;
	}
	struct exec_call x = {r, plan, pack};
	us = gt_libperf_time(r->cu, run_exec, &x, r->st, r->ev, r->ms, r->iters, r->warmup);
	if (us < 0)
		snprintf(why, whylen, "execution failed");
out:
	if (pack)
		r->dn.destroy_desc(pack);
	if (plan)
		r->dn.destroy_desc(plan);
	return us;
}

/* Engine configurations the heuristics offer in `mode`: up to `max` new
 * descriptors appended to cfgs (the caller destroys them). */
static int heuristic_cfgs(struct gt_cudnn_replayer *r, int mode, cdn_desc *cfgs, int max)
{
	cdn_desc heur = NULL;
	int32_t m = mode;
	cdn_desc graph = r->descs[r->prog.graph];
	int64_t n = 0;
	int got = 0;
	if (max <= 0 || r->dn.create_desc(GT_CDN_ENGINEHEUR_DESCRIPTOR, &heur) != 0)
		return 0;
	if (r->dn.set_attr(heur, GT_CDN_ATTR_ENGINEHEUR_OPERATION_GRAPH, GT_CDN_TYPE_BACKEND_DESCRIPTOR, 1, &graph) != 0 ||
	    r->dn.set_attr(heur, GT_CDN_ATTR_ENGINEHEUR_MODE, GT_CDN_TYPE_HEUR_MODE, 1, &m) != 0 ||
	    r->dn.finalize(heur) != 0 ||
	    r->dn.get_attr(heur, GT_CDN_ATTR_ENGINEHEUR_RESULTS, GT_CDN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL) != 0)
		goto out;
	if (n > max)
		n = max;
	for (; got < n; got++)
		if (r->dn.create_desc(GT_CDN_ENGINECFG_DESCRIPTOR, &cfgs[got]) != 0)
			break;
	int64_t filled = 0;
	if (got > 0 &&
	    r->dn.get_attr(heur, GT_CDN_ATTR_ENGINEHEUR_RESULTS, GT_CDN_TYPE_BACKEND_DESCRIPTOR, got, &filled, cfgs) != 0)
		filled = 0;
	for (int i = (int)filled; i < got; i++)
		r->dn.destroy_desc(cfgs[i]);
	got = (int)filled;
out:
	r->dn.destroy_desc(heur);
	return got;
}

static void append(char *s, size_t len, const char *a)
{
	size_t l = strlen(s);
	if (l < len)
		snprintf(s + l, len - l, "%s", a);
}

void gt_cudnn_replay(struct gt_cudnn_replayer *r, const char *config, struct gt_libperf_row *row)
{
	struct gt_cudnn_conv c;
	char why[200] = "";
	if (gt_cudnn_conv_from_config(config, &c, row->status, sizeof(row->status)) < 0)
		return;
	row->flops = gt_cudnn_conv_flops(&c);
	if (c.engine >= 0)
		gt_cudnn_engine_label(c.engine, c.knob, c.nknobs, row->recorded_algo, sizeof(row->recorded_algo));
	else if (c.legacy_algo[0])
		snprintf(row->recorded_algo, sizeof(row->recorded_algo), "%s", c.legacy_algo);
	if (gt_cudnn_prog_build(&c, &r->prog, row->status, sizeof(row->status)) < 0)
		return;
	if (load_cudnn(r) < 0) {
		snprintf(row->status, sizeof(row->status), "%s", r->load_err);
		return;
	}
	const struct gt_cu_api *cu = r->cu;
	cu_ptr bufs[3] = {0, 0, 0};
	cdn_desc cfgs[2 * MAX_CFGS];
	int ncfg = 0;
	memset(r->descs, 0, sizeof(r->descs));
	for (int i = 0; i < 3; i++) {
		if (cu->mem_alloc(&bufs[i], r->prog.bytes[i]) != 0) {
			bufs[i] = 0;
			snprintf(row->status, sizeof(row->status), "error: cannot allocate %llu bytes",
				 (unsigned long long)r->prog.bytes[i]);
			goto out;
		}
		cu->memset8(bufs[i], 0x3c, r->prog.bytes[i]);
	}
	/* the memsets run on the legacy stream, which our non-blocking stream does not wait for */
	cu->ctx_sync();
	if (prog_make(r, 0, r->prog.graph + 1, why, sizeof(why)) < 0) {
		snprintf(row->status, sizeof(row->status), "error: %s", why);
		goto out;
	}
	/* the recorded engine with its knobs */
	double best = -1;
	int have_rec = 0;
	unsigned allowed = c.notes_known ? c.allowed_notes : ~0u;
	char rec_note[200] = "";
	if (r->prog.engine_cfg >= 0) {
		if (prog_make(r, r->prog.graph + 1, r->prog.n, why, sizeof(why)) == 0) {
			allowed = engine_notes(r, r->descs[r->prog.graph + 1]);
			row->recorded_us = time_cfg(r, r->descs[r->prog.engine_cfg], bufs, why, sizeof(why));
		}
		if (row->recorded_us >= 0) {
			gt_libperf_note_timing(&row->timing, &row->ops, &row->event_us, 1);
			have_rec = 1;
			row->timed_as = "recorded_engine";
			row->tried++;
			best = row->recorded_us;
			snprintf(row->best_algo, sizeof(row->best_algo), "%s", row->recorded_algo);
		} else {
			snprintf(rec_note, sizeof(rec_note), "recorded engine not run here: %.150s", why);
		}
	}
	/* every engine configuration the heuristics offer, then the fallback list */
	int want = r->max_algos > MAX_CFGS ? MAX_CFGS : r->max_algos;
	ncfg = heuristic_cfgs(r, GT_CDN_HEUR_MODE_INSTANT, cfgs, want);
	ncfg += heuristic_cfgs(r, GT_CDN_HEUR_MODE_FALLBACK, cfgs + ncfg, want - ncfg);
	char seen[2 * MAX_CFGS][128];
	int nseen = 0, left_numerics = 0, not_run = 0, first = 1;
	char numerics_why[64] = "";
	for (int i = 0; i < ncfg; i++) {
		struct cand cd;
		if (describe_cfg(r, cfgs[i], &cd) < 0) {
			not_run++;
			continue;
		}
		int dup = have_rec && strcmp(cd.label, row->recorded_algo) == 0;
		for (int j = 0; j < nseen && !dup; j++)
			dup = strcmp(seen[j], cd.label) == 0;
		if (dup)
			continue;
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", cd.label);
		char nw[64];
		if (gt_cudnn_numerics_change(c.x.dtype, allowed, cd.notes, nw, sizeof(nw))) {
			left_numerics++;
			snprintf(numerics_why, sizeof(numerics_why), "%s", nw);
			continue;
		}
		double us = time_cfg(r, cfgs[i], bufs, why, sizeof(why));
		if (us < 0) {
			not_run++;
			continue;
		}
		row->tried++;
		gt_libperf_note_timing(&row->timing, &row->ops, &row->event_us, !have_rec && first);
		if (!have_rec && first) {
			/* no recorded engine to time: the heuristics' first choice is what cuDNN picks */
			row->recorded_us = us;
			row->timed_as = c.engine >= 0 ? "heuristic_first_not_built" : "heuristic_first";
		}
		first = 0;
		if (best < 0 || us < best) {
			best = us;
			snprintf(row->best_algo, sizeof(row->best_algo), "%s", cd.label);
		}
	}
	row->best_us = best;
	if (row->tried == 0) {
		snprintf(row->status, sizeof(row->status), "error: no engine ran (%d offered%s%.150s)", ncfg,
			 rec_note[0] ? "; " : "", rec_note);
		goto out;
	}
	snprintf(row->status, sizeof(row->status), "ok");
	char extra[256] = "";
	if (rec_note[0])
		append(extra, sizeof(extra), rec_note);
	if (left_numerics) {
		char t[120];
		snprintf(t, sizeof(t), "%s%d engines with %s not timed", extra[0] ? "; " : "", left_numerics,
			 numerics_why);
		append(extra, sizeof(extra), t);
	}
	if (not_run) {
		char t[64];
		snprintf(t, sizeof(t), "%s%d offered engines did not run", extra[0] ? "; " : "", not_run);
		append(extra, sizeof(extra), t);
	}
	if (extra[0])
		snprintf(row->status, sizeof(row->status), "ok (%.240s)", extra);
out:
	for (int i = 0; i < ncfg; i++)
		r->dn.destroy_desc(cfgs[i]);
	prog_free(r);
	cu->stream_sync(r->st);
	for (int i = 0; i < 3; i++)
		if (bufs[i])
			cu->mem_free(bufs[i]);
}
