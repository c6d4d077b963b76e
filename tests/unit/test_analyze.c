/*
 * Unit tests of the analyzer: one scenario whose answers are known by construction, written as a
 * gputap trace, a Kineto JSON trace and an nsys SQLite export; all three must give the same
 * numbers.  Plus the pieces: CSV reader, JSON comment stripping, NCCL names, memop names, the map.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "analyze/an_internal.h"
#include "analyze/input.h"
#include "trace/trace_io.h"
#include "test.h"

#define T0_US 1000000ull /* 1 s after the epoch: nonzero start times */

enum { K_GEMM, K_FUSION, K_AR, K_AG, K_MEMCPY };
static const char *const knames[] = {"sm90_xmma_gemm_bf16", "loop_add_fusion",
				     "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)",
				     "ncclKernel_AllGather_RING_LL_Sum_float(ncclWorkElem)", NULL};
static const struct {
	int kind, device, stream;
	uint64_t s_us, e_us;
} evs[] = {
    {K_GEMM, 0, 7, 0, 300},     {K_AR, 0, 20, 200, 500},   {K_FUSION, 0, 7, 600, 700}, {K_MEMCPY, 0, 7, 700, 750},
    {K_GEMM, 0, 7, 950, 1100},  {K_AG, 0, 20, 1200, 1400}, {K_GEMM, 0, 8, 1300, 1350}, {K_GEMM, 1, 7, 0, 100},
    {K_AR, 1, 21, 0, 100},
};
#define NEV (sizeof(evs) / sizeof(evs[0]))
static const uint64_t steps_us[][2] = {{0, 990}, {1000, 1390}};

#define NS(us) ((T0_US + (us)) * 1000ull)

static const char *write_gtr(const char *dir)
{
	static char path[4096];
	char d[4096];
	snprintf(d, sizeof(d), "%s/run/rank0", dir);
	static char d0[4096];
	snprintf(d0, sizeof(d0), "%s/run", dir);
	mkdir(d0, 0755);
	mkdir(d, 0755);
	snprintf(path, sizeof(path), "%s/trace.gtr", d);
	struct gt_trace_writer w;
	if (gt_tw_open(&w, path, "rank0", "host", 1, NS(0), 0) < 0)
		return NULL;
	for (uint32_t i = 0; knames[i]; i++)
		gt_tw_string(&w, i + 1, knames[i], strlen(knames[i]));
	gt_tw_string(&w, 10, "step", 4);
	gt_tw_string(&w, 11, "other", 5);
	for (size_t i = 0; i < NEV; i++) {
		if (evs[i].kind == K_MEMCPY) {
			struct gt_rec_memcpy m;
			memset(&m, 0, sizeof(m));
			m.h.type = GT_REC_MEMCPY;
			m.h.size = GT_REC_PADDED(sizeof(m));
			m.copy_kind = GT_COPY_HTOD;
			m.device = (uint32_t)evs[i].device;
			m.stream = (uint32_t)evs[i].stream;
			m.start_ns = NS(evs[i].s_us);
			m.end_ns = NS(evs[i].e_us);
			gt_tw_write(&w, &m, sizeof(m), 1);
		} else {
			struct gt_rec_kernel k;
			memset(&k, 0, sizeof(k));
			k.h.type = GT_REC_KERNEL;
			k.h.size = GT_REC_PADDED(sizeof(k));
			k.name_id = (uint32_t)evs[i].kind + 1;
			k.device = (uint32_t)evs[i].device;
			k.stream = (uint32_t)evs[i].stream;
			k.start_ns = NS(evs[i].s_us);
			k.end_ns = NS(evs[i].e_us);
			gt_tw_write(&w, &k, sizeof(k), 1);
		}
	}
	for (int i = 0; i < 3; i++) {
		struct gt_rec_range r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_RANGE;
		r.h.size = GT_REC_PADDED(sizeof(r));
		r.name_id = i < 2 ? 10 : 11;
		r.kind = GT_RANGE_PUSHPOP;
		r.start_ns = NS(steps_us[i < 2 ? i : 0][0]);
		r.end_ns = NS(steps_us[i < 2 ? i : 0][1]);
		r.range_id = (uint64_t)i + 1;
		gt_tw_write(&w, &r, sizeof(r), 1);
	}
	if (gt_tw_close(&w, NS(2000), 0, 0, 0) < 0)
		return NULL;
	return d0;
}

static const char *write_kineto(const char *dir)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return NULL;
	fprintf(f, "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 0},\n\"traceEvents\": [\n");
	/* out of time order on purpose: the engine sorts */
	for (size_t j = NEV; j-- > 0;) {
		const char *cat = evs[j].kind == K_MEMCPY ? "gpu_memcpy" : "kernel";
		const char *nm = evs[j].kind == K_MEMCPY ? "Memcpy HtoD (Pageable -> Device)" : knames[evs[j].kind];
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %llu.000, "
			"\"dur\": %llu, \"args\": {\"device\": %d, \"stream\": %d, \"correlation\": %zu, \"grid\": [1, 1, 1]}},\n",
			cat, nm, evs[j].device, evs[j].stream, (unsigned long long)(T0_US + evs[j].s_us),
			(unsigned long long)(evs[j].e_us - evs[j].s_us), evs[j].device, evs[j].stream, j);
	}
	for (int i = 0; i < 2; i++)
		fprintf(f,
			"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 100, "
			"\"tid\": 100, \"ts\": %llu, \"dur\": %llu, \"args\": {\"External id\": 3}},\n",
			i + 4, (unsigned long long)(T0_US + steps_us[i][0]),
			(unsigned long long)(steps_us[i][1] - steps_us[i][0]));
	fprintf(f, "{\"ph\": \"i\", \"name\": \"marker\", \"pid\": 100, \"tid\": 100, \"ts\": 1}\n],\n"
		   "\"traceName\": \"x\"}\n");
	fclose(f);
	return path;
}

static const char *write_sqlite(const char *dir)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/report.sqlite", dir);
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return NULL;
	sqlite3_exec(db,
		     "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
		     "INTEGER, contextId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER, "
		     "shortName INTEGER);"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId "
		     "INTEGER, streamId INTEGER, copyKind INTEGER, bytes INTEGER);"
		     "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER, text TEXT, "
		     "textId INTEGER);"
		     "BEGIN;",
		     NULL, NULL, NULL);
	char sql[1024];
	for (int i = 0; knames[i]; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO StringIds VALUES (%d, '%s');", i + 1, knames[i]);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	sqlite3_exec(db, "INSERT INTO StringIds VALUES (50, 'step');", NULL, NULL, NULL);
	for (size_t i = 0; i < NEV; i++) {
		if (evs[i].kind == K_MEMCPY)
			snprintf(sql, sizeof(sql), "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (%llu, %llu, %d, %d, 1, 4096);",
				 (unsigned long long)NS(evs[i].s_us), (unsigned long long)NS(evs[i].e_us),
				 evs[i].device, evs[i].stream);
		else
			snprintf(sql, sizeof(sql),
				 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%llu, %llu, %d, 1, %d, %zu, %d, %d);",
				 (unsigned long long)NS(evs[i].s_us), (unsigned long long)NS(evs[i].e_us),
				 evs[i].device, evs[i].stream, i, evs[i].kind + 1, evs[i].kind + 1);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	/* one range by text, one by textId, one mark (no end), one of another name */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO NVTX_EVENTS VALUES (%llu, %llu, 59, 'step', NULL);"
		 "INSERT INTO NVTX_EVENTS VALUES (%llu, %llu, 59, NULL, 50);"
		 "INSERT INTO NVTX_EVENTS VALUES (%llu, NULL, 34, 'step', NULL);"
		 "INSERT INTO NVTX_EVENTS VALUES (%llu, %llu, 59, 'other', NULL);COMMIT;",
		 (unsigned long long)NS(steps_us[0][0]), (unsigned long long)NS(steps_us[0][1]),
		 (unsigned long long)NS(steps_us[1][0]), (unsigned long long)NS(steps_us[1][1]),
		 (unsigned long long)NS(5), (unsigned long long)NS(0), (unsigned long long)NS(2000));
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? path : NULL;
}

static struct gt_an_map *test_map(void)
{
	const char *k[] = {"gemm", "fusion"}, *c[] = {"gemm", "fusion"};
	struct gt_an_map *m = NULL;
	char err[256];
	gt_an_map_new(&m, k, c, 2, "test", err, sizeof(err));
	return m;
}

#define US(x) ((double)(x) * 1000.0)

/* The answers, by construction (µs): see the table above. */
static void check_scenario(const char *input, const char *tag)
{
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	struct gt_an_map *m = test_map();
	o.map = m;
	o.nvtx_tag = tag;
	struct gt_an_result *r = NULL;
	char err[1024] = "";
	int rc = gt_an_run(&input, 1, &o, &r, err, sizeof(err));
	if (rc != 0)
		GT_FAIL_AT("gt_an_run: %s", err);
	ASSERT(r->has_timeline);
	ASSERT_EQ_INT(r->ngpu, 2);
	ASSERT_EQ_INT(r->iters, 2);
	ASSERT_EQ_INT(r->gpus, 2);
	ASSERT_EQ_U64(r->nvtx_count, 2);
	ASSERT_NEAR(r->nvtx_total_ns, US(990 + 390), 1e-6);
	/* classes: others, gemm, fusion */
	ASSERT_EQ_INT(r->nclasses, 3);
	ASSERT_EQ_STR(r->classes[1].name, "gemm");
	ASSERT_NEAR(r->classes[1].time_ns, US(300 + 150 + 50 + 100), 1e-6);
	ASSERT_EQ_U64(r->classes[1].count, 4);
	ASSERT_EQ_U64(r->classes[1].count_per_iter, 1); /* 4 / (2 iters * 2 gpus) */
	ASSERT_NEAR(r->classes[2].time_ns, US(100), 1e-6);
	ASSERT_NEAR(r->nccl_time_ns, US(300 + 200 + 100), 1e-6);
	ASSERT_EQ_INT(r->nnccl, 2);
	ASSERT_EQ_STR(r->nccl[0].name, "AllReduce"); /* sorted by time: 400 before 200 */
	ASSERT_NEAR(r->nccl[0].time_ns, US(400), 1e-6);
	ASSERT_EQ_STR(r->nccl[1].name, "AllGather");
	ASSERT(r->has_mem);
	ASSERT_EQ_INT(r->nmemops, 1);
	ASSERT_EQ_STR(r->memops[0].name, "[CUDA memcpy H2D]");
	ASSERT_NEAR(r->memops[0].time_ns, US(50), 1e-6);
	/* GPU 0 over the whole input */
	const struct gt_an_gpu *g0 = r->gpu[0].device == 0 ? &r->gpu[0] : &r->gpu[1];
	const struct gt_an_gpu *g1 = r->gpu[0].device == 0 ? &r->gpu[1] : &r->gpu[0];
	ASSERT_NEAR(g0->total.compute_ns, US(600), 1e-6);
	ASSERT_NEAR(g0->total.comm_ns, US(500), 1e-6);
	ASSERT_NEAR(g0->total.overlap_ns, US(150), 1e-6);
	ASSERT_NEAR(g0->total.exposed_ns, US(350), 1e-6);
	ASSERT_NEAR(g0->total.busy_ns, US(1000), 1e-6);
	ASSERT_NEAR(g0->total.span_ns, US(1400), 1e-6);
	ASSERT_NEAR(g0->total.idle_ns, US(400), 1e-6);
	ASSERT_NEAR(g0->total.memop_ns, US(50), 1e-6);
	ASSERT_NEAR(g0->total.non_compute_ns, US(1400 - 600 - 400), 1e-6);
	ASSERT_EQ_U64(g0->total.kernels, 6);
	ASSERT_EQ_U64(g0->total.memops, 1);
	/* per iteration: the kernel [950, 1100] is cut at the boundary 1000 */
	ASSERT_EQ_INT(g0->niters, 2);
	ASSERT_NEAR(g0->iters[0].compute_ns, US(450), 1e-6);
	ASSERT_NEAR(g0->iters[0].comm_ns, US(300), 1e-6);
	ASSERT_NEAR(g0->iters[0].overlap_ns, US(100), 1e-6);
	ASSERT_NEAR(g0->iters[0].busy_ns, US(700), 1e-6);
	ASSERT_NEAR(g0->iters[0].span_ns, US(1000), 1e-6);
	ASSERT_NEAR(g0->iters[0].idle_ns, US(300), 1e-6);
	ASSERT_EQ_U64(g0->iters[0].kernels, 4);
	ASSERT_NEAR(g0->iters[1].compute_ns, US(150), 1e-6);
	ASSERT_NEAR(g0->iters[1].comm_ns, US(200), 1e-6);
	ASSERT_NEAR(g0->iters[1].overlap_ns, US(50), 1e-6);
	ASSERT_NEAR(g0->iters[1].exposed_ns, US(150), 1e-6);
	ASSERT_NEAR(g0->iters[1].busy_ns, US(300), 1e-6);
	ASSERT_NEAR(g0->iters[1].span_ns, US(400), 1e-6);
	ASSERT_EQ_U64(g0->iters[1].kernels, 2);
	/* GPU 1: communication entirely hidden */
	ASSERT_NEAR(g1->total.comm_ns, US(100), 1e-6);
	ASSERT_NEAR(g1->total.overlap_ns, US(100), 1e-6);
	ASSERT_NEAR(g1->total.exposed_ns, 0, 1e-6);
	ASSERT_NEAR(g1->total.idle_ns, 0, 1e-6);
	/* the sum over GPUs */
	ASSERT_NEAR(r->total.comm_ns, US(600), 1e-6);
	ASSERT_NEAR(r->total.overlap_ns, US(250), 1e-6);
	ASSERT_NEAR(r->total.busy_ns, US(1100), 1e-6);
	gt_an_free(r);
	gt_an_map_free(m);
}

TEST(analyze_gtr_scenario)
{
	const char *d = write_gtr(gt_test_tmpdir());
	ASSERT(d != NULL);
	check_scenario(d, "step");
}

TEST(analyze_kineto_scenario)
{
	const char *p = write_kineto(gt_test_tmpdir());
	ASSERT(p != NULL);
	check_scenario(p, NULL); /* ProfilerStep#N by default */
}

TEST(analyze_sqlite_scenario)
{
	const char *p = write_sqlite(gt_test_tmpdir());
	ASSERT(p != NULL);
	check_scenario(p, "step");
}

TEST(analyze_sqlite_work_is_bounded)
{
	/* the engine's budget (analyze.h) made small: a statement whose one step is long (counting the
	 * processes of 20000 runtime calls) is stopped and the read fails naming the file; with the
	 * budget back, the same file reads */
	static char p[4200];
	snprintf(p, sizeof(p), "%s/long.sqlite", gt_test_tmpdir());
	sqlite3 *db;
	ASSERT(sqlite3_open(p, &db) == SQLITE_OK);
	ASSERT(sqlite3_exec(db,
			    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
			    "INSERT INTO StringIds VALUES (1, 'gemm');"
			    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
			    "streamId INTEGER, correlationId INTEGER, demangledName INTEGER);"
			    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 7, 1, 1);"
			    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, correlationId INTEGER, "
			    "globalTid INTEGER);"
			    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 20000) "
			    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT x, x + 1, x, 16777216 FROM r;",
			    NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	const char *in = p;
	uint64_t s0 = gt_an_sqlite_steps, s1 = gt_an_sqlite_steps_per_byte;
	gt_an_sqlite_steps = 20000;
	gt_an_sqlite_steps_per_byte = 0;
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	struct gt_an_result *r = NULL;
	char err[1024] = "";
	int rc = gt_an_run(&in, 1, &o, &r, err, sizeof(err));
	gt_an_sqlite_steps = s0;
	gt_an_sqlite_steps_per_byte = s1;
	ASSERT(rc < 0 && !r);
	ASSERT_CONTAINS(err, "long.sqlite: stopped after 21000 SQLite instructions");
	ASSERT_EQ_INT(gt_an_run(&in, 1, &o, &r, err, sizeof(err)), 0);
	ASSERT_EQ_U64(r->kernel_count, 1);
	gt_an_free(r);
}

TEST(analyze_sort_spills_to_runs)
{
	/* many intervals through a tiny chunk: the external merge must give the in-memory answer */
	struct gt_tl tl;
	ASSERT_EQ_INT(gt_tl_init(&tl, 7), 0);
	long g = gt_tl_gpu(&tl, 0, 0);
	for (int i = 999; i >= 0; i--) { /* reversed: every run is out of order */
		uint64_t s = 1000 + (uint64_t)i * 10;
		ASSERT_EQ_INT(gt_tl_event(&tl, (uint32_t)g, s, s + (i % 3 == 0 ? 15 : 4), i % 2 ? GT_CAT_COMM : GT_CAT_COMPUTE), 0);
	}
	ASSERT(tl.nruns > 1);
	struct gt_an_result *r = calloc(1, sizeof(*r));
	char err[256];
	ASSERT_EQ_INT(gt_tl_finish(&tl, r, 0, err, sizeof(err)), 0);
	/* union length computed independently with a bitmap of ns */
	static unsigned char cover[20000];
	memset(cover, 0, sizeof(cover));
	for (int i = 0; i < 1000; i++) {
		uint64_t s = 1000 + (uint64_t)i * 10, e = s + (i % 3 == 0 ? 15 : 4);
		for (uint64_t t = s; t < e; t++)
			cover[t] = 1;
	}
	uint64_t want = 0;
	for (size_t t = 0; t < sizeof(cover); t++)
		want += cover[t];
	ASSERT_NEAR(r->gpu[0].total.busy_ns, (double)want, 1e-9);
	ASSERT_EQ_U64(r->gpu[0].total.kernels, 1000);
	gt_an_free(r);
	gt_tl_free(&tl);
}

TEST(analyze_iters_split_evenly_by_time)
{
	struct gt_tl tl;
	ASSERT_EQ_INT(gt_tl_init(&tl, 0), 0);
	long g = gt_tl_gpu(&tl, 0, 0);
	gt_tl_event(&tl, (uint32_t)g, 1000, 1100, GT_CAT_COMPUTE);
	gt_tl_event(&tl, (uint32_t)g, 1400, 1600, GT_CAT_COMM); /* crosses the middle, 1500 */
	gt_tl_event(&tl, (uint32_t)g, 1900, 2000, GT_CAT_COMPUTE);
	struct gt_an_result *r = calloc(1, sizeof(*r));
	char err[256];
	ASSERT_EQ_INT(gt_tl_finish(&tl, r, 2, err, sizeof(err)), 0);
	ASSERT_EQ_INT(r->gpu[0].niters, 2);
	ASSERT_EQ_U64(r->gpu[0].iters[0].start_ns, 1000);
	ASSERT_EQ_U64(r->gpu[0].iters[1].start_ns, 1500);
	ASSERT_NEAR(r->gpu[0].iters[0].comm_ns, 100, 1e-9);
	ASSERT_NEAR(r->gpu[0].iters[1].comm_ns, 100, 1e-9);
	ASSERT_NEAR(r->gpu[0].iters[0].busy_ns, 200, 1e-9);
	ASSERT_NEAR(r->gpu[0].iters[1].busy_ns, 200, 1e-9);
	gt_an_free(r);
	gt_tl_free(&tl);
}

TEST(analyze_nccl_collective_names)
{
	char b[64];
	gt_an_nccl_collective("ncclDevKernel_AllGather_RING_LL(ncclDevComm *, unsigned long, ncclWork *)", b, sizeof(b));
	ASSERT_EQ_STR(b, "AllGather");
	gt_an_nccl_collective("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", b, sizeof(b));
	ASSERT_EQ_STR(b, "AllReduce");
	gt_an_nccl_collective("ncclDevKernel_Generic", b, sizeof(b));
	ASSERT_EQ_STR(b, "Generic");
	gt_an_nccl_collective("ncclDevKernel_SendRecv(ncclDevComm *, unsigned long, ncclWork *)", b, sizeof(b));
	ASSERT_EQ_STR(b, "SendRecv");
	gt_an_nccl_collective("void ncclKernel_Broadcast_RING_LL<float>(x)", b, sizeof(b));
	ASSERT_EQ_STR(b, "Broadcast");
	gt_an_nccl_collective("nccl", b, sizeof(b));
	ASSERT_EQ_STR(b, "nccl");
	ASSERT(gt_an_is_nccl("NCCLkernel_x"));
	ASSERT(!gt_an_is_nccl("gemm"));
}

TEST(analyze_utf8_cut)
{
	const char *s = "ab\xc3\xb6\xe7\xbb\x84x"; /* a b, a 2-byte and a 3-byte character, x: 8 bytes */
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 100), 8);
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 8), 8);
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 3), 2); /* not half of the 2-byte one */
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 4), 4);
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 5), 4); /* not a third ... */
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 6), 4); /* ... nor two thirds of the 3-byte one */
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 7), 7);
	ASSERT_EQ_U64(gt_an_utf8_cut(s, 8, 0), 0);
}

TEST(analyze_memop_names)
{
	char b[128];
	gt_an_memop_name("[CUDA memcpy Host-to-Device]", b, sizeof(b));
	ASSERT_EQ_STR(b, "[CUDA memcpy H2D]");
	gt_an_memop_name("[CUDA memcpy HtoD]", b, sizeof(b));
	ASSERT_EQ_STR(b, "[CUDA memcpy H2D]");
	gt_an_memop_name("[CUDA memcpy Device-to-Device]", b, sizeof(b));
	ASSERT_EQ_STR(b, "[CUDA memcpy D2D]");
	gt_an_memop_name("[CUDA memcpy H2D]", b, sizeof(b));
	ASSERT_EQ_STR(b, "[CUDA memcpy H2D]");
	gt_an_memop_name("[CUDA memset]", b, sizeof(b));
	ASSERT_EQ_STR(b, "[CUDA memset]");
	gt_an_memop_name("Memcpy DtoH (Device -> Pinned)", b, sizeof(b));
	ASSERT_EQ_STR(b, "[CUDA memcpy D2H]");
	gt_an_memop_name("Memset (Device)", b, sizeof(b));
	ASSERT_EQ_STR(b, "[CUDA memset]");
	ASSERT_EQ_STR(gt_an_copykind_name(8), "[CUDA memcpy D2D]");
	ASSERT_EQ_STR(gt_an_copykind_name(99), "[CUDA memcpy Unknown]");
}

TEST(analyze_map_rules)
{
	struct gt_an_map *m = NULL;
	char err[512] = "";
	const char *k[] = {"GEMM", "Fusion", "fmha_"}, *c[] = {"Gemm", "fusion", "fmha"};
	ASSERT_EQ_INT(gt_an_map_new(&m, k, c, 3, "t", err, sizeof(err)), 0);
	const char *k1, *k2;
	ASSERT_EQ_INT(gt_an_map_classify(m, "xmma_gemm_f32", &k1, &k2), 1);
	ASSERT(k1 == NULL);
	ASSERT_EQ_STR(gt_an_map_class(m, 1), "gemm"); /* lower-cased, as the GPU Performance Analyzer */
	ASSERT_EQ_INT(gt_an_map_classify(m, "cudnn::fusion::fmha_reduce", &k1, &k2), 2);
	ASSERT_EQ_STR(k1, "fusion");
	ASSERT_EQ_STR(k2, "fmha_");
	ASSERT_EQ_INT(gt_an_map_classify(m, "elementwise", &k1, &k2), 0);
	gt_an_map_free(m);
	/* nested keys of different classes are an error; of the same class they are fine */
	const char *k3[] = {"gemm", "xmma_gemm"}, *c3[] = {"a", "b"}, *c4[] = {"a", "a"};
	ASSERT_EQ_INT(gt_an_map_new(&m, k3, c3, 2, "map.json", err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "map.json: kernel_to_class_map: keys \"gemm\" (class a) and \"xmma_gemm\" (class b)");
	ASSERT_EQ_INT(gt_an_map_new(&m, k3, c4, 2, "map.json", err, sizeof(err)), 0);
	gt_an_map_free(m);
}

TEST(analyze_strip_json)
{
	const char *in = "{\"a\": \"x // not a comment, \\\"q\\\"\", // c\n \"b\": [1, 2,], /* c */ \"c\": {\"d\": 1,},\n}";
	char *o = gt_an_strip_json(in, strlen(in));
	ASSERT(o != NULL);
	ASSERT_CONTAINS(o, "\"x // not a comment, \\\"q\\\"\"");
	ASSERT(!strstr(o, "// c"));
	ASSERT(!strstr(o, "2,]"));
	ASSERT(!strstr(o, "1,}"));
	free(o);
}

TEST(analyze_csv_reader)
{
	const char *d = gt_test_tmpdir();
	const char txt[] = "\xef\xbb\xbf"
			   "a,b,c\r\n\"x, y\",\"he said \"\"hi\"\"\",\"multi\nline\"\r\n\r\n1,2,3";
	const char *p = gt_test_write_file(d, "t.csv", txt, sizeof(txt) - 1);
	struct gt_csv c;
	char err[256];
	ASSERT_EQ_INT(gt_csv_open(&c, p, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), 1);
	ASSERT_EQ_INT(c.nfields, 3);
	ASSERT_EQ_STR(c.fields[0], "a");
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), 1);
	ASSERT_EQ_STR(c.fields[0], "x, y");
	ASSERT_EQ_STR(c.fields[1], "he said \"hi\"");
	ASSERT_EQ_STR(c.fields[2], "multi\nline");
	ASSERT_EQ_INT(c.line, 2);
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), 1);
	ASSERT_EQ_STR(c.fields[2], "3");
	ASSERT_EQ_INT(c.line, 5);
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), 0);
	gt_csv_close(&c);
	const char bad[] = "a,b\n\"open,x\n";
	p = gt_test_write_file(d, "bad.csv", bad, sizeof(bad) - 1);
	ASSERT_EQ_INT(gt_csv_open(&c, p, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), 1);
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "bad.csv:2: quoted field not closed");
	gt_csv_close(&c);
	const char badu[] = "a,b\nx\xff,y\n";
	p = gt_test_write_file(d, "u.csv", badu, sizeof(badu) - 1);
	ASSERT_EQ_INT(gt_csv_open(&c, p, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), 1);
	ASSERT_EQ_INT(gt_csv_next(&c, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "u.csv:2: invalid UTF-8");
	gt_csv_close(&c);
}

TEST(analyze_parse_fixed)
{
	uint64_t v;
	ASSERT_EQ_INT(gt_an_parse_fixed("1712345678901.234", 17, 3, &v), 0);
	ASSERT_EQ_U64(v, 1712345678901234ull);
	ASSERT_EQ_INT(gt_an_parse_fixed("12", 2, 3, &v), 0);
	ASSERT_EQ_U64(v, 12000);
	ASSERT_EQ_INT(gt_an_parse_fixed("1.5", 3, 3, &v), 0);
	ASSERT_EQ_U64(v, 1500);
	ASSERT_EQ_INT(gt_an_parse_fixed("x", 1, 3, &v), GT_AN_NAN);
	ASSERT_EQ_INT(gt_an_parse_fixed("99999999999999999999", 20, 3, &v), GT_AN_RANGE);
	/* negative and out-of-range values are told apart, never clamped */
	ASSERT_EQ_INT(gt_an_parse_fixed("-5", 2, 3, &v), GT_AN_NEGATIVE);
	ASSERT_EQ_INT(gt_an_parse_fixed("-1e5", 4, 3, &v), GT_AN_NEGATIVE);
	ASSERT_EQ_INT(gt_an_parse_fixed("1e308", 5, 3, &v), GT_AN_RANGE);
	ASSERT_EQ_INT(gt_an_parse_fixed("1e999", 5, 3, &v), GT_AN_RANGE);
	ASSERT_EQ_INT(gt_an_parse_fixed("1e1x", 4, 3, &v), GT_AN_NAN);
	ASSERT_EQ_INT(gt_an_parse_fixed("-0", 2, 3, &v), 0);
	ASSERT_EQ_U64(v, 0);
	ASSERT_EQ_INT(gt_an_parse_fixed("2.5e3", 5, 3, &v), 0);
	ASSERT_EQ_U64(v, 2500000);
}

TEST(analyze_parse_id_exact_or_refused)
{
	int64_t id;
	ASSERT_EQ_INT(gt_an_parse_id("7", 1, &id), 0);
	ASSERT_EQ_INT(id, 7);
	ASSERT_EQ_INT(gt_an_parse_id("3.0", 3, &id), 0);
	ASSERT_EQ_INT(id, 3);
	ASSERT_EQ_INT(gt_an_parse_id("2147483647", 10, &id), 0);
	ASSERT_EQ_INT(id, 2147483647);
	ASSERT_EQ_INT(gt_an_parse_id("2147483648", 10, &id), -1);
	ASSERT_EQ_INT(gt_an_parse_id("4294967296", 10, &id), -1);
	ASSERT_EQ_INT(gt_an_parse_id("-7", 2, &id), -1);
	ASSERT_EQ_INT(gt_an_parse_id("1.5", 3, &id), -1);
	ASSERT_EQ_INT(gt_an_parse_id("1e300", 5, &id), -1);
}

TEST(analyze_bad_inputs_name_file)
{
	const char *d = gt_test_tmpdir();
	struct gt_an_opts o;
	memset(&o, 0, sizeof(o));
	struct gt_an_result *r = NULL;
	char err[1024];
	const char trunc[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1";
	const char *p = gt_test_write_file(d, "t.json", trunc, sizeof(trunc) - 1);
	ASSERT(gt_an_run(&p, 1, &o, &r, err, sizeof(err)) < 0);
	ASSERT_CONTAINS(err, "t.json");
	const char nots[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": \"abc\", \"dur\": 1}]}";
	p = gt_test_write_file(d, "n.json", nots, sizeof(nots) - 1);
	ASSERT(gt_an_run(&p, 1, &o, &r, err, sizeof(err)) < 0);
	ASSERT_CONTAINS(err, "n.json: event 1");
	const char junk[] = "SQLite format 3\0garbage garbage garbage";
	p = gt_test_write_file(d, "x.sqlite", junk, sizeof(junk) - 1);
	ASSERT(gt_an_run(&p, 1, &o, &r, err, sizeof(err)) < 0);
	ASSERT_CONTAINS(err, "x.sqlite");
	p = gt_test_write_file(d, "empty.json", "", 0);
	ASSERT(gt_an_run(&p, 1, &o, &r, err, sizeof(err)) < 0);
	ASSERT_CONTAINS(err, "empty.json");
}
