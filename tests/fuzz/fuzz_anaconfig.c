/* Fuzz target: the GPU Performance Analyzer config reader (comment stripping, yajl, the map's checks). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "core/log.h"

#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	if (gt_fuzz_file("config", "", data, size, path, sizeof(path)) < 0)
		return 0;
	gt_log_level = GT_LOG_QUIET;
	FILE *f = fopen("/dev/null", "w");
	if (f) {
		gt_an_config_run(path, "text", f);
		fclose(f);
	}
	struct gt_an_map *m = NULL;
	char err[1024];
	if (gt_an_map_load(&m, path, err, sizeof(err)) == 0)
		gt_an_map_free(m);
	unlink(path);
	return 0;
}
