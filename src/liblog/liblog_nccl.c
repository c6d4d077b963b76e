/* NCCL logs (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL): one line per collective,
 *   host:pid:tid [dev] NCCL INFO AllReduce: opCount 0 sendbuff 0x.. recvbuff 0x..
 *   count 1048576 datatype 7 op 0 root 0 comm 0x.. [nranks=1] stream (nil)
 * Other INFO lines (init, tuning) are not calls and are ignored. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "liblog/liblog.h"

const char *gt_nccl_type_name(int t, char *buf, size_t len);

static int nccl_detect(const char *line)
{
	return strstr(line, " NCCL INFO ") || strstr(line, " NCCL WARN ");
}

static void *nccl_open(void)
{
	return calloc(1, 1);
}

static void nccl_close(void *s)
{
	free(s);
}

static void nccl_finish(void *s, struct gt_liblog_ctx *c)
{
	(void)s;
	(void)c;
}

/* Value of the word that follows `key ` in `s`; 1 if found. */
static int word_after(const char *s, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = strstr(s, key); p; p = strstr(p + 1, key)) {
		if ((p != s && p[-1] != ' ') || p[kl] != ' ')
			continue;
		const char *v = p + kl + 1, *e = v;
		while (*e && *e != ' ')
			e++;
		size_t n = (size_t)(e - v) < len - 1 ? (size_t)(e - v) : len - 1;
		memcpy(out, v, n);
		out[n] = 0;
		return n > 0;
	}
	return 0;
}

static const char *const redops[] = {"sum", "prod", "max", "min", "avg"};

static void nccl_line(void *s, struct gt_liblog_ctx *c, const char *line, uint64_t no)
{
	(void)s;
	const char *p = strstr(line, " NCCL INFO ");
	if (!p)
		return;
	p += strlen(" NCCL INFO ");
	const char *colon = strstr(p, ": opCount ");
	if (!colon)
		return; /* not a collective */
	struct gt_nccl_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	size_t nl = (size_t)(colon - p);
	if (nl == 0 || nl >= sizeof(cfg.op)) {
		gt_liblog_bad(c, no, "NCCL call with an unreadable name");
		return;
	}
	for (size_t i = 0; i < nl; i++) {
		if (!isalnum((unsigned char)p[i])) {
			gt_liblog_bad(c, no, "NCCL call with an unreadable name");
			return;
		}
		cfg.op[i] = (char)tolower((unsigned char)p[i]);
	}
	char v[64];
	int64_t count, dtype, op = 0, root = 0, nranks;
	const char *rest = colon + 1;
	if (!word_after(rest, "count", v, sizeof(v)) || gt_parse_i64(v, &count) < 0 || count < 0) {
		gt_liblog_bad(c, no, "NCCL %s without a readable count", cfg.op);
		return;
	}
	if (!word_after(rest, "datatype", v, sizeof(v)) || gt_parse_i64(v, &dtype) < 0 || dtype < 0 ||
	    dtype > 255) {
		gt_liblog_bad(c, no, "NCCL %s without a readable datatype", cfg.op);
		return;
	}
	if (word_after(rest, "op", v, sizeof(v)) && (gt_parse_i64(v, &op) < 0 || op < 0)) {
		gt_liblog_bad(c, no, "NCCL %s with a bad op '%s'", cfg.op, v);
		return;
	}
	if (word_after(rest, "root", v, sizeof(v)) && (gt_parse_i64(v, &root) < 0 || root < 0 || root > 1 << 24)) {
		gt_liblog_bad(c, no, "NCCL %s with a bad root '%s'", cfg.op, v);
		return;
	}
	if (!gt_kv_int(rest, NULL, "nranks", &nranks) || nranks < 1 || nranks > 1 << 24) {
		gt_liblog_bad(c, no, "NCCL %s without [nranks=N]", cfg.op);
		return;
	}
	cfg.count = (uint64_t)count;
	char tb[16];
	snprintf(cfg.dtype, sizeof(cfg.dtype), "%s", gt_nccl_type_name((int)dtype, tb, sizeof(tb)));
	int reduces = strcmp(cfg.op, "allreduce") == 0 || strcmp(cfg.op, "reduce") == 0 ||
		      strcmp(cfg.op, "reducescatter") == 0;
	if (reduces) {
		if (op < 5)
			snprintf(cfg.redop, sizeof(cfg.redop), "%s", redops[op]);
		else
			snprintf(cfg.redop, sizeof(cfg.redop), "op%d", (int)op);
	}
	int rooted = strcmp(cfg.op, "broadcast") == 0 || strcmp(cfg.op, "reduce") == 0 ||
		     strcmp(cfg.op, "send") == 0 || strcmp(cfg.op, "recv") == 0 || strcmp(cfg.op, "gather") == 0 ||
		     strcmp(cfg.op, "scatter") == 0;
	cfg.root = rooted ? (int)root : -1;
	cfg.nranks = (int)nranks;
	char buf[GT_CFG_MAX];
	if (gt_nccl_cfg_format(&cfg, buf, sizeof(buf)) < 0) {
		gt_liblog_bad(c, no, "NCCL call too long");
		return;
	}
	gt_liblog_call(c, buf);
}

const struct gt_liblog_ops gt_liblog_nccl = {GT_LIB_NCCL, nccl_detect, nccl_open, nccl_line, nccl_finish, nccl_close};
