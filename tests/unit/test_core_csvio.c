#include "test.h"

#include <stdlib.h>

#include "core/csvio.h"

TEST(csv_put_quotes_only_when_needed)
{
	char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	ASSERT(f);
	gt_csv_put(f, "plain");
	fputc('|', f);
	gt_csv_put(f, "a,b");
	fputc('|', f);
	gt_csv_put(f, "say \"hi\"");
	fputc('|', f);
	gt_csv_put(f, NULL);
	fclose(f);
	ASSERT_EQ_STR(buf, "plain|\"a,b\"|\"say \"\"hi\"\"\"|");
}

TEST(csv_split_roundtrip_and_errors)
{
	char line[] = "x,\"a,b\",\"say \"\"hi\"\"\",,end";
	char *fl[8];
	ASSERT_EQ_INT(gt_csv_split(line, fl, 8), 5);
	ASSERT_EQ_STR(fl[0], "x");
	ASSERT_EQ_STR(fl[1], "a,b");
	ASSERT_EQ_STR(fl[2], "say \"hi\"");
	ASSERT_EQ_STR(fl[3], "");
	ASSERT_EQ_STR(fl[4], "end");
	char bad[] = "a,\"unterminated";
	ASSERT_EQ_INT(gt_csv_split(bad, fl, 8), -1);
	char junk[] = "a,\"q\"x,b";
	ASSERT_EQ_INT(gt_csv_split(junk, fl, 8), -1);
	char many[] = "1,2,3,4";
	ASSERT_EQ_INT(gt_csv_split(many, fl, 2), 2);
}

TEST(read_file_whole_and_missing)
{
	char big[10000];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	const char *p = gt_test_write_file(gt_test_tmpdir(), "f", big, sizeof(big));
	size_t n = 0;
	char *b = gt_read_file(p, &n);
	ASSERT(b);
	ASSERT_EQ_U64(n, sizeof(big));
	ASSERT(memcmp(b, big, n) == 0 && b[n] == '\0');
	free(b);
	ASSERT(gt_read_file("/nonexistent/x", NULL) == NULL);
}

TEST(utf8_valid_accepts_and_rejects)
{
	ASSERT_EQ_INT(gt_utf8_valid((const unsigned char *)"plain", 5), 1);
	ASSERT_EQ_INT(gt_utf8_valid((const unsigned char *)"\xc3\xa9t\xc3\xa9", 6), 1);
	ASSERT_EQ_INT(gt_utf8_valid((const unsigned char *)"\xe2\x82\xac", 3), 1);
	ASSERT_EQ_INT(gt_utf8_valid((const unsigned char *)"\xc0\xaf", 2), 0); /* overlong */
	ASSERT_EQ_INT(gt_utf8_valid((const unsigned char *)"\xe2\x82", 2), 0); /* truncated */
	ASSERT_EQ_INT(gt_utf8_valid((const unsigned char *)"\xff", 1), 0);
	ASSERT_EQ_INT(gt_utf8_valid((const unsigned char *)"a\x80", 2), 0); /* stray continuation */
}

TEST(getline_max_keeps_memory_bounded)
{
	/* a 4 MiB line between two short ones, read with a 64 KiB limit: the long one comes back cut
	 * and the buffer never grows past the limit; the lines around it are whole */
	size_t big = 4u << 20;
	char *data = malloc(big + 32);
	ASSERT(data);
	memcpy(data, "first\n", 6);
	memset(data + 6, 'x', big);
	memcpy(data + 6 + big, "\nlast", 5);
	const char *p = gt_test_write_file(gt_test_tmpdir(), "long.log", data, big + 11);
	free(data);
	FILE *f = fopen(p, "r");
	ASSERT(f);
	char *line = NULL;
	size_t cap = 0;
	int cut = -1;
	ASSERT_EQ_INT((int)gt_getline_max(&line, &cap, f, 65536, &cut), 6);
	ASSERT_EQ_STR(line, "first\n");
	ASSERT_EQ_INT(cut, 0);
	ASSERT_EQ_INT((int)gt_getline_max(&line, &cap, f, 65536, &cut), 65536);
	ASSERT_EQ_INT(cut, 1);
	ASSERT(cap <= 65536 + 2);
	ASSERT_EQ_INT((int)gt_getline_max(&line, &cap, f, 65536, &cut), 4);
	ASSERT_EQ_STR(line, "last");
	ASSERT_EQ_INT(cut, 0);
	ASSERT_EQ_INT((int)gt_getline_max(&line, &cap, f, 65536, &cut), -1);
	free(line);
	fclose(f);
}
