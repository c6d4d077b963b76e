/*
 * export/pcsamp.h — PC sampling after the run: what the library wrote per
 * process (<proc>/pc_samples.csv, pc_sampling_totals.csv, pcsamp/<crc>.cubin;
 * src/tap/pcsamp.h) read back, the SASS of each sampled PC filled in with
 * the toolkit's nvdisasm (never in the program's process), and the per-kernel
 * summary written: <proc>/pc_kernels.csv and <proc>/pc_sampling.json.
 *
 * Owns: the grouping of CUPTI's stall reasons under the names Nsight Compute
 * prints (its WarpStateStats section: "Long Scoreboard", "Barrier", ...), the
 * per-kernel summary (samples, share, reasons, groups, hottest PCs and source
 * lines), and the formats of pc_kernels.csv and pc_sampling.json
 * (docs/pc-sampling.md).
 *
 * Invariants: a kernel's share of a group is over its samples (the
 * "_not_issued" columns are a subset of their reason and are not added);
 * rows are kept in pc_samples.csv's order; a file that cannot be read is one
 * warning and the process is skipped.
 */
#ifndef GT_EXPORT_PCSAMP_H
#define GT_EXPORT_PCSAMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GT_PCS_FILE_SAMPLES "pc_samples.csv"
#define GT_PCS_FILE_TOTALS "pc_sampling_totals.csv"
#define GT_PCS_FILE_KERNELS "pc_kernels.csv"
#define GT_PCS_FILE_JSON "pc_sampling.json"
#define GT_PCS_FILE_RANGES "pc_ranges.csv"
#define GT_PCS_TOP 5 /* hottest PCs and lines kept per kernel */

struct gt_pcs_row {
	char *kernel, *file, *sass;
	uint32_t findex, line;
	uint64_t crc, off, samples, not_issued;
	uint64_t *cnt; /* per reason column */
};

struct gt_pcs_kv {
	char key[48];
	char val[48];
};

struct gt_pcs_kernel {
	char *name; /* as CUPTI names the function (mangled) */
	uint64_t samples, not_issued;
	uint64_t *reason; /* per reason column */
	uint64_t *group;  /* per group (gt_pcs_group_name) */
	size_t top_pc[GT_PCS_TOP]; /* row indexes, hottest first */
	size_t ntop_pc;
	struct {
		const char *file;
		uint32_t line;
		uint64_t samples;
	} top_line[GT_PCS_TOP];
	size_t ntop_line;
};

/* A kernel's samples in one NVTX range: its samples split over the ranges it was launched in, by its
 * GPU time in each (continuous sampling gives no launch id). */
struct gt_pcs_range_row {
	char *range;        /* "outer/inner", or "(none)" */
	const char *kernel; /* a gt_pcs_kernel's name */
	uint64_t launches, gpu_ns;
	double samples;
};

struct gt_pcs_data {
	char **reason;     /* column headers: CUPTI's names */
	int *group_of;     /* per reason: group index, -1 for "_not_issued" columns */
	size_t nreason;
	struct gt_pcs_row *row;
	size_t nrow, caprow;
	struct gt_pcs_kv *tot; /* pc_sampling_totals.csv */
	size_t ntot;
	struct gt_pcs_kernel *k; /* after gt_pcs_summarize: most samples first */
	size_t nk;
	uint64_t samples; /* sum over rows */
	struct gt_pcs_range_row *rr; /* gt_pcs_ranges, or pc_ranges.csv read back; by range, kernel */
	size_t nrr, caprr;
	uint64_t sass_found, sass_missing;
	int sass_over_budget; /* nvdisasm stopped early, some modules keep no SASS: 1 enough, 2 the budget */
	double sass_s, sass_budget_s; /* the SASS step's time; its budget (GPUTAP_PCSAMP_SASS_S) */
};

/* Nsight Compute's name for a CUPTI stall reason ("smsp__pcsamp_warps_issue_stalled_long_scoreboard"
 * -> "Long Scoreboard"); NULL for a "_not_issued" variant. */
const char *gt_pcs_group_label(const char *cupti_name);
size_t gt_pcs_ngroups(void);
const char *gt_pcs_group_name(size_t g);

/* Read <procdir>/pc_samples.csv and pc_sampling_totals.csv.  1 = no PC sampling there, 0 = read,
 * -1 = error (err names the file and line). */
int gt_pcs_load(const char *procdir, struct gt_pcs_data *d, char *err, size_t errlen);
void gt_pcs_free(struct gt_pcs_data *d);
/* A total by key, or NULL. */
const char *gt_pcs_total(const struct gt_pcs_data *d, const char *key);
/* Fill rows' sass from `nvdisasm` (a path; NULL: found in CUDA_HOME, the build's CUDA home, PATH)
 * run on <procdir>/pcsamp/<crc>.cubin.  Returns the rows filled; -1 when no nvdisasm. */
int gt_pcs_sass(struct gt_pcs_data *d, const char *procdir, const char *nvdisasm);
/* May the SASS step stop, elapsed_s into it with `left` of `total` samples in modules not done?
 * 2: past budget_s; 1: `soft` and past 5 s with under 2 % left; 0: go on. */
int gt_pcs_sass_enough(double elapsed_s, double budget_s, int soft, uint64_t left, uint64_t total);
/* GPUTAP_PCSAMP_SASS_S (seconds, 0 = no SASS; *soft = 0: that budget alone); unset or not a number
 * in 0..86400: 30 s, *soft = 1 (the early stop too). */
double gt_pcs_sass_budget(int *soft);
/* nvdisasm's -fun (--cuda-function-index) takes symbol indices: those of the functions `names`
 * (sorted, strcmp) in the symbol table of the ELF cubin img[0..n), as "i,j,..." (malloc'd, ascending);
 * NULL when img is no ELF64, is malformed, or holds none of them. */
char *gt_pcs_cubin_fun_index(const unsigned char *img, size_t n, const char *const *names, size_t nnames);
/* Parse nvdisasm's text output and fill the rows of module `crc` (for tests, and gt_pcs_sass). */
int gt_pcs_sass_parse(struct gt_pcs_data *d, uint64_t crc, FILE *disasm);
/* Per-kernel summary.  0 or -ENOMEM. */
int gt_pcs_summarize(struct gt_pcs_data *d);
int gt_pcs_write_samples(const struct gt_pcs_data *d, FILE *f);
int gt_pcs_write_kernels(const struct gt_pcs_data *d, FILE *f);
int gt_pcs_write_json(const struct gt_pcs_data *d, FILE *f);

/* Per NVTX range (after gt_pcs_summarize): one pass over the process's trace.  0, or -1 with err. */
int gt_pcs_ranges(struct gt_pcs_data *d, const char *trace, char *err, size_t errlen);
int gt_pcs_write_ranges(const struct gt_pcs_data *d, FILE *f);

/* Every <proc> of a run directory that has pc_samples.csv: SASS, pc_kernels.csv, pc_sampling.json.
 * `warn(arg, msg)` gets one message per problem (may be NULL).  Returns the processes done. */
int gt_pcs_postrun(const char *rundir, void (*warn)(void *arg, const char *msg), void *arg);

#endif
