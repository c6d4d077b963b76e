/*
 * Unit tests of how the analyzer puts GPU work into iterations: by the iteration whose range holds
 * the launch (correlation id -> API call), the same scenario written as a gputap trace, a Kineto
 * trace and an nsys SQLite export; the GPU-projected NVTX time; labels of a run directory with a
 * launcher process that did no GPU work.
 *
 * Scenario (µs after T0), one GPU.  The CPU enqueues 3 iterations within 9 µs (ranges
 * ProfilerStep#0..2 = [10,13), [13,16), [16,19]); the GPU runs iteration i from B_i = 1000 (i + 1):
 *   it 0: compute [B, B+200] s7, NCCL [B+100, B+400] s20
 *   it 1: compute [B, B+300] s7, NCCL [B+100, B+400] s20
 *   it 2: compute [B, B+400] s7, NCCL [B+100, B+400] s20, compute [B+500, B+550] s7
 * plus a memcpy launched before the first range (GPU [500, 520]), one launched after the last range
 * ended (GPU [4500, 4510]) and one kernel with no correlation id (GPU [3600, 3650]: it falls back to
 * the GPU-time window, the last one).  Cutting the GPU timeline at the CPU range starts would put
 * everything into iteration 2.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "analyze/an_internal.h"
#include "core/log.h"
#include "trace/trace_io.h"
#include "test.h"

#define T0 1000000ull
#define NSU(us) ((T0 + (us)) * 1000ull)
#define US(x) ((double)(x) * 1000.0)

enum { OP_COMP, OP_NCCL, OP_H2D, OP_D2H };
static const char *const opname[] = {"sm90_xmma_gemm_bf16",
				     "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)"};
static const struct op {
	int kind, stream;
	uint64_t launch_us; /* CPU start of the launching call */
	uint32_t corr;      /* 0: no correlation */
	uint64_t s_us, e_us;
} ops[] = {
    {OP_H2D, 7, 1, 3, 500, 520},
    {OP_COMP, 7, 11, 10, 1000, 1200},  {OP_NCCL, 20, 12, 11, 1100, 1400},
    {OP_COMP, 7, 14, 13, 2000, 2300},  {OP_NCCL, 20, 14, 14, 2100, 2400},
    {OP_COMP, 7, 17, 16, 3000, 3400},  {OP_NCCL, 20, 17, 17, 3100, 3400}, {OP_COMP, 7, 18, 18, 3500, 3550},
    {OP_COMP, 7, 0, 0, 3600, 3650},
    {OP_D2H, 7, 25, 40, 4500, 4510},
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))
static const uint64_t range_us[3][2] = {{10, 13}, {13, 16}, {16, 19}};
/* API calls that launch nothing (cudaGetDevice...): their ids are in the same sequence */
static const struct {
	uint64_t t_us;
	uint32_t corr;
} other_api[] = {{2, 4}, {10, 9}, {15, 15}, {30, 41}};

static void put_api(struct gt_trace_writer *w, uint32_t tid, uint64_t t_us, uint32_t corr)
{
	struct gt_rec_api a;
	memset(&a, 0, sizeof(a));
	a.h.type = GT_REC_API;
	a.h.size = GT_REC_PADDED(sizeof(a));
	a.h.tid = tid;
	a.name_id = 3;
	a.domain = GT_DOM_RUNTIME;
	a.start_ns = NSU(t_us);
	a.end_ns = NSU(t_us) + 500;
	a.corr_id = corr;
	gt_tw_write(w, &a, sizeof(a), 1);
}

/* One process folder `dir/proc` with the scenario on `device`; `gpu_work` 0: API calls only. */
static int write_proc(const char *dir, const char *proc, uint32_t device, int gpu_work)
{
	char d[4096], path[4200];
	snprintf(d, sizeof(d), "%s/%s", dir, proc);
	mkdir(dir, 0755);
	mkdir(d, 0755);
	snprintf(path, sizeof(path), "%s/trace.gtr", d);
	struct gt_trace_writer w;
	if (gt_tw_open(&w, path, proc, "host", 1, NSU(0), 0) < 0)
		return -1;
	gt_tw_string(&w, 1, opname[0], strlen(opname[0]));
	gt_tw_string(&w, 2, opname[1], strlen(opname[1]));
	gt_tw_string(&w, 3, "cudaLaunchKernel", 16);
	gt_tw_string(&w, 4, "ProfilerStep#0", 14);
	gt_tw_string(&w, 5, "ProfilerStep#1", 14);
	gt_tw_string(&w, 6, "ProfilerStep#2", 14);
	if (!gpu_work) {
		put_api(&w, 9, 1, 1);
		put_api(&w, 9, 2, 2);
		return gt_tw_close(&w, NSU(5000), 0, 0, 0);
	}
	/* API calls as the tap writes them: in time order; the backward-style launches of iteration 1
	 * come from another thread */
	for (size_t i = 0; i < NOPS; i++)
		if (ops[i].corr)
			put_api(&w, ops[i].launch_us >= 13 && ops[i].launch_us < 16 ? 101 : 100, ops[i].launch_us,
				ops[i].corr);
	for (size_t i = 0; i < sizeof(other_api) / sizeof(other_api[0]); i++)
		put_api(&w, 100, other_api[i].t_us, other_api[i].corr);
	for (int i = 0; i < 3; i++) { /* ranges are written when they end */
		struct gt_rec_range r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_RANGE;
		r.h.size = GT_REC_PADDED(sizeof(r));
		r.h.tid = 100;
		r.name_id = 4 + (uint32_t)i;
		r.kind = GT_RANGE_PUSHPOP;
		r.start_ns = NSU(range_us[i][0]);
		r.end_ns = NSU(range_us[i][1]);
		r.range_id = (uint64_t)i + 1;
		gt_tw_write(&w, &r, sizeof(r), 1);
	}
	/* GPU records arrive later, in completion order */
	for (size_t i = NOPS; i-- > 0;) {
		const struct op *o = &ops[i];
		if (o->kind == OP_H2D || o->kind == OP_D2H) {
			struct gt_rec_memcpy m;
			memset(&m, 0, sizeof(m));
			m.h.type = GT_REC_MEMCPY;
			m.h.size = GT_REC_PADDED(sizeof(m));
			m.copy_kind = o->kind == OP_H2D ? GT_COPY_HTOD : GT_COPY_DTOH;
			m.device = device;
			m.stream = (uint32_t)o->stream;
			m.start_ns = NSU(o->s_us);
			m.end_ns = NSU(o->e_us);
			m.corr_id = o->corr;
			gt_tw_write(&w, &m, sizeof(m), 1);
		} else {
			struct gt_rec_kernel k;
			memset(&k, 0, sizeof(k));
			k.h.type = GT_REC_KERNEL;
			k.h.size = GT_REC_PADDED(sizeof(k));
			k.name_id = o->kind == OP_COMP ? 1 : 2;
			k.device = device;
			k.stream = (uint32_t)o->stream;
			k.start_ns = NSU(o->s_us);
			k.end_ns = NSU(o->e_us);
			k.corr_id = o->corr;
			gt_tw_write(&w, &k, sizeof(k), 1);
		}
	}
	return gt_tw_close(&w, NSU(5000), 0, 0, 0);
}

static const char *write_kineto(const char *dir)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/worker.pt.trace.json", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return NULL;
	/* GPU events first, CPU events after: the order must not matter */
	fprintf(f, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
	for (size_t i = 0; i < NOPS; i++) {
		const struct op *o = &ops[i];
		const char *cat = o->kind == OP_COMP || o->kind == OP_NCCL ? "kernel" : "gpu_memcpy";
		const char *nm = o->kind == OP_H2D   ? "Memcpy HtoD (Pageable -> Device)"
				 : o->kind == OP_D2H ? "Memcpy DtoH (Device -> Pageable)"
						     : opname[o->kind];
		char corr[64] = "";
		if (o->corr)
			snprintf(corr, sizeof(corr), ", \"correlation\": %u", o->corr);
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, \"ts\": %llu, "
			"\"dur\": %llu, \"args\": {\"device\": 0, \"stream\": %d%s}},\n",
			cat, nm, o->stream, (unsigned long long)(T0 + o->s_us), (unsigned long long)(o->e_us - o->s_us),
			o->stream, corr);
		if (o->corr)
			fprintf(f,
				"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 7, "
				"\"tid\": 7, \"ts\": %llu, \"dur\": 0.5, \"args\": {\"correlation\": %u}},\n",
				(unsigned long long)(T0 + o->launch_us), o->corr);
	}
	for (size_t i = 0; i < sizeof(other_api) / sizeof(other_api[0]); i++)
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaGetDevice\", \"pid\": 7, \"tid\": 7, "
			"\"ts\": %llu, \"dur\": 0.5, \"args\": {\"correlation\": %u}},\n",
			(unsigned long long)(T0 + other_api[i].t_us), other_api[i].corr);
	for (int i = 0; i < 3; i++)
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 7, "
			"\"tid\": 7, \"ts\": %llu, \"dur\": %llu},\n",
			i, (unsigned long long)(T0 + range_us[i][0]), (unsigned long long)(range_us[i][1] - range_us[i][0]));
	fprintf(f, "{\"ph\": \"i\", \"name\": \"marker\", \"pid\": 7, \"tid\": 7, \"ts\": 1}\n]}\n");
	fclose(f);
	return path;
}

static const char *write_sqlite(const char *dir)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/train.sqlite", dir);
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return NULL;
	sqlite3_exec(db,
		     "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
		     "INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER);"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
		     "INTEGER, streamId INTEGER, correlationId INTEGER, copyKind INTEGER);"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
		     "globalTid INTEGER, correlationId INTEGER, nameId INTEGER);"
		     "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER, text TEXT);"
		     "BEGIN;",
		     NULL, NULL, NULL);
	char sql[1024];
	for (int i = 0; i < 2; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO StringIds VALUES (%d, '%s');", i + 1, opname[i]);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	/* globalTid: two threads of one process (pid in bits 24..) */
	const long long tid0 = (4242ll << 24) | 1, tid1 = (4242ll << 24) | 2;
	for (size_t i = 0; i < NOPS; i++) {
		const struct op *o = &ops[i];
		if (o->kind == OP_H2D || o->kind == OP_D2H)
			snprintf(sql, sizeof(sql), "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (%llu, %llu, 0, %d, %u, %d);",
				 (unsigned long long)NSU(o->s_us), (unsigned long long)NSU(o->e_us), o->stream, o->corr,
				 o->kind == OP_H2D ? 1 : 2);
		else
			snprintf(sql, sizeof(sql), "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%llu, %llu, 0, %d, %u, %d);",
				 (unsigned long long)NSU(o->s_us), (unsigned long long)NSU(o->e_us), o->stream, o->corr,
				 o->kind == OP_COMP ? 1 : 2);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		if (o->corr) {
			snprintf(sql, sizeof(sql), "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%llu, %llu, %lld, %u, 0);",
				 (unsigned long long)NSU(o->launch_us), (unsigned long long)NSU(o->launch_us) + 500,
				 i % 2 ? tid0 : tid1, o->corr);
			sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
	}
	for (size_t i = 0; i < sizeof(other_api) / sizeof(other_api[0]); i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%llu, %llu, %lld, %u, 0);",
			 (unsigned long long)NSU(other_api[i].t_us), (unsigned long long)NSU(other_api[i].t_us) + 500,
			 tid0, other_api[i].corr);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO NVTX_EVENTS VALUES (%llu, %llu, 59, 'ProfilerStep#%d');",
			 (unsigned long long)NSU(range_us[i][0]), (unsigned long long)NSU(range_us[i][1]), i);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	int rc = sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? path : NULL;
}

static struct gt_an_result *run1(const char *input, char *err, size_t errlen)
{
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	struct gt_an_result *r = NULL;
	if (gt_an_run(&input, 1, &o, &r, err, errlen) != 0)
		return NULL;
	return r;
}

/* The answers, by construction (see the table at the top). */
static void check_iters(const struct gt_an_result *r, const char *label)
{
	ASSERT(r->has_timeline);
	ASSERT_EQ_INT(r->ngpu, 1);
	ASSERT_EQ_STR(r->gpu[0].label, label);
	ASSERT_EQ_STR(r->iter_source, "profiler-step");
	ASSERT_EQ_INT(r->iters, 3);
	ASSERT_EQ_U64(r->nvtx_count, 3);
	const struct gt_an_gpu *g = &r->gpu[0];
	ASSERT_EQ_INT(g->niters, 3); /* the last range is an iteration too */
	ASSERT_EQ_U64(r->ops_by_launch, 7);
	ASSERT_EQ_U64(r->ops_outside, 2);
	ASSERT_EQ_U64(r->ops_by_time, 1);
	static const double comp[] = {200, 300, 400 + 50 + 50}, ov[] = {100, 200, 300}, busy[] = {400, 400, 500},
			    span[] = {400, 400, 650}, kern[] = {2, 2, 4};
	for (int i = 0; i < 3; i++) {
		const struct gt_an_window *w = &g->iters[i];
		ASSERT_EQ_U64(w->start_ns, NSU(range_us[i][0]));
		ASSERT_EQ_U64(w->first_ns, NSU(1000 * (i + 1)));
		ASSERT_NEAR(w->compute_ns, US(comp[i]), 1e-6);
		ASSERT_NEAR(w->comm_ns, US(300), 1e-6);
		ASSERT_NEAR(w->overlap_ns, US(ov[i]), 1e-6);
		ASSERT_NEAR(w->exposed_ns, US(300 - ov[i]), 1e-6);
		ASSERT_NEAR(w->busy_ns, US(busy[i]), 1e-6);
		ASSERT_NEAR(w->span_ns, US(span[i]), 1e-6);
		ASSERT_NEAR(w->idle_ns, US(span[i] - busy[i]), 1e-6);
		ASSERT_EQ_U64(w->kernels, (uint64_t)kern[i]);
		ASSERT_EQ_U64(w->memops, 0);
	}
	/* the whole input keeps the memcpys launched outside every iteration */
	ASSERT_EQ_U64(g->total.memops, 2);
	ASSERT_NEAR(g->total.memop_ns, US(30), 1e-6);
	ASSERT_NEAR(g->total.busy_ns, US(400 + 400 + 500 + 30), 1e-6);
	/* NVTX: GPU projections of the ranges, 400 + 400 + 650 µs (not the 3 µs CPU ranges) */
	ASSERT_EQ_STR(r->nvtx_time, "gpu-projection");
	ASSERT_NEAR(r->nvtx_total_ns, US(1450), 1e-6);
	/* the GPU Performance Analyzer's estimate: range time minus kernel time per iteration, non-negative now */
	ASSERT_NEAR(r->kernel_time_ns, US(200 + 300 + 400 + 50 + 50), 1e-6);
	double est = r->nvtx_total_ns / (double)r->nvtx_count - r->kernel_time_per_iter_ns;
	ASSERT(est > 0);
	ASSERT_NEAR(est, US(1450.0 / 3 - 1000.0 / 3), 1e-3);
}

TEST(analyze_iter_by_launch_gtr)
{
	char d[4200];
	snprintf(d, sizeof(d), "%s/run", gt_test_tmpdir());
	ASSERT_EQ_INT(write_proc(d, "rank0", 0, 1), 0);
	char err[1024] = "";
	struct gt_an_result *r = run1(d, err, sizeof(err));
	if (!r)
		GT_FAIL_AT("gt_an_run: %s", err);
	check_iters(r, "rank0/gpu0");
	/* text: the GPU Performance Analyzer's section says the NVTX times are projections, the estimate is not negative */
	char p[4300];
	snprintf(p, sizeof(p), "%s/out.txt", gt_test_tmpdir());
	FILE *f = fopen(p, "w");
	ASSERT(f != NULL);
	gt_an_print_text(r, f);
	fclose(f);
	char *t = gt_test_read_file(p, NULL);
	ASSERT(t != NULL);
	ASSERT_CONTAINS(t, "NVTX total range time: 1.450 (ms)");
	ASSERT_CONTAINS(t, "NVTX range times are GPU projections");
	ASSERT_CONTAINS(t, "Estimated non-hidden NCCL, mem ops and bubble time per range: 0.150 (ms)");
	ASSERT_CONTAINS(t, "by the iteration that launched them: 7 (");
	ASSERT_CONTAINS(t, "launched outside every iteration: 2, by GPU time: 1");
	ASSERT_EQ_U64(r->by_launch_event + r->by_launch_range, 7);
	ASSERT_CONTAINS(t, "2 rank0/gpu0");
	free(t);
	gt_an_free(r);
}

TEST(analyze_iter_by_launch_kineto)
{
	const char *p = write_kineto(gt_test_tmpdir());
	ASSERT(p != NULL);
	char err[1024] = "";
	struct gt_an_result *r = run1(p, err, sizeof(err));
	if (!r)
		GT_FAIL_AT("gt_an_run: %s", err);
	check_iters(r, "worker.pt.trace.json/gpu0"); /* no distributedInfo: the file name */
	gt_an_free(r);
}

TEST(analyze_iter_by_launch_sqlite)
{
	const char *p = write_sqlite(gt_test_tmpdir());
	ASSERT(p != NULL);
	char err[1024] = "";
	struct gt_an_result *r = run1(p, err, sizeof(err));
	if (!r)
		GT_FAIL_AT("gt_an_run: %s", err);
	check_iters(r, "train.sqlite/gpu0");
	gt_an_free(r);
}

TEST(analyze_iter_sqlite_of_two_processes_falls_back)
{
	const char *p = write_sqlite(gt_test_tmpdir());
	ASSERT(p != NULL);
	sqlite3 *db;
	ASSERT_EQ_INT(sqlite3_open(p, &db), SQLITE_OK);
	sqlite3_exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 2, (77 << 24) | 1, 5, 0);", NULL, NULL,
		     NULL);
	sqlite3_close(db);
	char err[1024] = "";
	struct gt_an_result *r = run1(p, err, sizeof(err));
	if (!r)
		GT_FAIL_AT("gt_an_run: %s", err);
	/* ids of two processes cannot be compared: every op by its GPU time, all in the last window */
	ASSERT_EQ_U64(r->ops_by_launch, 0);
	ASSERT_EQ_U64(r->ops_by_time, NOPS);
	ASSERT_EQ_STR(r->nvtx_time, "cpu-range");
	ASSERT_NEAR(r->gpu[0].iters[0].busy_ns, 0, 1e-9);
	ASSERT(r->nnotes >= 1);
	ASSERT_CONTAINS(r->notes[0], "2 processes");
	gt_an_free(r);
}

TEST(analyze_iter_rundir_labels_skip_launcher)
{
	char d[4200];
	snprintf(d, sizeof(d), "%s/run", gt_test_tmpdir());
	/* pid560 sorts before rank0: the launcher had the tap preloaded but did no GPU work */
	ASSERT_EQ_INT(write_proc(d, "pid560", 0, 0), 0);
	ASSERT_EQ_INT(write_proc(d, "rank0", 0, 1), 0);
	ASSERT_EQ_INT(write_proc(d, "rank1", 1, 1), 0);
	char ep[4300];
	snprintf(ep, sizeof(ep), "%s/stderr.txt", gt_test_tmpdir());
	ASSERT(freopen(ep, "w", stderr) != NULL);
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	o.progress = 1;
	const char *in = d;
	struct gt_an_result *r = NULL;
	char err[1024] = "";
	if (gt_an_run(&in, 1, &o, &r, err, sizeof(err)) != 0)
		GT_FAIL_AT("gt_an_run: %s", err);
	fflush(stderr);
	ASSERT_EQ_INT(r->ngpu, 2);
	ASSERT_EQ_INT(r->gpus, 2);
	ASSERT_EQ_STR(r->gpu[0].label, "rank0/gpu0");
	ASSERT_EQ_STR(r->gpu[1].label, "rank1/gpu1");
	ASSERT_EQ_INT(r->gpu[0].niters, 3);
	ASSERT_EQ_INT(r->gpu[1].niters, 3);
	ASSERT_NEAR(r->gpu[1].iters[2].span_ns, US(650), 1e-6);
	ASSERT_EQ_U64(r->nvtx_count, 6);
	ASSERT_NEAR(r->nvtx_total_ns, US(2 * 1450), 1e-6);
	ASSERT_EQ_INT(r->nnotes, 0); /* not a warning */
	char *e = gt_test_read_file(ep, NULL);
	ASSERT(e != NULL);
	ASSERT_CONTAINS(e, "1 input(s) with no GPU work, left out of the per-GPU tables: pid560");
	free(e);
	gt_an_free(r);
	/* without --progress (and at the default log level) nothing is said */
	ASSERT(freopen(ep, "w", stderr) != NULL);
	o.progress = 0;
	gt_log_level = GT_LOG_WARN;
	ASSERT_EQ_INT(gt_an_run(&in, 1, &o, &r, err, sizeof(err)), 0);
	fflush(stderr);
	e = gt_test_read_file(ep, NULL);
	ASSERT(e != NULL);
	ASSERT(strstr(e, "no GPU work") == NULL);
	free(e);
	gt_an_free(r);
}

TEST(analyze_iter_without_launches_by_time)
{
	/* the same trace without API records: every op placed by its GPU time, cut at the CPU range
	 * starts (10, 13, 16 µs): all GPU work falls into the last window */
	char d[4200];
	snprintf(d, sizeof(d), "%s/run", gt_test_tmpdir());
	ASSERT_EQ_INT(write_proc(d, "rank0", 0, 1), 0);
	/* rewrite without the API records: read and copy every other record */
	char src[4300], dst[4300];
	snprintf(src, sizeof(src), "%s/rank0/trace.gtr", d);
	snprintf(dst, sizeof(dst), "%s/noapi.gtr", gt_test_tmpdir());
	struct gt_trace_reader rd;
	ASSERT_EQ_INT(gt_tr_open(&rd, src), 0);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, dst, "rank0", "host", 1, NSU(0), 0), 0);
	const struct gt_rec_hdr *h;
	while (gt_tr_next(&rd, &h) > 0) {
		if (h->type == GT_REC_STRING) {
			const struct gt_rec_string *s = (const void *)h;
			gt_tw_string(&w, s->id, (const char *)(s + 1), s->len);
		} else if (h->type != GT_REC_API) {
			gt_tw_write(&w, h, h->size, 1);
		}
	}
	gt_tr_close(&rd);
	ASSERT_EQ_INT(gt_tw_close(&w, NSU(5000), 0, 0, 0), 0);
	char err[1024] = "";
	struct gt_an_result *r = run1(dst, err, sizeof(err));
	if (!r)
		GT_FAIL_AT("gt_an_run: %s", err);
	ASSERT_EQ_U64(r->ops_by_launch, 0);
	ASSERT_EQ_U64(r->ops_outside, 0);
	ASSERT_EQ_U64(r->ops_by_time, NOPS);
	ASSERT_EQ_STR(r->nvtx_time, "cpu-range");
	ASSERT_NEAR(r->nvtx_total_ns, US(9), 1e-6);
	const struct gt_an_gpu *g = &r->gpu[0];
	ASSERT_EQ_STR(g->label, "rank0/gpu0"); /* the trace's process name */
	ASSERT_EQ_INT(g->niters, 3);
	ASSERT_NEAR(g->iters[0].busy_ns, 0, 1e-9);
	ASSERT_NEAR(g->iters[1].busy_ns, 0, 1e-9);
	ASSERT_NEAR(g->iters[2].busy_ns, g->total.busy_ns, 1e-9);
	ASSERT_NEAR(g->iters[2].comm_ns, US(900), 1e-6);
	gt_an_free(r);
}

/* The sink (what gputap report draws the streams from): every op once, in start order, after one
 * call of begin with the GPUs' iteration windows and the extent of all ops; copies and NCCL
 * kernels told apart; the same for a gputap trace and a Kineto trace. */
struct sink_seen {
	int begins, ops_before_begin, out_of_order;
	size_t ngpu, niters;
	uint64_t first, last, prev, ops, copies, memsets, comm, s20;
};

static void sink_begin(void *arg, const struct gt_an_result *r, uint64_t first, uint64_t last)
{
	struct sink_seen *s = arg;
	s->begins++;
	s->ngpu = r->ngpu;
	s->niters = r->ngpu ? r->gpu[0].niters : 0;
	s->first = first;
	s->last = last;
}

static void sink_op(void *arg, size_t gpu, uint32_t stream, uint64_t start, uint64_t end, int kind, int comm)
{
	struct sink_seen *s = arg;
	(void)end;
	if (!s->begins)
		s->ops_before_begin++;
	if (start < s->prev || gpu != 0)
		s->out_of_order++;
	s->prev = start;
	s->ops++;
	s->copies += kind == 1;
	s->memsets += kind == 2;
	s->comm += comm != 0;
	s->s20 += stream == 20;
}

static void check_sink(const char *input)
{
	struct sink_seen seen;
	memset(&seen, 0, sizeof(seen));
	struct gt_an_sink sink = {&seen, sink_begin, sink_op};
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	o.sink = &sink;
	struct gt_an_result *r = NULL;
	char err[1024] = "";
	if (gt_an_run(&input, 1, &o, &r, err, sizeof(err)) != 0)
		GT_FAIL_AT("gt_an_run: %s", err);
	ASSERT_EQ_INT(seen.begins, 1);
	ASSERT_EQ_INT(seen.ops_before_begin, 0);
	ASSERT_EQ_INT(seen.out_of_order, 0);
	ASSERT_EQ_INT(seen.ngpu, 1);
	ASSERT_EQ_INT(seen.niters, 3);
	ASSERT_EQ_U64(seen.first, NSU(500));
	ASSERT_EQ_U64(seen.last, NSU(4510));
	ASSERT_EQ_U64(seen.ops, NOPS);
	ASSERT_EQ_U64(seen.copies, 2);
	ASSERT_EQ_U64(seen.memsets, 0);
	ASSERT_EQ_U64(seen.comm, 3);
	ASSERT_EQ_U64(seen.s20, 3);
	gt_an_free(r);
}

TEST(analyze_sink_gtr)
{
	char d[4200];
	snprintf(d, sizeof(d), "%s/run", gt_test_tmpdir());
	ASSERT_EQ_INT(write_proc(d, "rank0", 0, 1), 0);
	check_sink(d);
}

TEST(analyze_sink_kineto)
{
	const char *p = write_kineto(gt_test_tmpdir());
	ASSERT(p != NULL);
	check_sink(p);
}
