#include "trace/holdnames.h"

#include <string.h>

#define GT_HOLD_KEY(n, k, s) k,
#define GT_HOLD_NAME(n, k, s) s,
const char *const gt_hold_reason_keys[GT_HOLD_NREASONS] = {GT_HOLD_REASONS(GT_HOLD_KEY)};
const char *const gt_hold_reason_names[GT_HOLD_NREASONS] = {GT_HOLD_REASONS(GT_HOLD_NAME)};
const char *const gt_hold_refusal_keys[GT_HOLD_NREFUSALS] = {GT_HOLD_REFUSALS(GT_HOLD_KEY)};
const char *const gt_hold_refusal_names[GT_HOLD_NREFUSALS] = {GT_HOLD_REFUSALS(GT_HOLD_NAME)};
#undef GT_HOLD_KEY
#undef GT_HOLD_NAME

static int find(const char *const *keys, int n, const char *key)
{
	for (int i = 0; key && i < n; i++)
		if (strcmp(keys[i], key) == 0)
			return i;
	return -1;
}

int gt_hold_reason_of_key(const char *key)
{
	return find(gt_hold_reason_keys, GT_HOLD_NREASONS, key);
}

int gt_hold_refusal_of_key(const char *key)
{
	return find(gt_hold_refusal_keys, GT_HOLD_NREFUSALS, key);
}
