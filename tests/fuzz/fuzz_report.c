/* Fuzz target: `gputap report` on a run directory one of whose files is the input.  The first
 * byte picks the file (the sampler CSVs, run.json, a trace, library_trace.csv); the page and the
 * summary must be written or refused, never crash, loop or grow without bound. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "core/log.h"
#include "report/report.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put(const char *dir, const char *name, const uint8_t *data, size_t size)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = {"gpu_samples.csv", "gpu_info_power_profiler_output.csv",
					    "gpu_info_vram_profiler_output.csv", "run.json", "pid1/trace.gtr",
					    "library_trace.csv", "library_perf.csv"};
	if (size < 1)
		return 0;
	gt_log_level = GT_LOG_QUIET;
	gt_an_sort_chunk = 256; /* quick runs; the spill-and-merge path exercised */
	char dir[] = "/tmp/gputap-fuzz-report-XXXXXX";
	if (!mkdtemp(dir))
		return 0;
	char proc[4200];
	snprintf(proc, sizeof(proc), "%s/pid1", dir);
	mkdir(proc, 0755);
	put(dir, files[data[0] % (sizeof(files) / sizeof(files[0]))], data + 1, size - 1);
	FILE *devnull = fopen("/dev/null", "w");
	char err[1024];
	gt_report_write(dir, devnull, err, sizeof(err));
	if (devnull)
		fclose(devnull);
	gt_fuzz_rm_tree(dir);
	return 0;
}
