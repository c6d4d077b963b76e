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
