/*
 * Regression driver for fuzz targets: feeds every file of a corpus folder to
 * LLVMFuzzerTestOneInput, so each fuzz target also runs as an ordinary test
 * (and under ASan/UBSan in `make check`).  Prints one "ok fuzz/NAME" line.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	DIR *d = opendir(argv[1]);
	if (!d) {
		printf("not ok fuzz/%s (no corpus at %s)\n", name, argv[1]);
		return 1;
	}
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", argv[1], e->d_name);
		FILE *f = fopen(p, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		long len = ftell(f);
		fseek(f, 0, SEEK_SET);
		uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
		if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
			fprintf(stderr, "fuzz/%s: %s\n", name, e->d_name);
			LLVMFuzzerTestOneInput(buf, (size_t)len);
			n++;
		}
		free(buf);
		fclose(f);
	}
	closedir(d);
	if (n == 0) {
		printf("not ok fuzz/%s (empty corpus)\n", name);
		return 1;
	}
	printf("ok fuzz/%s (%d inputs)\n", name, n);
	return 0;
}
