#include "analyze/an_internal.h"
int gt_an_read_sqlite(struct gt_an_ctx *c, const char *path, char *err, size_t errlen) { (void)c; snprintf(err, errlen, "%s: not yet", path); return -1; }
int gt_an_read_kineto(struct gt_an_ctx *c, const char *path, char *err, size_t errlen) { (void)c; snprintf(err, errlen, "%s: not yet", path); return -1; }
int gt_an_read_gtr(struct gt_an_ctx *c, const char *path, char *err, size_t errlen) { (void)c; snprintf(err, errlen, "%s: not yet", path); return -1; }
