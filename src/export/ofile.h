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
 *
 * Never replaces what is not ours: an output path that exists and is not a
 * regular file is never renamed over.  A character device or a FIFO
 * (/dev/null, /dev/stdout, a pipe) is written into directly, as a shell
 * redirection would; a folder, a block device or a socket is refused.  A
 * symbolic link is followed: its target is replaced, the link stays.
 */
#ifndef GT_EXPORT_OFILE_H
#define GT_EXPORT_OFILE_H

#include <stddef.h>
#include <stdio.h>

struct gt_ofile {
	FILE *f;
	void *gz; /* the compressor behind f for a ".gz" name, else NULL */
	char path[4096];
	char tmp[4096 + 16]; /* "" when written directly into path (a device or a FIFO) */
};

/* How an output goes to `path`: 0 through "<path>.partial" renamed over it (path absent or a regular
 * file; for a symbolic link, `real` is its target, else path itself); 1 straight into `path` (a
 * character device or a FIFO: nothing there is ours to replace); -1 refused with err naming it (a
 * folder, a block device, a socket, a dangling link). */
int gt_ofile_target(const char *path, char *real, size_t reallen, char *err, size_t errlen);
/* Open the output file `path` (its folder must exist) as gt_ofile_target says.  0, or -1 with err. */
int gt_ofile_open_path(struct gt_ofile *o, const char *path, char *err, size_t errlen);

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
