#include "tap/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/number.h"

static const char trace_accepted[] = "a comma list of api,kernel,memcpy,memset,memory,nvtx, or all, or metrics";

int gt_tap_parse_trace(const char *s, unsigned *bits, int *metrics)
{
	static const struct {
		const char *w;
		unsigned b;
	} words[] = {{"api", GT_TR_API},     {"kernel", GT_TR_KERNEL}, {"memcpy", GT_TR_MEMCPY},
		     {"memset", GT_TR_MEMSET}, {"memory", GT_TR_MEMORY}, {"nvtx", GT_TR_NVTX},
		     {"all", GT_TR_ALL}};
	unsigned b = 0;
	int m = 0;
	const char *p = s;
	if (!s || !*s)
		return -1;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		while (n && (*p == ' ')) {
			p++;
			n--;
		}
		while (n && p[n - 1] == ' ')
			n--;
		int found = 0;
		if (n == 7 && strncmp(p, "metrics", 7) == 0) {
			m = 1;
			found = 1;
		}
		for (size_t i = 0; !found && i < sizeof(words) / sizeof(words[0]); i++) {
			if (strlen(words[i].w) == n && strncmp(p, words[i].w, n) == 0) {
				b |= words[i].b;
				found = 1;
			}
		}
		if (!found)
			return -1;
		p = e ? e + 1 : p + n;
	}
	if (m && b)
		return -1; /* "metrics" means counters only: it cannot be mixed with record kinds */
	*bits = b;
	*metrics = m;
	return 0;
}

/* GPUTAP_HOLD, GPUTAP_HOLD_MAX, GPUTAP_HOLD_TIMEOUT_US, GPUTAP_HOLD_KERNELS */
static void read_hold(struct gt_tap_config *c, gt_getenv_fn get)
{
	c->hold_max = GT_HOLD_DEFAULT_MAX;
	c->hold_timeout_us = GT_HOLD_DEFAULT_TIMEOUT_US;
	const char *v = get("GPUTAP_HOLD_MAX");
	if (v && gt_parse_long(v, 1, GT_HOLD_LIMIT, &c->hold_max) < 0) {
		gt_warn("GPUTAP_HOLD_MAX=%s is not valid (accepted: an integer from 1 to %ld); using %ld", v,
			GT_HOLD_LIMIT, GT_HOLD_DEFAULT_MAX);
		c->hold_max = GT_HOLD_DEFAULT_MAX;
		c->nwarnings++;
	}
	v = get("GPUTAP_HOLD_TIMEOUT_US");
	if (v && gt_parse_long(v, 1, GT_HOLD_MAX_TIMEOUT_US, &c->hold_timeout_us) < 0) {
		gt_warn("GPUTAP_HOLD_TIMEOUT_US=%s is not valid (accepted: an integer from 1 to %ld; the timer "
			"cannot be turned off); using %ld",
			v, GT_HOLD_MAX_TIMEOUT_US, GT_HOLD_DEFAULT_TIMEOUT_US);
		c->hold_timeout_us = GT_HOLD_DEFAULT_TIMEOUT_US;
		c->nwarnings++;
	}
	v = get("GPUTAP_HOLD_KERNELS");
	c->hold_kernels = v && *v ? v : NULL;
	v = get("GPUTAP_HOLD");
	if (!v)
		return;
	if (gt_parse_long(v, 0, GT_HOLD_LIMIT, &c->hold) < 0) {
		gt_warn("GPUTAP_HOLD=%s is not valid (accepted: 0 for no hold, or the launches per batch, 1 to "
			"%ld); launches are not held",
			v, GT_HOLD_LIMIT);
		c->hold = 0;
		c->nwarnings++;
		return;
	}
	if (c->hold > c->hold_max) {
		gt_warn("GPUTAP_HOLD=%ld is more than GPUTAP_HOLD_MAX=%ld; holding batches of %ld", c->hold,
			c->hold_max, c->hold_max);
		c->hold = c->hold_max;
		c->nwarnings++;
	}
}

void gt_tap_config_read(struct gt_tap_config *c, gt_getenv_fn get)
{
	memset(c, 0, sizeof(*c));
	c->trace = GT_TR_ALL;
	c->buffer_bytes = (uint64_t)GT_TAP_DEFAULT_BUFFER_MB << 20;
	c->log_level = GT_LOG_WARN;

	const char *v = get("GPUTAP_LOG");
	if (v) {
		int l = gt_log_parse_level(v);
		if (l < 0) {
			gt_warn("GPUTAP_LOG=%s is not valid (accepted: quiet, error, warn, info, debug); using warn", v);
			c->nwarnings++;
		} else {
			c->log_level = l;
		}
	}
	gt_log_level = c->log_level;

	v = get("GPUTAP_OUT");
	c->out_dir = v && *v ? v : NULL;
	v = get("PFLOG");
	c->pflog_dir = v && *v ? v : NULL;

	v = get("GPUTAP_TRACE");
	if (v) {
		unsigned b;
		int m;
		if (gt_tap_parse_trace(v, &b, &m) < 0) {
			gt_warn("GPUTAP_TRACE=%s is not valid (accepted: %s); using all", v, trace_accepted);
			c->nwarnings++;
		} else {
			c->trace = b;
			c->metrics_only = m;
		}
	}
	v = get("GPUTAP_BUFFER_MB");
	if (v) {
		long mb;
		if (gt_parse_long(v, 1, GT_TAP_MAX_BUFFER_MB, &mb) < 0) {
			gt_warn("GPUTAP_BUFFER_MB=%s is not valid (accepted: an integer from 1 to %u); using %u", v,
				GT_TAP_MAX_BUFFER_MB, GT_TAP_DEFAULT_BUFFER_MB);
			c->nwarnings++;
		} else {
			c->buffer_bytes = (uint64_t)mb << 20;
		}
	}
	v = get("GPUTAP_CAPTURE");
	c->capture = v && *v ? v : NULL; /* checked when the library starts (tap/capture_tap.c) */
	read_hold(c, get);
	v = get("GPUTAP_METRICS");
	c->metrics = v && *v ? v : NULL;
	v = get("GPUTAP_METRICS_MODE");
	if (v && *v && strcmp(v, "auto") != 0 && strcmp(v, "kernel") != 0 && strcmp(v, "range") != 0) {
		gt_warn("GPUTAP_METRICS_MODE=%s is not valid (accepted: auto, kernel, range); using auto", v);
		c->nwarnings++;
		v = NULL;
	}
	c->metrics_mode = v && *v ? v : NULL;
	c->tsc = 1;
	v = get("GPUTAP_TSC");
	if (v && strcmp(v, "off") == 0) {
		c->tsc = 0;
	} else if (v && strcmp(v, "auto") != 0) {
		gt_warn("GPUTAP_TSC=%s is not valid (accepted: auto, off); using auto", v);
		c->nwarnings++;
	}
	c->rt_callbacks = -1;
	v = get("GPUTAP_RUNTIME_CALLBACKS");
	if (v && (strcmp(v, "on") == 0 || strcmp(v, "off") == 0)) {
		c->rt_callbacks = strcmp(v, "on") == 0;
	} else if (v && strcmp(v, "auto") != 0) {
		gt_warn("GPUTAP_RUNTIME_CALLBACKS=%s is not valid (accepted: auto, on, off); using auto", v);
		c->nwarnings++;
	}
}

const char *gt_tap_rank(gt_getenv_fn get)
{
	static const char *const vars[] = {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = get(vars[i]);
		long n;
		if (v && gt_parse_long(v, 0, 1L << 30, &n) == 0)
			return v;
	}
	return NULL;
}

int gt_tap_proc_name(char *buf, size_t cap, const char *rank, const char *owner, long pid, int forked)
{
	if (!rank) {
		snprintf(buf, cap, "pid%ld", pid);
		return 0;
	}
	long r = strtol(rank, NULL, 10);
	int inherited = 0;
	if (owner) {
		const char *colon = strchr(owner, ':');
		if (colon && strtol(owner, NULL, 10) != pid && strtol(colon + 1, NULL, 10) == r && colon[1])
			inherited = 1;
	}
	if (forked || inherited) {
		snprintf(buf, cap, "rank%ld-pid%ld", r, pid);
		return 0;
	}
	snprintf(buf, cap, "rank%ld", r);
	return 1;
}

void gt_tap_buffer_split(uint64_t total, int gpu, struct gt_buffer_split *s)
{
	s->pool_bytes = total;
	s->cupti_buf_bytes = 0;
	s->cupti_nbufs = 0;
	if (!gpu)
		return;
	uint64_t share = total / 4, buf = 4u << 20;
	while (buf > (64u << 10) && share / buf < GT_TAP_CUPTI_MAX_BUFS)
		buf /= 2;
	uint64_t n = share / buf;
	if (n < 2)
		n = 2;
	if (n > GT_TAP_CUPTI_MAX_BUFS)
		n = GT_TAP_CUPTI_MAX_BUFS;
	s->cupti_buf_bytes = (uint32_t)buf;
	s->cupti_nbufs = (uint32_t)n;
	s->pool_bytes = total - n * buf;
}
