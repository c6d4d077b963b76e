/* The alnair interposer's timeline.log line (trace/alnair_log.h), built without snprintf: the same
 * bytes and the same return value as snprintf's "name:%s, start:%llu, burst:%llu, bytes:%llu, kind:%d\n". */
#include <stdint.h>
#include <stdio.h>

#include "trace/alnair_log.h"
#include "test.h"

static void same_as_printf(const char *name, uint64_t start, uint64_t burst, uint64_t bytes, int kind, size_t cap)
{
	char got[256], want[256];
	memset(got, 'x', sizeof(got));
	memset(want, 'x', sizeof(want));
	int n = gt_alnair_timelineline(got, cap, name, start, burst, bytes, kind);
	int m = snprintf(want, cap, "name:%s, start:%llu, burst:%llu, bytes:%llu, kind:%d\n", name,
			 (unsigned long long)start, (unsigned long long)burst, (unsigned long long)bytes, kind);
	ASSERT_EQ_INT(n, m);
	ASSERT(memcmp(got, want, sizeof(got)) == 0); /* also what lies past the end: untouched alike */
}

TEST(alnair_timeline_line)
{
	char b[128];
	int n = gt_alnair_timelineline(b, sizeof(b), "cuLaunchKernel", 1732406400123456789ull, 12, 0, -1);
	ASSERT_EQ_STR(b, "name:cuLaunchKernel, start:1732406400123456789, burst:12, bytes:0, kind:-1\n");
	ASSERT_EQ_INT(n, (int)strlen(b));
	same_as_printf("cudaMemcpy", 0, 0, 0, 0, 256);
	same_as_printf("cudaMemcpyAsync", UINT64_MAX, 1000000, 1ull << 40, 4, 256);
	same_as_printf("cuMemAlloc_v2", 10, 9, 99, -2147483647 - 1, 256);
	for (size_t cap = 0; cap < 60; cap += 7) /* cut short: as snprintf, the length it needed */
		same_as_printf("cuMemcpyDtoH_v2", 123456789, 42, 65536, 2, cap);
}
