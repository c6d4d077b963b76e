/* Fuzz target: what a fleet worker sends back (its rows, src/fleet/rows.c) read, reduced, printed and
 * written as the result without crashing, whatever the bytes: the reduction's inputs come from other
 * machines.  A plan of as many tasks as the rows name (at most 4,096) stands for the client's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fl_rows rows;
	char err[256];
	fl_rows_init(&rows);
	if (fl_rows_read(&rows, data, size, err, sizeof(err)) != 0) {
		fl_rows_free(&rows);
		return 0;
	}
	int most = -1;
	for (size_t i = 0; i < rows.nranks; i++)
		most = rows.ranks[i].task > most ? rows.ranks[i].task : most;
	if (most >= 4096)
		most = 4095;
	fl_plan p = {0};
	fl_task t[4096];
	char paths[4096][16];
	memset(t, 0, sizeof(t[0]) * (size_t)(most + 1));
	for (int i = 0; i <= most; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/r/rank%d", i);
		t[i] = (fl_task){.path = paths[i], .label = paths[i] + 3, .rank = i % 3 == 2 ? -1 : i,
				 .host = i % 2 ? (char *)"h1" : NULL, .has_anchor = i % 4 == 1, .anchor_ns = 1000 * i,
				 .size = -1, .index = i};
	}
	p.tasks = t;
	p.ntasks = (size_t)(most + 1);
	fl_result res;
	if (fl_reduce(&p, &rows, &res) == 0) {
		char *text = fl_text_summary(res.summary_json, &res.ranks);
		free(text);
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			fl_result_write(&res, f);
			fclose(f);
		}
		fl_result_free(&res);
	}
	fl_rows_free(&rows);
	return 0;
}
