/* Fuzz target: the binary trace reader must reject or read any bytes without crashing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace/trace_io.h"

#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	if (gt_fuzz_file("trace", "", data, size, path, sizeof(path)) < 0)
		return 0;
	struct gt_trace_reader r;
	if (gt_tr_open(&r, path) == 0) {
		const struct gt_rec_hdr *h;
		while (gt_tr_next(&r, &h) > 0)
			if (h->type == GT_REC_KERNEL)
				(void)gt_tr_str(&r, ((const struct gt_rec_kernel *)h)->name_id);
		gt_tr_close(&r);
	}
	unlink(path);
	return 0;
}
