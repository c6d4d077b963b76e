#include "export/export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/sort.h"
#include "export/model.h"
#include "export/ofile.h"
#include "export/writers.h"
#include "trace/rundir.h"
#include "trace/trace_io.h"

/* The start times of the capture windows of a trace, ascending (one read of it, before the pass
 * that writes: the files of a split are known before their events).  How many, or -1 with err. */
static long window_starts(const char *path, uint64_t **out, char *err, size_t errlen)
{
	struct gt_trace_reader r;
	*out = NULL;
	if (gt_tr_open(&r, path) < 0) {
		snprintf(err, errlen, "%s", r.err);
		return -1;
	}
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	const struct gt_rec_hdr *h;
	int rc;
	while ((rc = gt_tr_next(&r, &h)) > 0) {
		if (h->type != GT_REC_RANGE || ((const struct gt_rec_range *)h)->kind != GT_RANGE_WINDOW)
			continue;
		if (n == cap) {
			uint64_t *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			if (!nv) {
				snprintf(err, errlen, "%s: out of memory", path);
				rc = -1;
				break;
			}
			v = nv;
		}
		v[n++] = ((const struct gt_rec_range *)h)->start_ns;
	}
	if (rc < 0 && !(err[0]))
		snprintf(err, errlen, "%s", r.err);
	gt_tr_close(&r);
	if (rc < 0) {
		free(v);
		return -1;
	}
	gt_sort(v, n, sizeof(*v), gt_cmp_u64);
	*out = v;
	return (long)n;
}

int gt_export_convert(const char *trace_path, const char *outdir, unsigned what, struct gt_export_info *info, char *err,
		   size_t errlen)
{
	return gt_export_convert_ex(trace_path, outdir, what, NULL, NULL, NULL, info, err, errlen);
}

int gt_export_convert_ex(const char *trace_path, const char *outdir, unsigned what, gt_trace_join_fn join, void *join_arg,
		      struct gt_summary *sum, struct gt_export_info *info, char *err, size_t errlen)
{
	struct gt_model m;
	struct gt_ofile json = {0}, tl = {0}, met = {0};
	struct gt_ofile *wins = NULL; /* one per capture window (GT_EXPORT_BY_WINDOW) */
	uint64_t *lo = NULL;
	long nwin = 0;
	struct gt_json *j = NULL;
	int rc = -1;
	if (info)
		memset(info, 0, sizeof(*info));
	if (what & GT_EXPORT_GTR) {
		char out[4200];
		struct gt_tr_rewrite_info ri;
		snprintf(out, sizeof(out), "%s/" GT_PROC_TRACE, outdir);
		if (gt_mkdirs(outdir) < 0) {
			snprintf(err, errlen, "%s: cannot create directory: %s", outdir, strerror(errno));
			return -1;
		}
		if (gt_tr_rewrite(trace_path, out, GT_BZ_LEVEL_SMALL, &ri, err, errlen) < 0)
			return -1;
		if (info) {
			info->partial = ri.partial;
			info->records = ri.records;
			info->lost = ri.hdr.lost_records;
			info->cupti_dropped = ri.hdr.cupti_dropped;
			snprintf(info->proc, sizeof(info->proc), "%s", ri.hdr.proc);
			snprintf(info->trace_path, sizeof(info->trace_path), "%s", ri.path);
		}
		if (!(what & ~GT_EXPORT_GTR))
			return 0;
	}
	if ((what & GT_EXPORT_BY_WINDOW) && (what & (GT_EXPORT_JSON | GT_EXPORT_JSON_GZ))) {
		if (errlen)
			err[0] = '\0';
		nwin = window_starts(trace_path, &lo, err, errlen);
		if (nwin < 0)
			return -1;
		if (nwin == 0)
			gt_warn("%s: no capture window in the trace: one %s", trace_path,
				what & GT_EXPORT_JSON_GZ ? GT_EXPORT_JSON_GZ_NAME : GT_EXPORT_JSON_NAME);
	}
	if (gt_model_open(&m, trace_path, err, errlen) < 0) {
		free(lo);
		return -1;
	}
	if (nwin > 0) {
		wins = calloc((size_t)nwin, sizeof(*wins));
		FILE **fs = calloc((size_t)nwin, sizeof(*fs));
		if (!wins || !fs) {
			free(fs);
			snprintf(err, errlen, "%s: out of memory", trace_path);
			goto out;
		}
		for (long k = 0; k < nwin; k++) {
			char name[64];
			snprintf(name, sizeof(name), "trace.window%ld.json%s", k + 1, what & GT_EXPORT_JSON_GZ ? ".gz" : "");
			if (gt_ofile_open(&wins[k], outdir, name, err, errlen) < 0) {
				free(fs);
				goto out;
			}
			fs[k] = wins[k].f;
		}
		j = gt_json_begin_split(fs, lo, (size_t)nwin, &m, 0);
		free(fs);
		if (!j) {
			snprintf(err, errlen, "%s: out of memory", trace_path);
			goto out;
		}
	} else if (what & (GT_EXPORT_JSON | GT_EXPORT_JSON_GZ)) {
		if (gt_ofile_open(&json, outdir, what & GT_EXPORT_JSON_GZ ? GT_EXPORT_JSON_GZ_NAME : GT_EXPORT_JSON_NAME, err,
				  errlen) < 0)
			goto out;
		j = gt_json_begin(json.f, &m, 0);
		if (!j) {
			snprintf(err, errlen, "%s: out of memory", json.path);
			goto out;
		}
	}
	if (what & GT_EXPORT_LOGS) {
		if (gt_ofile_open(&tl, outdir, GT_PROC_TIMELINE, err, errlen) < 0)
			goto out;
		gt_alnair_timeline_hook(&m, tl.f, 1);
	}
	struct gt_trace_visitor more[GT_VISIT_MAX];
	size_t nmore = 0;
	if (errlen)
		err[0] = '\0';
	if (join && join(join_arg, &m.r, more, &nmore) < 0) {
		gt_trace_release(more, nmore);
		goto out;
	}
	if (sum)
		gt_summary_attach(sum, &m);
	if (gt_model_run_with(&m, more, nmore, err, errlen) < 0)
		goto out;
	if (sum && gt_summary_add(sum, m.path, &m) < 0) {
		snprintf(err, errlen, "%s: out of memory", m.path);
		goto out;
	}
	if (j) {
		struct gt_json *jj = j;
		j = NULL;
		if (gt_json_end(jj, &m) < 0) {
			snprintf(err, errlen, "%s: out of memory", nwin > 0 ? wins[0].path : json.path);
			goto out;
		}
		for (long k = 0; k < nwin; k++)
			if (gt_ofile_commit(&wins[k], err, errlen) < 0)
				goto out;
		if (nwin == 0 && gt_ofile_commit(&json, err, errlen) < 0)
			goto out;
	}
	if (what & GT_EXPORT_LOGS) {
		if (gt_ofile_commit(&tl, err, errlen) < 0)
			goto out;
		if (gt_ofile_open(&met, outdir, "metrics.log", err, errlen) < 0)
			goto out;
		if (gt_alnair_metrics(met.f, &m) < 0) {
			snprintf(err, errlen, "%s: out of memory", met.path);
			goto out;
		}
		if (gt_ofile_commit(&met, err, errlen) < 0)
			goto out;
	}
	if ((what & GT_EXPORT_CSV) && gt_csv_write_all(&m, outdir, GT_EXPORT_CSV_PREFIX, err, errlen) < 0)
		goto out;
	rc = 0;
	if (info) {
		info->partial = m.partial;
		info->records = m.nrecords;
		info->lost = gt_model_lost(&m);
		info->cupti_dropped = gt_model_cupti_dropped(&m);
		info->cupti_no_buffer = m.cupti_no_buffer;
		info->notes = m.notes;
		info->flags = m.hdr.flags;
		snprintf(info->proc, sizeof(info->proc), "%s", m.hdr.proc);
		snprintf(info->trace_path, sizeof(info->trace_path), "%s", m.path);
	}
out:
	if (j)
		gt_json_abandon(j); /* the pass failed */
	gt_ofile_abort(&json);
	for (long k = 0; wins && k < nwin; k++)
		gt_ofile_abort(&wins[k]);
	free(wins);
	free(lo);
	gt_ofile_abort(&tl);
	gt_ofile_abort(&met);
	gt_model_free(&m);
	return rc;
}

void gt_export_warn(const struct gt_export_info *info)
{
	if (info->partial)
		gt_warn("%s: the trace is partial (the process did not finish writing it): its outputs cover the "
			"%llu records it holds",
			info->trace_path, (unsigned long long)info->records);
	for (uint32_t w = 1; w < 32; w++)
		if ((info->notes & (1u << w)) && gt_note_is_loss(w))
			gt_warn("%s: %s", info->trace_path, gt_note_text(w));
	if (info->cupti_no_buffer)
		gt_warn("%s: CUPTI asked %llu times for an activity buffer when all of GPUTAP_BUFFER_MB's share was in "
			"use: GPU records were lost (raise GPUTAP_BUFFER_MB)",
			info->trace_path, (unsigned long long)info->cupti_no_buffer);
}

int gt_export_write_all(const char *trace_path, const char *outdir, unsigned what, char *err, size_t errlen)
{
	struct gt_export_info info;
	int rc = gt_export_convert(trace_path, outdir, what, &info, err, errlen);
	if (rc == 0)
		gt_export_warn(&info);
	return rc;
}
