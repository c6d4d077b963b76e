/*
 * run/run.h — one `gputap run`: the run directory, the tool stack around
 * the command, the child, the samplers, run.json and what is written after
 * the command ended.
 *
 * Owns: DIR/run.json (written through run.json.tmp + rename, once before
 * the command starts and again at the end, so a killed gputap still leaves
 * a valid one), the default run directory name, finding libgputap.so, and
 * the order of work after the child exits: samplers stop at once, then
 * tear-downs from the innermost tool out (trace conversion, library-log
 * collection), then report.html and the summary.
 *
 * Invariant: the exit status of `gputap run` is the command's own (128+N
 * when a signal N ended it; 127/126 when it could not be started, as env(1)),
 * except for usage errors found before anything runs (2) and a run
 * directory that cannot be created (125).  Failures of the writers become
 * one warning each.
 */
#ifndef GT_RUN_RUN_H
#define GT_RUN_RUN_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "run/sampler.h"
#include "run/tools.h"

struct gt_run_opts {
	const char *outdir;       /* -o, NULL = gputap-<YYYYmmdd-HHMMSS> */
	const char *tools;        /* --tools LIST */
	const char *context;      /* --context JSON */
	const char *context_file; /* --context-file F */
	const char *trace;        /* --trace KINDS -> GPUTAP_TRACE */
	const char *buffer_mb;    /* --buffer-mb N -> GPUTAP_BUFFER_MB */
	const char *hold;         /* --hold N -> GPUTAP_HOLD */
	const char *metrics;      /* --metrics LIST -> GPUTAP_METRICS */
	const char *metrics_mode; /* --metrics-mode -> GPUTAP_METRICS_MODE */
	const char *pcsamp;       /* --pc-sampling[=PERIOD] -> GPUTAP_PCSAMP */
	char capture[1024];       /* --capture SPEC (repeatable, joined by ';') -> GPUTAP_CAPTURE */
	const char *trace_json;   /* --trace-json json|gz|none: the Perfetto trace of each process */
	char **argv;              /* the command, NULL-terminated */
	int argc;
};

/* Run everything; returns the exit status of `gputap run`. */
int gt_run_execute(const struct gt_run_opts *o);

/* One process directory found after the run. */
struct gt_run_proc {
	char name[64];
	int has_trace;
	int partial;
	uint64_t lost_records;
	uint64_t cupti_dropped;
	uint64_t records;
	int capture; /* traced only inside capture windows */
};

/* A sampler thread and the tools it serves. */
struct gt_run_sampler {
	struct gt_sampler s;
	int tools[4];
	int ntools;
	int started;
	char status[256]; /* "ok" or why it did not run */
};

#define GT_RUN_MAX_GPUS 64
#define GT_RUN_MAX_WARN 32

/* Everything run.json says. */
struct gt_run {
	char **argv;
	int argc;
	char **exec_argv; /* wrappers + argv */
	size_t exec_argc;
	char outdir[4096]; /* absolute */
	char cwd[4096];
	char host[256];
	char user[128];
	uint64_t start_ns, end_ns;
	int finished;
	int wstatus;
	int exit_code;
	int exec_errno;
	int forwarded_signal;
	struct rusage child_ru;
	struct gt_plan plan;
	char tap_lib[4096];
	/* GPUs */
	char nvml_error[256];
	int ngpu;
	struct gt_gpu_static gpu[GT_RUN_MAX_GPUS];
	char driver_version[96];
	char nvml_version[96];
	int cuda_driver_version;
	int no_driver; /* libcuda cannot be loaded: the tap records nothing (said at the start and the end) */
	/* samplers */
	struct gt_run_sampler *samplers;
	size_t nsamplers;
	_Atomic uint64_t *memgen; /* the allocation counter shared with the tap (core/memgen.h), or NULL */
	char memgen_name[64];
	/* processes */
	struct gt_run_proc *procs;
	size_t nprocs;
	const char *actions_done[64];
	size_t nactions_done;
	char *warnings[GT_RUN_MAX_WARN];
	size_t nwarnings;
	unsigned json_format; /* GT_EXPORT_JSON, GT_EXPORT_JSON_GZ or 0 (--trace-json) */
};

/* --trace-json's value as GT_EXPORT_JSON / GT_EXPORT_JSON_GZ / 0 (NULL: the default, json); -1 if unknown. */
int gt_run_json_format(const char *v, unsigned *out);

/* Write DIR/run.json for the state in `r`.  0 or -1 with err. */
int gt_runjson_write(const struct gt_run *r, char *err, size_t errlen);

/* Creates `parent`/gputap-20261121-085120 for `t` (local time), with "-2", "-3"... added until
 * mkdir succeeds: runs started in the same second (each rank's `gputap run` under torchrun) each
 * get a folder of their own.  0 and `out` set, or -1 with errno. */
int gt_run_default_dir(const char *parent, time_t t, char *out, size_t len);
/* -o's placeholders (nsys's): %q{NAME} the environment variable NAME, %h the host name, %p the
 * pid of gputap, %% a percent sign.  0, or -1 with err naming what is wrong (an unknown %x, an
 * unset NAME, a value with '/' or one that makes the path too long). */
int gt_run_expand_outdir(const char *spec, char *out, size_t len, char *err, size_t errlen);
/* Claim DIR for this run: create DIR/run.json empty, O_EXCL, so that of runs given one -o at once
 * exactly one gets it (the first run.json written replaces it).  0, or -1 with errno (EEXIST: DIR
 * holds a run, or another run has just claimed it). */
int gt_run_claim_dir(const char *dir);
/* Find libgputap.so: next to the gputap executable `exe`, then ../lib/,
 * then $GPUTAP_LIB.  0 and `out` set, or -1. */
int gt_run_find_lib(const char *exe, char *out, size_t len);
/* The process directories of DIR (trace/rundir.h), without opening a trace:
 * their totals come from the post-run pass.  Returns how many (malloc'd into *procs). */
int gt_run_scan_procs(const char *dir, struct gt_run_proc **procs);
/* ISO 8601 UTC with milliseconds, e.g. 2026-11-21T08:51:20.123Z */
void gt_iso8601(uint64_t ns, char *buf, size_t len);

#endif
