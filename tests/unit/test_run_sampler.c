/* Sampler: timing with a test clock, files with fake devices. */
#include "test.h"

#include <stdatomic.h>

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace_io.h"
#include "run/sampler.h"

#define REAL0 1800000000000000000ull

struct fake {
	uint64_t mono;
	uint64_t deadlines[64];
	int ndeadlines;
	uint64_t taken[64]; /* mono time of each tick's first query */
	int ntaken;
	uint64_t cost[64]; /* time one tick's queries take, by tick */
	int calls;
	int ndev;
	uint32_t valid[8];
	double power[8];
	unsigned want[64][8]; /* what each tick asked of each device */
	uint64_t metric_cost[6]; /* time of one query, by GT_S_* bit (tick thread) */
	uint64_t util_cost[8];   /* more time of a utilisation query, by device */
	int nutil[8];            /* utilisation queries, by device */
	uint64_t query_ns;       /* the tick's queries together */
	int sample_energy;       /* sample() calls asked for GT_S_ENERGY (must stay 0) */
	/* The energy reader on its own simulated timeline: f_wait runs every read
	 * that has ended by the tick's deadline, as a second thread would have. */
	struct gt_sampler *s;
	int sim_energy;
	int in_energy;           /* set while f_wait runs a read */
	uint64_t emono, enext;   /* the reader's clock; when its next read starts */
	uint64_t energy_cost;    /* time one energy read takes */
	uint64_t energy_ns;      /* all energy reads together */
	int nenergy, energy_outside; /* reads; reads not from the reader's timeline */
	uint64_t estart[64];     /* when each read started */
	int edev[64];            /* its device */
	int busy_seen[64];       /* energy_busy_idx as the energy query saw it */
	uint64_t ewait[64];      /* the waits the reader asked */
	int newait;
	/* memory: device d's used memory becomes mem_new[d] from tick mem_from[d] on (0: never) */
	int mem_from[8];
	uint64_t mem_new[8];
	_Atomic uint64_t *memgen; /* bumped after the last device of tick bump_after (-1: never) */
	int bump_after;
	unsigned wantlong[128][2]; /* what ticks 0-127 asked of devices 0 and 1 */
	int pw_seq_on;             /* power of devices 0 and 1 at tick k: pw_seq[d][k] */
	double pw_seq[2][128];
};

static uint64_t f_mono(void *c)
{
	return ((struct fake *)c)->mono;
}

static uint64_t f_real(void *c)
{
	return REAL0 + ((struct fake *)c)->mono;
}

static uint64_t e_mono(void *c)
{
	return ((struct fake *)c)->emono;
}

static uint64_t e_real(void *c)
{
	return REAL0 + ((struct fake *)c)->emono;
}

static int e_wait(void *c, uint64_t deadline)
{
	struct fake *f = c;
	if (f->newait < 64)
		f->ewait[f->newait++] = deadline - f->emono;
	f->enext = deadline > f->emono ? deadline : f->emono;
	return 0;
}

/* Counter of device dev at reader time t: 300 W + 10 W per device index. */
static uint64_t energy_at(int dev, uint64_t t)
{
	return 7000000 + (uint64_t)dev * 1000000 + t / 1000000 * (300 + 10 * (uint64_t)dev);
}

static int f_energy(void *c, int dev, uint64_t *mj)
{
	struct fake *f = c;
	if (!f->in_energy)
		f->energy_outside++;
	if (f->nenergy < 64) {
		f->busy_seen[f->nenergy] = atomic_load(&f->s->energy_busy_idx);
		f->estart[f->nenergy] = f->emono;
		f->edev[f->nenergy] = dev;
	}
	f->nenergy++;
	*mj = energy_at(dev, f->emono);
	f->emono += f->energy_cost;
	f->energy_ns += f->energy_cost;
	return (f->valid[dev] & GT_S_ENERGY) ? 0 : -1;
}

static int f_wait(void *c, uint64_t deadline)
{
	struct fake *f = c;
	if (f->ndeadlines < 64)
		f->deadlines[f->ndeadlines++] = deadline;
	/* every read that has ended by this deadline: the reader's loop, as its thread runs it */
	while (f->sim_energy && f->s->source.energy && (f->s->outputs & GT_SO_RICH) &&
	       f->enext + f->energy_cost <= deadline) {
		f->emono = f->enext;
		f->in_energy = 1;
		uint64_t gap = gt_sampler_energy_read(f->s);
		f->in_energy = 0;
		e_wait(f, f->emono + gap);
	}
	if (f->mono < deadline)
		f->mono = deadline;
	return 0;
}

static int f_sample(void *c, int dev, unsigned want, struct gt_gpu_sample *s)
{
	struct fake *f = c;
	int tickno = f->calls / f->ndev;
	if (tickno < 64 && dev < 8)
		f->want[tickno][dev] = want;
	if (tickno < 128 && dev < 2)
		f->wantlong[tickno][dev] = want;
	f->sample_energy += (want & GT_S_ENERGY) != 0;
	for (int b = 0; b < 6; b++)
		if (want & (1u << b)) {
			f->mono += f->metric_cost[b];
			f->query_ns += f->metric_cost[b];
		}
	if ((want & GT_S_UTIL) && dev < 8) {
		f->mono += f->util_cost[dev];
		f->query_ns += f->util_cost[dev];
		f->nutil[dev]++;
	}
	if (f->calls % f->ndev == 0 && f->ntaken < 64)
		f->taken[f->ntaken++] = f->mono;
	f->calls++;
	memset(s, 0, sizeof(*s));
	s->valid = f->valid[dev];
	s->power_w = f->pw_seq_on && dev < 2 && tickno < 128 ? f->pw_seq[dev][tickno] : f->power[dev] + tickno;
	s->energy_mj = 5000000 + (uint64_t)tickno * 2500; /* never used: the tick does not ask */
	s->mem_total = 80ull << 30;
	s->mem_used = dev < 8 && f->mem_from[dev] && tickno >= f->mem_from[dev] ? f->mem_new[dev] : 20ull << 30;
	if (f->memgen && tickno == f->bump_after && dev == f->ndev - 1)
		atomic_fetch_add(f->memgen, 1);
	s->sm_util_pct = 97;
	s->mem_util_pct = 40;
	s->sm_clock_mhz = 1980;
	s->temp_c = 55;
	/* the last device of a tick pays the tick's cost */
	if (f->calls % f->ndev == 0)
		f->mono += f->cost[tickno < 64 ? tickno : 63];
	return 0;
}

/* A fake sampler; energy reads on the simulated reader timeline from f->mono. */
static void setup(struct gt_sampler *s, struct fake *f, int ndev)
{
	memset(s, 0, sizeof(*s));
	f->ndev = ndev;
	f->s = s;
	f->sim_energy = 1;
	f->enext = f->emono = f->mono;
	s->clock = (struct gt_sampler_clock){f_mono, f_real, f_wait, f};
	s->eclock = (struct gt_sampler_clock){e_mono, e_real, e_wait, f};
	s->source = (struct gt_sampler_source){f_sample, f, f_energy};
}

TEST(sampler_deadlines_are_absolute_no_drift)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.mono = 1000000;
	for (int i = 0; i < 64; i++)
		f.cost[i] = 3000000; /* 3 ms of a 10 ms period */
	setup(&s, &f, 1);
	s.max_samples = 20;
	char err[256];
	int dev = 0;
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), &dev, 1, 0.01, GT_SO_POWER, REAL0, err, sizeof(err)), 0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	ASSERT_EQ_U64(s.samples, 20);
	ASSERT_EQ_U64(s.missed, 0);
	/* sample k is taken at start + k*period exactly, the query time never accumulates */
	for (int k = 0; k < 20; k++) {
		ASSERT_EQ_U64(f.deadlines[k], 1000000 + (uint64_t)k * 10000000);
		ASSERT_EQ_U64(f.taken[k], 1000000 + (uint64_t)k * 10000000);
	}
}

TEST(sampler_late_tick_skips_and_counts_missed)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.cost[3] = 25000000; /* tick 3 takes 2.5 periods: deadlines 40 and 50 ms pass */
	f.cost[7] = 10000000; /* exactly one period: ends on the next deadline, not late */
	f.cost[9] = 10000001; /* just over: one missed */
	setup(&s, &f, 2);
	s.max_samples = 12;
	char err[256];
	int devs[2] = {0, 1};
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 2, 0.01, GT_SO_POWER, REAL0, err, sizeof(err)), 0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	ASSERT_EQ_U64(s.samples, 12);
	ASSERT_EQ_U64(s.missed, 3);
	const uint64_t want[12] = {0, 10, 20, 30, 60, 70, 80, 90, 100, 110, 130, 140};
	for (int k = 0; k < 12; k++)
		ASSERT_EQ_U64(f.taken[k], want[k] * 1000000ull);
}

TEST(sampler_csv_headers_one_device)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.valid[2] = GT_S_POWER | GT_S_MEM;
	f.power[2] = 300.0;
	setup(&s, &f, 1);
	s.max_samples = 2;
	char err[256];
	int dev = 2;
	const char *d = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_sampler_init(&s, d, &dev, 1, 0.1, GT_SO_POWER | GT_SO_VRAM, REAL0, err, sizeof(err)), 0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_info_power_profiler_output.csv", d);
	char *t = gt_test_read_file(p, NULL);
	ASSERT_EQ_STR(t, "time,Power(Watt) GPU2\n0.000000,300.000\n0.100000,301.000\n");
	free(t);
	snprintf(p, sizeof(p), "%s/gpu_info_vram_profiler_output.csv", d);
	t = gt_test_read_file(p, NULL);
	ASSERT_EQ_STR(t, "time,vram(%) GPU2\n0.000000,25.00\n0.100000,25.00\n");
	free(t);
}

static int count_char(const char *t, char c)
{
	int n = 0;
	for (; t && *t; t++)
		n += *t == c;
	return n;
}

/* Rows are held and written every 100 ms (one write per file), the rest at stop. */
TEST(sampler_rows_written_every_100ms_and_at_stop)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.valid[0] = GT_S_POWER;
	setup(&s, &f, 1);
	s.max_samples = 25;
	char err[256];
	int dev = 0;
	const char *d = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_sampler_init(&s, d, &dev, 1, 0.01, GT_SO_POWER, REAL0, err, sizeof(err)), 0);
	gt_sampler_run(&s);
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_info_power_profiler_output.csv", d);
	char *t = gt_test_read_file(p, NULL);
	/* ticks 0-10 written at tick 10 (100 ms after tick 0), 11-21 at tick 21; 22-24 held */
	ASSERT_EQ_INT(count_char(t, '\n'), 1 + 22);
	ASSERT_EQ_U64(s.writes, 2);
	ASSERT_CONTAINS(t, "\n0.210000,");
	ASSERT(strstr(t, "0.220000") == NULL);
	free(t);
	gt_sampler_stop(&s);
	t = gt_test_read_file(p, NULL);
	ASSERT_EQ_INT(count_char(t, '\n'), 1 + 25);
	ASSERT_CONTAINS(t, "\n0.240000,");
	ASSERT_EQ_U64(s.writes, 3);
	free(t);
}

/* Fast ticks of many devices fill the held rows before 100 ms: they are written
 * before another tick could overflow them, and no row is cut or lost. */
TEST(sampler_held_rows_written_before_they_overflow)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	for (int i = 0; i < 8; i++)
		f.valid[i] = GT_S_POWER | GT_S_MEM | GT_S_UTIL | GT_S_CLOCK | GT_S_TEMP;
	setup(&s, &f, 8);
	f.sim_energy = 0;
	s.max_samples = 400;
	s.slow_period_ns = 100000; /* every tick reads everything: the longest rows */
	char err[256];
	int devs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	const char *d = gt_test_tmpdir();
	/* 400 ticks of 0.1 ms: 40 ms, never 100 ms after the first held row */
	ASSERT_EQ_INT(gt_sampler_init(&s, d, devs, 8, 0.0001, GT_SO_POWER | GT_SO_VRAM | GT_SO_RICH, REAL0, err,
				      sizeof(err)),
		      0);
	gt_sampler_run(&s);
	ASSERT(s.writes >= 2);
	gt_sampler_stop(&s);
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", d);
	char *t = gt_test_read_file(p, NULL);
	ASSERT_EQ_INT(count_char(t, '\n'), 1 + 8 * 400);
	ASSERT_EQ_INT(count_char(t, ','), 9 * (1 + 8 * 400)); /* every row whole */
	free(t);
	snprintf(p, sizeof(p), "%s/gpu_info_vram_profiler_output.csv", d);
	t = gt_test_read_file(p, NULL);
	ASSERT_EQ_INT(count_char(t, '\n'), 1 + 400);
	ASSERT_EQ_INT(count_char(t, ','), 8 * (1 + 400));
	free(t);
}

TEST(sampler_three_devices_not_supported_is_empty)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.valid[0] = GT_S_POWER | GT_S_ENERGY | GT_S_MEM | GT_S_UTIL | GT_S_CLOCK | GT_S_TEMP;
	f.valid[1] = GT_S_MEM; /* power not supported */
	f.valid[2] = 0;        /* nothing supported */
	f.power[0] = 100.0;
	f.power[1] = 999.0; /* must not appear: its validity bit is clear */
	setup(&s, &f, 3);
	s.max_samples = 2;
	char err[256];
	int devs[3] = {0, 1, 2};
	const char *d = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_sampler_init(&s, d, devs, 3, 0.5, GT_SO_POWER | GT_SO_VRAM | GT_SO_RICH, REAL0, err,
				      sizeof(err)),
		      0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_info_power_profiler_output.csv", d);
	char *t = gt_test_read_file(p, NULL);
	ASSERT_EQ_STR(t, "time,Power(Watt) GPU0,Power(Watt) GPU1,Power(Watt) GPU2\n"
			 "0.000000,100.000,,\n0.500000,101.000,,\n");
	free(t);
	snprintf(p, sizeof(p), "%s/gpu_info_vram_profiler_output.csv", d);
	t = gt_test_read_file(p, NULL);
	ASSERT_EQ_STR(t, "time,vram(%) GPU0,vram(%) GPU1,vram(%) GPU2\n0.000000,25.00,25.00,\n0.500000,25.00,25.00,\n");
	free(t);
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", d);
	t = gt_test_read_file(p, NULL);
	ASSERT_CONTAINS(t, "time_ns,device,power_W,energy_J,mem_used_MiB,mem_total_MiB,sm_util_pct,mem_util_pct,"
			   "sm_clock_MHz,temperature_C\n");
	/* energy: device 0 read at the start, before tick 0 (its origin: 0); device 1's read
	 * comes 1 s later, after the run; device 1 and 2 would not report it anyway */
	ASSERT_CONTAINS(t, "1800000000000000000,0,100.000,0.000,20480.0,81920.0,97,40,1980,55\n");
	ASSERT_CONTAINS(t, "1800000000000000000,1,,,20480.0,81920.0,,,,\n");
	ASSERT_CONTAINS(t, "1800000000000000000,2,,,,,,,,\n");
	ASSERT_CONTAINS(t, "1800000000500000000,0,101.000,,20480.0,");
	ASSERT(strstr(t, "999") == NULL);
	free(t);
	/* the same samples as counter records */
	snprintf(p, sizeof(p), "%s/samplers/trace.gtr", d);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, p), 0);
	ASSERT_EQ_INT(r.partial, 0);
	const struct gt_rec_hdr *h;
	int power = 0, dev1 = 0, dev2 = 0, n = 0;
	while (gt_tr_next(&r, &h) == 1) {
		if (h->type != GT_REC_COUNTER)
			continue;
		const struct gt_rec_counter *c = (const void *)h;
		n++;
		if (strcmp(gt_tr_str(&r, c->name_id), "power_W") == 0) {
			power++;
			ASSERT_EQ_INT(c->device, 0);
		}
		dev1 += c->device == 1;
		dev2 += c->device == 2;
	}
	gt_tr_close(&r);
	ASSERT_EQ_INT(power, 2);
	ASSERT_EQ_INT(dev1, 2); /* only mem_used_MiB, twice */
	ASSERT_EQ_INT(dev2, 0);
	ASSERT_EQ_INT(n, 7 + 6 + 2); /* device 0's energy only on tick 0 */
}

/* Each tick reads only what the asked madengine CSVs print. */
TEST(sampler_reads_only_what_is_asked)
{
	static const struct {
		unsigned outputs, want;
	} cases[] = {
		{GT_SO_POWER, GT_S_POWER},
		{GT_SO_VRAM, GT_S_MEM},
		{GT_SO_POWER | GT_SO_VRAM, GT_S_POWER | GT_S_MEM},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct gt_sampler s;
		static struct fake f;
		memset(&f, 0, sizeof(f));
		setup(&s, &f, 2);
		s.max_samples = 30;
		s.every_tick = 1; /* GPUTAP_SAMPLE_EVERY_TICK=1; the schedule without it: sampler_vram_* */
		char err[256];
		int devs[2] = {0, 1};
		ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 2, 0.01, cases[c].outputs, REAL0, err,
					      sizeof(err)),
			      0);
		gt_sampler_run(&s);
		gt_sampler_stop(&s);
		ASSERT_EQ_U64(s.samples, 30);
		for (int k = 0; k < 30; k++)
			for (int d = 0; d < 2; d++)
				ASSERT_EQ_INT(f.want[k][d], cases[c].want);
	}
}

/* The vram tool at 100 Hz, 2 devices, 100 ticks: memory read every tick for the first 100 ms, then
 * at 10 Hz; device 1's memory changes at tick 45: seen on its 10 Hz read at tick 50 and then read
 * every tick until 10 reads in a row found it unchanged (tick 60); an allocation the tap saw after
 * tick 72: both devices read on tick 73.  madengine's CSV has a value on every row (the last one
 * read), gpu_samples.csv memory only on the rows where it was read. */
/* 100 ticks of 2 fake devices set up by the caller (setup()), the sampler's settings made. */
static void run_100(struct gt_sampler *s, double period, unsigned outputs, const char *dir)
{
	char err[256];
	int devs[2] = {0, 1};
	s->max_samples = 100;
	ASSERT_EQ_INT(gt_sampler_init(s, dir, devs, 2, period, outputs, REAL0, err, sizeof(err)), 0);
	gt_sampler_run(s);
	gt_sampler_stop(s);
	ASSERT_EQ_U64(s->samples, 100);
}

static void vram_run(struct gt_sampler *s, struct fake *f, _Atomic uint64_t *gen, int every_tick, double period,
		     const char *dir)
{
	memset(f, 0, sizeof(*f));
	f->valid[0] = f->valid[1] = GT_S_ALL;
	f->mem_from[1] = 45;
	f->mem_new[1] = 30ull << 30;
	f->memgen = gen;
	f->bump_after = 72;
	setup(s, f, 2);
	s->memgen = gen;
	s->every_tick = every_tick;
	run_100(s, period, GT_SO_VRAM | GT_SO_RICH, dir);
}

/* The ticks of the 100 on which device dev was asked for `bit`. */
static int read_ticks(const struct fake *f, int dev, unsigned bit, int *ticks)
{
	int n = 0;
	for (int k = 0; k < 100; k++)
		if (f->wantlong[k][dev] & bit)
			ticks[n++] = k;
	return n;
}
#define mem_read_ticks(f, dev, ticks) read_ticks(f, dev, GT_S_MEM, ticks)
#define power_read_ticks(f, dev, ticks) read_ticks(f, dev, GT_S_POWER, ticks)

/* The counter records named `name` in DIR/samplers/trace.gtr. */
static int counter_points(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/samplers/trace.gtr", dir);
	struct gt_trace_reader r;
	if (gt_tr_open(&r, p) != 0)
		return -1;
	const struct gt_rec_hdr *h;
	int n = 0;
	while (gt_tr_next(&r, &h) == 1)
		n += h->type == GT_REC_COUNTER &&
		     strcmp(gt_tr_str(&r, ((const struct gt_rec_counter *)(const void *)h)->name_id), name) == 0;
	gt_tr_close(&r);
	return n;
}

TEST(sampler_vram_memory_read_on_change_alloc_and_10hz)
{
	struct gt_sampler s;
	static struct fake f;
	_Atomic uint64_t gen = 7;
	const char *dir = gt_test_tmpdir();
	vram_run(&s, &f, &gen, 0, 0.01, dir);
	static const int want0[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 73, 83, 93};
	static const int want1[] = {0,	1,  2,	3,  4,	5,  6,	7,  8,	9,  10, 20, 30, 40, 50,
				    51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 70, 73, 83, 93};
	int got[100];
	int n0 = mem_read_ticks(&f, 0, got);
	ASSERT_EQ_INT(n0, (int)(sizeof(want0) / sizeof(want0[0])));
	for (int i = 0; i < n0; i++)
		ASSERT_EQ_INT(got[i], want0[i]);
	int n1 = mem_read_ticks(&f, 1, got);
	ASSERT_EQ_INT(n1, (int)(sizeof(want1) / sizeof(want1[0])));
	for (int i = 0; i < n1; i++)
		ASSERT_EQ_INT(got[i], want1[i]);
	ASSERT_EQ_U64(s.mem_reads, (uint64_t)(n0 + n1));
	ASSERT_EQ_U64(s.mem_reads_alloc, 2);
	ASSERT_EQ_U64(s.mem_rows_held, (uint64_t)(200 - n0 - n1));
	ASSERT_EQ_INT(f.sample_energy, 0);
	/* madengine's CSV: a value on every row; device 1 holds 25 % until its read at tick 50 */
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_info_vram_profiler_output.csv", dir);
	char *t = gt_test_read_file(p, NULL);
	ASSERT_EQ_INT(count_char(t, '\n'), 101);
	ASSERT_CONTAINS(t, "\n0.150000,25.00,25.00\n");
	ASSERT_CONTAINS(t, "\n0.490000,25.00,25.00\n");
	ASSERT_CONTAINS(t, "\n0.500000,25.00,37.50\n");
	ASSERT_CONTAINS(t, "\n0.990000,25.00,37.50\n");
	ASSERT(!strstr(t, ",\n") && !strstr(t, ",,"));
	free(t);
	/* gpu_samples.csv: memory on every row too (held between reads), device 1's new value from tick
	 * 50 on; the trace has a counter point only where memory was read */
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", dir);
	t = gt_test_read_file(p, NULL);
	ASSERT_CONTAINS(t, "\n1800000000150000000,0,,,20480.0,81920.0,,,,\n");
	ASSERT_CONTAINS(t, "\n1800000000490000000,1,,,20480.0,81920.0,");
	ASSERT_CONTAINS(t, "\n1800000000500000000,1,,,30720.0,81920.0,");
	ASSERT_CONTAINS(t, "\n1800000000730000000,0,,,20480.0,81920.0,");
	int cells = 0;
	for (const char *q = t; (q = strstr(q, "81920.0")); q++)
		cells++;
	ASSERT_EQ_INT(cells, 200);
	free(t);
	ASSERT_EQ_INT(counter_points(dir, "mem_used_MiB"), n0 + n1);
}

/* Without the tap's counter the allocation at tick 72 is not seen: device 0 keeps its 10 Hz. */
TEST(sampler_vram_without_alloc_counter_keeps_10hz)
{
	struct gt_sampler s;
	static struct fake f;
	vram_run(&s, &f, NULL, 0, 0.01, gt_test_tmpdir());
	int got[100];
	int n0 = mem_read_ticks(&f, 0, got);
	ASSERT_EQ_INT(n0, 11 + 8); /* 0-10, then 20, 30, ... 90 */
	ASSERT_EQ_INT(got[n0 - 1], 90);
	ASSERT_EQ_U64(s.mem_reads_alloc, 0);
}

/* GPUTAP_SAMPLE_EVERY_TICK=1, and any period of 100 ms or more: memory on every tick, nothing held. */
TEST(sampler_vram_every_tick_when_asked_or_slow)
{
	static const struct {
		int every_tick;
		double period;
	} cases[] = {{1, 0.01}, {0, 0.1}, {0, 0.5}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct gt_sampler s;
		static struct fake f;
		_Atomic uint64_t gen = 0;
		vram_run(&s, &f, &gen, cases[c].every_tick, cases[c].period, gt_test_tmpdir());
		int got[100];
		ASSERT_EQ_INT(mem_read_ticks(&f, 0, got), 100);
		ASSERT_EQ_INT(mem_read_ticks(&f, 1, got), 100);
		ASSERT_EQ_U64(s.mem_rows_held, 0);
		ASSERT_EQ_INT(s.mem_follow, 0);
	}
}

/* The power tool at 100 Hz, 2 devices, 100 ticks, the driver's value refreshed every 10 ticks
 * (device 0 at ticks 10, 20, ...; device 1 at 3, 13, ...), except that `early` (if > 0) brings
 * device 0's next value that many ticks before its refresh at 50, and `same` makes device 0's
 * refresh at 50 bring the value it had (and device 1 never change). */
static void power_run(struct gt_sampler *s, struct fake *f, int verify, int early, int same)
{
	memset(f, 0, sizeof(*f));
	f->valid[0] = f->valid[1] = GT_S_ALL;
	f->pw_seq_on = 1;
	for (int k = 0; k < 128; k++) {
		f->pw_seq[0][k] = 300.0 + (k >= 50 - early && k < 50 ? 5 : same && k >= 50 && k < 60 ? 4 : k / 10);
		f->pw_seq[1][k] = same ? 400.0 : 400.0 + (k + 7) / 10 * 0.5;
	}
	setup(s, f, 2);
	s->verify = verify;
	run_100(s, 0.01, GT_SO_POWER | GT_SO_RICH, gt_test_tmpdir());
}

/* Every tick until two changes were seen 10 ticks apart, then the tick before each refresh and
 * the refresh: 36 reads of 100 for device 0, every row of the power CSV the value of its tick. */
TEST(sampler_power_read_around_the_refresh)
{
	struct gt_sampler s;
	static struct fake f;
	power_run(&s, &f, 0, 0, 0);
	int got[100], n = power_read_ticks(&f, 0, got), k = 0;
	for (int t = 0; t <= 20; t++)
		ASSERT_EQ_INT(got[k++], t);
	for (int t = 30; t <= 90; t += 10) {
		ASSERT_EQ_INT(got[k++], t - 1);
		ASSERT_EQ_INT(got[k++], t);
	}
	ASSERT_EQ_INT(got[k++], 99);
	ASSERT_EQ_INT(n, k);
	int n1 = power_read_ticks(&f, 1, got); /* device 1: refreshes at 3, 13, 23: gap known at 13 */
	ASSERT_EQ_INT(got[n1 - 1], 93);
	ASSERT_EQ_INT(got[n1 - 2], 92);
	ASSERT_EQ_INT(n1, 14 + 8 * 2); /* 0-13, then 22-23, 32-33 ... 92-93 */
	ASSERT_EQ_U64(s.pw_reads, (uint64_t)(n + n1));
	ASSERT_EQ_U64(s.pw_rows_held, (uint64_t)(200 - n - n1));
	ASSERT_EQ_INT(counter_points(gt_test_tmpdir(), "power_W"), n + n1); /* the trace: a point a read */
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_info_power_profiler_output.csv", gt_test_tmpdir());
	char *t = gt_test_read_file(p, NULL);
	ASSERT_EQ_INT(count_char(t, '\n'), 101);
	char *line = strchr(t, '\n') + 1;
	for (int r = 0; r < 100; r++) { /* each row: the value the driver had at that tick */
		double a = 0, b = 0, tm = 0;
		ASSERT_EQ_INT(sscanf(line, "%lf,%lf,%lf", &tm, &a, &b), 3);
		ASSERT_NEAR(a, f.pw_seq[0][r], 1e-9);
		ASSERT_NEAR(b, f.pw_seq[1][r], 1e-9);
		line = strchr(line, '\n') + 1;
	}
	free(t);
	/* gpu_samples.csv: power on every row as well, each the value of its tick */
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", gt_test_tmpdir());
	t = gt_test_read_file(p, NULL);
	char want[96];
	for (int r = 0; r < 100; r++) {
		snprintf(want, sizeof(want), "\n%llu,1,%.3f,", (unsigned long long)(REAL0 + (uint64_t)r * 10000000ull),
			 f.pw_seq[1][r]);
		ASSERT_CONTAINS(t, want);
	}
	free(t);
}

/* A refresh one tick early is still read on time (the window opens a tick early); two ticks
 * early, the row before the window shows the old value: verify mode counts exactly that row. */
TEST(sampler_power_verify_counts_what_the_rule_would_hold)
{
	struct gt_sampler s;
	static struct fake f;
	power_run(&s, &f, 1, 0, 0);
	int got[100];
	ASSERT_EQ_INT(power_read_ticks(&f, 0, got), 100); /* verify reads every tick */
	ASSERT_EQ_U64(s.vf_pw_skipped, (uint64_t)(200 - s.pw_reads));
	ASSERT_EQ_U64(s.vf_pw_differ, 0);
	power_run(&s, &f, 1, 1, 0);
	ASSERT_EQ_U64(s.vf_pw_differ, 0);
	power_run(&s, &f, 1, 2, 0); /* device 0's value of tick 50 comes at 48: row 48 held 304 */
	ASSERT_EQ_U64(s.vf_pw_differ, 1);
	ASSERT_NEAR(s.vf_pw_maxdiff_w, 1.0, 1e-9);
	power_run(&s, &f, 0, 2, 0);
	ASSERT(!(f.wantlong[48][0] & GT_S_POWER) && (f.wantlong[49][0] & GT_S_POWER));
}

/* A refresh that brings the same value (device 0's value of ticks 50-59 equals 40-49's): the window
 * 49-51 sees no change and closes; the next opens at 59 and finds the change at 60 on time. */
TEST(sampler_power_refresh_with_the_same_value)
{
	struct gt_sampler s;
	static struct fake f;
	power_run(&s, &f, 1, 0, 1);
	ASSERT_EQ_U64(s.vf_pw_differ, 0);
	/* device 0 under the rule: 0-20, then 29-30, 39-40, 49-51 (no change), 59-60, 69-70 ... 99 */
	ASSERT_EQ_U64(s.vf_pw_skipped, (uint64_t)(100 - (21 + 2 + 2 + 3 + 2 * 4 + 1)));
}

/* gpu_samples.csv's other metrics: every slow_every ticks, each device on its
 * own tick of the cycle; cells empty in between. */
TEST(sampler_slow_metrics_at_most_10hz_staggered)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	for (int d = 0; d < 8; d++)
		f.valid[d] = GT_S_ALL;
	setup(&s, &f, 8);
	s.max_samples = 40;
	char err[256];
	int devs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	const char *dir = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_sampler_init(&s, dir, devs, 8, 0.01, GT_SO_POWER | GT_SO_RICH, REAL0, err, sizeof(err)),
		      0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	ASSERT_EQ_U64(s.slow_every, 10);
	const unsigned fast = GT_S_POWER, slow = GT_S_MEM | GT_S_UTIL | GT_S_CLOCK | GT_S_TEMP;
	int slow_reads = 0;
	for (int k = 0; k < 40; k++) {
		int in_tick = 0;
		for (int d = 0; d < 8; d++) {
			int phase = d * 10 / 8; /* 0,1,2,3,5,6,7,8 */
			/* never the energy counter: that is the reader's */
			unsigned want = fast | (k % 10 == phase ? slow : 0);
			ASSERT_EQ_INT(f.want[k][d], want);
			in_tick += (f.want[k][d] & slow) != 0;
		}
		ASSERT(in_tick <= 1); /* the slow reads are spread, one device per tick */
		slow_reads += in_tick;
	}
	ASSERT_EQ_INT(slow_reads, 4 * 8); /* every device every 100 ms */
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", dir);
	char *t = gt_test_read_file(p, NULL);
	/* tick 0: device 0 complete with its first energy (the reader's read at the start),
	 * device 1 power only (its energy read is 1 s later); tick 1: device 1 all but energy */
	ASSERT_CONTAINS(t, "\n1800000000000000000,0,0.000,0.000,20480.0,81920.0,97,40,1980,55\n");
	ASSERT_CONTAINS(t, "\n1800000000000000000,1,0.000,,,,,,,\n");
	ASSERT_CONTAINS(t, "\n1800000000010000000,0,1.000,,,,,,,\n");
	ASSERT_CONTAINS(t, "\n1800000000010000000,1,1.000,,20480.0,81920.0,97,40,1980,55\n");
	ASSERT_CONTAINS(t, "\n1800000000100000000,1,10.000,,,,,,,\n");
	ASSERT_EQ_INT(f.sample_energy, 0);
	ASSERT_EQ_U64(s.energy_cells, 1);
	free(t);
}

/* A period of 100 ms or more reads everything every tick; 30 ms every 4th. */
TEST(sampler_slow_every_follows_period)
{
	static const struct {
		double period;
		uint64_t every;
	} cases[] = {{0.1, 1}, {0.5, 1}, {0.03, 4}, {0.05, 2}, {0.001, 100}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct gt_sampler s;
		static struct fake f;
		memset(&f, 0, sizeof(f));
		setup(&s, &f, 1);
		char err[256];
		int dev = 0;
		ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), &dev, 1, cases[c].period, GT_SO_VRAM | GT_SO_RICH,
					      REAL0, err, sizeof(err)),
			      0);
		gt_sampler_stop(&s);
		ASSERT_EQ_U64(s.slow_every, cases[c].every);
		ASSERT_EQ_INT(s.fast_want, GT_S_MEM);
		ASSERT_EQ_INT(s.slow_want, GT_S_POWER | GT_S_UTIL | GT_S_CLOCK | GT_S_TEMP); /* energy: paced apart */
	}
}

/* The wait after an energy read: cost / 0.1 %, within [1 s, 10 s]. */
TEST(sampler_energy_gap_pacing)
{
	ASSERT_EQ_U64(gt_sampler_energy_gap(0), 1000000000ull);          /* free: every 1 s */
	ASSERT_EQ_U64(gt_sampler_energy_gap(500000), 1000000000ull);     /* 0.5 ms: 0.5 s, raised to 1 s */
	ASSERT_EQ_U64(gt_sampler_energy_gap(1000000), 1000000000ull);    /* 1 ms: exactly 1 s */
	ASSERT_EQ_U64(gt_sampler_energy_gap(3900000), 3900000000ull);    /* H100 mean: 3.9 s */
	ASSERT_EQ_U64(gt_sampler_energy_gap(7250000), 7250000000ull);
	ASSERT_EQ_U64(gt_sampler_energy_gap(10000000), 10000000000ull);  /* 10 ms: 10 s */
	ASSERT_EQ_U64(gt_sampler_energy_gap(17000000), 10000000000ull);  /* p99: capped at 10 s */
	ASSERT_EQ_U64(gt_sampler_energy_gap(UINT64_MAX), 10000000000ull);
}

/* The reader: one device at a time, in turn, the first at the start, each
 * next one cost/0.1 % (within [1 s, 10 s]) after the end of the one before. */
TEST(sampler_energy_reads_in_turn_paced_by_their_cost)
{
	static const uint64_t costs[] = {4000000, 0, 50000000, 2000000};
	for (size_t c = 0; c < sizeof(costs) / sizeof(costs[0]); c++) {
		struct gt_sampler s;
		static struct fake f;
		memset(&f, 0, sizeof(f));
		f.energy_cost = costs[c];
		for (int d = 0; d < 3; d++)
			f.valid[d] = GT_S_ALL;
		setup(&s, &f, 3);
		s.max_samples = 3000; /* 30 s at 10 ms */
		char err[256];
		int devs[3] = {0, 1, 2};
		ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 3, 0.01, GT_SO_POWER | GT_SO_RICH, REAL0, err,
					      sizeof(err)),
			      0);
		gt_sampler_run(&s);
		gt_sampler_stop(&s);
		uint64_t gap = gt_sampler_energy_gap(costs[c]), t = 0;
		ASSERT(f.nenergy >= 3 && f.nenergy < 64);
		ASSERT_EQ_U64(s.energy_reads, (uint64_t)f.nenergy);
		ASSERT_EQ_U64(s.energy_read_ns, (uint64_t)f.nenergy * costs[c]);
		for (int k = 0; k < f.nenergy; k++) {
			ASSERT_EQ_INT(f.edev[k], k % 3);
			ASSERT_EQ_U64(f.estart[k], t);
			ASSERT_EQ_U64(f.ewait[k], gap); /* the wait the reader asked */
			t += costs[c] + gap;
		}
		/* every read that fits in the 30 s was made */
		ASSERT(t + costs[c] > 29990000000ull);
		ASSERT_EQ_U64(s.missed, 0); /* even 50 ms reads at a 10 ms period */
		ASSERT_EQ_INT(f.sample_energy, 0);
		ASSERT_EQ_INT(f.energy_outside, 0);
		/* its share of the time */
		double share = (double)s.energy_read_ns / (double)t;
		if (costs[c] <= 10000000) /* above, the 10 s cap makes it more */
			ASSERT(share <= 0.0010001);
	}
}

/* The ISSUE measured on 4 x H200: energy reads of 20 ms at a 10 ms period.
 * They run on the reader's timeline, so no tick is ever late; each value
 * appears, exact, on the first tick after the read ended, and only there. */
TEST(sampler_energy_20ms_reads_10ms_period_no_missed_deadline)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.mono = 5000000;
	f.energy_cost = 20000000;
	f.valid[0] = f.valid[1] = GT_S_ALL;
	setup(&s, &f, 2);
	s.max_samples = 2100; /* 21 s */
	char err[256];
	int devs[2] = {0, 1};
	const char *dir = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_sampler_init(&s, dir, devs, 2, 0.01, GT_SO_POWER | GT_SO_VRAM | GT_SO_RICH, REAL0, err,
				      sizeof(err)),
		      0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	ASSERT_EQ_U64(s.samples, 2100);
	ASSERT_EQ_U64(s.missed, 0);
	for (int k = 0; k < 64; k++)
		ASSERT_EQ_U64(f.taken[k], 5000000 + (uint64_t)k * 10000000);
	ASSERT_EQ_INT(f.sample_energy, 0);   /* the tick thread never asks for energy */
	ASSERT_EQ_INT(f.energy_outside, 0);  /* nor calls the energy query */
	/* reads: dev0 at 0 ms, then 20 ms / 0.1 % = 20 s, capped at 10 s, after each:
	 * dev1 at 10.02 s, dev0 at 20.04 s */
	ASSERT_EQ_INT(f.nenergy, 3);
	const uint64_t start[3] = {0, 10020000000ull, 20040000000ull};
	for (int k = 0; k < 3; k++)
		ASSERT_EQ_U64(f.estart[k], 5000000 + start[k]);
	ASSERT_EQ_U64(s.energy_cells, 3);
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", dir);
	char *t = gt_test_read_file(p, NULL);
	/* dev0's read ends at 25 ms: tick 2 (25 ms) has it; dev1's at 10.045 s: tick 1004;
	 * dev0's second ends at 20.065 s: tick 2006, exactly 20.04 s x 300 W = 6012 J after the first */
	ASSERT_CONTAINS(t, "\n1800000000015000000,0,1.000,,");
	ASSERT_CONTAINS(t, "\n1800000000025000000,0,2.000,0.000,");
	ASSERT_CONTAINS(t, "\n1800000000035000000,0,3.000,,");
	ASSERT_CONTAINS(t, "\n1800000010035000000,1,1003.000,,");
	ASSERT_CONTAINS(t, "\n1800000010045000000,1,1004.000,0.000,");
	ASSERT_CONTAINS(t, "\n1800000010055000000,1,1005.000,,");
	ASSERT_CONTAINS(t, "\n1800000020055000000,0,2005.000,,");
	ASSERT_CONTAINS(t, "\n1800000020065000000,0,2006.000,6012.000,");
	ASSERT_CONTAINS(t, "\n1800000020075000000,0,2007.000,,");
	free(t);
	/* the trace's energy counters carry the time of the read itself */
	snprintf(p, sizeof(p), "%s/samplers/trace.gtr", dir);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, p), 0);
	const struct gt_rec_hdr *h;
	int n = 0;
	while (gt_tr_next(&r, &h) == 1) {
		if (h->type != GT_REC_COUNTER)
			continue;
		const struct gt_rec_counter *c = (const void *)h;
		if (strcmp(gt_tr_str(&r, c->name_id), "energy_J") != 0)
			continue;
		ASSERT(n < 3);
		ASSERT_EQ_U64(c->ts_ns, REAL0 + 5000000 + start[n]);
		ASSERT_EQ_INT(c->device, n % 2);
		n++;
	}
	gt_tr_close(&r);
	ASSERT_EQ_INT(n, 3);
}

/* The tick never waits for the reader: while it holds the lock, ticks go on
 * without energy (counted), and the value comes on the first tick after. */
TEST(sampler_tick_only_try_locks_energy)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.valid[0] = GT_S_ALL;
	setup(&s, &f, 1);
	f.sim_energy = 0; /* read by hand below */
	s.max_samples = 3;
	char err[256];
	int dev = 0;
	const char *dir = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_sampler_init(&s, dir, &dev, 1, 0.01, GT_SO_POWER | GT_SO_RICH, REAL0, err, sizeof(err)), 0);
	f.in_energy = 1;
	ASSERT_EQ_U64(gt_sampler_energy_read(&s), 1000000000ull); /* one device: a round of one */
	ASSERT_EQ_U64(gt_sampler_energy_read(&s), 1000000000ull);
	f.in_energy = 0;
	alarm(5); /* a tick that blocked on the lock would hang: fail instead */
	pthread_mutex_lock(&s.emu);
	gt_sampler_run(&s);
	pthread_mutex_unlock(&s.emu);
	ASSERT_EQ_U64(s.samples, 3);
	ASSERT_EQ_U64(s.energy_busy, 3);
	ASSERT_EQ_U64(s.energy_cells, 0);
	s.max_samples = 5;
	gt_sampler_run(&s);
	alarm(0);
	gt_sampler_stop(&s);
	ASSERT_EQ_U64(s.energy_cells, 1); /* the latest of the two reads, once */
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", dir);
	char *t = gt_test_read_file(p, NULL);
	/* the second read on tick 3 only (the second run starts where the first ended) */
	ASSERT_CONTAINS(t, "\n1800000000020000000,0,2.000,,");
	ASSERT_CONTAINS(t, "\n1800000000020000000,0,3.000,0.000,");
	ASSERT(strstr(t, ",0,4.000,,") != NULL);
	free(t);
}

/* The query costs measured on an H100 (driver 580, bench/sampler/nvml_bench.c:
 * power 0.5 us, memory 4.3 us, utilisation, clock, temperature 0.5 us each,
 * energy counter 3.9 ms mean) on 8 devices at 100 Hz with every file, for 60
 * simulated seconds: the tick thread's queries and the energy reader's
 * together must take under 1 % of one core, and no deadline may be missed. */
TEST(sampler_h100_costs_8_devices_100hz_under_1pct)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.metric_cost[0] = 500;  /* GT_S_POWER */
	f.metric_cost[2] = 4300; /* GT_S_MEM */
	f.metric_cost[3] = f.metric_cost[4] = f.metric_cost[5] = 500;
	f.energy_cost = 3900000;
	for (int d = 0; d < 8; d++)
		f.valid[d] = GT_S_ALL;
	setup(&s, &f, 8);
	s.max_samples = 6000;
	char err[256];
	int devs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 8, 0.01, GT_SO_POWER | GT_SO_VRAM | GT_SO_RICH,
				      REAL0, err, sizeof(err)),
		      0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	double tick_pct = 100.0 * (double)f.query_ns / 60e9, energy_pct = 100.0 * (double)f.energy_ns / 60e9;
	fprintf(stderr,
		"sampler model, H100 costs, 8 GPUs at 100 Hz, 60 s: tick queries %.3f%%, energy reader %.3f%% "
		"(%d reads) of one core\n",
		tick_pct, energy_pct, f.nenergy);
	ASSERT(tick_pct + energy_pct < 1.0);
	ASSERT(energy_pct < 0.11); /* 0.1 %, and the first read has no wait before it */
	ASSERT_EQ_U64(s.missed, 0);
	ASSERT_EQ_INT(f.nenergy, 16); /* one each 3.9 ms + 3.9 s */
	ASSERT_EQ_INT(f.sample_energy, 0);
}

/* 4 x H200 as measured (nvml_bench): power 0.5 us, memory 7 us, and a utilisation query that takes
 * 244 us on average on GPU 0 and 180 us on GPU 2 (0.3 us on the others).  At 100 Hz for 60 s the
 * cheap devices keep their 10 Hz of slow reads; the costly ones are put off so that their slow reads
 * stay near GT_SAMPLER_SLOW_SHARE (0.05 %) of one core each; the tick's queries together stay under
 * half a percent (at a fixed 10 Hz the utilisation reads alone would cost 0.42 %). */
TEST(sampler_costly_utilisation_query_put_off)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	f.metric_cost[0] = 500;  /* GT_S_POWER */
	f.metric_cost[2] = 7000; /* GT_S_MEM */
	f.metric_cost[3] = f.metric_cost[4] = f.metric_cost[5] = 400;
	f.util_cost[0] = 244000;
	f.util_cost[2] = 180000;
	f.energy_cost = 3900000;
	for (int d = 0; d < 4; d++)
		f.valid[d] = GT_S_ALL;
	setup(&s, &f, 4);
	s.max_samples = 6000;
	char err[256];
	int devs[4] = {0, 1, 2, 3};
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 4, 0.01, GT_SO_POWER | GT_SO_VRAM | GT_SO_RICH,
				      REAL0, err, sizeof(err)),
		      0);
	gt_sampler_run(&s);
	gt_sampler_stop(&s);
	double tick_pct = 100.0 * (double)f.query_ns / 60e9;
	fprintf(stderr, "sampler model, 4 x H200 costs, 100 Hz, 60 s: tick queries %.3f%%, utilisation reads %d %d %d %d\n",
		tick_pct, f.nutil[0], f.nutil[1], f.nutil[2], f.nutil[3]);
	ASSERT(f.nutil[1] >= 590 && f.nutil[1] <= 600); /* 10 Hz */
	ASSERT(f.nutil[3] >= 590 && f.nutil[3] <= 600);
	/* one read each c / 0.05 % : 0.5 s after a 252 us read, 0.38 s after a 188 us one */
	ASSERT(f.nutil[0] >= 110 && f.nutil[0] <= 125);
	ASSERT(f.nutil[2] >= 150 && f.nutil[2] <= 165);
	double util_pct0 = 100.0 * (double)f.nutil[0] * 244000 / 60e9;
	ASSERT(util_pct0 < 0.05);
	ASSERT(tick_pct < 0.45);
	ASSERT(s.slow_backoffs > 200);
	ASSERT_EQ_U64(s.missed, 0);
}

TEST(sampler_parse_devices)
{
	int d[8];
	char err[256];
	ASSERT_EQ_INT(gt_sampler_parse_devices("all", 3, d, 8, err, sizeof(err)), 3);
	ASSERT_EQ_INT(d[2], 2);
	ASSERT_EQ_INT(gt_sampler_parse_devices("2,0,2", 3, d, 8, err, sizeof(err)), 2);
	ASSERT_EQ_INT(d[0], 0);
	ASSERT_EQ_INT(d[1], 2);
	ASSERT_EQ_INT(gt_sampler_parse_devices("3", 3, d, 8, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "GPU 3 does not exist (3 GPUs found)");
	ASSERT_EQ_INT(gt_sampler_parse_devices("x", 3, d, 8, err, sizeof(err)), -1);
	ASSERT_EQ_INT(gt_sampler_parse_devices("all", 0, d, 8, err, sizeof(err)), 0);
}

static int cheap_sample(void *c, int dev, unsigned want, struct gt_gpu_sample *s)
{
	(void)c;
	(void)want;
	memset(s, 0, sizeof(*s));
	s->valid = GT_S_POWER | GT_S_ENERGY | GT_S_MEM | GT_S_UTIL | GT_S_CLOCK | GT_S_TEMP;
	s->power_w = 300 + dev;
	s->energy_mj = 1000;
	s->mem_total = 80ull << 30;
	s->mem_used = 1ull << 30;
	return 0;
}

/* The work of one tick (8 devices, all files) with the test clock: at 100 Hz
 * it must stay far under 1 % of one core (100 us per tick). */
TEST(sampler_tick_work_cost)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	setup(&s, &f, 8);
	s.source = (struct gt_sampler_source){cheap_sample, NULL, NULL};
	s.max_samples = 2000;
	int devs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	char err[256];
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 8, 0.01, GT_SO_POWER | GT_SO_VRAM | GT_SO_RICH, 0,
				      err, sizeof(err)),
		      0);
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	gt_sampler_run(&s);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	gt_sampler_stop(&s);
	double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3 / 2000.0;
	fprintf(stderr, "sampler tick work: %.1f us per tick of 8 devices\n", us);
	ASSERT(us < 100.0);
}

/* The real thread, clock and files at 100 Hz on 8 fake devices (NVML's own
 * query time excluded).  The bound is loose: on a virtual machine a timed
 * wake-up alone costs tens of microseconds; docs/performance.md has numbers. */
TEST(sampler_thread_real_clock_cost)
{
	struct gt_sampler s;
	memset(&s, 0, sizeof(s));
	s.source = (struct gt_sampler_source){cheap_sample, NULL, NULL};
	int devs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	char err[256];
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 8, 0.01, GT_SO_POWER | GT_SO_VRAM | GT_SO_RICH,
				      (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec, err, sizeof(err)),
		      0);
	ASSERT_EQ_INT(gt_sampler_start(&s), 0);
	struct timespec d = {1, 0};
	nanosleep(&d, NULL);
	gt_sampler_stop(&s);
	ASSERT(s.samples >= 90 && s.samples <= 102);
	double period = (double)(s.last_ns - s.first_ns) / 1e9 / (double)(s.samples - 1);
	ASSERT_NEAR(period, 0.01, 0.0015);
	double pct = 100.0 * s.cpu_s / s.wall_s;
	fprintf(stderr, "sampler cost: %.3f%% of one core (%llu ticks, 8 devices, %.6f s CPU)\n", pct,
		(unsigned long long)s.samples, s.cpu_s);
	ASSERT(pct < 5.0);
}

/* The real threads: the energy query (20 ms each, asleep) only ever on the
 * reader's thread, the other queries only on the tick thread, energy cells in
 * the file, and gt_sampler_stop() joins both at once even while the reader
 * waits out its 10 s. */
struct threads_fake {
	pthread_t tick, reader;
	int have_tick, have_reader;   /* set once, by their own thread */
	int sample_calls, energy_calls; /* atomics */
	int sample_off_tick, energy_on_tick, energy_off_reader, sample_energy;
	int tick_started_reading;
};

static int t_sample(void *c, int dev, unsigned want, struct gt_gpu_sample *s)
{
	struct threads_fake *f = c;
	if (!f->have_tick) {
		f->tick = pthread_self();
		__atomic_store_n(&f->have_tick, 1, __ATOMIC_RELEASE);
	}
	if (!pthread_equal(f->tick, pthread_self()))
		__atomic_fetch_add(&f->sample_off_tick, 1, __ATOMIC_RELAXED);
	if (want & GT_S_ENERGY)
		__atomic_fetch_add(&f->sample_energy, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->sample_calls, 1, __ATOMIC_RELAXED);
	return cheap_sample(NULL, dev, want, s);
}

static int t_energy(void *c, int dev, uint64_t *mj)
{
	struct threads_fake *f = c;
	if (!f->have_reader) {
		f->reader = pthread_self();
		__atomic_store_n(&f->have_reader, 1, __ATOMIC_RELEASE);
	}
	if (!pthread_equal(f->reader, pthread_self()))
		__atomic_fetch_add(&f->energy_off_reader, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&f->have_tick, __ATOMIC_ACQUIRE) && pthread_equal(f->tick, pthread_self()))
		__atomic_fetch_add(&f->energy_on_tick, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&f->energy_calls, 1, __ATOMIC_RELAXED);
	struct timespec d = {0, 20000000};
	nanosleep(&d, NULL);
	*mj = 1000000 + (uint64_t)dev * 1000 + (uint64_t)__atomic_load_n(&f->energy_calls, __ATOMIC_RELAXED) * 7;
	return 0;
}

static double since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

TEST(sampler_energy_thread_real_clock)
{
	struct gt_sampler s;
	static struct threads_fake f;
	memset(&s, 0, sizeof(s));
	memset(&f, 0, sizeof(f));
	s.source = (struct gt_sampler_source){t_sample, &f, t_energy};
	int devs[2] = {0, 1};
	char err[256];
	const char *dir = gt_test_tmpdir();
	ASSERT_EQ_INT(gt_sampler_init(&s, dir, devs, 2, 0.01, GT_SO_POWER | GT_SO_RICH, 0, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_sampler_start(&s), 0);
	ASSERT(s.erunning);
	struct timespec d = {0, 300000000}, t0;
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gt_sampler_stop(&s); /* the reader is in its 10 s wait (20 ms reads) */
	double stop_s = since(&t0);
	fprintf(stderr, "sampler threads: stop %.1f ms; tick %.6f s CPU, energy reader %.6f s CPU, %llu ticks\n",
		stop_s * 1e3, s.cpu_s, s.energy_cpu_s, (unsigned long long)s.samples);
	/* far below the reader's 10 s wait: stop wakes it (a tighter bound failed on a loaded machine:
	 * 254 ms once, from the joins and the files' close, not from the wait) */
	ASSERT(stop_s < 2.0);
	ASSERT(!s.running && !s.erunning);
	ASSERT(s.samples >= 20);
	ASSERT_EQ_INT(f.energy_calls, 1); /* at the start; the next one is 10 s later */
	ASSERT_EQ_U64(s.energy_reads, 1);
	ASSERT_EQ_U64(s.energy_gap_ns, 10000000000ull);
	ASSERT(f.have_tick && f.have_reader && !pthread_equal(f.tick, f.reader));
	ASSERT_EQ_INT(f.energy_on_tick, 0);
	ASSERT_EQ_INT(f.energy_off_reader, 0);
	ASSERT_EQ_INT(f.sample_off_tick, 0);
	ASSERT_EQ_INT(f.sample_energy, 0);
	ASSERT_EQ_U64(s.energy_cells, 1);
	ASSERT(s.energy_cpu_s > 0 && s.energy_cpu_s < 0.02); /* asleep, not busy */
	char p[4200];
	snprintf(p, sizeof(p), "%s/gpu_samples.csv", dir);
	char *t = gt_test_read_file(p, NULL);
	int cells = 0;
	for (char *l = strchr(t, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		/* time_ns,device,power_W,energy_J,... */
		const char *c = strchr(strchr(strchr(l + 1, ',') + 1, ',') + 1, ',');
		if (c[1] != ',') {
			ASSERT(strncmp(c + 1, "0.000,", 6) == 0); /* the device's origin */
			cells++;
		}
	}
	ASSERT_EQ_INT(cells, 1);
	free(t);
}

/* Stopped while a read is under way: the join waits for that read only. */
TEST(sampler_stop_mid_energy_read)
{
	struct gt_sampler s;
	static struct threads_fake f;
	memset(&s, 0, sizeof(s));
	memset(&f, 0, sizeof(f));
	s.source = (struct gt_sampler_source){t_sample, &f, t_energy};
	int devs[4] = {0, 1, 2, 3};
	char err[256];
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 4, 0.01, GT_SO_RICH, 0, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_sampler_start(&s), 0);
	struct timespec d = {0, 8000000}, t0; /* the first read (20 ms) is under way */
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	gt_sampler_stop(&s);
	double stop_s = since(&t0);
	ASSERT(stop_s < 0.1);
	ASSERT_EQ_INT(f.energy_calls, 1); /* no read starts after the stop */
}

/* NVML serialises queries per device: while the energy reader holds device d,
 * the tick reads only d's power (field values do not wait) and leaves its
 * other cells empty; the other devices are read in full. */
TEST(sampler_tick_spares_the_device_under_an_energy_read)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	setup(&s, &f, 2);
	f.sim_energy = 0;
	s.max_samples = 5;
	char err[256];
	int devs[2] = {0, 1};
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 2, 0.01, GT_SO_POWER | GT_SO_VRAM, REAL0, err,
				      sizeof(err)),
		      0);
	ASSERT_EQ_INT(atomic_load(&s.energy_busy_idx), -1);
	atomic_store(&s.energy_busy_idx, 0); /* device 0's energy counter is being read */
	gt_sampler_run(&s);
	ASSERT_EQ_U64(s.samples, 5);
	for (int k = 0; k < 5; k++) {
		ASSERT_EQ_INT(f.want[k][0], GT_S_POWER);
		ASSERT_EQ_INT(f.want[k][1], GT_S_POWER | GT_S_MEM);
	}
	ASSERT_EQ_U64(s.busy_skips, 5);
	atomic_store(&s.energy_busy_idx, -1);
	gt_sampler_stop(&s);
}

/* The reader marks the device it reads for exactly the length of the query. */
TEST(sampler_energy_read_marks_its_device)
{
	struct gt_sampler s;
	static struct fake f;
	memset(&f, 0, sizeof(f));
	setup(&s, &f, 3);
	f.energy_cost = 4000000;
	char err[256];
	int devs[3] = {0, 1, 2};
	ASSERT_EQ_INT(gt_sampler_init(&s, gt_test_tmpdir(), devs, 3, 0.01, GT_SO_POWER | GT_SO_RICH, REAL0, err,
				      sizeof(err)),
		      0);
	for (int r = 0; r < 4; r++) {
		gt_sampler_energy_read(&s);
		ASSERT_EQ_INT(atomic_load(&s.energy_busy_idx), -1);
	}
	ASSERT_EQ_INT(f.nenergy, 4);
	for (int r = 0; r < 4; r++)
		ASSERT_EQ_INT(f.busy_seen[r], r % 3);
	gt_sampler_stop(&s);
}
