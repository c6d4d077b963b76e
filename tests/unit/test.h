/*
 * tests/unit/test.h — the unit-test harness.
 *
 * A test is `TEST(name) { ... }` in any tests/unit/test_*.c; it registers
 * itself.  Each test runs in its own forked process with a timeout, so a
 * crash or a hang fails that test only.  ASSERT_* print both sides and end
 * the test.  gt_test_tmpdir() gives the running test a fresh empty folder.
 */
#ifndef GT_TEST_H
#define GT_TEST_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct gt_test {
	const char *name;
	const char *file;
	void (*fn)(void);
	struct gt_test *next;
};

void gt_test_register(struct gt_test *t);
void gt_test_fail(void);
const char *gt_test_tmpdir(void);
/* Directory holding the repository's tests/ folder (for fixtures). */
const char *gt_test_srcdir(void);
/* Write `len` bytes to `dir/name`; returns the path (static buffer rotated 4x). */
const char *gt_test_write_file(const char *dir, const char *name, const void *data, size_t len);
/* Read a whole file into a malloc'd NUL-terminated buffer, NULL on error. */
char *gt_test_read_file(const char *path, size_t *len);

#define TEST(n)                                                                                    \
	static void test_##n(void);                                                                \
	static struct gt_test gt_test_rec_##n = {#n, __FILE__, test_##n, 0};                      \
	__attribute__((constructor)) static void gt_test_reg_##n(void)                            \
	{                                                                                          \
		gt_test_register(&gt_test_rec_##n);                                                \
	}                                                                                          \
	static void test_##n(void)

#define GT_FAIL_AT(...)                                                                            \
	do {                                                                                       \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                    \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		gt_test_fail();                                                                    \
		return;                                                                            \
	} while (0)

#define ASSERT(c)                                                                                  \
	do {                                                                                       \
		if (!(c))                                                                          \
			GT_FAIL_AT("ASSERT(%s) failed", #c);                                       \
	} while (0)

#define ASSERT_EQ_INT(a, b)                                                                        \
	do {                                                                                       \
		long long gt_a_ = (long long)(a), gt_b_ = (long long)(b);                          \
		if (gt_a_ != gt_b_)                                                                \
			GT_FAIL_AT("%s == %s failed: %lld != %lld", #a, #b, gt_a_, gt_b_);         \
	} while (0)

#define ASSERT_EQ_U64(a, b)                                                                        \
	do {                                                                                       \
		unsigned long long gt_a_ = (unsigned long long)(a), gt_b_ = (unsigned long long)(b); \
		if (gt_a_ != gt_b_)                                                                \
			GT_FAIL_AT("%s == %s failed: %llu != %llu", #a, #b, gt_a_, gt_b_);         \
	} while (0)

#define ASSERT_EQ_STR(a, b)                                                                        \
	do {                                                                                       \
		const char *gt_a_ = (a), *gt_b_ = (b);                                             \
		if (!gt_a_ || !gt_b_ || strcmp(gt_a_, gt_b_) != 0)                                 \
			GT_FAIL_AT("%s == %s failed:\n  \"%s\"\n  \"%s\"", #a, #b,                  \
				   gt_a_ ? gt_a_ : "(null)", gt_b_ ? gt_b_ : "(null)");            \
	} while (0)

#define ASSERT_CONTAINS(hay, needle)                                                               \
	do {                                                                                       \
		const char *gt_h_ = (hay), *gt_n_ = (needle);                                      \
		if (!gt_h_ || !strstr(gt_h_, gt_n_))                                               \
			GT_FAIL_AT("%s does not contain \"%s\":\n%s", #hay, gt_n_,                  \
				   gt_h_ ? gt_h_ : "(null)");                                      \
	} while (0)

#define ASSERT_NEAR(a, b, eps)                                                                     \
	do {                                                                                       \
		double gt_a_ = (double)(a), gt_b_ = (double)(b);                                   \
		if (!(fabs(gt_a_ - gt_b_) <= (eps)))                                               \
			GT_FAIL_AT("%s ~= %s failed: %.9g vs %.9g (eps %g)", #a, #b, gt_a_, gt_b_,   \
				   (double)(eps));                                                 \
	} while (0)

#endif
