/* Fuzz target: the nsys summary-CSV readers (kernel, memory-operation and NVTX tables). */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyze/analyze.h"

#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	if (gt_fuzz_file("csv", "", data, size, path, sizeof(path)) < 0)
		return 0;
	struct gt_an_opts o = {0};
	gt_an_sort_chunk = 256;
	o.csv_kern = o.csv_mem = o.csv_nvtx = path; /* the same bytes through all three readers */
	o.nvtx_tag = "step";
	o.iters = 2;
	struct gt_an_result *r = NULL;
	char err[1024];
	if (gt_an_run(NULL, 0, &o, &r, err, sizeof(err)) == 0) {
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			gt_an_print_text(r, f);
			gt_an_print_json((const struct gt_an_result *const *)&r, 1, f);
			fclose(f);
		}
		gt_an_free(r);
	}
	unlink(path);
	return 0;
}
