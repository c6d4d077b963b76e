/* metrics/rmcache.c — the range-metrics config image cache.  See rmcache.h. */
#include "metrics/rmcache.h"
#include "core/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "GTRMCFG1"
#define HEAD 32 /* magic, key length, image length, passes, zero */
#define MAX_KEY (64u << 20)
#define MAX_IMAGE (256u << 20)

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV0 0xcbf29ce484222325ULL

int gt_rm_cache_dir(char *out, size_t len)
{
	const char *x = getenv("XDG_CACHE_HOME");
	int n;
	if (x && x[0] == '/')
		n = snprintf(out, len, "%s/gputap", x);
	else {
		const char *h = getenv("HOME");
		if (!h || !h[0])
			return -1;
		n = snprintf(out, len, "%s/.cache/gputap", h);
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

size_t gt_rm_cache_key(const char *chip, uint32_t cupti_version, const char *const *names, int n,
		       const uint8_t *avail, size_t avail_len, uint8_t **key)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	*key = NULL;
	if (!f)
		return 0;
	fprintf(f, "chip=%s\ncupti=%" PRIu32 "\nmetrics=", chip ? chip : "", cupti_version);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", names[i]);
	fprintf(f, "\navailability=%zu\n", avail ? avail_len : 0);
	if (fclose(f) != 0) {
		free(text);
		return 0;
	}
	size_t alen = avail ? avail_len : 0;
	uint8_t *k = malloc(tlen + alen + 1);
	if (!k) {
		free(text);
		return 0;
	}
	memcpy(k, text, tlen);
	if (alen)
		memcpy(k + tlen, avail, alen);
	free(text);
	*key = k;
	return tlen + alen;
}

void gt_rm_cache_path(const char *dir, const uint8_t *key, size_t keylen, char *out, size_t len)
{
	snprintf(out, len, "%s/rmconfig-%016" PRIx64 ".bin", dir, fnv(FNV0, key, keylen));
}

static int read_all(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int gt_rm_cache_load(const char *dir, const uint8_t *key, size_t keylen, uint8_t **image, size_t *size,
		     int *passes, char *why, size_t whylen)
{
	char path[4200];
	*image = NULL;
	gt_rm_cache_path(dir, key, keylen, path, sizeof(path));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	uint8_t head[HEAD], *body = NULL;
	uint64_t klen = 0, ilen = 0, sum = 0;
	uint32_t np = 0, zero = 0;
	const char *bad = NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || read_all(fd, head, HEAD) < 0)
		bad = "shorter than its header";
	else if (memcmp(head, MAGIC, 8) != 0)
		bad = "not a gputap config image cache file";
	if (!bad) {
		memcpy(&klen, head + 8, 8);
		memcpy(&ilen, head + 16, 8);
		memcpy(&np, head + 24, 4);
		memcpy(&zero, head + 28, 4);
		if (zero != 0 || np < 1 || np > 100000 || klen > MAX_KEY || ilen == 0 || ilen > MAX_IMAGE)
			bad = "its header is corrupt";
		else if ((uint64_t)st.st_size != HEAD + klen + ilen + 8)
			bad = "its length does not match its header (cut short?)";
	}
	if (!bad) {
		body = malloc((size_t)(klen + ilen + 8));
		if (!body)
			bad = "out of memory reading it";
		else if (read_all(fd, body, (size_t)(klen + ilen + 8)) < 0)
			bad = "cut short";
	}
	close(fd);
	if (!bad) {
		memcpy(&sum, body + klen + ilen, 8);
		if (fnv(fnv(FNV0, head, HEAD), body, (size_t)(klen + ilen)) != sum)
			bad = "its checksum does not match (corrupt)";
		else if (klen != keylen || memcmp(body, key, keylen) != 0)
			bad = "it belongs to another chip, CUPTI or metric list";
	}
	if (bad) {
		free(body);
		snprintf(why, whylen, "%s: %s", path, bad);
		return -1;
	}
	uint8_t *img = malloc((size_t)ilen);
	if (!img) {
		free(body);
		snprintf(why, whylen, "%s: out of memory reading it", path);
		return -1;
	}
	memcpy(img, body + klen, (size_t)ilen);
	free(body);
	*image = img;
	*size = (size_t)ilen;
	*passes = (int)np;
	return 1;
}

static int make_dir(const char *dir)
{
	if (mkdir(dir, 0700) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -1;
	char parent[4200];
	snprintf(parent, sizeof(parent), "%s", dir);
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return -1;
	*slash = '\0';
	if (make_dir(parent) < 0)
		return -1;
	return mkdir(dir, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

int gt_rm_cache_store(const char *dir, const uint8_t *key, size_t keylen, const uint8_t *image, size_t size,
		      int passes, char *why, size_t whylen)
{
	if (!size || size > MAX_IMAGE || keylen > MAX_KEY || passes < 1) {
		snprintf(why, whylen, "nothing valid to store");
		return -1;
	}
	if (make_dir(dir) < 0) {
		snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	char path[4200], tmp[4300];
	gt_rm_cache_path(dir, key, keylen, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	uint8_t head[HEAD];
	uint64_t klen = keylen, ilen = size;
	uint32_t np = (uint32_t)passes, zero = 0;
	memcpy(head, MAGIC, 8);
	memcpy(head + 8, &klen, 8);
	memcpy(head + 16, &ilen, 8);
	memcpy(head + 24, &np, 4);
	memcpy(head + 28, &zero, 4);
	uint64_t sum = fnv(fnv(fnv(FNV0, head, HEAD), key, keylen), image, size);
	int rc = gt_write_all(fd, head, HEAD) < 0 || gt_write_all(fd, key, keylen) < 0 ||
			 gt_write_all(fd, image, size) < 0 || gt_write_all(fd, &sum, 8) < 0
		 ? -1
		 : 0;
	int err = errno;
	if (close(fd) != 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0 && rename(tmp, path) < 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0) {
		unlink(tmp);
		snprintf(why, whylen, "cannot write %s: %s", path, strerror(err));
	}
	return rc;
}
