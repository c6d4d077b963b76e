#include "trace/alnair_log.h"

#include <stdio.h>
#include <string.h>

#define GT_ALNAIR_STR(n) #n,
const char *const gt_alnair_names[] = {GT_ALNAIR_NAMES(GT_ALNAIR_STR)};
#undef GT_ALNAIR_STR
const unsigned gt_alnair_nnames = sizeof(gt_alnair_names) / sizeof(gt_alnair_names[0]);

int gt_alnair_memline(char *buf, size_t cap, uint64_t mem_used_bytes)
{
	return snprintf(buf, cap, "name:mem_used,count:%llu\n", (unsigned long long)mem_used_bytes);
}

int gt_alnair_metricline(char *buf, size_t cap, const char *name, uint64_t count, uint64_t burst_us)
{
	return snprintf(buf, cap, "name:%s,count:%llu,burst:%llu\n", name, (unsigned long long)count,
			(unsigned long long)burst_us);
}

/* timeline.log's lines are built without snprintf: one per API record on the tap's writer thread,
 * where snprintf's format parsing was most of the writer's time. */
static char *put_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
	char d[20];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		*p++ = d[--n];
	return p;
}

#define LIT(p, s) put_str(p, s, sizeof(s) - 1)

int gt_alnair_timelineline(char *buf, size_t cap, const char *name, uint64_t start_ns, uint64_t burst_us,
			   uint64_t bytes, int kind)
{
	size_t nl = strlen(name);
	/* 5 labels (42 bytes), 3 numbers of at most 20 digits, a sign and 10 digits, the newline */
	char small[160], *out = nl + 120 <= cap ? buf : nl + 120 <= sizeof(small) ? small : NULL;
	if (!out)
		return snprintf(buf, cap, "name:%s, start:%llu, burst:%llu, bytes:%llu, kind:%d\n", name,
				(unsigned long long)start_ns, (unsigned long long)burst_us, (unsigned long long)bytes,
				kind);
	char *p = LIT(out, "name:");
	p = put_str(p, name, nl);
	p = put_u64(LIT(p, ", start:"), start_ns);
	p = put_u64(LIT(p, ", burst:"), burst_us);
	p = put_u64(LIT(p, ", bytes:"), bytes);
	p = LIT(p, ", kind:");
	if (kind < 0)
		*p++ = '-';
	p = put_u64(p, kind < 0 ? (uint64_t)(-(int64_t)kind) : (uint64_t)kind);
	*p++ = '\n';
	size_t len = (size_t)(p - out);
	if (out == small && cap) { /* cut short: as snprintf does */
		size_t k = len < cap ? len : cap - 1;
		// cppcheck-suppress uninitvar ; written through `out` above
		memcpy(buf, small, k);
		buf[k] = '\0';
	} else if (out == buf) {
		*p = '\0';
	}
	return (int)len;
}
