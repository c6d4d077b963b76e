/*
 * run/sampler.h — periodic GPU samples (power, memory, utilisation, clocks)
 * taken by a thread of gputap while the command runs.
 *
 * Owns: the sampling loop, its timing, and the sample files of a run:
 *   DIR/gpu_info_power_profiler_output.csv  time, Power(Watt) GPU<i>...  (seed 003)
 *   DIR/gpu_info_vram_profiler_output.csv   time, vram(%) GPU<i>...      (seed 003)
 *   DIR/gpu_samples.csv                      one row per device and sample, units in the header
 *   DIR/samplers/trace.gtr                   the same samples as GT_REC_COUNTER records
 *
 * Timing: sample k is due at start + k*period on CLOCK_MONOTONIC (absolute
 * deadlines, so the time a query takes never shifts later samples).  When a
 * sample ends past one or more deadlines, those deadlines are skipped and
 * counted in `missed`; the next sample keeps the original grid.
 * Every row is flushed when written: a killed run keeps all rows written so
 * far.  A metric the device does not report is written as an empty field.
 *
 * What is read when (measured on an H100: most NVML queries cost 0.3-4 us of
 * CPU, the total-energy counter ~4 ms, up to 17 ms): every tick reads only
 * what the asked tools print (power tool: power, vram tool: memory).
 * gpu_samples.csv's other metrics (utilisation, SM clock, temperature, and
 * power or memory when their tool is not asked) are read at most every
 * slow_period_ns (default GT_SAMPLER_SLOW_PERIOD_NS), i.e. every `slow_every`
 * ticks, each device on its own tick of that cycle so the cost is spread.
 * The energy counter is read for one device at a time, devices in turn,
 * paced by its own cost: after a read that took c ns, the next comes
 * c / GT_SAMPLER_ENERGY_SHARE later (at least slow_period_ns, at most
 * GT_SAMPLER_ENERGY_MAX_GAP_NS), so it stays near 0.25 % of one core however
 * many GPUs and whatever the rate.  Cells not read on a tick are empty.
 *
 * The clock and the metric source are injected (struct gt_sampler_clock,
 * struct gt_sampler_source) so tests drive the loop with a test clock and
 * fake devices; gt_sampler_default_clock() and gt_sampler_nvml_source()
 * are the real ones.
 */
#ifndef GT_RUN_SAMPLER_H
#define GT_RUN_SAMPLER_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "core/trace_io.h"
#include "run/nvml.h"

struct gt_sampler_lines;

struct gt_sampler_clock {
	uint64_t (*mono_ns)(void *ctx);
	uint64_t (*real_ns)(void *ctx);
	/* Wait until mono_ns() >= deadline.  Returns 1 if asked to stop meanwhile. */
	int (*wait_until)(void *ctx, uint64_t deadline);
	void *ctx;
};

struct gt_sampler_source {
	/* read the metrics in `want` (GT_S_* bits) of device dev */
	int (*sample)(void *ctx, int dev, unsigned want, struct gt_gpu_sample *s);
	void *ctx;
};

/* which files a sampler writes */
#define GT_SO_POWER 0x1u /* gpu_info_power_profiler_output.csv */
#define GT_SO_VRAM 0x2u  /* gpu_info_vram_profiler_output.csv */
#define GT_SO_RICH 0x4u  /* gpu_samples.csv + samplers/trace.gtr */

#define GT_SAMPLER_MAXDEV 64
/* gpu_samples.csv's extra metrics at most at 10 Hz */
#define GT_SAMPLER_SLOW_PERIOD_NS 100000000ull
/* energy counter reads: their wall time over the time between them */
#define GT_SAMPLER_ENERGY_SHARE 0.0025
#define GT_SAMPLER_ENERGY_MAX_GAP_NS 10000000000ull

struct gt_sampler {
	/* settings */
	int ndev;
	int dev[GT_SAMPLER_MAXDEV];
	uint64_t period_ns;
	unsigned outputs;
	uint64_t t0_real_ns;  /* origin of the seed CSVs' "time" column */
	uint64_t max_samples; /* stop after this many (tests), 0 = until stopped */
	uint64_t slow_period_ns; /* set before init; 0 = GT_SAMPLER_SLOW_PERIOD_NS */
	struct gt_sampler_clock clock;
	struct gt_sampler_source source;
	/* results */
	uint64_t samples; /* ticks taken (each covers every device) */
	uint64_t missed;  /* deadlines skipped because a tick ran late */
	uint64_t first_ns, last_ns; /* CLOCK_REALTIME of the first and last tick */
	double cpu_s;     /* CPU time of the sampling thread */
	double wall_s;
	/* what is read: fast_want every tick, slow_want on device i's ticks
	 * k with k % slow_every == slow_phase[i] */
	unsigned fast_want, slow_want;
	uint64_t slow_every;
	uint64_t slow_phase[GT_SAMPLER_MAXDEV];
	uint64_t energy_tick; /* tick of the next energy read (rich only) */
	int energy_dev;       /* index into dev[] of that read */
	uint64_t energy_reads;
	/* internals */
	FILE *power, *vram, *rich;
	struct gt_trace_writer tw;
	int tw_open;
	uint32_t tid;
	struct gt_sampler_lines *lines;
	uint32_t name_ids[8];
	uint64_t energy0[GT_SAMPLER_MAXDEV];
	uint8_t have_energy0[GT_SAMPLER_MAXDEV];
	pthread_t thread;
	int running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	char dir[4096];
};

/* Parse DEVICE ("0", "0,1,2", "all") against `count` devices.  Fills
 * devs (sorted, unique); returns how many, or -1 with err naming the bad
 * index. */
int gt_sampler_parse_devices(const char *spec, int count, int *devs, int max, char *err, size_t errlen);

/* Prepare: open the output files in `dir` and write their headers.
 * s->clock/source must be set (or left zero for the real ones).
 * 0 or -1 with err naming the file. */
int gt_sampler_init(struct gt_sampler *s, const char *dir, const int *devs, int ndev, double period_s,
		    unsigned outputs, uint64_t t0_real_ns, char *err, size_t errlen);
/* The loop, in the calling thread, until stopped or max_samples. */
void gt_sampler_run(struct gt_sampler *s);
/* Run the loop in a thread (all signals blocked in it). 0 or -errno. */
int gt_sampler_start(struct gt_sampler *s);
/* Ask the loop to stop, join the thread, close and finish the files. */
void gt_sampler_stop(struct gt_sampler *s);

struct gt_sampler_clock gt_sampler_default_clock(struct gt_sampler *s);
struct gt_sampler_source gt_sampler_nvml_source(void);

#endif
