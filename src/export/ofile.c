#include "export/ofile.h"
#include "core/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int gt_mkdirs(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char c = p[i];
		p[i] = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
		p[i] = c;
	}
	struct stat st;
	if (stat(dir, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

/* gzip through a stdio cookie: stdio buffers the writer's small writes, each
 * buffer is deflated into `out` and written to the file descriptor. */
struct gz_sink {
	int fd;
	int err;     /* first errno seen; the stream then fails every write */
	int discard; /* closing an aborted file: no need to finish the stream */
	z_stream z;
	unsigned char out[1 << 16];
};

static int gz_put(struct gz_sink *g, const unsigned char *p, size_t n)
{
	if (gt_write_all(g->fd, p, n) < 0) {
		g->err = errno;
		return -1;
	}
	return 0;
}

/* Deflate what is in g->z with `flush` until zlib has nothing more to give. */
static int gz_pump(struct gz_sink *g, int flush)
{
	for (;;) {
		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		int rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR) {
			g->err = EIO;
			return -1;
		}
		if (gz_put(g, g->out, sizeof(g->out) - g->z.avail_out) < 0)
			return -1;
		if (flush == Z_FINISH ? rc == Z_STREAM_END : g->z.avail_out != 0)
			return 0;
	}
}

static ssize_t gz_write(void *cookie, const char *buf, size_t n)
{
	struct gz_sink *g = cookie;
	if (g->err) {
		errno = g->err;
		return -1;
	}
	size_t done = 0;
	while (done < n) {
		size_t k = n - done < (1u << 30) ? n - done : (1u << 30);
		g->z.next_in = (unsigned char *)(uintptr_t)(buf + done);
		g->z.avail_in = (uInt)k;
		if (gz_pump(g, Z_NO_FLUSH) < 0) {
			errno = g->err;
			return -1;
		}
		done += k;
	}
	return (ssize_t)n;
}

static int gz_close(void *cookie)
{
	struct gz_sink *g = cookie;
	if (!g->discard && !g->err) {
		g->z.next_in = NULL;
		g->z.avail_in = 0;
		gz_pump(g, Z_FINISH);
	}
	deflateEnd(&g->z);
	if (!g->discard && !g->err && fsync(g->fd) < 0 && errno != EINVAL && errno != EROFS)
		g->err = errno;
	if (close(g->fd) < 0 && !g->err && errno != EINTR)
		g->err = errno;
	int e = g->err;
	free(g);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

/* A new "<name>.partial": a stale one (a killed writer's) is removed first, and the file is created
 * afresh (O_EXCL, O_NOFOLLOW), so that a link left in its place is never written through. */
static int open_partial(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		unlink(path);
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

static FILE *gz_open(const char *path, int direct, void **sink)
{
	struct gz_sink *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	/* level 6: ~10x smaller JSON at a few tens of MB/s, after the program has ended */
	if (deflateInit2(&g->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	g->fd = direct ? open(path, O_WRONLY | O_CLOEXEC) : open_partial(path);
	if (g->fd < 0) {
		int e = errno;
		deflateEnd(&g->z);
		free(g);
		errno = e;
		return NULL;
	}
	cookie_io_functions_t fn = {.write = gz_write, .close = gz_close};
	FILE *f = fopencookie(g, "w", fn);
	if (!f) {
		int e = errno;
		deflateEnd(&g->z);
		close(g->fd);
		free(g);
		errno = e;
		return NULL;
	}
	*sink = g;
	return f;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

int gt_ofile_target(const char *path, char *real, size_t reallen, char *err, size_t errlen)
{
	struct stat st, lst;
	snprintf(real, reallen, "%s", path);
	if (lstat(path, &lst) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "%s: a symbolic link to nothing (%s): not written through", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a folder, not a file", path);
		return -1;
	}
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return 1;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s: never written or replaced", path,
			 S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a plain file");
		return -1;
	}
	if (S_ISLNK(lst.st_mode)) {
		char *r = realpath(path, NULL);
		if (!r || strlen(r) >= reallen) {
			snprintf(err, errlen, "%s: cannot resolve the symbolic link: %s", path,
				 r ? "path too long" : strerror(errno));
			free(r);
			return -1;
		}
		snprintf(real, reallen, "%s", r);
		free(r);
	}
	return 0;
}

int gt_ofile_open_path(struct gt_ofile *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (strlen(path) >= sizeof(o->path)) {
		snprintf(err, errlen, "%.200s...: path too long", path);
		return -1;
	}
	int direct = gt_ofile_target(path, o->path, sizeof(o->path), err, errlen);
	if (direct < 0)
		return -1;
	const char *to = o->path;
	if (!direct) {
		snprintf(o->tmp, sizeof(o->tmp), "%s.partial", o->path);
		to = o->tmp;
	}
	if (ends_with(path, ".gz")) {
		o->f = gz_open(to, direct, &o->gz);
	} else if (direct) {
		/* no O_CREAT, no O_TRUNC: the node is written into, as `> /dev/null` does */
		int fd = open(to, O_WRONLY | O_CLOEXEC);
		o->f = fd < 0 ? NULL : fdopen(fd, "w");
		if (fd >= 0 && !o->f)
			close(fd);
	} else {
		int fd = open_partial(to);
		o->f = fd < 0 ? NULL : fdopen(fd, "w");
		if (fd >= 0 && !o->f)
			close(fd);
	}
	if (!o->f) {
		snprintf(err, errlen, "%s: %s", to, strerror(errno));
		return -1;
	}
	/* big buffer: the JSON writer makes many small fprintf calls */
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

int gt_ofile_open(struct gt_ofile *o, const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		memset(o, 0, sizeof(*o));
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		return -1;
	}
	if (gt_mkdirs(dir) < 0) {
		memset(o, 0, sizeof(*o));
		snprintf(err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
		return -1;
	}
	return gt_ofile_open_path(o, path, err, errlen);
}

int gt_ofile_commit(struct gt_ofile *o, char *err, size_t errlen)
{
	if (!o->f) {
		snprintf(err, errlen, "%s: not open", o->path);
		return -1;
	}
	int e = 0;
	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		e = errno ? errno : EIO;
	/* a gzip file finishes its stream and syncs in its close */
	if (!e && !o->gz && fsync(fileno(o->f)) < 0 && errno != EINVAL && errno != EROFS)
		e = errno;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	o->gz = NULL;
	if (!e && o->tmp[0] && rename(o->tmp, o->path) < 0)
		e = errno;
	if (e) {
		snprintf(err, errlen, "%s: write failed: %s", o->path, strerror(e));
		if (o->tmp[0])
			unlink(o->tmp);
		return -1;
	}
	return 0;
}

void gt_ofile_abort(struct gt_ofile *o)
{
	if (o->f) {
		if (o->gz)
			((struct gz_sink *)o->gz)->discard = 1;
		fclose(o->f);
		o->f = NULL;
		o->gz = NULL;
		if (o->tmp[0])
			unlink(o->tmp);
	}
}
