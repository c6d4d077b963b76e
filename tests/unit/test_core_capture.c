#include "test.h"

#include "core/capture.h"

#define S 1000000000ull

TEST(capture_spec_parse_and_describe)
{
	struct gt_capture c;
	char err[256], buf[512];
	ASSERT_EQ_INT(gt_capture_parse(&c, "nvtx:train_step@100-110; cudaProfilerApi;time:30+5;trigger", err, sizeof err), 0);
	ASSERT_EQ_INT(c.n, 4);
	ASSERT_EQ_INT(c.w[0].kind, GT_CAP_NVTX);
	ASSERT_EQ_STR(c.w[0].name, "train_step");
	ASSERT_EQ_INT(c.w[0].first, 100);
	ASSERT_EQ_INT(c.w[0].last, 110);
	ASSERT_EQ_INT(c.w[1].kind, GT_CAP_PROFILER_API);
	ASSERT_EQ_INT(c.w[2].delay_ns, 30 * S);
	ASSERT_EQ_INT(c.w[2].dur_ns, 5 * S);
	ASSERT_EQ_INT(c.w[3].kind, GT_CAP_TRIGGER);
	ASSERT_EQ_STR(gt_capture_describe(&c, buf, sizeof buf), "nvtx:train_step@100-110;cudaProfilerApi;time:30+5;trigger");
	ASSERT_EQ_INT(gt_capture_parse(&c, "nvtx:ProfilerStep#*@3-", err, sizeof err), 0);
	ASSERT(c.w[0].prefix);
	ASSERT_EQ_INT(c.w[0].last, 0);
	ASSERT_EQ_STR(gt_capture_describe(&c, buf, sizeof buf), "nvtx:ProfilerStep#*@3-");
	ASSERT_EQ_INT(gt_capture_parse(&c, "nvtx:step", err, sizeof err), 0);
	ASSERT_EQ_INT(c.w[0].first, 1);
	ASSERT_EQ_INT(c.w[0].last, 1);
	ASSERT_EQ_INT(gt_capture_parse(&c, "time:1.5s+250ms", err, sizeof err), 0);
	ASSERT_EQ_INT(c.w[0].delay_ns, 1500000000ull);
	ASSERT_EQ_INT(c.w[0].dur_ns, 250000000ull);
}

TEST(capture_spec_errors_name_the_part)
{
	struct gt_capture c;
	char err[256];
	const char *bad[] = {"", ";", "nvtx:", "nvtx:x@0", "nvtx:x@5-3", "nvtx:x@a", "time:", "time:-1", "time:5+0",
			     "time:5+x", "cudaprofilerapi", "window:3", "time:1e300"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (gt_capture_parse(&c, bad[i], err, sizeof err) != -1)
			GT_FAIL_AT("accepted bad spec '%s'", bad[i]);
		if (!err[0])
			GT_FAIL_AT("no message for '%s'", bad[i]);
	}
	ASSERT_EQ_INT(gt_capture_parse(&c, "nvtx:a;window:3", err, sizeof err), -1);
	ASSERT(strstr(err, "'window:3'"));
	char many[1024] = "";
	for (int i = 0; i < 17; i++)
		strcat(many, "cudaProfilerApi;");
	ASSERT_EQ_INT(gt_capture_parse(&c, many, err, sizeof err), -1);
	ASSERT(strstr(err, "at most 16"));
}

TEST(capture_nvtx_window_opens_at_first_closes_at_last)
{
	struct gt_capture c;
	ASSERT_EQ_INT(gt_capture_parse(&c, "nvtx:step@3-4", NULL, 0), 0);
	uint64_t t = 0, key = 0;
	int on = 0;
	for (int it = 1; it <= 6; it++) {
		on += gt_capture_range_open(&c, "other", ++key, 1, ++t);
		gt_capture_range_close(&c, key, 1, ++t);
		uint64_t k = ++key;
		int d = gt_capture_range_open(&c, "step", k, 1, ++t);
		on += d;
		ASSERT_EQ_INT(d, it == 3 ? 1 : 0);
		on += gt_capture_range_open(&c, "step-inner", ++key, 0, ++t); /* not a match: exact names */
		on += gt_capture_range_close(&c, key, 0, ++t);
		ASSERT_EQ_INT(gt_capture_on(&c), it == 3 || it == 4);
		d = gt_capture_range_close(&c, k, 1, ++t);
		on += d;
		ASSERT_EQ_INT(d, it == 4 ? -1 : 0);
	}
	ASSERT_EQ_INT(on, 0);
	ASSERT_EQ_INT(c.w[0].state, GT_CAP_DONE);
	ASSERT(!gt_capture_pending(&c));
}

TEST(capture_prefix_profiler_and_overlap)
{
	struct gt_capture c;
	ASSERT_EQ_INT(gt_capture_parse(&c, "nvtx:ProfilerStep#*@2-;cudaProfilerApi", NULL, 0), 0);
	ASSERT_EQ_INT(gt_capture_range_open(&c, "ProfilerStep#0", 1, 1, 1), 0);
	ASSERT_EQ_INT(gt_capture_range_close(&c, 1, 1, 2), 0);
	ASSERT_EQ_INT(gt_capture_profiler(&c, 1, 3), 1); /* profiler window opens the trace */
	ASSERT_EQ_INT(gt_capture_range_open(&c, "ProfilerStep#1", 2, 1, 4), 0); /* second window, trace already on */
	ASSERT_EQ_INT(c.open, 2);
	ASSERT_EQ_INT(gt_capture_profiler(&c, 0, 5), 0); /* one closes, the nvtx one ("@2-") stays */
	ASSERT(gt_capture_on(&c));
	ASSERT_EQ_INT(gt_capture_profiler(&c, 1, 6), 0); /* profiler windows repeat */
	ASSERT_EQ_INT(c.w[1].repeat, 2);
	ASSERT_EQ_INT(gt_capture_close_all(&c, 7), -1);
	ASSERT(!gt_capture_on(&c));
}

TEST(capture_time_and_trigger_windows)
{
	struct gt_capture c;
	ASSERT_EQ_INT(gt_capture_parse(&c, "time:2+1;trigger", NULL, 0), 0);
	c.start_ns = 10 * S;
	ASSERT_EQ_INT(gt_capture_tick(&c, 11 * S), 0);
	ASSERT_EQ_INT(gt_capture_tick(&c, 12 * S), 1);
	ASSERT_EQ_INT(gt_capture_tick(&c, 12 * S + 5), 0);
	ASSERT_EQ_INT(gt_capture_tick(&c, 13 * S), -1);
	ASSERT(gt_capture_pending(&c)); /* the trigger may still come */
	/* a trigger for 2 iterations: armed, it opens with the next top-level range (whole
	 * iterations); top-level closes count, nested ones do not */
	ASSERT_EQ_INT(gt_capture_trigger(&c, 0, 2, 20 * S), 0);
	ASSERT_EQ_INT(c.n, 2); /* reused the spec's placeholder */
	ASSERT(!gt_capture_on(&c));
	ASSERT_EQ_INT(gt_capture_range_close(&c, 6, 1, 20 * S + 1), 0); /* the iteration under way: not counted */
	ASSERT_EQ_INT(gt_capture_range_open(&c, "inner", 7, 0, 20 * S + 2), 0);
	ASSERT_EQ_INT(gt_capture_range_open(&c, "iter", 8, 1, 20 * S + 3), 1);
	ASSERT_EQ_INT(gt_capture_range_close(&c, 7, 0, 21 * S), 0);
	ASSERT_EQ_INT(gt_capture_range_close(&c, 8, 1, 22 * S), 0);
	ASSERT_EQ_INT(gt_capture_range_close(&c, 9, 1, 23 * S), -1);
	/* a timed trigger gets a new slot */
	ASSERT_EQ_INT(gt_capture_trigger(&c, S, 0, 30 * S), 1);
	ASSERT_EQ_INT(c.n, 3);
	ASSERT_EQ_INT(gt_capture_tick(&c, 31 * S), -1);
	ASSERT_EQ_INT(c.windows_opened, 3);
	while (c.n < GT_CAP_MAX)
		ASSERT_EQ_INT(gt_capture_trigger(&c, S, 0, 40 * S) >= 0, 1);
	ASSERT_EQ_INT(gt_capture_trigger(&c, S, 0, 40 * S), -2);
}
