/*
 * run/sampler.h — periodic GPU samples (power, memory, utilisation, clocks)
 * taken by a thread of gputap while the command runs.
 *
 * Owns: the sampling loop, its timing, and the sample files of a run:
 *   DIR/gpu_info_power_profiler_output.csv  time, Power(Watt) GPU<i>...  (madengine)
 *   DIR/gpu_info_vram_profiler_output.csv   time, vram(%) GPU<i>...      (madengine)
 *   DIR/gpu_samples.csv                      one row per device and sample, units in the header
 *   DIR/samplers/trace.gtr                   the same samples as GT_REC_COUNTER records
 *
 * Timing: sample k is due at start + k*period on CLOCK_MONOTONIC (absolute
 * deadlines, so the time a query takes never shifts later samples).  When a
 * sample ends past one or more deadlines, those deadlines are skipped and
 * counted in `missed`; the next sample keeps the original grid.
 * Rows are held in memory and written (one write per file) every
 * GT_SAMPLER_WRITE_EVERY_NS, and at stop: a killed run loses at most the last
 * 100 ms of rows; 100 Hz on a few GPUs makes 30 writes a second, not 300.
 * A metric the device does not report is written as an empty field.
 *
 * What is read when (measured on an H100: most NVML queries cost 0.3-4 us of
 * CPU, the total-energy counter ~4 ms, up to 17 ms, busy all along): every
 * tick reads only what the asked tools print (power tool: power, vram tool:
 * memory).  gpu_samples.csv's other metrics (utilisation, SM clock,
 * temperature, and power or memory when their tool is not asked) are read at
 * most every slow_period_ns (default GT_SAMPLER_SLOW_PERIOD_NS), i.e. every
 * `slow_every` ticks, each device on its own tick of that cycle; a device
 * whose reads take longer (a utilisation query of 0.2-2 ms was seen on H200s
 * whose other queries take under 10 us) waits c / GT_SAMPLER_SLOW_SHARE after
 * a read that took c ns, so that no device's slow reads cost more than
 * 0.05 % of one core.
 *
 * The energy counter is never read by the tick thread: a second thread (the
 * energy reader, gpu_samples.csv only) reads one device at a time, devices in
 * turn, the first at the start; after a read that took c ns it waits
 * gt_sampler_energy_gap(c) = c / GT_SAMPLER_ENERGY_SHARE, within
 * [GT_SAMPLER_ENERGY_MIN_GAP_NS, GT_SAMPLER_ENERGY_MAX_GAP_NS], so it stays near
 * 0.1 % of one core whatever the GPUs and the rate, and a slow read never makes
 * a tick late.  It publishes each device's latest (value, time) under `emu`;
 * the tick thread only try-locks `emu` (it never waits for the reader, which
 * holds it for a few stores, never across NVML) and writes the energy cell and
 * counter record on the first tick after a new value; otherwise the cell is
 * empty.  Other cells not read on a tick are empty (below: the tools' own).
 *
 * The vram tool's memory above 10 Hz (NVML's memory query is the costliest of
 * the tick's: ~23-53 us a GPU paced, measured on H200s): a device's memory is
 * read on a tick when (a) the allocation counter `memgen` (core/memgen.h: the
 * tap bumps it on every device allocation and free of the run's processes)
 * moved since its last read, (b) its value changed within the last
 * slow_every reads (a change is followed tick by tick), or (c) slow_every
 * ticks have passed since its last read (10 Hz: what the tap cannot see,
 * other processes, the driver's own).  Otherwise madengine's vram CSV and
 * gpu_samples.csv hold the last value read (a value on every row, at most
 * 100 ms old and read again on the tick after any allocation or free the tap
 * saw); the trace has a point where it was read.
 *
 * The power tool's power above 10 Hz: the driver refreshes a GPU's power
 * about every 100 ms (measured on H100 and H200), so most reads 10 ms apart
 * return the last value again.  From the last two gaps (in ticks) between
 * changes of a device's value, lo and hi (lo at most slow_every), reads stop
 * after a change and start again lo - 1 ticks later, until the next change or
 * hi + 1 ticks after the last one (a refresh that brought the same value: the
 * next window is hi later); a device whose value changes less than 3 ticks
 * apart, or has not changed twice, is read on every tick.  The power CSV and
 * gpu_samples.csv hold the last value between reads; the trace has a point
 * where it was read.
 *
 * At 10 Hz and below, and with every_tick (GPUTAP_SAMPLE_EVERY_TICK=1), every
 * tick reads both.  With verify (GPUTAP_SAMPLE_VERIFY=1) every tick reads
 * both too, the rules run beside the reads, and run.json counts the rows where
 * the value the rules would have held differs from the one read (and by how
 * much): what the rules cost in information on this machine and workload.
 * A tool's cell the tick did not ask for (skipped by these rules, or cut for
 * the energy reader) holds the last value in madengine's CSVs and
 * gpu_samples.csv; a read that failed stays empty.
 *
 * The clocks (one per thread) and the metric source are injected (struct
 * gt_sampler_clock, struct gt_sampler_source) so tests drive the loop with a
 * test clock and fake devices; the energy reader is a function
 * (gt_sampler_energy_read) that its thread only loops around, so a test clock
 * can run it on its own simulated timeline.  gt_sampler_default_clock() and
 * gt_sampler_nvml_source() are the real ones.
 */
#ifndef GT_RUN_SAMPLER_H
#define GT_RUN_SAMPLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace_io.h"
#include "gpu/nvml.h"

struct gt_sampler_lines;

struct gt_sampler_clock {
	uint64_t (*mono_ns)(void *ctx);
	uint64_t (*real_ns)(void *ctx);
	/* Wait until mono_ns() >= deadline.  Returns 1 if asked to stop meanwhile. */
	int (*wait_until)(void *ctx, uint64_t deadline);
	void *ctx;
};

struct gt_sampler_source {
	/* read the metrics in `want` (GT_S_* bits, never GT_S_ENERGY) of device dev; tick thread */
	int (*sample)(void *ctx, int dev, unsigned want, struct gt_gpu_sample *s);
	void *ctx;
	/* the total-energy counter of device dev in mJ: 0, or -1 if not reported.
	 * Energy reader only; NULL = no energy column. */
	int (*energy)(void *ctx, int dev, uint64_t *mj);
};

/* which files a sampler writes */
#define GT_SO_POWER 0x1u /* gpu_info_power_profiler_output.csv */
#define GT_SO_VRAM 0x2u  /* gpu_info_vram_profiler_output.csv */
#define GT_SO_RICH 0x4u  /* gpu_samples.csv + samplers/trace.gtr */

#define GT_SAMPLER_MAXDEV 64
/* rows are written at most this long after they were taken */
#define GT_SAMPLER_WRITE_EVERY_NS 100000000ull
/* per output file: the rows held between writes (many ticks of MAXDEV devices) */
#define GT_SAMPLER_LINEBUF 65536
/* gpu_samples.csv's extra metrics at most at 10 Hz */
#define GT_SAMPLER_SLOW_PERIOD_NS 100000000ull
/* The share of one core a device's slow reads may take (see above). */
#define GT_SAMPLER_SLOW_SHARE 0.0005
/* energy counter reads (their own thread): their time over the wait after them */
#define GT_SAMPLER_ENERGY_SHARE 0.001
#define GT_SAMPLER_ENERGY_MIN_GAP_NS 1000000000ull
#define GT_SAMPLER_ENERGY_MAX_GAP_NS 10000000000ull

/* the energy reader's latest value of one device (under gt_sampler.emu) */
struct gt_sampler_energy_cell {
	uint64_t seq; /* values published so far; the tick compares with its own count */
	uint64_t mj;
	uint64_t real_ns; /* CLOCK_REALTIME when the read began */
};

struct gt_sampler {
	/* settings */
	int ndev;
	int dev[GT_SAMPLER_MAXDEV];
	uint64_t period_ns;
	unsigned outputs;
	uint64_t t0_real_ns;  /* origin of madengine's CSVs' "time" column */
	uint64_t max_samples; /* stop after this many (tests), 0 = until stopped */
	uint64_t slow_period_ns; /* set before init; 0 = GT_SAMPLER_SLOW_PERIOD_NS */
	struct gt_sampler_clock clock;  /* the tick thread's */
	struct gt_sampler_clock eclock; /* the energy reader's; zero = the real one */
	struct gt_sampler_source source;
	/* results */
	uint64_t samples; /* ticks taken (each covers every device) */
	uint64_t missed;  /* deadlines skipped because a tick ran late */
	uint64_t first_ns, last_ns; /* CLOCK_REALTIME of the first and last tick */
	double cpu_s;     /* CPU time of the tick thread */
	double wall_s;
	double energy_cpu_s; /* CPU time of the energy reader's thread */
	/* what is read: fast_want every tick, slow_want on device i's tick
	 * slow_next[i] (first i * slow_every / ndev, then slow_every ticks later, or
	 * more after a costly read: slow_gap in sampler.c) */
	unsigned fast_want, slow_want;
	uint64_t slow_every;
	uint64_t slow_next[GT_SAMPLER_MAXDEV];
	uint64_t slow_backoffs; /* slow reads put off beyond slow_every for their cost */
	/* energy reader (its thread only; read after gt_sampler_stop) */
	int energy_dev;         /* index into dev[] of the next read */
	uint64_t energy_reads;  /* reads made */
	uint64_t energy_read_ns; /* their total time */
	uint64_t energy_gap_ns; /* the wait after the last read */
	/* tick thread: energy values written, ticks that found `emu` busy */
	uint64_t energy_cells, energy_busy;
	/* index into dev[] of the device whose energy counter is being read, -1
	 * when none: NVML serialises queries per device, so a memory query of
	 * that device would wait for the whole energy read (measured up to 17 ms
	 * on H200); the tick reads only its power that tick (field values do not
	 * wait) and leaves the other cells empty */
	_Atomic int energy_busy_idx;
	uint64_t busy_skips; /* tick thread: device reads cut to power for that reason */
	uint64_t writes;     /* tick thread: times the held rows were written */
	uint64_t held_since_ns; /* tick thread: clock.mono_ns of the oldest row held */
	/* the vram tool's memory reads (above): memgen and every_tick set before init */
	_Atomic uint64_t *memgen; /* gputap run's allocation counter, or NULL */
	int every_tick;       /* read memory on every tick, whatever the rate */
	int mem_follow;           /* tick thread: the rules above apply (vram tool, above 10 Hz) */
	uint64_t mem_next[GT_SAMPLER_MAXDEV];  /* tick of device i's 10 Hz read */
	uint64_t mem_quiet[GT_SAMPLER_MAXDEV]; /* its reads since its value last changed */
	uint64_t mem_gen[GT_SAMPLER_MAXDEV];   /* memgen when it was last read */
	uint64_t mem_used[GT_SAMPLER_MAXDEV], mem_total[GT_SAMPLER_MAXDEV]; /* its last value */
	uint8_t mem_have[GT_SAMPLER_MAXDEV];
	uint64_t mem_reads;       /* device memory reads made by the tick thread */
	uint64_t mem_reads_alloc; /* of which because memgen moved */
	uint64_t mem_rows_held;   /* device cells of the vram CSV that held the last value */
	/* the power tool's reads (above) */
	int verify;               /* set before init: GPUTAP_SAMPLE_VERIFY=1 */
	int pw_follow;            /* tick thread: the power rule applies (power tool, above 10 Hz) */
	uint8_t pw_have[GT_SAMPLER_MAXDEV], pw_changed[GT_SAMPLER_MAXDEV]; /* a value; a change seen */
	double pw_last[GT_SAMPLER_MAXDEV];    /* its last value */
	uint64_t pw_change[GT_SAMPLER_MAXDEV];  /* tick of its last change (or first read) */
	uint64_t pw_gap[GT_SAMPLER_MAXDEV], pw_gap_prev[GT_SAMPLER_MAXDEV]; /* ticks between its last two changes */
	uint64_t pw_reads, pw_rows_held;
	/* verify: rows the rules would have skipped, of which held a value other than the read one */
	uint64_t vf_pw_skipped, vf_pw_differ, vf_mem_skipped, vf_mem_differ;
	double vf_pw_maxdiff_w, vf_mem_maxdiff_mib;
	/* internals */
	FILE *power, *vram, *rich;
	struct gt_trace_writer tw;
	int tw_open;
	uint32_t tid;
	struct gt_sampler_lines *lines;
	uint32_t name_ids[8];
	uint64_t energy0[GT_SAMPLER_MAXDEV];
	uint8_t have_energy0[GT_SAMPLER_MAXDEV];
	uint64_t energy_seen[GT_SAMPLER_MAXDEV]; /* tick thread: cell seq last written */
	pthread_mutex_t emu; /* guards ecell; the tick thread only try-locks it */
	struct gt_sampler_energy_cell ecell[GT_SAMPLER_MAXDEV];
	/* private to sampler.c: start and stop through the calls below */
	pthread_t thread, ethread;
	int running, erunning;
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
/* Run the loop in a thread, and the energy reader in a second one when
 * gpu_samples.csv is written and the source reads energy (all signals blocked
 * in both).  0 or -errno. */
int gt_sampler_start(struct gt_sampler *s);
/* Ask both loops to stop (a wait is cut short) and return at once: no
 * sample is taken after this; the threads end on their own. */
void gt_sampler_request_stop(struct gt_sampler *s);
/* gt_sampler_request_stop, then join the threads, close and finish the files. */
void gt_sampler_stop(struct gt_sampler *s);

/* The energy reader's step: read device dev[energy_dev] (timed on eclock),
 * publish the value, move to the next device; returns how long to wait before
 * the next read (gt_sampler_energy_gap() of this read's time). */
uint64_t gt_sampler_energy_read(struct gt_sampler *s);
/* The wait after an energy read that took cost_ns. */
uint64_t gt_sampler_energy_gap(uint64_t cost_ns);

/* The most text one tick of `ndev` devices adds to one output file. */
size_t gt_sampler_tick_text_max(int ndev);
/* The energy reader's loop, until stopped (the second thread's body). */
void gt_sampler_energy_run(struct gt_sampler *s);

struct gt_sampler_clock gt_sampler_default_clock(struct gt_sampler *s);
struct gt_sampler_source gt_sampler_nvml_source(void);

#endif
