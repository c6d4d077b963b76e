/* gputap report on run directories built here: a full one (trace written with
 * gt_tw_*, samples, library CSVs) and partial ones. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/trace_io.h"
#include "report/report.h"
#include "test.h"

#define T0 1700000000000000000ull /* ns since the epoch */
#define EVIL "gemm_<script>alert(1)</script>_kernel"

static uint32_t add_str(struct gt_trace_writer *w, uint32_t id, const char *s)
{
	gt_tw_string(w, id, s, strlen(s));
	return id;
}

static void kernel(struct gt_trace_writer *w, uint32_t name, uint32_t stream, uint64_t s, uint64_t e)
{
	struct gt_rec_kernel k;
	memset(&k, 0, sizeof(k));
	k.h.type = GT_REC_KERNEL;
	k.h.size = sizeof(k);
	k.name_id = name;
	k.stream = stream;
	k.start_ns = s;
	k.end_ns = e;
	k.corr_id = s;
	k.grid[0] = k.block[0] = 1;
	gt_tw_write(w, &k, sizeof(k), 1);
}

/* 3 iterations (ProfilerStep ranges) of: gemm on stream 7, an NCCL all-reduce on
 * stream 13 overlapping it, a copy, an allocation; `nk` extra tiny kernels. */
static void make_trace(const char *dir, int nk)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/rank0", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/rank0/trace.gtr", dir);
	struct gt_trace_writer w;
	if (gt_tw_open(&w, p, "rank0", "testhost", 42, T0, 0) < 0)
		abort();
	uint32_t gemm = add_str(&w, 1, EVIL), nccl = add_str(&w, 2, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
	uint32_t ew = add_str(&w, 3, "vectorized_elementwise_kernel"), step[3];
	step[0] = add_str(&w, 4, "ProfilerStep#0");
	step[1] = add_str(&w, 5, "ProfilerStep#1");
	step[2] = add_str(&w, 6, "ProfilerStep#2");
	for (int it = 0; it < 3; it++) {
		uint64_t b = T0 + 1000000 + (uint64_t)it * 10000000;
		struct gt_rec_range r;
		memset(&r, 0, sizeof(r));
		r.h.type = GT_REC_RANGE;
		r.h.size = sizeof(r);
		r.h.tid = 42;
		r.name_id = step[it];
		r.kind = GT_RANGE_PUSHPOP;
		r.start_ns = b;
		r.end_ns = b + 9000000;
		r.range_id = (uint64_t)it + 1;
		kernel(&w, gemm, 7, b + 100000, b + 5100000);
		kernel(&w, nccl, 13, b + 4000000, b + 7000000);
		kernel(&w, ew, 7, b + 5200000, b + 5400000);
		struct gt_rec_memcpy m;
		memset(&m, 0, sizeof(m));
		m.h.type = GT_REC_MEMCPY;
		m.h.size = sizeof(m);
		m.copy_kind = GT_COPY_HTOD;
		m.stream = 7;
		m.start_ns = b + 7500000;
		m.end_ns = b + 8000000;
		m.bytes = 1 << 20;
		gt_tw_write(&w, &m, sizeof(m), 1);
		struct gt_rec_memory a;
		memset(&a, 0, sizeof(a));
		a.h.type = GT_REC_MEMORY;
		a.h.size = sizeof(a);
		a.op = GT_MEM_ALLOC;
		a.ts_ns = b;
		a.address = 0x1000 + (uint64_t)it;
		a.bytes = 256ull << 20;
		gt_tw_write(&w, &a, sizeof(a), 1);
		gt_tw_write(&w, &r, sizeof(r), 1);
	}
	for (int i = 0; i < nk; i++)
		kernel(&w, ew, 20 + (uint32_t)(i % 3), T0 + 40000000 + (uint64_t)i * 1000, T0 + 40000000 + (uint64_t)i * 1000 + 500);
	gt_tw_close(&w, T0 + 50000000, 0, 0, 0);
}

static void make_csvs(const char *dir)
{
	const char run[] = "{\"command\": \"python train.py --name <b>x</b>\", \"host\": \"testhost\", \"start\": "
			   "\"2026-11-21T08:00:00Z\", \"start_ns\": 1700000000000000000, \"wall_s\": 0.05, "
			   "\"exit_status\": 0, \"signal\": null, \"gpus\": [{\"index\": 0, \"name\": \"NVIDIA H200\", "
			   "\"memory_total_bytes\": 150754820096}], \"tools\": [{\"name\": \"gpu_info_power_profiler\"}]}";
	gt_test_write_file(dir, "run.json", run, strlen(run));
	char s[8192] = "time_ns,device,power_W,energy_J,mem_used_MiB,mem_total_MiB,sm_util_pct,mem_util_pct,"
		       "sm_clock_MHz,temperature_C\n";
	for (int i = 0; i < 20; i++) {
		char l[256];
		snprintf(l, sizeof(l), "%llu,0,%d,,%d,143771,%d,,,\n", (unsigned long long)(T0 + (uint64_t)i * 2500000),
			 100 + i * 10, 1000 + i * 50, i * 5);
		strcat(s, l);
	}
	gt_test_write_file(dir, "gpu_samples.csv", s, strlen(s));
	const char lt[] = "jobid,created_date,model,library,config,calls\n"
			  "j,d,m,cublasLt,op=gemm transa=N transb=N m=1024 n=256 k=512 lda=1024 ldb=512 ldc=1024 ldd=1024 "
			  "type_a=R_16F type_b=R_16F type_c=R_16F type_d=R_16F compute=COMPUTE_32F scale=R_32F batch=1 "
			  "epilogue=DEFAULT algo=66,30\n"
			  "j,d,m,nccl,op=allreduce count=1048576 dtype=float32 redop=sum nranks=1,3\n"
			  "j,d,m,cudnn,op=conv <img src=x onerror=alert(2)>,1\n";
	gt_test_write_file(dir, "library_trace.csv", lt, strlen(lt));
	const char lp[] = "library,config,calls,status,recorded_algo,timed_as,recorded_us,recorded_tflops,best_algo,"
			  "best_us,best_tflops,gain_pct,saving_us_total,algos_tried,device\n"
			  "cublasLt,op=gemm transa=N transb=N m=1024 n=256 k=512 lda=1024 ldb=512 ldc=1024 ldd=1024 "
			  "type_a=R_16F type_b=R_16F type_c=R_16F type_d=R_16F compute=COMPUTE_32F scale=R_32F batch=1 "
			  "epilogue=DEFAULT algo=66,30,ok,66,same_algo_id,12.5,21.47,71,10.0,26.84,25.0,75.0,8,NVIDIA_H200\n";
	gt_test_write_file(dir, "library_perf.csv", lp, strlen(lp));
}

static char *report(const char *dir, int want_rc)
{
	char err[1024] = "", path[4096];
	FILE *out = tmpfile();
	int rc = gt_report_write(dir, out, err, sizeof(err));
	if (rc != want_rc) {
		fprintf(stderr, "gt_report_write returned %d (%s)\n", rc, err);
		return NULL;
	}
	fclose(out);
	snprintf(path, sizeof(path), "%s/report.html", dir);
	return rc == 0 ? gt_test_read_file(path, NULL) : strdup(err);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Tags balance: every element opened is closed in order (void elements and
 * "<x/>" aside).  Returns NULL if well formed, else where it breaks. */
static const char *unbalanced(const char *html)
{
	static char where[128];
	char stack[64][16];
	int depth = 0;
	for (const char *p = strchr(html, '<'); p; p = strchr(p + 1, '<')) {
		if (p[1] == '!')
			continue;
		const char *e = strchr(p, '>');
		if (!e)
			return "unterminated tag";
		int closing = p[1] == '/';
		const char *n = p + 1 + closing;
		size_t nl = strcspn(n, " />\n");
		char name[16];
		snprintf(name, sizeof(name), "%.*s", (int)(nl < 15 ? nl : 15), n);
		if (e[-1] == '/' || !strcmp(name, "meta") || !strcmp(name, "br"))
			continue;
		if (!closing) {
			if (depth == 64)
				return "too deep";
			snprintf(stack[depth++], 16, "%s", name);
		} else if (depth == 0 || strcmp(stack[--depth], name) != 0) {
			snprintf(where, sizeof(where), "</%s> closes <%s> at byte %ld", name, depth >= 0 ? stack[depth] : "",
				 (long)(p - html));
			return where;
		}
	}
	return depth ? "elements left open" : NULL;
}

/* text between the heading with id `sec` and the next heading */
static char *section(const char *html, const char *sec)
{
	char h[64];
	snprintf(h, sizeof(h), "<h2 id=\"%s\">", sec);
	const char *b = strstr(html, h);
	if (!b)
		return NULL;
	const char *e = strstr(b + 1, "<h2 ");
	if (!e)
		e = b + strlen(b);
	return strndup(b, (size_t)(e - b));
}

TEST(report_full_run_dir)
{
	const char *dir = gt_test_tmpdir();
	make_trace(dir, 0);
	make_csvs(dir);
	char *html = report(dir, 0);
	ASSERT(html);
	ASSERT(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	ASSERT_CONTAINS(html, "</html>");
	ASSERT(unbalanced("<p><b></p>") != NULL); /* the checker itself */
	ASSERT(unbalanced("<p><br><x/><svg><rect/></svg></p>") == NULL);
	const char *bad = unbalanced(html);
	if (bad)
		GT_FAIL_AT("report.html is not well formed: %s", bad);
	/* self-contained: no URL, no script, no external resource */
	ASSERT(!strstr(html, "http"));
	ASSERT(!strstr(html, "<script"));
	ASSERT(!strstr(html, "<img"));
	ASSERT(!strstr(html, "<link"));
	/* escaped names */
	ASSERT_CONTAINS(html, "&lt;b&gt;x&lt;/b&gt;");
	ASSERT_CONTAINS(html, "&lt;img src=x onerror=alert(2)&gt;");
	/* every section with data has its plot */
	const char *with_svg[] = {"timeline", "classes", "iterations", "power", "library"};
	for (size_t i = 0; i < sizeof(with_svg) / sizeof(with_svg[0]); i++) {
		char *s = section(html, with_svg[i]);
		ASSERT(s);
		if (!strstr(s, "<svg") || strstr(s, "No data"))
			GT_FAIL_AT("section %s lacks its plot:\n%.600s", with_svg[i], s);
		free(s);
	}
	ASSERT_EQ_INT(count(html, "<svg"), count(html, "</svg>"));
	char *run = section(html, "run");
	ASSERT_CONTAINS(run, "NVIDIA H200");
	ASSERT_CONTAINS(run, "0.050 s");
	free(run);
	char *tl = section(html, "timeline");
	ASSERT_CONTAINS(tl, "rank0/gpu0 stream 7");
	ASSERT_CONTAINS(tl, "rank0/gpu0 stream 13");
	ASSERT_CONTAINS(tl, "9 kernels, 3 copies");
	/* the whole run, then one iteration zoomed (the second of three: numbered 1, as gputap analyze
	 * numbers iterations from 0), with its rank's streams only */
	ASSERT_EQ_INT(count(tl, "<svg"), 2);
	ASSERT_CONTAINS(tl, "iteration 1 of rank0, its streams only");
	free(tl);
	char *cl = section(html, "classes");
	ASSERT_CONTAINS(cl, ">gemm<");
	ASSERT_CONTAINS(cl, "nccl (communication)");
	free(cl);
	char *lib = section(html, "library");
	ASSERT_CONTAINS(lib, "25.0");
	ASSERT_CONTAINS(lib, "gain of the best algorithm");
	free(lib);
	free(html);
}

TEST(report_escapes_kernel_names_in_trace)
{
	const char *dir = gt_test_tmpdir();
	make_trace(dir, 0);
	char *html = report(dir, 0);
	ASSERT(html);
	ASSERT(!strstr(html, "<script>"));
	/* the kernel name itself is not printed raw anywhere */
	ASSERT(!strstr(html, "alert(1)</script>"));
	free(html);
}

TEST(report_partial_dirs_say_what_is_missing)
{
	/* a run directory with nothing in it but an empty libs/ (an empty folder is not a run:
	 * trace/rundir.h): every section present, each says it has no data */
	const char *dir = gt_test_tmpdir();
	char libs[4200];
	snprintf(libs, sizeof(libs), "%s/libs", dir);
	mkdir(libs, 0755);
	char *html = report(dir, 0);
	ASSERT(html);
	const char *secs[] = {"run", "timeline", "classes", "iterations", "power", "library"};
	for (size_t i = 0; i < 6; i++) {
		char *s = section(html, secs[i]);
		ASSERT(s);
		ASSERT_CONTAINS(s, "No data");
		ASSERT(!strstr(s, "<svg"));
		free(s);
	}
	ASSERT_CONTAINS(html, "run.json not found");
	ASSERT(unbalanced(html) == NULL);
	ASSERT_CONTAINS(html, "library_trace.csv not found");
	free(html);

	/* only madengine's sampler CSVs */
	char sub[4096];
	snprintf(sub, sizeof(sub), "%s/madengine", dir);
	mkdir(sub, 0755);
	const char pw[] = "time,Power(Watt) GPU0,Power(Watt) GPU1\n0.0,100,90\n0.1,250,240\n0.2,300,120\n";
	const char vr[] = "time,vram(%) GPU0\n0.0,10\n0.1,40\n";
	gt_test_write_file(sub, "gpu_info_power_profiler_output.csv", pw, strlen(pw));
	gt_test_write_file(sub, "gpu_info_vram_profiler_output.csv", vr, strlen(vr));
	html = report(sub, 0);
	ASSERT(html);
	char *s = section(html, "power");
	ASSERT_EQ_INT(count(s, "<svg"), 2);
	ASSERT_CONTAINS(s, "power gpu1");
	ASSERT_CONTAINS(s, "gpu_info_power_profiler_output.csv");
	free(s);
	free(html);
}

TEST(report_big_trace_stays_small)
{
	const char *dir = gt_test_tmpdir();
	make_trace(dir, 200000);
	size_t len = 0;
	char *html = report(dir, 0);
	ASSERT(html);
	len = strlen(html);
	/* 200k kernels on 3 streams: at most one rectangle per pixel column and lane */
	ASSERT(len < 400000);
	ASSERT_CONTAINS(html, "200009 kernels");
	free(html);
}

TEST(report_not_a_dir)
{
	char *e = report("/nonexistent/gputap-run", -1);
	ASSERT(e);
	ASSERT_CONTAINS(e, "/nonexistent/gputap-run");
	free(e);
}

static void memrec(struct gt_trace_writer *w, uint8_t op, uint32_t dev, uint64_t ts, uint64_t addr, uint64_t bytes)
{
	struct gt_rec_memory m;
	memset(&m, 0, sizeof(m));
	m.h.type = GT_REC_MEMORY;
	m.h.size = sizeof(m);
	m.op = op;
	m.device = dev;
	m.ts_ns = ts;
	m.address = addr;
	m.bytes = op == GT_MEM_ALLOC ? bytes : 0; /* frees name only the address, as CUPTI's may */
	gt_tw_write(w, &m, sizeof(m), 1);
}

/* Memory on GPUs 17 and 40 (a 64-GPU node's numbers) is plotted like GPU 0's. */
TEST(report_memory_of_devices_past_16)
{
	const char *dir = gt_test_tmpdir();
	char p[4096];
	snprintf(p, sizeof(p), "%s/rank0", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/rank0/trace.gtr", dir);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, p, "rank0", "testhost", 42, T0, 0), 0);
	uint32_t k = add_str(&w, 1, "gemm");
	kernel(&w, k, 7, T0 + 1000, T0 + 2000);
	const uint32_t devs[] = {0, 17, 40};
	for (int i = 0; i < 3; i++) {
		for (uint64_t a = 1; a <= 1000; a++)
			memrec(&w, GT_MEM_ALLOC, devs[i], T0 + a * 10, (uint64_t)(devs[i] + 1) << 32 | a << 12, 1 << 20);
		for (uint64_t a = 1; a <= 1000; a++) /* freed in allocation order */
			memrec(&w, GT_MEM_FREE, devs[i], T0 + 20000 + a * 10, (uint64_t)(devs[i] + 1) << 32 | a << 12, 0);
	}
	ASSERT_EQ_INT(gt_tw_close(&w, T0 + 100000, 0, 0, 0), 0);
	char *html = report(dir, 0);
	ASSERT(html);
	char *pw = section(html, "power");
	ASSERT(pw);
	ASSERT_CONTAINS(pw, "rank0 gpu0");
	ASSERT_CONTAINS(pw, "rank0 gpu17");
	ASSERT_CONTAINS(pw, "rank0 gpu40");
	ASSERT(!strstr(pw, "left out"));
	free(pw);
	free(html);
}

/* SM busy is a percentage: drawn on 0-100 even when the GPU was barely busy (1 %), never on an axis
 * that makes 1 % look like a full plot. */
TEST(report_sm_busy_axis_is_0_to_100)
{
	const char *dir = gt_test_tmpdir();
	make_trace(dir, 0);
	char s[4096] = "time_ns,device,power_W,energy_J,mem_used_MiB,mem_total_MiB,sm_util_pct,mem_util_pct,"
		       "sm_clock_MHz,temperature_C\n";
	for (int i = 0; i < 10; i++) {
		char l[256];
		snprintf(l, sizeof(l), "%llu,0,100,,1000,143771,%d,,,\n", (unsigned long long)(T0 + (uint64_t)i * 2500000),
			 i % 2);
		strcat(s, l);
	}
	gt_test_write_file(dir, "gpu_samples.csv", s, strlen(s));
	char *html = report(dir, 0);
	ASSERT(html);
	const char *sm = strstr(html, "SM busy (sampled)");
	ASSERT(sm);
	const char *end = strstr(sm, "</svg>");
	ASSERT(end);
	char *svg = strndup(sm, (size_t)(end - sm));
	ASSERT_CONTAINS(svg, "class=\"yt\">100</text>");
	ASSERT_CONTAINS(svg, "class=\"yt\">0</text>");
	free(svg);
	free(html);
}
