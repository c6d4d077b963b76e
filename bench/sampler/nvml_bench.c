/*
 * nvml_bench — time each NVML query the power/vram sampler could use, on every GPU.
 *
 * Build: cc -O2 -o nvml_bench nvml_bench.c -ldl -lpthread   (no NVML header needed: dlopen)
 * Run:   ./nvml_bench [calls per query, default 300]
 *        ./nvml_bench floor [SECONDS]   (only the floor below, SECONDS a mode, default 3)
 *
 * For each query and device: wall time per call (mean, median, p99, max, in µs), CPU
 * time of the calling thread per call (CLOCK_THREAD_CPUTIME_ID), and the return code.
 * Then how often the power and energy values change when read every 10 ms, and how the
 * driver's own power-sample buffer (nvmlDeviceGetSamples) is spaced.
 * Last, "concurrent": the sampler reads the energy counter on a thread of its own,
 * which helps only if NVML lets other queries run meanwhile.  A second thread reads
 * the energy counter without pause (of GPU 0, then of the last GPU) while this one
 * times power (field value) and memory of GPU 0 every 10 ms for 2 s; a max near the
 * energy read's time means NVML serialises them (the tick thread would then still
 * wait, and miss deadlines).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} mem1_t;
typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} mem2_t;
typedef struct {
	unsigned gpu, memory;
} util_t;
typedef union {
	double d;
	unsigned int ui;
	unsigned long ul;
	unsigned long long ull;
	long long sll;
} value_t;
typedef struct {
	unsigned int field_id, scope_id;
	long long timestamp, latency_us;
	int value_type;
	nvmlReturn_t ret;
	value_t value;
} field_t;
typedef struct {
	unsigned long long ts;
	value_t v;
} sample_t;

/* NVML constants as nvml.h defines them */
#define FI_TOTAL_ENERGY 83   /* NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION */
#define FI_POWER_AVERAGE 185 /* NVML_FI_DEV_POWER_AVERAGE */
#define FI_POWER_INSTANT 186 /* NVML_FI_DEV_POWER_INSTANT */
#define MEM_V2 ((unsigned)(sizeof(mem2_t) | (2u << 24))) /* nvmlMemory_v2 = NVML_STRUCT_VERSION(Memory, 2) */

static nvmlReturn_t (*init)(void);
static nvmlReturn_t (*count)(unsigned *);
static nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
static nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
static nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
static nvmlReturn_t (*mem1)(nvmlDevice_t, mem1_t *);
static nvmlReturn_t (*mem2)(nvmlDevice_t, mem2_t *);
static nvmlReturn_t (*util)(nvmlDevice_t, util_t *);
static nvmlReturn_t (*clk)(nvmlDevice_t, int, unsigned *);
static nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
static nvmlReturn_t (*fields)(nvmlDevice_t, int, field_t *);
static nvmlReturn_t (*samples)(nvmlDevice_t, int, unsigned long long, int *, unsigned *, sample_t *);
static const char *(*errstr)(nvmlReturn_t);

static double now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

enum { Q_POWER, Q_ENERGY, Q_MEM1, Q_MEM2, Q_UTIL, Q_CLOCK, Q_TEMP, Q_F_INST, Q_F_AVG, Q_F_ENERGY, Q_F_INST_ENERGY,
       Q_F_AVG_ENERGY, Q_ALL6, Q_N };
static const char *const qname[Q_N] = {
	"nvmlDeviceGetPowerUsage", "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetMemoryInfo (v1)",
	"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetClockInfo(SM)",
	"nvmlDeviceGetTemperature(GPU)", "FieldValues{POWER_INSTANT}", "FieldValues{POWER_AVERAGE}",
	"FieldValues{TOTAL_ENERGY}", "FieldValues{POWER_INSTANT,TOTAL_ENERGY}", "FieldValues{POWER_AVERAGE,TOTAL_ENERGY}",
	"all six calls of the old sampler",
};

static nvmlReturn_t one(int q, nvmlDevice_t d, double *val)
{
	unsigned u = 0;
	unsigned long long e = 0;
	mem1_t m1;
	mem2_t m2;
	util_t ut;
	field_t f[2];
	nvmlReturn_t r = -1;
	memset(f, 0, sizeof(f));
	switch (q) {
	case Q_POWER:
		r = power ? power(d, &u) : -1, *val = u / 1000.0;
		break;
	case Q_ENERGY:
		r = energy ? energy(d, &e) : -1, *val = (double)e;
		break;
	case Q_MEM1:
		r = mem1 ? mem1(d, &m1) : -1, *val = (double)m1.used;
		break;
	case Q_MEM2:
		memset(&m2, 0, sizeof(m2));
		m2.version = MEM_V2;
		r = mem2 ? mem2(d, &m2) : -1, *val = (double)m2.used;
		break;
	case Q_UTIL:
		r = util ? util(d, &ut) : -1, *val = ut.gpu;
		break;
	case Q_CLOCK:
		r = clk ? clk(d, 1, &u) : -1, *val = u;
		break;
	case Q_TEMP:
		r = temp ? temp(d, 0, &u) : -1, *val = u;
		break;
	case Q_F_INST:
	case Q_F_AVG:
	case Q_F_ENERGY:
		f[0].field_id = q == Q_F_INST ? FI_POWER_INSTANT : q == Q_F_AVG ? FI_POWER_AVERAGE : FI_TOTAL_ENERGY;
		r = fields ? fields(d, 1, f) : -1;
		if (r == 0)
			r = f[0].ret;
		*val = q == Q_F_ENERGY ? (double)f[0].value.ull : f[0].value.ui / 1000.0;
		break;
	case Q_F_INST_ENERGY:
	case Q_F_AVG_ENERGY:
		f[0].field_id = q == Q_F_INST_ENERGY ? FI_POWER_INSTANT : FI_POWER_AVERAGE;
		f[1].field_id = FI_TOTAL_ENERGY;
		r = fields ? fields(d, 2, f) : -1;
		if (r == 0)
			r = f[0].ret ? f[0].ret : f[1].ret;
		*val = f[0].value.ui / 1000.0;
		break;
	case Q_ALL6: {
		double v;
		r = 0;
		for (int k = Q_POWER; k <= Q_TEMP; k++)
			if (k != Q_MEM2)
				r |= one(k, d, &v);
		*val = 0;
		break;
	}
	}
	return r;
}

static void time_query(int q, int dev, nvmlDevice_t d, int n)
{
	double *w = calloc((size_t)n, sizeof(double)), cpu = 0, sum = 0, v = 0;
	nvmlReturn_t r = 0;
	for (int i = 0; i < 5; i++)
		one(q, d, &v);
	for (int i = 0; i < n; i++) {
		double c0 = now(CLOCK_THREAD_CPUTIME_ID), t0 = now(CLOCK_MONOTONIC);
		r = one(q, d, &v);
		double t1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_THREAD_CPUTIME_ID);
		w[i] = t1 - t0;
		sum += w[i];
		cpu += c1 - c0;
	}
	qsort(w, (size_t)n, sizeof(double), cmpd);
	printf("%d  %-44s %9.1f %9.1f %9.1f %9.1f %9.1f  %s (last value %.3f)\n", dev, qname[q], sum / n, w[n / 2],
	       w[(int)(n * 0.99)], w[n - 1], cpu / n, r == 0 ? "ok" : (errstr && r > 0 ? errstr(r) : "missing"), v);
	free(w);
}

/* Read q every 10 ms for 1 s: how many distinct values came back. */
static void freshness(int q, nvmlDevice_t d)
{
	double prev = -1, v = 0;
	int changes = 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (int i = 0; i < 100; i++) {
		ts.tv_nsec += 10000000;
		if (ts.tv_nsec >= 1000000000)
			ts.tv_nsec -= 1000000000, ts.tv_sec++;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		one(q, d, &v);
		changes += i > 0 && v != prev;
		prev = v;
	}
	printf("freshness  %-44s %d of 99 reads 10 ms apart changed the value\n", qname[q], changes);
}

static void sample_buffer(nvmlDevice_t d)
{
	if (!samples) {
		printf("nvmlDeviceGetSamples: missing\n");
		return;
	}
	int type = 0;
	unsigned n = 0;
	double t0 = now(CLOCK_MONOTONIC);
	nvmlReturn_t r = samples(d, 0 /* NVML_TOTAL_POWER_SAMPLES */, 0, &type, &n, NULL);
	if (r != 0 || n == 0) {
		printf("nvmlDeviceGetSamples(power, size): %s, %u\n", errstr ? errstr(r) : "?", n);
		return;
	}
	sample_t *s = calloc(n, sizeof(*s));
	double t1 = now(CLOCK_MONOTONIC);
	r = samples(d, 0, 0, &type, &n, s);
	double t2 = now(CLOCK_MONOTONIC);
	if (r != 0 || n < 2) {
		printf("nvmlDeviceGetSamples(power): %s, %u samples\n", errstr ? errstr(r) : "?", n);
		free(s);
		return;
	}
	double span = (double)(s[n - 1].ts - s[0].ts) / 1e3;
	printf("nvmlDeviceGetSamples(power): %u samples over %.1f ms (mean spacing %.2f ms), value type %d, size "
	       "call %.1f us, read call %.1f us\n",
	       n, span, span / (n - 1), type, t1 - t0, t2 - t1);
	free(s);
}

struct hammer {
	nvmlDevice_t d;
	volatile int stop;
	int reads;
};

static void *energy_hammer(void *arg)
{
	struct hammer *h = arg;
	double v;
	while (!h->stop) {
		one(Q_F_ENERGY, h->d, &v);
		h->reads++;
	}
	return NULL;
}

/* Time q on d every 10 ms for 2 s, while another thread reads energy of ed (or nothing). */
static void concurrent(int q, nvmlDevice_t d, nvmlDevice_t ed, const char *what)
{
	struct hammer h = {ed, 0, 0};
	pthread_t t;
	int hammering = ed && pthread_create(&t, NULL, energy_hammer, &h) == 0;
	enum { N = 200 };
	double w[N], sum = 0, v;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (int i = 0; i < N; i++) {
		ts.tv_nsec += 10000000;
		if (ts.tv_nsec >= 1000000000)
			ts.tv_nsec -= 1000000000, ts.tv_sec++;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		double t0 = now(CLOCK_MONOTONIC);
		one(q, d, &v);
		w[i] = now(CLOCK_MONOTONIC) - t0;
		sum += w[i];
	}
	if (hammering) {
		h.stop = 1;
		pthread_join(t, NULL);
	}
	qsort(w, N, sizeof(double), cmpd);
	printf("concurrent %-34s %-36s mean %8.1f  median %8.1f  p99 %8.1f  max %8.1f us (%d energy reads meanwhile)\n",
	       qname[q], what, sum / N, w[N / 2], w[(int)(N * 0.99)], w[N - 1], h.reads);
}

/* What the samplers cannot go below: these calls every 10 ms on every GPU, in a bare loop (one thread,
 * an absolute clock_nanosleep, nothing recorded or written); the thread's CPU per mode, in % of one
 * core and per tick, three rounds of the modes interleaved. */
static void floor_ticks(nvmlDevice_t *d, unsigned ndev, double secs)
{
	static const char *const mode[] = {"wake-ups alone", "power (field) of every GPU", "memory (v1) of every GPU",
					   "memory (v2) of every GPU", "power + memory (v1) of every GPU",
					   "power + memory (v2) of every GPU", "power of every GPU, memory of one a tick"};
	printf("floor: %u GPU(s), 100 Hz, %.0f s a mode\n", ndev, secs);
	for (int round = 0; round < 3; round++)
		for (int m = 0; m < 7; m++) {
			double c0 = now(CLOCK_THREAD_CPUTIME_ID), t0 = now(CLOCK_MONOTONIC), v;
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			int ticks = 0;
			while (now(CLOCK_MONOTONIC) - t0 < secs * 1e6) { /* now(): microseconds */
				ts.tv_nsec += 10000000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_nsec -= 1000000000;
					ts.tv_sec++;
				}
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
				ticks++;
				for (unsigned i = 0; i < ndev; i++) {
					if (m == 1 || m >= 4)
						one(Q_F_INST, d[i], &v);
					if (m == 2 || m == 4 || (m == 6 && (unsigned)ticks % ndev == i))
						one(Q_MEM1, d[i], &v);
					if (m == 3 || m == 5)
						one(Q_MEM2, d[i], &v);
				}
			}
			double c = now(CLOCK_THREAD_CPUTIME_ID) - c0, w = now(CLOCK_MONOTONIC) - t0;
			printf("floor round %d %-42s %.3f %% of a core, %.1f us a tick (%d ticks)\n", round, mode[m],
			       100 * c / w, c / ticks, ticks);
		}
}

#define SYM(v, name) (*(void **)&v = dlsym(lib, name))

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300;
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "nvml_bench: %s\n", dlerror());
		return 1;
	}
	SYM(init, "nvmlInit_v2");
	SYM(count, "nvmlDeviceGetCount_v2");
	SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
	SYM(power, "nvmlDeviceGetPowerUsage");
	SYM(energy, "nvmlDeviceGetTotalEnergyConsumption");
	SYM(mem1, "nvmlDeviceGetMemoryInfo");
	SYM(mem2, "nvmlDeviceGetMemoryInfo_v2");
	SYM(util, "nvmlDeviceGetUtilizationRates");
	SYM(clk, "nvmlDeviceGetClockInfo");
	SYM(temp, "nvmlDeviceGetTemperature");
	SYM(fields, "nvmlDeviceGetFieldValues");
	SYM(samples, "nvmlDeviceGetSamples");
	SYM(errstr, "nvmlErrorString");
	if (!init || init() != 0 || !count) {
		fprintf(stderr, "nvml_bench: nvmlInit failed\n");
		return 1;
	}
	unsigned ndev = 0;
	count(&ndev);
	if (argc > 1 && strcmp(argv[1], "floor") == 0) { /* nvml_bench floor [SECONDS] */
		nvmlDevice_t d[16];
		unsigned k = 0;
		for (unsigned i = 0; i < ndev && k < 16; i++)
			if (handle(i, &d[k]) == 0)
				k++;
		floor_ticks(d, k, argc > 2 && atof(argv[2]) > 0 ? atof(argv[2]) : 3);
		return 0;
	}
	printf("%u GPU(s), %d calls per query\n", ndev, n);
	printf("dev query                                         mean_us  median_us  p99_us    max_us  cpu_us\n");
	for (unsigned i = 0; i < ndev; i++) {
		nvmlDevice_t d;
		if (handle(i, &d) != 0)
			continue;
		for (int q = 0; q < Q_N; q++)
			time_query(q, (int)i, d, q == Q_ALL6 ? n / 3 : n);
		if (i == 0) {
			freshness(Q_POWER, d);
			freshness(Q_F_INST, d);
			freshness(Q_F_ENERGY, d);
			sample_buffer(d);
		}
	}
	nvmlDevice_t d0 = NULL, dl = NULL;
	if (ndev && handle(0, &d0) == 0 && handle(ndev - 1, &dl) == 0) {
		static const int qs[] = {Q_F_INST, Q_MEM1};
		for (int k = 0; k < 2; k++) {
			concurrent(qs[k], d0, NULL, "alone");
			concurrent(qs[k], d0, d0, "energy of the same GPU meanwhile");
			if (ndev > 1)
				concurrent(qs[k], d0, dl, "energy of another GPU meanwhile");
		}
	}
	return 0;
}
