/* Fuzz target: every output writer and the summary, fed arbitrary bytes as a
 * trace, must fail cleanly or write complete files, never crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/export.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/gputap-fuzz-convert-XXXXXX";
	if (!mkdtemp(dir))
		return 0;
	char trace[4200], out[4200];
	snprintf(trace, sizeof(trace), "%s/trace.gtr", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	FILE *f = fopen(trace, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
		char err[1024];
		gt_export_convert(trace, out, GT_EXPORT_ALL, NULL, err, sizeof(err));
		FILE *devnull = fopen("/dev/null", "w");
		if (devnull) {
			const char *paths[1] = {trace};
			gt_export_summary(devnull, dir, paths, 1, err, sizeof(err));
			fclose(devnull);
		}
	}
	gt_fuzz_rm_tree(dir);
	return 0;
}
