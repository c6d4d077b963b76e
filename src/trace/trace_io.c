#include "trace/trace_io.h"
#include "core/csvio.h"
#include "core/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 0 or -errno */
static int write_all(int fd, const void *p, size_t len)
{
	return gt_write_all(fd, p, len) < 0 ? -errno : 0;
}

int gt_tw_open(struct gt_trace_writer *w, const char *path, const char *proc, const char *host,
	       uint32_t pid, uint64_t start_ns, uint32_t flags)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (strlen(path) >= sizeof(w->path))
		return -ENAMETOOLONG;
	strcpy(w->path, path);
	snprintf(w->tmp_path, sizeof(w->tmp_path), "%s.partial", path);
	w->bz = malloc(sizeof(*w->bz));
	if (!w->bz || gt_bz_enc_init(w->bz, GT_BZ_BLOCK_SIZE, GT_BZ_LEVEL_FAST) < 0) {
		free(w->bz);
		w->bz = NULL;
		return -ENOMEM;
	}
	w->fd = open(w->tmp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		int e = errno;
		gt_tw_discard(w);
		return -e;
	}
	struct gt_file_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, GT_TRACE_MAGIC, 8);
	h.version = GT_TRACE_VERSION;
	h.header_size = sizeof(h);
	h.flags = flags | GT_FILE_PARTIAL;
	h.pid = pid;
	h.start_ns = start_ns;
	if (proc)
		snprintf(h.proc, sizeof(h.proc), "%s", proc);
	if (host)
		snprintf(h.host, sizeof(h.host), "%s", host);
	w->flags = flags;
	int rc = write_all(w->fd, &h, sizeof(h));
	if (rc < 0) {
		gt_tw_discard(w);
		unlink(w->tmp_path);
		return rc;
	}
	w->bytes = sizeof(h);
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int gt_tw_set_level(struct gt_trace_writer *w, int level)
{
	if (!w->bz || w->bz->len)
		return -EINVAL;
	struct gt_bz_enc e;
	int rc = gt_bz_enc_init(&e, GT_BZ_BLOCK_SIZE, level);
	if (rc < 0)
		return rc; /* the writer keeps its level */
	gt_bz_enc_free(w->bz);
	*w->bz = e;
	return 0;
}

int gt_tw_flush(struct gt_trace_writer *w)
{
	if (w->fd < 0 || !w->bz)
		return -EBADF;
	const unsigned char *frame;
	size_t n;
	gt_bz_enc_finish(w->bz, &frame, &n);
	w->pending_since_ns = 0;
	if (!n)
		return 0;
	int rc = write_all(w->fd, frame, n);
	if (rc == 0)
		w->bytes += n;
	return rc;
}

int gt_tw_flush_older(struct gt_trace_writer *w, uint64_t age_ns)
{
	if (!w->pending_since_ns || mono_ns() - w->pending_since_ns < age_ns)
		return 0;
	return gt_tw_flush(w);
}

int gt_tw_write(struct gt_trace_writer *w, const void *recs, size_t len, uint64_t nrec)
{
	(void)nrec; /* counted as parsed: the header's total is what the file holds */
	if (w->fd < 0 || !w->bz)
		return -EBADF;
	const unsigned char *p = recs;
	while (len) {
		uint32_t n;
		long fit = gt_bz_enc_fit(w->bz, p, len, &n);
		if (fit < 0)
			return (int)fit;
		if (fit == 0) { /* the next record starts a new block */
			int rc = gt_tw_flush(w);
			if (rc < 0)
				return rc;
			continue;
		}
		if (!w->pending_since_ns)
			w->pending_since_ns = mono_ns();
		gt_bz_enc_add(w->bz, p, (size_t)fit, n);
		w->records += n;
		p += fit;
		len -= (size_t)fit;
	}
	return 0;
}

int gt_tw_string(struct gt_trace_writer *w, uint32_t id, const char *s, size_t len)
{
	unsigned char buf[GT_REC_MAX_SIZE];
	size_t maxlen = GT_REC_MAX_SIZE - sizeof(struct gt_rec_string);
	if (len > maxlen)
		len = maxlen;
	size_t size = GT_REC_PADDED(sizeof(struct gt_rec_string) + len);
	struct gt_rec_string *r = (struct gt_rec_string *)buf;
	memset(buf, 0, size);
	r->h.type = GT_REC_STRING;
	r->h.size = (uint16_t)size;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(buf + sizeof(*r), s, len);
	return gt_tw_write(w, buf, size, 1);
}

int gt_tw_close(struct gt_trace_writer *w, uint64_t end_ns, uint64_t lost, uint64_t cupti_dropped,
		uint32_t extra_flags)
{
	if (w->fd < 0)
		return -EBADF;
	struct gt_file_header h;
	int rc = gt_tw_flush(w);
	if (rc == 0 && pread(w->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		rc = -EIO;
	if (rc == 0) {
		h.end_ns = end_ns;
		h.records = w->records;
		h.lost_records = lost;
		h.cupti_dropped = cupti_dropped;
		h.flags = w->flags | extra_flags;
		if (lost || cupti_dropped)
			h.flags |= GT_FILE_LOST;
		if (pwrite(w->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
			rc = -EIO;
	}
	if (rc == 0 && fsync(w->fd) < 0 && errno != EINVAL)
		rc = -errno;
	if (close(w->fd) < 0 && rc == 0)
		rc = -errno;
	w->fd = -1;
	if (rc == 0 && rename(w->tmp_path, w->path) < 0)
		rc = -errno;
	gt_tw_discard(w);
	return rc;
}

int gt_tw_abandon(struct gt_trace_writer *w)
{
	int rc = w->fd >= 0 ? gt_tw_flush(w) : 0;
	gt_tw_discard(w);
	return rc;
}

void gt_tw_discard(struct gt_trace_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->bz) {
		gt_bz_enc_free(w->bz);
		free(w->bz);
	}
	w->bz = NULL;
	w->pending_since_ns = 0;
}

/* ---- reader ---- */

/* Each type's frozen version-1 size fits the zero fill, and its struct of today (fields are
 * only appended) is at least that long and covered by the zero fill too. */
#define GT_V1_FITS(T, num, name, v1, thread)                                                       \
	_Static_assert((v1) <= GT_REC_ZERO_FILL && sizeof(struct gt_rec_##name) >= (v1) &&          \
			       sizeof(struct gt_rec_##name) <= GT_REC_ZERO_FILL,                        \
		       #T ": shrank below its version-1 size, or is larger than the zero fill");
GT_REC_TYPES(GT_V1_FITS)
#undef GT_V1_FITS
#define GT_REC_ONE_(T, num, name, v1, thread) +1
_Static_assert((0 GT_REC_TYPES(GT_REC_ONE_)) == GT_REC_TYPE_MAX - 1 && GT_REC_TYPE_MAX <= 32,
	       "record types are numbered from 1 without a gap, below 32 (GT_REC_THREADLESS_MASK)");
#undef GT_REC_ONE_

const char *gt_note_text(uint32_t what)
{
	switch (what) {
	case GT_NOTE_CUPTI_HANDED_OVER:
		return "CUPTI was handed over to another client in the process: no GPU activity from here on";
	case GT_NOTE_CUPTI_REFUSED: return "CUPTI refused to record an activity kind: the trace has none of it";
	case GT_NOTE_CUPTI_BUSY: return "another CUPTI client was attached first: no GPU activity recorded";
	case GT_NOTE_CUPTI_MISSING: return "no usable CUPTI library: no GPU activity recorded";
	case GT_NOTE_GPU_FLUSH_SKIPPED:
		return "ended by a signal: GPU records CUPTI had not handed over yet (the last ~100 ms) are missing";
	case GT_NOTE_STATIC_RUNTIME:
		return "statically linked CUDA runtime: its cudaMemcpy calls are counted as the driver copies they make "
		       "(cuMemcpy*); GPUTAP_RUNTIME_CALLBACKS=on counts them by name, at a cost on every launch";
	case GT_NOTE_KERNELS_FOR_METRICS:
		return "no kernel records while range metrics measured counters (CUPTI's kernel tracing adds "
		       "instructions they would count): the kernels are counted in range_metrics.csv, per kernel "
		       "with their gpu__time_duration.sum in kernel_metrics.csv";
	default: return "a note of a newer gputap";
	}
}

int gt_note_is_loss(uint32_t what)
{
	return what != GT_NOTE_STATIC_RUNTIME && what != GT_NOTE_KERNELS_FOR_METRICS;
}

int gt_note_gpu_incomplete(uint32_t what)
{
	return gt_note_is_loss(what) && what != GT_NOTE_GPU_FLUSH_SKIPPED;
}

size_t gt_rec_min_size(unsigned type)
{
	switch (type) {
#define GT_V1_CASE(T, num, name, v1, thread)                                                        \
	case T: return (v1);
		GT_REC_TYPES(GT_V1_CASE)
#undef GT_V1_CASE
	default: return 0;
	}
}

int gt_tr_open(struct gt_trace_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", path);
	/* a plain file only: a FIFO in place of a trace would block the reader forever */
	r->f = gt_fopen_plain(path);
	if (!r->f && errno == ENOENT) {
		char alt[4096 + 16];
		snprintf(alt, sizeof(alt), "%s.partial", path);
		r->f = gt_fopen_plain(alt);
		if (r->f || errno != ENOENT)
			snprintf(r->path, sizeof(r->path), "%s", alt);
		if (r->f)
			r->partial = 1;
	}
	if (!r->f) {
		snprintf(r->err, sizeof(r->err), "%s: %s", r->path,
			 errno == EISDIR ? "is a folder, not a trace file" : gt_plain_error(errno));
		return -1;
	}
	size_t plen = strlen(r->path);
	if (plen > 8 && strcmp(r->path + plen - 8, ".partial") == 0)
		r->partial = 1;
	size_t n = fread(&r->hdr, 1, sizeof(r->hdr), r->f);
	if (n == 0) {
		snprintf(r->err, sizeof(r->err), "%s: an empty file, not a gputap trace%s", r->path,
			 ferror(r->f) ? " (read error)" : "");
		goto fail;
	}
	if (n < 8 || memcmp(r->hdr.magic, GT_TRACE_MAGIC, 8) != 0) {
		snprintf(r->err, sizeof(r->err), "%s: not a gputap trace (bad magic at byte 0)", r->path);
		goto fail;
	}
	if (n < 16) {
		snprintf(r->err, sizeof(r->err), "%s: the header is cut short (%zu of %zu bytes)", r->path, n,
			 sizeof(r->hdr));
		goto fail;
	}
	if (r->hdr.version == 0 || r->hdr.version > GT_TRACE_VERSION) {
		snprintf(r->err, sizeof(r->err), "%s: trace format version %u is not supported (this gputap reads up to %u)",
			 r->path, r->hdr.version, GT_TRACE_VERSION);
		goto fail;
	}
	if (r->hdr.header_size < 64 || r->hdr.header_size > (1u << 20) || (r->hdr.header_size % 8) != 0) {
		snprintf(r->err, sizeof(r->err), "%s: byte 12: invalid header size %u", r->path, r->hdr.header_size);
		goto fail;
	}
	if (n < sizeof(r->hdr)) {
		snprintf(r->err, sizeof(r->err), "%s: the header is cut short (%zu of %zu bytes)", r->path, n,
			 sizeof(r->hdr));
		goto fail;
	}
	struct stat st;
	if (fstat(fileno(r->f), &st) == 0 && (uint64_t)st.st_size < r->hdr.header_size) {
		snprintf(r->err, sizeof(r->err), "%s: byte 12: header size %u is past the end of the file (%llu bytes)",
			 r->path, r->hdr.header_size, (unsigned long long)st.st_size);
		goto fail;
	}
	r->hdr.proc[sizeof(r->hdr.proc) - 1] = '\0';
	r->hdr.host[sizeof(r->hdr.host) - 1] = '\0';
	if (r->hdr.flags & GT_FILE_PARTIAL)
		r->partial = 1;
	if (fseeko(r->f, (off_t)r->hdr.header_size, SEEK_SET) != 0) {
		snprintf(r->err, sizeof(r->err), "%s: cannot seek past header: %s", r->path, strerror(errno));
		goto fail;
	}
	r->offset = r->hdr.header_size;
	r->cap = GT_REC_MAX_SIZE + GT_REC_ZERO_FILL;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		snprintf(r->err, sizeof(r->err), "%s: out of memory", r->path);
		goto fail;
	}
	return 0;
fail:
	fclose(r->f);
	r->f = NULL;
	return -1;
}

static int add_string(struct gt_trace_reader *r, const struct gt_rec_string *s)
{
	if (s->len > s->h.size - sizeof(*s)) {
		snprintf(r->err, sizeof(r->err), "%s: byte %llu: string length %u exceeds its record", r->path,
			 (unsigned long long)r->offset, s->len);
		return -1;
	}
	if (s->id == 0 || s->id > (1u << 26)) {
		snprintf(r->err, sizeof(r->err), "%s: byte %llu: string id %u out of range", r->path,
			 (unsigned long long)r->offset, s->id);
		return -1;
	}
	/* ids are handed out from 1 in order, so an id far beyond the strings read so far is damage;
	 * refusing it keeps the table proportional to the file */
	if (s->id > r->nseen + GT_TR_ID_SLACK) {
		snprintf(r->err, sizeof(r->err),
			 "%s: byte %llu: string id %u is far beyond the %u strings before it (ids count up from 1)",
			 r->path, (unsigned long long)r->offset, s->id, r->nseen);
		return -1;
	}
	if (s->id >= r->nstrings) {
		uint32_t n = r->nstrings ? r->nstrings : 256;
		while (n <= s->id)
			n *= 2;
		char **t = realloc(r->strings, n * sizeof(*t));
		if (!t) {
			snprintf(r->err, sizeof(r->err), "%s: out of memory", r->path);
			return -1;
		}
		memset(t + r->nstrings, 0, (n - r->nstrings) * sizeof(*t));
		r->strings = t;
		r->nstrings = n;
	}
	char *txt = malloc(s->len + 1);
	if (!txt) {
		snprintf(r->err, sizeof(r->err), "%s: out of memory", r->path);
		return -1;
	}
	memcpy(txt, (const char *)(s + 1), s->len);
	txt[s->len] = '\0';
	if (!r->strings[s->id])
		r->nseen++;
	free(r->strings[s->id]);
	r->strings[s->id] = txt;
	return 0;
}

/* A record of the current block, at least its version-1 size: copied out, zero-filled, strings added. */
static int take(struct gt_trace_reader *r, const struct gt_rec_hdr **rec)
{
	const struct gt_rec_hdr *h = (const void *)(r->bz.raw + r->bpos);
	size_t need = gt_rec_min_size(h->type);
	if (need && h->size < need) {
		snprintf(r->err, sizeof(r->err),
			 "%s: block at byte %llu, record at byte %zu of it: record type %u has size %u, needs at least %zu",
			 r->path, (unsigned long long)r->block_off, r->bpos, h->type, h->size, need);
		return -1;
	}
	memcpy(r->buf, h, h->size);
	memset(r->buf + h->size, 0, GT_REC_ZERO_FILL);
	if (h->type == GT_REC_STRING && add_string(r, (const struct gt_rec_string *)r->buf) < 0)
		return -1;
	r->bpos += h->size;
	r->nrecords++;
	*rec = (const struct gt_rec_hdr *)r->buf;
	return 1;
}

/* Read and decode the next block: 1, 0 at the end (or a torn last block), -1 with r->err. */
static int next_block(struct gt_trace_reader *r)
{
	struct gt_block_hdr h;
	r->bpos = 0;
	r->bz.len = 0;
	size_t n = fread(&h, 1, sizeof(h), r->f);
	if (n == 0)
		return 0;
	if (n < sizeof(h)) {
		r->partial = 1; /* the writer was killed while writing this block */
		return 0;
	}
	char why[256];
	if (gt_bz_check_hdr(&h, why, sizeof(why)) < 0) {
		if (r->partial && h.magic == 0 && h.raw_size == 0) {
			return 0; /* zeros after the last block of a file never closed: nothing was written there */
		}
		snprintf(r->err, sizeof(r->err), "%s: byte %llu: %s", r->path, (unsigned long long)r->offset, why);
		return -1;
	}
	if (h.data_size > r->datacap) {
		size_t c = r->datacap ? r->datacap : 64 * 1024;
		while (c < h.data_size)
			c *= 2;
		unsigned char *d = realloc(r->data, c);
		if (!d) {
			snprintf(r->err, sizeof(r->err), "%s: out of memory", r->path);
			return -1;
		}
		r->data = d;
		r->datacap = c;
	}
	if (fread(r->data, 1, h.data_size, r->f) != h.data_size) {
		r->partial = 1; /* torn last block: everything before it was read */
		return 0;
	}
	if (gt_bz_decode(&r->bz, &h, r->data, why, sizeof(why)) < 0) {
		int c = r->partial ? fgetc(r->f) : 0;
		if (c == EOF)
			return 0; /* the last block of a file never closed did not reach the disk whole */
		snprintf(r->err, sizeof(r->err), "%s: block at byte %llu: %s", r->path, (unsigned long long)r->offset,
			 why);
		return -1;
	}
	r->block_off = r->offset;
	r->offset += sizeof(h) + h.data_size;
	return 1;
}

static int next_blocked(struct gt_trace_reader *r, const struct gt_rec_hdr **rec)
{
	while (r->bpos >= r->bz.len) {
		int rc = next_block(r);
		if (rc <= 0)
			return rc;
	}
	return take(r, rec);
}

int gt_tr_next(struct gt_trace_reader *r, const struct gt_rec_hdr **rec)
{
	if (r->hdr.version >= 2)
		return next_blocked(r, rec);
	struct gt_rec_hdr h;
	size_t n = fread(&h, 1, sizeof(h), r->f);
	if (n == 0)
		return 0;
	if (n < sizeof(h)) {
		r->partial = 1; /* torn tail: the writer was killed mid-record */
		return 0;
	}
	if (h.size < sizeof(h) || (h.size % GT_REC_ALIGN) != 0) {
		snprintf(r->err, sizeof(r->err), "%s: byte %llu: record size %u is invalid", r->path,
			 (unsigned long long)r->offset, h.size);
		return -1;
	}
	size_t need = gt_rec_min_size(h.type);
	if (need && h.size < need) {
		snprintf(r->err, sizeof(r->err), "%s: byte %llu: record type %u has size %u, needs at least %zu",
			 r->path, (unsigned long long)r->offset, h.type, h.size, need);
		return -1;
	}
	memcpy(r->buf, &h, sizeof(h));
	size_t body = h.size - sizeof(h);
	if (body && fread(r->buf + sizeof(h), 1, body, r->f) != body) {
		r->partial = 1;
		return 0;
	}
	/* zero what follows, so readers of an older, shorter record see 0 in the fields appended since */
	memset(r->buf + h.size, 0, GT_REC_ZERO_FILL);
	if (h.type == GT_REC_STRING && add_string(r, (const struct gt_rec_string *)r->buf) < 0)
		return -1;
	r->offset += h.size;
	r->nrecords++;
	*rec = (const struct gt_rec_hdr *)r->buf;
	return 1;
}

const char *gt_tr_str(const struct gt_trace_reader *r, uint32_t id)
{
	if (id < r->nstrings && r->strings[id])
		return r->strings[id];
	return "";
}

void gt_tr_close(struct gt_trace_reader *r)
{
	if (r->f)
		fclose(r->f);
	r->f = NULL;
	for (uint32_t i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	free(r->strings);
	free(r->buf);
	free(r->data);
	gt_bz_dec_free(&r->bz);
	r->strings = NULL;
	r->buf = NULL;
	r->data = NULL;
	r->datacap = 0;
	r->nstrings = 0;
}

int gt_tr_rewrite(const char *in, const char *out, int level, struct gt_tr_rewrite_info *info, char *err,
		  size_t errlen)
{
	struct gt_trace_reader r;
	if (gt_tr_open(&r, in) < 0) {
		snprintf(err, errlen, "%s", r.err);
		return -1;
	}
	/* out.partial is created with O_TRUNC: it must not be the file being read */
	struct stat si, so;
	char tmp[4096 + 16];
	snprintf(tmp, sizeof(tmp), "%s.partial", out);
	if (fstat(fileno(r.f), &si) == 0 && stat(tmp, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
		snprintf(err, errlen, "%s: cannot rewrite a partial trace in place; write it to another folder", r.path);
		gt_tr_close(&r);
		return -1;
	}
	struct gt_trace_writer w;
	int rc = gt_tw_open(&w, out, r.hdr.proc, r.hdr.host, r.hdr.pid, r.hdr.start_ns,
			    r.hdr.flags & ~(GT_FILE_PARTIAL | GT_FILE_LOST));
	if (rc == 0)
		rc = gt_tw_set_level(&w, level);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", out, strerror(-rc));
		if (w.fd >= 0) {
			gt_tw_discard(&w);
			unlink(w.tmp_path);
		}
		gt_tr_close(&r);
		return -1;
	}
	const struct gt_rec_hdr *h;
	int n;
	while ((n = gt_tr_next(&r, &h)) > 0) {
		rc = gt_tw_write(&w, h, h->size, 1);
		if (rc < 0)
			break;
	}
	if (n < 0 || rc < 0) {
		if (n < 0)
			snprintf(err, errlen, "%s", r.err);
		else
			snprintf(err, errlen, "%s: %s", w.tmp_path, strerror(-rc));
		gt_tw_discard(&w);
		unlink(w.tmp_path);
		gt_tr_close(&r);
		return -1;
	}
	if (info) {
		info->hdr = r.hdr;
		info->partial = r.partial;
		info->records = r.nrecords;
		snprintf(info->path, sizeof(info->path), "%s", r.path);
	}
	rc = gt_tw_close(&w, r.hdr.end_ns, r.hdr.lost_records, r.hdr.cupti_dropped, r.partial ? GT_FILE_PARTIAL : 0);
	gt_tr_close(&r);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", out, strerror(-rc));
		unlink(tmp);
		return -1;
	}
	return 0;
}
