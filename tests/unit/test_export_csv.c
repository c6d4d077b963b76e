/* The nsys-compatible CSVs and the alnair interposer's logs against golden files, and the
 * statistics by construction.  GT_UPDATE_GOLDEN=1 rewrites the golden files
 * (then check them by hand against the numbers in test_export_sample.c). */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/model.h"
#include "export/ofile.h"
#include "export/export.h"
#include "export/writers.h"
#include "test.h"

const char *gt_test_export_sample(const char *dir, int close_it);

/* 1 if `dir/name` equals tests/golden/out/<golden> byte for byte */
static int same_as_golden(const char *dir, const char *name, const char *golden)
{
	char p[4300], g[4300];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	snprintf(g, sizeof(g), "%s/golden/out/%s", gt_test_srcdir(), golden);
	size_t n = 0, gn = 0;
	char *a = gt_test_read_file(p, &n);
	if (!a) {
		fprintf(stderr, "cannot read %s\n", p);
		return 0;
	}
	if (getenv("GT_UPDATE_GOLDEN")) {
		FILE *f = fopen(g, "w");
		if (f) {
			fwrite(a, 1, n, f);
			fclose(f);
		}
	}
	char *b = gt_test_read_file(g, &gn);
	int ok = b && n == gn && memcmp(a, b, n) == 0;
	if (!ok)
		fprintf(stderr, "%s differs from %s:\n--- got\n%s--- want\n%s", p, g, a, b ? b : "(missing)\n");
	free(a);
	free(b);
	return ok;
}

TEST(export_csv_golden)
{
	const char *d = gt_test_tmpdir();
	const char *t = gt_test_export_sample(d, 1);
	ASSERT(t);
	char err[512] = "";
	char od[4200];
	snprintf(od, sizeof(od), "%s/out", d);
	ASSERT_EQ_INT(gt_export_write_all(t, od, GT_EXPORT_CSV | GT_EXPORT_LOGS, err, sizeof(err)), 0);
	if (getenv("GT_UPDATE_GOLDEN")) { /* the CLI tests and the fuzz corpus use this trace */
		size_t n = 0;
		char *b = gt_test_read_file(t, &n), g[4300];
		snprintf(g, sizeof(g), "%s/golden/out/sample.gtr", gt_test_srcdir());
		FILE *f = b ? fopen(g, "wb") : NULL;
		if (f) {
			fwrite(b, 1, n, f);
			fclose(f);
		}
		free(b);
	}
	static const char *const reps[] = {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
					   "cuda_api_sum", "nvtx_sum", "nvtx_gpu_proj_trace"};
	for (size_t i = 0; i < sizeof(reps) / sizeof(reps[0]); i++) {
		char n[256];
		snprintf(n, sizeof(n), "trace_%s.csv", reps[i]);
		ASSERT(same_as_golden(od, n, n));
	}
	ASSERT(same_as_golden(od, "metrics.log", "metrics.log"));
	ASSERT(same_as_golden(od, "timeline.log", "timeline.log"));
	/* nothing left half-written, no JSON when not asked for */
	char p[4300];
	snprintf(p, sizeof(p), "%s/trace_nvtx_sum.csv.partial", od);
	ASSERT(access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/trace.json", od);
	ASSERT(access(p, F_OK) != 0);
}

/* The statistics, computed independently of the golden files. */
TEST(export_stats_by_construction)
{
	const char *t = gt_test_export_sample(gt_test_tmpdir(), 1);
	struct gt_model m;
	char err[512];
	ASSERT_EQ_INT(gt_model_open(&m, t, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_model_run(&m, err, sizeof(err)), 0);
	struct gt_stat **k = gt_stat_sorted(&m.kern);
	ASSERT_EQ_U64(m.kern.n, 2);
	/* gemm: 10000, 14000, 5000 (odd count: the middle value) */
	ASSERT_CONTAINS(k[0]->name, "gemm");
	ASSERT_EQ_U64(k[0]->count, 3);
	ASSERT_EQ_U64(k[0]->total, 29000);
	ASSERT_NEAR(k[0]->med, 10000, 0);
	double mean = 29000.0 / 3;
	double sd = sqrt(((10000 - mean) * (10000 - mean) + (14000 - mean) * (14000 - mean) +
			  (5000 - mean) * (5000 - mean)) / 2);
	ASSERT_NEAR(k[0]->stddev, sd, 1e-6);
	/* relu: 2000, 3000 (even count: mean of the two middle values) */
	ASSERT_EQ_STR(k[1]->name, "relu");
	ASSERT_NEAR(k[1]->med, 2500, 0);
	ASSERT_NEAR(k[1]->stddev, sqrt(500.0 * 500 * 2), 1e-6);
	ASSERT_EQ_U64(k[1]->min, 2000);
	ASSERT_EQ_U64(k[1]->max, 3000);
	free(k);
	/* a single value has std dev 0 */
	struct gt_stat **a = gt_stat_sorted(&m.api);
	for (size_t i = 0; i < m.api.n; i++)
		if (a[i]->count == 1)
			ASSERT_NEAR(a[i]->stddev, 0, 0);
	free(a);
	/* memory: 1 MiB + 4 KiB allocated, 4 KiB freed */
	ASSERT_EQ_U64(m.mem_peak, 1048576 + 4096);
	ASSERT_EQ_U64(m.mem_final, 1048576);
	ASSERT_EQ_U64(gt_model_lost(&m), 2);
	ASSERT_EQ_U64(gt_model_cupti_dropped(&m), 3);
	ASSERT_EQ_INT(m.partial, 0);
	gt_model_free(&m);
}

/* The Time (%) column of every summary adds up to ~100. */
TEST(export_csv_percentages_sum_to_100)
{
	const char *d = gt_test_tmpdir();
	const char *t = gt_test_export_sample(d, 1);
	char err[512];
	ASSERT_EQ_INT(gt_export_write_all(t, d, GT_EXPORT_CSV, err, sizeof(err)), 0);
	static const char *const reps[] = {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_api_sum",
					   "nvtx_sum"};
	for (size_t i = 0; i < sizeof(reps) / sizeof(reps[0]); i++) {
		char p[4300];
		snprintf(p, sizeof(p), "%s/trace_%s.csv", d, reps[i]);
		char *s = gt_test_read_file(p, NULL);
		ASSERT(s);
		ASSERT(strncmp(s, "Time (%),Total Time (ns),", 25) == 0);
		double sum = 0;
		int rows = 0;
		for (char *l = strchr(s, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
			sum += atof(l + 1);
			rows++;
		}
		ASSERT(rows >= 2);
		ASSERT_NEAR(sum, 100.0, 0.05 * rows);
		free(s);
	}
}

TEST(export_csv_quoting_and_rounding)
{
	char buf[64];
	gt_fmt1(buf, sizeof(buf), 0.25); /* SQLite round(): half away from zero */
	ASSERT_EQ_STR(buf, "0.3");
	gt_fmt1(buf, sizeof(buf), 2.449);
	ASSERT_EQ_STR(buf, "2.4");
	gt_fmt1(buf, sizeof(buf), -0.01);
	ASSERT_EQ_STR(buf, "0.0");
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	ASSERT(f);
	gt_csv_field(f, "plain<int>");
	fputc('|', f);
	gt_csv_field(f, "f(int, float)");
	fputc('|', f);
	gt_csv_field(f, "say \"hi\"");
	fputc('|', f);
	gt_csv_field(f, "bad\xff");
	fclose(f);
	ASSERT_EQ_STR(mem, "plain<int>|\"f(int, float)\"|\"say \"\"hi\"\"\"|bad\xEF\xBF\xBD");
	free(mem);
}

TEST(export_partial_trace_converts)
{
	const char *d = gt_test_tmpdir();
	const char *t = gt_test_export_sample(d, 0); /* only trace.gtr.partial exists */
	char err[512] = "", od[4200];
	snprintf(od, sizeof(od), "%s/o", d);
	struct gt_export_info info;
	ASSERT_EQ_INT(gt_export_convert(t, od, GT_EXPORT_ALL, &info, err, sizeof(err)), 0);
	ASSERT_EQ_INT(info.partial, 1);
	ASSERT_CONTAINS(info.trace_path, ".partial");
	char p[4300];
	snprintf(p, sizeof(p), "%s/trace.json", od);
	char *j = gt_test_read_file(p, NULL);
	ASSERT(j);
	ASSERT_CONTAINS(j, "\"partial\":true");
	free(j);
	/* same statistics as the complete file */
	ASSERT(same_as_golden(od, "trace_cuda_gpu_kern_sum.csv", "trace_cuda_gpu_kern_sum.csv"));
}

TEST(export_damaged_trace_fails_with_offset)
{
	const char *d = gt_test_tmpdir();
	const char *t = gt_test_export_sample(d, 1);
	/* damage a byte of the first block's data (the block starts at the header end) */
	FILE *f = fopen(t, "r+b");
	ASSERT(f);
	struct gt_file_header h;
	ASSERT(fread(&h, sizeof(h), 1, f) == 1);
	long off2 = (long)h.header_size;
	long at = off2 + (long)sizeof(struct gt_block_hdr) + 10;
	fseek(f, at, SEEK_SET);
	int c = fgetc(f);
	fseek(f, at, SEEK_SET);
	fputc(c ^ 0x5a, f);
	fclose(f);
	char err[512] = "", od[4200], want[64];
	snprintf(od, sizeof(od), "%s/o", d);
	ASSERT_EQ_INT(gt_export_write_all(t, od, GT_EXPORT_ALL, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "trace.gtr");
	snprintf(want, sizeof(want), "byte %ld", off2);
	ASSERT_CONTAINS(err, want);
	/* no output left behind, complete or not */
	char p[4300];
	snprintf(p, sizeof(p), "%s/trace.json", od);
	ASSERT(access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/trace.json.partial", od);
	ASSERT(access(p, F_OK) != 0);
	snprintf(p, sizeof(p), "%s/timeline.log.partial", od);
	ASSERT(access(p, F_OK) != 0);
}

TEST(export_ofile_full_disk_is_an_error)
{
	if (access("/dev/full", W_OK) != 0) {
		/* no /dev/full: check the ordinary path only */
		struct gt_ofile o;
		char err[512];
		ASSERT_EQ_INT(gt_ofile_open(&o, gt_test_tmpdir(), "x.csv", err, sizeof(err)), 0);
		ASSERT_EQ_INT(gt_ofile_commit(&o, err, sizeof(err)), 0);
		return;
	}
	struct gt_ofile o;
	char err[512] = "";
	ASSERT_EQ_INT(gt_ofile_open(&o, gt_test_tmpdir(), "x.csv", err, sizeof(err)), 0);
	/* swap the stream for one that fails like a full disk */
	fclose(o.f);
	unlink(o.tmp);
	o.f = fopen("/dev/full", "w");
	ASSERT(o.f);
	for (int i = 0; i < 10000; i++)
		fputs("0123456789", o.f);
	ASSERT_EQ_INT(gt_ofile_commit(&o, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "x.csv");
	ASSERT_CONTAINS(err, "No space left");
	ASSERT(access(o.path, F_OK) != 0);
}

TEST(export_missing_trace)
{
	char err[512] = "";
	ASSERT_EQ_INT(gt_export_write_all("/nonexistent/trace.gtr", gt_test_tmpdir(), GT_EXPORT_ALL, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "/nonexistent/trace.gtr");
}

/* An empty trace gives header-only CSVs and the interposer's names at zero. */
TEST(export_empty_trace)
{
	const char *d = gt_test_tmpdir();
	char path[4300];
	snprintf(path, sizeof(path), "%s/trace.gtr", d);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid1", "h", 1, 5, 0), 0);
	ASSERT_EQ_INT(gt_tw_close(&w, 6, 0, 0, 0), 0);
	char err[512];
	ASSERT_EQ_INT(gt_export_write_all(path, d, GT_EXPORT_ALL, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/trace_cuda_gpu_kern_sum.csv", d);
	char *s = gt_test_read_file(path, NULL);
	ASSERT(s);
	ASSERT_EQ_STR(s, "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n");
	free(s);
	snprintf(path, sizeof(path), "%s/metrics.log", d);
	s = gt_test_read_file(path, NULL);
	ASSERT(s);
	ASSERT(strncmp(s, "name:mem_used,count:0\nname:cuInit,count:0,burst:0\n", 50) == 0);
	free(s);
}

/* CUPTI memory records, when present, are the source of memory in use
 * (they also see allocations the API records miss); frees of 0 bytes take
 * the size of their allocation. */
TEST(export_memory_records_preferred)
{
	const char *d = gt_test_tmpdir();
	char path[4300];
	snprintf(path, sizeof(path), "%s/trace.gtr", d);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid1", "h", 1, 1000, 0), 0);
	ASSERT_EQ_INT(gt_tw_string(&w, 1, "cuMemAlloc_v2", 13), 0);
	struct gt_rec_api a;
	memset(&a, 0, sizeof(a));
	a.h.type = GT_REC_API;
	a.h.size = sizeof(a);
	a.name_id = 1;
	a.start_ns = 1100;
	a.end_ns = 1200;
	a.bytes = 100;
	a.ptr = 0x10;
	ASSERT_EQ_INT(gt_tw_write(&w, &a, sizeof(a), 1), 0);
	const uint64_t ts[] = {1100, 1300, 1400, 1500}, addr[] = {0x10, 0x20, 0x10, 0x30},
		       bytes[] = {100, 5000, 0, 7};
	const uint8_t op[] = {GT_MEM_ALLOC, GT_MEM_ALLOC, GT_MEM_FREE, GT_MEM_ALLOC};
	for (int i = 0; i < 4; i++) {
		struct gt_rec_memory m;
		memset(&m, 0, sizeof(m));
		m.h.type = GT_REC_MEMORY;
		m.h.size = sizeof(m);
		m.op = op[i];
		m.ts_ns = ts[i];
		m.address = addr[i];
		m.bytes = bytes[i];
		ASSERT_EQ_INT(gt_tw_write(&w, &m, sizeof(m), 1), 0);
	}
	ASSERT_EQ_INT(gt_tw_close(&w, 2000, 0, 0, 0), 0);
	struct gt_model m;
	char err[512];
	ASSERT_EQ_INT(gt_model_open(&m, path, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_model_run(&m, err, sizeof(err)), 0);
	ASSERT_EQ_U64(m.mem_peak, 5100);  /* 100 + 5000, before the free */
	ASSERT_EQ_U64(m.mem_final, 5007); /* the free took back the 100 of its allocation */
	gt_model_free(&m);
	ASSERT_EQ_INT(gt_export_write_all(path, d, GT_EXPORT_LOGS, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/metrics.log", d);
	char *s = gt_test_read_file(path, NULL);
	ASSERT(s);
	ASSERT(strncmp(s, "name:mem_used,count:5007\n", 25) == 0);
	ASSERT_CONTAINS(s, "name:cuMemAlloc_v2,count:1,burst:0\n");
	free(s);
}
