/* The tap's capture sources, in one table (tap/sources.h). */
#include "tap/sources.h"

#include <stdatomic.h>
#include <stddef.h>

#include "tap/capture_tap.h"
#include "tap/cupti.h"
#include "tap/hold.h"
#include "tap/pcsamp.h"
#include "tap/rmetrics.h"
#include "tap/tap.h"

static void cupti_flush(int final)
{
	if (!final) {
		gt_cupti_tick(); /* completed activity buffers every 100 ms */
		gt_pcs_tick();   /* PC samples, as often */
	} else if (atomic_load(&gt_tap.cupti_active)) {
		gt_cupti_flush();
	}
}

static void cupti_stop(void)
{
	gt_rm_finish();  /* range metrics: the last ranges decoded */
	gt_pcs_finish(); /* PC sampling: the last samples, source lines, files */
}

static void windows_flush(int final)
{
	if (!final)
		gt_capture_tap_tick(); /* time windows, trigger requests, CUPTI finalize after a close */
}

/* Driver and runtime hooks and NVTX record from the program's own threads as it calls them; CUPTI
 * starts at cuInit (gt_tap_after_cuinit), not here. */
static const struct gt_source sources[] = {
	{"driver hooks", NULL, NULL, gt_hold_finish}, /* held launches issued while the driver is up */
	{"runtime hooks", NULL, NULL, NULL},
	{"CUPTI", NULL, cupti_flush, cupti_stop},
	{"NVTX", NULL, NULL, NULL},
	{"capture windows", gt_capture_tap_outputs, windows_flush, gt_capture_tap_finish},
};
#define NSRC (sizeof(sources) / sizeof(sources[0]))

void gt_sources_start(const char *proc_dir)
{
	for (size_t i = 0; i < NSRC; i++)
		if (sources[i].start)
			sources[i].start(proc_dir);
}

void gt_sources_flush(int final)
{
	for (size_t i = NSRC; i-- > 0;)
		if (sources[i].flush)
			sources[i].flush(final);
}

void gt_sources_stop(void)
{
	for (size_t i = 0; i < NSRC; i++)
		if (sources[i].stop)
			sources[i].stop();
}
