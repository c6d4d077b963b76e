/* The trace layer: the visitor (one callback per record type, several readers in one pass,
 * `end` or `release` exactly once), the run directory's layout, and the post-run pass that reads
 * each trace once for the conversion, the report and the summary. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export.h"
#include "run/postrun.h"
#include "test.h"
#include "trace/rundir.h"
#include "trace/trace_io.h"
#include "trace/visit.h"

const char *gt_test_export_sample(const char *dir, int close_it);

/* One record of every type the format knows, in type order (a string first). */
static const struct {
	unsigned type;
	size_t size;
} every_type[] = {
	{GT_REC_API, sizeof(struct gt_rec_api)},
	{GT_REC_KERNEL, sizeof(struct gt_rec_kernel)},
	{GT_REC_MEMCPY, sizeof(struct gt_rec_memcpy)},
	{GT_REC_MEMSET, sizeof(struct gt_rec_memset)},
	{GT_REC_MEMORY, sizeof(struct gt_rec_memory)},
	{GT_REC_RANGE, sizeof(struct gt_rec_range)},
	{GT_REC_COUNTER, sizeof(struct gt_rec_counter)},
	{GT_REC_DROPPED, sizeof(struct gt_rec_dropped)},
	{GT_REC_DEVICE, sizeof(struct gt_rec_device)},
	{GT_REC_THREAD, sizeof(struct gt_rec_thread)},
	{GT_REC_NCCL_COLL, sizeof(struct gt_rec_nccl_coll)},
	{GT_REC_HOLD, sizeof(struct gt_rec_hold)},
	{GT_REC_NOTE, sizeof(struct gt_rec_note)},
};
#define NTYPES (sizeof(every_type) / sizeof(every_type[0]))

static const char *write_every_type(const char *dir, int close_it)
{
	static char path[4200];
	snprintf(path, sizeof(path), "%s/trace.gtr", dir);
	struct gt_trace_writer w;
	if (gt_tw_open(&w, path, "rank0", "node1", 7, 1000, 0) < 0)
		return NULL;
	gt_tw_string(&w, 1, "vecadd", 6);
	for (size_t i = 0; i < NTYPES; i++) {
		unsigned char rec[256];
		memset(rec, 0, sizeof(rec));
		struct gt_rec_hdr *h = (struct gt_rec_hdr *)(void *)rec;
		h->type = (uint16_t)every_type[i].type;
		h->size = (uint16_t)every_type[i].size;
		h->tid = (uint32_t)(100 + i);
		if (gt_tw_write(&w, rec, every_type[i].size, 1) < 0)
			return NULL;
	}
	if (close_it)
		gt_tw_close(&w, 5000, 0, 0, 0);
	else
		gt_tw_abandon(&w);
	return path;
}

struct counts {
	int any, by_type[GT_REC_TYPE_MAX + 1], end, release;
	uint32_t last_tid[GT_REC_TYPE_MAX + 1];
	int stop_at; /* type whose callback fails; 0: none */
};

static int seen(void *ctx, const struct gt_rec_hdr *h, unsigned want)
{
	struct counts *c = ctx;
	if (h->type != want) /* the callback got the record of its own type */
		return -1;
	c->by_type[want]++;
	c->last_tid[want] = h->tid;
	return c->stop_at == (int)want ? -1 : 0;
}

#define CB(name, S, T)                                                                             \
	static int cb_##name(void *ctx, const struct gt_trace_reader *r, const S *x)               \
	{                                                                                          \
		(void)r;                                                                           \
		return seen(ctx, &x->h, T);                                                        \
	}
CB(string, struct gt_rec_string, GT_REC_STRING)
CB(api, struct gt_rec_api, GT_REC_API)
CB(kernel, struct gt_rec_kernel, GT_REC_KERNEL)
CB(memcpy, struct gt_rec_memcpy, GT_REC_MEMCPY)
CB(memset, struct gt_rec_memset, GT_REC_MEMSET)
CB(memory, struct gt_rec_memory, GT_REC_MEMORY)
CB(range, struct gt_rec_range, GT_REC_RANGE)
CB(counter, struct gt_rec_counter, GT_REC_COUNTER)
CB(dropped, struct gt_rec_dropped, GT_REC_DROPPED)
CB(device, struct gt_rec_device, GT_REC_DEVICE)
CB(thread, struct gt_rec_thread, GT_REC_THREAD)
CB(nccl, struct gt_rec_nccl_coll, GT_REC_NCCL_COLL)
CB(hold, struct gt_rec_hold, GT_REC_HOLD)
CB(note, struct gt_rec_note, GT_REC_NOTE)

static int cb_any(void *ctx, const struct gt_trace_reader *r, const struct gt_rec_hdr *h)
{
	(void)r;
	(void)h;
	((struct counts *)ctx)->any++;
	return 0;
}

static int cb_end(void *ctx, const struct gt_trace_reader *r)
{
	(void)r;
	((struct counts *)ctx)->end++;
	return 0;
}

static void cb_release(void *ctx)
{
	((struct counts *)ctx)->release++;
}

static const struct gt_trace_ops all_ops = {
	.any = cb_any,
	.string = cb_string,
	.api = cb_api,
	.kernel = cb_kernel,
	.memcpy = cb_memcpy,
	.memset = cb_memset,
	.memory = cb_memory,
	.range = cb_range,
	.counter = cb_counter,
	.dropped = cb_dropped,
	.device = cb_device,
	.thread = cb_thread,
	.nccl_coll = cb_nccl,
	.hold = cb_hold,
	.note = cb_note,
	.end = cb_end,
	.release = cb_release,
};

/* only kernels, and no `any`: the other types pass it by */
static const struct gt_trace_ops kernel_ops = {.kernel = cb_kernel, .end = cb_end, .release = cb_release};

TEST(trace_visit_one_callback_per_type)
{
	const char *path = write_every_type(gt_test_tmpdir(), 1);
	ASSERT(path);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	struct counts a = {0}, k = {0};
	struct gt_trace_visitor v[2] = {{&all_ops, &a}, {&kernel_ops, &k}};
	char err[512] = "";
	ASSERT_EQ_INT(gt_trace_visit(&r, v, 2, err, sizeof(err)), 0);
	gt_tr_close(&r);
	ASSERT_EQ_INT(a.any, (int)NTYPES + 1); /* the string record too */
	ASSERT_EQ_INT(a.by_type[GT_REC_STRING], 1);
	for (size_t i = 0; i < NTYPES; i++) {
		unsigned t = every_type[i].type;
		ASSERT_EQ_INT(a.by_type[t], 1);
		ASSERT_EQ_U64(a.last_tid[t], 100 + i); /* the record itself, not a copy of another */
		ASSERT_EQ_INT(k.by_type[t], t == GT_REC_KERNEL ? 1 : 0);
	}
	ASSERT_EQ_INT(a.end, 1);
	ASSERT_EQ_INT(a.release, 0);
	ASSERT_EQ_INT(k.end, 1);
	ASSERT_EQ_INT(k.release, 0);
}

/* GT_REC_TYPES' thread column, restated: the records that have no thread keep tid 0 in the tap */
TEST(trace_format_threadless_types)
{
	uint32_t want = 1u << GT_REC_KERNEL | 1u << GT_REC_MEMCPY | 1u << GT_REC_MEMSET | 1u << GT_REC_MEMORY |
			1u << GT_REC_DROPPED | 1u << GT_REC_DEVICE;
	ASSERT_EQ_U64(GT_REC_THREADLESS_MASK, want);
	ASSERT_EQ_INT(GT_REC_TYPE_MAX, GT_REC_NOTE + 1);
	ASSERT_EQ_U64(gt_rec_min_size(GT_REC_STRING), 16);
	ASSERT_EQ_U64(gt_rec_min_size(GT_REC_KERNEL), 96);
	ASSERT_EQ_U64(gt_rec_min_size(GT_REC_NOTE), 32);
	ASSERT_EQ_U64(gt_rec_min_size(GT_REC_TYPE_MAX), 0);
}

TEST(trace_visit_stop_releases_every_visitor)
{
	const char *path = write_every_type(gt_test_tmpdir(), 1);
	ASSERT(path);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	struct counts a = {0}, k = {0};
	a.stop_at = GT_REC_MEMSET;
	struct gt_trace_visitor v[2] = {{&kernel_ops, &k}, {&all_ops, &a}};
	char err[512] = "";
	ASSERT_EQ_INT(gt_trace_visit(&r, v, 2, err, sizeof(err)), -1);
	gt_tr_close(&r);
	ASSERT_EQ_INT(a.by_type[GT_REC_MEMSET], 1);
	ASSERT_EQ_INT(a.by_type[GT_REC_MEMORY], 0); /* nothing after the failing record */
	ASSERT_EQ_INT(a.end + k.end, 0);
	ASSERT_EQ_INT(a.release, 1);
	ASSERT_EQ_INT(k.release, 1);
	ASSERT_CONTAINS(err, "trace.gtr: out of memory at byte ");
}

TEST(trace_visit_damage_names_file_and_releases)
{
	const char *path = write_every_type(gt_test_tmpdir(), 1);
	ASSERT(path);
	/* flip a byte inside the (only) block: its checksum no longer matches */
	struct stat st;
	ASSERT(stat(path, &st) == 0);
	FILE *f = fopen(path, "r+b");
	ASSERT(f);
	ASSERT(fseek(f, (long)st.st_size - 8, SEEK_SET) == 0);
	int c = fgetc(f);
	ASSERT(fseek(f, (long)st.st_size - 8, SEEK_SET) == 0);
	fputc(c ^ 0x55, f);
	fclose(f);
	struct gt_trace_reader r;
	ASSERT_EQ_INT(gt_tr_open(&r, path), 0);
	struct counts a = {0};
	struct gt_trace_visitor v[1] = {{&all_ops, &a}};
	char err[512] = "";
	ASSERT_EQ_INT(gt_trace_visit(&r, v, 1, err, sizeof(err)), -1);
	gt_tr_close(&r);
	ASSERT_CONTAINS(err, "trace.gtr");
	ASSERT_CONTAINS(err, "byte ");
	ASSERT_EQ_INT(a.end, 0);
	ASSERT_EQ_INT(a.release, 1);
}

struct join_arg {
	struct counts *c;
	int fail;
};

static int join_counts(void *arg, const struct gt_trace_reader *r, struct gt_trace_visitor *v, size_t *nv)
{
	struct join_arg *j = arg;
	if (strcmp(r->hdr.proc, "rank0") != 0) /* joined with the trace open, its header read */
		return -1;
	v[(*nv)++] = (struct gt_trace_visitor){&all_ops, j->c};
	return j->fail ? -1 : 0;
}

TEST(trace_feed_plain_joins_and_releases_on_failed_join)
{
	const char *path = write_every_type(gt_test_tmpdir(), 1);
	ASSERT(path);
	struct counts a = {0};
	struct join_arg j = {&a, 0};
	char err[512] = "x";
	ASSERT_EQ_INT(gt_trace_feed_plain(NULL, path, join_counts, &j, err, sizeof(err)), 0);
	ASSERT_EQ_INT(a.any, (int)NTYPES + 1);
	ASSERT_EQ_INT(a.end, 1);
	struct counts b = {0};
	struct join_arg jf = {&b, 1}; /* appends, then fails: what it appended is released, never read */
	ASSERT_EQ_INT(gt_trace_feed_plain(NULL, path, join_counts, &jf, err, sizeof(err)), -1);
	ASSERT_EQ_INT(b.any, 0);
	ASSERT_EQ_INT(b.end, 0);
	ASSERT_EQ_INT(b.release, 1);
	char missing[4300];
	snprintf(missing, sizeof(missing), "%s/none/trace.gtr", gt_test_tmpdir());
	struct counts m = {0};
	struct join_arg jm = {&m, 0};
	ASSERT_EQ_INT(gt_trace_feed_plain(NULL, missing, join_counts, &jm, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "none/trace.gtr");
	ASSERT_EQ_INT(m.end + m.release, 0); /* never joined */
}

static void touch(const char *dir, const char *rel)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

static void mkd(const char *dir, const char *rel)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	mkdir(p, 0755);
}

TEST(rundir_lists_process_folders_only)
{
	const char *d = gt_test_tmpdir();
	const char *dirs[] = {"zeta", "alpha", "mid", "onlylog", "empty", "samplers", "libs", ".hidden", "folder",
			      "folder/trace.gtr"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		mkd(d, dirs[i]);
	touch(d, "zeta/trace.gtr");
	touch(d, "alpha/trace.gtr");
	touch(d, "alpha/metrics.log");
	touch(d, "mid/trace.gtr.partial");
	touch(d, "onlylog/metrics.log");
	touch(d, "samplers/trace.gtr");
	touch(d, "libs/trace.gtr");
	touch(d, ".hidden/trace.gtr");
	touch(d, GT_RUN_JSON);
	struct gt_rundir_proc *p;
	int n = gt_rundir_procs(d, &p);
	ASSERT_EQ_INT(n, 5);
	ASSERT_EQ_STR(p[0].name, "alpha");
	ASSERT_EQ_STR(p[1].name, "folder");
	ASSERT_EQ_STR(p[2].name, "mid");
	ASSERT_EQ_STR(p[3].name, "onlylog");
	ASSERT_EQ_STR(p[4].name, "zeta");
	ASSERT(p[0].has_metrics && !p[0].trace_partial);
	ASSERT_CONTAINS(p[0].trace, "/alpha/trace.gtr");
	ASSERT_CONTAINS(p[1].trace, "/folder/trace.gtr"); /* listed: its reader says it is a folder */
	ASSERT(p[2].trace_partial);
	ASSERT_CONTAINS(p[2].trace, "/mid/trace.gtr"); /* the reader falls back to .partial */
	ASSERT(!strstr(p[2].trace, ".partial"));
	ASSERT_EQ_STR(p[3].trace, "");
	ASSERT(p[3].has_metrics);
	free(p);
	char missing[4300];
	snprintf(missing, sizeof(missing), "%s/nothing", d);
	ASSERT_EQ_INT(gt_rundir_procs(missing, &p), -1);
	ASSERT(p == NULL);
}

static int collect_live(const char *procdir, const char *control, void *arg)
{
	char *seen = arg;
	const char *b = strrchr(procdir, '/');
	size_t len = strlen(seen);
	snprintf(seen + len, 256 - len, "%s%s", len ? "," : "", b ? b + 1 : procdir);
	return strstr(control, "/" GT_PROC_CONTROL) ? (strcmp(b ? b + 1 : "", "stop") == 0 ? -2 : 0) : -3;
}

TEST(rundir_lists_live_process_folders)
{
	const char *d = gt_test_tmpdir();
	const char *dirs[] = {"pid9", "pid3", "pid3/" GT_PROC_CONTROL, "pid9/" GT_PROC_CONTROL, "done", ".h",
			      ".h/" GT_PROC_CONTROL, "zz", "zz/" GT_PROC_CONTROL};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		mkd(d, dirs[i]);
	touch(d, "done/trace.gtr");
	char seen[256] = "";
	ASSERT_EQ_INT(gt_rundir_each_live(d, collect_live, seen), 0);
	ASSERT_EQ_STR(seen, "pid3,pid9,zz"); /* name order, hidden and finished ones skipped */
	/* a process folder itself */
	char p9[4300];
	snprintf(p9, sizeof(p9), "%s/pid9", d);
	seen[0] = 0;
	ASSERT_EQ_INT(gt_rundir_each_live(p9, collect_live, seen), 0);
	ASSERT_EQ_STR(seen, "pid9");
	/* the callback stops the listing */
	mkd(d, "stop");
	mkd(d, "stop/" GT_PROC_CONTROL);
	seen[0] = 0;
	ASSERT_EQ_INT(gt_rundir_each_live(d, collect_live, seen), -2);
	ASSERT_EQ_STR(seen, "pid3,pid9,stop");
	char missing[4300];
	snprintf(missing, sizeof(missing), "%s/nothing", d);
	ASSERT_EQ_INT(gt_rundir_each_live(missing, collect_live, seen), -1);
}

struct warns {
	int n;
	char last[1200];
};

static void collect_warn(void *arg, const char *msg)
{
	struct warns *w = arg;
	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

static int exists_in(const char *dir, const char *rel)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return access(p, F_OK) == 0;
}

TEST(postrun_reads_each_trace_once)
{
	const char *d = gt_test_tmpdir();
	mkd(d, "rank0");
	mkd(d, "rank1");
	mkd(d, "samplers");
	char p0[4300], p1[4300];
	snprintf(p0, sizeof(p0), "%s/rank0", d);
	snprintf(p1, sizeof(p1), "%s/rank1", d);
	ASSERT(write_every_type(p0, 1));
	ASSERT(write_every_type(p1, 0)); /* left .partial */
	char *mem = NULL;
	size_t len = 0;
	FILE *sum = open_memstream(&mem, &len);
	ASSERT(sum);
	struct warns w = {0};
	struct gt_postrun pr = {
		.dir = d,
		.formats = GT_EXPORT_JSON | GT_EXPORT_CSV,
		.report = 1,
		.summary = sum,
		.warn = collect_warn,
		.warn_arg = &w,
	};
	ASSERT_EQ_INT(gt_postrun(&pr), 0);
	fclose(sum);
	ASSERT_EQ_INT(w.n, 0);
	ASSERT_EQ_U64(pr.nprocs, 2);
	ASSERT_EQ_INT(pr.trace_opens, 2); /* conversion, report and summary: one pass per trace */
	ASSERT_EQ_STR(pr.procs[0].name, "rank0");
	ASSERT(pr.procs[0].converted && !pr.procs[0].partial);
	ASSERT_EQ_U64(pr.procs[0].records, NTYPES + 1);
	ASSERT_EQ_STR(pr.procs[1].name, "rank1");
	ASSERT(pr.procs[1].converted && pr.procs[1].partial);
	ASSERT_EQ_U64(pr.procs[1].records, NTYPES + 1);
	ASSERT(exists_in(d, "rank0/trace.json") && exists_in(d, "rank0/trace_cuda_gpu_kern_sum.csv"));
	ASSERT(exists_in(d, "rank0/trace_cuda_api_sum.csv"));
	ASSERT(exists_in(d, "rank1/trace.json"));
	ASSERT(!exists_in(d, "samplers/trace.json")); /* not a process */
	ASSERT(exists_in(d, GT_RUN_REPORT));
	ASSERT(mem);
	ASSERT_CONTAINS(mem, "2 processes");
	free(mem);
	gt_postrun_free(&pr);
}

TEST(postrun_damaged_trace_is_one_warning_rest_goes_on)
{
	const char *d = gt_test_tmpdir();
	mkd(d, "a");
	mkd(d, "b");
	touch(d, "a/trace.gtr"); /* empty: not a trace */
	char pb[4300];
	snprintf(pb, sizeof(pb), "%s/b", d);
	ASSERT(gt_test_export_sample(pb, 1));
	struct warns w = {0};
	struct gt_postrun pr = {.dir = d, .formats = GT_EXPORT_JSON, .report = 0, .warn = collect_warn, .warn_arg = &w};
	ASSERT_EQ_INT(gt_postrun(&pr), 0);
	ASSERT_EQ_INT(w.n, 1);
	ASSERT_CONTAINS(w.last, "a/trace.gtr");
	ASSERT(exists_in(d, "b/trace.json"));
	ASSERT(!exists_in(d, "a/trace.json"));
	ASSERT(!exists_in(d, GT_RUN_REPORT)); /* not asked for */
	ASSERT_EQ_INT(pr.trace_opens, 2);
	gt_postrun_free(&pr);
}

/* With no ProfilerStep range, the analysis picks the repeating NVTX range at the end of its one pass
 * (the ranges are kept while reading, docs/analyze.md): each trace is opened once, converted once. */
TEST(postrun_iteration_search_reads_once)
{
	const char *d = gt_test_tmpdir();
	mkd(d, "rank0");
	char p0[4300];
	snprintf(p0, sizeof(p0), "%s/rank0", d);
	ASSERT(gt_test_export_sample(p0, 1)); /* "step" repeats */
	struct warns w = {0};
	struct gt_postrun pr = {.dir = d, .formats = GT_EXPORT_JSON, .report = 1, .warn = collect_warn, .warn_arg = &w};
	ASSERT_EQ_INT(gt_postrun(&pr), 0);
	ASSERT_EQ_INT(w.n, 0);
	ASSERT_EQ_INT(pr.trace_opens, 1);
	ASSERT_EQ_U64(pr.procs[0].lost, 2);
	ASSERT_EQ_U64(pr.procs[0].cupti_dropped, 3);
	ASSERT(exists_in(d, "rank0/trace.json") && exists_in(d, GT_RUN_REPORT));
	gt_postrun_free(&pr);
}

/* gputap convert DIR -o OUT: the same pass, conversion only, into OUT/<proc>/, the samplers'
 * trace too; a process that wrote only metrics.log has nothing to convert. */
TEST(postrun_convert_into_other_folder_with_samplers)
{
	const char *d = gt_test_tmpdir();
	char run[4300], out[4300], p0[4300], ps[4300];
	snprintf(run, sizeof(run), "%s/run", d);
	snprintf(out, sizeof(out), "%s/out", d);
	snprintf(p0, sizeof(p0), "%s/run/rank0", d);
	snprintf(ps, sizeof(ps), "%s/run/samplers", d);
	mkd(d, "run");
	mkd(d, "run/rank0");
	mkd(d, "run/samplers");
	mkd(d, "run/onlylog");
	touch(d, "run/onlylog/metrics.log");
	ASSERT(write_every_type(p0, 1));
	ASSERT(write_every_type(ps, 1));
	struct warns w = {0};
	struct gt_postrun pr = {.dir = run, .outdir = out, .formats = GT_EXPORT_CSV, .samplers = 1, .warn = collect_warn,
				.warn_arg = &w};
	ASSERT_EQ_INT(gt_postrun(&pr), 0);
	ASSERT_EQ_INT(w.n, 0);
	ASSERT_EQ_U64(pr.nprocs, 2);
	ASSERT_EQ_STR(pr.procs[0].name, "rank0");
	ASSERT(!pr.procs[0].is_samplers && !pr.procs[0].failed);
	ASSERT_EQ_STR(pr.procs[1].name, "samplers");
	ASSERT(pr.procs[1].is_samplers && pr.procs[1].converted && !pr.procs[1].failed);
	ASSERT_CONTAINS(pr.procs[1].outdir, "/out/samplers");
	ASSERT(exists_in(out, "rank0/trace_cuda_gpu_kern_sum.csv"));
	ASSERT(exists_in(out, "samplers/trace_cuda_gpu_kern_sum.csv"));
	ASSERT(!exists_in(run, "rank0/trace_cuda_gpu_kern_sum.csv")); /* nothing written beside the input */
	ASSERT(!exists_in(out, "onlylog"));
	gt_postrun_free(&pr);
}

TEST(notes_say_which_are_losses)
{
	/* every note but the static-runtime one says something is missing; the flush skipped at a
	 * signal is a loss of GPU records but not of GPU activity as a whole */
	for (uint32_t w = GT_NOTE_CUPTI_HANDED_OVER; w <= GT_NOTE_CUPTI_MISSING; w++) {
		ASSERT(gt_note_is_loss(w));
		ASSERT(gt_note_gpu_incomplete(w));
	}
	ASSERT(gt_note_is_loss(GT_NOTE_GPU_FLUSH_SKIPPED));
	ASSERT(!gt_note_gpu_incomplete(GT_NOTE_GPU_FLUSH_SKIPPED));
	ASSERT(!gt_note_is_loss(GT_NOTE_STATIC_RUNTIME));
	ASSERT(!gt_note_gpu_incomplete(GT_NOTE_STATIC_RUNTIME));
	ASSERT_CONTAINS(gt_note_text(GT_NOTE_STATIC_RUNTIME), "GPUTAP_RUNTIME_CALLBACKS=on");
}
