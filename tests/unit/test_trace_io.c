#include "test.h"

#include <stdlib.h>
#include <unistd.h>

#include "core/trace_io.h"

TEST(trace_roundtrip)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/t.gtr", gt_test_tmpdir());
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid42", "host", 42, 1000, 0), 0);
	ASSERT(access(path, F_OK) != 0); /* only .partial while writing */
	ASSERT_EQ_INT(gt_tw_string(&w, 1, "vecadd", 6), 0);
	struct gt_rec_kernel k;
	memset(&k, 0, sizeof(k));
	k.h.type = GT_REC_KERNEL;
	k.h.size = sizeof(k);
	k.name_id = 1;
	k.start_ns = 5000;
	k.end_ns = 7000;
	k.grid[0] = 128;
	ASSERT_EQ_INT(gt_tw_write(&w, &k, sizeof(k), 1), 0);
	ASSERT_EQ_INT(gt_tw_close(&w, 9000, 3, 0, 0), 0);

	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	ASSERT_EQ_INT(r.partial, 0);
	ASSERT_EQ_STR(r.hdr.proc, "pid42");
	ASSERT_EQ_U64(r.hdr.records, 2);
	ASSERT_EQ_U64(r.hdr.lost_records, 3);
	ASSERT(r.hdr.flags & GT_FILE_LOST);
	const struct gt_rec_hdr *h;
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 1);
	ASSERT_EQ_INT(h->type, GT_REC_STRING);
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 1);
	ASSERT_EQ_INT(h->type, GT_REC_KERNEL);
	const struct gt_rec_kernel *kk = (const void *)h;
	ASSERT_EQ_STR(gt_tr_str(&r, kk->name_id), "vecadd");
	ASSERT_EQ_U64(kk->end_ns - kk->start_ns, 2000);
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 0);
	gt_tr_close(&r);
}

TEST(trace_torn_tail_is_partial)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/t.gtr", gt_test_tmpdir());
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid1", "h", 1, 1, 0), 0);
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	ASSERT_EQ_INT(gt_tw_write(&w, &c, sizeof(c), 1), 0);
	ASSERT_EQ_INT(gt_tw_write(&w, &c, 12, 0), 0); /* killed mid-record */
	/* never closed: only the .partial exists */
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	ASSERT_EQ_INT(r.partial, 1);
	const struct gt_rec_hdr *h;
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 1);
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 0);
	ASSERT_EQ_U64(r.nrecords, 1);
	gt_tr_close(&r);
	close(w.fd);
}

TEST(trace_bad_size_names_offset)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/t.gtr", gt_test_tmpdir());
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid1", "h", 1, 1, 0), 0);
	struct gt_rec_hdr bad = {GT_REC_KERNEL, 16, 0};
	unsigned char pad[16] = {0};
	memcpy(pad, &bad, sizeof(bad));
	ASSERT_EQ_INT(gt_tw_write(&w, pad, 16, 1), 0);
	ASSERT_EQ_INT(gt_tw_close(&w, 2, 0, 0, 0), 0);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	const struct gt_rec_hdr *h;
	ASSERT_EQ_INT(gt_tr_next(&r, &h), -1);
	ASSERT_CONTAINS(r.err, "byte 160");
	ASSERT_CONTAINS(r.err, "record type 3");
	gt_tr_close(&r);
}

TEST(trace_not_a_trace)
{
	const char *p = gt_test_write_file(gt_test_tmpdir(), "x.gtr", "hello world, not a trace", 24);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, p), -1);
	ASSERT_CONTAINS(r.err, "not a gputap trace");
}

/* A trace written by format version 1 (committed, never regenerated) reads
 * whole, field by field, whatever was appended to the records since. */
TEST(trace_version1_file_reads)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/fixtures/trace-v1/trace.gtr", gt_test_srcdir());
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	ASSERT_EQ_INT(r.hdr.version, 1);
	ASSERT_EQ_INT(r.partial, 0);
	ASSERT_EQ_STR(r.hdr.proc, "rank0");
	ASSERT_EQ_STR(r.hdr.host, "host-v1");
	ASSERT_EQ_U64(r.hdr.cupti_dropped, 3);
	int seen[GT_REC_TYPE_MAX + 1] = {0};
	const struct gt_rec_hdr *h;
	uint64_t t = 1700000000000001000ull;
	int rc;
	while ((rc = gt_tr_next(&r, &h)) > 0) {
		ASSERT(h->type <= GT_REC_TYPE_MAX);
		seen[h->type]++;
		/* whatever struct of today is laid over it reads 0 past the version-1 end */
		for (unsigned i = h->size; i < h->size + GT_REC_ZERO_FILL; i++)
			ASSERT_EQ_INT(((const unsigned char *)h)[i], 0);
		switch (h->type) {
		case GT_REC_API: {
			const struct gt_rec_api *a = (const void *)h;
			ASSERT_EQ_STR(gt_tr_str(&r, a->name_id), "cuLaunchKernel");
			ASSERT_EQ_U64(a->end_ns - a->start_ns, 5000);
			ASSERT_EQ_INT(a->copy_kind, -1);
			ASSERT_EQ_U64(a->corr_id, 7);
			break;
		}
		case GT_REC_KERNEL: {
			const struct gt_rec_kernel *k = (const void *)h;
			ASSERT_EQ_STR(gt_tr_str(&r, k->name_id), "_Z5scalePfi");
			ASSERT_EQ_U64(k->start_ns, t + 8000);
			ASSERT_EQ_INT(k->grid[0], 256);
			ASSERT_EQ_INT(k->block[0], 128);
			ASSERT_EQ_INT(k->stream, 13);
			break;
		}
		case GT_REC_MEMCPY:
			ASSERT_EQ_U64(((const struct gt_rec_memcpy *)h)->bytes, 1u << 20);
			break;
		case GT_REC_MEMSET:
			ASSERT_EQ_U64(((const struct gt_rec_memset *)h)->bytes, 4096);
			break;
		case GT_REC_MEMORY:
			ASSERT_EQ_U64(((const struct gt_rec_memory *)h)->address, 0x7f0000000000ull);
			break;
		case GT_REC_RANGE:
			ASSERT_EQ_STR(gt_tr_str(&r, ((const struct gt_rec_range *)h)->name_id), "step");
			break;
		case GT_REC_DEVICE:
			ASSERT_EQ_INT(((const struct gt_rec_device *)h)->sm_count, 132);
			break;
		case GT_REC_NCCL_COLL:
			ASSERT_EQ_INT(((const struct gt_rec_nccl_coll *)h)->nranks, 2);
			ASSERT_EQ_INT(((const struct gt_rec_nccl_coll *)h)->root, -1);
			break;
		default:
			break;
		}
	}
	ASSERT_EQ_INT(rc, 0);
	ASSERT_EQ_INT(seen[GT_REC_STRING], 5);
	for (int ty = GT_REC_API; ty <= GT_REC_NCCL_COLL; ty++)
		ASSERT_EQ_INT(seen[ty], 1);
	gt_tr_close(&r);
}

/* The minimum sizes are version 1's, frozen: appending a field to a record
 * must not make older traces unreadable. */
TEST(trace_min_sizes_are_version1)
{
	static const unsigned v1[][2] = {
		{GT_REC_STRING, 16}, {GT_REC_API, 64},     {GT_REC_KERNEL, 96}, {GT_REC_MEMCPY, 64},
		{GT_REC_MEMSET, 64}, {GT_REC_MEMORY, 56},  {GT_REC_RANGE, 56},  {GT_REC_COUNTER, 32},
		{GT_REC_DROPPED, 24}, {GT_REC_DEVICE, 40}, {GT_REC_THREAD, 16}, {GT_REC_NCCL_COLL, 80},
		{GT_REC_HOLD, 64}, {GT_REC_NOTE, 32},
	};
	for (size_t i = 0; i < sizeof(v1) / sizeof(v1[0]); i++)
		ASSERT_EQ_U64(gt_rec_min_size(v1[i][0]), v1[i][1]);
	ASSERT_EQ_U64(gt_rec_min_size(999), 0);
}

/* A short record after a long one: the reader's buffer holds no leftovers of
 * the long one past the short one's end (an older record's missing fields are 0). */
TEST(trace_short_record_zero_filled)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/z.gtr", gt_test_tmpdir());
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid1", "h", 1, 1, 0), 0);
	char junk[600];
	memset(junk, 0xff, sizeof(junk));
	ASSERT_EQ_INT(gt_tw_string(&w, 1, junk, sizeof(junk)), 0);
	struct gt_rec_thread th;
	memset(&th, 0, sizeof(th));
	th.h.type = GT_REC_THREAD;
	th.h.size = sizeof(th);
	th.name_id = 1;
	ASSERT_EQ_INT(gt_tw_write(&w, &th, sizeof(th), 1), 0);
	ASSERT_EQ_INT(gt_tw_close(&w, 2, 0, 0, 0), 0);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	const struct gt_rec_hdr *h;
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 1);
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 1);
	ASSERT_EQ_INT(h->type, GT_REC_THREAD);
	for (unsigned i = h->size; i < h->size + GT_REC_ZERO_FILL; i++)
		ASSERT_EQ_INT(((const unsigned char *)h)[i], 0);
	gt_tr_close(&r);
}
