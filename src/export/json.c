/*
 * trace.json: Chrome trace event format, as Perfetto and chrome://tracing
 * load it.  Timestamps are microseconds with three decimals (ns precision)
 * relative to the trace start; otherData.ts_zero_epoch_ns says which
 * epoch time ts 0 is.  One process track for the profiled process (a thread
 * track per OS thread: API calls, NVTX ranges, marks), one process per GPU
 * with a thread track per stream (kernels, copies, memsets), flow arrows
 * from the launching call to its first GPU operation, counters.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/writers.h"

struct gt_json {
	FILE *f;    /* the file of the event being written */
	int *first; /* its "no event written yet" */
	int first1;
	/* split by capture window (gt_json_begin_split): file k holds the events that start at or after
	 * lo[k] and before lo[k+1] (the first one also what starts before lo[0]) */
	size_t nout;
	FILE **outs;
	int *firsts;
	uint64_t *lo;
	uint64_t base;
	uint32_t pid;
	struct gt_map gpu_named; /* device+1 -> 1 once the GPU process is named */
	struct gt_vec gpus;      /* uint32_t devices seen */
	struct gt_model *m;      /* the model of the pass (kernel names) */
};

void gt_json_str(FILE *f, const char *s)
{
	const unsigned char *q = (const unsigned char *)s;
	while (*q >= 0x20 && *q < 0x7f && *q != '"' && *q != '\\')
		q++;
	if (!*q) { /* the common case: printable ASCII, nothing to escape */
		fputc('"', f);
		fputs(s, f);
		fputc('"', f);
		return;
	}
	char *c = gt_utf8_clean(s);
	const unsigned char *p = (const unsigned char *)(c ? c : "");
	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
	free(c);
}

/* The file of an event starting at t (one file: always it). */
static void route(struct gt_json *j, uint64_t t)
{
	if (j->nout < 2)
		return;
	size_t a = 0, b = j->nout;
	while (b - a > 1) {
		size_t mid = a + (b - a) / 2;
		if (j->lo[mid] <= t)
			a = mid;
		else
			b = mid;
	}
	j->f = j->outs[a];
	j->first = &j->firsts[a];
}

static void use_out(struct gt_json *j, size_t k)
{
	if (j->nout) {
		j->f = j->outs[k];
		j->first = &j->firsts[k];
	}
}

/* Perfetto keys tracks by integer pid: give each GPU of this process its own
 * pid, outside the range of OS pids (< 2^22). */
static uint32_t gpu_pid(const struct gt_json *j, uint32_t dev)
{
	return (1u << 30) | ((dev & 0xFFu) << 22) | (j->pid & 0x3FFFFFu);
}

static void ts(struct gt_json *j, const char *key, uint64_t t)
{
	if (!j->base)
		j->base = t;
	uint64_t a = t >= j->base ? t - j->base : j->base - t;
	fprintf(j->f, ",\"%s\":%s%" PRIu64 ".%03u", key, t >= j->base ? "" : "-", a / 1000, (unsigned)(a % 1000));
}

static void dur(struct gt_json *j, uint64_t s, uint64_t e)
{
	uint64_t d = e > s ? e - s : 0;
	fprintf(j->f, ",\"dur\":%" PRIu64 ".%03u", d / 1000, (unsigned)(d % 1000));
}

/* opens an event object: {"name":...,"ph":..,"pid":..,"tid":.. */
static void ev(struct gt_json *j, const char *name, const char *cat, const char *ph, uint32_t pid, uint32_t tid)
{
	fputs(*j->first ? "\n" : ",\n", j->f);
	*j->first = 0;
	fputs("{\"name\":", j->f);
	gt_json_str(j->f, name);
	if (cat)
		fprintf(j->f, ",\"cat\":\"%s\"", cat);
	fprintf(j->f, ",\"ph\":\"%s\",\"pid\":%u,\"tid\":%u", ph, pid, tid);
}

static int see_gpu(struct gt_json *j, uint32_t dev)
{
	int is_new = 0;
	uint64_t *v = gt_map_put(&j->gpu_named, (uint64_t)dev + 1, &is_new);
	if (!v)
		return -1;
	if (is_new) {
		uint32_t *d = gt_vec_push(&j->gpus);
		if (!d)
			return -1;
		*d = dev;
	}
	return 0;
}

static void gpu_args(struct gt_json *j, uint32_t dev, uint32_t stream, uint64_t corr)
{
	fprintf(j->f, ",\"args\":{\"device\":%u,\"stream\":%u,\"correlation\":%" PRIu64, dev, stream, corr);
}

static int j_api(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_api *a)
{
	struct gt_json *j = ctx;
	route(j, a->start_ns);
	FILE *f = j->f;
	ev(j, gt_tr_str(rd, a->name_id), "cuda_api", "X", j->pid, a->h.tid);
	ts(j, "ts", a->start_ns);
	dur(j, a->start_ns, a->end_ns);
	fprintf(f, ",\"args\":{\"result\":%d", a->result);
	if (a->corr_id)
		fprintf(f, ",\"correlation\":%" PRIu64, a->corr_id);
	if (a->bytes)
		fprintf(f, ",\"bytes\":%" PRIu64, a->bytes);
	if (a->copy_kind >= 0)
		fprintf(f, ",\"copy_kind\":%d", a->copy_kind);
	if (a->ptr)
		fprintf(f, ",\"ptr\":\"0x%" PRIx64 "\"", a->ptr);
	fputs("}}", f);
	return 0;
}

static int j_kernel(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_kernel *k)
{
	struct gt_json *j = ctx;
	route(j, k->start_ns);
	FILE *f = j->f;
	(void)rd;
	ev(j, gt_model_kernel_name(j->m, k->name_id), "kernel", "X", gpu_pid(j, k->device), k->stream);
	ts(j, "ts", k->start_ns);
	dur(j, k->start_ns, k->end_ns);
	gpu_args(j, k->device, k->stream, k->corr_id);
	fprintf(f,
		",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"registers_per_thread\":%u,"
		"\"static_shared_memory_bytes\":%u,\"dynamic_shared_memory_bytes\":%u",
		k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2], k->registers,
		k->static_smem, k->dynamic_smem);
	if (k->graph_id)
		fprintf(f, ",\"graph_id\":%u,\"graph_node_id\":%" PRIu64, k->graph_id, k->graph_node_id);
	fputs("}}", f);
	return see_gpu(j, k->device);
}

static int j_memcpy(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_memcpy *c)
{
	struct gt_json *j = ctx;
	route(j, c->start_ns);
	FILE *f = j->f;
	(void)rd;
	ev(j, gt_copy_op_name(c->copy_kind), "memcpy", "X", gpu_pid(j, c->device), c->stream);
	ts(j, "ts", c->start_ns);
	dur(j, c->start_ns, c->end_ns);
	gpu_args(j, c->device, c->stream, c->corr_id);
	fprintf(f, ",\"kind\":\"%s\",\"bytes\":%" PRIu64 ",\"async\":%s", gt_copy_dir_name(c->copy_kind), c->bytes,
		(c->flags & 1) ? "true" : "false");
	if (c->copy_kind == GT_COPY_PTOP)
		fprintf(f, ",\"dst_device\":%u", c->dst_device);
	uint64_t d = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
	if (d)
		fprintf(f, ",\"GB/s\":%.3f", (double)c->bytes / (double)d);
	fputs("}}", f);
	return see_gpu(j, c->device);
}

static int j_memset(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_memset *s)
{
	struct gt_json *j = ctx;
	route(j, s->start_ns);
	FILE *f = j->f;
	(void)rd;
	ev(j, "[CUDA memset]", "memset", "X", gpu_pid(j, s->device), s->stream);
	ts(j, "ts", s->start_ns);
	dur(j, s->start_ns, s->end_ns);
	gpu_args(j, s->device, s->stream, s->corr_id);
	fprintf(f, ",\"bytes\":%" PRIu64 ",\"value\":%u}}", s->bytes, s->value);
	return see_gpu(j, s->device);
}

static int j_range(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_range *r)
{
	struct gt_json *j = ctx;
	if (r->kind != GT_RANGE_MARK)
		return 0; /* ranges are written at the end, once open ones have an end */
	route(j, r->start_ns);
	FILE *f = j->f;
	ev(j, gt_tr_str(rd, r->name_id), "nvtx", "i", j->pid, r->h.tid);
	ts(j, "ts", r->start_ns);
	fputs(",\"s\":\"t\"", f);
	if (r->domain_id) {
		fputs(",\"args\":{\"domain\":", f);
		gt_json_str(f, gt_tr_str(rd, r->domain_id));
		fputc('}', f);
	}
	fputc('}', f);
	return 0;
}

static int j_note(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_note *n)
{
	struct gt_json *j = ctx;
	route(j, n->ts_ns);
	FILE *f = j->f;
	(void)rd;
	char name[160];
	snprintf(name, sizeof(name), "gputap: %s", gt_note_text(n->what));
	ev(j, name, "gputap", "i", j->pid, n->h.tid);
	ts(j, "ts", n->ts_ns);
	fprintf(f, ",\"s\":\"p\",\"args\":{\"note\":%u,\"detail\":%d,\"result\":%d}}", n->what, n->detail, n->result);
	return 0;
}

/* launch hold: how long each launch waited (an async span on its thread), and each release */
static int j_hold(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_hold *x)
{
	struct gt_json *j = ctx;
	route(j, x->start_ns); /* a held launch's begin and end go to the same file */
	FILE *f = j->f;
	if (x->kind == GT_HOLD_REC_LAUNCH) {
		for (int k = 0; k < 2; k++) {
			ev(j, "held", "hold", k ? "e" : "b", j->pid, x->h.tid);
			ts(j, "ts", k ? x->end_ns : x->start_ns);
			fprintf(f, ",\"id\":\"hold%" PRIu64 "-%" PRIu64 "\"", x->batch, x->corr_id ? x->corr_id : x->start_ns);
			if (!k)
				fprintf(f, ",\"args\":{\"correlation\":%" PRIu64 ",\"release\":%" PRIu64 ",\"result\":%d}",
					x->corr_id, x->batch, x->result);
			fputc('}', f);
		}
	} else if (x->kind == GT_HOLD_REC_RELEASE) {
		const char *api = x->api_id ? gt_tr_str(rd, x->api_id) : "";
		char name[160];
		snprintf(name, sizeof(name), "hold release (%s)", api[0] ? api : gt_tr_str(rd, x->reason_id));
		ev(j, name, "hold", "X", j->pid, x->h.tid);
		ts(j, "ts", x->start_ns);
		dur(j, x->start_ns, x->end_ns);
		fprintf(f, ",\"args\":{\"launches\":%u,\"release\":%" PRIu64 ",\"first_error\":%d}}", x->count,
			x->batch, x->result);
	}
	return 0;
}

static int j_counter(void *ctx, const struct gt_trace_reader *rd, const struct gt_rec_counter *c)
{
	struct gt_json *j = ctx;
	if (!isfinite(c->value))
		return 0; /* JSON has no NaN or infinity */
	route(j, c->ts_ns);
	FILE *f = j->f;
	uint32_t pid = c->device == UINT32_MAX ? j->pid : gpu_pid(j, c->device);
	ev(j, gt_tr_str(rd, c->name_id), "counter", "C", pid, 0);
	ts(j, "ts", c->ts_ns);
	fprintf(f, ",\"args\":{\"value\":%.17g}}", c->value);
	return c->device == UINT32_MAX ? 0 : see_gpu(j, c->device);
}

static const struct gt_trace_ops json_ops = {
	.api = j_api,
	.kernel = j_kernel,
	.memcpy = j_memcpy,
	.memset = j_memset,
	.range = j_range,
	.note = j_note,
	.hold = j_hold,
	.counter = j_counter,
};

struct gt_json *gt_json_begin(FILE *f, struct gt_model *m, int hook_slot)
{
	struct gt_json *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->f = f;
	j->first1 = 1;
	j->first = &j->first1;
	j->base = m->hdr.start_ns; /* 0: set by the first event */
	j->pid = m->hdr.pid;
	gt_vec_init(&j->gpus, sizeof(uint32_t));
	j->m = m;
	m->hooks[hook_slot] = (struct gt_trace_visitor){&json_ops, j};
	fputs("{\"traceEvents\":[", f);
	return j;
}

struct gt_json *gt_json_begin_split(FILE *const *outs, const uint64_t *lo, size_t n, struct gt_model *m,
				    int hook_slot)
{
	if (n == 0)
		return NULL;
	struct gt_json *j = gt_json_begin(outs[0], m, hook_slot);
	if (!j)
		return NULL;
	j->outs = malloc(n * sizeof(*j->outs));
	j->firsts = malloc(n * sizeof(*j->firsts));
	j->lo = malloc(n * sizeof(*j->lo));
	if (!j->outs || !j->firsts || !j->lo) {
		m->hooks[hook_slot] = (struct gt_trace_visitor){0};
		gt_json_abandon(j);
		return NULL;
	}
	j->nout = n;
	for (size_t k = 0; k < n; k++) {
		j->outs[k] = outs[k];
		j->firsts[k] = 1;
		j->lo[k] = lo[k];
		if (k)
			fputs("{\"traceEvents\":[", outs[k]);
	}
	use_out(j, 0);
	return j;
}

static void meta(struct gt_json *j, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	ev(j, what, NULL, "M", pid, tid);
	fputs(",\"args\":{\"name\":", j->f);
	gt_json_str(j->f, name);
	fputs("}}", j->f);
}

static void sort_index(struct gt_json *j, const char *what, uint32_t pid, uint32_t tid, long idx)
{
	ev(j, what, NULL, "M", pid, tid);
	fprintf(j->f, ",\"args\":{\"sort_index\":%ld}}", idx);
}

static void ranges(struct gt_json *j, const struct gt_model *m)
{
	for (size_t i = 0; i < m->ranges.n; i++) {
		const struct gt_m_range *r = &GT_VEC_AT(&m->ranges, struct gt_m_range, i);
		const char *dom = strchr(r->name, ':') == r->name ? NULL : r->name;
		route(j, r->start); /* both ends of a range in the file of its start */
		if (r->kind == GT_RANGE_STARTEND) {
			/* start/end ranges may overlap without nesting: async slices */
			for (int e = 0; e < 2; e++) {
				ev(j, r->text, "nvtx", e ? "e" : "b", j->pid, e && r->end_tid ? r->end_tid : r->tid);
				fprintf(j->f, ",\"id\":\"0x%" PRIx64 "\"", r->id);
				ts(j, "ts", e ? r->end : r->start);
				fputs("}", j->f);
			}
			continue;
		}
		ev(j, r->text, "nvtx", "X", j->pid, r->tid);
		ts(j, "ts", r->start);
		dur(j, r->start, r->end);
		fprintf(j->f, ",\"args\":{\"range_id\":%" PRIu64 ",\"level\":%u", r->id, r->level);
		if (r->parent_id)
			fprintf(j->f, ",\"parent_id\":%" PRIu64, r->parent_id);
		if (r->open)
			fputs(",\"unclosed\":true", j->f);
		if (dom) {
			size_t dl = (size_t)(strchr(r->name, ':') - r->name);
			char *d = strndup(r->name, dl);
			fputs(",\"domain\":", j->f);
			gt_json_str(j->f, d ? d : "");
			free(d);
		}
		fputs("}}", j->f);
	}
	/* capture windows: one slice each on a track of their own (thread id 0 is never an OS thread) */
	for (size_t i = 0; i < m->windows.n; i++) {
		const struct gt_m_range *r = &GT_VEC_AT(&m->windows, struct gt_m_range, i);
		route(j, r->start);
		ev(j, r->text, "capture", "X", j->pid, 0);
		ts(j, "ts", r->start);
		dur(j, r->start, r->end);
		fprintf(j->f, ",\"args\":{\"window\":%zu}}", i + 1);
	}
}

static int memory_counters(struct gt_json *j, const struct gt_model *m)
{
	struct gt_map cur = {0};
	for (size_t i = 0; i < m->mem->n; i++) {
		const struct gt_m_memev *e = &GT_VEC_AT(m->mem, struct gt_m_memev, i);
		uint64_t *c = gt_map_put(&cur, (uint64_t)e->device + 1, NULL);
		if (!c) {
			gt_map_free(&cur);
			return -1;
		}
		int64_t v; /* *c <= INT64_MAX: set here only; each change at most 2^53 (model.c) */
		if (__builtin_add_overflow((int64_t)*c, e->delta, &v))
			v = INT64_MAX;
		*c = v < 0 ? 0 : (uint64_t)v;
		int cpu = e->device == UINT32_MAX;
		route(j, e->ts);
		ev(j, "Device memory in use (bytes)", "memory", "C", cpu ? j->pid : gpu_pid(j, e->device), 0);
		ts(j, "ts", e->ts);
		fprintf(j->f, ",\"args\":{\"bytes\":%" PRIu64 "}}", *c);
		if (!cpu && see_gpu(j, e->device) < 0) {
			gt_map_free(&cur);
			return -1;
		}
	}
	gt_map_free(&cur);
	return 0;
}

static int flows(struct gt_json *j, const struct gt_model *m)
{
	unsigned char *done = calloc(m->gpuops.n ? m->gpuops.n : 1, 1);
	if (!done)
		return -1;
	for (size_t i = 0; i < m->apis.n; i++) {
		const struct gt_m_api *a = &GT_VEC_AT(&m->apis, struct gt_m_api, i);
		uint64_t *slot = gt_map_get(&m->corr, a->corr);
		if (!slot || done[*slot - 1])
			continue;
		done[*slot - 1] = 1;
		const struct gt_m_gpuops *g = &GT_VEC_AT(&m->gpuops, struct gt_m_gpuops, *slot - 1);
		route(j, a->start); /* the arrow's two ends in the file of the launch */
		ev(j, "launch", "flow", "s", j->pid, a->tid);
		fprintf(j->f, ",\"id\":%" PRIu64, a->corr);
		ts(j, "ts", a->start);
		fputs("}", j->f);
		ev(j, "launch", "flow", "f", gpu_pid(j, g->device), g->stream);
		fprintf(j->f, ",\"id\":%" PRIu64 ",\"bp\":\"e\"", a->corr);
		ts(j, "ts", g->first_start);
		fputs("}", j->f);
	}
	free(done);
	return 0;
}

void gt_json_abandon(struct gt_json *j)
{
	gt_map_free(&j->gpu_named);
	gt_vec_free(&j->gpus);
	free(j->outs);
	free(j->firsts);
	free(j->lo);
	free(j);
}

/* The track names and otherData of the file in use (each file of a split gets all of them). */
static int tail(struct gt_json *j, struct gt_model *m, size_t k)
{
	int rc = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s%s%s", m->hdr.proc[0] ? m->hdr.proc : "process",
		 m->hdr.host[0] ? " @ " : "", m->hdr.host);
	meta(j, "process_name", j->pid, 0, buf);
	sort_index(j, "process_sort_index", j->pid, 0, 0);
	for (size_t i = 0; i < m->tids.n; i++) {
		uint32_t tid = GT_VEC_AT(&m->tids, uint32_t, i);
		uint64_t *nm = gt_map_get(&m->thread_name, (uint64_t)tid + 1);
		if (nm && *nm && *(const char *)(uintptr_t)*nm)
			snprintf(buf, sizeof(buf), "%s (%u)", (const char *)(uintptr_t)*nm, tid);
		else
			snprintf(buf, sizeof(buf), "thread %u", tid);
		meta(j, "thread_name", j->pid, tid, buf);
	}
	for (size_t i = 0; i < m->streams.n; i++) {
		const struct gt_m_stream *s = &GT_VEC_AT(&m->streams, struct gt_m_stream, i);
		if (see_gpu(j, s->device) < 0)
			rc = -1;
		snprintf(buf, sizeof(buf), "GPU %u stream %u", s->device, s->stream);
		meta(j, "thread_name", gpu_pid(j, s->device), s->stream, buf);
		sort_index(j, "thread_sort_index", gpu_pid(j, s->device), s->stream, (long)s->stream);
	}
	for (size_t i = 0; i < j->gpus.n; i++) {
		uint32_t dev = GT_VEC_AT(&j->gpus, uint32_t, i);
		uint64_t *nm = gt_map_get(&m->device_name, (uint64_t)dev + 1);
		const char *dn = nm && *nm ? (const char *)(uintptr_t)*nm : "";
		snprintf(buf, sizeof(buf), "GPU %u%s%s (%s)", dev, dn[0] ? ": " : "", dn,
			 m->hdr.proc[0] ? m->hdr.proc : "process");
		meta(j, "process_name", gpu_pid(j, dev), 0, buf);
		sort_index(j, "process_sort_index", gpu_pid(j, dev), 0, 1 + (long)dev);
	}
	FILE *f = j->f;
	fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"gputap\"", f);
	fprintf(f, ",\"trace_format_version\":%u,\"proc\":", m->hdr.version);
	gt_json_str(f, m->hdr.proc);
	fputs(",\"host\":", f);
	gt_json_str(f, m->hdr.host);
	fprintf(f,
		",\"pid\":%u,\"ts_zero_epoch_ns\":%" PRIu64 ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"records\":%" PRIu64 ",\"lost_records\":%" PRIu64 ",\"cupti_dropped\":%" PRIu64
		",\"partial\":%s",
		m->hdr.pid, j->base, m->hdr.start_ns, m->hdr.end_ns, m->nrecords,
		gt_model_lost(m), gt_model_cupti_dropped(m),
		m->partial ? "true" : "false");
	if (j->nout) {
		fprintf(f, ",\"capture_window\":%zu,\"capture_windows\":%zu", k + 1, j->nout);
		for (size_t i = 0; i < m->windows.n; i++) {
			const struct gt_m_range *w = &GT_VEC_AT(&m->windows, struct gt_m_range, i);
			if (w->start != j->lo[k])
				continue;
			fputs(",\"capture_spec\":", f);
			gt_json_str(f, w->text);
			break;
		}
	}
	fputs("}}\n", f);
	return rc;
}

int gt_json_end(struct gt_json *j, struct gt_model *m)
{
	int rc = 0;
	ranges(j, m);
	if (memory_counters(j, m) < 0 || flows(j, m) < 0)
		rc = -1;
	for (size_t k = 0; k < (j->nout ? j->nout : 1); k++) {
		use_out(j, k);
		if (tail(j, m, k) < 0)
			rc = -1;
	}
	gt_json_abandon(j);
	return rc;
}
