/* Fuzz target: the kineto reader and the timeline engine behind it (see fuzz_timeline.h). */
#include "fuzz_timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return gt_fuzz_timeline("kineto", ".json", data, size);
}
