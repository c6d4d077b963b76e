#include "export/ofile.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int gt_ofile_open(struct gt_ofile *o, const char *dir, const char *name, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if ((size_t)snprintf(o->path, sizeof(o->path), "%s/%s", dir, name) >= sizeof(o->path)) {
		snprintf(err, errlen, "%s/%s: path too long", dir, name);
		return -1;
	}
	snprintf(o->tmp, sizeof(o->tmp), "%s.partial", o->path);
	if (gt_mkdirs(dir) < 0) {
		snprintf(err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
		return -1;
	}
	o->f = fopen(o->tmp, "we");
	if (!o->f) {
		snprintf(err, errlen, "%s: %s", o->tmp, strerror(errno));
		return -1;
	}
	/* big buffer: the JSON writer makes many small fprintf calls */
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
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
	if (!e && fsync(fileno(o->f)) < 0 && errno != EINVAL && errno != EROFS)
		e = errno;
	if (fclose(o->f) != 0 && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	if (!e && rename(o->tmp, o->path) < 0)
		e = errno;
	if (e) {
		snprintf(err, errlen, "%s: write failed: %s", o->path, strerror(e));
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

void gt_ofile_abort(struct gt_ofile *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		unlink(o->tmp);
	}
}
