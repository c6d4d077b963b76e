/*
 * NVTX v3 injection (InitializeInjectionNvtx2) and the public range API.
 * Ranges are recorded on the host, per thread: push/pop nesting lives in the
 * thread's slot; start/end ranges (which may end on another thread) in the
 * open-range table (tap/openrange.h).
 */
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "gputap.h"
#include "tap/api.h"
#include "tap/capture_tap.h"
#include "tap/openrange.h"
#include "tap/rmetrics.h"
#include "tap/tap.h"

#define GT_OPEN_MAX 4096

static struct gt_open_range open_mem[GT_OPEN_MAX];
static struct gt_open_table open_ranges = {open_mem, GT_OPEN_MAX};

static uint32_t intern_msg(int type, const nvtxMessageValue_t *m)
{
	if (type == NVTX_MESSAGE_TYPE_ASCII && m->ascii)
		return gt_strtab_intern(&gt_tap.strs, m->ascii, strlen(m->ascii));
	if (type == NVTX_MESSAGE_TYPE_REGISTERED)
		return (uint32_t)(uintptr_t)m->registered;
	if (type == NVTX_MESSAGE_TYPE_UNICODE && m->unicode) {
		char buf[256];
		size_t n = 0;
		for (const wchar_t *w = m->unicode; *w && n < sizeof(buf); w++)
			buf[n++] = (*w > 0 && *w < 128) ? (char)*w : '?';
		return gt_strtab_intern(&gt_tap.strs, buf, n);
	}
	return 0;
}

static uint32_t intern_wide(const wchar_t *w)
{
	nvtxMessageValue_t m;
	m.unicode = w;
	return intern_msg(NVTX_MESSAGE_TYPE_UNICODE, &m);
}

static uint32_t intern_attr(const nvtxEventAttributes_t *a)
{
	return a ? intern_msg(a->messageType, &a->message) : 0;
}

/*
 * Push/pop nesting is per thread and per domain, as NVTX defines it: a pop in
 * domain D closes the innermost open range of D on this thread, even when a
 * range of another domain was pushed after it and is still open (NCCL opens
 * ranges in its own domain that other code's pops must not close).  All open
 * ranges of a thread share one array, innermost last, each tagged with its
 * domain; `level` is the depth within the domain (what nvtxRangePush returns),
 * `parent_id` the range directly below in the thread's array.
 */
static int domain_depth(const struct gt_slot *s, int below, uint32_t domain)
{
	int n = 0;
	for (int i = 0; i < below && i < GT_NEST_MAX; i++)
		n += s->stack[i].domain_id == domain;
	return n;
}

static int do_push(uint32_t name, uint32_t domain, int user)
{
	if (atomic_load_explicit(&gt_tap.rm_active, memory_order_relaxed))
		gt_rm_push(name, domain);
	struct gt_slot *s = gt_tap_slot();
	if (!s)
		return -1;
	int d = s->depth++;
	if (d >= GT_NEST_MAX)
		return d; /* deeper than we keep: counted as lost at its pop */
	struct gt_nest *n = &s->stack[d];
	n->id = gt_tap_range_id(s);
	n->name_id = name;
	n->domain_id = domain;
	n->node = 0;
	if (user)
		gt_api_range_open(s, d); /* its path, for the per-range results */
	n->start_ns = gt_now_ns();
	gt_capture_tap_range_open(name, n->id, d == 0, n->start_ns);
	return domain_depth(s, d, domain);
}

static int do_pop(uint8_t kind, uint32_t domain)
{
	if (atomic_load_explicit(&gt_tap.rm_active, memory_order_relaxed))
		gt_rm_pop(domain);
	struct gt_slot *s = gt_tap_slot();
	if (!s || s->depth <= 0)
		return -1;
	if (s->depth > GT_NEST_MAX) {
		/* the innermost ranges were not kept: this pop closes one of them */
		s->depth--;
		atomic_fetch_add_explicit(&gt_tap.pool.lost, 1, memory_order_relaxed);
		return s->depth;
	}
	int d = s->depth - 1;
	while (d >= 0 && s->stack[d].domain_id != domain)
		d--;
	if (d < 0)
		return -1; /* no open range in this domain on this thread */
	struct gt_nest n = s->stack[d];
	memmove(&s->stack[d], &s->stack[d + 1], (size_t)(s->depth - 1 - d) * sizeof(s->stack[0]));
	s->depth--;
	int level = domain_depth(s, d, domain);
	struct gt_rec_range r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_RANGE;
	r.h.size = sizeof(r);
	r.name_id = n.name_id;
	r.domain_id = n.domain_id;
	r.kind = kind;
	r.level = (uint8_t)(level > 255 ? 255 : level);
	r.end_tid = s->tid;
	r.start_ns = n.start_ns;
	r.end_ns = gt_now_ns();
	r.range_id = n.id;
	r.parent_id = d > 0 ? s->stack[d - 1].id : 0;
	if (atomic_load_explicit(&gt_tap.cap_live, memory_order_relaxed))
		gt_tap_put(&r, sizeof(r));
	gt_capture_tap_range_close(n.id, d == 0);
	if (n.node)
		gt_api_range_close(&n, r.end_ns);
	return level;
}

static void do_mark(uint32_t name, uint32_t domain, uint8_t kind)
{
	struct gt_slot *s = gt_tap_slot();
	if (!s) {
		atomic_fetch_add_explicit(&gt_tap.pool.lost, 1, memory_order_relaxed);
		return;
	}
	struct gt_rec_range r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_RANGE;
	r.h.size = sizeof(r);
	r.name_id = name;
	r.domain_id = domain;
	r.kind = kind;
	r.end_tid = s->tid;
	r.start_ns = r.end_ns = gt_now_ns();
	r.range_id = gt_tap_range_id(s);
	int d = s->depth;
	r.level = (uint8_t)(d > 255 ? 255 : d);
	r.parent_id = d > 0 && d <= GT_NEST_MAX ? s->stack[d - 1].id : 0;
	if (atomic_load_explicit(&gt_tap.cap_live, memory_order_relaxed))
		gt_tap_put(&r, sizeof(r));
}

static uint64_t do_start(uint32_t name, uint32_t domain)
{
	struct gt_slot *s = gt_tap_slot();
	uint64_t id = gt_tap_range_id(s);
	uint64_t t0 = gt_now_ns();
	if (gt_open_start(&open_ranges, id, t0, name, domain, s ? s->tid : 0) < 0)
		atomic_fetch_add_explicit(&gt_tap.pool.lost, 1, memory_order_relaxed); /* too many open at once */
	gt_capture_tap_range_open(name, id, 0, t0);
	return id;
}

static void do_end(uint64_t id)
{
	struct gt_open_range o;
	if (!gt_open_end(&open_ranges, id, &o))
		return;
	struct gt_slot *s = gt_tap_slot();
	struct gt_rec_range r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_RANGE;
	r.h.size = sizeof(r);
	r.h.tid = o.tid;
	r.name_id = o.name_id;
	r.domain_id = o.domain_id;
	r.kind = GT_RANGE_STARTEND;
	r.end_tid = s ? s->tid : 0;
	r.start_ns = o.start_ns;
	r.end_ns = gt_now_ns();
	r.range_id = id;
	if (atomic_load_explicit(&gt_tap.cap_live, memory_order_relaxed))
		gt_tap_put(&r, sizeof(r));
	gt_capture_tap_range_close(id, 0);
}

/* Every entry point: the guard, the global switch, errno. */
#define NV_ENTER(fail)                                                                             \
	GT_HOOK_ENTER(t);                                                                          \
	if (!t_active)                                                                             \
		return fail;                                                                       \
	int saved_errno = errno
#define NV_LEAVE()                                                                                 \
	t->guard--;                                                                                \
	errno = saved_errno

static int NVTX_API nv_push_a(const char *m)
{
	NV_ENTER(0);
	int d = do_push(m ? gt_strtab_intern(&gt_tap.strs, m, strlen(m)) : 0, 0, 0);
	NV_LEAVE();
	return d;
}
static int NVTX_API nv_push_w(const wchar_t *m)
{
	NV_ENTER(0);
	int d = do_push(intern_wide(m), 0, 0);
	NV_LEAVE();
	return d;
}
static int NVTX_API nv_push_ex(const nvtxEventAttributes_t *a)
{
	NV_ENTER(0);
	int d = do_push(intern_attr(a), 0, 0);
	NV_LEAVE();
	return d;
}
static int NVTX_API nv_pop(void)
{
	NV_ENTER(0);
	int d = do_pop(GT_RANGE_PUSHPOP, 0);
	NV_LEAVE();
	return d;
}
static void NVTX_API nv_mark_a(const char *m)
{
	NV_ENTER();
	do_mark(m ? gt_strtab_intern(&gt_tap.strs, m, strlen(m)) : 0, 0, GT_RANGE_MARK);
	NV_LEAVE();
}
static void NVTX_API nv_mark_w(const wchar_t *m)
{
	NV_ENTER();
	do_mark(intern_wide(m), 0, GT_RANGE_MARK);
	NV_LEAVE();
}
static void NVTX_API nv_mark_ex(const nvtxEventAttributes_t *a)
{
	NV_ENTER();
	do_mark(intern_attr(a), 0, GT_RANGE_MARK);
	NV_LEAVE();
}
static nvtxRangeId_t NVTX_API nv_start_a(const char *m)
{
	NV_ENTER(0);
	uint64_t id = do_start(m ? gt_strtab_intern(&gt_tap.strs, m, strlen(m)) : 0, 0);
	NV_LEAVE();
	return id;
}
static nvtxRangeId_t NVTX_API nv_start_w(const wchar_t *m)
{
	NV_ENTER(0);
	uint64_t id = do_start(intern_wide(m), 0);
	NV_LEAVE();
	return id;
}
static nvtxRangeId_t NVTX_API nv_start_ex(const nvtxEventAttributes_t *a)
{
	NV_ENTER(0);
	uint64_t id = do_start(intern_attr(a), 0);
	NV_LEAVE();
	return id;
}
static void NVTX_API nv_end(nvtxRangeId_t id)
{
	NV_ENTER();
	do_end(id);
	NV_LEAVE();
}

/* domains: the handle is the interned name id of the domain */
static uint32_t dom_id(nvtxDomainHandle_t d)
{
	return (uint32_t)(uintptr_t)d;
}
static void NVTX_API nv_dmark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	NV_ENTER();
	do_mark(intern_attr(a), dom_id(d), GT_RANGE_MARK);
	NV_LEAVE();
}
static nvtxRangeId_t NVTX_API nv_dstart_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	NV_ENTER(0);
	uint64_t id = do_start(intern_attr(a), dom_id(d));
	NV_LEAVE();
	return id;
}
static void NVTX_API nv_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	nv_end(id);
}
static int NVTX_API nv_dpush_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	NV_ENTER(0);
	int r = do_push(intern_attr(a), dom_id(d), 0);
	NV_LEAVE();
	return r;
}
static int NVTX_API nv_dpop(nvtxDomainHandle_t d)
{
	NV_ENTER(0);
	int r = do_pop(GT_RANGE_PUSHPOP, dom_id(d));
	NV_LEAVE();
	return r;
}
static nvtxStringHandle_t NVTX_API nv_dregister_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	NV_ENTER(NULL);
	uint32_t id = s ? gt_strtab_intern(&gt_tap.strs, s, strlen(s)) : 0;
	NV_LEAVE();
	return (nvtxStringHandle_t)(uintptr_t)id;
}
static nvtxStringHandle_t NVTX_API nv_dregister_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	(void)d;
	NV_ENTER(NULL);
	uint32_t id = intern_wide(s);
	NV_LEAVE();
	return (nvtxStringHandle_t)(uintptr_t)id;
}
static nvtxDomainHandle_t NVTX_API nv_dcreate_a(const char *name)
{
	NV_ENTER(NULL);
	uint32_t id = name ? gt_strtab_intern(&gt_tap.strs, name, strlen(name)) : 0;
	NV_LEAVE();
	return (nvtxDomainHandle_t)(uintptr_t)id;
}
static nvtxDomainHandle_t NVTX_API nv_dcreate_w(const wchar_t *name)
{
	NV_ENTER(NULL);
	uint32_t id = intern_wide(name);
	NV_LEAVE();
	return (nvtxDomainHandle_t)(uintptr_t)id;
}
static void NVTX_API nv_ddestroy(nvtxDomainHandle_t d)
{
	(void)d;
}

static void set_fn(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
	if (table && id < size && table[id])
		*table[id] = fn;
}

GT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
GT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	gt_tap_init();
	gt_tap_touch(); /* NVTX's first call: a CUDA program (and its ranges are recorded from now on) */
	if (!atomic_load(&gt_tap.on) || (!(gt_tap.trace & GT_TR_NVTX) && !gt_tap.cfg.metrics) || !get)
		return 0; /* NVTX then makes every call a no-op */
	const NvtxExportTableCallbacks *cbs = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
	if (!cbs || !cbs->GetModuleFunctionTable)
		return 0;
	NvtxFunctionTable t = NULL;
	unsigned n = 0;
	if (cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
		set_fn(t, n, NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)nv_mark_ex);
		set_fn(t, n, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)nv_mark_a);
		set_fn(t, n, NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)nv_mark_w);
		set_fn(t, n, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)nv_start_ex);
		set_fn(t, n, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)nv_start_a);
		set_fn(t, n, NVTX_CBID_CORE_RangeStartW, (NvtxFunctionPointer)nv_start_w);
		set_fn(t, n, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)nv_end);
		set_fn(t, n, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)nv_push_ex);
		set_fn(t, n, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)nv_push_a);
		set_fn(t, n, NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)nv_push_w);
		set_fn(t, n, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)nv_pop);
	}
	t = NULL;
	n = 0;
	if (cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
		set_fn(t, n, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)nv_dmark_ex);
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)nv_dstart_ex);
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)nv_dend);
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)nv_dpush_ex);
		set_fn(t, n, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)nv_dpop);
		set_fn(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)nv_dregister_a);
		set_fn(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, (NvtxFunctionPointer)nv_dregister_w);
		set_fn(t, n, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)nv_dcreate_a);
		set_fn(t, n, NVTX_CBID_CORE2_DomainCreateW, (NvtxFunctionPointer)nv_dcreate_w);
		set_fn(t, n, NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)nv_ddestroy);
	}
	return 1;
}

/* ---- public API (include/gputap.h) ---- */

/*
 * The public ranges are NVTX ranges too, emitted whether or not gputap
 * records, so that nsys, ncu or torch.profiler see them.  The NVTX call is
 * made with the guard up: when NVTX's injection is this library itself, the
 * range is not recorded twice.
 */
GT_EXPORT int gputap_range_push(const char *name)
{
	int saved = errno, d = -1;
	struct gt_tls *t = &gt_tls;
	gt_tap_touch();
	if (atomic_load_explicit(&gt_tap.on, memory_order_relaxed) && t->guard == 0) {
		t->guard++;
		d = do_push(name ? gt_strtab_intern(&gt_tap.strs, name, strlen(name)) : 0, 0, 1);
		t->guard--;
	}
	t->guard++;
	nvtxRangePushA(name ? name : "");
	t->guard--;
	errno = saved;
	return d;
}

GT_EXPORT int gputap_range_pop(void)
{
	int saved = errno, d = -1;
	struct gt_tls *t = &gt_tls;
	gt_tap_touch();
	if (atomic_load_explicit(&gt_tap.on, memory_order_relaxed) && t->guard == 0) {
		t->guard++;
		d = do_pop(GT_RANGE_USER, 0);
		t->guard--;
	}
	t->guard++;
	nvtxRangePop();
	t->guard--;
	errno = saved;
	return d;
}

GT_EXPORT void gputap_mark(const char *name)
{
	gt_tap_touch();
	NV_ENTER();
	do_mark(name ? gt_strtab_intern(&gt_tap.strs, name, strlen(name)) : 0, 0, GT_RANGE_USER);
	NV_LEAVE();
}

GT_EXPORT int gputap_active(void)
{
	return gt_tap_recording();
}
