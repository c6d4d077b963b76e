/* trace.json parsed back with yajl_tree: events, tracks, flows, counters, metadata. */
#include <stdlib.h>
#include <yajl/yajl_tree.h>

#include "trace/trace_io.h"
#include "export/export.h"
#include "test.h"

const char *gt_test_export_sample(const char *dir, int close_it);
void gt_test_export_string(struct gt_trace_writer *w, uint32_t id, const char *s);
void gt_test_export_kernel(struct gt_trace_writer *w, uint32_t name, uint32_t stream, uint64_t s, uint64_t e,
			uint64_t corr);

#define GPU0_PID ((1u << 30) | 4242u) /* GPU 0 of pid 4242, see json.c */

static yajl_val load_json(const char *trace, const char *dir)
{
	char err[512];
	if (gt_export_write_all(trace, dir, GT_EXPORT_JSON, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	char p[4300];
	snprintf(p, sizeof(p), "%s/trace.json", dir);
	char *s = gt_test_read_file(p, NULL);
	if (!s)
		return NULL;
	char perr[512];
	yajl_val v = yajl_tree_parse(s, perr, sizeof(perr));
	if (!v)
		fprintf(stderr, "invalid JSON: %s\n", perr);
	free(s);
	return v;
}

static yajl_val get(yajl_val o, const char *k)
{
	const char *path[] = {k, NULL};
	return yajl_tree_get(o, path, yajl_t_any);
}

static const char *sget(yajl_val o, const char *k)
{
	yajl_val v = get(o, k);
	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

static double nget(yajl_val o, const char *k)
{
	yajl_val v = get(o, k);
	return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : -1e300;
}

static int is(yajl_val e, const char *ph, const char *name)
{
	const char *p = sget(e, "ph"), *n = sget(e, "name");
	return p && strcmp(p, ph) == 0 && (!name || (n && strcmp(n, name) == 0));
}

/* the first event with this phase and name, and args.<key> == val if key */
static yajl_val find(yajl_val evs, const char *ph, const char *name, const char *key, double val)
{
	for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(evs)->values[i];
		if (!is(e, ph, name))
			continue;
		if (!key)
			return e;
		yajl_val a = get(e, "args");
		if (a && nget(a, key) == val)
			return e;
	}
	return NULL;
}

static size_t count(yajl_val evs, const char *ph, const char *cat)
{
	size_t n = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(evs)->values[i];
		const char *c = sget(e, "cat");
		if (is(e, ph, NULL) && (!cat || (c && strcmp(c, cat) == 0)))
			n++;
	}
	return n;
}

TEST(export_json_events_tracks_flows)
{
	const char *d = gt_test_tmpdir();
	yajl_val root = load_json(gt_test_export_sample(d, 1), d);
	ASSERT(root);
	yajl_val evs = get(root, "traceEvents");
	ASSERT(evs && YAJL_IS_ARRAY(evs));
	ASSERT_EQ_INT(count(evs, "X", "cuda_api"), 12);
	ASSERT_EQ_INT(count(evs, "X", "kernel"), 5);
	ASSERT_EQ_INT(count(evs, "X", "memcpy"), 4);
	ASSERT_EQ_INT(count(evs, "X", "memset"), 1);
	ASSERT_EQ_INT(count(evs, "X", "nvtx"), 4); /* push/pop ranges */
	ASSERT_EQ_INT(count(evs, "b", "nvtx"), 1); /* the start/end range */
	ASSERT_EQ_INT(count(evs, "e", "nvtx"), 1);
	ASSERT_EQ_INT(count(evs, "i", "nvtx"), 1);
	ASSERT_EQ_INT(count(evs, "s", "flow"), 8);
	ASSERT_EQ_INT(count(evs, "f", "flow"), 8);

	/* a kernel on its stream's track, with its launch arguments */
	yajl_val k = find(evs, "X", "gemm<float, 128>(float const*, int)", "correlation", 1);
	ASSERT(k);
	ASSERT_EQ_U64(nget(k, "pid"), GPU0_PID);
	ASSERT_NEAR(nget(k, "tid"), 7, 0);
	ASSERT_NEAR(nget(k, "ts"), 20.0, 1e-9);
	ASSERT_NEAR(nget(k, "dur"), 10.0, 1e-9);
	yajl_val args = get(k, "args");
	const char *grid[] = {"args", "grid", NULL};
	yajl_val g = yajl_tree_get(k, grid, yajl_t_array);
	ASSERT(g && YAJL_GET_ARRAY(g)->len == 3);
	ASSERT_NEAR(YAJL_GET_DOUBLE(YAJL_GET_ARRAY(g)->values[0]), 128, 0);
	ASSERT_NEAR(YAJL_GET_DOUBLE(YAJL_GET_ARRAY(g)->values[1]), 2, 0);
	ASSERT_NEAR(nget(args, "registers_per_thread"), 64, 0);
	ASSERT_NEAR(nget(args, "dynamic_shared_memory_bytes"), 49152, 0);

	/* copies carry kind and bytes */
	yajl_val c = find(evs, "X", "[CUDA memcpy Host-to-Device]", "bytes", 1000000);
	ASSERT(c);
	ASSERT_EQ_STR(sget(get(c, "args"), "kind"), "Host-to-Device");
	ASSERT(find(evs, "X", "[CUDA memcpy Peer-to-Peer]", "dst_device", 1));
	ASSERT(find(evs, "X", "[CUDA memset]", "bytes", 4096));

	/* the flow of correlation 1: from the launch call to the kernel */
	yajl_val s = NULL, f = NULL;
	for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(evs)->values[i];
		if (nget(e, "id") != 1)
			continue;
		if (is(e, "s", NULL))
			s = e;
		if (is(e, "f", NULL))
			f = e;
	}
	ASSERT(s && f);
	ASSERT_NEAR(nget(s, "pid"), 4242, 0);
	ASSERT_NEAR(nget(s, "tid"), 100, 0);
	ASSERT_NEAR(nget(s, "ts"), 12.0, 1e-9);
	ASSERT_EQ_U64(nget(f, "pid"), GPU0_PID);
	ASSERT_NEAR(nget(f, "tid"), 7, 0);
	ASSERT_NEAR(nget(f, "ts"), 20.0, 1e-9);
	ASSERT_EQ_STR(sget(f, "bp"), "e");

	/* nesting: "forward" (id 2) lies inside "step" (id 1) on thread 100 */
	yajl_val step = find(evs, "X", "step", "range_id", 1), fwd = find(evs, "X", "forward", "range_id", 2);
	ASSERT(step && fwd);
	ASSERT_NEAR(nget(step, "tid"), 100, 0);
	ASSERT_NEAR(nget(fwd, "tid"), 100, 0);
	ASSERT(nget(fwd, "ts") >= nget(step, "ts"));
	ASSERT(nget(fwd, "ts") + nget(fwd, "dur") <= nget(step, "ts") + nget(step, "dur"));
	ASSERT_NEAR(nget(get(fwd, "args"), "parent_id"), 1, 0);
	ASSERT_NEAR(nget(get(fwd, "args"), "level"), 1, 0);

	/* track names */
	int stream7 = 0, thread100 = 0, gpu0 = 0, proc = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(evs)->values[i];
		const char *n = sget(get(e, "args"), "name");
		if (!n)
			continue;
		if (is(e, "M", "thread_name") && strcmp(n, "GPU 0 stream 7") == 0 && nget(e, "pid") == GPU0_PID &&
		    nget(e, "tid") == 7)
			stream7 = 1;
		if (is(e, "M", "thread_name") && strcmp(n, "thread-main (100)") == 0 && nget(e, "pid") == 4242)
			thread100 = 1;
		if (is(e, "M", "process_name") && strstr(n, "GPU 0: H100") && nget(e, "pid") == GPU0_PID)
			gpu0 = 1;
		if (is(e, "M", "process_name") && strstr(n, "rank0") == n && nget(e, "pid") == 4242)
			proc = 1;
	}
	ASSERT(stream7 && thread100 && gpu0 && proc);

	/* counters: power, and memory in use ending at 1 MiB after the 4 KiB free */
	ASSERT(find(evs, "C", "power_W", "value", 320.25));
	double last = -1;
	int nmem = 0;
	for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++) {
		yajl_val e = YAJL_GET_ARRAY(evs)->values[i];
		if (is(e, "C", "Device memory in use (bytes)")) {
			last = nget(get(e, "args"), "bytes");
			nmem++;
		}
	}
	ASSERT_EQ_INT(nmem, 3);
	ASSERT_NEAR(last, 1048576, 0);

	/* metadata */
	yajl_val od = get(root, "otherData");
	ASSERT(od);
	ASSERT_EQ_STR(sget(od, "proc"), "rank0");
	ASSERT(YAJL_IS_FALSE(get(od, "partial")));
	ASSERT_NEAR(nget(od, "ts_zero_epoch_ns"), 1e12, 0);
	ASSERT_NEAR(nget(od, "lost_records"), 2, 0);
	ASSERT_NEAR(nget(od, "cupti_dropped"), 3, 0);
	yajl_tree_free(root);
}

/* Names with quotes, backslashes, control bytes and invalid UTF-8 still give valid JSON. */
TEST(export_json_hostile_names)
{
	const char *d = gt_test_tmpdir();
	char path[4300];
	snprintf(path, sizeof(path), "%s/trace.gtr", d);
	struct gt_trace_writer w;
	ASSERT_EQ_INT(gt_tw_open(&w, path, "p\"1\\", "h\xc3\x28", 7, 1000, 0), 0);
	gt_test_export_string(&w, 1, "k\"q\\b\x01\xff\xc0\xafz<T, U>\xe2\x82\xac");
	gt_test_export_string(&w, 2, "");
	gt_test_export_kernel(&w, 1, 3, 10, 20, 0);
	gt_test_export_kernel(&w, 2, 3, 30, 40, 0);
	ASSERT_EQ_INT(gt_tw_close(&w, 2000, 0, 0, 0), 0);
	yajl_val root = load_json(path, d);
	ASSERT(root);
	yajl_val evs = get(root, "traceEvents");
	yajl_val k = NULL;
	for (size_t i = 0; i < YAJL_GET_ARRAY(evs)->len; i++)
		if (is(YAJL_GET_ARRAY(evs)->values[i], "X", NULL) && !k)
			k = YAJL_GET_ARRAY(evs)->values[i];
	ASSERT(k);
	/* each invalid byte became U+FFFD; the valid euro sign stayed */
	ASSERT_EQ_STR(sget(k, "name"), "k\"q\\b\x01\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz<T, U>\xe2\x82\xac");
	ASSERT_EQ_STR(sget(get(root, "otherData"), "proc"), "p\"1\\");
	yajl_tree_free(root);
}

TEST(export_json_partial_mark)
{
	const char *d = gt_test_tmpdir();
	yajl_val root = load_json(gt_test_export_sample(d, 0), d);
	ASSERT(root);
	ASSERT(YAJL_IS_TRUE(get(get(root, "otherData"), "partial")));
	yajl_tree_free(root);
}
