/*
 * tests/fuzz/fuzz_liblog.h — the body shared by the library-log fuzz targets:
 * a parser must read any bytes without crashing, every config it records
 * must be one plain CSV field, and every GEMM/NCCL config must read back
 * (as libperf reads it) to the same text.
 */
#ifndef GT_FUZZ_LIBLOG_H
#define GT_FUZZ_LIBLOG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "liblog/liblog.h"
#include "liblog/libtrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline int gt_fuzz_liblog(int lib, const uint8_t *data, size_t size)
{
	gt_liblog_verbose = 0;
	struct gt_libcalls *t = gt_libcalls_new();
	if (!t)
		return 0;
	struct gt_liblog_stats st;
	gt_liblog_parse_buf_as(lib, "fuzz", (const char *)data, size, t, &st);
	const struct gt_libcall_row *rows;
	size_t n = gt_libcalls_rows(t, &rows);
	for (size_t i = 0; i < n; i++) {
		char err[256], back[GT_CFG_MAX];
		if (strpbrk(rows[i].config, ",\"\n"))
			abort(); /* a config must be one plain CSV field */
		if (strncmp(rows[i].config, "op=gemm ", 8) == 0) {
			struct gt_gemm_cfg g;
			if (gt_gemm_cfg_parse(rows[i].config, &g, err, sizeof(err)) == 0 &&
			    (gt_gemm_cfg_format(&g, back, sizeof(back)) < 0 || strcmp(back, rows[i].config) != 0))
				abort();
		} else if (rows[i].lib == GT_LIB_NCCL) {
			struct gt_nccl_cfg c;
			if (gt_nccl_cfg_parse(rows[i].config, &c, err, sizeof(err)) < 0)
				abort(); /* the parser only records complete collectives */
			if (gt_nccl_cfg_format(&c, back, sizeof(back)) < 0 || strcmp(back, rows[i].config) != 0)
				abort();
		}
	}
	gt_libcalls_free(t);
	return 0;
}

#endif
