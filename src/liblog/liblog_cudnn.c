/* cuDNN logs (CUDNN_LOGLEVEL_DBG=3, cuDNN 8 and 9): one block per call,
 *   I! CuDNN (v90100 17) function cudnnConvolutionForward() called:
 *   i!     xDesc: type=cudnnTensorDescriptor_t:
 *   i!         dataType: type=cudnnDataType_t; val=CUDNN_DATA_FLOAT (0);
 *   i!         dimA: type=int; val=[1,3,224,224];
 *   ...
 *   i! Time: ...  i! Process=...; Thread=...; GPU=...; Handle=...; StreamId=...
 * A block is flattened to "parent.name=value" words (nesting by indentation),
 * with pointers, handles, addresses, uids and device properties left out and
 * the CUDNN_ prefixes of values dropped, so the same operation on other
 * buffers gives the same short config.  Descriptor set-up calls (create, set,
 * get, finalize, destroy) are not work and are ignored; what executes is kept.
 *
 * cuDNN 9 logs each execution three times: cudnnBackendExecute() with the
 * whole execution plan, cudnnBackendExecuteInternal() with the operation,
 * its descriptors and the engine, then cudnnBackendExecute() again with only
 * the returned status.  The internal block is recorded when it follows; the
 * plan is recorded only when no internal block follows (older cuDNN); blocks
 * without arguments (returns) are ignored.
 * The log is streamed: only the current block and one pending config are held. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblog/liblog.h"

#define DEPTH 12

struct cd_state {
	int open, keep, nargs;
	uint64_t line;
	char fn[128];
	int depth;
	int indent[DEPTH];
	char path[DEPTH][40];
	int skip_indent; /* >= 0: inside a left-out subtree opened at this indent */
	struct gt_sbuf b;
	char buf[GT_CFG_MAX];
	int pending; /* a cudnnBackendExecute plan waiting to see if an internal block follows */
	uint64_t pending_line;
	char pending_buf[GT_CFG_MAX];
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
	static const char *const skip[] = {"cudnnCreate",  "cudnnDestroy", "cudnnSet", "cudnnGet", "cudnnGraphLibraryConfig",
					   "cudnnBackendCreate", "cudnnBackendSet", "cudnnBackendGet",
					   "cudnnBackendFinalize", "cudnnBackendDestroy", "cudnnBackendInitialize",
					   "cudnnFind", "cudnnQuery", "cudnnGraphVersionCheck", "cudnnOpsVersionCheck",
					   "cudnnCnnVersionCheck", "cudnnAdvVersionCheck"};
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strncmp(fn, skip[i], strlen(skip[i])) == 0)
			return 0;
	return 1;
}

static void record(struct gt_liblog_ctx *c, const char *fn, uint64_t line, const char *cfg, int overflow)
{
	if (overflow) {
		/* a config must identify the call exactly; a cut one would merge distinct calls */
		gt_liblog_bad(c, line, "%s: description longer than %d bytes, not recorded", fn, GT_CFG_MAX);
		return;
	}
	gt_liblog_call(c, cfg);
}

static void flush_pending(struct cd_state *s, struct gt_liblog_ctx *c)
{
	if (s->pending)
		record(c, "cudnnBackendExecute", s->pending_line, s->pending_buf, 0);
	s->pending = 0;
}

static void flush_block(struct cd_state *s, struct gt_liblog_ctx *c)
{
	if (!s->open)
		return;
	s->open = 0;
	if (!s->keep || s->nargs == 0) {
		c->st->ignored++;
		return;
	}
	if (strcmp(s->fn, "cudnnBackendExecuteInternal") == 0) {
		if (s->pending)
			c->st->ignored++; /* the same execution, described again */
		s->pending = 0;
	} else {
		flush_pending(s, c);
		if (strcmp(s->fn, "cudnnBackendExecute") == 0 && !s->b.overflow) {
			memcpy(s->pending_buf, s->buf, s->b.len + 1);
			s->pending = 1;
			s->pending_line = s->line;
			return;
		}
	}
	record(c, s->fn, s->line, s->buf, s->b.overflow);
}

/* Arguments that differ run to run or say nothing of the operation. */
static int left_out(const char *name)
{
	static const char *const names[] = {"handle", "deviceProp", "variantPack", "uid", "alignmentInBytes",
					    "isVirtual", "isByVal", "numericalNotes", "behaviorNotes", "status",
					    "Workspace", "workSpace", "workSpaceSizeInBytes", "apiLog", "target_sm_count"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return strncmp(name, "Uid=", 4) == 0;
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
		if (!par || par - (f + 11) <= 0) {
			gt_liblog_bad(c, no, "cuDNN call line without a function name");
			return;
		}
		snprintf(s->fn, sizeof(s->fn), "%.*s", (int)(par - (f + 11)), f + 11);
		gt_cfg_sanitize(s->fn, sizeof(s->fn), s->fn);
		s->open = 1;
		s->keep = keep_fn(s->fn);
		s->line = no;
		s->depth = 0;
		s->nargs = 0;
		s->skip_indent = -1;
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
	if (strncmp(p, "Time:", 5) == 0 || strncmp(p, "Process=", 8) == 0 || strncmp(p, "Process:", 8) == 0 ||
	    strncmp(p, "Warning:", 8) == 0)
		return;
	if (s->skip_indent >= 0) {
		if (ind > s->skip_indent)
			return;
		s->skip_indent = -1;
	}
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
	if (left_out(name)) {
		s->skip_indent = ind;
		return;
	}
	gt_cfg_sanitize(name, sizeof(name), name);
	const char *v = strstr(colon, "; val=");
	if (!v) {
		/* a nested descriptor: "xDesc: type=cudnnTensorDescriptor_t:"; the kind of an
		 * operation of a plan is what identifies it */
		const char *op = strstr(colon, "type=CUDNN_BACKEND_OPERATION_");
		if (op) {
			char kind[64];
			op += strlen("type=CUDNN_BACKEND_OPERATION_");
			size_t kl = strcspn(op, ":; ");
			if (kl > 11 && memcmp(op + kl - 11, "_DESCRIPTOR", 11) == 0)
				kl -= 11;
			snprintf(kind, sizeof(kind), "%.*s", (int)(kl < 63 ? kl : 63), op);
			gt_cfg_sanitize(kind, sizeof(kind), kind);
			gt_sbuf_printf(&s->b, " operation=%s", kind);
			s->nargs++;
		}
		if (s->depth < DEPTH) {
			s->indent[s->depth] = ind;
			snprintf(s->path[s->depth], sizeof(s->path[0]), "%s", name);
			s->depth++;
		}
		return;
	}
	v += 6;
	if (volatile_value(v))
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
	const char *cv = clean;
	if (strncmp(cv, "CUDNN_DATA_", 11) == 0)
		cv += 11;
	else if (strncmp(cv, "CUDNN_", 6) == 0)
		cv += 6;
	const char *nm = strncmp(name, "CUDNN_KNOB_TYPE_", 16) == 0 ? name + 16 : name;
	/* the parent names the descriptor (xDesc, convDesc, knobDesc); deeper paths add nothing */
	gt_sbuf_printf(&s->b, " ");
	if (s->depth > 0)
		gt_sbuf_printf(&s->b, "%s.", s->path[s->depth - 1]);
	gt_sbuf_printf(&s->b, "%s=%s", nm, cv);
	s->nargs++;
}

static void cd_finish(void *state, struct gt_liblog_ctx *c)
{
	flush_block(state, c);
	flush_pending(state, c);
}

const struct gt_liblog_ops gt_liblog_cudnn = {GT_LIB_CUDNN, cd_detect, cd_open, cd_line, cd_finish, cd_close};
