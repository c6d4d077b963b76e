/*
 * trace/trace_io.h — writing and reading gputap's binary trace (trace.gtr).
 *
 * Owns: file creation as "<path>.partial" and the rename to <path> on a clean
 * close (so a complete file is never confused with a torn one), the header
 * rewrite at close, and a streaming, validating reader.
 *
 * The writer is used by the tap's writer thread only (never in a hot path)
 * and by tests and gputap's own rewrites; it gathers whole records into
 * blocks (trace/blockz.h: delta-coded, compressed) and write(2)s each block
 * whole.  The reader reads every version (1: plain records; 2 on: blocks),
 * keeps the string table (id -> text) and hands out one record at a time; it
 * never trusts sizes from the file and reports the byte offset of any damage.
 */
#ifndef GT_TRACE_IO_H
#define GT_TRACE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gputap/format.h"
#include "trace/blockz.h"

struct gt_trace_writer {
	int fd;
	uint32_t flags;
	uint64_t records;
	uint64_t bytes;
	struct gt_bz_enc *bz;      /* the block being gathered */
	uint64_t pending_since_ns; /* CLOCK_MONOTONIC when its first record came; 0: empty */
	char path[4096];
	char tmp_path[4096 + 16];
};

/* Create <path>.partial (mode 0644, O_CLOEXEC) and write the header. 0 or -errno. */
int gt_tw_open(struct gt_trace_writer *w, const char *path, const char *proc, const char *host,
	       uint32_t pid, uint64_t start_ns, uint32_t flags);
/* zlib level of the blocks (default GT_BZ_LEVEL_FAST), before the first record. 0 or -errno. */
int gt_tw_set_level(struct gt_trace_writer *w, int level);
/* Append `len` bytes of whole records (`nrec` of them: the header counts
 * what it parses).  They reach the file when their block is full or
 * flushed.  0, -EINVAL (bytes that are not whole records) or -errno. */
int gt_tw_write(struct gt_trace_writer *w, const void *recs, size_t len, uint64_t nrec);
/* Append one GT_REC_STRING record. */
int gt_tw_string(struct gt_trace_writer *w, uint32_t id, const char *s, size_t len);
/* Write the block gathered so far (nothing if empty). 0 or -errno. */
int gt_tw_flush(struct gt_trace_writer *w);
/* The same, only when its first record came `age_ns` ago or earlier: what a
 * killed process loses is bounded by this age. 0 or -errno. */
int gt_tw_flush_older(struct gt_trace_writer *w, uint64_t age_ns);
/* Finish: write the last block, rewrite the header with the totals and
 * flags, fsync, rename to the final path.  `extra_flags` are added to the
 * header's (GT_FILE_PARTIAL keeps it marked partial). */
int gt_tw_close(struct gt_trace_writer *w, uint64_t end_ns, uint64_t lost, uint64_t cupti_dropped,
		uint32_t extra_flags);
/* Stop writing and leave the file as <path>.partial, with every record
 * given so far: the last block is written first. 0 or -errno of that write. */
int gt_tw_abandon(struct gt_trace_writer *w);
/* Drop the writer without writing anything (a fork child's copy of its
 * parent's writer: the file and the pending records are the parent's). */
void gt_tw_discard(struct gt_trace_writer *w);

struct gt_trace_reader {
	FILE *f;
	struct gt_file_header hdr;
	int partial;       /* header says partial, file was *.partial, or it ends mid-record / mid-block */
	uint64_t offset;   /* byte offset of the next record (version 1) or block (2 on) */
	uint64_t nrecords; /* records returned so far */
	unsigned char *buf;
	size_t cap;
	/* version 2 on: the current block, decoded */
	struct gt_bz_dec bz;
	size_t bpos;         /* next record in bz.raw */
	uint64_t block_off;  /* file offset of the current block */
	unsigned char *data; /* the block's data as read */
	size_t datacap;
	char **strings; /* id -> NUL-terminated text (NULL if not seen) */
	uint32_t nstrings; /* size of `strings`: at most GT_TR_ID_SLACK above the strings seen */
	uint32_t nseen;    /* distinct string ids read so far */
	char path[4096];
	char err[512];
};

/* A string id may run at most this far ahead of the strings read before it. */
#define GT_TR_ID_SLACK 65536u

/* Open `path` (or `path`.partial when only that exists). 0 or -1 with r->err set. */
int gt_tr_open(struct gt_trace_reader *r, const char *path);
/* Next record: 1 and *rec set (valid until the next call; GT_REC_ZERO_FILL
 * zero bytes follow it), 0 at end, -1 with
 * r->err naming the file and byte offset.  String records are returned too,
 * after they have been added to the table. */
int gt_tr_next(struct gt_trace_reader *r, const struct gt_rec_hdr **rec);
/* Text of string `id`, "" if unknown. */
const char *gt_tr_str(const struct gt_trace_reader *r, uint32_t id);
void gt_tr_close(struct gt_trace_reader *r);

/* Copy the trace `in` (any version, or its .partial) record for record into
 * `out` in today's format, blocks compressed at zlib `level`: old traces
 * become compact ones.  Header fields, totals and the partial mark are kept.
 * Refuses to write over the file it reads unless that file is complete (a
 * rewrite of X/trace.gtr in place replaces it only once whole).  0, or -1
 * with err naming the file.  `info` (may be NULL) gets the input's header as
 * read, whether it was partial, the records copied and the file read. */
struct gt_tr_rewrite_info {
	struct gt_file_header hdr;
	int partial;
	uint64_t records;
	char path[4096];
};
int gt_tr_rewrite(const char *in, const char *out, int level, struct gt_tr_rewrite_info *info, char *err,
		  size_t errlen);

/* What a GT_REC_NOTE says, in a sentence ("CUPTI was handed over ..."). */
const char *gt_note_text(uint32_t what);
/* 1 when the note says something is missing from the trace (the commands warn of it; the others
 * are only printed in the summary). */
int gt_note_is_loss(uint32_t what);
/* 1 when the note marks the trace GT_FILE_GPU_INCOMPLETE (GPU activity was not recorded). */
int gt_note_gpu_incomplete(uint32_t what);

/* Minimum size of each record type: its frozen version-1 size
 * (GT_REC_TYPES' v1 column), 0 for unknown types. */
size_t gt_rec_min_size(unsigned type);
/* A record returned by gt_tr_next is followed by this many zero bytes, so
 * a struct of today laid over a shorter, older record reads 0 past its end. */
#define GT_REC_ZERO_FILL 128u

#endif
