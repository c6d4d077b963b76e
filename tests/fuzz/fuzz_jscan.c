/* Fuzz target: analyze/jscan against yajl on the same bytes (a differential target).  The input is
 * fed to jscan in pieces of a size taken from its first byte; both must accept or refuse it alike,
 * and for JSON both accept, give the same events.  A difference aborts, but for one yajl bug: it
 * accepts a token left unfinished after the document, which jscan refuses after the same events. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "analyze/jscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rec {
	unsigned char *s;
	size_t n, cap;
};

static void put(struct rec *r, char tag, const void *p, size_t n)
{
	if (r->n + n + 2 > r->cap) {
		r->cap = (r->n + n + 2) * 2;
		unsigned char *s = realloc(r->s, r->cap);
		if (!s)
			abort();
		r->s = s;
	}
	r->s[r->n++] = (unsigned char)tag;
	if (n)
		memcpy(r->s + r->n, p, n);
	r->n += n;
	r->s[r->n++] = 0;
}

static int c_null(void *c) { return put(c, 'Z', "", 0), 1; }
static int c_bool(void *c, int b) { return put(c, b ? 'T' : 'F', "", 0), 1; }
static int c_num(void *c, const char *s, size_t n) { return put(c, 'N', s, n), 1; }
static int c_str(void *c, const unsigned char *s, size_t n) { return put(c, 'S', s, n), 1; }
static int c_key(void *c, const unsigned char *s, size_t n) { return put(c, 'K', s, n), 1; }
static int c_sm(void *c) { return put(c, '{', "", 0), 1; }
static int c_em(void *c) { return put(c, '}', "", 0), 1; }
static int c_sa(void *c) { return put(c, '[', "", 0), 1; }
static int c_ea(void *c) { return put(c, ']', "", 0), 1; }
static const yajl_callbacks cbs = {c_null, c_bool, NULL, NULL, c_num, c_str, c_sm, c_key, c_em, c_sa, c_ea};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t piece = (size_t)data[0] % 17 + 1;
	data++;
	size--;
	struct rec y = {0}, j = {0};
	yajl_handle h = yajl_alloc(&cbs, NULL, &y);
	if (!h)
		return 0;
	yajl_config(h, yajl_dont_validate_strings, 1);
	int yok = yajl_parse(h, data, size) == yajl_status_ok && yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	struct gt_js *js = gt_js_new(&cbs, &j);
	if (!js)
		abort();
	int jok = 1;
	for (size_t o = 0; jok && o < size; o += piece)
		jok = gt_js_feed(js, data + o, size - o < piece ? size - o : piece) == 0;
	jok = jok && gt_js_finish(js) == 0;
	gt_js_free(js);
	int same = j.n == y.n && (!j.n || memcmp(j.s, y.s, j.n) == 0);
	/* yajl accepts an unfinished token after a whole document ("1\"}" passes yajl_complete_parse);
	 * jscan refuses it, having given the same events: that difference is allowed, no other */
	if (jok != yok && !(yok && !jok && same))
		abort();
	if (yok && jok && !same)
		abort();
	free(y.s);
	free(j.s);
	return 0;
}
