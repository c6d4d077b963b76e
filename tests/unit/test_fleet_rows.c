/* Unit tests of fleet/rows.c and fleet/task.c: the string table, the rows' wire format (blocks
 * concatenated, string numbers mapped, a block cut short named), and one analyzer run over a batch
 * with a stand-in analyzer (what it refuses taken out, the rest run again; the messages of
 * python/gputap/fleet/worker.py). */
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fleet/fleet.h"

TEST(fleet_rows_intern)
{
	fl_rows r;
	fl_rows_init(&r);
	ASSERT_EQ_INT(r.nstrings, 1);
	ASSERT_EQ_STR(r.strings[0], "");
	ASSERT_EQ_INT(fl_rows_intern(&r, ""), 0);
	int a = fl_rows_intern(&r, "ncclAllReduce"), b = fl_rows_intern(&r, "ring");
	ASSERT_EQ_INT(a, 1);
	ASSERT_EQ_INT(b, 2);
	ASSERT_EQ_INT(fl_rows_intern(&r, "ncclAllReduce"), 1);
	char s[32];
	for (int i = 0; i < 2000; i++) { /* the index grows several times */
		snprintf(s, sizeof(s), "s%d", i);
		ASSERT_EQ_INT(fl_rows_intern(&r, s), 3 + i);
	}
	for (int i = 0; i < 2000; i += 7) {
		snprintf(s, sizeof(s), "s%d", i);
		ASSERT_EQ_INT(fl_rows_intern(&r, s), 3 + i);
	}
	ASSERT_EQ_INT(r.nstrings, 2003);
	fl_rows_free(&r);
}

/* rows of one task each: a rank row, two iterations, collectives of the given strings */
static void fill(fl_rows *r, int task, const char *comm, const char *name, double base)
{
	fl_rows_init(r);
	fl_rows_fail(r, task, FL_PARTIAL, "the trace is partial");
	fl_rankrow *k = &r->ranks[r->nranks - 1];
	free(k->label);
	k->label = strdup("rank/gpu0,rank/gpu1");
	k->gpus = 2;
	k->iterations = 2;
	k->first_ns = -7;
	k->last_ns = INT64_MAX;
	for (int w = 0; w < FL_NWIN; w++)
		k->w[w] = base + w / 3.0;
	fl_rows_fail(r, task + 100, FL_FAILED, "no such file");
	r->iters = calloc(2, sizeof(fl_iterrow));
	r->niters = r->cap_iters = 2;
	for (int i = 0; i < 2; i++) {
		r->iters[i].task = task;
		r->iters[i].iteration = i;
		r->iters[i].start_ns = 1000 * i;
		r->iters[i].first_ns = 1000 * i + 1;
		r->iters[i].last_ns = 1000 * i + 2;
		r->iters[i].w[FL_W_COMM] = base * (i + 1) + 1e-6;
	}
	r->colls = calloc(3, sizeof(fl_collrow));
	r->ncolls = r->cap_colls = 3;
	for (int i = 0; i < 3; i++) {
		fl_collrow *c = &r->colls[i];
		c->task = task;
		c->comm = fl_rows_intern(r, comm);
		c->name = fl_rows_intern(r, name);
		c->dtype = fl_rows_intern(r, i == 2 ? "float16" : "");
		c->seq = i;
		c->bytes = (int64_t)1 << 40;
		c->iteration = i - 1;
	}
}

static unsigned char *write_blocks(const fl_rows *a, const fl_rows *b, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f || fl_rows_write(a, f) || (b && fl_rows_write(b, f)))
		return NULL;
	fclose(f);
	return (unsigned char *)buf;
}

TEST(fleet_rows_wire_two_blocks)
{
	fl_rows a, b, r;
	fill(&a, 1, "world", "ncclAllReduce", 1.5);
	fill(&b, 2, "pairs", "ncclSend", -0.25);
	size_t len = 0;
	unsigned char *buf = write_blocks(&a, &b, &len);
	ASSERT(buf != NULL);
	ASSERT(!memcmp(buf, "gputap-fleet-rows 1\n{", 21));
	fl_rows_init(&r);
	ASSERT_EQ_INT(fl_rows_intern(&r, "ncclSend"), 1); /* already there: b's numbers must move */
	char err[128] = "";
	ASSERT_EQ_INT(fl_rows_read(&r, buf, len, err, sizeof(err)), 0);
	ASSERT_EQ_INT(r.nranks, 4);
	ASSERT_EQ_INT(r.niters, 4);
	ASSERT_EQ_INT(r.ncolls, 6);
	ASSERT_EQ_INT(r.ranks[0].task, 1);
	ASSERT_EQ_INT(r.ranks[0].status, FL_PARTIAL);
	ASSERT_EQ_STR(r.ranks[0].message, "the trace is partial");
	ASSERT_EQ_STR(r.ranks[0].label, "rank/gpu0,rank/gpu1");
	ASSERT_EQ_STR(r.ranks[0].iteration_source, "");
	ASSERT(r.ranks[0].last_ns == INT64_MAX && r.ranks[0].first_ns == -7);
	ASSERT_EQ_INT(r.ranks[0].gpus, 2);
	ASSERT_EQ_INT(r.ranks[1].status, FL_FAILED);
	ASSERT_EQ_STR(r.ranks[1].message, "no such file");
	ASSERT_EQ_INT(r.ranks[3].task, 102);
	for (int w = 0; w < FL_NWIN; w++) {
		ASSERT(r.ranks[0].w[w] == 1.5 + w / 3.0);
		ASSERT(r.ranks[2].w[w] == -0.25 + w / 3.0);
	}
	ASSERT(r.iters[1].w[FL_W_COMM] == 1.5 * 2 + 1e-6);
	ASSERT(r.iters[3].w[FL_W_COMM] == -0.25 * 2 + 1e-6);
	ASSERT_EQ_INT(r.iters[3].task, 2);
	ASSERT_EQ_INT(r.iters[3].last_ns, 1002);
	for (int i = 0; i < 6; i++) {
		const fl_collrow *c = &r.colls[i];
		ASSERT_EQ_STR(r.strings[c->comm], i < 3 ? "world" : "pairs");
		ASSERT_EQ_STR(r.strings[c->name], i < 3 ? "ncclAllReduce" : "ncclSend");
		ASSERT_EQ_STR(r.strings[c->dtype], i % 3 == 2 ? "float16" : "");
		ASSERT_EQ_STR(r.strings[c->algo], "");
		ASSERT_EQ_INT(c->seq, i % 3);
		ASSERT_EQ_INT(c->iteration, i % 3 - 1);
		ASSERT(c->bytes == (int64_t)1 << 40);
	}
	ASSERT_EQ_INT(r.colls[3].name, 1);
	/* appended rows map their strings the same way */
	fl_rows c;
	fl_rows_init(&c);
	fl_rows_intern(&c, "float16");
	ASSERT_EQ_INT(fl_rows_append(&c, &r), 0);
	ASSERT_EQ_INT(c.ncolls, 6);
	ASSERT_EQ_STR(c.strings[c.colls[5].dtype], "float16");
	ASSERT_EQ_STR(c.strings[c.colls[4].name], "ncclSend");
	ASSERT_EQ_STR(c.ranks[2].label, "rank/gpu0,rank/gpu1");
	fl_rows_free(&c);
	fl_rows_free(&r);
	fl_rows_free(&a);
	fl_rows_free(&b);
	free(buf);
}

TEST(fleet_rows_wire_errors)
{
	fl_rows a, r;
	fill(&a, 1, "world", "ncclAllReduce", 1.5);
	size_t len = 0;
	unsigned char *buf = write_blocks(&a, &a, &len);
	ASSERT(buf != NULL);
	char err[128] = "";
	fl_rows_init(&r);
	ASSERT_EQ_INT(fl_rows_read(&r, buf, len - 5, err, sizeof(err)), -1);
	ASSERT_EQ_STR(err, "rows block 2: cut short");
	ASSERT_EQ_INT(r.nranks, 2); /* the first block's rows, none of the second's */
	fl_rows_free(&r);
	fl_rows_init(&r);
	ASSERT_EQ_INT(fl_rows_read(&r, buf, 30, err, sizeof(err)), -1);
	ASSERT_EQ_STR(err, "rows block 1: cut short");
	ASSERT_EQ_INT(fl_rows_read(&r, (const unsigned char *)"gputap-columns 1\n{}\n", 20, err, sizeof(err)),
		      -1);
	ASSERT_EQ_STR(err, "rows block 1: not a rows block");
	ASSERT_EQ_INT(r.nranks, 0);
	ASSERT_EQ_INT(fl_rows_read(&r, buf, 0, err, sizeof(err)), 0);
	/* a string number past the block's strings */
	unsigned char *bad = malloc(len);
	memcpy(bad, buf, len);
	size_t half = len / 2; /* one block */
	/* the collectives' "comm" column starts 14 columns of 3 rows before the block's end */
	size_t at = half - 14 * 3 * 8;
	bad[at] = 99;
	ASSERT_EQ_INT(fl_rows_read(&r, bad, half, err, sizeof(err)), -1);
	ASSERT_CONTAINS(err, "rows block 1: collective 0: string number out of range");
	fl_rows_free(&r);
	fl_rows_free(&a);
	free(bad);
	free(buf);
}

/* ---- one batch through a stand-in analyzer ----------------------------------------------------- */

/* The columns of a run with no GPU: what the analyzer writes for a launcher. */
static const char EMPTY_COLUMNS[] =
    "gputap-columns "
    "1\\n{\"byteorder\":\"little\",\"notes\":[],\"gpus\":[],\"tables\":{\"iterations\":{\"rows\":0,"
    "\"columns\":[[\"gpu\",\"i8\"],[\"start_ns\",\"i8\"],[\"first_ns\",\"i8\"],[\"last_ns\",\"i8\"],[\"span_"
    "ms\",\"f8\"],"
    "[\"busy_ms\",\"f8\"],[\"idle_ms\",\"f8\"],[\"compute_ms\",\"f8\"],[\"comm_ms\",\"f8\"],[\"exposed_comm_"
    "ms\",\"f8\"],"
    "[\"overlap_ms\",\"f8\"],[\"memop_ms\",\"f8\"],[\"kernel_sum_ms\",\"f8\"],[\"non_compute_ms\",\"f8\"]]},"
    "\"collectives\":{\"rows\":0,\"strings\":[\"\"],\"columns\":[[\"source\",\"i8\"],[\"comm\",\"i8\"],["
    "\"name\",\"i8\"],"
    "[\"algo\",\"i8\"],[\"proto\",\"i8\"],[\"match\",\"i8\"],[\"dtype\",\"i8\"],[\"device\",\"i8\"],[\"seq\","
    "\"i8\"],"
    "[\"count\",\"i8\"],[\"bytes\",\"i8\"],[\"iteration\",\"i8\"],[\"start_ns\",\"i8\"],[\"end_ns\",\"i8\"],"
    "[\"launch_ns\",\"i8\"]]}}}\\n";

static void add_task(fl_plan *p, const char *path)
{
	fl_task *t = &p->tasks[p->ntasks];
	memset(t, 0, sizeof(*t));
	t->path = strdup(path);
	t->label = strdup("x");
	t->rank = -1;
	t->size = -1;
	t->index = (int)p->ntasks++;
}

static const fl_rankrow *row_of(const fl_rows *r, int task)
{
	for (size_t i = 0; i < r->nranks; i++)
		if (r->ranks[i].task == task)
			return &r->ranks[i];
	return NULL;
}

TEST(fleet_task_retry_and_messages)
{
	const char *d = gt_test_tmpdir();
	char exe[4096], script[8192];
	snprintf(exe, sizeof(exe), "%s/analyzer", d);
	/* refuses bad.json naming it (after a warning), fails on loud.json without naming it (four
	 * lines); the rest is a process without GPU work */
	snprintf(script, sizeof(script),
		 "#!/bin/sh\n"
		 "for a in \"$@\"; do case \"$a\" in\n"
		 "*bad.json) echo 'gputap: warning: odd' >&2; echo \"gputap: error: $a: not a Kineto trace\" "
		 ">&2; exit 1;;\n"
		 "*loud.json) printf 'one\\ntwo\\ngputap: error: three\\nfour\\n' >&2; exit 1;;\n"
		 "esac; done\n"
		 "printf '%s'\n",
		 EMPTY_COLUMNS);
	gt_test_write_file(d, "analyzer", script, strlen(script));
	ASSERT(chmod(exe, 0755) == 0);
	gt_test_write_file(d, "a.json", "{}", 2);
	gt_test_write_file(d, "bad.json", "{}", 2);
	gt_test_write_file(d, "loud.json", "{}", 2);
	char p0[4200], p1[4200], p2[4200], p3[4200], p4[4200];
	snprintf(p0, sizeof(p0), "%s/a.json", d);
	snprintf(p1, sizeof(p1), "%s/bad.json", d);
	snprintf(p2, sizeof(p2), "%s/loud.json", d);
	snprintf(p3, sizeof(p3), "%s/gone.json", d);
	snprintf(p4, sizeof(p4), "%s", d);
	fl_plan p = {0};
	p.tasks = calloc(5, sizeof(fl_task));
	add_task(&p, p0);
	add_task(&p, p1);
	add_task(&p, p2);
	add_task(&p, p3);
	add_task(&p, p4);
	int idx[] = {0, 1, 2, 3, 4};
	fl_rows r;
	fl_rows_init(&r);
	ASSERT_EQ_INT(fl_task_run(exe, &p, idx, 5, NULL, &r), 0);
	ASSERT_EQ_INT(r.nranks, 5);
	/* checked before any run, in order */
	ASSERT_EQ_INT(r.ranks[0].task, 3);
	ASSERT_EQ_STR(r.ranks[0].message, "no such file");
	ASSERT_EQ_INT(r.ranks[1].task, 4);
	ASSERT_EQ_STR(r.ranks[1].message, "no trace.gtr in this rank folder");
	const fl_rankrow *bad = row_of(&r, 1), *loud = row_of(&r, 2), *ok = row_of(&r, 0);
	ASSERT(bad && loud && ok);
	ASSERT_EQ_INT(bad->status, FL_FAILED);
	ASSERT_EQ_STR(bad->message, "not a Kineto trace");
	ASSERT_EQ_INT(loud->status, FL_FAILED);
	ASSERT_EQ_STR(loud->message, "two; three; four");
	ASSERT_EQ_INT(ok->status, FL_SKIPPED);
	ASSERT_EQ_STR(ok->message, "no GPU work in this process (e.g. a launcher)");
	ASSERT_EQ_INT(ok->gpus, 0);
	ASSERT_EQ_INT(r.niters, 0);
	/* without the analyzer: every task failed, saying so */
	fl_rows m;
	fl_rows_init(&m);
	char none[4200];
	snprintf(none, sizeof(none), "%s/no-such-analyzer", d);
	ASSERT_EQ_INT(fl_task_run(none, &p, idx, 1, NULL, &m), 0);
	ASSERT_EQ_INT(m.nranks, 1);
	ASSERT_CONTAINS(m.ranks[0].message, "the gputap command was not found on this worker");
	fl_rows_free(&m);
	fl_rows_free(&r);
	fl_plan_free(&p);
}
