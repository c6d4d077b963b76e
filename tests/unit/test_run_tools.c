/* Tool stack: table lookup, --tools / --context parsing, stacking order, env merge, wrappers. */
#include "test.h"

#include <stdlib.h>

#include "run/tools.h"

static const char *no_env(const char *k)
{
	(void)k;
	return NULL;
}

/* Parse a context and build its plan; returns 0/-1 and the error text. */
static int plan_of(const char *json, struct gt_plan *p, char *err, size_t errlen)
{
	struct gt_tool_list l;
	if (gt_tools_parse_context(json, "--context", &l, err, errlen) < 0)
		return -1;
	return gt_plan_build(p, &l, "/runs/r1", no_env, err, errlen);
}

static int ctx_err(const char *json, char *err, size_t errlen)
{
	struct gt_tool_list l;
	int r = gt_tools_parse_context(json, "--context", &l, err, errlen);
	if (r == 0)
		gt_tools_free(&l);
	return r;
}

TEST(tools_table_lookup_and_aliases)
{
	ASSERT(gt_tool_find("kernel_trace") != NULL);
	ASSERT(gt_tool_find("power") == gt_tool_find("gpu_info_power_profiler"));
	ASSERT(gt_tool_find("vram") == gt_tool_find("gpu_info_vram_profiler"));
	ASSERT(gt_tool_find("vram") != gt_tool_find("power"));
	ASSERT(gt_tool_find("rocprof") == NULL);
	for (const struct gt_tool_def *d = gt_tool_table; d->name; d++)
		ASSERT(d->summary && *d->summary);
}

TEST(tools_list_parse)
{
	struct gt_tool_list l;
	char err[256];
	ASSERT_EQ_INT(gt_tools_parse_list("kernel_trace,power,gpu_info_vram_profiler", &l, err, sizeof(err)), 0);
	ASSERT_EQ_INT(l.n, 3);
	ASSERT_EQ_STR(l.t[0].def->name, "kernel_trace");
	ASSERT_EQ_STR(l.t[2].def->name, "vram");
	gt_tools_free(&l);
	ASSERT_EQ_INT(gt_tools_parse_list("power,bogus", &l, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "--tools: unknown tool 'bogus'");
	ASSERT_EQ_INT(gt_tools_parse_list(",", &l, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "empty list");
}

TEST(stack_order_setup_outermost_in_teardown_innermost_out)
{
	struct gt_plan p;
	char err[256], desc[1024];
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"kernel_trace\"},{\"name\":\"cudnn_trace\"},"
			      "{\"name\":\"cublas_trace\"}]}",
			      &p, err, sizeof(err)),
		      0);
	ASSERT_EQ_INT(gt_plan_describe(&p, desc, sizeof(desc)), 0);
	/* madengine: setup rocblas -> miopen -> rocprof, teardown rocprof -> miopen -> rocblas */
	ASSERT_EQ_STR(desc, "setup cublas_trace\nsetup cudnn_trace\nsetup kernel_trace\n"
			    "teardown kernel_trace\nteardown cudnn_trace\nteardown cublas_trace\n");
	ASSERT_EQ_INT(p.has_tap, 1);
	ASSERT_EQ_INT(p.has_liblog, 1);
	gt_plan_free(&p);
}

TEST(env_later_tool_wins_and_table_defaults)
{
	struct gt_plan p;
	char err[256];
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"nccl_trace\",\"env_vars\":{\"X\":\"inner\",\"NCCL_DEBUG\":\"WARN\"}},"
			      "{\"name\":\"cublas_trace\",\"env_vars\":{\"X\":\"outer\"}}]}",
			      &p, err, sizeof(err)),
		      0);
	ASSERT_EQ_STR(gt_plan_getenv(&p, "X"), "outer");
	/* a tool's env_vars override its own table defaults */
	ASSERT_EQ_STR(gt_plan_getenv(&p, "NCCL_DEBUG"), "WARN");
	ASSERT_EQ_STR(gt_plan_getenv(&p, "NCCL_DEBUG_SUBSYS"), "COLL");
	ASSERT_EQ_STR(gt_plan_getenv(&p, "NCCL_DEBUG_FILE"), "/runs/r1/libs/nccl.%h.%p.log");
	ASSERT_EQ_STR(gt_plan_getenv(&p, "CUBLAS_LOGINFO_DBG"), "1");
	ASSERT_EQ_STR(gt_plan_getenv(&p, "CUBLAS_LOGDEST_DBG"), "/runs/r1/libs/cublas.log");
	gt_plan_free(&p);
	/* the other way round, the other value */
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"cublas_trace\",\"env_vars\":{\"X\":\"a\"}},"
			      "{\"name\":\"nccl_trace\",\"env_vars\":{\"X\":\"b\"}}]}",
			      &p, err, sizeof(err)),
		      0);
	ASSERT_EQ_STR(gt_plan_getenv(&p, "X"), "b");
	gt_plan_free(&p);
}

TEST(env_tap_modes_join_trace_kinds)
{
	struct gt_plan p;
	char err[256];
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"api_trace\"},{\"name\":\"kernel_trace\"}]}", &p, err,
			      sizeof(err)),
		      0);
	ASSERT_EQ_STR(gt_plan_getenv(&p, "GPUTAP_TRACE"), "api,kernel,memcpy,memset,memory,nvtx");
	gt_plan_free(&p);
	/* an explicit env_vars value is taken as given */
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"kernel_trace\",\"env_vars\":{\"GPUTAP_TRACE\":\"kernel\"}}]}",
			      &p, err, sizeof(err)),
		      0);
	ASSERT_EQ_STR(gt_plan_getenv(&p, "GPUTAP_TRACE"), "kernel");
	gt_plan_free(&p);
}

TEST(sampler_settings_not_exported_and_merged)
{
	struct gt_plan p;
	char err[256];
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"gpu_info_power_profiler\",\"env_vars\":{\"DEVICE\":\"0,1\","
			      "\"SAMPLING_RATE\":\"0.02\",\"OTHER\":\"y\"}},{\"name\":\"vram\"}]}",
			      &p, err, sizeof(err)),
		      0);
	ASSERT(gt_plan_getenv(&p, "DEVICE") == NULL);
	ASSERT(gt_plan_getenv(&p, "SAMPLING_RATE") == NULL);
	ASSERT(gt_plan_getenv(&p, "MODE") == NULL);
	ASSERT_EQ_STR(gt_plan_getenv(&p, "OTHER"), "y");
	ASSERT_EQ_INT(p.nsamplers, 2);
	ASSERT_EQ_STR(p.samplers[0].device, "0,1");
	ASSERT_NEAR(p.samplers[0].period_s, 0.02, 1e-12);
	ASSERT_EQ_INT(p.samplers[0].mode, GT_SAMPLE_POWER);
	ASSERT_EQ_STR(p.samplers[1].device, "0");
	ASSERT_NEAR(p.samplers[1].period_s, 0.1, 1e-12);
	ASSERT_EQ_INT(p.samplers[1].mode, GT_SAMPLE_VRAM);
	ASSERT_EQ_INT(p.has_tap, 0);
	gt_plan_free(&p);
}

static const char *env_rate(const char *k)
{
	if (strcmp(k, "SAMPLING_RATE") == 0)
		return "0.5";
	if (strcmp(k, "DEVICE") == 0)
		return "all";
	return NULL;
}

TEST(sampler_environment_then_env_vars)
{
	struct gt_tool_list l;
	struct gt_plan p;
	char err[256];
	ASSERT_EQ_INT(gt_tools_parse_context("{\"tools\":[{\"name\":\"power\"},{\"name\":\"vram\",\"env_vars\":"
					     "{\"SAMPLING_RATE\":\"0.25\"}}]}",
					     "--context", &l, err, sizeof(err)),
		      0);
	ASSERT_EQ_INT(gt_plan_build(&p, &l, "/d", env_rate, err, sizeof(err)), 0);
	ASSERT_NEAR(p.samplers[0].period_s, 0.5, 1e-12);
	ASSERT_EQ_STR(p.samplers[0].device, "all");
	ASSERT_NEAR(p.samplers[1].period_s, 0.25, 1e-12);
	gt_plan_free(&p);
}

TEST(sampler_bad_settings_named)
{
	struct gt_plan p;
	char err[256];
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"power\",\"env_vars\":{\"SAMPLING_RATE\":\"fast\"}}]}", &p, err,
			      sizeof(err)),
		      -1);
	ASSERT_EQ_STR(err, "tools[0] (power).env_vars.SAMPLING_RATE 'fast': expected seconds between samples, "
			   "0.001 to 3600");
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"vram\",\"env_vars\":{\"DEVICE\":\"gpu0\"}}]}", &p, err,
			      sizeof(err)),
		      -1);
	ASSERT_EQ_STR(err, "tools[0] (vram).env_vars.DEVICE 'gpu0': expected 0, 0,1,2 or all");
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"vram\",\"env_vars\":{\"MODE\":\"heat\"}}]}", &p, err,
			      sizeof(err)),
		      -1);
	ASSERT_CONTAINS(err, "expected power or vram");
}

TEST(wrappers_nest_outermost_first_and_dedup)
{
	struct gt_plan p;
	char err[256];
	ASSERT_EQ_INT(plan_of("{\"tools\":[{\"name\":\"metrics\",\"cmd\":\"env A=1\"},"
			      "{\"name\":\"api_trace\",\"cmd\":\"taskset -c '0 1'\"},"
			      "{\"name\":\"kernel_trace\",\"cmd\":\"env  A=1\"}]}",
			      &p, err, sizeof(err)),
		      0);
	/* outermost (last) first; the repeated "env A=1" runs once, innermost */
	ASSERT_EQ_INT(p.nwrapper, 5);
	ASSERT_EQ_STR(p.wrapper[0], "taskset");
	ASSERT_EQ_STR(p.wrapper[1], "-c");
	ASSERT_EQ_STR(p.wrapper[2], "0 1");
	ASSERT_EQ_STR(p.wrapper[3], "env");
	ASSERT_EQ_STR(p.wrapper[4], "A=1");
	ASSERT(p.wrapper[5] == NULL);
	gt_plan_free(&p);
}

TEST(split_words_quoting)
{
	char **w, err[128];
	int n = gt_split_words("  a 'b c' \"d \\\"e\\\"\" f\\ g ''  ", &w, err, sizeof(err));
	ASSERT_EQ_INT(n, 5);
	ASSERT_EQ_STR(w[0], "a");
	ASSERT_EQ_STR(w[1], "b c");
	ASSERT_EQ_STR(w[2], "d \"e\"");
	ASSERT_EQ_STR(w[3], "f g");
	ASSERT_EQ_STR(w[4], "");
	gt_free_words(w, (size_t)n);
	ASSERT_EQ_INT(gt_split_words("x 'y", &w, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "unterminated");
}

TEST(context_errors_name_the_part)
{
	char err[512];
	ASSERT_EQ_INT(ctx_err("{\"tools\":[{\"name\":\"power\"},{\"name\":\"vram\"},"
			      "{\"name\":\"power\",\"env_vars\":{\"DEVICE\":0}}]}",
			      err, sizeof(err)),
		      -1);
	ASSERT_EQ_STR(err, "--context: tools[2].env_vars.DEVICE: expected a string, got a number");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[{\"name\":\"rocprof\"}]}", err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "--context: tools[0].name: unknown tool 'rocprof'");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[{\"cmd\":\"x\"}]}", err, sizeof(err)), -1);
	ASSERT_EQ_STR(err, "--context: tools[0]: missing \"name\"");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[{\"name\":7}]}", err, sizeof(err)), -1);
	ASSERT_EQ_STR(err, "--context: tools[0].name: expected a string, got a number");
	ASSERT_EQ_INT(ctx_err("{\"tools\":{\"name\":\"power\"}}", err, sizeof(err)), -1);
	ASSERT_EQ_STR(err, "--context: tools: expected an array, got an object");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[\"power\"]}", err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "--context: tools[0]: expected an object");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[{\"name\":\"power\",\"cmd\":[\"a\"]}]}", err, sizeof(err)), -1);
	ASSERT_EQ_STR(err, "--context: tools[0].cmd: expected a string, got an array");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[{\"name\":\"power\",\"env_vars\":[]}]}", err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "--context: tools[0].env_vars: expected an object of strings");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[{\"name\":\"power\",\"envvars\":{}}]}", err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "--context: tools[0].envvars: unknown key");
	ASSERT_EQ_INT(ctx_err("{\"tools\":[", err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "--context: not valid JSON");
	ASSERT_EQ_INT(ctx_err("[1]", err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "--context: expected a JSON object");
}

TEST(context_accepts_madengine_keys)
{
	struct gt_tool_list l;
	char err[256];
	ASSERT_EQ_INT(gt_tools_parse_context("{\"gpu_vendor\":\"NVIDIA\",\"guest_os\":\"UBUNTU\",\"tools\":"
					     "[{\"name\":\"gpu_info_power_profiler\",\"env_vars\":{\"DEVICE\":\"all\"}}]}",
					     "cfg.json", &l, err, sizeof(err)),
		      0);
	ASSERT_EQ_INT(l.n, 1);
	ASSERT_EQ_STR(l.t[0].def->name, "power");
	ASSERT_EQ_INT(l.t[0].nenv, 1);
	ASSERT_EQ_STR(l.t[0].env[0].key, "DEVICE");
	ASSERT_EQ_STR(l.t[0].env[0].val, "all");
	gt_tools_free(&l);
	/* the file name is the source named in messages */
	ASSERT_EQ_INT(gt_tools_parse_context("{\"tools\":[{}]}", "cfg.json", &l, err, sizeof(err)), -1);
	ASSERT_EQ_STR(err, "cfg.json: tools[0]: missing \"name\"");
}

/* Each kind's set-up and tear-down come from the tool table, not from a switch in run.c. */
TEST(tool_ops_from_table)
{
	const struct gt_tool_ops *o = gt_tool_ops(gt_tool_find("power"));
	ASSERT(o && o->setup && o->teardown);
	ASSERT(gt_tool_ops(gt_tool_find("gpu_info_vram_profiler")) == o);
	o = gt_tool_ops(gt_tool_find("cudnn_trace"));
	ASSERT(o && !o->setup && o->teardown);
	ASSERT(gt_tool_ops(gt_tool_find("nccl_trace")) == o);
	o = gt_tool_ops(gt_tool_find("kernel_trace"));
	ASSERT(o && !o->setup && !o->teardown); /* the traces are converted after the run */
	for (const struct gt_tool_def *d = gt_tool_table; d->name; d++)
		ASSERT(gt_tool_ops(d) != NULL);
	ASSERT(gt_tool_ops(NULL) == NULL);
}
