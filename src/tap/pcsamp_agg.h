/*
 * tap/pcsamp_agg.h — PC sampling samples summed per PC, as CUPTI's PC
 * Sampling API hands them over (cupti_pcsampling.h, parsed format), and the
 * process's pc_samples.csv.  No CUPTI call, no global: unit-tested.
 *
 * Owns: the table of stall reasons (CUPTI's index -> name, one column each),
 * the table of sampled PCs keyed by (module CRC, function, PC offset), the
 * totals of every CUpti_PCSamplingData decoded (samples CUPTI counted, samples
 * the hardware dropped, samples of kernels CUPTI gives no PC for, buffers
 * that came back with the hardware buffer full), and writing them.
 *
 * Invariants:
 *  - a PC's `samples` is the sum of its reasons that are not "_not_issued"
 *    variants (CUPTI reports both a reason and the part of it in which no
 *    instruction issued; the latter is a subset, summed into `not_issued`);
 *  - a reason index CUPTI did not name (or beyond GT_PCS_MAX_INDEX) is
 *    counted under "unknown" and in `unknown_reason`;
 *  - adding never loses a sample silently: a PC that cannot be stored (no
 *    memory) is counted in `lost_samples`.
 */
#ifndef GT_TAP_PCSAMP_AGG_H
#define GT_TAP_PCSAMP_AGG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cupti_pcsampling.h>

#define GT_PCS_MAX_REASONS 128 /* columns; CUPTI names about 40 on Hopper */
#define GT_PCS_MAX_INDEX 4096  /* CUPTI's reason indexes looked up directly below this */

struct gt_pcs_pc {
	uint64_t crc, off;
	uint32_t fn;     /* function: index into agg->fn */
	uint32_t findex; /* CUPTI's functionIndex within the module */
	uint64_t samples, not_issued;
	uint64_t *cnt; /* per reason column (agg->nreason) */
	uint32_t file; /* source: index+1 into agg->files, 0 = none */
	uint32_t line;
};

struct gt_pcs_agg {
	/* stall reasons, one column each; column 0 is "unknown" */
	uint32_t nreason;
	char *reason[GT_PCS_MAX_REASONS];
	uint16_t col_of[GT_PCS_MAX_INDEX]; /* CUPTI index -> column+1, 0 = not named */
	/* PCs */
	struct gt_pcs_pc *pc;
	size_t npc, cap;
	uint32_t *slot; /* open addressing: pc index+1 */
	size_t nslot;
	/* function names and source files */
	char **fn;
	size_t nfn, fncap;
	char **files;
	size_t nfiles, filecap;
	/* totals over every buffer decoded */
	uint64_t total;          /* CUpti_PCSamplingData.totalSamples (all kernels, dropped included) */
	uint64_t dropped;        /* droppedSamples: lost to hardware back-pressure */
	uint64_t nonuser;        /* nonUsrKernelsTotalSamples: kernels CUPTI gives no PC for */
	uint64_t hw_full;        /* buffers that came back with hardwareBufferFull set */
	uint64_t buffers;        /* buffers decoded */
	uint64_t records;        /* PC records decoded */
	uint64_t unknown_reason; /* samples under a reason index CUPTI did not name */
	uint64_t lost_samples;   /* samples of PCs that could not be stored */
};

void gt_pcs_agg_init(struct gt_pcs_agg *a);
void gt_pcs_agg_free(struct gt_pcs_agg *a);
/* Name the reasons (cuptiPCSamplingGetStallReasons' two arrays).  Indexes already named keep
 * their column; a name already known under another index shares its column.  0 or -ENOMEM. */
int gt_pcs_agg_reasons(struct gt_pcs_agg *a, size_t n, const uint32_t *index, char *const *names);
/* Decode one buffer CUPTI filled: its totals and its `totalNumPcs` records.  0 or -ENOMEM (what
 * could not be stored is counted in lost_samples). */
int gt_pcs_agg_add(struct gt_pcs_agg *a, const CUpti_PCSamplingData *d);
/* Sum of `samples` over the PCs. */
uint64_t gt_pcs_agg_samples(const struct gt_pcs_agg *a);
/* Set a PC's source line (file: "dir/name" or "name"). 0 or -ENOMEM. */
int gt_pcs_agg_set_source(struct gt_pcs_agg *a, struct gt_pcs_pc *p, const char *file, uint32_t line);

/*
 * pc_samples.csv: one row per PC, most samples first:
 *   kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass,<reason>...
 * module_crc and pc_offset in hex (0x...), sass empty (filled after the run where the toolkit's
 * nvdisasm is found), then one column per stall reason that has a sample, CUPTI's name as header.
 * 0, or -1 when a write failed.
 */
int gt_pcs_agg_write_csv(const struct gt_pcs_agg *a, FILE *f);

/* pc_sampling_totals.csv: key,value rows (period, samples, dropped, ...), `extra` rows first
 * ("key,value\n" lines, may be NULL).  0 or -1. */
int gt_pcs_agg_write_totals(const struct gt_pcs_agg *a, const char *extra, FILE *f);

#endif
