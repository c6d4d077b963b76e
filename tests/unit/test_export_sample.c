/*
 * A small trace whose every statistic is known by construction, shared by
 * the tests of src/export (test_export_*.c).  Times are ns after T0.
 *
 * thread 100: cuInit; two cuMemAlloc (1 MiB at 0xA000, 4 KiB at 0xB000);
 *   range "step" (id 1) holding range "forward" (id 2) with three
 *   cuLaunchKernel (corr 1..3), then a H2D and a D2H cudaMemcpyAsync
 *   (corr 4, 5) and a cudaMemsetAsync (corr 6); a mark; a second "forward"
 *   (id 3, level 0) with one launch (corr 7); cuMemFree of 0xB000.
 * thread 200: start/end range "load" (id 4) with one launch (corr 8), and a
 *   range "step" (id 5) with no GPU work.
 * GPU 0: kernels gemm (10000, 14000, 5000 ns) and relu (2000, 3000 ns) on
 *   streams 7 and 8; copies H2D 1 MB/10 us, D2H 0.5 MB/5 us, D2D 2 MB/3 us
 *   (no API call), P2P 3 MB/2 us; memset 4096 B/1 us; power 312.5 then 320.25.
 */
#include <string.h>

#include "trace/trace_io.h"
#include "test.h"

#define T0 1000000000000ULL

const char *gt_test_export_sample(const char *dir, int close_it);
void gt_test_export_string(struct gt_trace_writer *w, uint32_t id, const char *s);
void gt_test_export_api(struct gt_trace_writer *w, uint32_t tid, uint32_t name, int dom, uint64_t s, uint64_t e,
		     uint64_t corr, uint64_t bytes, uint64_t ptr, int kind);
void gt_test_export_kernel(struct gt_trace_writer *w, uint32_t name, uint32_t stream, uint64_t s, uint64_t e,
			uint64_t corr);

void gt_test_export_string(struct gt_trace_writer *w, uint32_t id, const char *s)
{
	gt_tw_string(w, id, s, strlen(s));
}

void gt_test_export_api(struct gt_trace_writer *w, uint32_t tid, uint32_t name, int dom, uint64_t s, uint64_t e,
		     uint64_t corr, uint64_t bytes, uint64_t ptr, int kind)
{
	struct gt_rec_api a;
	memset(&a, 0, sizeof(a));
	a.h.type = GT_REC_API;
	a.h.size = sizeof(a);
	a.h.tid = tid;
	a.name_id = name;
	a.domain = (uint8_t)dom;
	a.copy_kind = (int8_t)kind;
	a.start_ns = T0 + s;
	a.end_ns = T0 + e;
	a.corr_id = corr;
	a.bytes = bytes;
	a.ptr = ptr;
	gt_tw_write(w, &a, sizeof(a), 1);
}

void gt_test_export_kernel(struct gt_trace_writer *w, uint32_t name, uint32_t stream, uint64_t s, uint64_t e,
			uint64_t corr)
{
	struct gt_rec_kernel k;
	memset(&k, 0, sizeof(k));
	k.h.type = GT_REC_KERNEL;
	k.h.size = sizeof(k);
	k.name_id = name;
	k.stream = stream;
	k.start_ns = T0 + s;
	k.end_ns = T0 + e;
	k.corr_id = corr;
	k.grid[0] = 128;
	k.grid[1] = 2;
	k.grid[2] = 1;
	k.block[0] = 256;
	k.block[1] = k.block[2] = 1;
	k.registers = 64;
	k.static_smem = 1024;
	k.dynamic_smem = 49152;
	gt_tw_write(w, &k, sizeof(k), 1);
}

static void range(struct gt_trace_writer *w, uint32_t tid, uint32_t name, int kind, int level, uint64_t id,
		  uint64_t parent, uint64_t s, uint64_t e)
{
	struct gt_rec_range r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_RANGE;
	r.h.size = sizeof(r);
	r.h.tid = tid;
	r.name_id = name;
	r.kind = (uint8_t)kind;
	r.level = (uint8_t)level;
	r.end_tid = tid;
	r.start_ns = T0 + s;
	r.end_ns = T0 + e;
	r.range_id = id;
	r.parent_id = parent;
	gt_tw_write(w, &r, sizeof(r), 1);
}

static void memcpy_rec(struct gt_trace_writer *w, int kind, uint32_t stream, uint64_t s, uint64_t e, uint64_t bytes,
		       uint64_t corr)
{
	struct gt_rec_memcpy c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_MEMCPY;
	c.h.size = sizeof(c);
	c.copy_kind = (uint8_t)kind;
	c.flags = 1;
	c.stream = stream;
	c.start_ns = T0 + s;
	c.end_ns = T0 + e;
	c.bytes = bytes;
	c.corr_id = corr;
	c.dst_device = kind == GT_COPY_PTOP ? 1 : 0;
	gt_tw_write(w, &c, sizeof(c), 1);
}

static void counter(struct gt_trace_writer *w, uint32_t name, uint64_t t, double v)
{
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	c.name_id = name;
	c.device = 0;
	c.ts_ns = T0 + t;
	c.value = v;
	gt_tw_write(w, &c, sizeof(c), 1);
}

enum { S_LAUNCH = 1, S_MEMCPYA, S_ALLOC, S_FREE, S_GEMM, S_RELU, S_STEP, S_FORWARD, S_INIT, S_TMAIN, S_POWER,
       S_MARK, S_H100, S_MEMSETA, S_LOAD };

const char *gt_test_export_sample(const char *dir, int close_it)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/trace.gtr", dir);
	struct gt_trace_writer w;
	if (gt_tw_open(&w, path, "rank0", "node1", 4242, T0, 0) < 0)
		return NULL;
	static const char *const strs[] = {NULL,	  "cuLaunchKernel",
					   "cudaMemcpyAsync", "cuMemAlloc",
					   "cuMemFree",	  "gemm<float, 128>(float const*, int)",
					   "relu",	  "step",
					   "forward",	  "cuInit",
					   "thread-main",	  "power_W",
					   "marker",	  "H100",
					   "cudaMemsetAsync", "load"};
	for (uint32_t i = 1; i < sizeof(strs) / sizeof(strs[0]); i++)
		gt_test_export_string(&w, i, strs[i]);
	struct gt_rec_thread th = {{GT_REC_THREAD, sizeof(th), 100}, S_TMAIN, 0};
	gt_tw_write(&w, &th, sizeof(th), 1);
	struct gt_rec_device dv;
	memset(&dv, 0, sizeof(dv));
	dv.h.type = GT_REC_DEVICE;
	dv.h.size = sizeof(dv);
	dv.name_id = S_H100;
	dv.global_memory_bytes = 80ull << 30;
	gt_tw_write(&w, &dv, sizeof(dv), 1);

	gt_test_export_api(&w, 100, S_INIT, GT_DOM_DRIVER, 0, 5000, 0, 0, 0, -1);
	gt_test_export_api(&w, 100, S_ALLOC, GT_DOM_DRIVER, 6000, 7000, 0, 1048576, 0xA000, -1);
	gt_test_export_api(&w, 100, S_ALLOC, GT_DOM_DRIVER, 7500, 8000, 0, 4096, 0xB000, -1);
	gt_test_export_api(&w, 100, S_LAUNCH, GT_DOM_DRIVER, 12000, 13000, 1, 0, 0, -1);
	gt_test_export_api(&w, 100, S_LAUNCH, GT_DOM_DRIVER, 14000, 15000, 2, 0, 0, -1);
	gt_test_export_api(&w, 100, S_LAUNCH, GT_DOM_DRIVER, 16000, 17000, 3, 0, 0, -1);
	range(&w, 100, S_FORWARD, GT_RANGE_PUSHPOP, 1, 2, 1, 11000, 50000);
	gt_test_export_api(&w, 100, S_MEMCPYA, GT_DOM_RUNTIME, 60000, 61000, 4, 1000000, 0, GT_HCOPY_H2D);
	gt_test_export_api(&w, 100, S_MEMCPYA, GT_DOM_RUNTIME, 73000, 74000, 5, 500000, 0, GT_HCOPY_D2H);
	gt_test_export_api(&w, 100, S_MEMSETA, GT_DOM_RUNTIME, 81000, 81500, 6, 4096, 0, -1);
	range(&w, 100, S_STEP, GT_RANGE_PUSHPOP, 0, 1, 0, 10000, 100000);
	range(&w, 100, S_MARK, GT_RANGE_MARK, 0, 6, 0, 105000, 105000);
	gt_test_export_api(&w, 100, S_LAUNCH, GT_DOM_DRIVER, 111000, 112000, 7, 0, 0, -1);
	range(&w, 100, S_FORWARD, GT_RANGE_PUSHPOP, 0, 3, 0, 110000, 130000);
	gt_test_export_api(&w, 100, S_FREE, GT_DOM_DRIVER, 140000, 141000, 0, 0, 0xB000, -1);
	gt_test_export_api(&w, 200, S_LAUNCH, GT_DOM_DRIVER, 21000, 22000, 8, 0, 0, -1);
	range(&w, 200, S_LOAD, GT_RANGE_STARTEND, 0, 4, 0, 20000, 40000);
	range(&w, 200, S_STEP, GT_RANGE_PUSHPOP, 0, 5, 0, 150000, 160000);

	gt_test_export_kernel(&w, S_GEMM, 7, 20000, 30000, 1);
	gt_test_export_kernel(&w, S_RELU, 7, 30000, 32000, 2);
	gt_test_export_kernel(&w, S_GEMM, 8, 31000, 45000, 3);
	memcpy_rec(&w, GT_COPY_HTOD, 7, 62000, 72000, 1000000, 4);
	memcpy_rec(&w, GT_COPY_DTOH, 7, 75000, 80000, 500000, 5);
	struct gt_rec_memset ms;
	memset(&ms, 0, sizeof(ms));
	ms.h.type = GT_REC_MEMSET;
	ms.h.size = sizeof(ms);
	ms.stream = 8;
	ms.start_ns = T0 + 82000;
	ms.end_ns = T0 + 83000;
	ms.bytes = 4096;
	ms.corr_id = 6;
	gt_tw_write(&w, &ms, sizeof(ms), 1);
	memcpy_rec(&w, GT_COPY_DTOD, 8, 90000, 93000, 2000000, 0);
	memcpy_rec(&w, GT_COPY_PTOP, 8, 94000, 96000, 3000000, 0);
	gt_test_export_kernel(&w, S_GEMM, 7, 115000, 120000, 7);
	gt_test_export_kernel(&w, S_RELU, 8, 50000, 53000, 8);
	counter(&w, S_POWER, 50000, 312.5);
	counter(&w, S_POWER, 100000, 320.25);
	struct gt_rec_dropped dr = {{GT_REC_DROPPED, sizeof(dr), 0}, GT_DROP_CUPTI, 0, 3};
	gt_tw_write(&w, &dr, sizeof(dr), 1);
	if (!close_it) {
		gt_tw_abandon(&w); /* left as <path>.partial, as after a crash */
		return path;
	}
	if (gt_tw_close(&w, T0 + 200000, 2, 0, 0) < 0)
		return NULL;
	return path;
}
