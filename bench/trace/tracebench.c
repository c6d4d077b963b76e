/*
 * bench/trace/tracebench.c — the binary trace's writer and reader, timed alone.
 *
 *   tracebench read FILE               records/s of gt_tr_next over FILE (any format version)
 *   tracebench write IN OUT LEVEL      IN's records (held in memory first) written to OUT as the
 *                                      tap writes them (blocks, zlib LEVEL): CPU ns per record
 *                                      and per kernel, output bytes per kernel
 *
 * Built by bench/trace/run.sh against src/trace/trace_io.c, src/trace/blockz.c and src/core/csvio.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "trace/trace_io.h"

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bench_read(const char *path)
{
	struct gt_trace_reader r;
	if (gt_tr_open(&r, path) < 0) {
		fprintf(stderr, "%s\n", r.err);
		return 1;
	}
	double t0 = now(CLOCK_MONOTONIC);
	const struct gt_rec_hdr *h;
	int rc;
	unsigned long long sum = 0;
	while ((rc = gt_tr_next(&r, &h)) > 0)
		sum += h->type;
	double s = now(CLOCK_MONOTONIC) - t0;
	if (rc < 0)
		fprintf(stderr, "%s\n", r.err);
	printf("read %s: %llu records in %.3f s = %.2f M records/s (check %llu)\n", path,
	       (unsigned long long)r.nrecords, s, (double)r.nrecords / s / 1e6, sum);
	gt_tr_close(&r);
	return rc < 0;
}

static int bench_write(const char *in, const char *out, int level)
{
	struct gt_trace_reader r;
	if (gt_tr_open(&r, in) < 0) {
		fprintf(stderr, "%s\n", r.err);
		return 1;
	}
	size_t cap = 1 << 20, len = 0;
	unsigned char *all = malloc(cap);
	unsigned long long kernels = 0, nrec = 0;
	const struct gt_rec_hdr *h;
	int rc;
	while (all && (rc = gt_tr_next(&r, &h)) > 0) {
		if (len + h->size > cap) {
			unsigned char *n = realloc(all, cap * 2);
			if (!n) {
				free(all);
				all = NULL;
				break;
			}
			all = n;
			cap *= 2;
		}
		memcpy(all + len, h, h->size);
		len += h->size;
		nrec++;
		kernels += h->type == GT_REC_KERNEL;
	}
	struct gt_file_header hdr = r.hdr;
	gt_tr_close(&r);
	if (!all)
		return 1;
	struct gt_trace_writer w;
	if (gt_tw_open(&w, out, hdr.proc, hdr.host, hdr.pid, hdr.start_ns, 0) < 0 || gt_tw_set_level(&w, level) < 0)
		return 1;
	double c0 = now(CLOCK_PROCESS_CPUTIME_ID), t0 = now(CLOCK_MONOTONIC);
	/* in the tap's pieces: its chunks are 64 KiB */
	for (size_t off = 0; off < len;) {
		size_t n = 0;
		while (off + n < len && n + ((const struct gt_rec_hdr *)(all + off + n))->size <= 65536)
			n += ((const struct gt_rec_hdr *)(all + off + n))->size;
		if (gt_tw_write(&w, all + off, n, 0) < 0)
			return 1;
		off += n;
	}
	if (gt_tw_close(&w, hdr.end_ns, 0, 0, 0) < 0)
		return 1;
	double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = now(CLOCK_MONOTONIC) - t0;
	struct stat st;
	stat(out, &st);
	printf("write level %d: %llu records (%llu kernels), %.1f MB plain -> %.2f MB: %.1f bytes per kernel "
	       "(plain %.1f); CPU %.3f s = %.0f ns per kernel (%.0f MB/s plain), wall %.3f s\n",
	       level, nrec, kernels, (double)len / 1e6, (double)st.st_size / 1e6,
	       kernels ? (double)st.st_size / (double)kernels : 0.0, kernels ? (double)len / (double)kernels : 0.0, cpu,
	       kernels ? cpu * 1e9 / (double)kernels : 0.0, (double)len / cpu / 1e6, wall);
	free(all);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "read") == 0)
		return bench_read(argv[2]);
	if (argc == 5 && strcmp(argv[1], "write") == 0)
		return bench_write(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: tracebench read FILE | tracebench write IN OUT LEVEL\n");
	return 2;
}
