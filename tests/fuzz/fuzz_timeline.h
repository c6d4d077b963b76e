/*
 * tests/fuzz/fuzz_timeline.h — the body shared by the timeline-reader fuzz
 * targets (Kineto, nsys SQLite): any bytes, read as a file with the reader's
 * suffix, go through the reader, the timeline engine and every output format
 * without crashing.
 */
#ifndef GT_FUZZ_TIMELINE_H
#define GT_FUZZ_TIMELINE_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/findings.h"

#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline int gt_fuzz_timeline(const char *tag, const char *suffix, const uint8_t *data, size_t size)
{
	char path[128];
	if (gt_fuzz_file(tag, suffix, data, size, path, sizeof(path)) < 0)
		return 0;
	struct gt_an_opts o = {0};
	gt_an_sort_chunk = 256; /* quick runs; the spill-and-merge path exercised */
	o.iters = 3; /* exercises the even split when there are no ranges */
	o.findings = 1; /* the findings' readers and sweep too (analyze/findings.h) */
	struct gt_an_result *r = NULL;
	char err[1024];
	const char *in = path;
	if (gt_an_run(&in, 1, &o, &r, err, sizeof(err)) == 0) {
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			gt_an_print_text(r, f);
			gt_an_print_csv(r, f);
			gt_an_print_json((const struct gt_an_result *const *)&r, 1, f);
			if (r->findings)
				gt_fd_print_text(r->findings, 0, 0, f);
			fclose(f);
		}
		gt_an_free(r);
	}
	unlink(path);
	return 0;
}

#endif
