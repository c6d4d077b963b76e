/* What the summary and the report say about launch hold, from a written trace. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "trace/trace_io.h"
#include "export/holdstat.h"
#include "export/export.h"
#include "test.h"

enum { S_LAUNCH = 1, S_KERN, S_FULL, S_TIMER, S_COPY_API, S_COPY, S_HELD, S_BATCH, S_TIMEOUT, S_NH, S_NH_CAP, S_NH_PT, S_FAILED };

static void str(struct gt_trace_writer *w, uint32_t id, const char *s)
{
	gt_tw_string(w, id, s, strlen(s));
}

static void api(struct gt_trace_writer *w, uint64_t start, uint64_t end, uint64_t corr, int held)
{
	struct gt_rec_api a;
	memset(&a, 0, sizeof(a));
	a.h.type = GT_REC_API;
	a.h.size = sizeof(a);
	a.h.tid = 7;
	a.name_id = S_LAUNCH;
	a.domain = GT_DOM_DRIVER;
	a.copy_kind = -1;
	a.flags = held ? GT_API_HELD : 0;
	a.start_ns = start;
	a.end_ns = end;
	a.corr_id = corr;
	gt_tw_write(w, &a, sizeof(a), 1);
}

static void kernel(struct gt_trace_writer *w, uint64_t start, uint64_t corr)
{
	struct gt_rec_kernel k;
	memset(&k, 0, sizeof(k));
	k.h.type = GT_REC_KERNEL;
	k.h.size = sizeof(k);
	k.name_id = S_KERN;
	k.start_ns = start;
	k.end_ns = start + 1000;
	k.corr_id = corr;
	gt_tw_write(w, &k, sizeof(k), 1);
}

static void hold(struct gt_trace_writer *w, int kind, uint64_t s, uint64_t e, uint64_t corr, uint64_t batch,
		 uint32_t count, uint32_t reason, uint32_t api_id)
{
	struct gt_rec_hold x;
	memset(&x, 0, sizeof(x));
	x.h.type = GT_REC_HOLD;
	x.h.size = sizeof(x);
	x.h.tid = 7;
	x.kind = (uint8_t)kind;
	x.start_ns = s;
	x.end_ns = e;
	x.corr_id = corr;
	x.batch = batch;
	x.count = count;
	x.reason_id = reason;
	x.api_id = api_id;
	gt_tw_write(w, &x, sizeof(x), 1);
}

static void counter(struct gt_trace_writer *w, uint32_t name, double v)
{
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	c.name_id = name;
	c.device = UINT32_MAX;
	c.ts_ns = 1;
	c.value = v;
	gt_tw_write(w, &c, sizeof(c), 1);
}

/* Five held launches in two releases (4 by a full batch, 1 by a copy), one not held. */
static const char *write_trace(const char *dir)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/trace.gtr", dir);
	struct gt_trace_writer w;
	if (gt_tw_open(&w, path, "rank0", "h", 1, 1000, 0) < 0)
		return NULL;
	const char *names[] = {"cuLaunchKernel", "relu", "full", "timer", "cuMemcpyDtoH_v2", "copy", "hold.held",
			       "hold.batch", "hold.timeout_us", "hold.not_held", "hold.not_held.capture",
			       "hold.not_held.per_thread", "hold.failed"};
	for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		str(&w, i + 1, names[i]);
	/* launch k queued at 10000*k, issued at 10000*k + 5000 (batch 1) or 60000 (batch 2); kernel 2 us later */
	for (uint64_t k = 1; k <= 4; k++) {
		api(&w, 10000 * k - 100, 10000 * k, k, 1);
		hold(&w, GT_HOLD_REC_LAUNCH, 10000 * k, 45000, k, 1, 0, 0, 0);
		kernel(&w, 45000 + 2000 * k, k);
	}
	hold(&w, GT_HOLD_REC_RELEASE, 44000, 46000, 0, 1, 4, S_FULL, 0);
	api(&w, 49900, 50000, 5, 1);
	hold(&w, GT_HOLD_REC_LAUNCH, 50000, 60000, 5, 2, 0, 0, 0);
	hold(&w, GT_HOLD_REC_RELEASE, 59000, 61000, 0, 2, 1, S_COPY, S_COPY_API);
	kernel(&w, 63000, 5);
	api(&w, 70000, 71000, 6, 0); /* not held: 9 us to its kernel */
	kernel(&w, 80000, 6);
	counter(&w, S_HELD, 5);
	counter(&w, S_BATCH, 4);
	counter(&w, S_TIMEOUT, 1000);
	counter(&w, S_NH, 3);
	counter(&w, S_NH_CAP, 2);
	counter(&w, S_NH_PT, 1);
	counter(&w, S_FAILED, 0);
	gt_tw_close(&w, 100000, 0, 0, 0);
	return path;
}

static char *summary_of(const char *rundir, const char *path)
{
	char *mem = NULL, err[512] = "";
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	const char *paths[] = {path};
	int rc = gt_export_summary(f, rundir, paths, 1, err, sizeof(err));
	fclose(f);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		free(mem);
		return NULL;
	}
	return mem;
}

TEST(export_holdstat_from_a_trace)
{
	const char *t = write_trace(gt_test_tmpdir());
	ASSERT(t);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, t), 0);
	struct gt_holdstat s;
	gt_holdstat_init(&s);
	struct gt_trace_visitor v = {&gt_holdstat_ops, &s};
	char err[256] = "";
	ASSERT_EQ_INT(gt_trace_visit(&r, &v, 1, err, sizeof(err)), 0);
	gt_tr_close(&r);
	ASSERT_EQ_INT(gt_holdstat_end_trace(&s), 0);
	gt_holdstat_sort(&s);
	ASSERT_EQ_INT(s.seen, 1);
	ASSERT_EQ_U64(s.held, 5);
	ASSERT_EQ_U64(s.not_held, 3);
	ASSERT_EQ_U64(s.refused[GT_HOLD_NO_CAPTURE], 2);
	ASSERT_EQ_U64(s.refused[GT_HOLD_NO_PER_THREAD], 1);
	ASSERT_EQ_U64(s.releases, 2);
	ASSERT_EQ_U64(s.released, 5);
	ASSERT_EQ_U64(s.max_batch, 4);
	ASSERT_EQ_INT(s.batch, 4);
	ASSERT_EQ_INT(s.ntrig, 2);
	ASSERT_EQ_STR(s.trig[0].name, "batch full");
	ASSERT_EQ_STR(s.trig[1].name, "cuMemcpyDtoH_v2");
	/* held: kernel start - end of the launch call; from release: kernel start - issue */
	ASSERT_EQ_INT(s.lat_held.n, 5);
	ASSERT_EQ_INT(s.lat_not.n, 1);
	ASSERT_NEAR(GT_VEC_AT(&s.lat_not, double, 0), 9.0, 1e-9);
	/* held latencies: 37, 29, 21, 13 (batch 1) and 13 (batch 2) us; from release 2,4,6,8 and 3 */
	ASSERT_NEAR(gt_holdstat_at(&s.lat_held, 0.5), 21.0, 1e-9);
	ASSERT_NEAR(gt_holdstat_at(&s.lat_held, 1.0), 37.0, 1e-9);
	ASSERT_NEAR(gt_holdstat_at(&s.lat_rel, 0.0), 2.0, 1e-9);
	ASSERT_NEAR(gt_holdstat_at(&s.lat_rel, 0.5), 4.0, 1e-9);
	gt_holdstat_free(&s);
}

TEST(export_summary_shows_launch_hold)
{
	ASSERT(chdir(gt_test_tmpdir()) == 0);
	ASSERT(mkdir("run", 0755) == 0 && mkdir("run/rank0", 0755) == 0);
	const char *t = write_trace("run/rank0");
	char *s = summary_of("run", t);
	ASSERT(s);
	ASSERT_CONTAINS(s, "\nLaunch hold (batches of 4, released after 1000 us at most)\n");
	ASSERT_CONTAINS(s, "  launches held 5, not held 3: stream capture 2, per-thread stream 1\n");
	ASSERT_CONTAINS(s, "  releases 2: batch full 1, cuMemcpyDtoH_v2 1\n");
	ASSERT_CONTAINS(s, "  batch size median 4, max 4; failed when issued 0\n");
	ASSERT_CONTAINS(s, "  launch to kernel start, us, median (p95):\n"
			   "    held 21.0 (37.0), from their release 4.0 (8.0); not held 9.0 (9.0)\n");
	for (const char *p = s, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		ASSERT((nl - p) <= 80);
	}
	free(s);
}

TEST(export_summary_without_hold_says_nothing_of_it)
{
	ASSERT(chdir(gt_test_tmpdir()) == 0);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, "trace.gtr", "pid1", "h", 1, 1000, 0), 0);
	str(&w, S_LAUNCH, "cuLaunchKernel");
	str(&w, S_KERN, "relu");
	api(&w, 100, 200, 1, 0);
	kernel(&w, 300, 1);
	gt_tw_close(&w, 1000, 0, 0, 0);
	char *s = summary_of(NULL, "trace.gtr");
	ASSERT(s);
	ASSERT(!strstr(s, "Launch hold"));
	free(s);
}

static int occurrences(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

TEST(export_json_shows_held_spans_and_releases)
{
	const char *d = gt_test_tmpdir();
	const char *t = write_trace(d);
	char err[512];
	ASSERT_EQ_INT(gt_export_write_all(t, d, GT_EXPORT_JSON, err, sizeof(err)), 0);
	char p[4300];
	snprintf(p, sizeof(p), "%s/trace.json", d);
	char *s = gt_test_read_file(p, NULL);
	ASSERT(s);
	char perr[256];
	yajl_val v = yajl_tree_parse(s, perr, sizeof(perr));
	ASSERT(v != NULL);
	yajl_tree_free(v);
	/* each held launch: an async span on its thread, from queued to issued */
	ASSERT_EQ_INT(occurrences(s, "\"name\":\"held\",\"cat\":\"hold\",\"ph\":\"b\""), 5);
	ASSERT_EQ_INT(occurrences(s, "\"name\":\"held\",\"cat\":\"hold\",\"ph\":\"e\""), 5);
	ASSERT_CONTAINS(s, "\"id\":\"hold2-5\"");
	/* each release: a slice on the releasing thread, named by what released it */
	ASSERT_CONTAINS(s, "\"name\":\"hold release (full)\",\"cat\":\"hold\",\"ph\":\"X\"");
	ASSERT_CONTAINS(s, "\"name\":\"hold release (cuMemcpyDtoH_v2)\",\"cat\":\"hold\",\"ph\":\"X\"");
	ASSERT_CONTAINS(s, "\"launches\":4,\"release\":1");
	free(s);
}
