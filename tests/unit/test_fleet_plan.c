/* Unit tests of fleet/plan.c: the tasks of `gputap fleet`'s inputs in python/gputap/fleet/inputs.py's
 * order, labels, ranks, hosts and anchors, the inputs that fail and why, the batches and the plan's
 * JSON. */
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleet/fleet.h"

static char *path_of(const char *rel)
{
	static char buf[8][4096];
	static int next;
	char *p = buf[next++ & 7];
	snprintf(p, 4096, "%s/%s", gt_test_tmpdir(), rel);
	return p;
}

/* Writes text at rel (its folders made). */
static void put(const char *rel, const char *text)
{
	char d[4096];
	snprintf(d, sizeof(d), "%s", path_of(rel));
	for (char *s = d + strlen(gt_test_tmpdir()) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(d, 0755);
		*s = '/';
	}
	FILE *f = fopen(d, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const fl_task *task_labelled(const fl_plan *p, const char *label)
{
	for (size_t i = 0; i < p->ntasks; i++)
		if (!strcmp(p->tasks[i].label, label))
			return &p->tasks[i];
	return NULL;
}

/* A job folder: run.json with host and clock anchor; rank folders sorted by name's length, then name;
 * one without a trace still a task; the sampler's folder and a stray file left out. */
TEST(fleet_plan_job_folder)
{
	put("job/run.json", "{\"host\": \"node7\", \"start_ns\": 1795000000000000042}");
	put("job/rank10/trace.gtr", "x");
	put("job/rank2/trace.gtr", "xx");
	put("job/rank1/trace.gtr.partial", "xxx");
	mkdir(path_of("job/rank3"), 0755);
	put("job/samplers/trace.gtr", "x");
	put("job/notes.txt", "x");
	char *in[] = {path_of("job")};
	fl_plan p;
	ASSERT_EQ_INT(fl_plan_expand(&p, in, 1), 0);
	ASSERT_EQ_INT(p.ntasks, 4);
	ASSERT_EQ_INT(p.nfailed, 0);
	const char *order[] = {"rank1", "rank2", "rank3", "rank10"};
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ_STR(p.tasks[i].label, order[i]);
		ASSERT_EQ_INT(p.tasks[i].index, i);
		ASSERT_EQ_STR(p.tasks[i].host, "node7");
		ASSERT_EQ_INT(p.tasks[i].has_anchor, 1);
		ASSERT(p.tasks[i].anchor_ns == 1795000000000000042LL);
	}
	ASSERT_EQ_INT(p.tasks[0].rank, 1);
	ASSERT_EQ_INT(p.tasks[3].rank, 10);
	ASSERT_EQ_STR(p.tasks[0].path, path_of("job/rank1/trace.gtr.partial"));
	ASSERT_EQ_INT(p.tasks[0].size, 3);
	ASSERT_EQ_STR(p.tasks[1].path, path_of("job/rank2/trace.gtr"));
	ASSERT_EQ_STR(p.tasks[2].path,
		      path_of("job/rank3")); /* no trace: the folder, for the analysis to fail */
	fl_plan_free(&p);
}

/* Kineto traces in a folder: only those whose head looks like a trace; the label without its
 * suffix and the rank from "rank<R>" anywhere in it; a missing input and one named twice fail, in
 * inputs.py's words. */
TEST(fleet_plan_kineto_missing_duplicate)
{
	put("k/run7_rank3_of_8.json", "{\"schemaVersion\": 1, \"traceEvents\": []}");
	put("k/config.json", "{\"lr\": 0.1}");
	put("k/prof.sqlite", "x");
	put("k/readme.txt", "x");
	put("k/sub/rank0/trace.gtr", "x");
	char *in[] = {path_of("k"), path_of("nothere"), path_of("k/prof.sqlite"),
		      path_of("k/sub/../sub/rank0")};
	fl_plan p;
	ASSERT_EQ_INT(fl_plan_expand(&p, in, 4), 0);
	ASSERT_EQ_INT(p.ntasks, 3);
	const fl_task *t = task_labelled(&p, "run7_rank3_of_8");
	ASSERT(t != NULL);
	ASSERT_EQ_INT(t->rank, 3);
	ASSERT(t->host == NULL && !t->has_anchor);
	const fl_task *s = task_labelled(&p, "prof");
	ASSERT(s != NULL);
	ASSERT_EQ_INT(s->rank, -1);
	ASSERT(task_labelled(&p, "config") == NULL);
	ASSERT(task_labelled(&p, "readme.txt") == NULL);
	/* the names in order of length: "sub" (a folder of a rank folder), "prof.sqlite", the trace */
	ASSERT_EQ_STR(p.tasks[0].label, "rank0");
	ASSERT_EQ_STR(p.tasks[1].label, "prof");
	ASSERT_EQ_INT(p.nfailed, 3);
	ASSERT_EQ_STR(p.failed[0].path, path_of("nothere"));
	ASSERT_EQ_STR(p.failed[0].error, "no such file or folder");
	ASSERT_EQ_STR(p.failed[1].path, path_of("k/prof.sqlite"));
	ASSERT_EQ_STR(p.failed[1].error,
		      "no trace found (run folders, rank folders, trace.gtr, Kineto .json[.gz], "
		      "nsys .sqlite/.nsys-rep)");
	ASSERT_EQ_STR(p.failed[2].path, path_of("k/sub/../sub/rank0"));
	fl_plan_free(&p);
}

/* A relative path is made absolute without resolving links; "." and ".." are taken out. */
TEST(fleet_plan_relative_paths)
{
	put("a/rank5/trace.gtr", "x");
	ASSERT(chdir(path_of("a")) == 0);
	char *in[] = {"./x/../rank5/"};
	mkdir(path_of("a/x"), 0755);
	fl_plan p;
	ASSERT_EQ_INT(fl_plan_expand(&p, in, 1), 0);
	ASSERT_EQ_INT(p.ntasks, 1);
	char cwd[4096];
	ASSERT(getcwd(cwd, sizeof(cwd)) != NULL);
	char want[4200];
	snprintf(want, sizeof(want), "%s/rank5/trace.gtr", cwd);
	ASSERT_EQ_STR(p.tasks[0].path, want);
	ASSERT_EQ_INT(p.tasks[0].rank, 5);
	fl_plan_free(&p);
}

static fl_task mk(const char *path, const char *host, int64_t size)
{
	fl_task t = {0};
	t.path = strdup(path);
	t.label = strdup("x");
	t.rank = -1;
	t.host = host ? strdup(host) : NULL;
	t.size = size;
	return t;
}

/* Batches: about four per worker; per host (when asked) and per format, in order of first
 * appearance; a task larger than the limit alone. */
TEST(fleet_plan_batches)
{
	fl_plan p = {0};
	p.tasks = calloc(12, sizeof(fl_task));
	for (int i = 0; i < 10; i++)
		p.tasks[i] = mk("/r/rank/trace.gtr", i % 2 ? "b" : "a", 10);
	p.tasks[10] = mk("/r/rank10.json.gz", "a", 10);
	p.tasks[11] = mk("/r/rank11.json.gz", "a", 10);
	p.ntasks = 12;
	for (size_t i = 0; i < p.ntasks; i++)
		p.tasks[i].index = (int)i;
	fl_batch *b;
	size_t n;
	/* one worker, no host: ceil(12 / 4) = 3 a batch; the gtr group, then the json.gz group */
	ASSERT_EQ_INT(fl_plan_batches(&p, 1, 256, 32 << 20, 0, &b, &n), 0);
	ASSERT_EQ_INT(n, 5);
	size_t want[] = {3, 3, 3, 1, 2};
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ_INT(b[i].n, want[i]);
	ASSERT_EQ_INT(b[3].task[0], 9);
	ASSERT_EQ_INT(b[4].task[0], 10);
	fl_batches_free(b, n);
	/* by host: a's gtr (0 2 4 6 8), b's gtr (1 3 5 7 9), a's json.gz (10 11) */
	ASSERT_EQ_INT(fl_plan_batches(&p, 1, 256, 32 << 20, 1, &b, &n), 0);
	ASSERT_EQ_INT(n, 5);
	ASSERT_EQ_INT(b[0].n, 3);
	ASSERT_EQ_INT(b[0].task[1], 2);
	ASSERT_EQ_INT(b[1].n, 2);
	ASSERT_EQ_INT(b[2].task[0], 1);
	ASSERT_EQ_INT(b[4].task[1], 11);
	fl_batches_free(b, n);
	/* at most 25 bytes a batch: two tasks of 10 each; a task of 100 alone */
	p.tasks[1].size = 100;
	ASSERT_EQ_INT(fl_plan_batches(&p, 1, 256, 25, 0, &b, &n), 0);
	ASSERT_EQ_INT(b[0].n, 1);
	ASSERT_EQ_INT(b[1].n, 1);
	ASSERT_EQ_INT(b[1].task[0], 1);
	ASSERT_EQ_INT(b[2].n, 2);
	fl_batches_free(b, n);
	/* many workers: a task a batch; max_ranks caps */
	ASSERT_EQ_INT(fl_plan_batches(&p, 8, 256, 32 << 20, 0, &b, &n), 0);
	ASSERT_EQ_INT(n, 12);
	fl_batches_free(b, n);
	ASSERT_EQ_INT(fl_plan_batches(&p, 1, 2, 32 << 20, 0, &b, &n), 0);
	ASSERT_EQ_INT(n, 6);
	fl_batches_free(b, n);
	fl_plan_free(&p);
}

/* The plan's JSON and back: the same JSON; none as null. */
TEST(fleet_plan_json_round_trip)
{
	put("job/run.json", "{\"host\": \"h\\\"q\", \"start_ns\": -5}");
	put("job/rank0/trace.gtr", "x");
	put("solo/trace.gtr", "x");
	char *in[] = {path_of("job"), path_of("solo"), path_of("gone")};
	fl_plan p, q;
	ASSERT_EQ_INT(fl_plan_expand(&p, in, 3), 0);
	ASSERT_EQ_INT(p.ntasks, 2);
	char *j = fl_plan_json(&p);
	ASSERT(j != NULL);
	ASSERT_CONTAINS(
	    j, "\"label\":\"solo\",\"rank\":null,\"host\":null,\"anchor_ns\":null,\"size\":1,\"index\":1");
	ASSERT_CONTAINS(j, "\"host\":\"h\\\"q\",\"anchor_ns\":-5");
	char err[128] = "";
	ASSERT_EQ_INT(fl_plan_from_json(&q, j, strlen(j), err, sizeof(err)), 0);
	ASSERT_EQ_INT(q.ntasks, 2);
	ASSERT_EQ_INT(q.nfailed, 1);
	ASSERT_EQ_INT(q.tasks[1].rank, -1);
	ASSERT(q.tasks[0].anchor_ns == -5 && q.tasks[0].has_anchor);
	ASSERT_EQ_STR(q.failed[0].error, "no such file or folder");
	char *k = fl_plan_json(&q);
	ASSERT_EQ_STR(k, j);
	free(k);
	free(j);
	fl_plan_free(&q);
	fl_plan_free(&p);
	const char *bad = "{\"tasks\": [{\"path\": 3}], \"failed\": []}";
	ASSERT_EQ_INT(fl_plan_from_json(&q, bad, strlen(bad), err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "task 0");
	ASSERT_EQ_INT(fl_plan_from_json(&q, "[", 1, err, sizeof(err)), -1);
}
