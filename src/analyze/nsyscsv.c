/*
 * analyze/nsyscsv.c — the summary CSVs of `nsys stats`: cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
 * nvtx_gpu_proj_trace (and their older names gpukernsum, gpumemtimesum, nvtxppsum/nvtx_sum).
 *
 * Columns are found by header name, never by position, in every spelling nsys has used:
 * "Total Time (ns)" / "Total Time" / "Total Time (us)", "Instances" / "Count" / "Operations",
 * "Name" / "Operation" / "Range", "Projected Duration (ns)".  The GPU Performance Analyzer read fixed positions.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "analyze/an_internal.h"
#include "analyze/input.h"

/* Index of the first column whose header equals one of `names` (case-insensitive, trimmed,
 * the unit suffix " (ns)" etc. ignored), or -1.  *scale gets the unit's factor to ns. */
static int find_col(const struct gt_csv *c, const char *const *names, double *scale)
{
	for (const char *const *n = names; *n; n++)
		for (size_t i = 0; i < c->nfields; i++) {
			const char *h = c->fields[i];
			while (isspace((unsigned char)*h))
				h++;
			size_t nl = strlen(*n);
			if (strncasecmp(h, *n, nl) != 0)
				continue;
			const char *rest = h + nl;
			while (*rest == ' ')
				rest++;
			double f = 1;
			if (*rest == '(') {
				if (strncasecmp(rest, "(ns)", 4) == 0)
					f = 1;
				else if (strncasecmp(rest, "(us)", 4) == 0 || strncmp(rest, "(\xc2\xb5s)", 5) == 0)
					f = 1e3;
				else if (strncasecmp(rest, "(ms)", 4) == 0)
					f = 1e6;
				else if (strncasecmp(rest, "(s)", 3) == 0)
					f = 1e9;
				else
					continue;
			} else if (*rest != '\0') {
				continue;
			}
			if (scale)
				*scale = f;
			return (int)i;
		}
	return -1;
}

static int parse_num(const char *s, double *v)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -1;
	char *e;
	errno = 0;
	*v = strtod(s, &e);
	while (isspace((unsigned char)*e))
		e++;
	if (*e || errno || !isfinite(*v) || *v < 0)
		return -1;
	return 0;
}

static int parse_count(const char *s, uint64_t *v)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	char *e;
	errno = 0;
	unsigned long long x = strtoull(s, &e, 10);
	if (*e == '.') { /* "12.0" from a spreadsheet round trip */
		e++;
		while (*e == '0')
			e++;
	}
	while (isspace((unsigned char)*e))
		e++;
	if (*e || errno)
		return -1;
	*v = x;
	return 0;
}

static const char *const time_cols[] = {"Total Time", "Total", NULL};
static const char *const count_cols[] = {"Instances", "Count", "Operations", "Num Calls", "Calls", NULL};
static const char *const name_cols[] = {"Name", "Operation", "Range", NULL};
static const char *const proj_cols[] = {"Projected Duration", "Proj Duration", NULL};

/* `path` opened and its header row read (an empty file is an error, said with its name). */
static int open_with_header(struct gt_csv *csv, const char *path, char *err, size_t errlen)
{
	if (gt_csv_open(csv, path, err, errlen) < 0)
		return -1;
	int rc = gt_csv_next(csv, err, errlen);
	if (rc > 0)
		return 0;
	if (rc == 0)
		snprintf(err, errlen, "%s:1: empty file (no header row)", path);
	gt_csv_close(csv);
	return -1;
}

/* A summary table: one row per name with total time and count. */
static int read_sum(struct gt_an_ctx *c, const char *path, int kind, char *err, size_t errlen)
{
	struct gt_csv csv;
	if (open_with_header(&csv, path, err, errlen) < 0)
		return -1;
	int rc;
	double scale = 1;
	int ct = find_col(&csv, time_cols, &scale), cc = find_col(&csv, count_cols, NULL),
	    cn = find_col(&csv, name_cols, NULL);
	size_t ncols = csv.nfields;
	if (ct < 0 || cc < 0 || cn < 0) {
		snprintf(err, errlen, "%s:%ld: header lacks a %s column (not an nsys %s summary?)", path, csv.line,
			 ct < 0 ? "\"Total Time (ns)\"" : cc < 0 ? "\"Instances\"/\"Count\"" : "\"Name\"/\"Operation\"",
			 kind == GT_NK_KERNEL ? "kernel" : "memory-operation");
		gt_csv_close(&csv);
		return -1;
	}
	while ((rc = gt_csv_next(&csv, err, errlen)) > 0) {
		if (csv.nfields != ncols) {
			snprintf(err, errlen, "%s:%ld: %zu fields, the header has %zu", path, csv.line, csv.nfields,
				 ncols);
			rc = -1;
			break;
		}
		double t;
		uint64_t n;
		if (parse_num(csv.fields[ct], &t) < 0 || parse_count(csv.fields[cc], &n) < 0) {
			snprintf(err, errlen, "%s:%ld: not a number: \"%.60s\"", path, csv.line,
				 parse_num(csv.fields[ct], &t) < 0 ? csv.fields[ct] : csv.fields[cc]);
			rc = -1;
			break;
		}
		const char *name = csv.fields[cn];
		char norm[512];
		if (kind == GT_NK_MEMOP) {
			gt_an_memop_name(name, norm, sizeof(norm));
			name = norm;
		}
		long i = gt_names_get(&c->names, kind, name, strlen(name));
		if (i < 0) {
			snprintf(err, errlen, "%s:%ld: out of memory", path, csv.line);
			rc = -1;
			break;
		}
		c->names.v[i].time_ns += t * scale;
		c->names.v[i].count += n;
	}
	gt_csv_close(&csv);
	return rc < 0 ? -1 : 0;
}

/* nvtx_gpu_proj_trace (one row per range) or nvtx_sum / nvtxppsum (one row per name). */
static int read_nvtx(struct gt_an_ctx *c, const char *path, char *err, size_t errlen)
{
	struct gt_csv csv;
	if (open_with_header(&csv, path, err, errlen) < 0)
		return -1;
	int rc;
	double scale = 1;
	int cd = find_col(&csv, proj_cols, &scale), cn = find_col(&csv, name_cols, NULL), cc = -1;
	if (cd < 0) { /* a summary: total time and instances per range name */
		cd = find_col(&csv, time_cols, &scale);
		cc = find_col(&csv, count_cols, NULL);
	}
	size_t ncols = csv.nfields;
	if (cd < 0 || cn < 0 || (cc < 0 && find_col(&csv, proj_cols, NULL) < 0)) {
		snprintf(err, errlen, "%s:%ld: header lacks a \"Name\" and \"Projected Duration (ns)\" column (not "
				      "an nsys nvtx_gpu_proj_trace?)", path, csv.line);
		gt_csv_close(&csv);
		return -1;
	}
	while ((rc = gt_csv_next(&csv, err, errlen)) > 0) {
		if (csv.nfields != ncols) {
			snprintf(err, errlen, "%s:%ld: %zu fields, the header has %zu", path, csv.line, csv.nfields,
				 ncols);
			rc = -1;
			break;
		}
		double d;
		uint64_t n = 1;
		if (parse_num(csv.fields[cd], &d) < 0 || (cc >= 0 && parse_count(csv.fields[cc], &n) < 0)) {
			snprintf(err, errlen, "%s:%ld: not a number: \"%.60s\"", path, csv.line,
				 cc >= 0 ? csv.fields[cc] : csv.fields[cd]);
			rc = -1;
			break;
		}
		gt_an_range_seen(c, csv.fields[cn], d * scale, n);
		if (!gt_an_is_iter_range(c, csv.fields[cn])) {
			continue;
		}
		c->nvtx_count += n;
		c->nvtx_total_ns += d * scale;
	}
	gt_csv_close(&csv);
	if (rc < 0)
		return -1;
	c->has_nvtx = 1; /* a range name that matched nothing is reported by the caller, as for every input */
	return 0;
}

static int exists(const char *p) { return access(p, R_OK) == 0; }

int gt_an_read_nsys_csv(struct gt_an_ctx *c, const char *kern, const char *nvtx, const char *mem, char *err,
			size_t errlen)
{
	if (read_sum(c, kern, GT_NK_KERNEL, err, errlen) < 0)
		return -1;
	if (mem) {
		if (!exists(mem))
			gt_an_note(c, "%s: %s; the memory-operation table is left out", mem, strerror(errno));
		else if (read_sum(c, mem, GT_NK_MEMOP, err, errlen) < 0)
			return -1;
		else
			c->has_mem = 1;
	}
	if (nvtx) {
		if (!c->tag && !c->tag_is_profiler_step)
			gt_an_note(c, "%s: no NVTX tag of the iteration given; the NVTX section is left out", nvtx);
		else if (!exists(nvtx))
			gt_an_note(c, "%s: %s; the NVTX section is left out", nvtx, strerror(errno));
		else if (read_nvtx(c, nvtx, err, errlen) < 0)
			return -1;
	}
	return 0;
}
