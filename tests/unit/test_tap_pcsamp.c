/* PC sampling samples per PC (tap/pcsamp_agg.h): decoding CUPTI's buffers, sums, pc_samples.csv. */
#include <stdlib.h>

#include "tap/pcsamp_agg.h"
#include "test.h"

static char *names[] = {
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
	"smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
	"smsp__pcsamp_warps_issue_stalled_barrier",
};
static const uint32_t idx[] = {14, 15, 2};

/* One buffer as CUPTI fills it: `n` PCs of function fn at offsets 0x10, 0x20, ... */
struct buf {
	CUpti_PCSamplingData d;
	CUpti_PCSamplingPCData pc[8];
	CUpti_PCSamplingStallReason sr[8][4];
};

static void fill(struct buf *b, char *fn, size_t n, uint32_t ls, uint32_t ni, uint32_t bar)
{
	memset(b, 0, sizeof(*b));
	b->d.size = sizeof(b->d);
	b->d.collectNumPcs = 8;
	b->d.totalNumPcs = n;
	b->d.pPcData = b->pc;
	for (size_t i = 0; i < n; i++) {
		CUpti_PCSamplingPCData *p = &b->pc[i];
		p->size = sizeof(*p);
		p->cubinCrc = 0xfeed;
		p->pcOffset = 0x10 * (i + 1);
		p->functionIndex = 3;
		p->functionName = fn;
		p->stallReason = b->sr[i];
		size_t k = 0;
		b->sr[i][k++] = (CUpti_PCSamplingStallReason){14, ls};
		if (ni)
			b->sr[i][k++] = (CUpti_PCSamplingStallReason){15, ni};
		if (bar)
			b->sr[i][k++] = (CUpti_PCSamplingStallReason){2, bar};
		p->stallReasonCount = k;
	}
}

TEST(tap_pcsamp_agg_decodes_and_sums)
{
	struct gt_pcs_agg a;
	gt_pcs_agg_init(&a);
	ASSERT_EQ_INT(gt_pcs_agg_reasons(&a, 3, idx, names), 0);
	ASSERT_EQ_INT(a.nreason, 4); /* "unknown" first */
	struct buf b;
	char fn[] = "_Z1kv";
	fill(&b, fn, 3, 5, 2, 1);
	b.d.totalSamples = 20;
	b.d.droppedSamples = 4;
	b.d.nonUsrKernelsTotalSamples = 2;
	ASSERT_EQ_INT(gt_pcs_agg_add(&a, &b.d), 0);
	fill(&b, fn, 2, 1, 0, 0); /* the same two PCs again: summed, not new rows */
	b.d.hardwareBufferFull = 1;
	ASSERT_EQ_INT(gt_pcs_agg_add(&a, &b.d), 0);
	ASSERT_EQ_U64(a.npc, 3);
	ASSERT_EQ_U64(gt_pcs_agg_samples(&a), 3 * 6 + 2 * 1); /* not-issued parts are not added */
	ASSERT_EQ_U64(a.pc[0].samples, 7);
	ASSERT_EQ_U64(a.pc[0].not_issued, 2);
	ASSERT_EQ_U64(a.total, 20);
	ASSERT_EQ_U64(a.dropped, 4);
	ASSERT_EQ_U64(a.nonuser, 2);
	ASSERT_EQ_U64(a.hw_full, 1);
	ASSERT_EQ_U64(a.buffers, 2);
	ASSERT_EQ_U64(a.records, 5);
	gt_pcs_agg_free(&a);
}

TEST(tap_pcsamp_agg_unknown_reason_counted)
{
	struct gt_pcs_agg a;
	gt_pcs_agg_init(&a);
	ASSERT_EQ_INT(gt_pcs_agg_reasons(&a, 1, idx, names), 0); /* only index 14 named */
	struct buf b;
	char fn[] = "_Z1kv";
	fill(&b, fn, 1, 3, 0, 4); /* index 2 is not named */
	ASSERT_EQ_INT(gt_pcs_agg_add(&a, &b.d), 0);
	ASSERT_EQ_U64(a.unknown_reason, 4);
	ASSERT_EQ_U64(a.pc[0].samples, 7);
	ASSERT_EQ_U64(a.pc[0].cnt[0], 4);
	/* a reason named later (a second context) gets a column; earlier PCs widen with it */
	ASSERT_EQ_INT(gt_pcs_agg_reasons(&a, 3, idx, names), 0);
	ASSERT_EQ_INT(a.nreason, 4);
	fill(&b, fn, 1, 0, 0, 2);
	ASSERT_EQ_INT(gt_pcs_agg_add(&a, &b.d), 0);
	ASSERT_EQ_U64(a.pc[0].cnt[3], 2);
	ASSERT_EQ_U64(a.pc[0].samples, 9);
	gt_pcs_agg_free(&a);
}

TEST(tap_pcsamp_agg_csv)
{
	struct gt_pcs_agg a;
	gt_pcs_agg_init(&a);
	gt_pcs_agg_reasons(&a, 3, idx, names);
	struct buf b;
	char f1[] = "_Z1kv", f2[] = "k,2";
	fill(&b, f1, 2, 5, 2, 0);
	gt_pcs_agg_add(&a, &b.d);
	fill(&b, f2, 1, 0, 0, 9);
	b.pc[0].functionIndex = 4; /* another function of the module */
	gt_pcs_agg_add(&a, &b.d);
	ASSERT_EQ_INT(gt_pcs_agg_set_source(&a, &a.pc[1], "/src/k.cu", 12), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ASSERT_EQ_INT(gt_pcs_agg_write_csv(&a, f), 0);
	fclose(f);
	/* hottest first; equal counts by name, then offset; only reasons that have a sample */
	ASSERT_EQ_STR(text, "kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass,"
			    "smsp__pcsamp_warps_issue_stalled_long_scoreboard,"
			    "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued,"
			    "smsp__pcsamp_warps_issue_stalled_barrier\n"
			    "\"k,2\",4,0x000000000000feed,0x10,9,0,,,,0,0,9\n"
			    "_Z1kv,3,0x000000000000feed,0x10,5,2,,,,5,2,0\n"
			    "_Z1kv,3,0x000000000000feed,0x20,5,2,/src/k.cu,12,,5,2,0\n");
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	ASSERT_EQ_INT(gt_pcs_agg_write_totals(&a, "period_log2_cycles,17\n", f), 0);
	fclose(f);
	ASSERT_CONTAINS(text, "key,value\nperiod_log2_cycles,17\nsamples,19\n");
	ASSERT_CONTAINS(text, "\npcs,3\n");
	free(text);
	gt_pcs_agg_free(&a);
}
