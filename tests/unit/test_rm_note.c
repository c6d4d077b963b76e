/* A run whose kernel records stopped for range metrics: its trace says why, and the summary does not
 * call it a run of 0 kernels. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export.h"
#include "export/writers.h"
#include "trace/trace_io.h"
#include "test.h"

static const char *trace_with_note(const char *dir)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/trace.gtr", dir);
	struct gt_trace_writer w;
	if (gt_tw_open(&w, path, "pid1", "node1", 1, 1000, 0) < 0)
		return NULL;
	struct gt_rec_note n;
	memset(&n, 0, sizeof(n));
	n.h.type = GT_REC_NOTE;
	n.h.size = sizeof(n);
	n.what = GT_NOTE_KERNELS_FOR_METRICS;
	n.ts_ns = 2000;
	if (gt_tw_write(&w, &n, sizeof(n), 1) < 0)
		return NULL;
	gt_tw_close(&w, 5000, 0, 0, 0);
	return path;
}

TEST(rm_note_kernels_for_metrics_is_said_not_a_loss)
{
	ASSERT(gt_note_is_loss(GT_NOTE_KERNELS_FOR_METRICS) == 0);
	ASSERT(gt_note_gpu_incomplete(GT_NOTE_KERNELS_FOR_METRICS) == 0);
	ASSERT_CONTAINS(gt_note_text(GT_NOTE_KERNELS_FOR_METRICS), "range_metrics.csv");
	ASSERT(chdir(gt_test_tmpdir()) == 0);
	ASSERT(mkdir("run", 0755) == 0 && mkdir("run/pid1", 0755) == 0);
	const char *t = trace_with_note("run/pid1");
	ASSERT(t);
	const char *paths[] = {t};
	char *mem = NULL, err[512] = "";
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	ASSERT(f);
	int rc = gt_export_summary(f, "run", paths, 1, err, sizeof(err));
	fclose(f);
	ASSERT(rc == 0 && mem);
	ASSERT_CONTAINS(mem, "kernels measured by range metrics");
	ASSERT(strstr(mem, "0 kernels, 0.000 ms") == NULL);
	ASSERT_CONTAINS(mem, "Note: no kernel records while range metrics measured counters");
	free(mem);
}
