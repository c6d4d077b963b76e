/* Unit tests of fleet/text.c: the text summary of `gputap fleet`, byte for byte as the Python
 * package's output.text_summary writes it for the same summary and ranks table. */
#include "test.h"

#include <stdarg.h>
#include <stdlib.h>

#include "fleet/fleet.h"

/* ---- a ranks table by hand: rank, host and the eight columns the text shows -------------------- */

enum { MAXR = 8, NVAL = 8 };
static const char *const val_names[NVAL] = {"span_ms", "compute_ms", "busy_ms", "idle_ms",
					     "comm_ms", "exposed_comm_ms", "wait_ms", "work_ms"};

typedef struct {
	fl_table t;
	fl_col cols[2 + NVAL];
	int64_t rank[MAXR];
	char *host[MAXR];
	double v[NVAL][MAXR];
} ranks_tab;

/* v[k] is the column val_names[k]; a NULL host is none. */
static fl_table *ranks_make(ranks_tab *r, size_t n, const int64_t *rank, const char *const *host,
			    double v[NVAL][MAXR])
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < n; i++) {
		r->rank[i] = rank[i];
		r->host[i] = host[i] ? strdup(host[i]) : NULL;
		for (int k = 0; k < NVAL; k++)
			r->v[k][i] = v[k][i];
	}
	r->cols[0] = (fl_col){.name = "rank", .type = FL_I64, .i = r->rank};
	r->cols[1] = (fl_col){.name = "host", .type = FL_STR, .s = r->host};
	for (int k = 0; k < NVAL; k++)
		r->cols[2 + k] = (fl_col){.name = val_names[k], .type = FL_F64, .f = r->v[k]};
	r->t.rows = n;
	r->t.ncols = 2 + NVAL;
	r->t.cols = r->cols;
	return &r->t;
}

static void ranks_done(ranks_tab *r)
{
	for (size_t i = 0; i < MAXR; i++)
		free(r->host[i]);
}

/* ---- text grown by printf --------------------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static void app(char **s, const char *fmt, ...)
{
	char *add = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&add, fmt, ap) < 0)
		add = NULL;
	va_end(ap);
	size_t a = *s ? strlen(*s) : 0, b = add ? strlen(add) : 0;
	char *n = realloc(*s, a + b + 1);
	if (n) {
		memcpy(n + a, add ? add : "", b + 1);
		*s = n;
	}
	free(add);
}

/* ---- the tests --------------------------------------------------------------------------------- */

/* Stragglers (a host sliced by characters, none, a NaN written as null), late collectives with
 * their also-late ranks and each size unit, the match counts in their order, per rank statistics. */
TEST(fleet_text_stragglers_and_late_collectives)
{
	const char *json =
		"{\"ranks\": 3, \"hosts\": [\"node-a\", \"node-b\"], \"iterations\": 4, \"collectives\": 12, \"collec"
		"tive_rows_by_match\": {\"nccl\": 4, \"order\": 4, \"trace\": 9}, \"late_threshold_ms\": 0.25, \"arri"
		"val_noise_ms\": 0.0375, \"warnings\": [\"2 collectives were seen on fewer ranks\"], \"failed\": [], "
		"\"skipped\": [], \"partial\": [], \"stragglers\": [{\"rank\": 2, \"host\": \"node-b\", \"cost_ms\": "
		"12.5, \"cost_in_iterations_ms\": 10.25, \"cost_per_late_iteration_ms\": 3.4166666, \"late_collective"
		"s\": 4, \"collectives\": 12, \"iterations_late\": 3, \"iterations\": 4, \"pattern\": \"intermittent\""
		", \"cause\": \"compute\", \"max_late_ms\": 4.5}, {\"rank\": 0, \"host\": null, \"cost_ms\": 0.0, \"c"
		"ost_in_iterations_ms\": 0.0, \"cost_per_late_iteration_ms\": 0.0, \"late_collectives\": 0, \"collect"
		"ives\": 12, \"iterations_late\": 0, \"iterations\": 4, \"pattern\": \"\", \"cause\": \"\", \"max_lat"
		"e_ms\": 0.0}, {\"rank\": 7, \"host\": \"n\\u0153ud-tr\\u00e8s-long-h\\u00f4te\", \"cost_ms\": 1.0, \""
		"cost_in_iterations_ms\": 0.5, \"cost_per_late_iteration_ms\": 0.5, \"late_collectives\": 1, \"collec"
		"tives\": 12, \"iterations_late\": 1, \"iterations\": 4, \"pattern\": \"one-off\", \"cause\": \"memor"
		"y copies\", \"max_late_ms\": null}], \"late_collectives\": [{\"iteration\": 1, \"comm\": \"0x0123456"
		"789abcdef0123\", \"seq\": 7, \"name\": \"AllReduce_sum_long_name\", \"count\": 262144, \"dtype\": \""
		"float32\", \"bytes\": 1048576, \"late_rank\": 2, \"late_ms\": 4.5, \"held_ms\": 4.25, \"cause\": \"c"
		"ompute\", \"late_ranks\": [[2, 4.5], [1, 0.5], [0, 0.375], [3, 0.25], [4, 0.125]]}, {\"iteration\": "
		"2, \"comm\": \"c\", \"seq\": 8, \"name\": \"Broadcast\", \"count\": 10, \"dtype\": \"\", \"bytes\": "
		"0, \"late_rank\": 2, \"late_ms\": 1.0, \"held_ms\": 0.5, \"cause\": \"\", \"late_ranks\": [[2, 1.0]]"
		"}, {\"iteration\": 3, \"comm\": \"c\", \"seq\": 9, \"name\": \"AllGather\", \"count\": 0, \"dtype\":"
		" \"\", \"bytes\": 0, \"late_rank\": 1, \"late_ms\": 1.0, \"held_ms\": 0.5, \"cause\": \"waiting for "
		"rank 2\", \"late_ranks\": [[1, 1.0], [2, 0.5]]}, {\"iteration\": 3, \"comm\": \"c\", \"seq\": 10, \""
		"name\": \"ReduceScatter\", \"count\": 1, \"dtype\": \"int8\", \"bytes\": 1023, \"late_rank\": 1, \"l"
		"ate_ms\": 1.0, \"held_ms\": 0.5, \"cause\": \"compute\", \"late_ranks\": []}, {\"iteration\": 3, \"c"
		"omm\": \"c\", \"seq\": 11, \"name\": \"AllReduce\", \"count\": 1, \"dtype\": \"int8\", \"bytes\": 15"
		"36, \"late_rank\": 1, \"late_ms\": 1.0, \"held_ms\": 0.5, \"cause\": \"compute\", \"late_ranks\": []"
		"}, {\"iteration\": 3, \"comm\": \"c\", \"seq\": 12, \"name\": \"AllReduce\", \"count\": 1, \"dtype\""
		": \"int8\", \"bytes\": 3221225472, \"late_rank\": 1, \"late_ms\": 1.0, \"held_ms\": 0.5, \"cause\": "
		"\"compute\", \"late_ranks\": []}], \"late_collectives_total\": 23, \"per_iteration\": [], \"clock\":"
		" [{\"host\": \"node-a\", \"offset_ms\": 0.0, \"source\": \"reference\"}], \"outliers\": []}";
	const char *want =
		"gputap fleet: 3 ranks on 2 hosts, 4 iterations, 12 collectives matched across ranks (by the trace's "
		"sequence numbers 9 rows, NCCL's profiler plugin 4 rows, order 4 rows)\n"
		"late = arriving more than 0.250 ms after the others (6 x their usual scatter of 0.037 ms, at least 0"
		".1 ms)\n"
		"warning: 2 collectives were seen on fewer ranks\n"
		"\n"
		"Stragglers, costliest first (cost: time the others waited for the rank alone; ranked by its part in "
		"the iterations):\n"
		"    rank host               cost ms  in its. ms  per late it.  late colls   late its pattern      ca"
		"use              max late ms\n"
		"       2 node-b              12.500      10.250         3.417        4/12        3/4 intermittent co"
		"mpute                  4.500\n"
		"       0 -                    0.000       0.000         0.000        0/12        0/4 -            - "
		"                       0.000\n"
		"       7 nœud-très-long       1.000       0.500         0.500        1/12        1/4 one-off      me"
		"mory copies              nan\n"
		"\n"
		"Late collectives, longest hold first (23 in all; each in collectives.parquet):\n"
		"   iter comm                     seq collective           size   rank   late ms   held ms cause     "
		"         also late (rank: ms)\n"
		"      1 0x0123456789abcdef01       7 AllReduce_sum_    1.0 MiB      2     4.500     4.250 compute   "
		"         1:0.500 0:0.375 3:0.250\n"
		"      2 c                          8 Broadcast           10 el      2     1.000     0.500 -         "
		"         \n"
		"      3 c                          9 AllGather               -      1     1.000     0.500 waiting fo"
		"r rank 2 2:0.500\n"
		"      3 c                         10 ReduceScatter      1023 B      1     1.000     0.500 compute   "
		"         \n"
		"      3 c                         11 AllReduce         1.5 KiB      1     1.000     0.500 compute   "
		"         \n"
		"      3 c                         12 AllReduce         3.0 GiB      1     1.000     0.500 compute   "
		"         \n"
		"  ... 3 more in collectives.parquet (is_late)\n"
		"\n"
		"Per rank (ms)       median        min        max\n"
		"  span                 11.000     10.000     12.500\n"
		"  busy                  9.000      8.000      9.500\n"
		"  idle                  1.500      1.000      4.500\n"
		"  compute               7.250      7.000      9.000\n"
		"  comm                  2.250      2.000      3.000\n"
		"  exposed_comm          1.000      0.500      1.125\n"
		"  wait                  0.500      0.000      0.750\n"
		"  work                 10.250      9.500     12.500\n";
	ranks_tab r;
	int64_t rank[] = {0, 1, 2};
	const char *host[] = {"node-a", "node-a", "node-b"};
	double v[NVAL][MAXR] = {{10, 11, 12.5}, {7, 7.25, 9}, {9, 9.5, 8},         {1, 1.5, 4.5},
				{2, 2.25, 3},   {1, 1.125, 0.5}, {0.5, 0.75, 0}, {9.5, 10.25, 12.5}};
	char *got = fl_text_summary(json, ranks_make(&r, 3, rank, host, v));
	ASSERT_EQ_STR(got, want);
	free(got);
	ranks_done(&r);
}

/* More iterations than TEXT_ROWS: the 20 costliest (of equal costs the first), in iteration order;
 * the late rank's host from the ranks table (of two rows of a rank, the last); medians of an even
 * count and with NaNs left out, an all-NaN column. */
TEST(fleet_text_per_iteration_most_waiting)
{
	char *json = NULL;
	app(&json, "{\"ranks\": 4, \"hosts\": [\"alpha\"], \"iterations\": 25, \"collectives\": 0, \"failed\": [], "
		   "\"late_collectives\": [], \"per_iteration\": [");
	for (int i = 0; i < 25; i++)
		app(&json,
		    "%s{\"iteration\": %d, \"late_rank\": %d, \"late_ms\": %.17g, \"cause\": \"%s\", \"slowest_rank\": %d, "
		    "\"slowest_ms\": %.17g, \"fastest_rank\": %d, \"fastest_ms\": %.17g, \"spread_ms\": %.17g, "
		    "\"cost_ms\": %.17g}",
		    i ? ", " : "", i, i % 4 == 3 ? -1 : i % 3, i * 0.25, i % 2 ? "compute" : "", i % 3, 10 + i * 0.5,
		    (i + 1) % 3, 9.0 + i * 0.125, 1.0 + i * 0.375, (double)(i % 4));
	app(&json, "], \"clock\": [], \"outliers\": []}");
	const char *want =
		"gputap fleet: 4 ranks on 1 host, 25 iterations, 0 collectives matched across ranks\n"
		"\n"
		"Per iteration (time not waiting for other ranks, ms); the 20 with the most waiting:\n"
		"   iter   late host             late ms cause              slowest         ms fastest         ms    "
		" spread\n"
		"      0      0 alpha              0.000 -                        0     10.000       1      9.000    "
		"  1.000\n"
		"      1      1 beta2              0.250 compute                  1     10.500       2      9.125    "
		"  1.375\n"
		"      2      2 gamma-host-nam     0.500 -                        2     11.000       0      9.250    "
		"  1.750\n"
		"      3      - -                  0.750 compute                  0     11.500       1      9.375    "
		"  2.125\n"
		"      4      1 beta2              1.000 -                        1     12.000       2      9.500    "
		"  2.500\n"
		"      5      2 gamma-host-nam     1.250 compute                  2     12.500       0      9.625    "
		"  2.875\n"
		"      6      0 alpha              1.500 -                        0     13.000       1      9.750    "
		"  3.250\n"
		"      7      - -                  1.750 compute                  1     13.500       2      9.875    "
		"  3.625\n"
		"      9      0 alpha              2.250 compute                  0     14.500       1     10.125    "
		"  4.375\n"
		"     10      1 beta2              2.500 -                        1     15.000       2     10.250    "
		"  4.750\n"
		"     11      - -                  2.750 compute                  2     15.500       0     10.375    "
		"  5.125\n"
		"     13      1 beta2              3.250 compute                  1     16.500       2     10.625    "
		"  5.875\n"
		"     14      2 gamma-host-nam     3.500 -                        2     17.000       0     10.750    "
		"  6.250\n"
		"     15      - -                  3.750 compute                  0     17.500       1     10.875    "
		"  6.625\n"
		"     17      2 gamma-host-nam     4.250 compute                  2     18.500       0     11.125    "
		"  7.375\n"
		"     18      0 alpha              4.500 -                        0     19.000       1     11.250    "
		"  7.750\n"
		"     19      - -                  4.750 compute                  1     19.500       2     11.375    "
		"  8.125\n"
		"     21      0 alpha              5.250 compute                  0     20.500       1     11.625    "
		"  8.875\n"
		"     22      1 beta2              5.500 -                        1     21.000       2     11.750    "
		"  9.250\n"
		"     23      - -                  5.750 compute                  2     21.500       0     11.875    "
		"  9.625\n"
		"  ... 5 more in summary.json (per_iteration) and iterations.parquet\n"
		"\n"
		"Per rank (ms)       median        min        max\n"
		"  span                  2.000      1.000      4.000\n"
		"  busy                  2.500      1.000      4.000\n"
		"  idle                    nan        nan        nan\n"
		"  compute               0.375      0.125      1.000\n"
		"  comm                  1.000      1.000      1.000\n"
		"  exposed_comm          0.000      0.000      0.000\n"
		"  wait                  1.500      1.000      3.000\n"
		"  work                  2.000     -1.000      5.000\n";
	ranks_tab r;
	int64_t rank[] = {0, 1, 2, 1};
	const char *host[] = {"alpha", "beta", "gamma-host-name-long", "beta2"};
	double v[NVAL][MAXR] = {{1, 2, NAN, 4}, {0.5, 0.25, 0.125, 1}, {4, 3, 2, 1}, {NAN, NAN, NAN, NAN},
				{1, 1, 1, 1},   {0, 0, 0, 0},          {3, 1, 2, 1}, {-1, 2, 2, 5}};
	char *got = fl_text_summary(json, ranks_make(&r, 4, rank, host, v));
	ASSERT_EQ_STR(got, want);
	free(got);
	free(json);
	ranks_done(&r);
}

/* Clocks: the reference, then the nine worst fits (highest p95, of equal ones the first; one
 * without a fit counts as 0), a host without a name as "?". */
TEST(fleet_text_clocks_worst_fits)
{
	const char *json =
		"{\"ranks\": 12, \"hosts\": [\"h0\", \"h1\", \"h2\", \"h3\", \"h4\", \"h5\", \"h6\", \"h7\", \"h8\", "
		"\"h9\", \"h10\", \"h11\"], \"iterations\": 0, \"collectives\": 5, \"collective_rows_by_match\": {\"n"
		"ccl\": 5}, \"late_threshold_ms\": 0.1, \"arrival_noise_ms\": 0.0, \"failed\": [], \"late_collectives"
		"\": [], \"per_iteration\": [], \"clock\": [{\"host\": \"h0\", \"offset_ms\": 0.0, \"source\": \"refe"
		"rence\"}, {\"host\": \"h1\", \"offset_ms\": -7.5, \"source\": \"collectives\", \"rms_us\": 0.25, \"p"
		"95_us\": 5.0, \"collectives\": 10}, {\"host\": \"h2\", \"offset_ms\": -6.0, \"source\": \"collective"
		"s\", \"rms_us\": 0.5, \"p95_us\": 3.0, \"collectives\": 20}, {\"host\": \"h3\", \"offset_ms\": -4.5,"
		" \"source\": \"collectives\", \"rms_us\": 0.75, \"p95_us\": 1.0, \"collectives\": 30}, {\"host\": \""
		"h4\", \"offset_ms\": -3.0, \"source\": \"run.json\"}, {\"host\": \"\", \"offset_ms\": -1.5, \"source"
		"\": \"collectives\", \"rms_us\": 1.25, \"p95_us\": 4.0, \"collectives\": 50}, {\"host\": \"h6\", \"o"
		"ffset_ms\": 0.0, \"source\": \"collectives\", \"rms_us\": 1.5, \"p95_us\": 2.0, \"collectives\": 60}"
		", {\"host\": \"h7\", \"offset_ms\": 1.5, \"source\": \"collectives\", \"rms_us\": 1.75, \"p95_us\": "
		"0.0, \"collectives\": 70}, {\"host\": \"h8\", \"offset_ms\": 3.0, \"source\": \"run.json\"}, {\"host"
		"\": \"h9\", \"offset_ms\": 4.5, \"source\": \"collectives\", \"rms_us\": 2.25, \"p95_us\": 3.0, \"co"
		"llectives\": 90}, {\"host\": \"h10\", \"offset_ms\": 6.0, \"source\": \"collectives\", \"rms_us\": 2"
		".5, \"p95_us\": 1.0, \"collectives\": 100}, {\"host\": \"h11\", \"offset_ms\": 7.5, \"source\": \"co"
		"llectives\", \"rms_us\": 2.75, \"p95_us\": 6.0, \"collectives\": 110}], \"outliers\": []}";
	const char *want =
		"gputap fleet: 12 ranks on 12 hosts, 0 iterations, 5 collectives matched across ranks (by NCCL's prof"
		"iler plugin 5 rows)\n"
		"late = arriving more than 0.100 ms after the others (6 x their usual scatter of 0.000 ms, at least 0"
		".1 ms)\n"
		"\n"
		"Clocks (offset from h0; fit = residual of the collectives' common completion; worst fits):\n"
		"  h0                         +0.000 ms  reference\n"
		"  h11                        +7.500 ms  rms 2.8 us, p95 6.0 us over 110 collective ends\n"
		"  h1                         -7.500 ms  rms 0.2 us, p95 5.0 us over 10 collective ends\n"
		"  ?                          -1.500 ms  rms 1.2 us, p95 4.0 us over 50 collective ends\n"
		"  h2                         -6.000 ms  rms 0.5 us, p95 3.0 us over 20 collective ends\n"
		"  h9                         +4.500 ms  rms 2.2 us, p95 3.0 us over 90 collective ends\n"
		"  h6                         +0.000 ms  rms 1.5 us, p95 2.0 us over 60 collective ends\n"
		"  h3                         -4.500 ms  rms 0.8 us, p95 1.0 us over 30 collective ends\n"
		"  h10                        +6.000 ms  rms 2.5 us, p95 1.0 us over 100 collective ends\n"
		"  h4                         -3.000 ms  run.json\n"
		"  ... 2 more in summary.json (clock)\n";
	fl_table none = {0};
	char *got = fl_text_summary(json, &none);
	ASSERT_EQ_STR(got, want);
	free(got);
	got = fl_text_summary(json, NULL);
	ASSERT_EQ_STR(got, want);
	free(got);
}

/* Inputs left out, partial and skipped, outliers: more than are shown; no hosts, no collectives
 * (no threshold line), no ranks (no per rank table). */
TEST(fleet_text_lists_longer_than_shown)
{
	char *json = NULL, *want = NULL;
	app(&json, "{\"ranks\": 30, \"hosts\": [], \"iterations\": 0, \"collectives\": 0, "
		   "\"collective_rows_by_match\": {}, \"late_threshold_ms\": 0.1, \"arrival_noise_ms\": 0.0, "
		   "\"warnings\": [\"w1\", \"w2\"], \"failed\": [");
	for (int i = 0; i < 22; i++)
		app(&json, "%s{\"path\": \"/in/f%d\", \"error\": \"no such file or folder\"}", i ? ", " : "", i);
	app(&json, "], \"partial\": [");
	for (int i = 0; i < 21; i++)
		app(&json, "%s{\"path\": \"/in/p%d\", \"reason\": \"the trace is partial\", \"label\": \"\"}",
		    i ? ", " : "", i);
	app(&json, "], \"skipped\": [");
	for (int i = 0; i < 6; i++)
		app(&json, "%s{\"path\": \"/in/s%d\", \"reason\": \"no GPU work\"}", i ? ", " : "", i);
	app(&json, "], \"stragglers\": [], \"late_collectives\": [], \"per_iteration\": [], \"clock\": [], "
		   "\"outliers\": [");
	for (int i = 0; i < 21; i++)
		app(&json, "%s{\"rank\": %d, \"gpu\": \"rank%d/GPU0\", \"reason\": \"compute above the median: %d.000 vs "
			   "1.000 ms\"}",
		    i ? ", " : "", i, i, i + 2);
	app(&json, "]}");

	app(&want, "gputap fleet: 30 ranks (the traces do not name their machines: each rank is its own clock), "
		   "0 iterations, 0 collectives matched across ranks\nwarning: w1\nwarning: w2\n\nLeft out (22):\n");
	for (int i = 0; i < 20; i++)
		app(&want, "  /in/f%d: no such file or folder\n", i);
	app(&want, "  ... 2 more in summary.json\n\nPartial traces, left out of the statistics (21):\n");
	for (int i = 0; i < 20; i++)
		app(&want, "  /in/p%d: the trace is partial\n", i);
	app(&want, "  ... 1 more in summary.json\n\n"
		   "Skipped, no GPU work (a launcher) (6): /in/s0, /in/s1, /in/s2, /in/s3, /in/s4 ...\n\nOutliers:\n");
	for (int i = 0; i < 20; i++)
		app(&want, "  rank %d rank%d/GPU0: compute above the median: %d.000 vs 1.000 ms\n", i, i, i + 2);
	app(&want, "  ... 1 more in summary.json (outliers)\n");

	fl_table none = {0};
	char *got = fl_text_summary(json, &none);
	ASSERT_EQ_STR(got, want);
	free(got);
	free(json);
	free(want);
}

/* Python's formatting of what JSON gives: "%d" of a float truncates, str() of a number is its
 * text, None is "None"; five skipped are all shown. */
TEST(fleet_text_python_values)
{
	const char *json = "{\"ranks\": 2.0, \"hosts\": [\"h\"], \"iterations\": 3, \"collectives\": 1, "
			   "\"late_threshold_ms\": 1, \"arrival_noise_ms\": 1e-05, \"failed\": [{\"path\": \"/x\", "
			   "\"error\": null}], \"skipped\": [{\"path\": 1}, {\"path\": \"b\"}, {\"path\": \"c\"}, "
			   "{\"path\": \"d\"}, {\"path\": \"e\"}], \"late_collectives\": [], \"per_iteration\": [], "
			   "\"clock\": [{\"host\": null, \"offset_ms\": 0}], \"outliers\": [{\"rank\": 3.9, \"gpu\": "
			   "12345678901234567890, \"reason\": true}]}";
	const char *want = "gputap fleet: 2 ranks on 1 host, 3 iterations, 1 collectives matched across ranks\n"
			   "late = arriving more than 1.000 ms after the others (6 x their usual scatter of 0.000 ms, "
			   "at least 0.1 ms)\n"
			   "\nLeft out (1):\n  /x: None\n"
			   "\nSkipped, no GPU work (a launcher) (5): 1, b, c, d, e\n"
			   "\nOutliers:\n  rank 3 12345678901234567890: True\n";
	char *got = fl_text_summary(json, NULL);
	ASSERT_EQ_STR(got, want);
	free(got);
}

TEST(fleet_text_bad_json)
{
	ASSERT(fl_text_summary("[1, 2]", NULL) == NULL);
	ASSERT(fl_text_summary("{\"ranks\": ", NULL) == NULL);
	ASSERT(fl_text_summary("", NULL) == NULL);
	ASSERT(fl_text_summary(NULL, NULL) == NULL);
}
