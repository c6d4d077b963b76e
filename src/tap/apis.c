#include "tap/apis.h"

#define GT_TAP_API_STR(n) #n,
const char *const gt_api_names[GT_API_N] = {GT_ALNAIR_NAMES(GT_TAP_API_STR) GT_TAP_EXTRA_APIS(GT_TAP_API_STR)};
#undef GT_TAP_API_STR
