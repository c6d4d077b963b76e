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
