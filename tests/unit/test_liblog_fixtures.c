/* The parsers on real logs recorded on an H200 (PyTorch 2.11, cuBLAS 13.1,
 * cuDNN 9.19, NCCL 2.28.9) by tests/fixtures/liblogs/record_liblogs.py: they
 * must find exactly the shapes the script used (its EXPECT lines), no line
 * may be bad, and the whole folder gives library_trace.expected.csv. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "liblog/liblog.h"
#include "liblog/libtrace.h"
#include "test.h"

static const char *fixdir(void)
{
	static char p[4096];
	snprintf(p, sizeof(p), "%s/fixtures/liblogs/h200-torch2.11", gt_test_srcdir());
	return p;
}

static struct gt_libcalls *parse_fixture(const char *file, enum gt_lib want, struct gt_liblog_stats *st)
{
	char p[4096], err[512];
	snprintf(p, sizeof(p), "%s/%s", fixdir(), file);
	struct gt_libcalls *t = gt_libcalls_new();
	if (gt_liblog_parse_file(p, t, st, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		gt_libcalls_free(t);
		return NULL;
	}
	if (st->lib != want || st->bad != 0) {
		fprintf(stderr, "%s: library %s, %llu bad lines\n", p, gt_lib_name(st->lib), (unsigned long long)st->bad);
		gt_libcalls_free(t);
		return NULL;
	}
	return t;
}

/* value of "key=" in an EXPECT line, "" if absent */
static const char *ev(const char *line, const char *key, char *buf, size_t len)
{
	buf[0] = 0;
	gt_kv_get(line, NULL, key, buf, len);
	return buf;
}

static const char *cuda_type_of(const char *dtype)
{
	return !strcmp(dtype, "float16") ? "R_16F" : !strcmp(dtype, "bfloat16") ? "R_16BF" : "R_32F";
}

/* Calls of GEMM rows matching the EXPECT line; *rows counts matching rows. */
static uint64_t gemm_calls(struct gt_libcalls *t, const char *line, int *nrows)
{
	char b[64], want[256];
	const struct gt_libcall_row *r;
	size_t n = gt_libcalls_rows(t, &r);
	uint64_t calls = 0;
	*nrows = 0;
	for (size_t i = 0; i < n; i++) {
		struct gt_gemm_cfg g;
		char err[256];
		if (gt_gemm_cfg_parse(r[i].config, &g, err, sizeof(err)) < 0)
			continue;
		snprintf(want, sizeof(want), "%c%c %lld %lld %lld %s %lld", g.transa, g.transb, (long long)g.m,
			 (long long)g.n, (long long)g.k, g.type_a, (long long)g.batch);
		char exp[256], t1[8], t2[8], m[16], nn[16], k[16], bt[16];
		ev(line, "transa", t1, sizeof(t1));
		ev(line, "transb", t2, sizeof(t2));
		ev(line, "batch", bt, sizeof(bt));
		snprintf(exp, sizeof(exp), "%s%s %s %s %s %s %s", t1, t2, ev(line, "m", m, sizeof(m)),
			 ev(line, "n", nn, sizeof(nn)), ev(line, "k", k, sizeof(k)), cuda_type_of(ev(line, "dtype", b, sizeof(b))),
			 bt[0] ? bt : "1");
		if (strcmp(want, exp) == 0) {
			calls += r[i].calls;
			(*nrows)++;
		}
	}
	return calls;
}

static char *expect_lines(void)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/script_output.txt", fixdir());
	return gt_test_read_file(p, NULL);
}

TEST(libtrace_fixture_cublaslt_exact_shapes)
{
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse_fixture("cublaslt.log", GT_LIB_CUBLASLT, &st);
	ASSERT(t);
	char *out = expect_lines();
	ASSERT(out);
	int nexp = 0;
	uint64_t total = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		if (strncmp(l, "EXPECT gemm ", 12) != 0)
			continue;
		char c[16];
		int rows;
		uint64_t got = gemm_calls(t, l, &rows);
		if (rows != 1 || got != strtoull(ev(l, "calls", c, sizeof(c)), NULL, 10))
			GT_FAIL_AT("%s: %d rows, %llu calls in cublaslt.log", l, rows, (unsigned long long)got);
		nexp++;
		total += got;
	}
	ASSERT_EQ_INT(nexp, 7);
	/* exactly those: no other GEMM in the log */
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &r), 7);
	ASSERT_EQ_U64(st.calls, total);
	/* the recorded algorithm and the bias epilogue are kept */
	int bias = 0;
	for (size_t i = 0; i < 7; i++) {
		ASSERT_CONTAINS(r[i].config, " algo=");
		bias += strstr(r[i].config, " epilogue=BIAS ") != NULL;
	}
	ASSERT_EQ_INT(bias, 1);
	free(out);
	gt_libcalls_free(t);
}

TEST(libtrace_fixture_cublas_exact_shapes)
{
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse_fixture("cublas.log", GT_LIB_CUBLAS, &st);
	ASSERT(t);
	char *out = expect_lines();
	ASSERT(out);
	int nexp = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		/* PyTorch sends linear-with-bias straight to cuBLASLt: not in the cuBLAS log */
		if (strncmp(l, "EXPECT gemm ", 12) != 0 || strstr(l, "bias"))
			continue;
		char c[16];
		int rows;
		uint64_t got = gemm_calls(t, l, &rows);
		if (rows != 1 || got != strtoull(ev(l, "calls", c, sizeof(c)), NULL, 10))
			GT_FAIL_AT("%s: %d rows, %llu calls in cublas.log", l, rows, (unsigned long long)got);
		nexp++;
	}
	ASSERT_EQ_INT(nexp, 6);
	const struct gt_libcall_row *r;
	size_t n = gt_libcalls_rows(t, &r);
	ASSERT_EQ_INT(n, 6);
	int direct = 0;
	for (size_t i = 0; i < n; i++)
		direct += strstr(r[i].config, "m=64 n=80 k=96 lda=96 ldb=96 ldc=64") &&
			  strstr(r[i].config, "api=cublasSgemm_v2");
	ASSERT_EQ_INT(direct, 1);
	/* handles, streams, math and workspace setters are not calls */
	ASSERT(st.ignored >= 50);
	free(out);
	gt_libcalls_free(t);
}

TEST(libtrace_fixture_cudnn_convs)
{
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse_fixture("cudnn.log", GT_LIB_CUDNN, &st);
	ASSERT(t);
	char *out = expect_lines();
	ASSERT(out);
	const struct gt_libcall_row *r;
	size_t n = gt_libcalls_rows(t, &r);
	ASSERT_EQ_INT(n, 2);
	int nexp = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		if (strncmp(l, "EXPECT conv ", 12) != 0)
			continue;
		/* "x(8,3,32,32) w(16,3,3,3)" -> xDesc.dimA=8x3x32x32 wDesc.dimA=16x3x3x3 */
		char x[64] = "", w[64] = "", c[16];
		const char *px = strstr(l, "x("), *pw = strstr(l, "w(");
		ASSERT(px && pw);
		snprintf(x, sizeof(x), "xDesc.dimA=%.*s ", (int)strcspn(px + 2, ")"), px + 2);
		snprintf(w, sizeof(w), "wDesc.dimA=%.*s ", (int)strcspn(pw + 2, ")"), pw + 2);
		for (char *q = x; *q; q++)
			if (*q == ',')
				*q = 'x';
		for (char *q = w; *q; q++)
			if (*q == ',')
				*q = 'x';
		int found = 0;
		for (size_t i = 0; i < n; i++)
			if (strstr(r[i].config, x) && strstr(r[i].config, w) &&
			    strstr(r[i].config, strstr(l, "float16") ? "xDesc.dataType=HALF" : "xDesc.dataType=FLOAT") &&
			    strstr(r[i].config, strstr(l, "stride 2") ? "convDesc.strideA=2x2" : "convDesc.strideA=1x1") &&
			    r[i].calls == strtoull(ev(l, "calls", c, sizeof(c)), NULL, 10))
				found++;
		if (found != 1)
			GT_FAIL_AT("%s: %d matching rows", l, found);
		nexp++;
	}
	ASSERT_EQ_INT(nexp, 2);
	for (size_t i = 0; i < n; i++) {
		ASSERT(strncmp(r[i].config, "op=cudnnBackendExecuteInternal ", 31) == 0);
		ASSERT_CONTAINS(r[i].config, " operation=CONV_FORWARD ");
		ASSERT_CONTAINS(r[i].config, "engine_id=");
		ASSERT(!strstr(r[i].config, "0x"));
	}
	free(out);
	gt_libcalls_free(t);
}

/* Older cuDNN logs no internal block: the execution plan is then the call. */
TEST(libtrace_fixture_cudnn_plan_without_internal_block)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/cudnn.log", fixdir());
	size_t len;
	char *text = gt_test_read_file(p, &len);
	ASSERT(text);
	/* drop every cudnnBackendExecuteInternal block */
	char *o = malloc(len + 1), *w = o;
	int skip = 0;
	for (char *l = text; *l;) {
		char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l + 1) : strlen(l);
		if (strncmp(l, "I! ", 3) == 0)
			skip = strstr(l, "function cudnnBackendExecuteInternal(") && strstr(l, "function cudnnBackendExecuteInternal(") < nl;
		if (!skip) {
			memcpy(w, l, n);
			w += n;
		}
		l += n;
	}
	*w = 0;
	struct gt_libcalls *t = gt_libcalls_new();
	struct gt_liblog_stats st;
	gt_liblog_parse_buf("cudnn-noint.log", o, strlen(o), t, &st);
	ASSERT_EQ_U64(st.bad, 0);
	const struct gt_libcall_row *r;
	ASSERT_EQ_INT(gt_libcalls_rows(t, &r), 2);
	ASSERT_CONTAINS(r[0].config, "op=cudnnBackendExecute operation=CONVOLUTION_FORWARD xDesc.type=FLOAT xDesc.nbDims=4 "
				     "xDesc.dimA=8x3x32x32");
	ASSERT_EQ_U64(r[0].calls, 2);
	ASSERT_CONTAINS(r[1].config, "xDesc.dimA=4x16x28x28");
	ASSERT_CONTAINS(r[1].config, "convDesc.strideA=2x2");
	ASSERT_EQ_U64(r[1].calls, 1);
	free(o);
	free(text);
	gt_libcalls_free(t);
}

TEST(libtrace_fixture_nccl_and_two_ranks)
{
	struct gt_liblog_stats st;
	struct gt_libcalls *t = parse_fixture("nccl.vm.474.log", GT_LIB_NCCL, &st);
	ASSERT(t);
	char *out = expect_lines();
	ASSERT(out);
	const struct gt_libcall_row *r;
	size_t n = gt_libcalls_rows(t, &r);
	ASSERT_EQ_INT(n, 3);
	int nexp = 0;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		if (strncmp(l, "EXPECT nccl ", 12) != 0)
			continue;
		char op[32], cnt[32], dt[32], nr[8], c[8], pre[128];
		snprintf(pre, sizeof(pre), "op=%s count=%s dtype=%s ", ev(l, "op", op, sizeof(op)),
			 ev(l, "count", cnt, sizeof(cnt)), ev(l, "dtype", dt, sizeof(dt)));
		ev(l, "nranks", nr, sizeof(nr));
		int found = 0;
		for (size_t i = 0; i < n; i++)
			if (strncmp(r[i].config, pre, strlen(pre)) == 0 && strstr(r[i].config, " nranks=1") &&
			    r[i].calls == strtoull(ev(l, "calls", c, sizeof(c)), NULL, 10))
				found++;
		if (found != 1)
			GT_FAIL_AT("%s: %d matching rows", l, found);
		nexp++;
	}
	ASSERT_EQ_INT(nexp, 3);
	free(out);
	gt_libcalls_free(t);

	/* a second rank's log (same calls from another process and device) merges into the same rows */
	char p[4096];
	snprintf(p, sizeof(p), "%s/nccl.vm.474.log", fixdir());
	char *r0 = gt_test_read_file(p, NULL);
	ASSERT(r0);
	char *r1 = strdup(r0);
	for (char *q = r1; (q = strstr(q, "vm:474:474 [0]")); q++)
		memcpy(q, "vm:475:475 [1]", 14);
	const char *dir = gt_test_tmpdir();
	char libs[4096], csv[4096], err[256];
	snprintf(libs, sizeof(libs), "%s/libs", dir);
	mkdir(libs, 0755);
	gt_test_write_file(libs, "nccl.vm.474.log", r0, strlen(r0));
	gt_test_write_file(libs, "nccl.vm.475.log", r1, strlen(r1));
	snprintf(csv, sizeof(csv), "%s/lt.csv", dir);
	ASSERT_EQ_INT(gt_libtrace_collect(libs, csv, "", "", err, sizeof(err)), 0);
	struct gt_libcalls *u = gt_libcalls_new();
	ASSERT_EQ_INT(gt_libcalls_read_csv(csv, u, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_libcalls_rows(u, &r), 3);
	ASSERT_EQ_STR(r[0].config, "op=allreduce count=1048576 dtype=float32 redop=sum nranks=1");
	ASSERT_EQ_U64(r[0].calls, 4);
	ASSERT_EQ_U64(r[1].calls + r[2].calls, 4);
	gt_libcalls_free(u);
	free(r0);
	free(r1);
}

/* The whole folder, as `gputap run` collects it, gives the committed CSV. */
TEST(libtrace_fixture_golden_csv)
{
	const char *dir = gt_test_tmpdir();
	char libs[4096], csv[4096], err[512], p[4096];
	snprintf(libs, sizeof(libs), "%s/libs", dir);
	mkdir(libs, 0755);
	const char *logs[] = {"cublas.log", "cublaslt.log", "cudnn.log", "nccl.vm.474.log"};
	for (int i = 0; i < 4; i++) {
		size_t len;
		snprintf(p, sizeof(p), "%s/%s", fixdir(), logs[i]);
		char *b = gt_test_read_file(p, &len);
		ASSERT(b);
		gt_test_write_file(libs, logs[i], b, len);
		free(b);
	}
	snprintf(csv, sizeof(csv), "%s/library_trace.csv", dir);
	ASSERT_EQ_INT(gt_libtrace_collect(libs, csv, "", "", err, sizeof(err)), 0);
	char *got = gt_test_read_file(csv, NULL);
	snprintf(p, sizeof(p), "%s/library_trace.expected.csv", fixdir());
	char *want = gt_test_read_file(p, NULL);
	ASSERT(got && want);
	/* created_date is "now": mask it as the expected file does */
	char *masked = calloc(1, strlen(got) + 1), *w = masked;
	for (char *l = got; *l;) {
		char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l + 1) : strlen(l);
		char *c1 = memchr(l, ',', n), *c2 = c1 ? memchr(c1 + 1, ',', n - (size_t)(c1 + 1 - l)) : NULL;
		if (l != got && c1 && c2) {
			memcpy(w, l, (size_t)(c1 - l + 1));
			w += c1 - l + 1;
			w += sprintf(w, "DATE");
			memcpy(w, c2, (size_t)(l + n - c2));
			w += l + n - c2;
		} else {
			memcpy(w, l, n);
			w += n;
		}
		l += n;
	}
	ASSERT_EQ_STR(masked, want);
	free(masked);
	free(got);
	free(want);
}
