#include "core/csvio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
