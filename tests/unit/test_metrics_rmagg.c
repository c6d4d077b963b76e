/* Range metrics without CUPTI: lists, modes, attribution, reductions, writers. */
#include "test.h"

#include <stdlib.h>

#include <yajl/yajl_tree.h>

#include "metrics/rmagg.h"
#include "gpu/cuprof.h"
#include "gpu/probe.h"

static const char *const M2[] = {"gpu__time_duration.sum", "smsp__inst_executed.sum"};
static const char *const U2[] = {"nsecond", "inst"};

static char *to_text(const struct gt_rm_agg *a, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	int rc = json ? gt_rm_agg_write_json(a, "kernel", f) : gt_rm_agg_write_csv(a, f);
	fclose(f);
	if (rc < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

TEST(rm_list_parses_commas_blanks_duplicates_and_default)
{
	struct gt_rm_list l;
	char err[256];
	ASSERT_EQ_INT(gt_rm_parse_list(" a__x.sum, b__y.avg.pct_of_peak_sustained_elapsed  a__x.sum,,", "--metrics", &l,
				       err, sizeof err),
		      0);
	ASSERT_EQ_INT(l.n, 2);
	ASSERT_EQ_STR(l.name[0], "a__x.sum");
	ASSERT_EQ_STR(l.name[1], "b__y.avg.pct_of_peak_sustained_elapsed");
	ASSERT_EQ_INT(gt_rm_parse_list(NULL, "GPUTAP_METRICS", &l, err, sizeof err), 0);
	ASSERT_EQ_INT(l.n, 4);
	ASSERT_EQ_STR(l.name[0], "gpu__time_duration.sum");
	ASSERT_EQ_INT(gt_rm_parse_list("", "GPUTAP_METRICS", &l, err, sizeof err), 0);
	ASSERT_EQ_INT(l.n, 4);
}

TEST(rm_list_rejects_what_is_not_a_metric_name)
{
	struct gt_rm_list l;
	char err[256];
	ASSERT_EQ_INT(gt_rm_parse_list("gpu__time_duration.sum,time;rm", "--metrics", &l, err, sizeof err), -1);
	ASSERT(strstr(err, "--metrics: 'time;rm' is not a metric name"));
	ASSERT(strstr(err, "gputap info --metrics"));
	ASSERT_EQ_INT(gt_rm_parse_list("inst_executed", "GPUTAP_METRICS", &l, err, sizeof err), -1);
	ASSERT(strstr(err, "GPUTAP_METRICS: 'inst_executed'"));
	ASSERT_EQ_INT(gt_rm_parse_list("__x.sum", "m", &l, err, sizeof err), -1);
	ASSERT_EQ_INT(gt_rm_parse_list(",, ,", "m", &l, err, sizeof err), -1);
	ASSERT(strstr(err, "no metric"));
	char many[4096] = "";
	for (int i = 0; i < GT_RM_MAX_METRICS + 1; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "a__m%d.sum,", i);
	ASSERT_EQ_INT(gt_rm_parse_list(many, "m", &l, err, sizeof err), -1);
	ASSERT(strstr(err, "more than 32"));
}

TEST(rm_mode_words_and_additivity)
{
	ASSERT_EQ_INT(gt_rm_parse_mode(NULL), GT_RM_AUTO);
	ASSERT_EQ_INT(gt_rm_parse_mode("auto"), GT_RM_AUTO);
	ASSERT_EQ_INT(gt_rm_parse_mode("kernel"), GT_RM_KERNEL);
	ASSERT_EQ_INT(gt_rm_parse_mode("per-range"), GT_RM_RANGE);
	ASSERT_EQ_INT(gt_rm_parse_mode("ranges"), -1);
	ASSERT_EQ_STR(gt_rm_mode_name(GT_RM_KERNEL), "per-kernel");
	ASSERT(gt_rm_metric_additive("smsp__inst_executed.sum"));
	ASSERT(gt_rm_metric_additive("gpu__time_duration.sum"));
	ASSERT(!gt_rm_metric_additive("sm__throughput.avg.pct_of_peak_sustained_elapsed"));
	ASSERT(!gt_rm_metric_additive("dram__bytes_read.sum.per_second"));
	ASSERT(!gt_rm_metric_additive("gpu__time_duration.max"));
	ASSERT(!gt_rm_metric_additive("smsp__inst_executed"));
}

TEST(rm_auto_mode_follows_passes_and_additivity)
{
	struct gt_rm_list l;
	char err[256], why[256];
	gt_rm_parse_list("gpu__time_duration.sum,smsp__inst_executed.sum", "m", &l, err, sizeof err);
	ASSERT_EQ_INT(gt_rm_choose_mode(GT_RM_AUTO, 1, &l, why, sizeof why), GT_RM_RANGE);
	ASSERT_EQ_INT(gt_rm_choose_mode(GT_RM_AUTO, 3, &l, why, sizeof why), GT_RM_KERNEL);
	ASSERT(strstr(why, "3 passes"));
	ASSERT_EQ_INT(gt_rm_choose_mode(GT_RM_KERNEL, 1, &l, why, sizeof why), GT_RM_KERNEL);
	ASSERT_EQ_INT(gt_rm_choose_mode(GT_RM_RANGE, 2, &l, why, sizeof why), -1);
	ASSERT(strstr(why, "needs 2"));
	gt_rm_parse_list("gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed", "m", &l, err,
			 sizeof err);
	ASSERT_EQ_INT(gt_rm_choose_mode(GT_RM_AUTO, 1, &l, why, sizeof why), GT_RM_KERNEL);
	ASSERT(strstr(why, "sm__throughput.avg.pct_of_peak_sustained_elapsed"));
	ASSERT_EQ_INT(gt_rm_choose_mode(GT_RM_RANGE, 1, &l, why, sizeof why), GT_RM_RANGE);
	ASSERT(strstr(why, "one piece"));
}

/*
 * Two threads: T1 runs "train" > "step" twice with kernels in each step, one
 * kernel directly in "train", and one kernel before any range; T2 runs its
 * own "loader" range at the same time with one kernel.
 */
static void build_kernel_case(struct gt_rm_agg *a)
{
	gt_rm_agg_init(a, GT_RM_KERNEL, 2, M2, U2);
	double v[2];
	gt_rm_agg_kernel(a, -1); /* before any range */
	v[0] = 5, v[1] = 50;
	gt_rm_agg_sample(a, -1, v);
	int64_t train = gt_rm_agg_open(a, -1, "train", 5);
	int64_t loader = gt_rm_agg_open(a, -1, "loader", 6); /* T2: not inside T1's train */
	for (int it = 0; it < 2; it++) {
		int64_t step = gt_rm_agg_open(a, train, "step", 4);
		for (int k = 1; k <= 3; k++) {
			gt_rm_agg_kernel(a, step);
			v[0] = 10.0 * k + it, v[1] = 100.0 * k;
			gt_rm_agg_sample(a, step, v);
		}
		if (it == 0) {
			gt_rm_agg_kernel(a, loader);
			v[0] = 7, v[1] = 70;
			gt_rm_agg_sample(a, loader, v);
		}
		gt_rm_agg_close(a, step);
	}
	gt_rm_agg_kernel(a, train);
	v[0] = 1, v[1] = 1;
	gt_rm_agg_sample(a, train, v);
	gt_rm_agg_close(a, loader);
	gt_rm_agg_close(a, train);
}

TEST(rm_kernels_count_in_innermost_range_and_parents_none_and_threads)
{
	struct gt_rm_agg a;
	build_kernel_case(&a);
	ASSERT_EQ_INT(a.npaths, 4); /* (none), train, loader, train/step */
	ASSERT_EQ_INT(a.kernels, 9);
	ASSERT_EQ_STR(gt_rm_agg_path(&a, 3), "train/step");
	ASSERT_EQ_STR(gt_rm_agg_path(&a, -1), "(none)");
	/* occurrences: 0 (none), 1 train, 2 loader, 3 step#1, 4 step#2 */
	ASSERT_EQ_INT(a.occs[3].occurrence, 1);
	ASSERT_EQ_INT(a.occs[4].occurrence, 2);
	ASSERT_EQ_INT(a.occs[1].kernels, 7);
	ASSERT_EQ_INT(a.occs[2].kernels, 1);
	ASSERT_EQ_INT(a.occs[0].kernels, 1);
	struct gt_rm_stat s;
	gt_rm_agg_occ_stat(&a, 4, 0, &s); /* step #2: 11, 21, 31 */
	ASSERT_EQ_INT(s.n, 3);
	ASSERT(s.sum == 63 && s.max == 31 && s.min == 11);
	gt_rm_agg_occ_stat(&a, 1, 0, &s); /* train: both steps and its own kernel, not the loader's */
	ASSERT_EQ_INT(s.n, 7);
	ASSERT(s.sum == 60 + 63 + 1 && s.max == 31 && s.min == 1);
	uint64_t k;
	gt_rm_agg_path_stat(&a, 3, 1, &s, &k); /* every step kernel: 100,200,300 twice */
	ASSERT_EQ_INT(k, 6);
	ASSERT(s.sum == 1200 && s.max == 300 && s.min == 100 && s.n == 6);
	gt_rm_agg_free(&a);
}

TEST(rm_range_mode_reports_occurrence_values_and_reduces_over_occurrences)
{
	struct gt_rm_agg a;
	gt_rm_agg_init(&a, GT_RM_RANGE, 2, M2, U2);
	double v[2];
	int64_t it[3];
	for (int i = 0; i < 3; i++) {
		it[i] = gt_rm_agg_open(&a, -1, "iter", 4);
		gt_rm_agg_kernel(&a, it[i]);
		/* two stretches: before and after a child range */
		v[0] = 100.0 * (i + 1), v[1] = 1000;
		gt_rm_agg_sample(&a, it[i], v);
		int64_t c = gt_rm_agg_open(&a, it[i], "child", 5);
		v[0] = 10, v[1] = NAN; /* not measured for the second metric */
		gt_rm_agg_sample(&a, c, v);
		gt_rm_agg_close(&a, c);
		gt_rm_agg_close(&a, it[i]);
	}
	v[0] = 1, v[1] = 2;
	gt_rm_agg_sample(&a, -1, v); /* the gap after the last range */
	char *csv = to_text(&a, 0);
	ASSERT(csv);
	/* per name: over the occurrences' values 110, 210, 310 */
	ASSERT(strstr(csv, "per-range,iter,iter,0,all,3,gpu__time_duration.sum,nsecond,630,310,210,110,yes\n"));
	/* per occurrence: the value only */
	ASSERT(strstr(csv, "per-range,iter,iter,0,2,1,gpu__time_duration.sum,nsecond,210,,,,yes\n"));
	ASSERT(strstr(csv, "per-range,iter/child,child,1,1,0,smsp__inst_executed.sum,inst,,,,,yes\n"));
	ASSERT(strstr(csv, "per-range,iter,iter,0,1,1,smsp__inst_executed.sum,inst,1000,,,,yes\n"));
	ASSERT(strstr(csv, "per-range,(none),(none),0,1,0,gpu__time_duration.sum,nsecond,1,,,,yes\n"));
	free(csv);
	gt_rm_agg_free(&a);
}

TEST(rm_csv_exact_text_per_kernel)
{
	struct gt_rm_agg a;
	const char *const m1[] = {"smsp__inst_executed.sum"};
	const char *const u1[] = {"inst"};
	gt_rm_agg_init(&a, GT_RM_KERNEL, 1, m1, u1);
	int64_t r = gt_rm_agg_open(&a, -1, "a,\"b\"", 5);
	double v = 3;
	gt_rm_agg_kernel(&a, r);
	gt_rm_agg_sample(&a, r, &v);
	v = 4;
	gt_rm_agg_kernel(&a, r);
	gt_rm_agg_sample(&a, r, &v);
	int64_t e = gt_rm_agg_open(&a, -1, "empty", 5);
	gt_rm_agg_close(&a, e);
	char *csv = to_text(&a, 0);
	ASSERT(csv);
	ASSERT_EQ_STR(csv, "mode,path,name,level,occurrence,kernels,metric,unit,sum,max,mean,min,exact\n"
			   "per-kernel,\"a,\"\"b\"\"\",\"a,\"\"b\"\"\",0,all,2,smsp__inst_executed.sum,inst,7,4,3.5,3,yes\n"
			   "per-kernel,\"a,\"\"b\"\"\",\"a,\"\"b\"\"\",0,1,2,smsp__inst_executed.sum,inst,7,4,3.5,3,yes\n"
			   "per-kernel,empty,empty,0,all,0,smsp__inst_executed.sum,inst,,,,,yes\n"
			   "per-kernel,empty,empty,0,1,0,smsp__inst_executed.sum,inst,,,,,yes\n");
	free(csv);
	gt_rm_agg_free(&a);
}

static yajl_val get(yajl_val v, const char *k1, const char *k2)
{
	const char *path[3] = {k1, k2, NULL};
	return yajl_tree_get(v, path, yajl_t_any);
}

TEST(rm_json_has_ranges_by_name_and_nulls)
{
	struct gt_rm_agg a;
	build_kernel_case(&a);
	a.dropped_ranges = 2;
	char *js = to_text(&a, 1);
	ASSERT(js);
	char perr[256];
	yajl_val root = yajl_tree_parse(js, perr, sizeof perr);
	if (!root)
		fprintf(stderr, "%s\n%s\n", perr, js);
	ASSERT(root);
	ASSERT_EQ_STR(YAJL_GET_STRING(get(root, "mode", NULL)), "per-kernel");
	ASSERT_EQ_STR(YAJL_GET_STRING(get(root, "replay", NULL)), "kernel");
	ASSERT_EQ_INT(YAJL_GET_INTEGER(get(root, "dropped_ranges", NULL)), 2);
	yajl_val ms = get(root, "metrics", NULL);
	ASSERT(YAJL_IS_ARRAY(ms) && ms->u.array.len == 2);
	ASSERT_EQ_STR(YAJL_GET_STRING(get(ms->u.array.values[1], "unit", NULL)), "inst");
	yajl_val rs = get(root, "ranges", NULL);
	ASSERT(YAJL_IS_ARRAY(rs) && rs->u.array.len == 5);
	yajl_val step2 = rs->u.array.values[4];
	ASSERT_EQ_STR(YAJL_GET_STRING(get(step2, "path", NULL)), "train/step");
	ASSERT_EQ_STR(YAJL_GET_STRING(get(step2, "name", NULL)), "step");
	ASSERT_EQ_INT(YAJL_GET_INTEGER(get(step2, "level", NULL)), 1);
	ASSERT_EQ_INT(YAJL_GET_INTEGER(get(step2, "occurrence", NULL)), 2);
	ASSERT_EQ_INT(YAJL_GET_INTEGER(get(step2, "kernels", NULL)), 3);
	yajl_val t = get(get(step2, "values", NULL), "gpu__time_duration.sum", NULL);
	ASSERT(YAJL_GET_DOUBLE(get(t, "sum", NULL)) == 63);
	ASSERT(YAJL_GET_DOUBLE(get(t, "mean", NULL)) == 21);
	ASSERT(YAJL_GET_DOUBLE(get(t, "min", NULL)) == 11);
	yajl_val bn = get(root, "by_name", NULL);
	ASSERT(YAJL_IS_ARRAY(bn) && bn->u.array.len == 4);
	yajl_val bstep = bn->u.array.values[3];
	ASSERT_EQ_INT(YAJL_GET_INTEGER(get(bstep, "occurrences", NULL)), 2);
	ASSERT_EQ_INT(YAJL_GET_INTEGER(get(bstep, "kernels", NULL)), 6);
	t = get(get(bstep, "values", NULL), "gpu__time_duration.sum", NULL);
	ASSERT(YAJL_GET_DOUBLE(get(t, "sum", NULL)) == 123);
	ASSERT(YAJL_GET_DOUBLE(get(t, "max", NULL)) == 31);
	ASSERT(YAJL_GET_DOUBLE(get(t, "mean", NULL)) == 20.5);
	yajl_tree_free(root);
	free(js);
	/* a range never measured: nulls, not zeros */
	gt_rm_agg_free(&a);
	gt_rm_agg_init(&a, GT_RM_KERNEL, 2, M2, U2);
	gt_rm_agg_close(&a, gt_rm_agg_open(&a, -1, "idle", 4));
	js = to_text(&a, 1);
	ASSERT(strstr(js, "\"gpu__time_duration.sum\":{\"sum\":null,\"max\":null,\"mean\":null,\"min\":null}"));
	free(js);
	gt_rm_agg_free(&a);
}

TEST(rm_kernel_csv_rows_demangle_and_quote)
{
	struct gt_rm_agg a;
	gt_rm_agg_init(&a, GT_RM_KERNEL, 2, M2, U2);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ASSERT(f);
	gt_rm_kernel_csv_header(&a, f);
	struct gt_rm_kinfo k = {7, "_Z6vecAddPKfS0_Pfi", "train/step", {4, 1, 1}, {256, 1, 1}, 13, 0, 4242};
	double v[2] = {2560, NAN};
	gt_rm_kernel_csv_row(&a, &k, v, f);
	fclose(f);
	ASSERT_EQ_STR(buf, "launch,kernel,range,grid,block,stream,device,thread,gpu__time_duration.sum (nsecond),"
			   "smsp__inst_executed.sum (inst)\n"
			   "7,\"vecAdd(float const*, float const*, float*, int)\",train/step,\"4,1,1\",\"256,1,1\",13,0,"
			   "4242,2560,\n");
	free(buf);
	gt_rm_agg_free(&a);
}

TEST(rm_align_by_order_then_by_name)
{
	const char *launch[] = {"_Z6vecAddPKfS0_Pfi", "scale_kernel", "_Z6vecAddPKfS0_Pfi"};
	int64_t map[3];
	const char *same[] = {"0", "1", "2"};
	ASSERT_EQ_INT(gt_rm_align(launch, 3, same, 3, map), 3);
	ASSERT(map[0] == 0 && map[1] == 1 && map[2] == 2);
	/* CUPTI made a range for work we did not see launched: skipped by name */
	const char *extra[] = {"vecAdd", "memset_internal", "scale_kernel", "vecAdd(float const*, float const*, float*, int)"};
	ASSERT_EQ_INT(gt_rm_align(launch, 3, extra, 4, map), 3);
	ASSERT(map[0] == 0 && map[1] == 2 && map[2] == 3);
	/* auto ranges are named by index: a missing index is a dropped range */
	const char *idx[] = {"0", "2"};
	ASSERT_EQ_INT(gt_rm_align(launch, 3, idx, 2, map), 2);
	ASSERT(map[0] == 0 && map[1] == -1 && map[2] == 1);
	/* a launch with no range (dropped): unmeasured, the rest still line up */
	const char *fewer[] = {"vecAdd", "vecAdd"};
	ASSERT_EQ_INT(gt_rm_align(launch, 3, fewer, 2, map), 2);
	ASSERT(map[0] == 0 && map[1] == -1 && map[2] == 1);
}

TEST(rm_units_as_nsight_compute_prints_them)
{
	char u[64];
	gt_cuprof_ncu_unit("nanosecond", u, sizeof u);
	ASSERT_EQ_STR(u, "ns");
	gt_cuprof_ncu_unit("instruction", u, sizeof u);
	ASSERT_EQ_STR(u, "inst");
	gt_cuprof_ncu_unit("byte", u, sizeof u);
	ASSERT_EQ_STR(u, "byte");
	gt_cuprof_ncu_unit("l2_sector/l1tex_request", u, sizeof u);
	ASSERT_EQ_STR(u, "sector/request");
	gt_cuprof_ncu_unit("gpc_cycle", u, sizeof u);
	ASSERT_EQ_STR(u, "cycle");
	gt_cuprof_ncu_unit("percent", u, sizeof u);
	ASSERT_EQ_STR(u, "%");
	gt_cuprof_ncu_unit("", u, sizeof u);
	ASSERT_EQ_STR(u, "");
}

TEST(rm_restricted_counters_one_message_with_the_fix)
{
	ASSERT_EQ_INT(gt_cuprof_code(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), GT_CUPROF_EPERM);
	ASSERT_EQ_INT(gt_cuprof_code(CUPTI_ERROR_INVALID_METRIC_NAME), GT_CUPROF_EINVAL);
	ASSERT_EQ_INT(gt_cuprof_code(CUPTI_SUCCESS), 0);
	ASSERT_EQ_INT(gt_cuprof_code(CUPTI_ERROR_UNKNOWN), GT_CUPROF_EFAIL);
	const char *m = gt_cuprof_perm_help();
	ASSERT(strstr(m, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
	ASSERT(strstr(m, "NVreg_RestrictProfilingToAdminUsers=0"));
	ASSERT(strstr(m, "CAP_SYS_ADMIN"));
	ASSERT(strstr(m, "the rest of the recording goes on"));
}

TEST(rm_no_cupti_library_is_one_clear_error)
{
	struct gt_cuprof p;
	char err[512] = "", probe[4096];
	setenv("CUDA_HOME", "/nonexistent", 1);
	/* a library path that does not exist is tried first; the system may still have CUPTI */
	setenv("GPUTAP_CUPTI_LIB", "/nonexistent/libcupti.so.13", 1);
	void *h = gt_cupti_open(probe, sizeof probe);
	int rc = gt_cuprof_load(&p, NULL, err, sizeof err);
	unsetenv("GPUTAP_CUPTI_LIB");
	if (!h) {
		ASSERT_EQ_INT(rc, GT_CUPROF_ENOLIB);
		ASSERT(strstr(err, "CUPTI") && strstr(err, "range metrics"));
	} else if (rc < 0) {
		ASSERT(strstr(err, probe) != NULL); /* the CUPTI it names is the one the tap finds */
	} else {
		ASSERT(p.cuptiRangeProfilerEnable != NULL && p.version > 0);
		ASSERT_EQ_STR(p.path, probe);
	}
}

TEST(rm_cupti_is_the_one_the_tap_finds)
{
	/* GPUTAP_CUPTI_LIB names a loadable library that is not CUPTI: the range-metrics engine takes it,
	 * as the tap's loader and gputap info do, and says what it lacks */
	struct gt_cuprof p;
	char err[512] = "", probe[4096];
	setenv("GPUTAP_CUPTI_LIB", "libz.so.1", 1);
	void *h = gt_cupti_open(probe, sizeof probe);
	int rc = gt_cuprof_load(&p, NULL, err, sizeof err);
	unsetenv("GPUTAP_CUPTI_LIB");
	ASSERT(h != NULL);
	ASSERT_EQ_STR(probe, "libz.so.1");
	ASSERT_EQ_INT(rc, GT_CUPROF_ENOLIB);
	ASSERT(strstr(err, "libz.so.1") != NULL);
}

TEST(rm_kernel_replay_only_for_several_passes_or_when_asked)
{
	ASSERT_EQ_INT(gt_rm_kernel_replay(1, NULL), 0); /* one pass: nothing to replay */
	ASSERT_EQ_INT(gt_rm_kernel_replay(1, ""), 0);
	ASSERT_EQ_INT(gt_rm_kernel_replay(1, "user"), 0);
	ASSERT_EQ_INT(gt_rm_kernel_replay(1, "kernel"), 1);
	ASSERT_EQ_INT(gt_rm_kernel_replay(8, NULL), 1); /* several passes: kernel replay restores memory */
	ASSERT_EQ_INT(gt_rm_kernel_replay(8, "user"), 1);
	ASSERT_EQ_INT(gt_rm_kernel_replay(2, "kernel"), 1);
}

TEST(rm_chunk_size_from_env_or_default)
{
	size_t cap = 0;
	ASSERT_EQ_INT(gt_rm_parse_chunk(NULL, 32, &cap), 0);
	ASSERT_EQ_INT(cap, 32);
	ASSERT_EQ_INT(gt_rm_parse_chunk("", 128, &cap), 0);
	ASSERT_EQ_INT(cap, 128);
	ASSERT_EQ_INT(gt_rm_parse_chunk("8", 32, &cap), 0);
	ASSERT_EQ_INT(cap, 8);
	ASSERT_EQ_INT(gt_rm_parse_chunk("100000", 32, &cap), 0);
	ASSERT_EQ_INT(cap, 100000);
	static const char *const bad[] = {"0", "-5", "100001", "12x", "x", " 8", "+8", "99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cap = 7;
		if (gt_rm_parse_chunk(bad[i], 32, &cap) != -1 || cap != 32)
			GT_FAIL_AT("'%s' gave cap %zu, expected -1 and the default", bad[i], cap);
	}
}

/* One rule for every mode: work launched on a thread with no open range (PyTorch's autograd
 * thread) counts in the ranges open on the other threads, each range and those around it once. */
TEST(rm_work_of_a_thread_without_range_counts_in_the_others_ranges_once)
{
	struct gt_rm_agg a;
	const char *const m1[] = {"smsp__inst_executed.sum"};
	const char *const u1[] = {"inst"};
	gt_rm_agg_init(&a, GT_RM_KERNEL, 1, m1, u1);
	/* main thread: step/backward open; a loader thread: load open, inside nothing */
	int64_t step = gt_rm_agg_open(&a, -1, "step", 4);
	int64_t bwd = gt_rm_agg_open(&a, step, "backward", 8);
	int64_t fwd = gt_rm_agg_open(&a, step, "forward", 7); /* a second thread, inside the same step */
	int64_t load = gt_rm_agg_open(&a, -1, "load", 4);
	double v = 100;
	int64_t set[3] = {bwd, fwd, load};
	gt_rm_agg_kernel_set(&a, set, 3);
	gt_rm_agg_sample_set(&a, set, 3, &v);
	ASSERT_EQ_U64(a.kernels, 1);
	ASSERT_EQ_U64(a.occs[step].kernels, 1); /* once, though two of the set are inside it */
	ASSERT_EQ_U64(a.occs[bwd].kernels, 1);
	ASSERT_EQ_U64(a.occs[fwd].kernels, 1);
	ASSERT_EQ_U64(a.occs[load].kernels, 1);
	struct gt_rm_stat s;
	gt_rm_agg_occ_stat(&a, (size_t)step, 0, &s);
	ASSERT(s.n == 1 && s.sum == 100);
	gt_rm_agg_occ_stat(&a, (size_t)load, 0, &s);
	ASSERT(s.n == 1 && s.sum == 100);
	/* no range anywhere: "(none)" */
	gt_rm_agg_kernel_set(&a, NULL, 0);
	gt_rm_agg_sample_set(&a, NULL, 0, &v);
	ASSERT_EQ_U64(a.occs[a.none].kernels, 1);
	gt_rm_agg_occ_stat(&a, (size_t)a.none, 0, &s);
	ASSERT(s.n == 1 && s.sum == 100);
	ASSERT_EQ_U64(a.occs[step].kernels, 1);
	gt_rm_agg_free(&a);
}

TEST(rm_inexact_values_say_so_on_every_row_and_value)
{
	struct gt_rm_agg a;
	const char *const m1[] = {"smsp__inst_executed.sum"};
	const char *const u1[] = {"inst"};
	gt_rm_agg_init(&a, GT_RM_RANGE, 1, m1, u1);
	a.inexact = "kernel tracing adds instructions";
	int64_t r = gt_rm_agg_open(&a, -1, "it", 2);
	double v = 5;
	gt_rm_agg_kernel(&a, r);
	gt_rm_agg_sample(&a, r, &v);
	char *csv = to_text(&a, 0);
	ASSERT(csv);
	ASSERT(strstr(csv, "per-range,it,it,0,all,1,smsp__inst_executed.sum,inst,5,5,5,5,no: kernel tracing adds instructions\n"));
	ASSERT(strstr(csv, "per-range,it,it,0,1,1,smsp__inst_executed.sum,inst,5,,,,no: kernel tracing adds instructions\n"));
	free(csv);
	char *j = to_text(&a, 1);
	ASSERT(j);
	ASSERT(strstr(j, "\"exact\":false,\"inexact\":\"kernel tracing adds instructions\""));
	ASSERT(strstr(j, "\"min\":null,\"exact\":false}"));
	free(j);
	a.inexact = NULL;
	j = to_text(&a, 1);
	ASSERT(j && strstr(j, "\"exact\":true") && !strstr(j, "\"exact\":false"));
	free(j);
	gt_rm_agg_free(&a);
}
