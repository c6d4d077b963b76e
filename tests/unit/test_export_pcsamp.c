/* PC sampling after the run (export/pcsamp.h): reading back, SASS, per kernel, per range, writers. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "export/pcsamp.h"
#include "../tap/fake_cubin.h"
#include "test.h"
#include "trace/trace_io.h"

#define LS "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
static const char samples_csv[] =
	"kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass," LS "," LS "_not_issued,"
	"smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_selected,"
	"smsp__pcsamp_warps_issue_stalled_someday\n"
	"_Z1av,0,0x000000000000feed,0x20,30,20,/s/a.cu,7,,28,20,0,2,0\n"
	"_Z1av,0,0x000000000000feed,0x30,12,0,/s/a.cu,7,,2,0,0,10,0\n"
	"_Z1av,0,0x000000000000feed,0x40,8,0,/s/a.cu,9,,0,0,0,0,8\n"
	"_Z1bv,1,0x000000000000feed,0x10,10,0,,,,0,0,10,0,0\n";

static const char *write_run(const char *dir)
{
	gt_test_write_file(dir, "pc_samples.csv", samples_csv, sizeof(samples_csv) - 1);
	const char tot[] = "key,value\nperiod_log2_cycles,17\ndropped_samples,4\n";
	gt_test_write_file(dir, "pc_sampling_totals.csv", tot, sizeof(tot) - 1);
	return dir;
}

TEST(export_pcsamp_groups_as_ncu)
{
	ASSERT_EQ_STR(gt_pcs_group_label(LS), "Long Scoreboard");
	ASSERT(gt_pcs_group_label(LS "_not_issued") == NULL);
	ASSERT_EQ_STR(gt_pcs_group_label("smsp__pcsamp_warps_issue_stalled_math_pipe_throttle"), "Math Pipe Throttle");
	ASSERT_EQ_STR(gt_pcs_group_label("smsp__pcsamp_warps_issue_stalled_no_instructions"), "No Instruction");
	ASSERT_EQ_STR(gt_pcs_group_label("smsp__pcsamp_warps_issue_stalled_someday"), "Other");
}

TEST(export_pcsamp_load_and_summarize)
{
	struct gt_pcs_data d;
	char err[512];
	ASSERT_EQ_INT(gt_pcs_load(write_run(gt_test_tmpdir()), &d, err, sizeof(err)), 0);
	ASSERT_EQ_U64(d.nrow, 4);
	ASSERT_EQ_U64(d.samples, 60);
	ASSERT_EQ_STR(gt_pcs_total(&d, "dropped_samples"), "4");
	ASSERT_EQ_INT(gt_pcs_summarize(&d), 0);
	ASSERT_EQ_U64(d.nk, 2);
	const struct gt_pcs_kernel *a = &d.k[0];
	ASSERT_EQ_STR(a->name, "_Z1av");
	ASSERT_EQ_U64(a->samples, 50);
	ASSERT_EQ_U64(a->not_issued, 20);
	size_t ls = 0, other = 0;
	for (size_t g = 0; g < gt_pcs_ngroups(); g++) {
		if (strcmp(gt_pcs_group_name(g), "Long Scoreboard") == 0)
			ls = g;
		if (strcmp(gt_pcs_group_name(g), "Other") == 0)
			other = g;
	}
	ASSERT_EQ_U64(a->group[ls], 30); /* the not-issued column is not added again */
	ASSERT_EQ_U64(a->group[other], 8);
	ASSERT_EQ_U64(a->ntop_pc, 3);
	ASSERT_EQ_U64(d.row[a->top_pc[0]].off, 0x20);
	ASSERT_EQ_U64(a->ntop_line, 2);
	ASSERT_EQ_INT(a->top_line[0].line, 7); /* two PCs of line 7: 42 samples */
	ASSERT_EQ_U64(a->top_line[0].samples, 42);
	ASSERT_EQ_U64(d.k[1].ntop_line, 0);
	gt_pcs_free(&d);
}

TEST(export_pcsamp_missing_and_bad)
{
	struct gt_pcs_data d;
	char err[512];
	ASSERT_EQ_INT(gt_pcs_load(gt_test_tmpdir(), &d, err, sizeof(err)), 1);
	const char bad[] = "kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass,x\n"
			   "_Z1av,0,0xfeed,0x20,lots,0,,,,1\n";
	gt_test_write_file(gt_test_tmpdir(), "pc_samples.csv", bad, sizeof(bad) - 1);
	ASSERT_EQ_INT(gt_pcs_load(gt_test_tmpdir(), &d, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "pc_samples.csv:2: a number field is not a number");
	const char short_row[] = "kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass,x\n_Z1av,0\n";
	gt_test_write_file(gt_test_tmpdir(), "pc_samples.csv", short_row, sizeof(short_row) - 1);
	ASSERT_EQ_INT(gt_pcs_load(gt_test_tmpdir(), &d, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "pc_samples.csv:2: 2 fields, the header has 10");
}

/* the SASS step: its hard budget, and (by default) an early stop once the modules left hold under 2 %
 * of the samples */
TEST(export_pcsamp_sass_stop)
{
	ASSERT_EQ_INT(gt_pcs_sass_enough(1.0, 30.0, 1, 0, 1000), 0);    /* under 5 s: go on, whatever is left */
	ASSERT_EQ_INT(gt_pcs_sass_enough(6.0, 30.0, 1, 19, 1000), 1);   /* 1.9 % left */
	ASSERT_EQ_INT(gt_pcs_sass_enough(6.0, 30.0, 1, 20, 1000), 0);   /* 2.0 % left */
	ASSERT_EQ_INT(gt_pcs_sass_enough(6.0, 30.0, 0, 19, 1000), 0);   /* a budget set: that alone */
	ASSERT_EQ_INT(gt_pcs_sass_enough(29.0, 30.0, 1, 500, 1000), 0); /* half left, within the budget */
	ASSERT_EQ_INT(gt_pcs_sass_enough(30.5, 30.0, 1, 500, 1000), 2); /* past it */
	ASSERT_EQ_INT(gt_pcs_sass_enough(30.5, 30.0, 0, 0, 1000), 2);
	ASSERT_EQ_INT(gt_pcs_sass_enough(6.0, 30.0, 1, 1, 50), 0);      /* a few samples: only when none left */
	ASSERT_EQ_INT(gt_pcs_sass_enough(6.0, 30.0, 1, 0, 50), 1);
	ASSERT_EQ_INT(gt_pcs_sass_enough(6.0, 30.0, 1, UINT64_MAX / 100, UINT64_MAX), 1); /* no overflow */
	int soft = -1;
	unsetenv("GPUTAP_PCSAMP_SASS_S");
	ASSERT(gt_pcs_sass_budget(&soft) == 30.0 && soft == 1);
	setenv("GPUTAP_PCSAMP_SASS_S", "0", 1);
	ASSERT(gt_pcs_sass_budget(&soft) == 0.0 && soft == 0);
	setenv("GPUTAP_PCSAMP_SASS_S", "120", 1);
	ASSERT(gt_pcs_sass_budget(&soft) == 120.0 && soft == 0);
	setenv("GPUTAP_PCSAMP_SASS_S", "-1", 1);
	ASSERT(gt_pcs_sass_budget(&soft) == 30.0 && soft == 1);
	setenv("GPUTAP_PCSAMP_SASS_S", "ten", 1);
	ASSERT(gt_pcs_sass_budget(&soft) == 30.0 && soft == 1);
	unsetenv("GPUTAP_PCSAMP_SASS_S");
}

/* nvdisasm's -fun takes symbol indices: the sampled functions' in the cubin's symbol table */
TEST(export_pcsamp_cubin_fun_index)
{
	unsigned char img[FAKE_CUBIN_MAX];
	size_t n = fake_cubin_build(img);
	const char *both[] = {"_Z5otherv", "_Z6kernelv"}, *one[] = {"_Z5otherv"}, *none[] = {"_Z4nonev"};
	const char *sect[] = {""}; /* index 1 is a section symbol, no function: never listed */
	char *s = gt_pcs_cubin_fun_index(img, n, both, 2);
	ASSERT(s != NULL);
	ASSERT_EQ_STR(s, "2,3");
	free(s);
	s = gt_pcs_cubin_fun_index(img, n, one, 1);
	ASSERT(s != NULL);
	ASSERT_EQ_STR(s, "3");
	free(s);
	ASSERT(gt_pcs_cubin_fun_index(img, n, none, 1) == NULL);
	ASSERT(gt_pcs_cubin_fun_index(img, n, sect, 1) == NULL);
	ASSERT(gt_pcs_cubin_fun_index(img, n, both, 0) == NULL);
	/* cut anywhere: no read past the image, and never an index that is not _Z6kernelv's or _Z5otherv's */
	for (size_t k = 0; k < n; k++) {
		unsigned char *cut = malloc(k ? k : 1);
		memcpy(cut, img, k);
		s = gt_pcs_cubin_fun_index(cut, k, both, 2);
		ASSERT(s == NULL || !strcmp(s, "2,3") || !strcmp(s, "2") || !strcmp(s, "3"));
		free(s);
		free(cut);
	}
	/* not ELF; a symbol table linked to a section that is no string table; a name not terminated */
	unsigned char bad[FAKE_CUBIN_MAX];
	memcpy(bad, img, n);
	bad[0] = 'X';
	ASSERT(gt_pcs_cubin_fun_index(bad, n, both, 2) == NULL);
	Elf64_Ehdr eh;
	memcpy(&eh, img, sizeof(eh));
	Elf64_Shdr sh;
	memcpy(bad, img, n);
	memcpy(&sh, bad + eh.e_shoff + 3 * sizeof(sh), sizeof(sh));
	sh.sh_link = 4; /* .comment */
	memcpy(bad + eh.e_shoff + 3 * sizeof(sh), &sh, sizeof(sh));
	ASSERT(gt_pcs_cubin_fun_index(bad, n, both, 2) == NULL);
	memcpy(bad, img, n);
	memcpy(&sh, bad + eh.e_shoff + 2 * sizeof(sh), sizeof(sh));
	sh.sh_size = 5; /* .strtab cut inside "_Z6kernelv" */
	memcpy(bad + eh.e_shoff + 2 * sizeof(sh), &sh, sizeof(sh));
	ASSERT(gt_pcs_cubin_fun_index(bad, n, both, 2) == NULL);
}

TEST(export_pcsamp_sass_parse)
{
	struct gt_pcs_data d;
	char err[512];
	ASSERT_EQ_INT(gt_pcs_load(write_run(gt_test_tmpdir()), &d, err, sizeof(err)), 0);
	static char dis[] = "\t.section\t.text._Z1bv,\"ax\",@progbits\n"
				  "        /*0010*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n"
				  "\t.section\t.text._Z1av,\"ax\",@progbits\n"
				  ".text._Z1av:\n"
				  "        /*0010*/                   NOP ;\n"
				  "        /*0020*/                   LDG.E R2, desc[UR4][R2.64] ;   /* 0x0000000402027981 */\n"
				  "        /*0030*/               @!P0 BRA `(.L_x_1) ;\n"
				  "        /*0040*/                   EXIT ;\n"
				  "\t.section\t.debug_frame,\"\",@progbits\n"
				  "        /*0020*/ \t.byte\t0xff, 0xff\n";
	FILE *f = fmemopen(dis, sizeof(dis) - 1, "r");
	ASSERT_EQ_INT(gt_pcs_sass_parse(&d, 0xfeed, f), 4);
	fclose(f);
	ASSERT_EQ_STR(d.row[0].sass, "LDG.E R2, desc[UR4][R2.64]");
	ASSERT_EQ_STR(d.row[1].sass, "@!P0 BRA `(.L_x_1)");
	ASSERT_EQ_STR(d.row[2].sass, "EXIT");
	ASSERT_EQ_STR(d.row[3].sass, "BAR.SYNC.DEFER_BLOCKING 0x0");
	/* another module's disassembly fills nothing */
	f = fmemopen(dis, sizeof(dis) - 1, "r");
	ASSERT_EQ_INT(gt_pcs_sass_parse(&d, 0xbeef, f), 0);
	fclose(f);
	/* written back: quoted where a comma is */
	char *text = NULL;
	size_t len = 0;
	f = open_memstream(&text, &len);
	ASSERT_EQ_INT(gt_pcs_write_samples(&d, f), 0);
	fclose(f);
	ASSERT_CONTAINS(text, "\n_Z1av,0,0x000000000000feed,0x20,30,20,/s/a.cu,7,\"LDG.E R2, desc[UR4][R2.64]\",28,20,0,2,0\n");
	free(text);
	gt_pcs_free(&d);
}

TEST(export_pcsamp_kernels_csv_and_json)
{
	struct gt_pcs_data d;
	char err[512];
	ASSERT_EQ_INT(gt_pcs_load(write_run(gt_test_tmpdir()), &d, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_pcs_summarize(&d), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ASSERT_EQ_INT(gt_pcs_write_kernels(&d, f), 0);
	fclose(f);
	ASSERT_CONTAINS(text, "kernel,function,samples,share,not_issued,top_stall,top_stall_share,hottest_pc_offset,hottest_sass,"
			      "hottest_file,hottest_line,Long Scoreboard,Barrier,Selected,Other\n");
	ASSERT_CONTAINS(text, ",_Z1av,50,0.8333,20,Long Scoreboard,0.6000,0x20,,/s/a.cu,7,30,0,12,8\n");
	ASSERT_CONTAINS(text, ",_Z1bv,10,0.1667,0,Barrier,1.0000,0x10,,,,0,10,0,0\n");
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	ASSERT_EQ_INT(gt_pcs_write_json(&d, f), 0);
	fclose(f);
	ASSERT_CONTAINS(text, "\"samples\":60,\"totals\":{\"period_log2_cycles\":17,\"dropped_samples\":4}");
	ASSERT_CONTAINS(text, "\"function\":\"_Z1av\",\"samples\":50,\"share\":0.833333,\"not_issued\":20,"
			      "\"groups\":{\"Long Scoreboard\":30,\"Selected\":12,\"Other\":8}");
	ASSERT_CONTAINS(text, "\"top_lines\":[{\"file\":\"/s/a.cu\",\"line\":7,\"samples\":42},{\"file\":\"/s/a.cu\",\"line\":9,"
			      "\"samples\":8}]");
	ASSERT_CONTAINS(text, "{\"name\":\"" LS "_not_issued\",\"group\":null}");
	free(text);
	gt_pcs_free(&d);
}

/* A trace: thread 7 opens step [0, 1000] with fwd [100, 400] and bwd [500, 900] in it; four launches. */
static void write_trace(const char *path)
{
	struct gt_trace_writer w;
	gt_tw_open(&w, path, "pid1", "h", 1, 1, 0);
	const char *s[] = {"", "step", "fwd", "bwd", "_Z1av", "_Z1bv", "cuLaunchKernel"};
	for (uint32_t i = 1; i < 7; i++)
		gt_tw_string(&w, i, s[i], strlen(s[i]));
	struct gt_rec_range g;
	memset(&g, 0, sizeof(g));
	g.h.type = GT_REC_RANGE;
	g.h.size = sizeof(g);
	g.h.tid = 7;
	g.kind = GT_RANGE_PUSHPOP;
	const uint64_t rg[3][5] = {{2, 100, 400, 11, 10}, {3, 500, 900, 12, 10}, {1, 0, 1000, 10, 0}};
	for (int i = 0; i < 3; i++) {
		g.name_id = (uint32_t)rg[i][0];
		g.start_ns = rg[i][1];
		g.end_ns = rg[i][2];
		g.range_id = rg[i][3];
		g.parent_id = rg[i][4];
		g.level = rg[i][4] ? 1 : 0;
		gt_tw_write(&w, &g, sizeof(g), 1);
	}
	/* corr, tid, launch time, kernel name, GPU ns */
	const uint64_t ln[5][5] = {{1, 7, 150, 4, 100}, {2, 7, 600, 4, 300}, {3, 8, 200, 4, 100}, {4, 7, 950, 5, 50},
				   {5, 7, 650, 4, 100}};
	for (int i = 0; i < 5; i++) {
		struct gt_rec_api a;
		memset(&a, 0, sizeof(a));
		a.h.type = GT_REC_API;
		a.h.size = sizeof(a);
		a.h.tid = (uint32_t)ln[i][1];
		a.name_id = 6;
		a.start_ns = ln[i][2];
		a.end_ns = ln[i][2] + 5;
		a.corr_id = ln[i][0];
		gt_tw_write(&w, &a, sizeof(a), 1);
		struct gt_rec_kernel k;
		memset(&k, 0, sizeof(k));
		k.h.type = GT_REC_KERNEL;
		k.h.size = sizeof(k);
		k.name_id = (uint32_t)ln[i][3];
		k.corr_id = ln[i][0];
		k.start_ns = 2000;
		k.end_ns = 2000 + ln[i][4];
		gt_tw_write(&w, &k, sizeof(k), 1);
	}
	struct gt_rec_kernel k; /* a kernel whose launch was not recorded */
	memset(&k, 0, sizeof(k));
	k.h.type = GT_REC_KERNEL;
	k.h.size = sizeof(k);
	k.name_id = 4;
	k.corr_id = 99;
	k.start_ns = 2500;
	k.end_ns = 2600;
	gt_tw_write(&w, &k, sizeof(k), 1);
	gt_tw_close(&w, 3000, 0, 0, 0);
}

TEST(export_pcsamp_ranges)
{
	char trace[4200];
	snprintf(trace, sizeof(trace), "%s/trace.gtr", gt_test_tmpdir());
	write_trace(trace);
	struct gt_pcs_data d;
	char err[512];
	ASSERT_EQ_INT(gt_pcs_load(write_run(gt_test_tmpdir()), &d, err, sizeof(err)), 0);
	ASSERT_EQ_INT(gt_pcs_summarize(&d), 0);
	ASSERT_EQ_INT(gt_pcs_ranges(&d, trace, err, sizeof(err)), 0);
	/* _Z1av: 700 ns, 50 samples: 100 ns of a launch not recorded, step/bwd 400 ns (two launches), step/fwd 100 ns, and 100 ns launched by
	 * thread 8 (no range of its own) while step/fwd was open on thread 7; _Z1bv in step */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ASSERT_EQ_INT(gt_pcs_write_ranges(&d, f), 0);
	fclose(f);
	ASSERT_EQ_STR(text, "range,kernel,launches,gpu_time_ns,samples\n"
			    "(none),_Z1av,1,100,7.1\n"
			    "step,_Z1bv,1,50,10.0\n"
			    "step/bwd,_Z1av,2,400,28.6\n"
			    "step/fwd,_Z1av,1,100,7.1\n"
			    "step/fwd (other thread),_Z1av,1,100,7.1\n");
	free(text);
	/* read back with the samples: the tables' source */
	gt_test_write_file(gt_test_tmpdir(), "pc_ranges.csv", "range,kernel,launches,gpu_time_ns,samples\nstep,_Z1bv,1,50,10.0\n",
			   60);
	gt_pcs_free(&d);
	ASSERT_EQ_INT(gt_pcs_load(gt_test_tmpdir(), &d, err, sizeof(err)), 0);
	ASSERT_EQ_U64(d.nrr, 1);
	ASSERT_EQ_STR(d.rr[0].kernel, "_Z1bv");
	ASSERT_NEAR(d.rr[0].samples, 10.0, 1e-9);
	gt_pcs_free(&d);
}
