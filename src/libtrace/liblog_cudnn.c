/* cuDNN logs (CUDNN_LOGLEVEL_DBG=3, cuDNN 8 and 9): one block per call,
 *   I! CuDNN (v90100 17) function cudnnConvolutionForward() called:
 *   i!     xDesc: type=cudnnTensorDescriptor_t:
 *   i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);
 *   i!         dimA: type=int; val=[1,3,224,224];
 *   ...
 *   i! Time: ...  i! Process=...; Thread=...; GPU=...; Handle=...; StreamId=...
 * A block is flattened to "path=value" words (nesting by indentation), with
 * pointers, handles and addresses left out, so the same operation on other
 * buffers gives the same config.  Descriptor set-up calls (create, set, get,
 * finalize, destroy) are not work and are ignored; what executes is kept.
 * The log is streamed: only the current block is held. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtrace/liblog.h"

#define DEPTH 12

struct cd_state {
	int open, keep;
	uint64_t line;
	char fn[64];
	int depth;
	int indent[DEPTH];
	char path[DEPTH][40];
	struct gt_sbuf b;
	char buf[GT_CFG_MAX];
};

static int cd_detect(const char *line)
{
	return strncmp(line, "I! CuDNN (", 10) == 0 || strncmp(line, "I! cuDNN (", 10) == 0;
}

static void *cd_open(void)
{
	return calloc(1, sizeof(struct cd_state));
}

static void cd_close(void *s)
{
	free(s);
}

static int keep_fn(const char *fn)
{
	static const char *const skip[] = {"cudnnCreate",  "cudnnDestroy", "cudnnSet", "cudnnGet",
					   "cudnnBackendCreate", "cudnnBackendSet", "cudnnBackendGet",
					   "cudnnBackendFinalize", "cudnnBackendDestroy", "cudnnBackendInitialize",
					   "cudnnFind", "cudnnQuery", "cudnnGraphVersionCheck", "cudnnOpsVersionCheck",
					   "cudnnCnnVersionCheck", "cudnnAdvVersionCheck"};
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strncmp(fn, skip[i], strlen(skip[i])) == 0)
			return 0;
	return 1;
}

static void flush_block(struct cd_state *s, struct gt_liblog_ctx *c)
{
	if (!s->open)
		return;
	s->open = 0;
	if (!s->keep) {
		c->st->ignored++;
		return;
	}
	if (s->b.overflow) {
		/* a config must identify the call exactly; a cut one would merge distinct calls */
		gt_liblog_bad(c, s->line, "%s: description longer than %d bytes, not recorded", s->fn, GT_CFG_MAX);
		return;
	}
	gt_liblog_call(c, s->buf);
}

/* Is the value an address or a handle, which differs run to run? */
static int volatile_value(const char *v)
{
	if (strncmp(v, "0x", 2) == 0 || strncmp(v, "0X", 2) == 0 || strstr(v, "POINTER") || strncmp(v, "NULL", 4) == 0)
		return 1;
	return strncmp(v, "ptr", 3) == 0;
}

static void cd_line(void *state, struct gt_liblog_ctx *c, const char *line, uint64_t no)
{
	struct cd_state *s = state;
	if (cd_detect(line)) {
		flush_block(s, c);
		const char *f = strstr(line, ") function ");
		const char *par = f ? strchr(f + 11, '(') : NULL;
		if (!par || par - (f + 11) <= 0 || (size_t)(par - (f + 11)) >= sizeof(s->fn)) {
			gt_liblog_bad(c, no, "cuDNN call line without a function name");
			return;
		}
		snprintf(s->fn, sizeof(s->fn), "%.*s", (int)(par - (f + 11)), f + 11);
		gt_cfg_sanitize(s->fn, sizeof(s->fn), s->fn);
		s->open = 1;
		s->keep = keep_fn(s->fn);
		s->line = no;
		s->depth = 0;
		s->b = (struct gt_sbuf){s->buf, 0, sizeof(s->buf), 0};
		s->buf[0] = 0;
		gt_sbuf_printf(&s->b, "op=%s", s->fn);
		return;
	}
	if (strncmp(line, "i!", 2) != 0) {
		flush_block(s, c);
		return;
	}
	if (!s->open || !s->keep)
		return;
	const char *p = line + 2;
	int ind = 0;
	while (*p == ' ') {
		p++;
		ind++;
	}
	if (strncmp(p, "Time:", 5) == 0 || strncmp(p, "Process=", 8) == 0 || strncmp(p, "Process:", 8) == 0)
		return;
	const char *colon = strstr(p, ": type=");
	if (!colon) {
		colon = strchr(p, ':');
		if (!colon)
			return;
	}
	while (s->depth > 0 && s->indent[s->depth - 1] >= ind)
		s->depth--;
	char name[40];
	size_t nl = (size_t)(colon - p);
	if (nl == 0 || nl >= sizeof(name)) {
		gt_liblog_bad(c, no, "cuDNN argument line without a readable name");
		return;
	}
	memcpy(name, p, nl);
	name[nl] = 0;
	gt_cfg_sanitize(name, sizeof(name), name);
	const char *v = strstr(colon, "; val=");
	if (!v) {
		/* a nested descriptor: "xDesc: type=cudnnTensorDescriptor_t:" */
		if (s->depth < DEPTH) {
			s->indent[s->depth] = ind;
			snprintf(s->path[s->depth], sizeof(s->path[0]), "%s", name);
			s->depth++;
		}
		return;
	}
	v += 6;
	if (strcmp(name, "handle") == 0 || volatile_value(v))
		return;
	/* value up to ';' (or the end), enum "CUDNN_DATA_FLOAT (0)" -> "CUDNN_DATA_FLOAT", "[1,3]" -> "1x3" */
	char val[160];
	size_t vl = strcspn(v, ";");
	if (vl >= sizeof(val))
		vl = sizeof(val) - 1;
	memcpy(val, v, vl);
	val[vl] = 0;
	char *sp = strstr(val, " (");
	if (sp && isupper((unsigned char)val[0]))
		*sp = 0;
	char clean[160];
	size_t j = 0;
	for (size_t i = 0; val[i] && j + 1 < sizeof(clean); i++) {
		char ch = val[i];
		if (ch == '[' || ch == ']' || ch == ' ')
			continue;
		clean[j++] = ch == ',' ? 'x' : ch;
	}
	clean[j] = 0;
	gt_cfg_sanitize(clean, sizeof(clean), clean);
	gt_sbuf_printf(&s->b, " ");
	for (int d = 0; d < s->depth; d++)
		gt_sbuf_printf(&s->b, "%s.", s->path[d]);
	gt_sbuf_printf(&s->b, "%s=%s", name, clean);
}

static void cd_finish(void *state, struct gt_liblog_ctx *c)
{
	flush_block(state, c);
}

const struct gt_liblog_ops gt_liblog_cudnn = {GT_LIB_CUDNN, cd_detect, cd_open, cd_line, cd_finish, cd_close};
