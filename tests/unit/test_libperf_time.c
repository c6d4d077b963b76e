/* libperf's timing without a GPU: a stand-in driver table records what gt_libperf_time asks of
 * it.  The timed runs are queued behind the gate (the stream waits on a host word that stays
 * closed until every run is queued); a run that cannot be queued while the gate is closed (a
 * library synchronising inside it) is let through by the watchdog and timed again without the
 * gate; a driver without stream memory operations is timed the plain way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libperf/libperf.h"
#include "test.h"

static struct {
	volatile uint32_t *word; /* the gate, as the stand-in handed it out */
	char log[256];           /* W wait, E event, R run, S sync, in order */
	size_t n;
	int closed_runs;         /* runs queued while the gate was closed */
	int block_in_run;        /* a run waits (up to 10 s) for the gate to open, as a synchronising library */
} F;

static void put(char c)
{
	if (F.n + 1 < sizeof(F.log))
		F.log[F.n++] = c;
	F.log[F.n] = '\0';
}

static cu_result f_host_alloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	*p = calloc(1, n);
	F.word = *p;
	return *p ? 0 : 2;
}
static cu_result f_host_dev_ptr(cu_ptr *d, void *p, unsigned flags)
{
	(void)flags;
	*d = (cu_ptr)(uintptr_t)p;
	return 0;
}
static cu_result f_wait(cu_stream s, cu_ptr addr, unsigned v, unsigned flags)
{
	(void)s, (void)flags;
	put('W');
	return addr == (cu_ptr)(uintptr_t)F.word && v == 1 ? 0 : 1;
}
static cu_result f_event_record(cu_event e, cu_stream s)
{
	(void)e, (void)s;
	put('E');
	return 0;
}
static cu_result f_sync(cu_stream s)
{
	(void)s;
	put('S');
	return 0;
}
/* event i pairs: run k lasted k+1 ms (events are the addresses of an array of ints) */
static cu_result f_elapsed(float *ms, cu_event a, cu_event b)
{
	(void)b;
	*ms = (float)(*(const int *)a + 1);
	return 0;
}

static int f_run(void *arg)
{
	(void)arg;
	put('R');
	if (F.word && !__atomic_load_n(F.word, __ATOMIC_SEQ_CST))
		F.closed_runs++;
	if (F.block_in_run)
		for (int i = 0; i < 10000 && !__atomic_load_n(F.word, __ATOMIC_SEQ_CST); i++) {
			struct timespec d = {0, 1000000};
			nanosleep(&d, NULL);
		}
	return 0;
}

static void setup(struct gt_cu_api *c, int gate)
{
	memset(c, 0, sizeof(*c));
	c->event_record = f_event_record;
	c->stream_sync = f_sync;
	c->event_elapsed = f_elapsed;
	if (gate) {
		c->host_alloc = f_host_alloc;
		c->host_dev_ptr = f_host_dev_ptr;
		c->wait_value32 = f_wait;
	}
	F.n = 0;
	F.log[0] = '\0';
	F.closed_runs = 0;
	F.block_in_run = 0;
}

static int evs[10];
static cu_event ev[10];

static void events(void)
{
	for (int i = 0; i < 10; i++) {
		evs[i] = i / 2; /* run k's start event holds k */
		ev[i] = &evs[i];
	}
}

TEST(libperf_time_queues_every_run_behind_the_gate)
{
	struct gt_cu_api c;
	float ms[5];
	setup(&c, 1);
	events();
	double us = gt_libperf_time(&c, f_run, NULL, NULL, ev, ms, 5, 2);
	/* two warm-ups, a sync, the wait, then the five runs between their events, then a sync */
	ASSERT_EQ_STR(F.log, "RRSWEREEREEREEREERES");
	ASSERT_EQ_INT(F.closed_runs, 5);                    /* none of them could start before the last was queued */
	ASSERT_EQ_INT((int)__atomic_load_n(F.word, __ATOMIC_SEQ_CST), 1); /* and then the gate opened */
	ASSERT_EQ_INT(gt_libperf_last_gated(), 1);
	ASSERT_NEAR(us, 3000.0, 1e-9); /* median of 1..5 ms */
}

TEST(libperf_time_watchdog_opens_a_stalled_gate_and_times_again)
{
	struct gt_cu_api c;
	float ms[3];
	setup(&c, 1);
	events();
	F.block_in_run = 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double us = gt_libperf_time(&c, f_run, NULL, NULL, ev, ms, 3, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ASSERT(s >= GT_LIBPERF_GATE_S * 0.9 && s < GT_LIBPERF_GATE_S + 5); /* released by the watchdog */
	ASSERT_EQ_INT(gt_libperf_last_gated(), -1);
	/* gated pass (wait, three runs, sync), then the plain one: three runs, a sync */
	ASSERT_EQ_STR(F.log, "SWERE" "ERE" "ERE" "S" "ERE" "ERE" "ERE" "S");
	ASSERT_NEAR(us, 2000.0, 1e-9);
}

TEST(libperf_time_without_stream_memory_operations_is_plain)
{
	struct gt_cu_api c;
	float ms[4];
	setup(&c, 0);
	events();
	double us = gt_libperf_time(&c, f_run, NULL, NULL, ev, ms, 4, 1);
	ASSERT_EQ_STR(F.log, "RERE" "ERE" "ERE" "ERE" "S");
	ASSERT_EQ_INT(gt_libperf_last_gated(), 0);
	ASSERT_NEAR(us, 2500.0, 1e-9);
}
