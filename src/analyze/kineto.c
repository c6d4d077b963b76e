/*
 * analyze/kineto.c — PyTorch profiler / Kineto Chrome traces (.json or .json.gz), streamed through
 * analyze/jscan (yajl's callback interface) while a thread of its own decompresses the file: only the
 * fields of the current event are held, never the document.
 *
 * Used: traceEvents[] with cat "kernel" (GPU kernels), "gpu_memcpy", "gpu_memset" (memory
 * operations), and ProfilerStep#N (or the --nvtx tag) on cat "user_annotation"/"cpu_op" as the
 * iterations; cat "cuda_runtime"/"cuda_driver" (the launches: ts and args.correlation, matched with
 * the GPU events' args.correlation); ts/dur in µs (decimal, converted to ns exactly); the GPU is
 * args.device (else pid).  Each file is one source, named "rank<distributedInfo.rank>" (else the file
 * name).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "analyze/an_internal.h"
#include "analyze/input.h"
#include "analyze/jscan.h"
#include "analyze/findings.h"
#include "core/csvio.h"

enum fld {
	F_NONE, F_NAME, F_CAT, F_PH, F_TS, F_DUR, F_PID, F_DEVICE, F_RANK, F_CORR, F_PG, F_SEQ, F_NIN, F_NOUT, F_DTYPE,
	F_CNAME, F_SRC, F_DST,
	F_STREAM, F_BYTES, F_BW, F_GRID, F_BLOCK, F_DP_ID, F_DP_SMS, F_DP_MAJ, F_DP_MIN, F_BPS /* findings: args grid/block, deviceProperties */
};

/* A name longer than this is cut (at a character boundary); C++ template names of a few KiB are
 * kept whole, so that two kernels never merge into one row. */
#define NAME_MAX_BYTES (1u << 20)

struct kst {
	struct gt_an_ctx *c;
	const char *path;
	int source;
	int depth;
	int in_events;   /* inside the traceEvents array */
	int events_key;  /* the last root key was traceEvents */
	int dist_key;    /* the last root key was distributedInfo */
	char root;       /* what the document is: 'o' an object, 'a' a list, 's' a scalar, 0 nothing yet */
	int saw_events;  /* a traceEvents list was opened */
	int in_args;     /* depth of the args object, 0 if not inside */
	enum fld fld;
	uint64_t nev;
	/* current event */
	char *name; /* the current event's name, name_cap bytes allocated */
	size_t name_len, name_cap;
	int name_trunc;
	char cat[32], ph[4];
	uint64_t ts, dur;
	int has_ts, has_dur, has_dev;
	long pid, device;
	uint64_t corr;
	uint64_t stream, bytes;
	double gbps; /* args "memory bandwidth (GB/s)" (Kineto's, from the ns duration), 0 none */
	int has_stream;
	uint64_t ngpu;       /* GPU events of this file */
	char cats[8][24];    /* the first categories seen, for the message when there is no GPU event */
	char seen_cat[8][32]; /* the categories looked up, and their classes: a trace has a handful, and */
	int seen_kc[8];       /* consecutive events alternate between them (kernel, cuda_runtime, cpu_op) */
	int nseen, last_seen;
	int ncats;
	char pg[64];  /* args "Process Group Name" of an NCCL kernel (PyTorch), "" if none */
	uint64_t seq; /* args "Seq", GT_SEQ_UNKNOWN if none */
	uint64_t nin, nout; /* args "In msg nelems", "Out msg nelems" of an NCCL kernel (PyTorch), 0 if none */
	char cname[8];      /* args "Collective name" when "send" or "recv", else "" */
	long src, dst;      /* args "Src Rank" (a recv's), "Dst Rank" (a send's), -1 if none */
	char dtype[24];     /* args "dtype" (PyTorch's name: "Float", "BFloat16", ...), "" if none */
	long rank; /* distributedInfo.rank, -1 if none */
	/* for the findings (analyze/findings.h): kernel grid and block, the devices' SM counts */
	uint32_t grid[3], block[3];
	int arr, arr_i;    /* the args array being read (F_GRID, F_BLOCK), its next index */
	int dp_key, in_dp; /* the last root key was deviceProperties; inside its list */
	uint64_t dp[4];    /* id, numSms, computeMajor, computeMinor of the device being read */
	double bps;        /* args "blocks per SM" of a kernel: its grid / the SM count */
	int sms_told;      /* the SM count was derived from it */
	char err[512];
	int failed;
};

static int fail(struct kst *k, const char *what)
{
	snprintf(k->err, sizeof(k->err), "%s: event %llu (\"%.60s\"): %s", k->path, (unsigned long long)k->nev,
		 k->name, what);
	k->failed = 1;
	return 0;
}

/* "ts" or "dur" (µs, as written): a time from 0 to GT_AN_MAX_NS once in ns, else the parse stops */
static int k_time(struct kst *k, const char *s, size_t len)
{
	uint64_t v = 0;
	const char *what = k->fld == F_TS ? "ts" : "dur";
	int r = gt_an_parse_fixed(s, len, 3, &v);
	if (r == 0 && v > GT_AN_MAX_NS)
		r = GT_AN_RANGE;
	if (r < 0) {
		char m[200];
		snprintf(m, sizeof(m), "\"%s\" %.*s is %s", what, (int)(len < 40 ? len : 40), s,
			 r == GT_AN_NEGATIVE ? "negative"
			 : r == GT_AN_RANGE  ? "out of range (a time in µs, at most 9223372036854775)"
					     : "not a number");
		return fail(k, m);
	}
	if (k->fld == F_TS) {
		k->ts = v;
		k->has_ts = 1;
	} else {
		k->dur = v;
		k->has_dur = 1;
	}
	return 1;
}

/* "pid", "args.device", "distributedInfo.rank": an id kept exact (GT_AN_MAX_ID), else refused; a
 * "pid" that is not one only marks a track that is no GPU's (checked when a GPU event uses it). */
static int k_id(struct kst *k, const char *s, size_t len, int quoted)
{
	int64_t v = -1;
	if (!quoted && gt_an_parse_id(s, len, &v) == 0) {
		if (k->fld == F_PID)
			k->pid = (long)v;
		else if (k->fld == F_RANK)
			k->rank = (long)v;
		else {
			k->device = (long)v;
			k->has_dev = 1;
		}
		return 1;
	}
	if (k->fld == F_PID) {
		k->pid = -1;
		return 1;
	}
	char m[200];
	int n = (int)(len < 40 ? len : 40);
	const char *q = quoted ? "\"" : "";
	if (k->fld == F_RANK) {
		snprintf(k->err, sizeof(k->err), "%s: distributedInfo.rank %s%.*s%s is not a rank (" GT_AN_ID_RANGE ")",
			 k->path, q, n, s, q);
		k->failed = 1;
		return 0;
	}
	snprintf(m, sizeof(m), "args.device %s%.*s%s is not a device id (" GT_AN_ID_RANGE ")", q, n, s, q);
	return fail(k, m);
}

static void reset_event(struct kst *k)
{
	k->name[0] = '\0';
	k->name_len = 0;
	k->name_trunc = 0;
	k->cat[0] = k->ph[0] = '\0';
	k->has_ts = k->has_dur = k->has_dev = 0;
	k->pid = k->device = 0;
	k->ts = k->dur = 0;
	k->corr = 0;
	k->stream = k->bytes = 0;
	k->gbps = 0;
	k->has_stream = 0;
	k->pg[0] = '\0';
	k->seq = GT_SEQ_UNKNOWN;
	k->nin = k->nout = 0;
	k->cname[0] = '\0';
	k->src = k->dst = -1;
	k->dtype[0] = '\0';
	k->in_args = 0;
	memset(k->grid, 0, sizeof(k->grid));
	memset(k->block, 0, sizeof(k->block));
	k->bps = 0;
}

static int k_start_map(void *ctx)
{
	struct kst *k = ctx;
	if (k->depth == 0)
		k->root = 'o';
	k->depth++;
	if (k->in_events && k->depth == 3) {
		reset_event(k);
		k->nev++;
	}
	if (k->in_dp && k->depth == 3)
		memset(k->dp, 0, sizeof(k->dp));
	if (k->fld == F_NONE && k->in_events && k->depth == 4 && k->in_args == -1)
		k->in_args = 4;
	k->fld = F_NONE;
	return 1;
}

/* Categories as every PyTorch version has spelled them: Kineto's "kernel", "gpu_memcpy",
 * "cuda_runtime", … and the capitalised names of the first profiler versions ("Kernel", "Memcpy",
 * "Memset", "Runtime", "Operator"). */
enum kcat { KC_OTHER, KC_KERNEL, KC_MEMOP, KC_RUNTIME, KC_CPU, KC_SYNC };

static enum kcat cat_lookup(const char *cat)
{
	static const struct {
		const char *name;
		enum kcat c;
	} t[] = {
	    {"kernel", KC_KERNEL},	  {"gpu_memcpy", KC_MEMOP},	 {"gpu_memset", KC_MEMOP},
	    {"memcpy", KC_MEMOP},	  {"memset", KC_MEMOP},	 {"cuda_runtime", KC_RUNTIME},
	    {"cuda_driver", KC_RUNTIME},	  {"runtime", KC_RUNTIME},	 {"driver", KC_RUNTIME},
	    {"user_annotation", KC_CPU}, {"user annotation", KC_CPU}, {"cpu_op", KC_CPU},
	    {"operator", KC_CPU},	  {"trace", KC_CPU},		 {"cuda_sync", KC_SYNC},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcasecmp(cat, t[i].name) == 0)
			return t[i].c;
	return KC_OTHER;
}

/* Consecutive events mostly share their category: remember the last one. */
static enum kcat cat_of(struct kst *k)
{
	if (k->nseen && strcmp(k->cat, k->seen_cat[k->last_seen]) == 0)
		return (enum kcat)k->seen_kc[k->last_seen];
	for (int i = 0; i < k->nseen; i++)
		if (strcmp(k->cat, k->seen_cat[i]) == 0) {
			k->last_seen = i;
			return (enum kcat)k->seen_kc[i];
		}
	int i = k->nseen < 8 ? k->nseen++ : 7; /* more than 8: the last slot is looked up again */
	memcpy(k->seen_cat[i], k->cat, sizeof(k->seen_cat[i]));
	k->seen_kc[i] = (int)cat_lookup(k->cat);
	k->last_seen = i;
	return (enum kcat)k->seen_kc[i];
}

static void note_cat(struct kst *k)
{
	if (!k->cat[0] || k->ncats == 8)
		return;
	for (int i = 0; i < k->ncats; i++)
		if (strcmp(k->cats[i], k->cat) == 0)
			return;
	snprintf(k->cats[k->ncats++], sizeof(k->cats[0]), "%s", k->cat);
}

static int handle_event(struct kst *k)
{
	struct gt_an_ctx *c = k->c;
	int kind = 0;
	enum kcat kc = cat_of(k);
	if (kc == KC_KERNEL)
		kind = GT_NK_KERNEL;
	else if (kc == KC_MEMOP)
		kind = GT_NK_MEMOP;
	if (k->has_ts && k->has_dur && k->dur > GT_AN_MAX_NS - k->ts)
		return fail(k, "the event ends past the clock's range (\"ts\" + \"dur\")");
	if (!k->ngpu)
		note_cat(k);
	if (!kind && k->has_stream) { /* HTA counts these as GPU work */
		if (kc == KC_SYNC)
			c->hta_sync++;
		else
			c->hta_cpu_stream++;
	}
	if (kind) {
		/* a kernel's name is checked as UTF-8 when it is new to the name table (below), a copy's here */
		if (kind == GT_NK_MEMOP && !gt_utf8_valid((const unsigned char *)k->name, k->name_len))
			return fail(k, "\"name\" is not valid UTF-8");
		if (!k->has_ts || !k->has_dur)
			return fail(k, "a GPU event without \"ts\" or \"dur\"");
		if (!k->has_dev && k->pid < 0)
			return fail(k, "a GPU event without \"args.device\", and its \"pid\" is no device id");
		char mn[256];
		const char *nm = k->name;
		if (kind == GT_NK_MEMOP) {
			gt_an_memop_name(k->name, mn, sizeof(mn));
			nm = mn;
		}
		size_t nnames = c->names.n;
		long ni = gt_names_get(&c->names, kind, nm, strlen(nm));
		if (ni >= 0 && c->names.n > nnames && !gt_utf8_valid((const unsigned char *)k->name, k->name_len))
			return fail(k, "\"name\" is not valid UTF-8");
		long g = gt_tl_gpu(&c->tl, k->source, (int)(k->has_dev ? k->device : k->pid));
		if (ni < 0 || g < 0)
			return fail(k, "out of memory");
		c->names.v[ni].time_ns += (double)k->dur;
		c->names.v[ni].count++;
		if (gt_tl_op(&c->tl, (uint32_t)g, k->ts, k->ts + k->dur, c->names.v[ni].cat, k->corr, (uint32_t)ni,
			     (uint32_t)k->stream, kind == GT_NK_MEMOP ? k->bytes : 0) < 0)
			return fail(k, c->tl.err[0] ? c->tl.err : "out of memory");
		if (kind == GT_NK_MEMOP && k->bytes && k->gbps > 0) /* the copy's own ns duration */
			gt_tl_op_xdur(&c->tl, (uint64_t)llround((double)k->bytes / k->gbps));
		k->ngpu++;
		if (c->fd) { /* the findings: grids, copy memory kinds, memset sizes */
			int dev = (int)(k->has_dev ? k->device : k->pid), ck, sk, dk, frc;
			if (kind == GT_NK_KERNEL && !k->sms_told && k->bps > 0 && k->grid[0]) {
				/* no deviceProperties: the SM count from a kernel's grid and its blocks per SM */
				double b = (double)k->grid[0] * (k->grid[1] ? k->grid[1] : 1) * (k->grid[2] ? k->grid[2] : 1);
				gt_fd_device(c->fd, k->source, dev, (unsigned)llround(b / k->bps), 0, 0);
				k->sms_told = 1;
			}
			if (kind == GT_NK_KERNEL)
				frc = gt_fd_kernel(c->fd, k->source, dev, (uint32_t)k->stream, (uint32_t)ni, c->names.v[ni].name,
						   k->ts, k->ts + k->dur, k->grid, k->block);
			else if (strncasecmp(k->name, "Memset", 6) == 0)
				frc = gt_fd_memset(c->fd, k->source, dev, (uint32_t)k->stream, k->ts, k->ts + k->dur, k->bytes,
						   k->corr);
			else {
				gt_fd_kineto_copy(k->name, &ck, &sk, &dk);
				frc = gt_fd_memcpy(c->fd, k->source, dev, (uint32_t)k->stream, k->ts, k->ts + k->dur, k->bytes,
						   k->corr, ck, sk, dk);
			}
			if (frc < 0)
				return fail(k, "out of memory");
		}
		if (c->colls && c->names.v[ni].cat == GT_CAT_COMM &&
		    gt_colls_kernel(c->colls, k->source, (int)(k->has_dev ? k->device : k->pid), k->ts, k->ts + k->dur,
				    k->corr, k->name, k->pg, k->pg[0] ? k->seq : GT_SEQ_UNKNOWN,
				    /* NCCL's count: the smaller of the two (AllGather's input, ReduceScatter's output) */
				    k->nin && k->nout ? (k->nin < k->nout ? k->nin : k->nout) : k->nin ? k->nin : k->nout,
				    k->dtype) < 0)
			return fail(k, "out of memory");
		/* a send or receive: its peer, for the pair's name once this rank's number is known */
		if (c->colls && c->names.v[ni].cat == GT_CAT_COMM && k->cname[0] && (k->cname[0] == 's' ? k->dst : k->src) >= 0)
			gt_colls_p2p(c->colls, k->cname[0] == 's', k->cname[0] == 's' ? k->dst : k->src);
		if (kind == GT_NK_MEMOP)
			c->has_mem = 1;
		return 1;
	}
	if (c->fd && k->has_ts && (kc == KC_RUNTIME || kc == KC_CPU) &&
	    (kc == KC_RUNTIME ? gt_fd_api(c->fd, k->source, k->name, k->ts, k->ts + k->dur)
			      : gt_fd_cpu_op(c->fd, k->source, k->name, k->ts, k->ts + k->dur)) < 0)
		return fail(k, "out of memory");
	if (k->corr && kc == KC_RUNTIME) {
		if (k->has_ts && gt_tl_launch2(&c->tl, k->source, k->ts, k->ts + k->dur, k->corr, k->name, 0) < 0)
			return fail(k, c->tl.err[0] ? c->tl.err : "out of memory");
		return 1;
	}
	if (kc == KC_CPU && strcmp(k->ph, "X") == 0 &&
	    (strncasecmp(k->cat, "user", 4) == 0 || strncmp(k->name, "ProfilerStep#", 13) == 0)) {
		gt_an_range_seen(c, k->name, (double)k->dur, 1);
		if (k->has_ts)
			gt_an_range_at(c, k->source, k->name, k->ts, k->ts + k->dur);
	}
	if (kc == KC_CPU && strcmp(k->ph, "X") == 0 && gt_an_is_iter_range(c, k->name)) {
		if (!k->has_ts)
			return fail(k, "an iteration range without \"ts\"");
		c->has_nvtx = 1;
		c->nvtx_count++;
		c->nvtx_total_ns += (double)k->dur;
		if (gt_tl_range(&c->tl, k->source, k->ts, k->ts + k->dur) < 0)
			return fail(k, "out of memory");
	}
	return 1;
}

static int k_end_map(void *ctx)
{
	struct kst *k = ctx;
	if (k->in_args == k->depth)
		k->in_args = 0;
	if (k->in_events && k->depth == 3 && !handle_event(k))
		return 0;
	if (k->in_dp && k->depth == 3 && k->c->fd)
		gt_fd_device(k->c->fd, k->source, (int)k->dp[0], (unsigned)k->dp[1], (unsigned)k->dp[2], (unsigned)k->dp[3]);
	k->depth--;
	k->fld = F_NONE;
	return 1;
}

static int k_start_array(void *ctx)
{
	struct kst *k = ctx;
	if (k->depth == 0)
		k->root = 'a';
	k->depth++;
	if (k->depth == 2 && k->events_key)
		k->in_events = k->saw_events = 1;
	if (k->depth == 2 && k->dp_key)
		k->in_dp = 1;
	k->arr = k->depth == 5 && (k->fld == F_GRID || k->fld == F_BLOCK) ? (int)k->fld : 0;
	k->arr_i = 0;
	k->fld = F_NONE;
	return 1;
}

static int k_end_array(void *ctx)
{
	struct kst *k = ctx;
	if (k->depth == 2 && k->in_events)
		k->in_events = 0;
	if (k->depth == 2 && k->in_dp)
		k->in_dp = 0;
	if (k->depth == 5)
		k->arr = 0;
	k->depth--;
	return 1;
}

static int k_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct kst *k = ctx;
	k->fld = F_NONE;
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(s, lit, len) == 0)
	if (k->depth == 1) {
		k->events_key = IS("traceEvents");
		k->dist_key = IS("distributedInfo");
		k->dp_key = IS("deviceProperties");
	} else if (k->depth == 3 && k->in_dp) {
		k->fld = IS("id")	    ? F_DP_ID
			 : IS("numSms")	    ? F_DP_SMS
			 : IS("computeMajor") ? F_DP_MAJ
			 : IS("computeMinor") ? F_DP_MIN
					      : F_NONE;
	} else if (k->depth == 2 && k->dist_key && IS("rank")) {
		k->fld = F_RANK;
	} else if (k->in_events && k->depth == 3) {
		k->in_args = IS("args") ? -1 : 0; /* -1: armed, the next map opened is args */
		if (IS("name"))
			k->fld = F_NAME;
		else if (IS("cat"))
			k->fld = F_CAT;
		else if (IS("ph"))
			k->fld = F_PH;
		else if (IS("ts"))
			k->fld = F_TS;
		else if (IS("dur"))
			k->fld = F_DUR;
		else if (IS("pid"))
			k->fld = F_PID;
	} else if (k->in_events && k->depth == 4 && k->in_args == 4) {
		if (IS("device"))
			k->fld = F_DEVICE;
		else if (IS("correlation"))
			k->fld = F_CORR;
		else if (IS("Process Group Name"))
			k->fld = F_PG;
		else if (IS("Seq"))
			k->fld = F_SEQ;
		else if (IS("In msg nelems"))
			k->fld = F_NIN;
		else if (IS("Out msg nelems"))
			k->fld = F_NOUT;
		else if (IS("dtype"))
			k->fld = F_DTYPE;
		else if (IS("Collective name"))
			k->fld = F_CNAME;
		else if (IS("Src Rank"))
			k->fld = F_SRC;
		else if (IS("Dst Rank"))
			k->fld = F_DST;
		else if (IS("stream"))
			k->fld = F_STREAM;
		else if (IS("bytes"))
			k->fld = F_BYTES;
		else if (IS("memory bandwidth (GB/s)"))
			k->fld = F_BW;
		else if (IS("grid"))
			k->fld = F_GRID;
		else if (IS("block"))
			k->fld = F_BLOCK;
		else if (IS("blocks per SM"))
			k->fld = F_BPS;
	}
#undef IS
	return 1;
}


static int k_string(void *ctx, const unsigned char *s, size_t len)
{
	struct kst *k = ctx;
	if (k->depth == 0)
		k->root = 's';
	switch (k->fld) {
	case F_NAME: { /* checked as UTF-8 in handle_event, for the names that are kept */
		size_t n = gt_an_utf8_cut((const char *)s, len, NAME_MAX_BYTES);
		if (n + 1 > k->name_cap) {
			size_t nc = k->name_cap * 2;
			while (nc < n + 1)
				nc *= 2;
			char *nb = realloc(k->name, nc);
			if (!nb)
				return fail(k, "out of memory");
			k->name = nb;
			k->name_cap = nc;
		}
		memcpy(k->name, s, n);
		k->name[n] = '\0';
		k->name_len = n;
		break;
	}
	case F_CAT: {
		size_t n = len < sizeof(k->cat) - 1 ? len : sizeof(k->cat) - 1;
		memcpy(k->cat, s, n);
		k->cat[n] = '\0';
		break;
	}
	case F_PH: {
		size_t n = len < sizeof(k->ph) - 1 ? len : sizeof(k->ph) - 1;
		memcpy(k->ph, s, n);
		k->ph[n] = '\0';
		break;
	}
	case F_PG: {
		if (len < sizeof(k->pg)) {
			memcpy(k->pg, s, len);
			k->pg[len] = '\0';
			break;
		}
		/* too long to keep whole: a prefix (cut at a character boundary) and a hash of the whole
		 * name, so that two groups whose names share a long prefix stay two communicators */
		size_t n = gt_an_utf8_cut((const char *)s, len, sizeof(k->pg) - 18);
		snprintf(k->pg, sizeof(k->pg), "%.*s~%016llx", (int)n, (const char *)s,
			 (unsigned long long)gt_an_hash_name(0, (const char *)s, len));
		break;
	}
	case F_CNAME:
		if ((len == 4 && memcmp(s, "send", 4) == 0) || (len == 4 && memcmp(s, "recv", 4) == 0)) {
			memcpy(k->cname, s, 4);
			k->cname[4] = '\0';
		}
		break;
	case F_DTYPE: {
		size_t n = gt_an_utf8_cut((const char *)s, len, sizeof(k->dtype) - 1);
		memcpy(k->dtype, s, n);
		k->dtype[n] = '\0';
		break;
	}
	case F_PID: /* "pid": "Spans" etc.: not a GPU track */
	case F_DEVICE:
	case F_RANK:
		if (!k_id(k, (const char *)s, len, 1))
			return 0;
		break;
	case F_TS:
	case F_DUR:
		if (!k_time(k, (const char *)s, len))
			return 0;
		break;
	default: break;
	}
	k->fld = F_NONE;
	return 1;
}

static int k_number(void *ctx, const char *s, size_t len)
{
	struct kst *k = ctx;
	uint64_t v = 0;
	if (k->depth == 0)
		k->root = 's';
	if (k->arr && k->depth == 5) { /* an element of args.grid / args.block */
		if (k->arr_i < 3 && gt_an_parse_fixed(s, len, 0, &v) == 0 && v <= UINT32_MAX)
			(k->arr == F_GRID ? k->grid : k->block)[k->arr_i] = (uint32_t)v;
		k->arr_i++;
		return 1;
	}
	switch (k->fld) {
	case F_TS:
	case F_DUR:
		if (!k_time(k, s, len))
			return 0;
		break;
	case F_BPS: { /* a plain decimal (strtod needs a terminated copy) */
		char b[64];
		if (len < sizeof(b)) {
			memcpy(b, s, len);
			b[len] = '\0';
			double x = strtod(b, NULL);
			k->bps = isfinite(x) && x > 0 ? x : 0;
		}
		break;
	}
	case F_DP_ID:
	case F_DP_SMS:
	case F_DP_MAJ:
	case F_DP_MIN:
		if (gt_an_parse_fixed(s, len, 0, &v) == 0 && v <= UINT32_MAX)
			k->dp[k->fld - F_DP_ID] = v;
		break;
	case F_CORR:
		if (gt_an_parse_fixed(s, len, 0, &v) < 0)
			v = 0;
		k->corr = v;
		break;
	case F_SEQ:
		if (gt_an_parse_fixed(s, len, 0, &v) == 0)
			k->seq = v;
		break;
	case F_SRC:
	case F_DST:
		if (gt_an_parse_fixed(s, len, 0, &v) == 0 && v < (1u << 30))
			*(k->fld == F_SRC ? &k->src : &k->dst) = (long)v;
		break;
	case F_NIN:
	case F_NOUT:
		if (gt_an_parse_fixed(s, len, 0, &v) < 0)
			v = 0;
		*(k->fld == F_NIN ? &k->nin : &k->nout) = v;
		break;
	case F_STREAM:
		k->has_stream = 1;
		if (gt_an_parse_fixed(s, len, 0, &v) == 0 && v <= UINT32_MAX)
			k->stream = v;
		break;
	case F_BYTES:
		if (gt_an_parse_fixed(s, len, 0, &v) == 0)
			k->bytes = v;
		break;
	case F_BW: { /* bytes / ns: a plain decimal (strtod needs a terminated copy) */
		char b[64];
		if (len < sizeof(b)) {
			memcpy(b, s, len);
			b[len] = '\0';
			double g = strtod(b, NULL);
			k->gbps = isfinite(g) && g > 0 ? g : 0;
		}
		break;
	}
	case F_PID:
	case F_DEVICE:
	case F_RANK:
		if (!k_id(k, s, len, 0))
			return 0;
		break;
	default: break;
	}
	k->fld = F_NONE;
	return 1;
}

static int k_null(void *ctx)
{
	struct kst *k = ctx;
	if (k->depth == 0)
		k->root = 's';
	k->fld = F_NONE;
	return 1;
}
static int k_bool(void *ctx, int b)
{
	(void)b;
	return k_null(ctx);
}

static const yajl_callbacks kcb = {
    k_null, k_bool, NULL, NULL, k_number, k_string, k_start_map, k_map_key, k_end_map, k_start_array, k_end_array,
};

/* The input: a memory buffer, or a file (plain or gzip) decompressed by a thread of its own into a
 * ring of buffers while the parser works on the one before: zlib's time (a fifth of the whole) moves
 * off the parser's core.  Memory: RB_N * RB_SZ. */
#define RB_N 4
#define RB_SZ (1u << 18)
struct ksrc {
	int is_mem;      /* a memory buffer: */
	const char *mem;
	size_t memlen, mempos;
	gzFile gz; /* a file: read by the thread only, once it runs */
	pthread_t th;
	int threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *rb[RB_N];
	long rlen[RB_N];     /* bytes in the slot; 0 the end; -1 a read error (rerr) */
	uint64_t roff[RB_N]; /* compressed bytes read when the slot was filled (progress) */
	unsigned head, count; /* the next full slot, and how many are full (the one parsed included) */
	int stop;
	char rerr[256];
	int unseekable; /* not a regular file (a pipe): cannot be read again, so its lines are counted */
	long lines;     /* newlines in the pieces parsed so far (unseekable only) */
};

static void *ksrc_thread(void *arg)
{
	struct ksrc *s = arg;
	unsigned tail = 0;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		while (s->count == RB_N && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		int stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		if (stop)
			break;
		long n = gzread(s->gz, s->rb[tail], RB_SZ); /* slot `tail` is free: not full, not parsed */
		char e[256] = "";
		if (n < 0) {
			int zerr;
			const char *m = gzerror(s->gz, &zerr);
			snprintf(e, sizeof(e), "%s", zerr == Z_ERRNO ? strerror(errno) : m);
		}
		uint64_t off = (uint64_t)gzoffset(s->gz);
		pthread_mutex_lock(&s->mu);
		s->rlen[tail] = n < 0 ? -1 : n;
		s->roff[tail] = off;
		if (n < 0)
			memcpy(s->rerr, e, sizeof(e));
		s->count++;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		tail = (tail + 1) % RB_N;
		if (n <= 0)
			break;
	}
	return NULL;
}

/* Start the thread on an open file.  0, or -1 (out of memory: then read without a thread). */
static int ksrc_start(struct ksrc *s)
{
	for (int i = 0; i < RB_N; i++)
		if (!(s->rb[i] = malloc(RB_SZ)))
			return -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (pthread_create(&s->th, NULL, ksrc_thread, s) != 0) {
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
		return -1;
	}
	s->threaded = 1;
	return 0;
}

static void ksrc_stop(struct ksrc *s)
{
	if (s->threaded) {
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->th, NULL);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
		s->threaded = 0;
	}
	for (int i = 0; i < RB_N; i++) {
		free(s->rb[i]);
		s->rb[i] = NULL;
	}
}

/* The next piece of input: its bytes in *p, its length (0 the end, -1 a read error); *off: how far
 * into the compressed file (progress).  ksrc_done() once it is parsed. */
static long ksrc_next(struct ksrc *s, const unsigned char **p, uint64_t *off)
{
	if (s->is_mem) {
		size_t k = s->memlen - s->mempos < (1u << 16) ? s->memlen - s->mempos : (1u << 16);
		*p = (const unsigned char *)s->mem + s->mempos;
		s->mempos += k;
		*off = s->mempos;
		return (long)k;
	}
	if (!s->threaded) { /* no thread (out of memory): read in place into slot 0 */
		long n = gzread(s->gz, s->rb[0], RB_SZ);
		if (n < 0) {
			int zerr;
			const char *m = gzerror(s->gz, &zerr);
			snprintf(s->rerr, sizeof(s->rerr), "%s", zerr == Z_ERRNO ? strerror(errno) : m);
			n = -1;
		}
		*p = s->rb[0];
		*off = (uint64_t)gzoffset(s->gz);
		return n;
	}
	pthread_mutex_lock(&s->mu);
	while (s->count == 0)
		pthread_cond_wait(&s->cv, &s->mu);
	long n = s->rlen[s->head];
	*p = s->rb[s->head];
	*off = s->roff[s->head];
	pthread_mutex_unlock(&s->mu);
	return n;
}

static void ksrc_done(struct ksrc *s)
{
	if (!s->threaded)
		return;
	pthread_mutex_lock(&s->mu);
	s->head = (s->head + 1) % RB_N;
	s->count--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* The line of byte `upto` of the input (1 + the newlines before it): counted only for a message,
 * by reading the input again (a file) or from the buffer, so that the parse itself counts nothing. */
static long line_at(const struct ksrc *s, const char *path, uint64_t upto)
{
	long line = 1;
	if (s->unseekable)
		return s->lines + 1;
	if (s->is_mem) {
		for (size_t i = 0; i < upto && i < s->memlen; i++)
			line += s->mem[i] == '\n';
		return line;
	}
	gzFile g = gzopen(path, "rb");
	unsigned char *b = g ? malloc(1 << 16) : NULL;
	uint64_t seen = 0;
	int n;
	while (b && seen < upto && (n = gzread(g, b, 1 << 16)) > 0) {
		size_t k = upto - seen < (uint64_t)n ? (size_t)(upto - seen) : (size_t)n;
		for (const unsigned char *q = b, *end = b + k; (q = memchr(q, '\n', (size_t)(end - q))); q++)
			line++;
		seen += (uint64_t)n;
	}
	free(b);
	if (g)
		gzclose(g);
	return line;
}

static int kineto_parse(struct gt_an_ctx *c, const char *label, struct ksrc *src, uint64_t total, char *err,
			size_t errlen)
{
	struct kst *k = calloc(1, sizeof(*k));
	if (k && (k->name = malloc(1024)))
		k->name_cap = 1024;
	/* jscan (yajl's callbacks, a faster lexer); strings are not checked as UTF-8 there: names (the
	 * only strings kept) are checked in handle_event */
	struct gt_js *h = k && k->name ? gt_js_new(&kcb, k) : NULL;
	if (!h) {
		if (k)
			free(k->name);
		free(k);
		snprintf(err, errlen, "%s: out of memory", label);
		return -1;
	}
	k->c = c;
	k->path = label;
	k->rank = -1;
	k->source = c->nsources++;
	c->has_tl = 1;
	long n;
	uint64_t done = 0, off = 0; /* input bytes parsed before the current piece */
	int rc = 0;
	gt_an_progress(c, label, 0, total);
	int first = 1;
	const unsigned char *buf;
	while ((n = ksrc_next(src, &buf, &off)) > 0) {
		size_t skip = 0;
		/* a UTF-8 byte-order mark, as some editors write: accepted as in CSV */
		if (first && n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf)
			skip = 3;
		first = 0;
		if (gt_js_feed(h, buf + skip, (size_t)n - skip) < 0) {
			size_t at = gt_js_consumed(h) + skip;
			long line = line_at(src, label, done + (at < (size_t)n ? at : (size_t)n));
			for (size_t i = 0; src->unseekable && i < at && i < (size_t)n; i++)
				line += buf[i] == '\n';
			if (k->failed)
				snprintf(err, errlen, "%s (line %ld)", k->err, line);
			else
				snprintf(err, errlen, "%s:%ld: invalid JSON: %s", label, line, gt_js_error(h));
			rc = -1;
			ksrc_done(src);
			break;
		}
		done += (uint64_t)n;
		for (const unsigned char *q = buf, *e = buf + n; src->unseekable && (q = memchr(q, '\n', (size_t)(e - q))); q++)
			src->lines++;
		ksrc_done(src);
		gt_an_progress(c, label, off, total);
	}
	if (rc == 0 && n < 0) {
		snprintf(err, errlen, "%s:%ld: read error: %s", label, line_at(src, label, done), src->rerr);
		rc = -1;
	}
	if (rc == 0 && gt_js_finish(h) < 0) {
		if (k->failed)
			snprintf(err, errlen, "%s", k->err);
		else
			snprintf(err, errlen, "%s:%ld: invalid JSON: truncated or empty (%s)", label, line_at(src, label, done),
				 gt_js_error(h));
		rc = -1;
	}
	if (rc == 0 && (k->root != 'o' || !k->saw_events)) {
		snprintf(err, errlen, "%s: not a Kineto trace (%s)", label,
			 k->root == 'o'	  ? "no \"traceEvents\" list"
			 : k->root == 'a' ? "the top level is a JSON list, not an object with \"traceEvents\""
					  : "the top level is not a JSON object");
		rc = -1;
	} else if (rc == 0 && k->nev == 0) {
		gt_an_note(c, "%s: \"traceEvents\" is empty", label);
	} else if (rc == 0 && k->ngpu == 0) {
		char cats[256] = "";
		size_t o = 0;
		for (int i = 0; i < k->ncats && o < sizeof(cats); i++)
			o += (size_t)snprintf(cats + o, sizeof(cats) - o, "%s\"%s\"", i ? ", " : "", k->cats[i]);
		gt_an_note(c, "%s: no GPU activity: no kernel, memcpy or memset event among %llu events (categories: %s)",
			   label, (unsigned long long)k->nev, cats[0] ? cats : "none");
	}
	if (rc == 0) {
		char nm[64];
		const char *b = strrchr(label, '/');
		if (k->rank >= 0) {
			snprintf(nm, sizeof(nm), "rank%ld", k->rank);
			if (c->colls)
				gt_colls_source_rank(c->colls, k->source, k->rank);
		} else
			snprintf(nm, sizeof(nm), "%s", b && b[1] ? b + 1 : label);
		if (gt_an_label(c, k->source, nm, label) < 0) {
			snprintf(err, errlen, "%s: out of memory", label);
			rc = -1;
		}
	}
	gt_js_free(h);
	free(k->name);
	free(k);
	return rc;
}

int gt_an_read_kineto(struct gt_an_ctx *c, const char *path, char *err, size_t errlen)
{
	struct ksrc s = {0};
	s.gz = gzopen(path, "rb");
	if (!s.gz) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	gzbuffer(s.gz, 1 << 17);
	struct stat st;
	uint64_t total = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	s.unseekable = stat(path, &st) != 0 || !S_ISREG(st.st_mode); /* a pipe is read once */
	if (ksrc_start(&s) < 0 && !s.rb[0]) { /* no thread: read in place (slot 0 is enough) */
		gzclose(s.gz);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	int rc = kineto_parse(c, path, &s, total, err, errlen);
	ksrc_stop(&s);
	gzclose(s.gz);
	return rc;
}

int gt_an_read_kineto_mem(struct gt_an_ctx *c, const char *label, const char *data, size_t len, char *err,
			  size_t errlen)
{
	struct ksrc s = {0};
	s.is_mem = 1;
	s.mem = data;
	s.memlen = len;
	return kineto_parse(c, label, &s, len, err, errlen);
}
