/* A strict integer from a setting (core/number.h). */
#include "core/number.h"
#include "test.h"

TEST(parse_long_takes_only_a_whole_integer_in_range)
{
	long v = 42;
	ASSERT_EQ_INT(gt_parse_long("0", 0, 10, &v), 0);
	ASSERT_EQ_INT((int)v, 0);
	ASSERT_EQ_INT(gt_parse_long("-3", -5, 5, &v), 0);
	ASSERT_EQ_INT((int)v, -3);
	ASSERT_EQ_INT(gt_parse_long("100000", 1, 100000, &v), 0);
	ASSERT_EQ_INT((int)v, 100000);
	static const char *const bad[] = {"", " 8", "+8", "8 ", "8x", "x", "0x10", "100001", "0", "-1",
					  "99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		ASSERT_EQ_INT(gt_parse_long(bad[i], 1, 100000, &v), -1);
		ASSERT_EQ_INT((int)v, 7); /* untouched */
	}
	ASSERT_EQ_INT(gt_parse_long(NULL, 0, 1, &v), -1);
}
