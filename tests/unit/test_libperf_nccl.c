/* libperf's NCCL replay without a GPU: the plan of each collective (buffers per
 * rank, the bytes bandwidth divides, the nccl-tests bus factor), the data type
 * and reduction numbers against the log parser, and the statuses of rows that
 * cannot run. */
#include <stdlib.h>
#include <string.h>

#include "libperf/libperf.h"
#include "liblog/libtrace.h"
#include "test.h"

static int plan_of(const char *config, int gpus, struct gt_nccl_plan *p, char *why, size_t whylen)
{
	struct gt_nccl_cfg c;
	char err[160];
	if (gt_nccl_cfg_parse(config, &c, err, sizeof(err)) < 0) {
		snprintf(why, whylen, "parse: %s", err);
		return -2;
	}
	why[0] = 0;
	return gt_nccl_plan_make(&c, gpus, p, why, whylen);
}

TEST(libperf_nccl_plan_per_collective)
{
	/* 4 ranks on 8 GPUs, 1 Mi elements of float32 (4 MiB): every collective's
	 * buffers and bandwidths as nccl-tests defines them */
	static const struct {
		const char *cfg;
		enum gt_nccl_coll coll;
		uint64_t send, recv, bytes;
		double factor;
	} want[] = {
		{"op=allreduce count=1048576 dtype=float32 redop=sum nranks=4", GT_NCCL_ALLREDUCE, 1 << 20, 1 << 20,
		 4u << 20, 1.5},
		{"op=allgather count=1048576 dtype=float32 nranks=4", GT_NCCL_ALLGATHER, 1 << 20, 4 << 20, 16u << 20,
		 0.75},
		{"op=reducescatter count=1048576 dtype=float32 redop=sum nranks=4", GT_NCCL_REDUCESCATTER, 4 << 20,
		 1 << 20, 16u << 20, 0.75},
		{"op=broadcast count=1048576 dtype=float32 root=0 nranks=4", GT_NCCL_BROADCAST, 1 << 20, 1 << 20,
		 4u << 20, 1.0},
		{"op=reduce count=1048576 dtype=float32 redop=max root=0 nranks=4", GT_NCCL_REDUCE, 1 << 20, 1 << 20,
		 4u << 20, 1.0},
		{"op=alltoall count=1048576 dtype=float32 nranks=4", GT_NCCL_ALLTOALL, 4 << 20, 4 << 20, 16u << 20,
		 0.75},
		{"op=gather count=1048576 dtype=float32 root=0 nranks=4", GT_NCCL_GATHER, 1 << 20, 4 << 20, 16u << 20,
		 0.75},
		{"op=scatter count=1048576 dtype=float32 root=0 nranks=4", GT_NCCL_SCATTER, 4 << 20, 1 << 20,
		 16u << 20, 0.75},
		{"op=send count=1048576 dtype=float32 peer=1 nranks=4", GT_NCCL_SENDRECV, 1 << 20, 1 << 20, 4u << 20,
		 1.0},
		{"op=recv count=1048576 dtype=float32 peer=3 nranks=4", GT_NCCL_SENDRECV, 1 << 20, 1 << 20, 4u << 20,
		 1.0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct gt_nccl_plan p;
		char why[200];
		int rc = plan_of(want[i].cfg, 8, &p, why, sizeof(why));
		if (rc != 0)
			GT_FAIL_AT("%s: %s", want[i].cfg, why);
		ASSERT_EQ_INT(p.coll, want[i].coll);
		ASSERT_EQ_INT(p.ranks, 4);
		ASSERT_EQ_INT(p.type_size, 4);
		ASSERT_EQ_INT(p.dtype, 7);
		ASSERT_EQ_U64(p.count, 1 << 20);
		ASSERT_EQ_U64(p.send_elems, want[i].send);
		ASSERT_EQ_U64(p.recv_elems, want[i].recv);
		ASSERT_EQ_U64(p.bytes, want[i].bytes);
		ASSERT_NEAR(p.bus_factor, want[i].factor, 1e-12);
	}
}

TEST(libperf_nccl_plan_reductions_and_notes)
{
	struct gt_nccl_plan p;
	char why[200];
	ASSERT_EQ_INT(plan_of("op=allreduce count=8 dtype=bfloat16 redop=avg nranks=2", 2, &p, why, sizeof(why)), 0);
	ASSERT_EQ_INT(p.redop, 4);
	ASSERT_EQ_U64(p.bytes, 16);
	ASSERT_NEAR(p.bus_factor, 1.0, 1e-12); /* 2(n-1)/n at n = 2 */
	ASSERT_EQ_STR(p.note, "");
	ASSERT_EQ_INT(plan_of("op=allgather count=8 dtype=int8 nranks=2", 2, &p, why, sizeof(why)), 0);
	ASSERT_EQ_INT(p.redop, -1); /* not a reducing collective */
	/* recorded over 8 ranks, 2 GPUs here: replayed over 2, the factor is of 2 ranks, the row says so */
	ASSERT_EQ_INT(plan_of("op=allreduce count=1000 dtype=float64 redop=prod nranks=8", 2, &p, why, sizeof(why)),
		      0);
	ASSERT_EQ_INT(p.ranks, 2);
	ASSERT_EQ_INT(p.redop, 1);
	ASSERT_EQ_U64(p.bytes, 8000);
	ASSERT_NEAR(p.bus_factor, 1.0, 1e-12);
	ASSERT_EQ_STR(p.note, "2 of 8 ranks");
	/* a root beyond the GPUs used is wrapped, and said */
	ASSERT_EQ_INT(plan_of("op=broadcast count=10 dtype=float16 root=5 nranks=8", 2, &p, why, sizeof(why)), 0);
	ASSERT_EQ_INT(p.root, 1);
	ASSERT_EQ_STR(p.note, "2 of 8 ranks, root 5 as 1");
	ASSERT_EQ_INT(plan_of("op=reduce count=10 dtype=float16 redop=min root=3 nranks=4", 4, &p, why, sizeof(why)),
		      0);
	ASSERT_EQ_INT(p.root, 3);
	ASSERT_EQ_INT(p.redop, 3);
	ASSERT_EQ_STR(p.note, "");
	ASSERT_EQ_INT(plan_of("op=send count=10 dtype=float16 peer=1 nranks=2", 4, &p, why, sizeof(why)), 0);
	ASSERT_EQ_STR(p.note, "as a ring of send/recv");
	/* three of the eight recorded ranks: (n-1)/n of 3 */
	ASSERT_EQ_INT(plan_of("op=reducescatter count=6 dtype=uint64 redop=sum nranks=8", 3, &p, why, sizeof(why)),
		      0);
	ASSERT_EQ_U64(p.send_elems, 18);
	ASSERT_EQ_U64(p.bytes, 18 * 8);
	ASSERT_NEAR(p.bus_factor, 2.0 / 3.0, 1e-12);
}

TEST(libperf_nccl_plan_skips)
{
	static const struct {
		const char *cfg;
		int gpus;
		const char *why;
	} want[] = {
		{"op=allreduce count=1024 dtype=float32 redop=sum nranks=2", 1, "skipped: single GPU"},
		{"op=allreduce count=1024 dtype=float32 redop=sum nranks=2", 0, "skipped: single GPU"},
		{"op=allreduce count=1024 dtype=float32 redop=sum nranks=1", 8, "skipped: recorded over one rank"},
		{"op=allreduce count=1024 dtype=type13 redop=sum nranks=2", 2, "type13 is unknown"},
		{"op=allreduce count=1024 dtype=float32 redop=op7 nranks=2", 2, "op7 (user-defined)"},
		{"op=allreducecoalesced count=1024 dtype=float32 nranks=2", 2, "allreducecoalesced is not replayed"},
		{"op=allreduce count=0 dtype=float32 redop=sum nranks=2", 2, "skipped: count 0"},
		/* 2 Gi floats: 8 GiB to send and 8 to receive */
		{"op=allreduce count=2147483648 dtype=float32 redop=sum nranks=2", 2, "more than 8 GiB per GPU"},
		{"op=allgather count=1073741824 dtype=float32 nranks=8", 8, "more than 8 GiB per GPU"},
		{"op=allgather count=4611686018427387904 dtype=int8 nranks=8", 8, "count too large"},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct gt_nccl_plan p;
		char why[200];
		ASSERT_EQ_INT(plan_of(want[i].cfg, want[i].gpus, &p, why, sizeof(why)), -1);
		ASSERT_CONTAINS(why, want[i].why);
	}
	/* just under the limit still runs: 1 Gi floats each way = 8 GiB */
	struct gt_nccl_plan p;
	char why[200];
	ASSERT_EQ_INT(plan_of("op=allreduce count=1073741824 dtype=float32 redop=sum nranks=2", 2, &p, why,
			      sizeof(why)),
		      0);
}

/* The numbers the replay passes to NCCL are the ones the log parser read:
 * a log line with datatype N and op M gives a config whose plan has N and M. */
TEST(libperf_nccl_numbers_match_the_log)
{
	for (int t = 0; t < 12; t++)
		for (int op = 0; op < 5; op++) {
			char line[400];
			snprintf(line, sizeof(line),
				 "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 64 datatype "
				 "%d op %d root 0 comm 0x3 [nranks=2] stream 0x4\n",
				 t, op);
			struct gt_libcalls *tab = gt_libcalls_new();
			struct gt_liblog_stats st;
			ASSERT(tab);
			ASSERT_EQ_INT(gt_liblog_parse_buf("x.log", line, strlen(line), tab, &st), 0);
			const struct gt_libcall_row *rows;
			ASSERT_EQ_INT(gt_libcalls_rows(tab, &rows), 1);
			struct gt_nccl_plan p;
			char why[200];
			int rc = plan_of(rows[0].config, 2, &p, why, sizeof(why));
			if (rc != 0)
				GT_FAIL_AT("%s: %s", rows[0].config, why);
			ASSERT_EQ_INT(p.dtype, t);
			ASSERT_EQ_INT(p.redop, op);
			struct gt_nccl_cfg c;
			ASSERT_EQ_INT(gt_nccl_cfg_parse(rows[0].config, &c, why, sizeof(why)), 0);
			ASSERT_EQ_INT(gt_nccl_dtype_num(c.dtype), t);
			ASSERT_EQ_INT(p.type_size, gt_nccl_type_size(c.dtype));
			ASSERT_EQ_U64(p.bytes, 64u * (uint64_t)p.type_size);
			gt_libcalls_free(tab);
		}
	/* sizes as nccl.h's types */
	ASSERT_EQ_INT(gt_nccl_type_size("bfloat16"), 2);
	ASSERT_EQ_INT(gt_nccl_type_size("float8e5m2"), 1);
	ASSERT_EQ_INT(gt_nccl_type_size("uint64"), 8);
	ASSERT_EQ_INT(gt_nccl_dtype_num("float"), -1);
}

/* A CUDA table of NULL entries: a row that cannot run must never reach the
 * GPU (a call would crash this test). */
static struct gt_cu_api trap_cu(void)
{
	struct gt_cu_api cu;
	memset(&cu, 0, sizeof(cu));
	return cu;
}

TEST(libperf_nccl_replay_statuses_without_gpu)
{
	struct gt_cu_api cu = trap_cu();
	struct gt_nccl_result res;
	struct gt_nccl_replayer *one = gt_nccl_replayer_new(&cu, 1, 5, 1);
	ASSERT(one);
	gt_nccl_replay(one, "op=allreduce count=64 dtype=float32 redop=sum nranks=2", &res);
	ASSERT_EQ_STR(res.status, "skipped: single GPU");
	ASSERT(res.us < 0 && res.busbw < 0 && res.ranks == 0);
	gt_nccl_replayer_free(one);

	unsetenv("NCCL_NVLS_ENABLE");
	setenv("GPUTAP_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
	struct gt_nccl_replayer *two = gt_nccl_replayer_new(&cu, 2, 5, 1);
	ASSERT(two);
	gt_nccl_replay(two, "op=allreduce count=oops nranks=2", &res);
	ASSERT_CONTAINS(res.status, "error: bad value 'oops'");
	gt_nccl_replay(two, "op=allgather count=64 dtype=float32 nranks=2", &res);
	ASSERT_CONTAINS(res.status, "skipped: NCCL (libnccl.so.2) not found");
	ASSERT_CONTAINS(res.status, "GPUTAP_NCCL_LIB=/nonexistent/libnccl.so.2 cannot be loaded");
	ASSERT_EQ_U64(res.bytes, 512); /* the plan was made: the row still says the size */
	ASSERT_EQ_STR(gt_nccl_replayer_version(two), "");
	/* NVLink multicast turned off before NCCL could read it */
	ASSERT_EQ_STR(getenv("NCCL_NVLS_ENABLE"), "0");
	gt_nccl_replayer_free(two);
}

TEST(libperf_nccl_nvls_setting_of_the_user_kept)
{
	struct gt_cu_api cu = trap_cu();
	struct gt_nccl_result res;
	setenv("NCCL_NVLS_ENABLE", "1", 1);
	setenv("GPUTAP_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
	struct gt_nccl_replayer *r = gt_nccl_replayer_new(&cu, 4, 3, 0);
	ASSERT(r);
	gt_nccl_replay(r, "op=reducescatter count=64 dtype=float16 redop=sum nranks=4", &res);
	ASSERT_CONTAINS(res.status, "not found");
	ASSERT_EQ_STR(getenv("NCCL_NVLS_ENABLE"), "1");
	gt_nccl_replayer_free(r);
}

TEST(libperf_header_keeps_columns_adds_at_end)
{
	ASSERT(strncmp(gt_libperf_header,
		       "library,config,calls,status,recorded_algo,timed_as,recorded_us,recorded_tflops,best_algo,"
		       "best_us,best_tflops,gain_pct,saving_us_total,algos_tried,device,",
		       strlen("library,config,calls,status,recorded_algo,timed_as,recorded_us,recorded_tflops,"
			      "best_algo,best_us,best_tflops,gain_pct,saving_us_total,algos_tried,device,")) == 0);
	ASSERT_CONTAINS(gt_libperf_header, ",device,bytes,algbw_gbps,busbw_gbps,gpus");
}
