#include "test.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/trace_io.h"

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

/* A file of format version 2 made by hand: the header, then one block holding `len` bytes of
 * records, stored (no compression) with a correct CRC unless `bad_crc`.  Returns the path. */
static const char *hand_v2(const char *name, const void *recs, uint32_t len, uint32_t nrec, int bad_crc)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/%s", gt_test_tmpdir(), name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return path;
	struct gt_file_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GT_TRACE_MAGIC, 8);
	h.version = 2;
	h.header_size = sizeof(h);
	fwrite(&h, sizeof(h), 1, f);
	struct gt_block_hdr b = {GT_BLOCK_MAGIC, GT_BLOCK_STORED, GT_BLOCK_PLAIN, 0, len, len, nrec, 0};
	b.crc32 = (uint32_t)crc32(0L, recs, len) ^ (bad_crc ? 1u : 0u);
	fwrite(&b, sizeof(b), 1, f);
	fwrite(recs, 1, len, f);
	fclose(f);
	return path;
}

/* Records of every type, several blocks' worth, with values that change
 * from record to record (and records longer than today's layouts, and types
 * this reader does not know), written compressed and read back byte for byte. */
static size_t all_types(unsigned char *buf, size_t cap, unsigned salt, uint32_t *nrec)
{
	size_t len = 0;
	uint64_t x = salt * 2654435761u + 1;
	*nrec = 0;
	const unsigned ntypes = GT_REC_TYPE_MAX + 1; /* every known type, and two unknown ones */
	for (unsigned i = 0; len + 2048 < cap; i++) {
		unsigned t = 1 + i % ntypes;
		unsigned size;
		if (t == GT_REC_STRING) {
			size = (unsigned)GT_REC_PADDED(16 + i % 40);
		} else if (t >= GT_REC_TYPE_MAX) {
			t = t == GT_REC_TYPE_MAX ? 300 : 200; /* one above the delta filter's range, one below */
			size = 48;
		} else {
			size = (unsigned)gt_rec_min_size(t) + (i % 7 == 0 ? 16 : 0); /* now and then longer: a newer writer */
		}
		struct gt_rec_hdr *h = (struct gt_rec_hdr *)(buf + len);
		h->type = (uint16_t)t;
		h->size = (uint16_t)size;
		h->tid = 1000 + i % 3;
		for (unsigned o = 8; o < size; o += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			uint64_t v = (o == 24 || o == 32) ? 1700000000000000000ull + i * 5000ull + (x % 900) : x % 5000;
			memcpy(buf + len + o, &v, 8);
		}
		if (t == GT_REC_STRING) {
			struct gt_rec_string *st = (struct gt_rec_string *)h;
			st->id = 1 + i % 50;
			st->len = size - 16;
			memset(buf + len + 16, 'a' + (int)(i % 26), size - 16);
		}
		len += size;
		(*nrec)++;
	}
	return len;
}

TEST(trace_blocks_roundtrip_every_type)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/all.gtr", gt_test_tmpdir());
	size_t cap = 3u << 20; /* about 12 blocks of records */
	unsigned char *recs = malloc(cap);
	ASSERT(recs);
	uint32_t nrec;
	size_t len = all_types(recs, cap, 7, &nrec);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid9", "h", 9, 1, 0), 0);
	/* in uneven pieces of whole records, as the tap's chunks come */
	size_t off = 0;
	for (unsigned piece = 0; off < len; piece++) {
		size_t n = 0;
		uint32_t k = 0;
		while (off + n < len && k < 1 + piece % 900) {
			n += ((const struct gt_rec_hdr *)(recs + off + n))->size;
			k++;
		}
		ASSERT_EQ_INT(gt_tw_write(&w, recs + off, n, k), 0);
		off += n;
	}
	ASSERT_EQ_INT(gt_tw_close(&w, 2, 0, 0, 0), 0);

	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	ASSERT_EQ_INT(r.hdr.version, GT_TRACE_VERSION);
	ASSERT_EQ_U64(r.hdr.records, nrec);
	const struct gt_rec_hdr *h;
	int rc;
	off = 0;
	while ((rc = gt_tr_next(&r, &h)) > 0) {
		ASSERT(off + h->size <= len);
		ASSERT(memcmp(h, recs + off, h->size) == 0);
		off += h->size;
	}
	ASSERT_EQ_INT(rc, 0);
	ASSERT_EQ_U64(off, len);
	ASSERT_EQ_U64(r.nrecords, nrec);
	ASSERT_EQ_INT(r.partial, 0);
	gt_tr_close(&r);

	/* several blocks, compressed, each decoding to whole records */
	FILE *f = fopen(path, "rb");
	ASSERT(f);
	fseek(f, sizeof(struct gt_file_header), SEEK_SET);
	struct gt_block_hdr b;
	unsigned blocks = 0, deflated = 0;
	uint64_t raw = 0, nr = 0;
	while (fread(&b, sizeof(b), 1, f) == 1) {
		char why[256];
		ASSERT_EQ_INT(gt_bz_check_hdr(&b, why, sizeof(why)), 0);
		ASSERT(b.raw_size <= GT_BZ_BLOCK_SIZE);
		blocks++;
		deflated += b.codec == GT_BLOCK_DEFLATE;
		raw += b.raw_size;
		nr += b.nrec;
		fseek(f, b.data_size, SEEK_CUR);
	}
	long size = ftell(f);
	fclose(f);
	ASSERT(blocks >= 10);
	ASSERT_EQ_INT(deflated, blocks);
	ASSERT_EQ_U64(raw, len);
	ASSERT_EQ_U64(nr, nrec);
	ASSERT((size_t)size < len / 2);
	free(recs);
}

/* The delta filter alone: encode then decode gives the records back, and
 * what it leaves plain (strings, types from 256, the record headers) is plain. */
TEST(trace_delta_filter_roundtrip)
{
	size_t cap = 1u << 16;
	unsigned char *a = malloc(cap), *b = malloc(cap);
	ASSERT(a && b);
	uint32_t nrec;
	size_t len = all_types(a, cap, 3, &nrec);
	gt_bz_delta_encode(a, b, len);
	ASSERT(memcmp(a, b, len) != 0);
	for (size_t off = 0; off < len;) {
		const struct gt_rec_hdr *h = (const void *)(a + off);
		ASSERT(memcmp(a + off, b + off, 8) == 0);
		if (h->type == GT_REC_STRING || h->type >= 256)
			ASSERT(memcmp(a + off, b + off, h->size) == 0);
		off += h->size;
	}
	ASSERT_EQ_INT(gt_bz_delta_decode(b, len), 0);
	ASSERT(memcmp(a, b, len) == 0);
	/* a buffer that is not whole records is refused */
	ASSERT_EQ_INT(gt_bz_delta_decode(b, len - 8), -1);
	free(a);
	free(b);
}

/* Level 0: every block stored as it is, and read the same. */
TEST(trace_stored_blocks_read)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/st.gtr", gt_test_tmpdir());
	unsigned char recs[8192];
	uint32_t nrec;
	size_t len = all_types(recs, sizeof(recs), 5, &nrec);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid9", "h", 9, 1, 0), 0);
	ASSERT_EQ_INT(gt_tw_set_level(&w, 0), 0);
	ASSERT_EQ_INT(gt_tw_write(&w, recs, len, nrec), 0);
	ASSERT_EQ_INT(gt_tw_set_level(&w, 1), -EINVAL); /* not once records are pending */
	ASSERT_EQ_INT(gt_tw_close(&w, 2, 0, 0, 0), 0);
	struct stat st;
	ASSERT_EQ_INT(stat(path, &st), 0);
	ASSERT_EQ_U64((uint64_t)st.st_size, sizeof(struct gt_file_header) + sizeof(struct gt_block_hdr) + len);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	const struct gt_rec_hdr *h;
	size_t off = 0;
	while (gt_tr_next(&r, &h) > 0) {
		ASSERT(memcmp(h, recs + off, h->size) == 0);
		off += h->size;
	}
	ASSERT_EQ_U64(off, len);
	gt_tr_close(&r);
}

/* gt_tw_write takes whole records only: a torn one is refused, nothing of it kept. */
TEST(trace_write_refuses_torn_records)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/t.gtr", gt_test_tmpdir());
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid1", "h", 1, 1, 0), 0);
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	ASSERT_EQ_INT(gt_tw_write(&w, &c, 12, 0), -EINVAL);
	c.h.size = 12;
	ASSERT_EQ_INT(gt_tw_write(&w, &c, sizeof(c), 1), -EINVAL);
	c.h.size = sizeof(c);
	ASSERT_EQ_INT(gt_tw_write(&w, &c, sizeof(c), 1), 0);
	ASSERT_EQ_INT(gt_tw_close(&w, 2, 0, 0, 0), 0);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	ASSERT_EQ_U64(r.hdr.records, 1);
	gt_tr_close(&r);
}

/* A process killed while writing a block: every earlier block reads, the trace is partial. */
TEST(trace_torn_tail_is_partial)
{
	char path[4200], part[4300];
	snprintf(path, sizeof(path), "%s/t.gtr", gt_test_tmpdir());
	snprintf(part, sizeof(part), "%s.partial", path);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "pid1", "h", 1, 1, 0), 0);
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	for (int i = 0; i < 3; i++) {
		c.ts_ns = 100 + (uint64_t)i;
		ASSERT_EQ_INT(gt_tw_write(&w, &c, sizeof(c), 1), 0);
	}
	ASSERT_EQ_INT(gt_tw_flush(&w), 0);
	struct stat st;
	ASSERT_EQ_INT(stat(part, &st), 0);
	off_t first_end = st.st_size;
	for (int i = 0; i < 500; i++) {
		c.ts_ns = 1000 + (uint64_t)i * 7919;
		ASSERT_EQ_INT(gt_tw_write(&w, &c, sizeof(c), 1), 0);
	}
	ASSERT_EQ_INT(gt_tw_abandon(&w), 0); /* never closed: only the .partial exists */
	ASSERT(access(path, F_OK) != 0);
	ASSERT_EQ_INT(stat(part, &st), 0);
	off_t full = st.st_size;
	struct gt_trace_reader r0; /* whole, it holds all 503 */
	ASSERT_EQ_INT(gt_tr_open(&r0, path), 0);
	const struct gt_rec_hdr *h0;
	while (gt_tr_next(&r0, &h0) > 0) {
	}
	ASSERT_EQ_U64(r0.nrecords, 503);
	ASSERT_EQ_INT(r0.partial, 1);
	gt_tr_close(&r0);
	/* cut anywhere in the second block: its last byte, its data, its header (shorter each time) */
	off_t cuts[] = {full - 1, first_end + 40, first_end + (off_t)sizeof(struct gt_block_hdr), first_end + 3};
	for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
		ASSERT_EQ_INT(truncate(part, cuts[k]), 0);
		struct gt_trace_reader r;
		ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
		ASSERT_EQ_INT(r.partial, 1);
		const struct gt_rec_hdr *h;
		uint64_t n = 0;
		int rc;
		while ((rc = gt_tr_next(&r, &h)) > 0) {
			ASSERT_EQ_U64(((const struct gt_rec_counter *)h)->ts_ns, 100 + n);
			n++;
		}
		ASSERT_EQ_INT(rc, 0);
		ASSERT_EQ_U64(n, 3);
		gt_tr_close(&r);
	}
}

/* A damaged block: in a complete file an error naming the block's byte; as the
 * last block of a file never closed, the end of what was written. */
TEST(trace_damaged_block)
{
	struct gt_rec_counter c[2];
	memset(c, 0, sizeof(c));
	for (int i = 0; i < 2; i++) {
		c[i].h.type = GT_REC_COUNTER;
		c[i].h.size = sizeof(c[i]);
	}
	const char *p = hand_v2("crc.gtr", c, sizeof(c), 2, 1);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, p), 0);
	const struct gt_rec_hdr *h;
	ASSERT_EQ_INT(gt_tr_next(&r, &h), -1);
	ASSERT_CONTAINS(r.err, "crc.gtr: block at byte 160");
	ASSERT_CONTAINS(r.err, "checksum");
	gt_tr_close(&r);
	p = hand_v2("crc.gtr.partial", c, sizeof(c), 2, 1);
	ASSERT_EQ_INT(gt_tr_open(&r, p), 0);
	ASSERT_EQ_INT(gt_tr_next(&r, &h), 0);
	ASSERT_EQ_INT(r.partial, 1);
	gt_tr_close(&r);
	/* a count that does not match what the block holds */
	p = hand_v2("cnt.gtr", c, sizeof(c), 3, 0);
	ASSERT_EQ_INT(gt_tr_open(&r, p), 0);
	ASSERT_EQ_INT(gt_tr_next(&r, &h), -1);
	ASSERT_CONTAINS(r.err, "holds 2 records, its header says 3");
	gt_tr_close(&r);
	/* framing inside a block */
	c[1].h.size = 40; /* runs past the block */
	p = hand_v2("frm.gtr", c, sizeof(c), 2, 0);
	ASSERT_EQ_INT(gt_tr_open(&r, p), 0);
	ASSERT_EQ_INT(gt_tr_next(&r, &h), -1);
	ASSERT_CONTAINS(r.err, "record at byte 32 of the block has an invalid size");
	gt_tr_close(&r);
}

/* Block headers a reader refuses, each with the reason. */
TEST(trace_block_header_checks)
{
	struct {
		struct gt_block_hdr b;
		const char *why;
	} cases[] = {
		{{0x12345678u, 0, 0, 0, 8, 8, 1, 0}, "bad block magic"},
		{{GT_BLOCK_MAGIC, 7, 0, 0, 8, 8, 1, 0}, "codec 7"},
		{{GT_BLOCK_MAGIC, 0, 3, 0, 8, 8, 1, 0}, "filter 3"},
		{{GT_BLOCK_MAGIC, 0, 0, 4, 8, 8, 1, 0}, "flags 0x4"},
		{{GT_BLOCK_MAGIC, 0, 0, 0, 12, 12, 1, 0}, "12 bytes"},
		{{GT_BLOCK_MAGIC, 0, 0, 0, GT_BLOCK_MAX_RAW + 8, GT_BLOCK_MAX_RAW + 8, 1, 0}, "at most"},
		{{GT_BLOCK_MAGIC, 0, 0, 0, 16, 16, 3, 0}, "holding 3 records"},
		{{GT_BLOCK_MAGIC, 0, 0, 0, 16, 24, 1, 0}, "data size 24"},
		{{GT_BLOCK_MAGIC, 1, 1, 0, 16, 1u << 30, 1, 0}, "data size"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		ASSERT_EQ_INT(gt_bz_check_hdr(&cases[i].b, why, sizeof(why)), -1);
		ASSERT_CONTAINS(why, cases[i].why);
	}
	struct gt_block_hdr ok = {GT_BLOCK_MAGIC, 1, 1, 0, 16, 20, 2, 0};
	char why[256];
	ASSERT_EQ_INT(gt_bz_check_hdr(&ok, why, sizeof(why)), 0);
}

TEST(trace_bad_size_names_offset)
{
	/* a kernel record of 16 bytes: well framed, shorter than version 1's kernel */
	unsigned char recs[16] = {0};
	struct gt_rec_hdr bad = {GT_REC_KERNEL, 16, 0};
	memcpy(recs, &bad, sizeof(bad));
	const char *p = hand_v2("bad.gtr", recs, sizeof(recs), 1, 0);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, p), 0);
	const struct gt_rec_hdr *h;
	ASSERT_EQ_INT(gt_tr_next(&r, &h), -1);
	ASSERT_CONTAINS(r.err, "block at byte 160");
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

/* FNV-1a over the bytes of every record of a trace (headers and bodies, as decoded). */
static uint64_t records_hash(struct gt_trace_reader *r, int *counts, int *rc)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const struct gt_rec_hdr *rec;
	while ((*rc = gt_tr_next(r, &rec)) > 0) {
		if (rec->type < 16)
			counts[rec->type]++;
		for (unsigned i = 0; i < rec->size; i++)
			h = (h ^ ((const unsigned char *)rec)[i]) * 0x100000001b3ull;
	}
	return h;
}

/* A trace written by format version 2 (committed, never regenerated: a real
 * recording in one delta-coded, compressed block) reads record for record. */
TEST(trace_version2_file_reads)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/fixtures/trace-v2/trace.gtr", gt_test_srcdir());
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	ASSERT_EQ_INT(r.hdr.version, 2);
	ASSERT_EQ_INT(r.partial, 0);
	ASSERT_EQ_STR(r.hdr.proc, "pid591");
	int counts[16] = {0}, rc;
	uint64_t h = records_hash(&r, counts, &rc);
	ASSERT_EQ_INT(rc, 0);
	ASSERT_EQ_U64(r.nrecords, 2634);
	ASSERT_EQ_U64(r.hdr.records, 2634);
	ASSERT_EQ_INT(counts[GT_REC_STRING], 107);
	ASSERT_EQ_INT(counts[GT_REC_API], 1584);
	ASSERT_EQ_INT(counts[GT_REC_KERNEL], 202);
	ASSERT_EQ_INT(counts[GT_REC_MEMORY], 674);
	ASSERT_EQ_INT(counts[GT_REC_RANGE], 50);
	ASSERT_EQ_U64(h, 0xe891f73e058ea016ull); /* the version-1 original's records, byte for byte */
	gt_tr_close(&r);
	/* and the original itself, where the examples are */
	snprintf(path, sizeof(path), "%s/../examples/recorded/torch-train/pid591/trace.gtr", gt_test_srcdir());
	if (gt_tr_open(&r, path) == 0) {
		int c1[16] = {0};
		ASSERT_EQ_INT(r.hdr.version, 1);
		ASSERT_EQ_U64(records_hash(&r, c1, &rc), 0xe891f73e058ea016ull);
		gt_tr_close(&r);
	}
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
