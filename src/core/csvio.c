#include "core/csvio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void gt_csv_put(FILE *f, const char *s)
{
	if (!s)
		s = "";
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Split one CSV record (RFC 4180 quoting, no embedded newlines) in place.
 * Returns the number of fields, or -1 on a stray quote. */
int gt_csv_split(char *s, char **fields, int max)
{
	int n = 0;
	char *w = s;
	while (n < max) {
		fields[n++] = w;
		if (*s == '"') {
			s++;
			for (;;) {
				if (!*s)
					return -1;
				if (*s == '"') {
					if (s[1] == '"') {
						*w++ = '"';
						s += 2;
						continue;
					}
					s++;
					break;
				}
				*w++ = *s++;
			}
			if (*s && *s != ',')
				return -1;
		} else {
			while (*s && *s != ',')
				*w++ = *s++;
		}
		if (!*s) {
			*w = 0;
			return n;
		}
		*w++ = 0;
		s++;
		w = s;
	}
	return n;
}

ssize_t gt_getline_max(char **line, size_t *cap, FILE *f, size_t max, int *cut)
{
	size_t n = 0;
	int c = EOF;
	*cut = 0;
	if (max < 1)
		max = 1;
	flockfile(f);
	while ((c = getc_unlocked(f)) != EOF) {
		if (n >= max) { /* over the limit: the rest of the line is dropped */
			*cut = 1;
			if (c != '\n')
				while ((c = getc_unlocked(f)) != EOF && c != '\n')
					;
			break;
		}
		if (n + 2 > *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			if (nc > max + 2)
				nc = max + 2;
			char *nl = realloc(*line, nc);
			if (!nl) {
				funlockfile(f);
				errno = ENOMEM;
				return -1;
			}
			*line = nl;
			*cap = nc;
		}
		(*line)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	funlockfile(f);
	if (n == 0 && !*cut)
		return -1;
	(*line)[n] = '\0';
	return (ssize_t)n;
}

FILE *gt_fopen_plain(const char *path)
{
	/* O_NONBLOCK: opening a FIFO for reading waits for a writer, forever in a damaged run folder */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	int e = 0;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (S_ISDIR(st.st_mode))
		e = EISDIR;
	else if (!S_ISREG(st.st_mode))
		e = ENODEV;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		e = errno;
	FILE *f = e ? NULL : fdopen(fd, "rb");
	if (!f) {
		if (!e)
			e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

const char *gt_plain_error(int e)
{
	if (e == EISDIR)
		return "is a folder, not a file";
	if (e == ENODEV)
		return "not a plain file (a FIFO, a device or a socket)";
	return strerror(e);
}

char *gt_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rbe");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, r;
	char *b = malloc(cap);
	while (b && (r = fread(b + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				b = NULL;
				errno = ENOMEM;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	int bad = b && ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		errno = EIO;
		return NULL;
	}
	if (b)
		b[n] = 0;
	if (len)
		*len = n;
	return b;
}

int gt_utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char b = s[i];
		size_t k;
		if (b < 0x80) {
			i++;
			continue;
		} else if ((b & 0xe0) == 0xc0 && b >= 0xc2)
			k = 1;
		else if ((b & 0xf0) == 0xe0)
			k = 2;
		else if ((b & 0xf8) == 0xf0 && b <= 0xf4)
			k = 3;
		else
			return 0;
		if (i + k >= n)
			return 0;
		for (size_t j = 1; j <= k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return 0;
		i += k + 1;
	}
	return 1;
}

/* ---- the streaming RFC 4180 reader ---- */

int gt_csv_open(struct gt_csv *c, const char *path, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->f = fopen(path, "rb");
	if (!c->f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	c->path = path;
	c->next_line = 1;
	c->first = 1;
	return 0;
}

void gt_csv_close(struct gt_csv *c)
{
	if (c->f)
		fclose(c->f);
	free(c->buf);
	free(c->fields);
	memset(c, 0, sizeof(*c));
}


static int push_char(struct gt_csv *c, size_t *n, char ch)
{
	if (*n + 1 >= c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 1024;
		if (nc > (256u << 20))
			return -1;
		char *b = realloc(c->buf, nc);
		if (!b)
			return -1;
		c->buf = b;
		c->cap = nc;
	}
	c->buf[(*n)++] = ch;
	return 0;
}

static int push_field(struct gt_csv *c, size_t off)
{
	if (c->nfields == c->fcap) {
		size_t nc = c->fcap ? c->fcap * 2 : 16;
		char **f = realloc(c->fields, nc * sizeof(*f));
		if (!f)
			return -1;
		c->fields = f;
		c->fcap = nc;
	}
	c->fields[c->nfields++] = (char *)(uintptr_t)off; /* turned into pointers at the end */
	return 0;
}

int gt_csv_next(struct gt_csv *c, char *err, size_t errlen)
{
	for (;;) {
		size_t n = 0;
		int ch, quoted = 0, in_quotes = 0, any = 0;
		c->nfields = 0;
		c->line = c->next_line;
		if (push_field(c, 0) < 0)
			goto nomem;
		for (;;) {
			ch = getc(c->f);
			if (ch == EOF) {
				if (ferror(c->f)) {
					snprintf(err, errlen, "%s:%ld: read error: %s", c->path, c->next_line,
						 strerror(errno));
					return -1;
				}
				if (in_quotes) {
					snprintf(err, errlen, "%s:%ld: quoted field not closed before end of file",
						 c->path, c->line);
					return -1;
				}
				if (!any)
					return 0;
				break;
			}
			any = 1;
			if (c->first) {
				c->first = 0;
				if (ch == 0xef) { /* byte-order mark */
					int b2 = getc(c->f), b3 = getc(c->f);
					if (b2 == 0xbb && b3 == 0xbf)
						continue;
					snprintf(err, errlen, "%s:1: not UTF-8 text", c->path);
					return -1;
				}
			}
			if (ch == '\0') {
				snprintf(err, errlen, "%s:%ld: NUL byte in text", c->path, c->next_line);
				return -1;
			}
			if (in_quotes) {
				if (ch == '"') {
					int nx = getc(c->f);
					if (nx == '"') {
						if (push_char(c, &n, '"') < 0)
							goto nomem;
						continue;
					}
					if (nx != EOF)
						ungetc(nx, c->f);
					in_quotes = 0;
					continue;
				}
				if (ch == '\n')
					c->next_line++;
				if (push_char(c, &n, (char)ch) < 0)
					goto nomem;
				continue;
			}
			if (ch == '\n') {
				c->next_line++;
				break;
			}
			if (ch == '\r') {
				int nx = getc(c->f);
				if (nx != '\n' && nx != EOF)
					ungetc(nx, c->f);
				c->next_line++;
				break;
			}
			if (ch == '"') {
				in_quotes = 1;
				quoted = 1;
				continue;
			}
			if (ch == ',') {
				if (push_char(c, &n, '\0') < 0 || push_field(c, n) < 0)
					goto nomem;
				continue;
			}
			if (push_char(c, &n, (char)ch) < 0)
				goto nomem;
		}
		if (push_char(c, &n, '\0') < 0)
			goto nomem;
		(void)quoted;
		if (!gt_utf8_valid((const unsigned char *)c->buf, n - 1)) {
			snprintf(err, errlen, "%s:%ld: invalid UTF-8", c->path, c->line);
			return -1;
		}
		for (size_t i = 0; i < c->nfields; i++)
			c->fields[i] = c->buf + (uintptr_t)c->fields[i];
		/* skip blank lines (nsys writes none, editors sometimes add one at the end) */
		if (c->nfields == 1 && c->fields[0][0] == '\0')
			continue;
		return 1;
	}
nomem:
	snprintf(err, errlen, "%s:%ld: row too long or out of memory", c->path, c->line);
	return -1;
}
