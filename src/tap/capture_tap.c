/*
 * Capture windows inside the library: see tap/capture_tap.h.
 */
#include "tap/capture_tap.h"
#include "tap/hold.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/capture.h"
#include "tap/cupti.h"
#include "tap/tap.h"
#include "trace/rundir.h"


#define DRAIN_MAX_NS 2000000000ull /* at most this long for a closed window's GPU records */

static struct {
	int mode;
	pthread_mutex_t mu;
	struct gt_capture cap;
	char spec[512];
	char control[4096]; /* DIR/<proc>/control, "" without an output folder */
	uint64_t launches_at_open, launches_in_window, graphs_at_open;
	int graphs_in_window; /* graph launches: their kernel count is not known, wait for quiet */
	int draining;
	uint64_t drain_since, kept_prev;
	uint64_t refused; /* windows that could not start: another CUPTI client */
	int host_only;    /* the open windows record no GPU activity: another CUPTI client holds it */
	uint64_t undelivered; /* windows closed before all their GPU records came */
} X = {.mu = PTHREAD_MUTEX_INITIALIZER};

int gt_capture_tap_mode(void) { return X.mode; }

void gt_capture_tap_init(const char *spec, uint64_t start_ns)
{
	if (!spec || !*spec)
		return;
	char err[256];
	if (gt_capture_parse(&X.cap, spec, err, sizeof(err)) < 0) {
		gt_warn("GPUTAP_CAPTURE: %s; the whole run is traced", err);
		return;
	}
	X.cap.start_ns = start_ns;
	snprintf(X.spec, sizeof(X.spec), "%s", spec);
	X.mode = 1;
	gt_cupti_capture_windows(); /* CUPTI starts at a window's open (tap/cupti.h) */
	atomic_store(&gt_tap.cap_live, 0);
	gt_tap_stamp_update();
}

static uint64_t launches(void)
{
	static const int ids[] = {GT_API_cuLaunchKernel, GT_API_cuLaunchKernelEx, GT_API_cuLaunchCooperativeKernel,
				  GT_API_cuGraphLaunch};
	uint64_t n = 0;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		n += gt_tap_api_total(ids[i], NULL);
	return n;
}

static void window_record(const struct gt_cap_window *w)
{
	char name[GT_CAP_NAME_MAX + 128];
	struct gt_capture one = {.n = 1};
	one.w[0] = *w;
	gt_capture_describe(&one, name, sizeof(name));
	if (X.host_only) {
		size_t o = strlen(name);
		snprintf(name + o, sizeof(name) - o, " [host only: another CUPTI client]");
	}
	struct gt_rec_range r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_RANGE;
	r.h.size = sizeof(r);
	r.name_id = gt_strtab_intern(&gt_tap.strs, name, strlen(name));
	r.kind = GT_RANGE_WINDOW;
	r.start_ns = w->opened_ns;
	r.end_ns = w->closed_ns ? w->closed_ns : gt_now_ns();
	r.range_id = gt_tap_range_id(gt_tap_slot());
	gt_tap_put(&r, sizeof(r));
}

/* Called with X.mu held, after an event changed the windows by d. */
static void apply(int d, const struct gt_capture *before)
{
	/* launch hold: launches held before a window opens or closes are issued first (docs/hold.md) */
	if (d && atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed))
		gt_hold_release(&gt_hold_q, GT_HOLD_REQUEST, 0);
	for (int i = 0; i < X.cap.n; i++)
		if (before->w[i].state == GT_CAP_OPEN && X.cap.w[i].state != GT_CAP_OPEN)
			window_record(&X.cap.w[i]);
	if (d > 0) {
		X.draining = 0;
		X.launches_at_open = launches();
		X.graphs_at_open = gt_tap_api_total(GT_API_cuGraphLaunch, NULL);
		X.host_only = 0;
		if (gt_cupti_capture_open() < 0) {
			X.refused++;
			X.host_only = 1;
			if (X.refused == 1) /* one message; each such window's name says it too */
				gt_warn("a capture window opened but another CUPTI client (nsys, ncu, or a profiler inside "
					"the program) holds this process: it records host-side calls only (no GPU "
					"activity), and so does every later window while that client holds CUPTI");
		}
		atomic_store(&gt_tap.cap_live, 1);
		gt_tap_stamp_update();
	} else if (d < 0) {
		atomic_store(&gt_tap.cap_live, 0);
		gt_tap_stamp_update();
		gt_cupti_capture_close();
		X.launches_in_window = launches() - X.launches_at_open;
		X.graphs_in_window = gt_tap_api_total(GT_API_cuGraphLaunch, NULL) != X.graphs_at_open;
		X.draining = 1;
		gt_tap_wake_writer(); /* the sooner CUPTI goes, the less the rest of the run pays */
		X.drain_since = gt_now_ns();
		X.kept_prev = (uint64_t)-1;
	}
}

#define EVENT(call)                                                                                \
	do {                                                                                       \
		pthread_mutex_lock(&X.mu);                                                         \
		struct gt_capture before = X.cap;                                                  \
		int d_ = (call);                                                                   \
		apply(d_, &before);                                                                \
		pthread_mutex_unlock(&X.mu);                                                       \
	} while (0)

void gt_capture_tap_range_open(uint32_t name_id, uint64_t key, int top_level, uint64_t t_ns)
{
	if (!X.mode)
		return;
	uint32_t len = 0;
	const char *s = gt_strtab_get(&gt_tap.strs, name_id, &len);
	char name[GT_CAP_NAME_MAX + 1];
	if (!s)
		return;
	if (len > GT_CAP_NAME_MAX)
		len = GT_CAP_NAME_MAX;
	memcpy(name, s, len);
	name[len] = 0;
	EVENT(gt_capture_range_open(&X.cap, name, key, top_level, t_ns));
}

void gt_capture_tap_range_close(uint64_t key, int top_level)
{
	if (!X.mode)
		return;
	EVENT(gt_capture_range_close(&X.cap, key, top_level, gt_now_ns()));
}

void gt_capture_tap_profiler(int start)
{
	if (!X.mode)
		return;
	EVENT(gt_capture_profiler(&X.cap, start, gt_now_ns()));
}

void gt_capture_tap_outputs(const char *proc_dir)
{
	if (!X.mode || !proc_dir || !*proc_dir)
		return;
	char p[4096];
	if (snprintf(p, sizeof(p), "%s/" GT_PROC_CONTROL, proc_dir) >= (int)sizeof(p))
		return;
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return;
	struct stat st;
	/* ours, a real folder, closed to others: else no trigger is accepted */
	if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		gt_warn("%s is not a private folder of this user: `gputap trigger` requests are ignored", p);
		return;
	}
	snprintf(X.control, sizeof(X.control), "%s", p);
	char pid[4096];
	snprintf(pid, sizeof(pid), "%s/pid", p);
	int fd = open(pid, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		char b[32];
		int n = snprintf(b, sizeof(b), "%d\n", (int)getpid());
		if (write(fd, b, (size_t)n) < 0) {
			/* only a convenience for `gputap trigger PID` */
		}
		close(fd);
	}
}

/* "duration_ms=N" or "iterations=N", one request per file */
static void read_request(const char *path, const char *ack_path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char buf[128] = "";
	ssize_t n = -1;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		n = read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	unlink(path);
	if (n < 0)
		return;
	buf[n] = 0;
	unsigned long long v = 0;
	uint64_t dur = 0, iters = 0;
	const char *msg;
	char out[160];
	if (sscanf(buf, "duration_ms=%llu", &v) == 1 && v > 0 && v < 86400000ull)
		dur = v * 1000000ull;
	else if (sscanf(buf, "iterations=%llu", &v) == 1 && v > 0 && v < 1000000000ull)
		iters = v;
	else if (strncmp(buf, "open", 4) != 0) {
		msg = "refused: bad request";
		goto ack;
	}
	pthread_mutex_lock(&X.mu);
	struct gt_capture before = X.cap;
	int d = gt_capture_trigger(&X.cap, dur, iters, gt_now_ns());
	if (d >= 0)
		apply(d, &before);
	uint64_t nth = X.cap.windows_opened;
	pthread_mutex_unlock(&X.mu);
	if (d == -2) {
		msg = "refused: no capture window left (at most 16)";
		goto ack;
	}
	if (iters)
		snprintf(out, sizeof(out), "window armed: opens with the next top-level range, for %llu",
			 (unsigned long long)iters);
	else
		snprintf(out, sizeof(out), "window %llu opened", (unsigned long long)nth);
	msg = out;
ack:;
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", ack_path);
	int af = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (af >= 0) {
		if (write(af, msg, strlen(msg)) < 0 || write(af, "\n", 1) < 0) {
			/* the requester times out and says so */
		}
		close(af);
		rename(tmp, ack_path);
	}
}

static void poll_requests(void)
{
	if (!X.control[0])
		return;
	DIR *d = opendir(X.control);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "request.", 8) != 0 || strstr(e->d_name, ".tmp"))
			continue;
		char path[4400], ack[4400];
		snprintf(path, sizeof(path), "%s/%s", X.control, e->d_name);
		snprintf(ack, sizeof(ack), "%s/ack.%s", X.control, e->d_name + 8);
		read_request(path, ack);
	}
	closedir(d);
}

void gt_capture_tap_tick(void)
{
	if (!X.mode)
		return;
	EVENT(gt_capture_tick(&X.cap, gt_now_ns()));
	poll_requests();
	pthread_mutex_lock(&X.mu);
	int draining = X.draining && !atomic_load(&gt_tap.cap_live);
	uint64_t want = X.launches_in_window, since = X.drain_since, prev = X.kept_prev;
	int graphs = X.graphs_in_window;
	pthread_mutex_unlock(&X.mu);
	if (!draining)
		return;
	/* the GPU work launched in the window is kept whole: wait for its records, then finalize
	 * (with graph launches the kernel count is unknown: wait until two flushes bring nothing new) */
	uint64_t kept = gt_cupti_capture_flush();
	int timed_out = gt_now_ns() - since > DRAIN_MAX_NS;
	if ((kept >= want && (!graphs || kept == prev)) || timed_out) {
		pthread_mutex_lock(&X.mu);
		if (X.draining && !atomic_load(&gt_tap.cap_live)) {
			X.draining = 0;
			if (timed_out && kept < want)
				X.undelivered++;
			gt_info("capture window closed: %llu of %llu kernels delivered after %.3f ms",
				(unsigned long long)kept, (unsigned long long)want, (double)(gt_now_ns() - since) / 1e6);
			gt_cupti_capture_request_finalize();
		}
		pthread_mutex_unlock(&X.mu);
	} else {
		pthread_mutex_lock(&X.mu);
		X.kept_prev = kept;
		pthread_mutex_unlock(&X.mu);
	}
}

int gt_capture_tap_busy(void)
{
	return X.mode && X.draining;
}

void gt_capture_tap_finish(void)
{
	if (!X.mode)
		return;
	EVENT(gt_capture_close_all(&X.cap, gt_now_ns()));
	if (X.undelivered)
		gt_warn("%llu capture window(s) ended before CUPTI delivered all the GPU work launched in them "
			"(waited 2 s each): their last kernels may be missing",
			(unsigned long long)X.undelivered);
}
