/* Library call logs: the call table, format detection, the per-file driver,
 * library_trace.csv writing and reading. */
#include "liblog/libtrace.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/csvio.h"
#include "core/log.h"
#include "liblog/liblog.h"
#include "core/sort.h"
#include "export/ofile.h"

/* Lines read without a recognised one before a file is called unknown. */
#define DETECT_LINES 20000
/* The longest line kept: far beyond any call's (cuDNN's longest are a few KiB); a longer one is
 * skipped as a bad line, read without being held in memory. */
#define LINE_MAX_BYTES (1 << 20)

static const char *const lib_names[GT_LIB_COUNT] = {"unknown", "cublas", "cublasLt", "cudnn", "nccl"};

const char *gt_lib_name(enum gt_lib lib)
{
	return (unsigned)lib < GT_LIB_COUNT ? lib_names[lib] : "unknown";
}

enum gt_lib gt_lib_from_name(const char *name)
{
	for (int i = 1; i < GT_LIB_COUNT; i++)
		if (strcasecmp(name, lib_names[i]) == 0)
			return (enum gt_lib)i;
	return GT_LIB_UNKNOWN;
}

/* ---- the per-file driver ---- */
static const struct gt_liblog_ops *const parsers[] = {&gt_liblog_nccl, &gt_liblog_cublaslt, &gt_liblog_cublas,
						      &gt_liblog_cudnn};
#define NPARSERS (sizeof(parsers) / sizeof(parsers[0]))

struct driver {
	struct gt_liblog_ctx c;
	const struct gt_liblog_ops *ops;
	void *state;
};

static void driver_line(struct driver *d, char *line, size_t len)
{
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = 0;
	uint64_t no = ++d->c.st->lines;
	if (d->c.failed)
		return;
	if (!d->ops) {
		for (size_t i = 0; i < NPARSERS; i++)
			if (parsers[i]->detect(line)) {
				d->ops = parsers[i];
				d->c.st->lib = d->ops->lib;
				d->state = d->ops->open();
				if (!d->state) {
					d->c.failed = 1;
					return;
				}
				break;
			}
		if (!d->ops)
			return;
	}
	d->ops->line(d->state, &d->c, line, no);
}

static void driver_init(struct driver *d, const char *name, struct gt_libcalls *t, struct gt_liblog_stats *st)
{
	memset(st, 0, sizeof(*st));
	memset(d, 0, sizeof(*d));
	d->c.file = name;
	d->c.t = t;
	d->c.st = st;
}

static int driver_done(struct driver *d)
{
	if (d->ops) {
		if (!d->c.failed)
			d->ops->finish(d->state, &d->c);
		d->ops->close(d->state);
	} else if (gt_liblog_verbose) {
		gt_warn("%s: not a cuBLAS, cuBLASLt, cuDNN or NCCL log I can read; skipped", d->c.file);
	}
	if (d->c.st->bad > GT_LIBLOG_BAD_SHOWN && gt_liblog_verbose)
		gt_warn("%s: %llu lines could not be read in all", d->c.file, (unsigned long long)d->c.st->bad);
	return d->c.failed ? -ENOMEM : 0;
}

int gt_liblog_parse_file(const char *path, struct gt_libcalls *t, struct gt_liblog_stats *st, char *err,
			 size_t errlen)
{
	struct driver d;
	driver_init(&d, path, t, st);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int cut;
	/* bounded memory whatever the file: a line longer than any call's is read and dropped */
	while ((n = gt_getline_max(&line, &cap, f, LINE_MAX_BYTES, &cut)) >= 0) {
		if (cut) {
			st->lines++;
			if (st->bad++ < GT_LIBLOG_BAD_SHOWN && gt_liblog_verbose)
				gt_warn("%s:%llu: a line of more than %d MiB; skipped", path, (unsigned long long)st->lines,
					LINE_MAX_BYTES >> 20);
			continue;
		}
		driver_line(&d, line, (size_t)n);
		if (!d.ops && st->lines >= DETECT_LINES)
			break;
	}
	int rerr = ferror(f);
	free(line);
	fclose(f);
	int rc = driver_done(&d);
	if (rerr) {
		snprintf(err, errlen, "%s: read error", path);
		return -1;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	return 0;
}

int gt_liblog_parse_buf(const char *name, const char *buf, size_t len, struct gt_libcalls *t,
			struct gt_liblog_stats *st)
{
	return gt_liblog_parse_buf_as(GT_LIB_UNKNOWN, name, buf, len, t, st);
}

int gt_liblog_parse_buf_as(enum gt_lib lib, const char *name, const char *buf, size_t len, struct gt_libcalls *t,
			   struct gt_liblog_stats *st)
{
	struct driver d;
	driver_init(&d, name, t, st);
	for (size_t i = 0; i < NPARSERS; i++)
		if (lib != GT_LIB_UNKNOWN && parsers[i]->lib == lib) {
			d.ops = parsers[i];
			st->lib = lib;
			if (!(d.state = d.ops->open()))
				return -ENOMEM;
		}
	char *line = NULL;
	size_t cap = 0;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;
		if (n + 1 > cap) {
			char *nb = realloc(line, n + 1);
			if (!nb)
				break;
			line = nb;
			cap = n + 1;
		}
		memcpy(line, buf + i, n);
		/* an embedded NUL ends the line early, as it would for a C reader */
		line[n] = 0;
		driver_line(&d, line, strlen(line));
		i += n + 1;
	}
	free(line);
	return driver_done(&d);
}

/* ---- collecting a folder ---- */
static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int gt_libtrace_collect(const char *logdir, const char *csv_path, const char *jobid, const char *model,
			char *err, size_t errlen)
{
	struct gt_libcalls *t = gt_libcalls_new();
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = 0;
	char **names = NULL;
	size_t nnames = 0, cap = 0;
	DIR *dir = opendir(logdir);
	if (!dir) {
		if (errno != ENOENT) {
			snprintf(err, errlen, "%s: %s", logdir, strerror(errno));
			gt_libcalls_free(t);
			return -1;
		}
	} else {
		struct dirent *e;
		while ((e = readdir(dir))) {
			if (e->d_name[0] == '.')
				continue;
			size_t nl = strlen(e->d_name);
			if (nl > 8 && strcmp(e->d_name + nl - 8, ".partial") == 0)
				continue;
			if (nnames == cap) {
				cap = cap ? cap * 2 : 16;
				char **nn = realloc(names, cap * sizeof(*names));
				if (!nn) {
					rc = -1;
					break;
				}
				names = nn;
			}
			if (!(names[nnames] = strdup(e->d_name))) {
				rc = -1;
				break;
			}
			nnames++;
		}
		closedir(dir);
	}
	if (rc < 0)
		snprintf(err, errlen, "out of memory");
	if (names)
		gt_sort(names, nnames, sizeof(*names), name_cmp);
	for (size_t i = 0; rc == 0 && i < nnames; i++) {
		char p[4096];
		struct stat sb;
		snprintf(p, sizeof(p), "%s/%s", logdir, names[i]);
		if (stat(p, &sb) < 0 || !S_ISREG(sb.st_mode))
			continue;
		struct gt_liblog_stats st;
		if (gt_liblog_parse_file(p, t, &st, err, errlen) < 0)
			rc = -1;
		else if (st.lib != GT_LIB_UNKNOWN)
			gt_info("%s: %s log, %llu calls, %llu bad lines", p, gt_lib_name(st.lib),
				(unsigned long long)st.calls, (unsigned long long)st.bad);
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	if (rc == 0)
		rc = gt_libcalls_write_csv(t, csv_path, jobid, model, NULL, err, errlen);
	gt_libcalls_free(t);
	return rc;
}

/* ---- CSV ---- */
int gt_libcalls_write_csv(struct gt_libcalls *t, const char *path, const char *jobid, const char *model,
			  const char *created, char *err, size_t errlen)
{
	char when[32];
	if (!created) {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		created = when;
	}
	/* export/ofile.h: complete or absent, never renamed over what is not a regular file */
	struct gt_ofile o;
	if (gt_ofile_open_path(&o, path, err, errlen) < 0)
		return -1;
	FILE *f = o.f;
	fputs("jobid,created_date,model,library,config,calls\n", f);
	const struct gt_libcall_row *rows;
	size_t n = gt_libcalls_rows(t, &rows);
	for (size_t i = 0; i < n; i++) {
		gt_csv_put(f, jobid);
		fputc(',', f);
		gt_csv_put(f, created);
		fputc(',', f);
		gt_csv_put(f, model);
		fputc(',', f);
		gt_csv_put(f, gt_lib_name(rows[i].lib));
		fputc(',', f);
		gt_csv_put(f, rows[i].config);
		fprintf(f, ",%llu\n", (unsigned long long)rows[i].calls);
	}
	return gt_ofile_commit(&o, err, errlen);
}

int gt_libcalls_read_csv(const char *path, struct gt_libcalls *t, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t no = 0;
	int col_lib = -1, col_cfg = -1, col_calls = -1, rc = 0, cut;
	while ((n = gt_getline_max(&line, &cap, f, LINE_MAX_BYTES, &cut)) >= 0) {
		no++;
		if (cut) {
			snprintf(err, errlen, "%s:%llu: a line of more than %d MiB", path, (unsigned long long)no,
				 LINE_MAX_BYTES >> 20);
			rc = -1;
			break;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n == 0)
			continue;
		char *fld[32];
		int nf = gt_csv_split(line, fld, 32);
		if (nf < 0) {
			snprintf(err, errlen, "%s:%llu: unbalanced quote", path, (unsigned long long)no);
			rc = -1;
			break;
		}
		if (col_cfg < 0) {
			for (int i = 0; i < nf; i++) {
				if (strcmp(fld[i], "library") == 0)
					col_lib = i;
				else if (strcmp(fld[i], "config") == 0)
					col_cfg = i;
				else if (strcmp(fld[i], "calls") == 0)
					col_calls = i;
			}
			if (col_lib < 0 || col_cfg < 0 || col_calls < 0) {
				snprintf(err, errlen,
					 "%s:%llu: not a library_trace.csv header (needs library, config, calls)",
					 path, (unsigned long long)no);
				rc = -1;
				break;
			}
			continue;
		}
		if (nf <= col_lib || nf <= col_cfg || nf <= col_calls) {
			snprintf(err, errlen, "%s:%llu: %d fields, expected at least %d", path,
				 (unsigned long long)no, nf,
				 1 + (col_lib > col_cfg ? (col_lib > col_calls ? col_lib : col_calls)
							: (col_cfg > col_calls ? col_cfg : col_calls)));
			rc = -1;
			break;
		}
		enum gt_lib lib = gt_lib_from_name(fld[col_lib]);
		int64_t calls;
		if (lib == GT_LIB_UNKNOWN) {
			snprintf(err, errlen, "%s:%llu: unknown library '%s'", path, (unsigned long long)no,
				 fld[col_lib]);
			rc = -1;
			break;
		}
		if (gt_parse_i64(fld[col_calls], &calls) < 0 || calls < 0) {
			snprintf(err, errlen, "%s:%llu: calls '%s' is not a count", path, (unsigned long long)no,
				 fld[col_calls]);
			rc = -1;
			break;
		}
		if (gt_libcalls_add(t, lib, fld[col_cfg], (uint64_t)calls) < 0) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
	}
	if (rc == 0 && col_cfg < 0) {
		snprintf(err, errlen, "%s: empty file, no library_trace.csv header", path);
		rc = -1;
	}
	free(line);
	fclose(f);
	return rc;
}
