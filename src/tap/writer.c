/*
 * The writer thread and this process's output files: it drains the record
 * chunks to trace.gtr and timeline.log, refreshes metrics.log every second,
 * hands CUPTI's completed buffers over every 100 ms, and at the end writes
 * the closing counters and closes the files (tap/writer.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/alnair_log.h"
#include "core/log.h"
#include "core/sort.h"
#include "trace/trace_io.h"
#include "tap/capture_tap.h"
#include "tap/sources.h"
#include "tap/tap.h"
#include "tap/ticks.h"
#include "tap/writer.h"
#include "trace/rundir.h"
#include "core/fdio.h"

struct gt_item {
	struct gt_chunk *c;
	uint32_t end, end_nrec;
	int full;
};

static struct {
	pthread_t thread;
	int thread_running;
	int efd;
	_Atomic int stop;
	_Atomic int done;
	_Atomic int by_signal; /* the final flush was started by a signal handler */
	char dir[4096];   /* GPUTAP_OUT/<proc>, "" if none */
	char pfdir[4096]; /* PFLOG (or PFLOG/<proc> in a fork child), "" if none */
	struct gt_trace_writer tw;
	int tw_open;
	int tw_failed;
	int tl_fd[2];
	struct gt_item *items;
	size_t nitems_cap;
	uint64_t lost_reported, cupti_reported, nobuf_reported;
	uint64_t last_metrics_ns;
	char tlbuf[65536];
	size_t tllen;
	char mbuf[65536];
} W = {.efd = -1, .tl_fd = {-1, -1}};

static int mkdir_p(const char *path)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* ---- output ---- */

static void tl_flush(void)
{
	for (int i = 0; i < 2; i++)
		if (W.tl_fd[i] >= 0 && W.tllen)
			gt_write_all(W.tl_fd[i], W.tlbuf, W.tllen);
	W.tllen = 0;
}

/* One pass over records about to go out: those the hooks wrote in ticks with the API's index
 * (GT_API_MEM_TICKS, tap/hot.h) get epoch ns and the name id, before anything reads them (the
 * chunk's committed bytes are the writer's alone); API records get their timeline.log line. */
static void walk_records(unsigned char *p, uint32_t len)
{
	int tl = W.tl_fd[0] >= 0 || W.tl_fd[1] >= 0;
	uint32_t off = 0;
	while (off + sizeof(struct gt_rec_hdr) <= len) {
		struct gt_rec_hdr *h = (void *)(p + off);
		if (h->size < 8 || off + h->size > len)
			break;
		if (h->type == GT_REC_API && h->size >= sizeof(struct gt_rec_api)) {
			struct gt_rec_api *a = (void *)h;
			if (a->flags & GT_API_MEM_TICKS) {
				a->start_ns = gt_ticks_epoch(a->start_ns);
				a->end_ns = gt_ticks_epoch(a->end_ns);
				a->name_id = a->name_id < GT_API_N ? gt_tap.api_name_id[a->name_id] : 0;
				a->flags &= (uint16_t)~GT_API_MEM_TICKS;
			}
			if (tl && a->name_id >= 1 && a->name_id <= GT_API_N) {
				if (sizeof(W.tlbuf) - W.tllen < 512)
					tl_flush();
				int n = gt_alnair_timelineline(W.tlbuf + W.tllen, sizeof(W.tlbuf) - W.tllen,
							       gt_api_names[a->name_id - 1], a->start_ns,
							       (a->end_ns - a->start_ns) / 1000, a->bytes, a->copy_kind);
				if (n > 0)
					W.tllen += (size_t)n;
			}
		}
		off += h->size;
	}
}

static void tw_fail(int rc)
{
	if (!W.tw_failed)
		gt_warn("cannot write %s: %s; the trace is incomplete (left as %s)", W.tw.path, strerror(-rc),
			W.tw.tmp_path);
	W.tw_failed = 1;
}

static void out_string(uint32_t id, const char *s, uint32_t len, void *arg)
{
	(void)arg;
	if (W.tw_open && !W.tw_failed) {
		int rc = gt_tw_string(&W.tw, id, s, len);
		if (rc < 0)
			tw_fail(rc);
	}
}

static void out_records(unsigned char *p, uint32_t len, uint32_t nrec)
{
	walk_records(p, len);
	if (W.tw_open && !W.tw_failed) {
		int rc = gt_tw_write(&W.tw, p, len, nrec);
		if (rc < 0)
			tw_fail(rc);
	}
}

static size_t nitems;
static void collect_full_item(struct gt_chunk *c, void *arg)
{
	(void)arg;
	uint64_t st = atomic_load_explicit(&c->state, memory_order_acquire);
	if (nitems < W.nitems_cap)
		W.items[nitems++] = (struct gt_item){c, (uint32_t)st, (uint32_t)(st >> 32), 1};
}

static void emit_dropped(uint32_t source, uint64_t count)
{
	struct gt_rec_dropped d;
	memset(&d, 0, sizeof(d));
	d.h.type = GT_REC_DROPPED;
	d.h.size = sizeof(d);
	d.source = source;
	d.count = count;
	out_records((unsigned char *)&d, sizeof(d), 1);
}

static void drain(void)
{
	nitems = 0;
	gt_pool_take_full(&gt_tap.pool, collect_full_item, NULL);
	for (unsigned i = 0, n = gt_tap.slots ? atomic_load(&gt_tap.nslots) : 0; i < n; i++) {
		struct gt_slot *s = &gt_tap.slots[i];
		struct gt_chunk *c = atomic_load_explicit(&s->cur, memory_order_acquire);
		if (!c)
			continue;
		uint64_t st = atomic_load_explicit(&c->state, memory_order_acquire);
		if ((uint32_t)st > c->flushed && nitems < W.nitems_cap)
			W.items[nitems++] = (struct gt_item){c, (uint32_t)st, (uint32_t)(st >> 32), 0};
	}
	/* strings after taking the chunks: every id in them is published by now */
	gt_strtab_pending(&gt_tap.strs, out_string, NULL);
	/* after taking them too: every tick in them was read before this mark */
	gt_ticks_mark(atomic_load_explicit(&gt_clock_offset, memory_order_relaxed));
	for (size_t i = 0; i < nitems; i++) {
		struct gt_item *it = &W.items[i];
		struct gt_chunk *c = it->c;
		if (it->end > c->flushed)
			out_records(gt_chunk_data(c) + c->flushed, it->end - c->flushed, it->end_nrec - c->flushed_nrec);
		c->flushed = it->end;
		c->flushed_nrec = it->end_nrec;
		if (it->full)
			gt_pool_release(&gt_tap.pool, c);
	}
	uint64_t lost = atomic_load(&gt_tap.pool.lost);
	if (lost > W.lost_reported) {
		emit_dropped(GT_DROP_TAP_BUFFER, lost - W.lost_reported);
		W.lost_reported = lost;
	}
	uint64_t cd = atomic_load(&gt_tap.cupti_dropped);
	if (cd > W.cupti_reported) {
		emit_dropped(GT_DROP_CUPTI, cd - W.cupti_reported);
		W.cupti_reported = cd;
	}
	uint64_t nb = atomic_load(&gt_tap.cupti_no_buffer);
	if (nb > W.nobuf_reported) {
		emit_dropped(GT_DROP_CUPTI_NO_BUFFER, nb - W.nobuf_reported);
		W.nobuf_reported = nb;
	}
	tl_flush();
}

static int cmp_first(const void *a, const void *b)
{
	uint64_t fa = atomic_load(&gt_tap.api_first[*(const int *)a]);
	uint64_t fb = atomic_load(&gt_tap.api_first[*(const int *)b]);
	return fa < fb ? -1 : fa > fb;
}

static void write_metrics_to(const char *dir, const char *text, size_t len)
{
	char path[4200], tmp[4300];
	snprintf(path, sizeof(path), "%s/" GT_PROC_METRICS, dir);
	snprintf(tmp, sizeof(tmp), "%s/.metrics.log.%d.tmp", dir, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* only a whole file replaces the last one: metrics.log is never torn */
	int bad = gt_write_all(fd, text, len) < 0;
	bad |= close(fd) < 0;
	if (bad || rename(tmp, path) < 0)
		unlink(tmp);
}

static void write_metrics(void)
{
	size_t len = 0, cap = sizeof(W.mbuf);
	int64_t mu = atomic_load(&gt_tap.mem_used);
	int n = gt_alnair_memline(W.mbuf, cap, mu > 0 ? (uint64_t)mu : 0);
	len += n > 0 ? (size_t)n : 0;
	int order[GT_API_N] = {0}, no = 0;
	for (int i = 0; i < GT_API_N; i++) {
		if ((unsigned)i < gt_alnair_nnames)
			order[no++] = i;
	}
	int rest[GT_API_N] = {0}, nr = 0;
	for (int i = (int)gt_alnair_nnames; i < GT_API_N; i++)
		if (atomic_load(&gt_tap.api_first[i]))
			rest[nr++] = i;
	gt_sort(rest, (size_t)nr, sizeof(int), cmp_first);
	for (int i = 0; i < nr; i++)
		order[no++] = rest[i];
	for (int k = 0; k < no && len + 256 < cap; k++) {
		int i = order[k];
		uint64_t ns, cnt = gt_tap_api_total(i, &ns);
		n = gt_alnair_metricline(W.mbuf + len, cap - len, gt_api_names[i], cnt, ns / 1000);
		len += n > 0 ? (size_t)n : 0;
	}
	if (W.dir[0])
		write_metrics_to(W.dir, W.mbuf, len);
	if (W.pfdir[0])
		write_metrics_to(W.pfdir, W.mbuf, len);
	W.last_metrics_ns = gt_now_ns();
}

/* Closing counters: totals per API, so a metrics-only trace still says what was called. */
static void emit_counters(void)
{
	for (int i = 0; i < GT_API_N; i++) {
		uint64_t cnt = gt_tap_api_total(i, NULL);
		if (!cnt)
			continue;
		char name[128];
		int n = snprintf(name, sizeof(name), "calls:%s", gt_api_names[i]);
		struct gt_rec_counter c;
		memset(&c, 0, sizeof(c));
		c.h.type = GT_REC_COUNTER;
		c.h.size = sizeof(c);
		c.name_id = gt_strtab_intern(&gt_tap.strs, name, (size_t)n);
		c.device = UINT32_MAX;
		c.ts_ns = gt_now_ns();
		c.value = (double)cnt;
		gt_strtab_pending(&gt_tap.strs, out_string, NULL);
		out_records((unsigned char *)&c, sizeof(c), 1);
	}
	struct gt_rec_counter c;
	memset(&c, 0, sizeof(c));
	c.h.type = GT_REC_COUNTER;
	c.h.size = sizeof(c);
	c.name_id = gt_strtab_intern(&gt_tap.strs, "memory_used_bytes", 17);
	c.device = UINT32_MAX;
	c.ts_ns = gt_now_ns();
	c.value = (double)atomic_load(&gt_tap.mem_used);
	gt_strtab_pending(&gt_tap.strs, out_string, NULL);
	out_records((unsigned char *)&c, sizeof(c), 1);
}

static void close_outputs(int keep_partial)
{
	if (W.tw_open) {
		if (keep_partial || W.tw_failed) {
			if (W.tw_failed)
				gt_tw_discard(&W.tw);
			else
				gt_tw_abandon(&W.tw); /* what was recorded reaches the .partial */
		} else {
			int rc = gt_tw_close(&W.tw, gt_now_ns(), atomic_load(&gt_tap.pool.lost),
					     atomic_load(&gt_tap.cupti_dropped),
					     atomic_load(&gt_tap.gpu_incomplete) ? GT_FILE_GPU_INCOMPLETE : 0);
			if (rc < 0)
				gt_warn("cannot finish %s: %s", W.tw.path, strerror(-rc));
		}
		W.tw_open = 0;
	}
	for (int i = 0; i < 2; i++) {
		if (W.tl_fd[i] >= 0)
			close(W.tl_fd[i]);
		W.tl_fd[i] = -1;
	}
}

static void *writer_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&W.stop)) {
		struct pollfd pfd = {.fd = W.efd, .events = POLLIN};
		if (poll(&pfd, W.efd >= 0 ? 1 : 0, gt_capture_tap_busy() ? 2 : 100) > 0) {
			uint64_t v;
			if (read(W.efd, &v, sizeof(v)) < 0) {
				/* nothing: the wake-up is only a hint */
			}
		}
		gt_clock_sync();
		gt_sources_flush(0);
		drain();
		/* a block waits at most 100 ms (docs/tap.md): what a killed process loses is bounded */
		if (W.tw_open && !W.tw_failed) {
			int rc = gt_tw_flush_older(&W.tw, 100000000ull);
			if (rc < 0)
				tw_fail(rc);
		}
		if (gt_now_ns() - W.last_metrics_ns >= 1000000000ull)
			write_metrics();
	}
	if (atomic_load(&W.by_signal)) {
		/* The signalled thread may hold CUPTI's or malloc's locks: no source is asked to flush.  What
		 * CUPTI had not handed over at the last periodic flush is missing, and the trace says so. */
		if (atomic_load(&gt_tap.cupti_active)) {
			struct gt_rec_note nt;
			memset(&nt, 0, sizeof(nt));
			nt.h.type = GT_REC_NOTE;
			nt.h.size = sizeof(nt);
			nt.what = GT_NOTE_GPU_FLUSH_SKIPPED;
			nt.ts_ns = gt_now_ns();
			out_records((unsigned char *)&nt, sizeof(nt), 1);
		}
	} else {
		gt_sources_flush(1);
	}
	drain();
	if (W.tw_open)
		emit_counters();
	tl_flush();
	write_metrics();
	close_outputs(0);
	atomic_store(&W.done, 1);
	return NULL;
}

void gt_tap_wake_writer(void)
{
	uint64_t one = 1;
	if (W.efd >= 0 && write(W.efd, &one, sizeof(one)) < 0) {
		/* the writer polls anyway */
	}
}

static int start_writer(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	atomic_store(&W.stop, 0);
	atomic_store(&W.done, 0);
	int rc = pthread_create(&W.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	W.thread_running = rc == 0;
	if (rc)
		gt_warn("cannot start the writer thread: %s; nothing will be recorded", strerror(rc));
	return rc ? -1 : 0;
}

/* Directories and files of this process. Failures give one warning each; the program goes on. */
static void open_outputs(int forked)
{
	const struct gt_tap_config *c = &gt_tap.cfg;
	W.dir[0] = W.pfdir[0] = '\0';
	W.tw_open = W.tw_failed = 0;
	if (c->out_dir) {
		int rc = mkdir_p(c->out_dir);
		snprintf(W.dir, sizeof(W.dir), "%s/%s", c->out_dir, gt_tap.proc);
		/* rank<R> goes to the first process of the rank that touches CUDA: creating the folder
		 * is the claim; a later one (an exec'd child of a traced one) adds its pid */
		if (rc == 0 && mkdir(W.dir, 0755) < 0) {
			rc = -errno;
			if (rc == -EEXIST && !strncmp(gt_tap.proc, "rank", 4) && !strstr(gt_tap.proc, "-pid")) {
				size_t n = strlen(gt_tap.proc);
				snprintf(gt_tap.proc + n, sizeof(gt_tap.proc) - n, "-pid%ld", (long)getpid());
				snprintf(W.dir, sizeof(W.dir), "%s/%s", c->out_dir, gt_tap.proc);
				rc = mkdir(W.dir, 0755) < 0 ? -errno : 0;
			}
			if (rc == -EEXIST)
				rc = 0; /* pid<P>: the same process again (it exec'd itself) */
		}
		if (rc < 0) {
			gt_warn("cannot create output directory %s: %s; this process is not recorded there", W.dir,
				strerror(-rc));
			W.dir[0] = '\0';
		}
	}
	if (c->pflog_dir) {
		if (forked)
			snprintf(W.pfdir, sizeof(W.pfdir), "%s/%s", c->pflog_dir, gt_tap.proc);
		else
			snprintf(W.pfdir, sizeof(W.pfdir), "%s", c->pflog_dir);
		int rc = mkdir_p(W.pfdir);
		if (rc < 0) {
			gt_warn("cannot create PFLOG directory %s: %s; metrics.log is not written there", W.pfdir,
				strerror(-rc));
			W.pfdir[0] = '\0';
		}
	}
	if (W.dir[0]) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/" GT_PROC_TRACE, W.dir);
		int rc = gt_tw_open(&W.tw, path, gt_tap.proc, gt_tap.host, (uint32_t)getpid(), gt_tap.start_ns,
				    (c->metrics_only ? GT_FILE_METRICS_ONLY : 0) |
					    (gt_capture_tap_mode() ? GT_FILE_CAPTURE : 0));
		if (rc < 0)
			gt_warn("cannot create %s: %s", path, strerror(-rc));
		else
			W.tw_open = 1;
		gt_sources_start(W.dir);
	}
	const char *dirs[2] = {W.dir, W.pfdir};
	for (int i = 0; i < 2; i++) {
		W.tl_fd[i] = -1;
		if (!dirs[i][0] || !gt_tap.want_api_recs)
			continue;
		char path[4200];
		snprintf(path, sizeof(path), "%s/" GT_PROC_TIMELINE, dirs[i]);
		W.tl_fd[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	}
	W.lost_reported = W.cupti_reported = W.nobuf_reported = 0;
	W.tllen = 0;
	W.last_metrics_ns = 0;
}


int gt_writer_start(int forked)
{
	if (!W.items) {
		W.nitems_cap = (size_t)gt_tap.pool.nchunks + GT_MAX_THREADS;
		W.items = gt_tap_map_zero(sizeof(struct gt_item) * W.nitems_cap);
		if (!W.items) {
			gt_warn("cannot reserve the writer's memory; nothing will be recorded");
			return -1;
		}
	}
	W.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	open_outputs(forked);
	return start_writer();
}

/* Tell the writer to finish; async-signal-safe. */
static void request_stop(void)
{
	atomic_store(&W.stop, 1);
	gt_tap_wake_writer();
}

void gt_writer_stop(void)
{
	request_stop();
	if (W.thread_running) {
		pthread_join(W.thread, NULL);
		W.thread_running = 0;
	}
}

void gt_writer_stop_from_signal(void)
{
	/* The writer does the final drain; told that a signal started it, it makes no CUPTI call and
	 * frees nothing, so locks held by the interrupted thread cannot stop it. */
	atomic_store(&W.by_signal, 1);
	request_stop();
	/* bounded wait: if the writer cannot finish, the files stay marked partial */
	for (int i = 0; i < 3000 && W.thread_running && !atomic_load(&W.done); i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

void gt_writer_forget(void)
{
	if (W.tw_open) {
		gt_tw_discard(&W.tw); /* the parent's file and pending block */
		W.tw_open = 0;
	}
	for (int i = 0; i < 2; i++) {
		if (W.tl_fd[i] >= 0)
			close(W.tl_fd[i]);
		W.tl_fd[i] = -1;
	}
	if (W.efd >= 0)
		close(W.efd); /* shared with the parent: its writer's wake-ups are not ours */
	W.efd = -1;
	W.thread_running = 0; /* the parent's thread does not exist here: nothing to join */
	atomic_store(&W.by_signal, 0);
	atomic_store(&W.stop, 0);
	atomic_store(&W.done, 0);
	W.dir[0] = W.pfdir[0] = '\0';
}

const char *gt_writer_dir(void)
{
	return W.dir;
}
