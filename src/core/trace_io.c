#include "core/trace_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;
	while (len) {
		ssize_t n = write(fd, c, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
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
	w->fd = open(w->tmp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return -errno;
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
		close(w->fd);
		w->fd = -1;
		unlink(w->tmp_path);
		return rc;
	}
	w->bytes = sizeof(h);
	return 0;
}

int gt_tw_write(struct gt_trace_writer *w, const void *recs, size_t len, uint64_t nrec)
{
	if (w->fd < 0)
		return -EBADF;
	int rc = write_all(w->fd, recs, len);
	if (rc == 0) {
		w->records += nrec;
		w->bytes += len;
	}
	return rc;
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
	int rc = 0;
	if (pread(w->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
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
	return rc;
}

/* ---- reader ---- */

/* The frozen version-1 sizes must fit the structs of today (fields are only appended). */
#define GT_V1_FITS(type, size) _Static_assert((size) <= GT_REC_ZERO_FILL, "record larger than the zero fill");
GT_REC_V1_SIZES(GT_V1_FITS)
#undef GT_V1_FITS
_Static_assert(sizeof(struct gt_rec_api) >= 64 && sizeof(struct gt_rec_kernel) >= 96 &&
		       sizeof(struct gt_rec_memcpy) >= 64 && sizeof(struct gt_rec_memset) >= 64 &&
		       sizeof(struct gt_rec_memory) >= 56 && sizeof(struct gt_rec_range) >= 56 &&
		       sizeof(struct gt_rec_counter) >= 32 && sizeof(struct gt_rec_dropped) >= 24 &&
		       sizeof(struct gt_rec_device) >= 40 && sizeof(struct gt_rec_thread) >= 16 &&
		       sizeof(struct gt_rec_nccl_coll) >= 80 && sizeof(struct gt_rec_string) >= 16 &&
		       sizeof(struct gt_rec_hold) >= 64 &&
		       sizeof(struct gt_rec_note) >= 32,
	       "a record shrank below its version-1 size");
_Static_assert(sizeof(struct gt_rec_kernel) <= GT_REC_ZERO_FILL && sizeof(struct gt_rec_nccl_coll) <= GT_REC_ZERO_FILL,
	       "GT_REC_ZERO_FILL must cover the largest fixed record");

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
	default: return "a note of a newer gputap";
	}
}

size_t gt_rec_min_size(unsigned type)
{
	switch (type) {
#define GT_V1_CASE(t, size)                                                                        \
	case t: return (size);
		GT_REC_V1_SIZES(GT_V1_CASE)
#undef GT_V1_CASE
	default: return 0;
	}
}

int gt_tr_open(struct gt_trace_reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->f = fopen(path, "rbe");
	if (!r->f) {
		char alt[4096 + 16];
		snprintf(alt, sizeof(alt), "%s.partial", path);
		r->f = fopen(alt, "rbe");
		if (r->f) {
			snprintf(r->path, sizeof(r->path), "%s", alt);
			r->partial = 1;
		}
	}
	if (!r->f) {
		snprintf(r->err, sizeof(r->err), "%s: %s", path, strerror(errno));
		return -1;
	}
	size_t plen = strlen(r->path);
	if (plen > 8 && strcmp(r->path + plen - 8, ".partial") == 0)
		r->partial = 1;
	struct stat st;
	if (fstat(fileno(r->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(r->err, sizeof(r->err), "%s: is a folder, not a trace file", r->path);
		goto fail;
	}
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
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < r->hdr.header_size) {
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

int gt_tr_next(struct gt_trace_reader *r, const struct gt_rec_hdr **rec)
{
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
	r->strings = NULL;
	r->buf = NULL;
	r->nstrings = 0;
}
