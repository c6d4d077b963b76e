/* The end-of-run summary: content and an 80-column layout. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace_io.h"
#include "export/export.h"
#include "export/writers.h"
#include "test.h"

const char *gt_test_export_sample(const char *dir, int close_it);
void gt_test_export_string(struct gt_trace_writer *w, uint32_t id, const char *s);
void gt_test_export_kernel(struct gt_trace_writer *w, uint32_t name, uint32_t stream, uint64_t s, uint64_t e,
			uint64_t corr);

static char *summary(const char *rundir, const char *const *paths, int n)
{
	char *mem = NULL, err[512] = "";
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	if (!f)
		return NULL;
	int rc = gt_export_summary(f, rundir, paths, n, err, sizeof(err));
	fclose(f);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		free(mem);
		return NULL;
	}
	return mem;
}

static int max_width(const char *s)
{
	int w = 0, cur = 0;
	for (; *s; s++) {
		if (*s == '\n') {
			cur = 0;
			continue;
		}
		if ((*s & 0xC0) != 0x80) /* count characters, not UTF-8 continuation bytes */
			cur++;
		if (cur > w)
			w = cur;
	}
	return w;
}

TEST(export_summary_content)
{
	/* a short relative run path, so that every line must fit 80 columns */
	ASSERT(chdir(gt_test_tmpdir()) == 0);
	const char *run = "myrun", *proc = "myrun/rank0";
	ASSERT(mkdir(run, 0755) == 0 && mkdir(proc, 0755) == 0);
	const char *t = gt_test_export_sample(proc, 1);
	const char *paths[] = {t};
	char *s = summary(run, paths, 1);
	ASSERT(s);
	ASSERT_CONTAINS(s, "1 process, 5 kernels, 0.034 ms of GPU kernel time");
	ASSERT_CONTAINS(s, "Top kernels by GPU time");
	/* gemm: 85.3 % of 34 us, 3 calls, 9666.7 ns on average; the name fits whole */
	ASSERT_CONTAINS(s, "  85.3      0.029        3       9.7  gemm<float, 128>(float const*, int)\n");
	ASSERT_CONTAINS(s, "  14.7      0.005        2       2.5  relu\n");
	ASSERT_CONTAINS(s, "cuLaunchKernel");
	/* 1 MB in 10 us = 100 GB/s; 2 MB in 3 us = 666.67 GB/s */
	ASSERT_CONTAINS(s, "Host-to-Device          1.00 MB        1      0.010   100.00");
	ASSERT_CONTAINS(s, "Device-to-Device        2.00 MB        1      0.003   666.67");
	ASSERT_CONTAINS(s, "memset");
	ASSERT_CONTAINS(s, "Peak device memory in use: 1.05 MB");
	ASSERT_CONTAINS(s, "Records lost by gputap: 2, dropped by CUPTI: 3");
	ASSERT_CONTAINS(s, "Files in myrun/:");
	ASSERT_CONTAINS(s, "  rank0/  trace.gtr\n"); /* only the files that exist are listed */
	ASSERT(!strstr(s, "partial"));
	ASSERT(max_width(s) <= 80);
	free(s);
}

TEST(export_summary_several_processes_and_partial)
{
	char d1[4200], d2[4200];
	snprintf(d1, sizeof(d1), "%s/a", gt_test_tmpdir());
	snprintf(d2, sizeof(d2), "%s/b", gt_test_tmpdir());
	ASSERT(mkdir(d1, 0755) == 0 && mkdir(d2, 0755) == 0);
	char t1[4300], t2[4300];
	snprintf(t1, sizeof(t1), "%s", gt_test_export_sample(d1, 1));
	snprintf(t2, sizeof(t2), "%s", gt_test_export_sample(d2, 0));
	const char *paths[] = {t1, t2};
	char *s = summary("", paths, 2);
	ASSERT(s);
	ASSERT_CONTAINS(s, "2 processes, 10 kernels");
	ASSERT_CONTAINS(s, "[partial]");
	ASSERT_CONTAINS(s, "  85.3      0.058        6       9.7  gemm"); /* merged across processes */
	ASSERT_CONTAINS(s, "(rank0)");
	ASSERT_CONTAINS(s, "Partial:");
	free(s);
}

TEST(export_summary_long_names_fit_80_columns)
{
	const char *d = gt_test_tmpdir();
	char path[4300];
	snprintf(path, sizeof(path), "%s/trace.gtr", d);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid9", "h", 9, 1000, 0), 0);
	char longname[400];
	memset(longname, 'x', sizeof(longname) - 1);
	memcpy(longname, "void cutlass::Kernel<", 21);
	memcpy(longname + sizeof(longname) - 12, "_tile128x64", 11);
	longname[sizeof(longname) - 1] = '\0';
	gt_test_export_string(&w, 1, longname);
	gt_test_export_string(&w, 2, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
				  "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
				  "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
				  "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac");
	for (int i = 0; i < 12; i++) /* more than 10 names: the rest are counted */
		gt_test_export_string(&w, (uint32_t)(3 + i), i % 2 ? "k_odd" : "k_even");
	gt_test_export_kernel(&w, 1, 1, 100, 900, 0);
	gt_test_export_kernel(&w, 2, 1, 1000, 1500, 0);
	ASSERT_EQ_INT(gt_tw_close(&w, 5000, 0, 0, 0), 0);
	const char *paths[] = {path};
	char *s = summary("r", paths, 1);
	ASSERT(s);
	ASSERT(max_width(s) <= 80);
	ASSERT_CONTAINS(s, "cutlass::Kernel<"); /* the head is kept */
	ASSERT_CONTAINS(s, "128x64");          /* and the tail */
	ASSERT_CONTAINS(s, "...");
	free(s);

	char buf[64];
	gt_export_short_name(buf, sizeof(buf), "void f<int>(float*, int)", 39);
	ASSERT_EQ_STR(buf, "f<int>(float*, int)"); /* short enough: unchanged but for "void " */
	gt_export_short_name(buf, sizeof(buf), "ampere_sgemm_128x64_nn_with_a_very_long_suffix_that_goes_on", 20);
	ASSERT_EQ_INT(strlen(buf), 20);
	ASSERT(strncmp(buf, "ampere_sgemm", 12) == 0);
}

TEST(export_summary_bad_trace_is_an_error)
{
	const char *paths[] = {"/nonexistent/trace.gtr"};
	char err[512] = "";
	FILE *f = fopen("/dev/null", "w");
	ASSERT(f);
	ASSERT_EQ_INT(gt_export_summary(f, "x", paths, 1, err, sizeof(err)), -1);
	fclose(f);
	ASSERT_CONTAINS(err, "/nonexistent/trace.gtr");
}
