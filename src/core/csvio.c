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
