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

static size_t flushed_bytes;
static cu_result f_memset_async(cu_ptr p, unsigned char v, size_t n, cu_stream s)
{
	(void)v, (void)s;
	put('F');
	flushed_bytes = p == 0x1000 ? n : 0;
	return 0;
}

TEST(libperf_time_flushes_the_l2_cache_before_each_timed_run)
{
	struct gt_cu_api c;
	float ms[3];
	setup(&c, 1);
	events();
	c.memset8_async = f_memset_async;
	c.l2_flush = 0x1000;
	c.l2_flush_bytes = 100u << 20;
	double us = gt_libperf_time(&c, f_run, NULL, NULL, ev, ms, 3, 1);
	/* the warm-up unflushed; each timed run after a flush, outside its events */
	ASSERT_EQ_STR(F.log, "RSW" "FERE" "FERE" "FERE" "S");
	ASSERT_EQ_INT((int)(flushed_bytes >> 20), 100);
	ASSERT_NEAR(us, 2000.0, 1e-9);
	/* no buffer: no flush */
	setup(&c, 1);
	events();
	c.memset8_async = f_memset_async;
	gt_libperf_time(&c, f_run, NULL, NULL, ev, ms, 3, 0);
	ASSERT_EQ_STR(F.log, "SWEREEREERES");
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

/* ---- kernel activity: a stand-in CUPTI hands back the records of each bracketed run ---- */

#include "libperf/libperf_kact.h"

/* one record per slot, whatever its kind */
#define SLOT 512
static struct {
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;
	CUptiResult subscribe_rc, enable_rc;
	CUpti_ActivityKind refuse_kind;
	uint64_t enabled;     /* bit per activity kind */
	int subscribed;
	uint64_t pushed;      /* the bracket's id, 0 outside */
	int pops;
	uint32_t corr;        /* the stand-in's correlation ids */
	int runs_seen;        /* bracketed runs so far */
	int silent_run;       /* this bracketed run (0-based) leaves no record; -1 none */
	size_t dropped;
	unsigned char recs[64][SLOT];
	int nrecs;
} K;

static CUptiResult k_version(uint32_t *v)
{
	*v = 130001;
	return CUPTI_SUCCESS;
}
static CUptiResult k_result(CUptiResult r, const char **s)
{
	(void)r;
	*s = "CUPTI_ERROR_STAND_IN";
	return CUPTI_SUCCESS;
}
static CUptiResult k_subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *u)
{
	(void)cb, (void)u;
	if (K.subscribe_rc != CUPTI_SUCCESS)
		return K.subscribe_rc;
	*h = (CUpti_SubscriberHandle)&K;
	K.subscribed = 1;
	return CUPTI_SUCCESS;
}
static CUptiResult k_unsubscribe(CUpti_SubscriberHandle h)
{
	(void)h;
	K.subscribed = 0;
	return CUPTI_SUCCESS;
}
static CUptiResult k_enable(CUpti_ActivityKind k)
{
	if (k == K.refuse_kind)
		return K.enable_rc;
	K.enabled |= 1ull << k;
	return CUPTI_SUCCESS;
}
static CUptiResult k_disable(CUpti_ActivityKind k)
{
	K.enabled &= ~(1ull << k);
	return CUPTI_SUCCESS;
}
static CUptiResult k_register(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	K.req = req;
	K.done = done;
	return CUPTI_SUCCESS;
}
/* the records so far, in two buffers and not in the order they were made: every kernel, memset
 * and copy first, then the correlation records (CUPTI gives GPU and API records separately) */
static void k_deliver(int ext_records)
{
	uint8_t *buf;
	size_t size, maxn;
	K.req(&buf, &size, &maxn);
	size_t used = 0;
	for (int i = 0; i < K.nrecs && used + SLOT <= size; i++) {
		int ext = ((const CUpti_Activity *)K.recs[i])->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		if (ext != ext_records)
			continue;
		memcpy(buf + used, K.recs[i], SLOT);
		used += SLOT;
	}
	K.done(NULL, 0, buf, size, used);
}
static CUptiResult k_flush(uint32_t flag)
{
	(void)flag;
	if (!K.req || !K.nrecs)
		return CUPTI_SUCCESS;
	k_deliver(0);
	k_deliver(1);
	K.nrecs = 0;
	return CUPTI_SUCCESS;
}
static CUptiResult k_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + SLOT : buf;
	if (p + SLOT > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}
static CUptiResult k_dropped(CUcontext ctx, uint32_t stream, size_t *n)
{
	(void)ctx, (void)stream;
	*n = K.dropped;
	K.dropped = 0;
	return CUPTI_SUCCESS;
}
static CUptiResult k_push(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
	(void)kind;
	K.pushed = id;
	return CUPTI_SUCCESS;
}
static CUptiResult k_pop(CUpti_ExternalCorrelationKind kind, uint64_t *id)
{
	(void)kind;
	*id = K.pushed;
	K.pushed = 0;
	K.pops++;
	return CUPTI_SUCCESS;
}

static void *k_slot(CUpti_ActivityKind kind)
{
	static unsigned char spare[SLOT]; /* past the stand-in's capacity: written, never delivered */
	unsigned char *p = K.nrecs < 64 ? K.recs[K.nrecs++] : spare;
	memset(p, 0, SLOT);
	((CUpti_Activity *)p)->kind = kind;
	return p;
}

/* One launch of the run: the API call's correlation record (inside a bracket) and its GPU record. */
static void k_launch(CUpti_ActivityKind kind, uint64_t ns)
{
	uint32_t corr = ++K.corr;
	if (K.pushed) {
		CUpti_ActivityExternalCorrelation *e = k_slot(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
		e->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
		e->externalId = K.pushed;
		e->correlationId = corr;
	}
	if (kind == CUPTI_ACTIVITY_KIND_MEMSET) {
		CUpti_ActivityMemset4 *m = k_slot(kind);
		m->start = 1000000;
		m->end = m->start + ns;
		m->correlationId = corr;
	} else {
		CUpti_ActivityKernel10 *k = k_slot(kind);
		k->start = 5000000;
		k->end = k->start + ns;
		k->correlationId = corr;
	}
}

/* A run of a library call: two kernels (run k: (k + 1) us and 0.5 us) and a 0.25 us memset. */
static int k_run(void *arg)
{
	(void)arg;
	put('R');
	int k = K.pushed ? K.runs_seen++ : -1;
	if (k >= 0 && k == K.silent_run)
		return 0;
	k_launch(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k >= 0 ? (uint64_t)(k + 1) * 1000 : 77000);
	k_launch(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 500);
	k_launch(CUPTI_ACTIVITY_KIND_MEMSET, 250);
	return 0;
}

static void k_setup(struct gt_kact_api *a)
{
	memset(&K, 0, sizeof(K));
	K.silent_run = -1;
	K.refuse_kind = CUPTI_ACTIVITY_KIND_INVALID;
	memset(a, 0, sizeof(*a));
	a->cuptiGetVersion = k_version;
	a->cuptiGetResultString = k_result;
	a->cuptiSubscribe = k_subscribe;
	a->cuptiUnsubscribe = k_unsubscribe;
	a->cuptiActivityEnable = k_enable;
	a->cuptiActivityDisable = k_disable;
	a->cuptiActivityRegisterCallbacks = k_register;
	a->cuptiActivityFlushAll = k_flush;
	a->cuptiActivityGetNextRecord = k_next;
	a->cuptiActivityGetNumDroppedRecords = k_dropped;
	a->cuptiActivityPushExternalCorrelationId = k_push;
	a->cuptiActivityPopExternalCorrelationId = k_pop;
}

/* A gated stream with events, and the stand-in CUPTI reset: what the kernel-activity tests start from. */
static void kact_ready(struct gt_cu_api *c, struct gt_kact_api *a)
{
	setup(c, 1);
	events();
	k_setup(a);
}

TEST(libperf_time_by_kernel_activity_sums_each_runs_gpu_records)
{
	struct gt_cu_api c;
	struct gt_kact_api a;
	float ms[5];
	char why[200] = "";
	kact_ready(&c, &a);
	ASSERT_EQ_INT(gt_kact_start(&a, why, sizeof(why)), 0);
	ASSERT(gt_kact_on());
	ASSERT(K.subscribed);
	ASSERT(K.enabled & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	ASSERT(K.enabled & (1ull << CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
	ASSERT(K.enabled & (1ull << CUPTI_ACTIVITY_KIND_DRIVER));
	const char *last_why = NULL;
	int failures = gt_kact_failures(&last_why);
	/* the two warm-ups launch 77 us kernels outside any bracket: not counted */
	double us = gt_libperf_time(&c, k_run, NULL, NULL, ev, ms, 5, 2);
	ASSERT_EQ_STR(F.log, "RRSWEREEREEREEREERES");
	ASSERT_EQ_INT(K.pops, 5);
	ASSERT_EQ_INT(K.runs_seen, 5);
	/* runs: 1.75, 2.75, 3.75, 4.75, 5.75 us of kernels and memsets: median 3.75, three operations each */
	ASSERT_NEAR(us, 3.75, 1e-9);
	const struct gt_libperf_timing *t = gt_libperf_last();
	ASSERT_EQ_INT(t->method, GT_TIMED_KERNELS);
	ASSERT_EQ_INT(t->gated, 1);
	ASSERT_EQ_INT(t->ops, 3);
	ASSERT_NEAR(t->event_us, 3000.0, 1e-9); /* the events' median is still read */
	ASSERT_EQ_INT(gt_kact_failures(NULL), failures);
	unsigned mask = 0;
	int ops = 0;
	double evus = -1;
	gt_libperf_note_timing(&mask, &ops, &evus, 1);
	ASSERT_EQ_INT((int)mask, 1 << GT_TIMED_KERNELS);
	ASSERT_EQ_INT(ops, 3);
	ASSERT_NEAR(evus, 3000.0, 1e-9);
	gt_kact_stop();
	ASSERT(!gt_kact_on());
	ASSERT_EQ_INT((int)K.enabled, 0);
	ASSERT(!K.subscribed);
}

TEST(libperf_time_by_kernel_activity_falls_back_to_events_when_a_run_has_no_record)
{
	struct gt_cu_api c;
	struct gt_kact_api a;
	float ms[5];
	char why[200] = "";
	kact_ready(&c, &a);
	K.silent_run = 2;
	ASSERT_EQ_INT(gt_kact_start(&a, why, sizeof(why)), 0);
	int failures = gt_kact_failures(NULL);
	double us = gt_libperf_time(&c, k_run, NULL, NULL, ev, ms, 5, 0);
	ASSERT_NEAR(us, 3000.0, 1e-9); /* the events' median */
	ASSERT_EQ_INT(gt_libperf_last()->method, GT_TIMED_EVENTS_GATED);
	ASSERT_EQ_INT(gt_libperf_last()->ops, 0);
	const char *last_why = NULL;
	ASSERT_EQ_INT(gt_kact_failures(&last_why), failures + 1);
	ASSERT_CONTAINS(last_why, "timed run 3");
	/* records dropped by CUPTI: no time either */
	K.silent_run = -1;
	K.dropped = 4;
	events();
	us = gt_libperf_time(&c, k_run, NULL, NULL, ev, ms, 5, 0);
	ASSERT_NEAR(us, 3000.0, 1e-9);
	ASSERT_EQ_INT(gt_libperf_last()->method, GT_TIMED_EVENTS_GATED);
	ASSERT_EQ_INT(gt_kact_failures(&last_why), failures + 2);
	ASSERT_CONTAINS(last_why, "dropped");
	/* and the next window counts again */
	events();
	us = gt_libperf_time(&c, k_run, NULL, NULL, ev, ms, 5, 0);
	ASSERT_EQ_INT(gt_libperf_last()->method, GT_TIMED_KERNELS);
	ASSERT(us > 1.0 && us < 20.0);
	gt_kact_stop();
}

TEST(libperf_kernel_activity_leaves_cupti_held_by_another_client)
{
	struct gt_kact_api a;
	char why[200] = "";
	k_setup(&a);
	K.subscribe_rc = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	ASSERT_EQ_INT(gt_kact_start(&a, why, sizeof(why)), -1);
	ASSERT_CONTAINS(why, "held by another client");
	ASSERT(!gt_kact_on());
	ASSERT_EQ_INT((int)K.enabled, 0);
	ASSERT(K.req == NULL); /* its buffer callbacks were not replaced */
	/* a kind CUPTI refuses: what was enabled is disabled again, the subscription given back */
	k_setup(&a);
	K.refuse_kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	K.enable_rc = CUPTI_ERROR_NOT_COMPATIBLE;
	ASSERT_EQ_INT(gt_kact_start(&a, why, sizeof(why)), -1);
	ASSERT_CONTAINS(why, "cuptiActivityEnable failed: CUPTI_ERROR_STAND_IN");
	ASSERT(!gt_kact_on());
	ASSERT_EQ_INT((int)K.enabled, 0);
	ASSERT(!K.subscribed);
	/* without kernel activity gt_libperf_time brackets nothing */
	struct gt_cu_api c;
	float ms[3];
	setup(&c, 1);
	events();
	double us = gt_libperf_time(&c, k_run, NULL, NULL, ev, ms, 3, 0);
	ASSERT_NEAR(us, 2000.0, 1e-9);
	ASSERT_EQ_INT(gt_libperf_last()->method, GT_TIMED_EVENTS_GATED);
	ASSERT_EQ_INT(K.pops, 0);
}

TEST(libperf_timing_names)
{
	char b[64];
	gt_libperf_timing_names(0, b, sizeof(b));
	ASSERT_EQ_STR(b, "");
	gt_libperf_timing_names(1u << GT_TIMED_KERNELS, b, sizeof(b));
	ASSERT_EQ_STR(b, "kernel_activity");
	gt_libperf_timing_names(1u << GT_TIMED_EVENTS_GATED | 1u << GT_TIMED_KERNELS, b, sizeof(b));
	ASSERT_EQ_STR(b, "kernel_activity+events_gated");
	gt_libperf_timing_names(1u << GT_TIMED_EVENTS, b, sizeof(b));
	ASSERT_EQ_STR(b, "events");
}
