/*
 * trace/blockz.h — the blocks of a trace (format version 2): records gathered,
 * delta-coded and compressed on their own, and decoded back.
 *
 * Owns: the block layout of include/gputap/format.h (struct gt_block_hdr):
 * the delta filter (GT_BLOCK_DELTA), zlib compression, the CRC, and every
 * check a reader makes on a block before it hands out a record.  Knows
 * nothing of files: trace/trace_io.c does the I/O.
 *
 * Invariants: a block holds whole records only (record framing checked on
 * the way in and on the way out); an encoder never fails for lack of zlib:
 * when compressing fails or does not pay, the block is stored as it is.
 * The encoder runs on the tap's writer thread only, never in a program's
 * thread; its memory is allocated once, at init.
 */
#ifndef GT_TRACE_BLOCKZ_H
#define GT_TRACE_BLOCKZ_H

#include <stddef.h>
#include <stdint.h>

#include "gputap/format.h"

#define GT_BZ_BLOCK_SIZE (256u * 1024u) /* raw bytes per block the writers gather */
#define GT_BZ_LEVEL_FAST 1              /* zlib level of the tap: cheap on its writer thread */
#define GT_BZ_LEVEL_SMALL 6             /* zlib level for offline rewrites (gputap convert --format gtr) */

struct gt_bz_zs; /* zlib state, private to blockz.c */

struct gt_bz_enc {
	unsigned char *raw; /* records gathered so far */
	size_t len, cap;
	uint32_t nrec;
	unsigned char *tmp; /* the delta-coded copy */
	unsigned char *out; /* header + data of the encoded block */
	size_t outcap;
	int level;
	struct gt_bz_zs *zs; /* NULL: zlib unusable, blocks are stored */
};

/* Buffers for blocks of up to `cap` raw bytes (at most GT_BLOCK_MAX_RAW), zlib
 * `level` (0..9, 0 stores).  0 or -ENOMEM. */
int gt_bz_enc_init(struct gt_bz_enc *e, size_t cap, int level);
void gt_bz_enc_free(struct gt_bz_enc *e);
/* Bytes of whole records at the start of p[0..len) that fit in the block
 * now: stops before a record that does not fit.  *nrec gets their count.
 * -EINVAL if p does not start with a well-framed record (size < 8, not a
 * multiple of 8, or past `len`) where one must be. */
long gt_bz_enc_fit(const struct gt_bz_enc *e, const void *p, size_t len, uint32_t *nrec);
/* Append what gt_bz_enc_fit allowed. */
void gt_bz_enc_add(struct gt_bz_enc *e, const void *p, size_t len, uint32_t nrec);
/* Encode the records gathered (if any) as one block: *frame points at its
 * header and data (valid until the next call), *framelen its size (0 when
 * the block was empty).  The encoder is empty afterwards. */
void gt_bz_enc_finish(struct gt_bz_enc *e, const unsigned char **frame, size_t *framelen);

struct gt_bz_dec {
	unsigned char *raw; /* the decoded records of the last block */
	size_t len, cap;
	uint32_t nrec;
	struct gt_bz_zs *zs;
};

/* Check a block header: 0, or -1 with err (what is wrong, without a place). */
int gt_bz_check_hdr(const struct gt_block_hdr *h, char *err, size_t errlen);
/* Decode one block whose header passed gt_bz_check_hdr: CRC, inflate, undo
 * the filter, check the record framing and count.  0 with d->raw/d->len
 * set, or -1 with err (what is wrong, without a place). */
int gt_bz_decode(struct gt_bz_dec *d, const struct gt_block_hdr *h, const unsigned char *data, char *err,
		 size_t errlen);
void gt_bz_dec_free(struct gt_bz_dec *d);

/* The filter alone, on a buffer of whole records (tests, and the two above). */
void gt_bz_delta_encode(const unsigned char *in, unsigned char *out, size_t len);
/* In place; -1 if the records are not well framed (the count is not checked). */
int gt_bz_delta_decode(unsigned char *buf, size_t len);

#endif
