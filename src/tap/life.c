/*
 * The library's life (tap/tap.h): set-up as it loads (settings, memory, the
 * process's name; nothing on disk, no thread), going live on the process's
 * first CUDA call (folders, files, writer thread, signal handlers: a process
 * that never touches CUDA leaves no trace), the final flush (exit,
 * SIGTERM/SIGINT, gputap_stop), and the fork child, which only resets state.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/log.h"
#include "core/memgen.h"
#include "tap/api.h"
#include "tap/capture_tap.h"
#include "tap/cupti.h"
#include "tap/hold.h"
#include "tap/pcsamp.h"
#include "tap/sources.h"
#include "tap/rmetrics.h"
#include "tap/tap.h"
#include "tap/writer.h"

struct gt_tap_state gt_tap = {.cap_live = 1}; /* no capture windows: records from the start */
_Atomic int64_t gt_clock_offset;
pthread_key_t gt_tap_thread_key;

#define GT_CHUNK_SIZE (64u * 1024u)
#define GT_STR_CAP (1u << 16)
#define GT_STR_ARENA (8u << 20)
#define GT_PTR_CAP (1u << 18)

enum { GT_OFF, GT_ARMED, GT_LIVE, GT_FINISHED };

static struct {
	pthread_once_t once;
	_Atomic int state;     /* GT_OFF .. GT_FINISHED */
	pthread_mutex_t mu;    /* going live */
	int forked;            /* this process is a fork child of a traced one */
	_Atomic int finishing; /* the final flush started */
	struct sigaction old_term, old_int;
	int sig_installed[2];
} L = {.once = PTHREAD_ONCE_INIT, .mu = PTHREAD_MUTEX_INITIALIZER};


static void set_state(int st)
{
	atomic_store(&L.state, st);
	atomic_store(&gt_tap.armed, st == GT_ARMED);
}

void gt_clock_sync(void)
{
	struct timespec r, m;
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	int64_t off = ((int64_t)r.tv_sec - (int64_t)m.tv_sec) * 1000000000ll + (r.tv_nsec - m.tv_nsec);
	atomic_store_explicit(&gt_clock_offset, off, memory_order_relaxed);
}

void *gt_tap_map_zero(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static const char *env_get(const char *name)
{
	return getenv(name);
}

/* The name before the claim: which process of a rank gets rank<R> is settled when the folder is
 * created (tap/writer.c), as processes that never touch CUDA make none. */
static void name_process(int forked)
{
	gt_tap_proc_name(gt_tap.proc, sizeof(gt_tap.proc), gt_tap_rank(env_get), NULL, (long)getpid(), forked);
}

/* ---- signals: installed when the process goes live, if the program left them at their default ---- */

static void on_signal(int sig)
{
	int saved = errno;
	/* async-signal-safe only: atomics, the writer's signal stop, sigaction, raise */
	if (atomic_load(&L.state) == GT_LIVE && !atomic_exchange(&L.finishing, 1)) {
		atomic_store(&gt_tap.on, 0);
		atomic_store(&gt_tap.stopped, 1);
		gt_writer_stop_from_signal();
	}
	struct sigaction *old = sig == SIGTERM ? &L.old_term : &L.old_int;
	sigaction(sig, old, NULL);
	errno = saved;
	if (old->sa_handler == SIG_DFL)
		raise(sig);
}

static void install_signals(void)
{
	int sigs[2] = {SIGTERM, SIGINT};
	struct sigaction *olds[2] = {&L.old_term, &L.old_int};
	for (int i = 0; i < 2; i++) {
		struct sigaction cur;
		if (L.sig_installed[i] || sigaction(sigs[i], NULL, &cur) < 0 || (cur.sa_flags & SA_SIGINFO) ||
		    cur.sa_handler != SIG_DFL)
			continue; /* the program handles it (or ignores it): leave it alone */
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		if (sigaction(sigs[i], &sa, olds[i]) == 0)
			L.sig_installed[i] = 1;
	}
}

/* ---- fork ---- */

/* The fork child: only state is reset (no CUDA call, no thread joined, nothing created); it goes
 * live, with a folder of its own, if it touches CUDA itself. */
static void atfork_child(void)
{
	int st = atomic_load(&L.state);
	if (st != GT_ARMED && st != GT_LIVE)
		return;
	atomic_store(&gt_tap.on, 0);
	atomic_fetch_add(&gt_tap.gen, 1);
	gt_tls.slot = NULL;
	atomic_store(&gt_tap.cupti_active, 0);
	gt_writer_forget();
	for (unsigned i = 0, n = atomic_load(&gt_tap.nslots); i < n; i++) {
		atomic_store(&gt_tap.slots[i].used, 0);
		atomic_store(&gt_tap.slots[i].cur, NULL);
	}
	gt_pool_init(&gt_tap.pool, gt_tap.pool.mem, (size_t)gt_tap.pool.nchunks * gt_tap.pool.chunk_size,
		     gt_tap.pool.chunk_size);
	gt_ptrtab_clear(&gt_tap.ptrs);
	gt_strtab_mark_unwritten(&gt_tap.strs);
	gt_tap_counters_reset();
	atomic_store(&gt_tap.cupti_dropped, 0);
	atomic_store(&gt_tap.cupti_no_buffer, 0);
	atomic_store(&gt_tap.gpu_incomplete, 0);
	atomic_store(&L.finishing, 0);
	gt_tap.start_ns = gt_now_ns();
	name_process(1);
	L.forked = 1;
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER; /* a parent's thread may have held it */
	L.mu = fresh;
	set_state(GT_ARMED);
}

/* ---- set-up as the library loads (or at gputap_start): memory, names; nothing on disk ---- */

static int prepare(int at_load)
{
	struct gt_tap_config *c = &gt_tap.cfg;
	if (!gt_real_dlsym) {
		gt_warn("the C library's dlsym was not found (neither by version nor in its symbol table): "
			"nothing is recorded");
		return -1;
	}
	gt_clock_sync();
	gt_ticks_init(c->tsc); /* before any hooked call can count ticks */
	gt_tap.trace = c->metrics_only ? 0 : c->trace;
	gt_tap.want_api_recs = !c->metrics_only && ((c->trace & GT_TR_API) || c->pflog_dir);
	gt_tap.start_ns = gt_now_ns();
	struct gt_buffer_split split;
	gt_tap_buffer_split(c->buffer_bytes, (gt_tap.trace & GT_TR_GPU) != 0,
			    &split);
	gt_tap.cupti_buf_bytes = split.cupti_buf_bytes;
	gt_tap.cupti_nbufs = split.cupti_nbufs;
	gt_capture_tap_init(c->capture, gt_tap.start_ns);
	gt_tap_stamp_update(); /* after every input of it is set */
	if (gethostname(gt_tap.host, sizeof(gt_tap.host) - 1) < 0)
		gt_tap.host[0] = '\0';
	name_process(0);

	size_t strmem = gt_strtab_mem_size(GT_STR_CAP, GT_STR_ARENA);
	void *pool = gt_tap_map_zero(split.pool_bytes);
	void *slots = gt_tap_map_zero(sizeof(struct gt_slot) * GT_MAX_THREADS);
	void *strs = gt_tap_map_zero(strmem);
	void *ptrs = gt_tap_map_zero(sizeof(struct gt_ptrtab_slot) * GT_PTR_CAP);
	if (!pool || !slots || !strs || !ptrs || gt_pool_init(&gt_tap.pool, pool, split.pool_bytes, GT_CHUNK_SIZE) < 0 ||
	    gt_strtab_init(&gt_tap.strs, strs, GT_STR_CAP, GT_STR_ARENA) < 0 ||
	    gt_ptrtab_init(&gt_tap.ptrs, ptrs, GT_PTR_CAP) < 0) {
		gt_warn("cannot reserve %llu MiB of record memory; nothing will be recorded",
			(unsigned long long)(c->buffer_bytes >> 20));
		return -1;
	}
	gt_tap.slots = slots;
	gt_tap.memgen = gt_memgen_attach(getenv(GT_MEMGEN_ENV)); /* NULL: the vram sampler keeps its own pace */
	for (int i = 0; i < GT_API_N; i++)
		gt_tap.api_name_id[i] = gt_strtab_intern(&gt_tap.strs, gt_api_names[i], strlen(gt_api_names[i]));
	if (c->hold && !at_load)
		gt_warn("GPUTAP_HOLD: launch hold needs the tap from the program's start (not gputap_start); "
			"launches run unchanged");
	else
		gt_hold_setup();
	if (pthread_key_create(&gt_tap_thread_key, gt_tap_thread_exit) != 0)
		return -1;
	pthread_atfork(NULL, NULL, atfork_child);
	atexit(gt_tap_finish); /* lint-ok: runs before library destructors, while CUDA and CUPTI are still loaded */
	set_state(GT_ARMED);
	return 0;
}

static void init_once(void)
{
	gt_bug_is_fatal = 0;
	gt_resolve_init();
	struct gt_tap_config *c = &gt_tap.cfg;
	gt_tap_config_read(c, env_get);
	if (!c->out_dir && !c->pflog_dir) {
		if (c->hold)
			gt_warn("GPUTAP_HOLD needs the tap recording (GPUTAP_OUT or PFLOG, as gputap run sets): "
				"launches run unchanged");
		return; /* nothing asked for: record nothing, cost nothing */
	}
	prepare(1);
}

void gt_tap_init(void)
{
	pthread_once(&L.once, init_once);
}

/* ---- going live: the first CUDA call ---- */

static void go_live_locked(void)
{
	if (atomic_load(&L.state) != GT_ARMED)
		return;
	gt_clock_sync();
	if (gt_writer_start(L.forked) < 0) {
		set_state(GT_OFF);
		return;
	}
	install_signals();
	set_state(GT_LIVE);
	/* CUPTI's clients register with the switchboard (tap/cupti.h) before CUPTI can start (at cuInit,
	 * gt_tap.on set); range metrics follow ranges from here, those opened before the first CUDA call
	 * included */
	gt_rm_init_env();
	gt_pcs_init();
	gt_api_cupti_init();
	atomic_store(&gt_tap.on, 1);
	gt_info("recording %s (trace %s%s)", gt_tap.proc, gt_tap.cfg.metrics_only ? "metrics" : "records",
		gt_writer_dir()[0] ? "" : ", no GPUTAP_OUT");
}

void gt_tap_touch(void)
{
	if (__builtin_expect(atomic_load_explicit(&L.state, memory_order_acquire) != GT_ARMED, 1))
		return;
	int saved = errno;
	pthread_mutex_lock(&L.mu);
	go_live_locked();
	pthread_mutex_unlock(&L.mu);
	errno = saved;
}

int gt_tap_recording(void)
{
	int st = atomic_load(&L.state);
	return (st == GT_ARMED || st == GT_LIVE) && !atomic_load(&gt_tap.stopped);
}

/* In-process start (gputap_start): the same set-up, with the output directory given (or none). */
int gt_tap_start_inprocess(const char *out_dir)
{
	static char dir[4096];
	gt_tap_init();
	pthread_mutex_lock(&L.mu);
	int rc = 0, st = atomic_load(&L.state);
	if (st == GT_FINISHED) {
		rc = -EALREADY; /* started once and stopped: the files are closed */
	} else if (st != GT_LIVE) {
		if (st == GT_OFF) {
			if (out_dir && *out_dir) {
				snprintf(dir, sizeof(dir), "%s", out_dir);
				gt_tap.cfg.out_dir = dir;
			}
			if (!gt_tap.slots)
				prepare(0);
		}
		go_live_locked();
		rc = atomic_load(&gt_tap.on) ? 0 : -ENOMEM;
	}
	pthread_mutex_unlock(&L.mu);
	return rc;
}

/* ---- a benchmark's in-process A/B (bench/overhead/ab.sh) ---- */

/* With GPUTAP_BENCH_AB=1 in the environment, gputap_bench_pass(1) makes every hook call straight
 * through, as before a process's first CUDA call (its cost is the `inert` mode's), and
 * gputap_bench_pass(0) makes them count and record again, so one process can time the same loop
 * both ways in alternating blocks: drift between processes, which on the GPU machines dwarfs the
 * tap's cost, cancels.  Calls made while passing are neither counted nor recorded, so this is for
 * benchmarks only; without the variable, or before the process went live or after its final flush
 * started, it changes nothing and returns -1.  gputap_bench_pass(2) also turns CUPTI's launch
 * callbacks off until the next gputap_bench_pass(0 or 1), so that B is CUPTI kernel activity
 * alone (-1 and nothing changed when the tap has no such callbacks).  gputap_bench_pass(3) turns
 * them off too but keeps the hooks counting, without API records (as outside a capture window):
 * B is what GPUTAP_TRACE=kernel costs, kernel activity with the counters of metrics.log (-1
 * with capture windows, which own that switch). */
GT_EXPORT int gputap_bench_pass(int pass)
{
	static int cb_off; /* under L.mu */
	const char *v = getenv("GPUTAP_BENCH_AB");
	if (!v || strcmp(v, "1") != 0 || pass < 0 || pass > 3 || (pass == 3 && gt_capture_tap_mode()))
		return -1;
	int rc = -1, cbs = pass >= 2;
	pthread_mutex_lock(&L.mu);
	if (atomic_load(&L.state) == GT_LIVE && !atomic_load(&L.finishing)) {
		rc = 0;
		if (cbs && !cb_off) {
			rc = gt_cupti_launch_callbacks(0);
			if (rc < 0 && pass == 3) /* no callbacks to turn off: the counting alone */
				rc = cbs = 0;
		} else if (!cbs && cb_off)
			rc = gt_cupti_launch_callbacks(1);
		if (rc == 0) {
			cb_off = cbs;
			atomic_store(&gt_tap.on, pass == 0 || pass == 3);
			if (!gt_capture_tap_mode()) { /* records only in A */
				atomic_store(&gt_tap.cap_live, pass != 3);
				gt_tap_stamp_update();
			}
		}
		if (atomic_load(&L.finishing)) /* the final flush began meanwhile: it owns `on` now */
			atomic_store(&gt_tap.on, 0);
	}
	pthread_mutex_unlock(&L.mu);
	return rc;
}

/* ---- the end ---- */

void gt_tap_finish(void)
{
	int st = atomic_load(&L.state);
	if (st == GT_ARMED) {
		/* never touched CUDA: nothing was recorded, nothing is written */
		pthread_mutex_lock(&L.mu);
		st = atomic_load(&L.state);
		if (st == GT_ARMED) {
			set_state(GT_FINISHED);
			atomic_store(&gt_tap.stopped, 1);
		}
		pthread_mutex_unlock(&L.mu);
		if (st == GT_ARMED)
			return;
	}
	if (st != GT_LIVE || atomic_exchange(&L.finishing, 1))
		return;
	gt_sources_stop(); /* while CUDA is still up (tap/sources.h) */
	atomic_store(&gt_tap.on, 0);
	atomic_store(&gt_tap.stopped, 1);
	gt_writer_stop();
	set_state(GT_FINISHED);
}

__attribute__((constructor)) static void gt_tap_constructor(void)
{
	gt_tap_init();
}

__attribute__((destructor)) static void gt_tap_destructor(void)
{
	gt_tap_finish();
}
