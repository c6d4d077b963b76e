/*
 * bench/analyze/gen.c — generate large analyzer inputs, fast.
 *
 *   gen kineto OUT.json TARGET_MB [GPU]   a Kineto trace of about TARGET_MB MB for one rank
 *   gen sqlite OUT.sqlite N_KERNELS       an nsys SQLite export with N kernels on 2 GPUs
 *   gen gtr OUT.gtr N_KERNELS             a gputap trace (format version 1, as the tap wrote it
 *                                         before compression) of a launch-bound PyTorch loop
 *
 * The workload repeats a training-step pattern: compute kernels on stream 7 (and 8), NCCL
 * kernels on stream 20 that partly overlap them, a memcpy now and then, and gaps.  A fixed LCG
 * makes every run the same.  Times are whole µs.  No ProfilerStep ranges (so HTA keeps every
 * kernel; see docs/analyze.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "gputap/format.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static const char *const comp[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "loop_add_multiply_fusion_2", "input_add_reduce_fusion_5", "cudnn_generated_fmha_knob_26_64x64x128_1x4x1_kernel0_0",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int, int, int, bool const*, int, bool)",
    "triton_poi_fused_add_mul_0", "triton_red_fused_native_layer_norm_1", "wrapped_transpose_1"};
static const char *const comm[] = {"ncclKernel_AllGather_RING_LL_Sum_bf16(ncclDevComm *, unsigned long, ncclWork *)",
				    "ncclKernel_ReduceScatter_RING_LL_Sum_bf16(ncclDevComm *, unsigned long, ncclWork *)",
				    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm *, unsigned long, ncclWork *)"};
#define NCOMP (sizeof(comp) / sizeof(comp[0]))
#define NCOMM (sizeof(comm) / sizeof(comm[0]))

struct ev {
	int kind; /* 0 compute, 1 comm, 2 memcpy */
	int name, stream;
	uint64_t s, e; /* ns */
};

/* the next event of one GPU's stream of work; times in ns */
struct gen {
	uint64_t t_comp, t_comm;
	uint64_t n;
};

static struct ev next_ev(struct gen *g)
{
	struct ev v;
	g->n++;
	uint32_t r = rnd(100);
	if (r < 12) { /* NCCL on its own stream, starting near the compute front: partial overlap */
		v.kind = 1;
		v.name = (int)rnd(NCOMM);
		v.stream = 20;
		uint64_t s = g->t_comp > g->t_comm ? g->t_comp - rnd(20000) : g->t_comm + rnd(5000);
		if (s < g->t_comm)
			s = g->t_comm;
		v.s = s;
		v.e = s + 5000 + rnd(60000);
		g->t_comm = v.e;
	} else if (r < 14) {
		v.kind = 2;
		v.name = 0;
		v.stream = 7;
		v.s = g->t_comp + rnd(3000);
		v.e = v.s + 1000 + rnd(8000);
		g->t_comp = v.e;
	} else {
		v.kind = 0;
		v.name = (int)rnd(NCOMP);
		v.stream = r < 20 ? 8 : 7;
		v.s = g->t_comp + (rnd(10) == 0 ? 20000 + rnd(50000) : rnd(2000)); /* gaps now and then */
		v.e = v.s + 2000 + rnd(40000);
		g->t_comp = v.e - (v.stream == 8 ? rnd(1500) : 0);
	}
	/* whole µs: HTA rounds Kineto times down to µs, so finer times would only measure that */
	v.s -= v.s % 1000;
	v.e -= v.e % 1000;
	if (v.e <= v.s)
		v.e = v.s + 1000;
	return v;
}

static int gen_kineto(const char *out, double target_mb, int gpu)
{
	FILE *f = fopen(out, "w");
	if (!f)
		return 1;
	setvbuf(f, NULL, _IOFBF, 1 << 22);
	fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 1},\n"
		   "  \"traceEvents\": [\n",
		gpu);
	struct gen g = {1000000000ull, 1000000000ull, 0};
	uint64_t target = (uint64_t)(target_mb * 1024 * 1024);
	long pos = ftell(f);
	uint64_t written = (uint64_t)pos, corr = 1;
	int first = 1;
	while (written < target) {
		struct ev v = next_ev(&g);
		const char *cat = v.kind == 2 ? "gpu_memcpy" : "kernel";
		const char *nm = v.kind == 2 ? "Memcpy HtoD (Pageable -> Device)" : v.kind == 1 ? comm[v.name] : comp[v.name];
		int n = fprintf(f,
				"%s  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, "
				"\"ts\": %llu.%03llu, \"dur\": %llu.%03llu, \"args\": {\"External id\": %llu, \"device\": %d, "
				"\"stream\": %d, \"correlation\": %llu, \"registers per thread\": 128, \"grid\": [132, 1, 1], "
				"\"block\": [384, 1, 1]}}",
				first ? "" : ",\n", cat, nm, gpu, v.stream, (unsigned long long)(v.s / 1000),
				(unsigned long long)(v.s % 1000), (unsigned long long)((v.e - v.s) / 1000),
				(unsigned long long)((v.e - v.s) % 1000), (unsigned long long)corr, gpu, v.stream,
				(unsigned long long)corr);
		corr++;
		first = 0;
		written += (uint64_t)n;
	}
	fprintf(f, "\n  ],\n  \"traceName\": \"generated\"\n}\n");
	fclose(f);
	fprintf(stderr, "gen: %s: %llu GPU events\n", out, (unsigned long long)g.n);
	return 0;
}

static int gen_sqlite(const char *out, uint64_t nk)
{
	remove(out);
	sqlite3 *db;
	if (sqlite3_open(out, &db) != SQLITE_OK)
		return 1;
	sqlite3_exec(db,
		     "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		     "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER "
		     "NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
		     "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, gridX INTEGER, blockX INTEGER);"
		     "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER "
		     "NOT NULL, streamId INTEGER, copyKind INTEGER NOT NULL, bytes INTEGER);"
		     "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER);"
		     "BEGIN;",
		     NULL, NULL, NULL);
	sqlite3_stmt *si, *sk, *sm;
	sqlite3_prepare_v2(db, "INSERT INTO StringIds VALUES (?, ?)", -1, &si, NULL);
	for (size_t i = 0; i < NCOMP + NCOMM; i++) {
		sqlite3_bind_int(si, 1, (int)i + 1);
		sqlite3_bind_text(si, 2, i < NCOMP ? comp[i] : comm[i - NCOMP], -1, SQLITE_STATIC);
		sqlite3_step(si);
		sqlite3_reset(si);
	}
	sqlite3_finalize(si);
	sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,1,?,?,1,?,?,132,384)", -1, &sk, NULL);
	sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,1,4096)", -1, &sm, NULL);
	struct gen g[2] = {{1000000000ull, 1000000000ull, 0}, {1000000000ull, 1000000000ull, 0}};
	uint64_t k = 0, corr = 1, last_end = 0;
	while (k < nk) {
		int dev = (int)(corr & 1);
		struct ev v = next_ev(&g[dev]);
		if (v.e > last_end)
			last_end = v.e;
		if (v.kind == 2) {
			sqlite3_bind_int64(sm, 1, (sqlite3_int64)v.s);
			sqlite3_bind_int64(sm, 2, (sqlite3_int64)v.e);
			sqlite3_bind_int(sm, 3, dev);
			sqlite3_bind_int(sm, 4, v.stream);
			sqlite3_step(sm);
			sqlite3_reset(sm);
		} else {
			int id = v.kind == 1 ? (int)NCOMP + v.name + 1 : v.name + 1;
			sqlite3_bind_int64(sk, 1, (sqlite3_int64)v.s);
			sqlite3_bind_int64(sk, 2, (sqlite3_int64)v.e);
			sqlite3_bind_int(sk, 3, dev);
			sqlite3_bind_int(sk, 4, v.stream);
			sqlite3_bind_int64(sk, 5, (sqlite3_int64)corr);
			sqlite3_bind_int(sk, 6, id);
			sqlite3_bind_int(sk, 7, id);
			sqlite3_step(sk);
			sqlite3_reset(sk);
			k++;
		}
		corr++;
	}
	sqlite3_finalize(sk);
	sqlite3_finalize(sm);
	/* ten iterations, evenly over the run */
	char sql[256];
	uint64_t t0 = 1000000000ull, step = (last_end - t0) / 10;
	for (int i = 0; i < 10; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO NVTX_EVENTS VALUES (%llu, %llu, 59, 'train_step', NULL);",
			 (unsigned long long)(t0 + step * (uint64_t)i), (unsigned long long)(t0 + step * (uint64_t)(i + 1) - 1));
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL);
	sqlite3_close(db);
	fprintf(stderr, "gen: %s: %llu kernels\n", out, (unsigned long long)nk);
	return 0;
}

/* ---- a gputap trace of the launch-bound loop of bench/overhead (step.py launch) ----
 * 150 tiny elementwise kernels per step (mul, add, relu), one cuLaunchKernel per kernel, one
 * NVTX range per step; ns timestamps with the jitter of a real run (launch every 4-7 µs, a
 * kernel 1.8-2.5 µs, started 1.5-2.5 µs after its launch returned).  Records in the order the
 * tap writes them: a thread's chunk of API records (64 KB), then the kernels CUPTI delivered. */
static const char *const gtr_kern[] = {
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_",
    "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_16launch_clamp_scalarERNS_18TensorIteratorBaseEN3c106ScalarES6_NS0_6detail11ClampLimitsEENKUlvE_clEvENKUlvE6_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_"};

static void gtr_put(FILE *f, const void *rec, size_t size, uint64_t *nrec)
{
	fwrite(rec, 1, size, f);
	(*nrec)++;
}

static void gtr_string(FILE *f, uint32_t id, const char *s, uint64_t *nrec)
{
	unsigned char b[512] = {0};
	size_t len = strlen(s), size = GT_REC_PADDED(sizeof(struct gt_rec_string) + len);
	struct gt_rec_string *r = (struct gt_rec_string *)b;
	r->h.type = GT_REC_STRING;
	r->h.size = (uint16_t)size;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(b + sizeof(*r), s, len);
	gtr_put(f, b, size, nrec);
}

#define GTR_CHUNK 1024 /* API records in one 64 KB chunk of the tap */
static int gen_gtr(const char *out, uint64_t nk)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	setvbuf(f, NULL, _IOFBF, 1 << 22);
	struct gt_file_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GT_TRACE_MAGIC, 8);
	h.version = 1;
	h.header_size = sizeof(h);
	h.pid = 4242;
	h.start_ns = 1795529030000000000ull;
	snprintf(h.proc, sizeof(h.proc), "pid4242");
	snprintf(h.host, sizeof(h.host), "generated");
	fwrite(&h, 1, sizeof(h), f);
	uint64_t nrec = 0;
	gtr_string(f, 1, "cuLaunchKernel", &nrec);
	gtr_string(f, 2, "step", &nrec);
	for (uint32_t i = 0; i < 3; i++)
		gtr_string(f, 10 + i, gtr_kern[i], &nrec);
	static struct gt_rec_api api[GTR_CHUNK];
	static struct gt_rec_kernel ker[GTR_CHUNK];
	uint64_t t = h.start_ns + 2000000000ull, corr = 1000, range_id = 1, step_start = t;
	int n = 0;
	for (uint64_t k = 0; k < nk; k++) {
		if (k % 150 == 0) {
			if (k) {
				struct gt_rec_range r;
				memset(&r, 0, sizeof(r));
				r.h.type = GT_REC_RANGE;
				r.h.size = sizeof(r);
				r.h.tid = 4242;
				r.name_id = 2;
				r.kind = GT_RANGE_PUSHPOP;
				r.end_tid = 4242;
				r.start_ns = step_start;
				r.end_ns = t;
				r.range_id = range_id++;
				gtr_put(f, &r, sizeof(r), &nrec);
			}
			t += 15000 + rnd(10000);
			step_start = t;
		}
		struct gt_rec_api *a = &api[n];
		memset(a, 0, sizeof(*a));
		a->h.type = GT_REC_API;
		a->h.size = sizeof(*a);
		a->h.tid = 4242;
		a->name_id = 1;
		a->domain = GT_DOM_DRIVER;
		a->copy_kind = -1;
		a->start_ns = t + 1000 + rnd(1500);
		a->end_ns = a->start_ns + 2500 + rnd(1500);
		a->corr_id = corr;
		struct gt_rec_kernel *g = &ker[n];
		memset(g, 0, sizeof(*g));
		g->h.type = GT_REC_KERNEL;
		g->h.size = sizeof(*g);
		g->name_id = 10 + (uint32_t)(k % 3);
		g->context = 1;
		g->stream = 7;
		g->start_ns = a->end_ns + 1500 + rnd(1000);
		g->end_ns = g->start_ns + 1800 + rnd(700);
		g->corr_id = corr++;
		g->grid[0] = 128;
		g->grid[1] = g->grid[2] = 1;
		g->block[0] = 128;
		g->block[1] = g->block[2] = 1;
		g->registers = 16 + 2 * (uint32_t)(k % 3);
		t = a->end_ns + 500 + rnd(1500);
		if (++n == GTR_CHUNK || k + 1 == nk) {
			for (int i = 0; i < n; i++)
				gtr_put(f, &api[i], sizeof(api[i]), &nrec);
			for (int i = 0; i < n; i++)
				gtr_put(f, &ker[i], sizeof(ker[i]), &nrec);
			n = 0;
		}
	}
	h.end_ns = t + 1000000;
	h.records = nrec;
	fseek(f, 0, SEEK_SET);
	fwrite(&h, 1, sizeof(h), f);
	if (fclose(f) != 0)
		return 1;
	fprintf(stderr, "gen: %s: %llu kernels, %llu records\n", out, (unsigned long long)nk, (unsigned long long)nrec);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "kineto") == 0)
		return gen_kineto(argv[2], atof(argv[3]), argc > 4 ? atoi(argv[4]) : 0);
	if (argc >= 4 && strcmp(argv[1], "sqlite") == 0)
		return gen_sqlite(argv[2], strtoull(argv[3], NULL, 10));
	if (argc >= 4 && strcmp(argv[1], "gtr") == 0)
		return gen_gtr(argv[2], strtoull(argv[3], NULL, 10));
	fprintf(stderr, "usage: gen kineto OUT.json TARGET_MB [RANK] | gen sqlite OUT.sqlite N_KERNELS | gen gtr OUT.gtr N_KERNELS\n");
	return 2;
}
