#include "trace/blockz.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct gt_bz_zs {
	z_stream s;
};

_Static_assert(sizeof(struct gt_block_hdr) == 24, "the block header is 24 bytes on disk");

/* ---- the delta filter ---- */

/* Lane-wise u32 sums and differences of 8-byte words, carries kept inside each lane. */
#define GT_LANE_HI 0x8000000080000000ull
static inline uint64_t lanes_add(uint64_t a, uint64_t b)
{
	return ((a & ~GT_LANE_HI) + (b & ~GT_LANE_HI)) ^ ((a ^ b) & GT_LANE_HI);
}
static inline uint64_t lanes_sub(uint64_t a, uint64_t b)
{
	return ((a | GT_LANE_HI) - (b & ~GT_LANE_HI)) ^ ((a ^ ~b) & GT_LANE_HI);
}

/* Whether the record at `off` (type t, size s) is delta-coded against the one at last[t]. */
static int delta_applies(const unsigned char *buf, const uint32_t *last, unsigned t, unsigned s)
{
	if (t == GT_REC_STRING || t >= 256 || !last[t])
		return 0;
	const struct gt_rec_hdr *p = (const void *)(buf + last[t] - 1);
	return p->size == s;
}

void gt_bz_delta_encode(const unsigned char *in, unsigned char *out, size_t len)
{
	uint32_t last[256] = {0}; /* offset + 1 of the last record of each type */
	size_t off = 0;
	while (off + sizeof(struct gt_rec_hdr) <= len) {
		const struct gt_rec_hdr *h = (const void *)(in + off);
		unsigned s = h->size;
		if (s < sizeof(*h) || s % GT_REC_ALIGN || s > len - off)
			break; /* callers hand whole records only */
		memcpy(out + off, in + off, sizeof(*h));
		if (delta_applies(in, last, h->type, s)) {
			const unsigned char *a = in + off + sizeof(*h), *b = in + last[h->type] - 1 + sizeof(*h);
			unsigned char *o = out + off + sizeof(*h);
			for (unsigned i = 0; i < s - sizeof(*h); i += 8) { /* bodies are whole 8-byte words */
				uint64_t x, y;
				memcpy(&x, a + i, 8);
				memcpy(&y, b + i, 8);
				x = lanes_sub(x, y);
				memcpy(o + i, &x, 8);
			}
		} else {
			memcpy(out + off + sizeof(*h), in + off + sizeof(*h), s - sizeof(*h));
		}
		if (h->type < 256)
			last[h->type] = (uint32_t)off + 1;
		off += s;
	}
}

/* Check the framing of buf[0..len) and count its records, undoing the delta filter on the way
 * if asked.  The count, or -1 (with *bad the offset of the bad record). */
static long walk(unsigned char *buf, size_t len, int undo, size_t *bad)
{
	uint32_t last[256] = {0};
	size_t off = 0;
	long n = 0;
	while (off < len) {
		const struct gt_rec_hdr *h = (const void *)(buf + off);
		unsigned s = len - off < sizeof(*h) ? 0 : h->size;
		if (s < sizeof(*h) || s % GT_REC_ALIGN || s > len - off) {
			*bad = off;
			return -1;
		}
		if (undo && delta_applies(buf, last, h->type, s)) {
			unsigned char *a = buf + off + sizeof(*h);
			const unsigned char *b = buf + last[h->type] - 1 + sizeof(*h);
			for (unsigned i = 0; i < s - sizeof(*h); i += 8) {
				uint64_t x, y;
				memcpy(&x, a + i, 8);
				memcpy(&y, b + i, 8);
				x = lanes_add(x, y);
				memcpy(a + i, &x, 8);
			}
		}
		if (h->type < 256)
			last[h->type] = (uint32_t)off + 1;
		off += s;
		n++;
	}
	return n;
}

int gt_bz_delta_decode(unsigned char *buf, size_t len)
{
	size_t bad;
	return walk(buf, len, 1, &bad) < 0 ? -1 : 0;
}

/* ---- encoder ---- */

int gt_bz_enc_init(struct gt_bz_enc *e, size_t cap, int level)
{
	memset(e, 0, sizeof(*e));
	if (cap > GT_BLOCK_MAX_RAW)
		cap = GT_BLOCK_MAX_RAW;
	if (cap < GT_REC_MAX_SIZE + GT_REC_ALIGN)
		cap = GT_REC_MAX_SIZE + GT_REC_ALIGN; /* the largest record always fits an empty block */
	e->cap = cap;
	e->level = level < 0 ? 0 : level > 9 ? 9 : level;
	e->outcap = sizeof(struct gt_block_hdr) + compressBound((uLong)cap);
	e->raw = malloc(cap);
	e->tmp = malloc(cap);
	e->out = malloc(e->outcap);
	if (!e->raw || !e->tmp || !e->out) {
		gt_bz_enc_free(e);
		return -ENOMEM;
	}
	if (e->level > 0) {
		e->zs = calloc(1, sizeof(*e->zs));
		if (e->zs && deflateInit2(&e->zs->s, e->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(e->zs);
			e->zs = NULL; /* blocks are stored: bigger, never lost */
		}
	}
	return 0;
}

void gt_bz_enc_free(struct gt_bz_enc *e)
{
	if (e->zs) {
		deflateEnd(&e->zs->s);
		free(e->zs);
	}
	free(e->raw);
	free(e->tmp);
	free(e->out);
	memset(e, 0, sizeof(*e));
}

long gt_bz_enc_fit(const struct gt_bz_enc *e, const void *p, size_t len, uint32_t *nrec)
{
	const unsigned char *c = p;
	size_t off = 0, room = e->cap - e->len;
	*nrec = 0;
	while (off < len) {
		if (len - off < sizeof(struct gt_rec_hdr))
			return -EINVAL;
		const struct gt_rec_hdr *h = (const void *)(c + off);
		if (h->size < sizeof(*h) || h->size % GT_REC_ALIGN || h->size > len - off)
			return -EINVAL;
		if (off + h->size > room)
			break;
		off += h->size;
		(*nrec)++;
	}
	return (long)off;
}

void gt_bz_enc_add(struct gt_bz_enc *e, const void *p, size_t len, uint32_t nrec)
{
	memcpy(e->raw + e->len, p, len);
	e->len += len;
	e->nrec += nrec;
}

void gt_bz_enc_finish(struct gt_bz_enc *e, const unsigned char **frame, size_t *framelen)
{
	*frame = e->out;
	*framelen = 0;
	if (!e->len)
		return;
	struct gt_block_hdr h;
	memset(&h, 0, sizeof(h));
	h.magic = GT_BLOCK_MAGIC;
	h.raw_size = (uint32_t)e->len;
	h.nrec = e->nrec;
	unsigned char *data = e->out + sizeof(h);
	int done = 0;
	if (e->zs) {
		gt_bz_delta_encode(e->raw, e->tmp, e->len);
		z_stream *s = &e->zs->s;
		if (deflateReset(s) == Z_OK) {
			s->next_in = e->tmp;
			s->avail_in = (uInt)e->len;
			s->next_out = data;
			s->avail_out = (uInt)(e->outcap - sizeof(h));
			if (deflate(s, Z_FINISH) == Z_STREAM_END && s->total_out < e->len) {
				h.codec = GT_BLOCK_DEFLATE;
				h.filter = GT_BLOCK_DELTA;
				h.data_size = (uint32_t)s->total_out;
				done = 1;
			}
		}
	}
	if (!done) { /* stored: no zlib, or it did not pay */
		h.codec = GT_BLOCK_STORED;
		h.filter = GT_BLOCK_PLAIN;
		h.data_size = (uint32_t)e->len;
		memcpy(data, e->raw, e->len);
	}
	h.crc32 = (uint32_t)crc32(0L, data, h.data_size);
	memcpy(e->out, &h, sizeof(h));
	*framelen = sizeof(h) + h.data_size;
	e->len = 0;
	e->nrec = 0;
}

/* ---- decoder ---- */

int gt_bz_check_hdr(const struct gt_block_hdr *h, char *err, size_t errlen)
{
	if (h->magic != GT_BLOCK_MAGIC) {
		snprintf(err, errlen, "not a block (bad block magic 0x%08x)", h->magic);
		return -1;
	}
	if (h->codec > GT_BLOCK_DEFLATE || h->filter > GT_BLOCK_DELTA || h->flags) {
		snprintf(err, errlen, "block codec %u, filter %u, flags 0x%x: not known to this gputap", h->codec,
			 h->filter, h->flags);
		return -1;
	}
	if (h->raw_size > GT_BLOCK_MAX_RAW || h->raw_size % GT_REC_ALIGN || h->nrec > h->raw_size / 8) {
		snprintf(err, errlen, "block of %u bytes holding %u records is invalid (at most %u bytes, 8 per record)",
			 h->raw_size, h->nrec, GT_BLOCK_MAX_RAW);
		return -1;
	}
	if (h->codec == GT_BLOCK_STORED ? h->data_size != h->raw_size
					: h->data_size > compressBound(GT_BLOCK_MAX_RAW)) {
		snprintf(err, errlen, "block data size %u does not fit its %u decoded bytes", h->data_size,
			 h->raw_size);
		return -1;
	}
	return 0;
}

static int inflate_block(struct gt_bz_dec *d, const struct gt_block_hdr *h, const unsigned char *data, char *err,
			 size_t errlen)
{
	if (!d->zs) {
		d->zs = calloc(1, sizeof(*d->zs));
		if (!d->zs || inflateInit2(&d->zs->s, -15) != Z_OK) {
			free(d->zs);
			d->zs = NULL;
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	} else if (inflateReset(&d->zs->s) != Z_OK) {
		snprintf(err, errlen, "cannot reset zlib");
		return -1;
	}
	z_stream *s = &d->zs->s;
	s->next_in = (unsigned char *)(uintptr_t)data; /* zlib does not write through it */
	s->avail_in = h->data_size;
	s->next_out = d->raw;
	s->avail_out = h->raw_size;
	int rc = inflate(s, Z_FINISH);
	if (rc != Z_STREAM_END) {
		snprintf(err, errlen, "compressed block is damaged (inflate: %s)",
			 rc == Z_BUF_ERROR ? (s->avail_out ? "data ends early" : "decodes to more than the block size")
					   : s->msg ? s->msg : "error");
		return -1;
	}
	if (s->total_out != h->raw_size || s->avail_in) {
		snprintf(err, errlen, "compressed block decodes to %lu bytes, its header says %u%s", s->total_out,
			 h->raw_size, s->avail_in ? " (and data follows the stream)" : "");
		return -1;
	}
	return 0;
}

int gt_bz_decode(struct gt_bz_dec *d, const struct gt_block_hdr *h, const unsigned char *data, char *err,
		 size_t errlen)
{
	d->len = 0;
	d->nrec = 0;
	if ((uint32_t)crc32(0L, data, h->data_size) != h->crc32) {
		snprintf(err, errlen, "block checksum mismatch (damaged data)");
		return -1;
	}
	if (h->raw_size > d->cap) {
		size_t n = d->cap ? d->cap : 64 * 1024;
		while (n < h->raw_size)
			n *= 2;
		unsigned char *b = realloc(d->raw, n);
		if (!b) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		d->raw = b;
		d->cap = n;
	}
	if (h->codec == GT_BLOCK_STORED) {
		if (h->raw_size) /* an empty block: d->raw may still be NULL */
			memcpy(d->raw, data, h->raw_size);
	}
	else if (inflate_block(d, h, data, err, errlen) < 0)
		return -1;
	/* framing and count; the delta filter is undone on the same walk */
	size_t bad = 0;
	long n = walk(d->raw, h->raw_size, h->filter == GT_BLOCK_DELTA, &bad);
	if (n < 0) {
		snprintf(err, errlen, "record at byte %zu of the block has an invalid size", bad);
		return -1;
	}
	if ((uint32_t)n != h->nrec) {
		snprintf(err, errlen, "block holds %ld records, its header says %u", n, h->nrec);
		return -1;
	}
	d->len = h->raw_size;
	d->nrec = (uint32_t)n;
	return 0;
}

void gt_bz_dec_free(struct gt_bz_dec *d)
{
	if (d->zs) {
		inflateEnd(&d->zs->s);
		free(d->zs);
	}
	free(d->raw);
	memset(d, 0, sizeof(*d));
}
