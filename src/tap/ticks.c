/* The clock of counted-only calls: see tap/ticks.h. */
#include "tap/ticks.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

int gt_ticks_tsc;

static struct {
	uint64_t ticks, ns; /* the first rate sample: the counter and CLOCK_MONOTONIC at one instant */
} T0;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The counter and CLOCK_MONOTONIC read together: the counter's value is the middle of two reads
 * around the clock's. */
static void sample(uint64_t *ticks, uint64_t *ns)
{
	uint64_t a = gt_ticks();
	*ns = mono_ns();
	uint64_t b = gt_ticks();
	*ticks = a + (b - a) / 2;
}

uint64_t gt_ticks_scale(uint64_t ticks, uint64_t span_ticks, uint64_t span_ns)
{
	if (!span_ticks)
		return 0;
	return (uint64_t)((unsigned __int128)ticks * span_ns / span_ticks);
}

int gt_ticks_tsc_fit(int invariant, const char *sources)
{
	if (!invariant)
		return 0;
	if (!sources)
		return 1;
	for (const char *p = sources; (p = strstr(p, "tsc")) != NULL; p += 3) {
		int starts = p == sources || p[-1] == ' ' || p[-1] == '\t';
		int ends = p[3] == '\0' || p[3] == ' ' || p[3] == '\t' || p[3] == '\n';
		if (starts && ends)
			return 1;
	}
	return 0;
}

void gt_ticks_init(int allow)
{
	gt_ticks_tsc = 0;
#if defined(__x86_64__)
	unsigned a = 0, b = 0, c = 0, d = 0;
	int invariant = __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8));
	char buf[256];
	const char *sources = NULL;
	int fd = open("/sys/devices/system/clocksource/clocksource0/available_clocksource", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n >= 0) {
			buf[n] = '\0';
			sources = buf;
		}
	}
	gt_ticks_tsc = allow && gt_ticks_tsc_fit(invariant, sources);
#else
	(void)allow;
#endif
	sample(&T0.ticks, &T0.ns);
}

uint64_t gt_ticks_ns(uint64_t ticks)
{
	if (!gt_ticks_tsc)
		return ticks;
	uint64_t t, ns;
	sample(&t, &ns);
	if (ns - T0.ns < 2000000ull) { /* a rate over less than 2 ms: wait for a better one */
		struct timespec w = {0, (long)(2000000ull - (ns - T0.ns))};
		nanosleep(&w, NULL);
		sample(&t, &ns);
	}
	return gt_ticks_scale(ticks, t - T0.ticks, ns - T0.ns);
}

/* ---- ticks of recorded calls to epoch ns (the writer thread) ---- */

#define MARK_KEEP_NS 10000000ull /* a mark is kept when 10 ms passed since the last kept one */

static struct gt_tick_marks M;

/* The pair of marks the last conversion used, its rate as a 32.32 multiplier: most ticks of one
 * drain fall in the newest pair, and a multiplication costs far less than gt_ticks_scale's
 * 128-bit division, twice per record. */
static struct {
	int valid;
	uint64_t lo, hi; /* ticks it covers: [lo, hi), hi = UINT64_MAX for the newest pair */
	uint64_t mono, mult;
	int64_t off_lo, off_hi;
	uint64_t b_ticks;
} Z;

static uint64_t span_at(uint64_t d, const struct gt_tick_sample *a, const struct gt_tick_sample *b)
{
	return gt_ticks_scale(d, b->ticks - a->ticks, b->mono_ns - a->mono_ns);
}

/* The first of the two samples (n >= 2) that enclose `ticks`: the last i with s[i].ticks <= ticks,
 * within [0, n-2] (0 before the first, n-2 from the last on). */
static size_t pair_of(const struct gt_tick_sample *s, size_t n, uint64_t ticks)
{
	size_t lo = 0, hi = n - 1;
	if (ticks >= s[n - 1].ticks)
		return n - 2;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].ticks <= ticks)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t gt_ticks_interp(const struct gt_tick_sample *s, size_t n, uint64_t ticks)
{
	if (n == 1 || s[n - 1].ticks <= s[0].ticks)
		return s[0].mono_ns + (uint64_t)s[0].offset; /* no rate: the one instant known */
	size_t lo = pair_of(s, n, ticks);
	const struct gt_tick_sample *a = &s[lo], *b = &s[lo + 1];
	while (b->ticks <= a->ticks && lo > 0) /* equal ticks: widen to a pair with a rate */
		a = &s[--lo];
	uint64_t mono = ticks >= a->ticks ? a->mono_ns + span_at(ticks - a->ticks, a, b)
					  : a->mono_ns - span_at(a->ticks - ticks, a, b);
	return mono + (uint64_t)(ticks >= b->ticks ? b->offset : a->offset);
}

size_t gt_ticks_thin(struct gt_tick_sample *s, size_t n)
{
	size_t k = n > 0 ? 1 : 0;
	for (size_t i = 2; i < n; i += 2)
		s[k++] = s[i];
	return k;
}

void gt_ticks_marks_add(struct gt_tick_marks *m, struct gt_tick_sample x, uint64_t keep_ns)
{
	if (m->n == 0) {
		m->s[m->n++] = x;
		m->last_kept = 1;
		return;
	}
	if (!m->last_kept)
		m->n--; /* the previous mark only stood in for "now" */
	if (x.ticks <= m->s[m->n - 1].ticks)
		x.ticks = m->s[m->n - 1].ticks + 1; /* ascending, even where the counter was read out of order */
	if (m->n == GT_TICK_MARKS)
		m->n = gt_ticks_thin(m->s, m->n);
	m->last_kept = x.mono_ns - m->s[m->n - 1].mono_ns >= keep_ns;
	m->s[m->n++] = x;
}

void gt_ticks_mark(int64_t epoch_offset)
{
	struct gt_tick_sample x = {.offset = epoch_offset};
	sample(&x.ticks, &x.mono_ns);
	if (M.n == 0) /* the first pair starts at the tap's start */
		gt_ticks_marks_add(&M, (struct gt_tick_sample){T0.ticks, T0.ns, epoch_offset}, MARK_KEEP_NS);
	Z.valid = 0;
	gt_ticks_marks_add(&M, x, MARK_KEEP_NS);
}

uint64_t gt_ticks_epoch(uint64_t ticks)
{
	if (M.n == 0)
		return 0; /* no mark yet: the writer marks before it converts */
	if (!Z.valid || ticks < Z.lo || ticks >= Z.hi) {
		if (M.n < 2 || ticks < M.s[0].ticks)
			return gt_ticks_interp(M.s, M.n, ticks);
		size_t lo = pair_of(M.s, M.n, ticks);
		const struct gt_tick_sample *a = &M.s[lo], *b = &M.s[lo + 1]; /* ascending: gt_ticks_mark */
		Z.lo = a->ticks;
		Z.hi = lo + 2 == M.n ? UINT64_MAX : b->ticks;
		Z.b_ticks = b->ticks;
		Z.mono = a->mono_ns;
		Z.mult = (uint64_t)(((unsigned __int128)(b->mono_ns - a->mono_ns) << 32) / (b->ticks - a->ticks));
		Z.off_lo = a->offset;
		Z.off_hi = b->offset;
		Z.valid = 1;
	}
	uint64_t mono = Z.mono + (uint64_t)(((unsigned __int128)(ticks - Z.lo) * Z.mult) >> 32);
	return mono + (uint64_t)(ticks >= Z.b_ticks ? Z.off_hi : Z.off_lo);
}
