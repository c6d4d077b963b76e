/* Fuzz target: a fleet plan (`gputap fleet --plan`'s JSON, read back by --task and --reduce) read,
 * batched and written again without crashing, whatever the bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "fleet/fleet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fl_plan p;
	char err[256];
	if (fl_plan_from_json(&p, (const char *)data, size, err, sizeof(err)) != 0)
		return 0;
	fl_batch *b = NULL;
	size_t nb = 0;
	if (fl_plan_batches(&p, 3, 4, 1 << 20, 1, &b, &nb) == 0)
		fl_batches_free(b, nb);
	free(fl_plan_json(&p));
	fl_plan_free(&p);
	return 0;
}
