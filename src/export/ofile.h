/*
 * export/ofile.h — output files that are either complete or absent.
 *
 * Owns: creating "<dir>/<name>.partial", checking every write (a full disk is
 * an error, never a silently short file), and the rename to "<dir>/<name>"
 * once the content is complete.  A file that was not committed is removed.
 * (trace/trace_io.h does the same for the binary trace with write(2); this is
 * the stdio flavour for the text outputs.)  A name ending in ".gz" is written
 * gzip-compressed through the same FILE * (a stdio cookie stream over zlib),
 * so a writer does not know whether it compresses.
 */
#ifndef GT_OUT_OFILE_H
#define GT_OUT_OFILE_H

#include <stddef.h>
#include <stdio.h>

struct gt_ofile {
	FILE *f;
	void *gz; /* the compressor behind f for a ".gz" name, else NULL */
	char path[4096];
	char tmp[4096 + 16];
};

/* Create `dir` if missing and open `dir/name`.partial for writing (gzip when
 * `name` ends in ".gz").  0, or -1 with err naming the file. */
int gt_ofile_open(struct gt_ofile *o, const char *dir, const char *name, char *err, size_t errlen);
/* Flush, fsync and close, then rename to the final name.  Any write error
 * seen on the way (ENOSPC...) makes it fail and remove the .partial.
 * 0, or -1 with err naming the file. */
int gt_ofile_commit(struct gt_ofile *o, char *err, size_t errlen);
/* Close and remove the .partial; harmless on a file never opened. */
void gt_ofile_abort(struct gt_ofile *o);

/* mkdir -p; 0 or -1 with errno set. */
int gt_mkdirs(const char *dir);

#endif
