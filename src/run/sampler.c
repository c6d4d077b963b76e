/* run/sampler.c — the sampling loop and its files.  See sampler.h. */
#include "run/sampler.h"

#include "core/log.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "core/sort.h"
#include "trace/rundir.h"

/* Text of the ticks since the last write, per file, built without stdio. */
struct lbuf {
	char b[GT_SAMPLER_LINEBUF];
	size_t n;
};
struct gt_sampler_lines {
	struct lbuf l[3]; /* power CSV, vram CSV, gpu_samples.csv */
};

static uint64_t ts_ns(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t real_mono(void *ctx)
{
	(void)ctx;
	return ts_ns(CLOCK_MONOTONIC);
}

static uint64_t real_real(void *ctx)
{
	(void)ctx;
	return ts_ns(CLOCK_REALTIME);
}

/* An absolute wait on CLOCK_MONOTONIC that gt_sampler_stop() can cut short. */
static int real_wait(void *ctx, uint64_t deadline)
{
	struct gt_sampler *s = ctx;
	struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		int r = pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		if (r == ETIMEDOUT)
			break;
	}
	int stop = s->stop;
	pthread_mutex_unlock(&s->mu);
	return stop;
}

struct gt_sampler_clock gt_sampler_default_clock(struct gt_sampler *s)
{
	return (struct gt_sampler_clock){real_mono, real_real, real_wait, s};
}

static int nvml_sample(void *ctx, int dev, unsigned want, struct gt_gpu_sample *out)
{
	(void)ctx;
	return gt_nvml_sample(dev, want, out);
}

static int nvml_energy(void *ctx, int dev, uint64_t *mj)
{
	(void)ctx;
	return gt_nvml_energy(dev, mj);
}

struct gt_sampler_source gt_sampler_nvml_source(void)
{
	return (struct gt_sampler_source){nvml_sample, NULL, nvml_energy};
}

int gt_sampler_parse_devices(const char *spec, int count, int *devs, int max, char *err, size_t errlen)
{
	int n = 0;
	if (strcmp(spec, "all") == 0) {
		for (int i = 0; i < count && n < max; i++)
			devs[n++] = i;
		return n;
	}
	const char *p = spec;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		char *end = NULL;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0) {
			snprintf(err, errlen, "DEVICE '%s': expected 0, 0,1,2 or all", spec);
			return -1;
		}
		if (v >= count) {
			snprintf(err, errlen, "DEVICE '%s': GPU %ld does not exist (%d GPU%s found)", spec, v, count,
				 count == 1 ? "" : "s");
			return -1;
		}
		int dup = 0;
		for (int i = 0; i < n; i++)
			if (devs[i] == (int)v)
				dup = 1;
		if (!dup && n < max)
			devs[n++] = (int)v;
		p = end;
	}
	gt_sort(devs, (size_t)n, sizeof(int), gt_cmp_int);
	if (n == 0)
		snprintf(err, errlen, "DEVICE '%s': no GPU selected", spec);
	return n ? n : -1;
}

static const char *const counter_names[] = {"power_W",	    "energy_J",	    "mem_used_MiB", "sm_util_pct",
					    "mem_util_pct", "sm_clock_MHz", "temperature_C"};
#define NCOUNTERS (sizeof(counter_names) / sizeof(counter_names[0]))

static FILE *open_csv(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "we");
	if (!f)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

/* Every tick reads what the asked madengine CSVs print; the rest of gpu_samples.csv
 * is read every slow_every ticks (>= 1), device i at phase i*slow_every/ndev. */
static void plan_reads(struct gt_sampler *s)
{
	unsigned fast = 0;
	if (s->outputs & GT_SO_POWER)
		fast |= GT_S_POWER;
	if (s->outputs & GT_SO_VRAM)
		fast |= GT_S_MEM;
	if (!fast)
		fast = GT_S_POWER | GT_S_MEM;
	s->fast_want = fast;
	/* the energy counter has its own pace (energy_tick) */
	s->slow_want = (s->outputs & GT_SO_RICH) ? GT_S_ALL & ~fast & ~GT_S_ENERGY : 0;
	s->slow_every = (s->slow_period_ns + s->period_ns - 1) / s->period_ns;
	if (s->slow_every < 1)
		s->slow_every = 1;
	for (int i = 0; i < s->ndev; i++)
		s->slow_next[i] = (uint64_t)i * s->slow_every / (uint64_t)s->ndev; /* devices on their own ticks */
	s->mem_follow = (s->outputs & GT_SO_VRAM) && s->slow_every > 1 && !s->every_tick;
	s->pw_follow = (s->outputs & GT_SO_POWER) && s->slow_every > 1 && !s->every_tick;
}

/* Whether device i's power is read this tick (sampler.h: the power tool above 10 Hz).  From the
 * last two gaps between changes, lo and hi: the window opens lo - 1 ticks after the last change
 * (a refresh that comes a tick early is read on time) and closes after hi + 1; a window that saw
 * no change was a refresh that brought the same value: the next one is hi later. */
static int pw_due(struct gt_sampler *s, int i)
{
	uint64_t g1 = s->pw_gap[i], g2 = s->pw_gap_prev[i] ? s->pw_gap_prev[i] : g1;
	uint64_t lo = g1 < g2 ? g1 : g2, hi = g1 < g2 ? g2 : g1;
	if (lo > s->slow_every)
		lo = s->slow_every;
	if (hi > s->slow_every + 1)
		hi = s->slow_every + 1;
	if (!s->pw_have[i] || lo < 3)
		return 1;
	while (s->samples > s->pw_change[i] + hi + 1)
		s->pw_change[i] += hi;
	return s->samples + 1 >= s->pw_change[i] + lo;
}

/* After device i's power was read on this tick (under the rule). */
static void pw_read(struct gt_sampler *s, int i, double w)
{
	s->pw_reads++;
	if (!s->pw_have[i]) {
		s->pw_have[i] = 1;
		s->pw_last[i] = w;
		s->pw_change[i] = s->samples;
		return;
	}
	if (w == s->pw_last[i])
		return;
	if (s->pw_changed[i]) { /* a gap between two changes seen: the last two are kept */
		s->pw_gap_prev[i] = s->pw_gap[i];
		s->pw_gap[i] = s->samples - s->pw_change[i];
	}
	s->pw_changed[i] = 1;
	s->pw_change[i] = s->samples;
	s->pw_last[i] = w;
}

/* Whether device i's memory is read this tick (sampler.h: the vram tool above 10 Hz); *alloc set
 * when only the allocation counter asks for it.  gen: the counter now. */
static int mem_due(const struct gt_sampler *s, int i, uint64_t gen, int *alloc)
{
	*alloc = 0;
	if (!s->mem_have[i] || s->mem_quiet[i] < s->slow_every || s->samples >= s->mem_next[i])
		return 1;
	if (gen != s->mem_gen[i])
		return *alloc = 1;
	return 0;
}

/* verify: a cell the rules would have skipped was read anyway; held < 0: nothing to hold yet. */
static void verify_cell(uint64_t *skipped, uint64_t *differ, double *maxdiff, double held, double read)
{
	(*skipped)++;
	double d = held < 0 ? read : (held > read ? held - read : read - held);
	if (held < 0 || d > 0) {
		(*differ)++;
		if (d > *maxdiff)
			*maxdiff = d;
	}
}

/* After device i's memory was read (g valid for memory) on this tick. */
static void mem_read(struct gt_sampler *s, int i, uint64_t gen, const struct gt_gpu_sample *g)
{
	if (!s->mem_have[i] || g->mem_used != s->mem_used[i] || g->mem_total != s->mem_total[i])
		s->mem_quiet[i] = 0;
	else if (s->mem_quiet[i] < UINT64_MAX)
		s->mem_quiet[i]++;
	s->mem_used[i] = g->mem_used;
	s->mem_total[i] = g->mem_total;
	s->mem_have[i] = 1;
	s->mem_gen[i] = gen;
	s->mem_next[i] = s->samples + s->slow_every;
	s->mem_reads++;
}

/* Ticks until a device's next slow read, after one that took cost_ns: slow_every, or more for a read
 * that would otherwise take more than GT_SAMPLER_SLOW_SHARE of one core. */
static uint64_t slow_gap(const struct gt_sampler *s, uint64_t cost_ns)
{
	double wait = (double)cost_ns / GT_SAMPLER_SLOW_SHARE;
	uint64_t ticks = (uint64_t)(wait / (double)s->period_ns) + 1;
	return ticks > s->slow_every ? ticks : s->slow_every;
}

int gt_sampler_init(struct gt_sampler *s, const char *dir, const int *devs, int ndev, double period_s,
		    unsigned outputs, uint64_t t0_real_ns, char *err, size_t errlen)
{
	struct gt_sampler_clock clk = s->clock, eclk = s->eclock;
	struct gt_sampler_source src = s->source;
	uint64_t max = s->max_samples, slow_ns = s->slow_period_ns;
	_Atomic uint64_t *memgen = s->memgen;
	int every_tick = s->every_tick, verify = s->verify;
	memset(s, 0, sizeof(*s));
	s->clock = clk;
	s->eclock = eclk;
	s->source = src;
	s->max_samples = max;
	s->memgen = memgen;
	s->every_tick = every_tick;
	s->verify = verify;
	s->slow_period_ns = slow_ns ? slow_ns : GT_SAMPLER_SLOW_PERIOD_NS;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->emu, NULL);
	atomic_init(&s->energy_busy_idx, -1);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (!s->clock.mono_ns)
		s->clock = gt_sampler_default_clock(s);
	if (!s->eclock.mono_ns)
		s->eclock = gt_sampler_default_clock(s);
	if (!s->source.sample)
		s->source = gt_sampler_nvml_source();
	s->lines = calloc(1, sizeof(*s->lines));
	if (!s->lines) {
		snprintf(err, errlen, "sampler: out of memory");
		return -1;
	}
	if (ndev < 1 || ndev > GT_SAMPLER_MAXDEV) {
		snprintf(err, errlen, "sampler: %d devices (1 to %d)", ndev, GT_SAMPLER_MAXDEV);
		return -1;
	}
	s->ndev = ndev;
	memcpy(s->dev, devs, (size_t)ndev * sizeof(int));
	s->period_ns = (uint64_t)(period_s * 1e9 + 0.5);
	if (s->period_ns < 1000)
		s->period_ns = 1000;
	s->outputs = outputs;
	s->t0_real_ns = t0_real_ns;
	plan_reads(s);
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	if (outputs & GT_SO_POWER) {
		if (!(s->power = open_csv(dir, "gpu_info_power_profiler_output.csv", err, errlen)))
			goto fail;
		fputs("time", s->power);
		for (int i = 0; i < ndev; i++)
			fprintf(s->power, ",Power(Watt) GPU%d", devs[i]);
		fputc('\n', s->power);
		fflush(s->power);
	}
	if (outputs & GT_SO_VRAM) {
		if (!(s->vram = open_csv(dir, "gpu_info_vram_profiler_output.csv", err, errlen)))
			goto fail;
		fputs("time", s->vram);
		for (int i = 0; i < ndev; i++)
			fprintf(s->vram, ",vram(%%) GPU%d", devs[i]);
		fputc('\n', s->vram);
		fflush(s->vram);
	}
	if (outputs & GT_SO_RICH) {
		if (!(s->rich = open_csv(dir, "gpu_samples.csv", err, errlen)))
			goto fail;
		fputs("time_ns,device,power_W,energy_J,mem_used_MiB,mem_total_MiB,sm_util_pct,mem_util_pct,"
		      "sm_clock_MHz,temperature_C\n",
		      s->rich);
		fflush(s->rich);
		char tdir[4200], tpath[4300], host[64] = "";
		snprintf(tdir, sizeof(tdir), "%s/samplers", dir);
		if (mkdir(tdir, 0755) < 0 && errno != EEXIST) {
			snprintf(err, errlen, "%s: %s", tdir, strerror(errno));
			goto fail;
		}
		snprintf(tpath, sizeof(tpath), "%s/" GT_PROC_TRACE, tdir);
		gethostname(host, sizeof(host) - 1);
		int r = gt_tw_open(&s->tw, tpath, "samplers", host, (uint32_t)getpid(), s->clock.real_ns(s->clock.ctx),
				   0);
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", tpath, strerror(-r));
			goto fail;
		}
		s->tw_open = 1;
		for (size_t i = 0; i < NCOUNTERS; i++) {
			s->name_ids[i] = (uint32_t)i + 1;
			gt_tw_string(&s->tw, s->name_ids[i], counter_names[i], strlen(counter_names[i]));
		}
	}
	return 0;
fail:
	gt_sampler_stop(s);
	return -1;
}

static void put_counter(unsigned char *buf, size_t *off, uint32_t tid, uint32_t name, uint32_t dev, uint64_t ts,
			double v)
{
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	c.h.tid = tid;
	c.name_id = name;
	c.device = dev;
	c.ts_ns = ts;
	c.value = v;
	memcpy(buf + *off, &c, sizeof(c));
	*off += sizeof(c);
}

/* Fixed-point text without stdio: the sampler formats ~100 numbers per tick. */

static void put_ch(struct lbuf *l, char c)
{
	if (l->n < sizeof(l->b))
		l->b[l->n++] = c;
}

static void put_u64(struct lbuf *l, uint64_t v)
{
	char t[24];
	int k = 0;
	do
		t[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 24);
	while (k)
		put_ch(l, t[--k]);
}

static void put_fixed(struct lbuf *l, double v, int decimals)
{
	static const uint64_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
	if (v < 0) {
		put_ch(l, '-');
		v = -v;
	}
	if (!(v < 1e15)) { /* out of range or NaN: leave the field empty */
		if (l->n && l->b[l->n - 1] == '-')
			l->n--;
		return;
	}
	uint64_t scaled = (uint64_t)(v * (double)pow10[decimals] + 0.5);
	put_u64(l, scaled / pow10[decimals]);
	if (decimals) {
		put_ch(l, '.');
		uint64_t frac = scaled % pow10[decimals];
		for (int d = decimals - 1; d >= 0; d--)
			put_ch(l, (char)('0' + (frac / pow10[d]) % 10));
	}
}

static void flush_line(FILE *f, struct lbuf *l)
{
	if (f && l->n) {
		fwrite(l->b, 1, l->n, f);
		fflush(f);
	}
	l->n = 0;
}

/* The most text one tick adds to one file: a gpu_samples.csv row is at most
 * 19 + 3 + 2 * 21 + 2 * 18 + 4 * 11 + 10 separators and a newline (< 160
 * bytes); a madengine row's cell at most 22. */
size_t gt_sampler_tick_text_max(int ndev)
{
	return (size_t)ndev * 160 + 32;
}

/* Write the ticks held so far (one write per file), when the oldest is
 * GT_SAMPLER_WRITE_EVERY_NS old, when another tick might not fit, or when
 * `force`d (stop).  gt_sampler_tick_text_max(GT_SAMPLER_MAXDEV) fits the
 * buffer many times, so a tick never overflows it. */
static void write_held(struct gt_sampler *s, int force)
{
	struct lbuf *l = s->lines->l;
	size_t most = l[0].n > l[1].n ? l[0].n : l[1].n;
	if (l[2].n > most)
		most = l[2].n;
	if (!most)
		return;
	if (!force && s->clock.mono_ns(s->clock.ctx) - s->held_since_ns < GT_SAMPLER_WRITE_EVERY_NS &&
	    most + gt_sampler_tick_text_max(s->ndev) <= sizeof(l[0].b))
		return;
	flush_line(s->power, &l[0]);
	flush_line(s->vram, &l[1]);
	flush_line(s->rich, &l[2]);
	s->writes++;
}

uint64_t gt_sampler_energy_gap(uint64_t cost_ns)
{
	double gap = (double)cost_ns / GT_SAMPLER_ENERGY_SHARE;
	if (gap < (double)GT_SAMPLER_ENERGY_MIN_GAP_NS)
		return GT_SAMPLER_ENERGY_MIN_GAP_NS;
	if (gap > (double)GT_SAMPLER_ENERGY_MAX_GAP_NS)
		return GT_SAMPLER_ENERGY_MAX_GAP_NS;
	return (uint64_t)gap;
}

uint64_t gt_sampler_energy_read(struct gt_sampler *s)
{
	int i = s->energy_dev;
	struct gt_sampler_clock *c = &s->eclock;
	uint64_t t = c->real_ns(c->ctx), m0 = c->mono_ns(c->ctx), mj = 0;
	atomic_store_explicit(&s->energy_busy_idx, i, memory_order_release);
	int ok = s->source.energy(s->source.ctx, s->dev[i], &mj) == 0;
	atomic_store_explicit(&s->energy_busy_idx, -1, memory_order_release);
	uint64_t cost = c->mono_ns(c->ctx) - m0;
	if (ok) {
		/* held for three stores: the tick's try-lock rarely finds it taken */
		pthread_mutex_lock(&s->emu);
		s->ecell[i].mj = mj;
		s->ecell[i].real_ns = t;
		s->ecell[i].seq++;
		pthread_mutex_unlock(&s->emu);
	}
	s->energy_reads++;
	s->energy_read_ns += cost;
	s->energy_dev = (i + 1) % s->ndev;
	s->energy_gap_ns = gt_sampler_energy_gap(cost);
	return s->energy_gap_ns;
}

void gt_sampler_energy_run(struct gt_sampler *s)
{
	struct gt_sampler_clock *c = &s->eclock;
	for (;;) {
		uint64_t gap = gt_sampler_energy_read(s);
		if (c->wait_until(c->ctx, c->mono_ns(c->ctx) + gap))
			break;
	}
}

/* The energy values published since the last tick (tick thread).  Never
 * waits: when the reader holds the lock, they come on a later tick. */
static void take_energy(struct gt_sampler *s, uint8_t *fresh, uint64_t *mj, uint64_t *real_ns)
{
	memset(fresh, 0, (size_t)s->ndev);
	if (!s->rich || !s->source.energy)
		return;
	if (pthread_mutex_trylock(&s->emu) != 0) {
		s->energy_busy++;
		return;
	}
	for (int i = 0; i < s->ndev; i++)
		if (s->ecell[i].seq != s->energy_seen[i]) {
			s->energy_seen[i] = s->ecell[i].seq;
			mj[i] = s->ecell[i].mj;
			real_ns[i] = s->ecell[i].real_ns;
			fresh[i] = 1;
		}
	pthread_mutex_unlock(&s->emu);
}

/* One tick: every device once; each file gets one write. */
static void tick(struct gt_sampler *s)
{
	struct lbuf *lines = s->lines->l;
	struct lbuf *pw = &lines[0], *vr = &lines[1], *rich = &lines[2];
	if (!pw->n && !vr->n && !rich->n)
		s->held_since_ns = s->clock.mono_ns(s->clock.ctx);
	uint64_t t = s->clock.real_ns(s->clock.ctx);
	if (!s->samples)
		s->first_ns = t;
	s->last_ns = t;
	double rel = t >= s->t0_real_ns ? (double)(t - s->t0_real_ns) / 1e9 : 0.0;
	put_fixed(pw, rel, 6);
	put_fixed(vr, rel, 6);
	/* every device's counters go out in one write */
	unsigned char recs[GT_SAMPLER_MAXDEV * NCOUNTERS * sizeof(struct gt_rec_counter)];
	size_t off = 0;
	if (!s->tid)
		s->tid = (uint32_t)gettid();
	uint8_t efresh[GT_SAMPLER_MAXDEV];
	uint64_t emj[GT_SAMPLER_MAXDEV], ets[GT_SAMPLER_MAXDEV];
	take_energy(s, efresh, emj, ets);
	for (int i = 0; i < s->ndev; i++) {
		struct gt_gpu_sample g;
		uint64_t td = i == 0 ? t : s->clock.real_ns(s->clock.ctx);
		unsigned want = s->fast_want;
		int slow = s->slow_want && s->samples >= s->slow_next[i], mem_alloc = 0, mem_skip = 0, pw_skip = 0;
		uint64_t gen = 0;
		if (s->mem_follow) {
			gen = s->memgen ? atomic_load_explicit(s->memgen, memory_order_relaxed) : 0;
			mem_skip = !mem_due(s, i, gen, &mem_alloc);
		}
		if (s->pw_follow)
			pw_skip = !pw_due(s, i);
		if (!s->verify) /* verify: read anyway, and compare below */
			want &= ~((mem_skip ? GT_S_MEM : 0u) | (pw_skip ? GT_S_POWER : 0u));
		if (slow)
			want |= s->slow_want;
		if (atomic_load_explicit(&s->energy_busy_idx, memory_order_acquire) == i && (want & ~GT_S_POWER)) {
			want &= GT_S_POWER;
			s->busy_skips++;
			slow = 0; /* not read: due again next tick */
		}
		uint64_t t_read = slow ? s->clock.real_ns(s->clock.ctx) : 0;
		if (s->source.sample(s->source.ctx, s->dev[i], want, &g) < 0)
			memset(&g, 0, sizeof(g));
		if (slow) { /* the read's cost sets when the next one is due */
			uint64_t end = s->clock.real_ns(s->clock.ctx), gap = slow_gap(s, end > t_read ? end - t_read : 0);
			s->slow_next[i] = s->samples + gap;
			s->slow_backoffs += gap > s->slow_every;
		}
		g.valid &= want; /* a cell not read this tick is empty, never stale */
		if ((g.valid & GT_S_MEM) && mem_skip) /* verify: what the held value would have been */
			verify_cell(&s->vf_mem_skipped, &s->vf_mem_differ, &s->vf_mem_maxdiff_mib,
				    s->mem_have[i] ? (double)s->mem_used[i] / 1048576.0 : -1.0,
				    (double)g.mem_used / 1048576.0);
		else if (g.valid & GT_S_MEM) {
			mem_read(s, i, gen, &g);
			s->mem_reads_alloc += (uint64_t)mem_alloc;
		}
		if ((g.valid & GT_S_POWER) && pw_skip)
			verify_cell(&s->vf_pw_skipped, &s->vf_pw_differ, &s->vf_pw_maxdiff_w,
				    s->pw_have[i] ? s->pw_last[i] : -1.0, g.power_w);
		else if ((g.valid & GT_S_POWER) && s->pw_follow)
			pw_read(s, i, g.power_w);
		uint64_t ets_i = td;
		if (efresh[i]) { /* the energy reader's, once per value */
			g.energy_mj = emj[i];
			g.valid |= GT_S_ENERGY;
			ets_i = ets[i];
			s->energy_cells++;
		}
		int d = s->dev[i];
		/* a tool's cell not asked for this tick (skipped, or cut for the energy reader) holds the
		 * last value read, in madengine's CSVs and gpu_samples.csv, which have one on every row; a
		 * failed read stays empty; the trace has a point where a value was read */
		int pw_hold = !(g.valid & GT_S_POWER) && s->pw_have[i] && !(want & GT_S_POWER);
		int mem_hold = !(g.valid & GT_S_MEM) && (s->outputs & GT_SO_VRAM) && s->mem_have[i] && s->mem_total[i] &&
			       !(want & GT_S_MEM);
		put_ch(pw, ',');
		if (g.valid & GT_S_POWER)
			put_fixed(pw, g.power_w, 3);
		else if (pw_hold) {
			put_fixed(pw, s->pw_last[i], 3);
			s->pw_rows_held++;
		}
		int mem_ok = (g.valid & GT_S_MEM) && g.mem_total > 0;
		put_ch(vr, ',');
		if (mem_ok)
			put_fixed(vr, 100.0 * (double)g.mem_used / (double)g.mem_total, 2);
		else if (mem_hold) {
			put_fixed(vr, 100.0 * (double)s->mem_used[i] / (double)s->mem_total[i], 2);
			s->mem_rows_held++;
		}
		if (!s->rich)
			continue;
		double energy_j = 0;
		if (g.valid & GT_S_ENERGY) {
			if (!s->have_energy0[i]) {
				s->energy0[i] = g.energy_mj;
				s->have_energy0[i] = 1;
			}
			energy_j = (double)(g.energy_mj - s->energy0[i]) / 1000.0;
		}
		double used_mib = (double)g.mem_used / 1048576.0, total_mib = (double)g.mem_total / 1048576.0;
		put_u64(rich, td);
		put_ch(rich, ',');
		put_u64(rich, (uint64_t)d);
		put_ch(rich, ',');
		if (g.valid & GT_S_POWER || pw_hold)
			put_fixed(rich, g.valid & GT_S_POWER ? g.power_w : s->pw_last[i], 3);
		put_ch(rich, ',');
		if (g.valid & GT_S_ENERGY)
			put_fixed(rich, energy_j, 3);
		put_ch(rich, ',');
		if (mem_hold) {
			used_mib = (double)s->mem_used[i] / 1048576.0;
			total_mib = (double)s->mem_total[i] / 1048576.0;
		}
		if (g.valid & GT_S_MEM || mem_hold)
			put_fixed(rich, used_mib, 1);
		put_ch(rich, ',');
		if (g.valid & GT_S_MEM || mem_hold)
			put_fixed(rich, total_mib, 1);
		put_ch(rich, ',');
		if (g.valid & GT_S_UTIL)
			put_u64(rich, g.sm_util_pct);
		put_ch(rich, ',');
		if (g.valid & GT_S_UTIL)
			put_u64(rich, g.mem_util_pct);
		put_ch(rich, ',');
		if (g.valid & GT_S_CLOCK)
			put_u64(rich, g.sm_clock_mhz);
		put_ch(rich, ',');
		if (g.valid & GT_S_TEMP)
			put_u64(rich, g.temp_c);
		put_ch(rich, '\n');
		if (s->tw_open) {
			if (g.valid & GT_S_POWER)
				put_counter(recs, &off, s->tid, s->name_ids[0], (uint32_t)d, td, g.power_w);
			if (g.valid & GT_S_ENERGY)
				put_counter(recs, &off, s->tid, s->name_ids[1], (uint32_t)d, ets_i, energy_j);
			if (g.valid & GT_S_MEM)
				put_counter(recs, &off, s->tid, s->name_ids[2], (uint32_t)d, td, used_mib);
			if (g.valid & GT_S_UTIL) {
				put_counter(recs, &off, s->tid, s->name_ids[3], (uint32_t)d, td, g.sm_util_pct);
				put_counter(recs, &off, s->tid, s->name_ids[4], (uint32_t)d, td, g.mem_util_pct);
			}
			if (g.valid & GT_S_CLOCK)
				put_counter(recs, &off, s->tid, s->name_ids[5], (uint32_t)d, td, g.sm_clock_mhz);
			if (g.valid & GT_S_TEMP)
				put_counter(recs, &off, s->tid, s->name_ids[6], (uint32_t)d, td, g.temp_c);
		}
	}
	put_ch(pw, '\n');
	put_ch(vr, '\n');
	write_held(s, 0);
	if (off) {
		gt_tw_write(&s->tw, recs, off, off / sizeof(struct gt_rec_counter));
		gt_tw_flush_older(&s->tw, 1000000000ull); /* a block waits at most a second */
	}
	s->samples++;
}

void gt_sampler_run(struct gt_sampler *s)
{
	uint64_t deadline = s->clock.mono_ns(s->clock.ctx);
	for (;;) {
		if (s->clock.wait_until(s->clock.ctx, deadline))
			break;
		tick(s);
		if (s->max_samples && s->samples >= s->max_samples)
			break;
		deadline += s->period_ns;
		uint64_t now = s->clock.mono_ns(s->clock.ctx);
		if (now > deadline) {
			/* Late: skip every deadline already past, stay on the grid. */
			uint64_t late = (now - deadline) / s->period_ns + 1;
			s->missed += late;
			deadline += late * s->period_ns;
		}
	}
}

static void *thread_main(void *arg)
{
	struct gt_sampler *s = arg;
	struct timespec w0, w1;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	gt_sampler_run(s);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	/* the scheduler's own account of this thread, in ns (getrusage is tick-sampled) */
	struct timespec c;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c) == 0)
		s->cpu_s = (double)c.tv_sec + (double)c.tv_nsec / 1e9;
	s->wall_s = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;
	return NULL;
}

static void *energy_main(void *arg)
{
	struct gt_sampler *s = arg;
	gt_sampler_energy_run(s);
	struct timespec c;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c) == 0)
		s->energy_cpu_s = (double)c.tv_sec + (double)c.tv_nsec / 1e9;
	return NULL;
}

int gt_sampler_start(struct gt_sampler *s)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&s->thread, NULL, thread_main, s);
	if (r == 0) {
		s->running = 1;
		if (s->rich && s->source.energy) {
			int e = pthread_create(&s->ethread, NULL, energy_main, s);
			if (e == 0)
				s->erunning = 1;
			else /* the samples go on; only the energy column stays empty */
				gt_warn("sampler: no energy reader thread: %s", strerror(e));
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -r;
}

void gt_sampler_request_stop(struct gt_sampler *s)
{
	if (s->running || s->erunning) {
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
}

void gt_sampler_stop(struct gt_sampler *s)
{
	gt_sampler_request_stop(s);
	if (s->running)
		pthread_join(s->thread, NULL);
	if (s->erunning)
		pthread_join(s->ethread, NULL);
	s->running = s->erunning = 0;
	if (s->lines)
		write_held(s, 1);
	if (s->power)
		fclose(s->power);
	if (s->vram)
		fclose(s->vram);
	if (s->rich)
		fclose(s->rich);
	s->power = s->vram = s->rich = NULL;
	free(s->lines);
	s->lines = NULL;
	if (s->tw_open) {
		gt_tw_close(&s->tw, s->clock.real_ns(s->clock.ctx), 0, 0, 0);
		s->tw_open = 0;
	}
}
