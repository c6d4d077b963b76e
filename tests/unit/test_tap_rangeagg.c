/* Per-range results: paths, inclusive kernel and memory counts, launch links, JSON. */
#include <pthread.h>
#include <stdlib.h>

#include "tap/rangeagg.h"
#include "test.h"

static const char *names[] = {"", "train", "forward", "backward", "x\"y\\z\n", "caf\xc3\xa9", "bad\xff"};

static const char *name_of(uint32_t id, uint32_t *len, void *arg)
{
	(void)arg;
	if (id >= sizeof(names) / sizeof(names[0]))
		return NULL;
	*len = (uint32_t)strlen(names[id]);
	return names[id];
}

static struct gt_ra *new_ra(void)
{
	struct gt_ra *a = calloc(1, sizeof(*a));
	void *mem = calloc(1, gt_ra_mem_size());
	gt_ra_init(a, mem);
	return a;
}

static void free_ra(struct gt_ra *a)
{
	free(a->nodes);
	free(a);
}

static char *json(struct gt_ra *a, const uint32_t *open)
{
	struct gt_jbuf b = {0};
	gt_ra_json(a, &b, name_of, NULL, open);
	return b.p;
}

TEST(tap_rangeagg_paths_and_levels)
{
	struct gt_ra *a = new_ra();
	uint32_t train = gt_ra_node(a, 0, 1);
	uint32_t fwd = gt_ra_node(a, train, 2);
	uint32_t fwd_top = gt_ra_node(a, 0, 2);
	ASSERT(train && fwd && fwd_top);
	ASSERT(fwd != fwd_top);
	ASSERT_EQ_INT(gt_ra_node(a, train, 2), fwd); /* same path, same node */
	ASSERT_EQ_INT(gt_ra_parent(a, fwd), train);
	ASSERT_EQ_INT(gt_ra_name(a, fwd), 2);
	ASSERT_EQ_INT(a->nodes[fwd - 1].level, 1);
	gt_ra_close(a, fwd, 100, 0);
	gt_ra_close(a, fwd, 300, 0);
	gt_ra_close(a, train, 1000, 0);
	char *j = json(a, NULL);
	ASSERT_CONTAINS(j, "{\"path\":\"train\",\"name\":\"train\",\"level\":0,\"calls\":1");
	ASSERT_CONTAINS(j, "{\"path\":\"train/forward\",\"name\":\"forward\",\"level\":1,\"calls\":2,\"open\":0,"
			   "\"wall_ns\":400,\"wall_min_ns\":100,\"wall_max_ns\":300");
	/* never closed, not open: left out */
	ASSERT(strstr(j, "\"path\":\"forward\"") == NULL);
	/* creation order */
	ASSERT(strstr(j, "\"path\":\"train\"") < strstr(j, "\"path\":\"train/forward\""));
	free(j);
	free_ra(a);
}

TEST(tap_rangeagg_kernels_inclusive_and_links)
{
	struct gt_ra *a = new_ra();
	uint32_t train = gt_ra_node(a, 0, 1);
	uint32_t fwd = gt_ra_node(a, train, 2);
	gt_ra_link(a, 10, fwd);
	gt_ra_link(a, 11, train);
	gt_ra_kernel(a, 10, 500);
	gt_ra_kernel(a, 10, 700); /* a graph launch: two kernels, one correlation id */
	gt_ra_kernel(a, 11, 100);
	gt_ra_kernel(a, 12, 100); /* launched outside ranges */
	/* a link overwritten by a launch GT_RA_LINKS later: the old kernel is lost, not misattributed */
	gt_ra_link(a, 13, fwd);
	gt_ra_link(a, 13 + GT_RA_LINKS, train);
	gt_ra_kernel(a, 13, 50);
	ASSERT_EQ_U64(a->nodes[fwd - 1].kernels, 2);
	ASSERT_EQ_U64(a->nodes[fwd - 1].gpu_ns, 1200);
	ASSERT_EQ_U64(a->nodes[fwd - 1].gpu_min_ns, 500);
	ASSERT_EQ_U64(a->nodes[fwd - 1].gpu_max_ns, 700);
	ASSERT_EQ_U64(a->nodes[train - 1].kernels, 3);
	ASSERT_EQ_U64(a->nodes[train - 1].gpu_ns, 1300);
	ASSERT_EQ_U64(a->kernels_total, 5);
	ASSERT_EQ_U64(a->kernels_in_ranges, 3);
	ASSERT_EQ_U64(a->lost_links, 1);
	free_ra(a);
}

TEST(tap_rangeagg_memory_and_peak)
{
	struct gt_ra *a = new_ra();
	uint32_t train = gt_ra_node(a, 0, 1);
	uint32_t fwd = gt_ra_node(a, train, 2);
	gt_ra_mem(a, fwd, 1, 4096);
	gt_ra_mem(a, fwd, 1, 8192);
	gt_ra_mem(a, train, 0, 4096);
	gt_ra_close(a, fwd, 10, 12288);
	gt_ra_close(a, fwd, 10, 4096); /* peak keeps the highest */
	gt_ra_close(a, train, 30, 20000);
	ASSERT_EQ_U64(a->nodes[fwd - 1].alloc_count, 2);
	ASSERT_EQ_U64(a->nodes[fwd - 1].alloc_bytes, 12288);
	ASSERT_EQ_U64(a->nodes[train - 1].alloc_count, 2);
	ASSERT_EQ_U64(a->nodes[train - 1].free_bytes, 4096);
	ASSERT_EQ_U64(a->nodes[fwd - 1].free_count, 0);
	char *j = json(a, NULL);
	ASSERT_CONTAINS(j, "\"alloc_count\":2,\"alloc_bytes\":12288,\"free_count\":0,\"free_bytes\":0,\"peak_bytes\":12288}");
	ASSERT_CONTAINS(j, "\"alloc_count\":2,\"alloc_bytes\":12288,\"free_count\":1,\"free_bytes\":4096,\"peak_bytes\":20000}");
	free(j);
	gt_ra_reset(a);
	ASSERT_EQ_U64(a->nodes[train - 1].alloc_count, 0);
	ASSERT_EQ_U64(a->nodes[train - 1].calls, 0);
	ASSERT_EQ_INT(gt_ra_node(a, train, 2), fwd); /* paths survive a reset */
	j = json(a, NULL);
	ASSERT_EQ_STR(j, "\"ranges\":[]");
	free(j);
	free_ra(a);
}

TEST(tap_rangeagg_open_and_escaping)
{
	struct gt_ra *a = new_ra();
	uint32_t q = gt_ra_node(a, 0, 4);
	uint32_t e = gt_ra_node(a, q, 5);
	uint32_t bad = gt_ra_node(a, 0, 6);
	gt_ra_close(a, e, 1, 0);
	gt_ra_close(a, bad, 1, 0);
	uint32_t *open = calloc(GT_RA_NODES, sizeof(uint32_t));
	open[q - 1] = 1;
	char *j = json(a, open);
	ASSERT_CONTAINS(j, "\"path\":\"x\\\"y\\\\z\\u000a\",\"name\":\"x\\\"y\\\\z\\u000a\",\"level\":0,\"calls\":0,\"open\":1");
	ASSERT_CONTAINS(j, "\"path\":\"x\\\"y\\\\z\\u000a/caf\xc3\xa9\",\"name\":\"caf\xc3\xa9\"");
	ASSERT_CONTAINS(j, "\"name\":\"bad\\ufffd\"");
	free(j);
	free(open);
	free_ra(a);
}

TEST(tap_rangeagg_table_full)
{
	struct gt_ra *a = new_ra();
	uint32_t last = 0;
	for (uint32_t i = 0; i < GT_RA_NODES; i++)
		last = gt_ra_node(a, 0, i + 1);
	ASSERT(last != 0);
	ASSERT_EQ_INT(gt_ra_node(a, 0, GT_RA_NODES + 5), 0);
	ASSERT_EQ_U64(a->lost_ranges, 1);
	ASSERT_EQ_INT(gt_ra_node(a, 0, 7), gt_ra_node(a, 0, 7)); /* known paths are still found */
	free_ra(a);
}

struct thr {
	struct gt_ra *a;
	uint32_t node;
};

static void *hammer(void *arg)
{
	struct thr *t = arg;
	for (int i = 0; i < 10000; i++) {
		uint32_t n = gt_ra_node(t->a, t->node, 2);
		gt_ra_close(t->a, n, 2, 0);
		gt_ra_mem(t->a, n, 1, 1);
	}
	return NULL;
}

TEST(tap_rangeagg_threads)
{
	struct gt_ra *a = new_ra();
	uint32_t train = gt_ra_node(a, 0, 1);
	pthread_t th[4];
	struct thr t = {a, train};
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, hammer, &t);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	uint32_t fwd = gt_ra_node(a, train, 2);
	ASSERT_EQ_U64(a->nodes[fwd - 1].calls, 40000);
	ASSERT_EQ_U64(a->nodes[fwd - 1].wall_ns, 80000);
	ASSERT_EQ_U64(a->nodes[train - 1].alloc_count, 40000);
	ASSERT_EQ_INT(atomic_load(&a->next_seq), 2);
	free_ra(a);
}

TEST(tap_rangeagg_memory_of_several_threads)
{
	struct gt_ra *a = new_ra();
	uint32_t train = gt_ra_node(a, 0, 1);
	uint32_t fwd = gt_ra_node(a, train, 2);
	uint32_t bwd = gt_ra_node(a, train, 3);
	uint32_t other = gt_ra_node(a, 0, 4);
	/* two threads inside train (forward, backward), one inside another top-level range */
	uint32_t open[] = {fwd, bwd, other, fwd};
	gt_ra_mem_set(a, open, 4, 1, 100);
	ASSERT_EQ_U64(a->nodes[train - 1].alloc_count, 1); /* the shared parent counts once */
	ASSERT_EQ_U64(a->nodes[train - 1].alloc_bytes, 100);
	ASSERT_EQ_U64(a->nodes[fwd - 1].alloc_count, 1);
	ASSERT_EQ_U64(a->nodes[bwd - 1].alloc_count, 1);
	ASSERT_EQ_U64(a->nodes[other - 1].alloc_bytes, 100);
	gt_ra_mem_set(a, open, 1, 0, 40);
	ASSERT_EQ_U64(a->nodes[train - 1].free_bytes, 40);
	ASSERT_EQ_U64(a->nodes[bwd - 1].free_count, 0);
	free_ra(a);
}

/* A launch on a thread with no open range counts in the ranges open on the other threads:
 * each node of the union of their paths once; kernels known only by count are not timed. */
TEST(tap_rangeagg_link_set_counts_union_once_and_untimed)
{
	struct gt_ra *a = new_ra();
	uint32_t step = gt_ra_node(a, 0, 1);
	uint32_t bwd = gt_ra_node(a, step, 2);
	uint32_t opt = gt_ra_node(a, step, 3);
	uint32_t load = gt_ra_node(a, 0, 4);
	uint32_t set[3] = {bwd, opt, load};
	gt_ra_link_set(a, 20, set, 3);
	gt_ra_kernel(a, 20, 400);
	ASSERT_EQ_U64(a->nodes[step - 1].kernels, 1);
	ASSERT_EQ_U64(a->nodes[step - 1].gpu_ns, 400);
	ASSERT_EQ_U64(a->nodes[bwd - 1].kernels, 1);
	ASSERT_EQ_U64(a->nodes[opt - 1].kernels, 1);
	ASSERT_EQ_U64(a->nodes[load - 1].kernels, 1);
	ASSERT_EQ_U64(a->kernels_in_ranges, 1);
	/* one range: a plain link */
	gt_ra_link_set(a, 21, &bwd, 1);
	gt_ra_kernel_untimed(a, 21);
	ASSERT_EQ_U64(a->nodes[bwd - 1].kernels, 2);
	ASSERT_EQ_U64(a->nodes[bwd - 1].timed, 1);
	ASSERT_EQ_U64(a->nodes[bwd - 1].gpu_ns, 400);
	ASSERT_EQ_U64(a->nodes[step - 1].kernels, 2);
	/* none: outside every range */
	gt_ra_link_set(a, 22, NULL, 0);
	gt_ra_kernel(a, 22, 10);
	ASSERT_EQ_U64(a->kernels_total, 3);
	ASSERT_EQ_U64(a->kernels_in_ranges, 2);
	free_ra(a);
}

TEST(tap_rangeagg_json_untimed_kernels_have_no_gpu_time)
{
	struct gt_ra *a = new_ra();
	uint32_t r = gt_ra_node(a, 0, 1);
	gt_ra_close(a, r, 1000, 0);
	gt_ra_link(a, 5, r);
	gt_ra_kernel_untimed(a, 5);
	struct gt_jbuf b = {0};
	gt_ra_json(a, &b, name_of, NULL, NULL);
	gt_jb_put(&b, "", 1);
	ASSERT(b.p && strstr(b.p, "\"kernels\":1,\"gpu_ns\":null,\"gpu_min_ns\":null,\"gpu_max_ns\":null,\"timed_kernels\":0"));
	free(b.p);
	free_ra(a);
}
