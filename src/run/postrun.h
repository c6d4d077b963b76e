/*
 * run/postrun.h — what is made from a run directory once its command ended:
 * each <proc> trace converted (trace.json, the nsys CSVs), report.html, the
 * terminal summary.  `gputap run` uses it after the tools' tear-downs (the
 * library logs are collected by then); it reads each trace once.
 *
 * Owns: the order of that work and the single pass per trace: the report's
 * analysis asks for each trace (trace/visit.h's feed), and the feed converts
 * it in that same pass, adding it to the summary.  Traces the analysis did
 * not read (it failed, or no report is wanted) are converted on their own.
 * Every failure is one warning through `warn`; nothing stops the rest.
 */
#ifndef GT_RUN_POSTRUN_H
#define GT_RUN_POSTRUN_H

#include <stdint.h>
#include <stdio.h>

struct gt_postrun_proc {
	char name[64];
	char trace[4200]; /* the file read (maybe <trace>.partial) */
	char outdir[4300];
	int is_samplers; /* DIR/samplers: the samplers' counters, not a process */
	int converted; /* tried */
	int failed;    /* the conversion failed (warned) */
	int partial;
	uint32_t flags; /* the trace header's GT_FILE_* */
	uint64_t records, lost, cupti_dropped;
};

struct gt_postrun {
	const char *dir;     /* the run directory */
	const char *outdir;  /* where OUT/<proc>/ go; NULL: dir (gputap convert -o OUT) */
	unsigned formats;    /* GT_EXPORT_* made for each <proc> trace; 0: none */
	int samplers;        /* convert DIR/samplers/trace.gtr too (into OUT/samplers/; not in the summary) */
	int report;          /* write DIR/report.html */
	FILE *summary;       /* print the summary here; NULL: none */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
	/* out: one per <proc> with a trace, what its conversion saw (malloc'd) */
	struct gt_postrun_proc *procs;
	size_t nprocs;
	unsigned trace_opens; /* how many times a trace was opened (one per trace, except when the analysis
			       * has to find the iteration range first: docs/analyze.md) */
};

/* 0; -1 only when the run directory cannot be listed (warned). */
int gt_postrun(struct gt_postrun *p);
void gt_postrun_free(struct gt_postrun *p);

#endif
