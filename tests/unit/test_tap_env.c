/* The tap's settings from the environment, and <proc> naming. */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/log.h"
#include "tap/dlsym_find.h"
#include "tap/env.h"
#include "test.h"

static const char *const *fake;
static const char *fake_get(const char *name)
{
	for (const char *const *p = fake; p && *p; p += 2)
		if (strcmp(p[0], name) == 0)
			return p[1];
	return NULL;
}

TEST(tap_env_defaults)
{
	static const char *const env[] = {NULL};
	fake = env;
	struct gt_tap_config c;
	gt_tap_config_read(&c, fake_get);
	ASSERT(c.out_dir == NULL && c.pflog_dir == NULL);
	ASSERT_EQ_INT(c.trace, GT_TR_ALL);
	ASSERT_EQ_INT(c.metrics_only, 0);
	ASSERT_EQ_U64(c.buffer_bytes, 64ull << 20);
	ASSERT_EQ_INT(c.log_level, GT_LOG_WARN);
	ASSERT_EQ_INT(c.nwarnings, 0);
}

TEST(tap_env_values)
{
	static const char *const env[] = {"GPUTAP_OUT", "/tmp/x", "PFLOG", "/tmp/p", "GPUTAP_TRACE", "api, kernel",
					  "GPUTAP_BUFFER_MB", "3", "GPUTAP_LOG", "debug", NULL};
	fake = env;
	struct gt_tap_config c;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_STR(c.out_dir, "/tmp/x");
	ASSERT_EQ_STR(c.pflog_dir, "/tmp/p");
	ASSERT_EQ_INT(c.trace, GT_TR_API | GT_TR_KERNEL);
	ASSERT_EQ_U64(c.buffer_bytes, 3ull << 20);
	ASSERT_EQ_INT(c.log_level, GT_LOG_DEBUG);
	gt_log_level = GT_LOG_WARN;
}

TEST(tap_env_bad_values_warn_and_default)
{
	static const char *const env[] = {"GPUTAP_TRACE", "kernels", "GPUTAP_BUFFER_MB", "12x", "GPUTAP_LOG", "loud",
					  "GPUTAP_HOLD", "-3", NULL};
	fake = env;
	struct gt_tap_config c;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.trace, GT_TR_ALL);
	ASSERT_EQ_U64(c.buffer_bytes, 64ull << 20);
	ASSERT_EQ_INT(c.log_level, GT_LOG_WARN);
	ASSERT_EQ_INT(c.nwarnings, 4);
}

TEST(tap_env_hold_defaults_and_values)
{
	static const char *const none[] = {NULL};
	fake = none;
	struct gt_tap_config c;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.hold, 0);
	ASSERT_EQ_INT(c.hold_max, 1024);
	ASSERT_EQ_INT(c.hold_timeout_us, 1000);
	ASSERT(c.hold_kernels == NULL);
	static const char *const env[] = {"GPUTAP_HOLD", "16", "GPUTAP_HOLD_MAX", "64", "GPUTAP_HOLD_TIMEOUT_US",
					  "250", "GPUTAP_HOLD_KERNELS", "gemm,relu", NULL};
	fake = env;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.hold, 16);
	ASSERT_EQ_INT(c.hold_max, 64);
	ASSERT_EQ_INT(c.hold_timeout_us, 250);
	ASSERT_EQ_STR(c.hold_kernels, "gemm,relu");
	ASSERT_EQ_INT(c.nwarnings, 0);
	static const char *const zero[] = {"GPUTAP_HOLD", "0", NULL};
	fake = zero;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.hold, 0);
	ASSERT_EQ_INT(c.nwarnings, 0);
}

TEST(tap_env_hold_bad_values)
{
	struct gt_tap_config c;
	/* more than the bound: clamped, one warning */
	static const char *const over[] = {"GPUTAP_HOLD", "100", "GPUTAP_HOLD_MAX", "32", NULL};
	fake = over;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.hold, 32);
	ASSERT_EQ_INT(c.nwarnings, 1);
	/* the timer cannot be turned off; malformed numbers give the defaults */
	static const char *const bad[] = {"GPUTAP_HOLD", "8x", "GPUTAP_HOLD_MAX", "0", "GPUTAP_HOLD_TIMEOUT_US", "0",
					  NULL};
	fake = bad;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.hold, 0);
	ASSERT_EQ_INT(c.hold_max, 1024);
	ASSERT_EQ_INT(c.hold_timeout_us, 1000);
	ASSERT_EQ_INT(c.nwarnings, 3);
	static const char *const big[] = {"GPUTAP_HOLD", "65537", "GPUTAP_HOLD_TIMEOUT_US", "10000001", NULL};
	fake = big;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.hold, 0);
	ASSERT_EQ_INT(c.hold_timeout_us, 1000);
	ASSERT_EQ_INT(c.nwarnings, 2);
}

TEST(tap_env_trace_words)
{
	unsigned b;
	int m;
	ASSERT_EQ_INT(gt_tap_parse_trace("metrics", &b, &m), 0);
	ASSERT(m == 1 && b == 0);
	ASSERT_EQ_INT(gt_tap_parse_trace("nvtx,memcpy,memset,memory", &b, &m), 0);
	ASSERT_EQ_INT(b, GT_TR_NVTX | GT_TR_MEMCPY | GT_TR_MEMSET | GT_TR_MEMORY);
	ASSERT_EQ_INT(gt_tap_parse_trace("all", &b, &m), 0);
	ASSERT_EQ_INT(b, GT_TR_ALL);
	ASSERT_EQ_INT(gt_tap_parse_trace("metrics,api", &b, &m), -1);
	ASSERT_EQ_INT(gt_tap_parse_trace("", &b, &m), -1);
	ASSERT_EQ_INT(gt_tap_parse_trace("api,,kernel", &b, &m), -1);
	ASSERT_EQ_INT(gt_tap_parse_trace("apix", &b, &m), -1);
}

TEST(tap_env_rank_variables)
{
	static const char *const e1[] = {"SLURM_PROCID", "5", "LOCAL_RANK", "x", NULL};
	fake = e1;
	ASSERT_EQ_STR(gt_tap_rank(fake_get), "5");
	static const char *const e2[] = {"RANK", "2", "SLURM_PROCID", "5", NULL};
	fake = e2;
	ASSERT_EQ_STR(gt_tap_rank(fake_get), "2");
	static const char *const e3[] = {"RANK", "-1", NULL};
	fake = e3;
	ASSERT(gt_tap_rank(fake_get) == NULL);
}

TEST(tap_env_proc_names)
{
	char b[32];
	ASSERT_EQ_INT(gt_tap_proc_name(b, sizeof(b), NULL, NULL, 1234, 0), 0);
	ASSERT_EQ_STR(b, "pid1234");
	ASSERT_EQ_INT(gt_tap_proc_name(b, sizeof(b), "3", NULL, 1234, 0), 1);
	ASSERT_EQ_STR(b, "rank3");
	/* an exec'd child inheriting RANK=3 from the process that named itself rank3 */
	ASSERT_EQ_INT(gt_tap_proc_name(b, sizeof(b), "3", "1000:3", 1234, 0), 0);
	ASSERT_EQ_STR(b, "rank3-pid1234");
	/* a launcher without that rank before us: we claim it */
	ASSERT_EQ_INT(gt_tap_proc_name(b, sizeof(b), "3", "1000:0", 1234, 0), 1);
	ASSERT_EQ_STR(b, "rank3");
	/* a fork child */
	ASSERT_EQ_INT(gt_tap_proc_name(b, sizeof(b), "3", NULL, 1235, 1), 0);
	ASSERT_EQ_STR(b, "rank3-pid1235");
	ASSERT_EQ_INT(gt_tap_proc_name(b, sizeof(b), NULL, "1000:3", 1236, 1), 0);
	ASSERT_EQ_STR(b, "pid1236");
}

TEST(tap_env_range_metrics_list_and_mode)
{
	static const char *const env[] = {"GPUTAP_METRICS", "smsp__inst_executed.sum", "GPUTAP_METRICS_MODE", "range",
					  NULL};
	fake = env;
	struct gt_tap_config c;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_STR(c.metrics, "smsp__inst_executed.sum");
	ASSERT_EQ_STR(c.metrics_mode, "range");
	ASSERT_EQ_INT(c.nwarnings, 0);
	static const char *const bad[] = {"GPUTAP_METRICS_MODE", "fast", NULL};
	fake = bad;
	gt_tap_config_read(&c, fake_get);
	ASSERT(c.metrics == NULL && c.metrics_mode == NULL);
	ASSERT_EQ_INT(c.nwarnings, 1);
}

TEST(tap_env_tsc)
{
	static const char *const none[] = {NULL};
	fake = none;
	struct gt_tap_config c;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.tsc, 1);
	static const char *const off[] = {"GPUTAP_TSC", "off", NULL};
	fake = off;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.tsc, 0);
	ASSERT_EQ_INT(c.nwarnings, 0);
	static const char *const aut[] = {"GPUTAP_TSC", "auto", NULL};
	fake = aut;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.tsc, 1);
	ASSERT_EQ_INT(c.nwarnings, 0);
	static const char *const bad[] = {"GPUTAP_TSC", "0", NULL};
	fake = bad;
	gt_tap_config_read(&c, fake_get);
	ASSERT_EQ_INT(c.tsc, 1);
	ASSERT_EQ_INT(c.nwarnings, 1);
}

static void *no_vsym(void *h, const char *name, const char *version)
{
	(void)h, (void)name, (void)version;
	return NULL;
}

typedef void *(*dlsym_fn)(void *, const char *);

/* A C library whose dlvsym knows none of glibc's versions of dlsym (musl,
 * older glibc on other architectures): dlsym is still found, and works. */
TEST(tap_real_dlsym_without_dlvsym)
{
	dlsym_fn real = (dlsym_fn)gt_find_real_dlsym(no_vsym);
	ASSERT(real != NULL);
	ASSERT(real(RTLD_DEFAULT, "getpid") == (void *)getpid);
	ASSERT(real(RTLD_DEFAULT, "gt_no_such_symbol") == NULL);
	/* with the C library's dlvsym it is found as well, and is the same function */
	dlsym_fn v = (dlsym_fn)gt_find_real_dlsym(dlvsym);
	ASSERT(v != NULL);
	ASSERT(v(RTLD_DEFAULT, "getpid") == (void *)getpid);
	ASSERT(gt_elf_lookup("libc.so", "gt_no_such_symbol") == NULL);
	ASSERT(gt_elf_lookup("no-such-library.so", "dlsym") == NULL);
}

/* GPUTAP_BUFFER_MB bounds everything: the record pool and CUPTI's buffers together. */
TEST(tap_buffer_split_counts_cupti)
{
	struct gt_buffer_split s;
	gt_tap_buffer_split(64ull << 20, 0, &s);
	ASSERT_EQ_U64(s.pool_bytes, 64ull << 20);
	ASSERT_EQ_INT(s.cupti_nbufs, 0);
	const uint64_t mbs[] = {1, 2, 3, 8, 64, 1024, 65536};
	for (size_t i = 0; i < sizeof(mbs) / sizeof(mbs[0]); i++) {
		uint64_t total = mbs[i] << 20;
		gt_tap_buffer_split(total, 1, &s);
		ASSERT(s.cupti_nbufs >= 2 && s.cupti_nbufs <= GT_TAP_CUPTI_MAX_BUFS);
		ASSERT(s.cupti_buf_bytes >= (64u << 10) && s.cupti_buf_bytes <= (4u << 20));
		ASSERT_EQ_U64(s.pool_bytes + (uint64_t)s.cupti_nbufs * s.cupti_buf_bytes, total);
		ASSERT(s.pool_bytes >= total / 2);
	}
	gt_tap_buffer_split(64ull << 20, 1, &s);
	/* the default: 32 buffers of 512 KiB, enough for eight launching threads and more */
	ASSERT_EQ_INT(s.cupti_buf_bytes, 512u << 10);
	ASSERT_EQ_INT(s.cupti_nbufs, 32);
	gt_tap_buffer_split(1024ull << 20, 1, &s);
	ASSERT_EQ_INT(s.cupti_buf_bytes, 4u << 20);
	ASSERT_EQ_INT(s.cupti_nbufs, 32);
}
