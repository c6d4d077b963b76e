/* Prints what a trace holds, one fact a line, for shell tests:
 *   flags F / type T N (records of each type) / note W / dropped SOURCE COUNT */
#include <stdio.h>

#include "trace/trace_io.h"

int main(int argc, char **argv)
{
	struct gt_trace_reader r;
	if (argc != 2 || gt_tr_open(&r, argv[1]) < 0) {
		fprintf(stderr, "trace_stat: %s\n", argc == 2 ? r.err : "usage: trace_stat TRACE");
		return 1;
	}
	unsigned long n[256] = {0};
	const struct gt_rec_hdr *h;
	int rc;
	while ((rc = gt_tr_next(&r, &h)) > 0) {
		n[h->type & 255]++;
		if (h->type == GT_REC_NOTE)
			printf("note %u\n", ((const struct gt_rec_note *)h)->what);
		if (h->type == GT_REC_DROPPED)
			printf("dropped %u %llu\n", ((const struct gt_rec_dropped *)h)->source,
			       (unsigned long long)((const struct gt_rec_dropped *)h)->count);
	}
	printf("flags %u\npartial %d\n", r.hdr.flags, r.partial);
	for (int t = 0; t < 256; t++)
		if (n[t])
			printf("type %d %lu\n", t, n[t]);
	gt_tr_close(&r);
	return rc < 0;
}
