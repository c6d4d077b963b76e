#include "core/alnair_log.h"

#include <stdio.h>

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

int gt_alnair_timelineline(char *buf, size_t cap, const char *name, uint64_t start_ns, uint64_t burst_us,
			   uint64_t bytes, int kind)
{
	return snprintf(buf, cap, "name:%s, start:%llu, burst:%llu, bytes:%llu, kind:%d\n", name,
			(unsigned long long)start_ns, (unsigned long long)burst_us, (unsigned long long)bytes,
			kind);
}
