#include "core/seedlog.h"

#include <stdio.h>

#define GT_SEED_STR(n) #n,
const char *const gt_seed_names[] = {GT_SEED_NAMES(GT_SEED_STR)};
#undef GT_SEED_STR
const unsigned gt_seed_nnames = sizeof(gt_seed_names) / sizeof(gt_seed_names[0]);

int gt_seed_memline(char *buf, size_t cap, uint64_t mem_used_bytes)
{
	return snprintf(buf, cap, "name:mem_used,count:%llu\n", (unsigned long long)mem_used_bytes);
}

int gt_seed_metricline(char *buf, size_t cap, const char *name, uint64_t count, uint64_t burst_us)
{
	return snprintf(buf, cap, "name:%s,count:%llu,burst:%llu\n", name, (unsigned long long)count,
			(unsigned long long)burst_us);
}

int gt_seed_timelineline(char *buf, size_t cap, const char *name, uint64_t start_ns, uint64_t burst_us,
			 uint64_t bytes, int kind)
{
	return snprintf(buf, cap, "name:%s, start:%llu, burst:%llu, bytes:%llu, kind:%d\n", name,
			(unsigned long long)start_ns, (unsigned long long)burst_us, (unsigned long long)bytes,
			kind);
}
