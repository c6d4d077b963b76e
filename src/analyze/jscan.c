/* analyze/jscan.c — a streaming JSON reader with yajl's callbacks (see jscan.h). */
#include "analyze/jscan.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { E_VALUE, E_VALUE_OR_CLOSE, E_KEY, E_KEY_OR_CLOSE, E_COLON, E_COMMA_OR_CLOSE, E_DONE };
enum { P_NONE, P_STRING, P_KEY, P_NUMBER, P_LITERAL }; /* a token cut by the end of a piece */

#define MAX_DEPTH (1u << 24)

struct gt_js {
	yajl_callbacks cb;
	void *ctx;
	uint8_t *st; /* 'o' or 'a' per open level */
	size_t depth, cap;
	int expect;
	int part;     /* P_*: carry holds the cut token from its first byte */
	int pesc;     /* a cut string ends in an unpaired backslash */
	int pbs;      /* a cut string has a backslash */
	unsigned char *carry;
	size_t ncarry, capcarry;
	unsigned char *sbuf; /* a string with escapes, decoded */
	size_t capsbuf;
	size_t consumed;
	int stopped;
	char err[160];
};

/* bytes that end the fast scan of a string: the quote, the backslash, control bytes (an error) */
static uint8_t sstop[256];
/* bytes of a number token, of a literal token */
static uint8_t numc[256], litc[256];

static void tables(void)
{
	static int done;
	if (done)
		return;
	for (int c = 0; c < 0x20; c++)
		sstop[c] = 1;
	sstop['"'] = sstop['\\'] = 1;
	for (int c = '0'; c <= '9'; c++)
		numc[c] = 1;
	numc['-'] = numc['+'] = numc['.'] = numc['e'] = numc['E'] = 1;
	for (int c = 'a'; c <= 'z'; c++)
		litc[c] = 1;
	for (int c = 'A'; c <= 'Z'; c++)
		litc[c] = 1;
	done = 1;
}

struct gt_js *gt_js_new(const yajl_callbacks *cb, void *ctx)
{
	tables();
	struct gt_js *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->cb = *cb;
	j->ctx = ctx;
	j->expect = E_VALUE;
	return j;
}

void gt_js_free(struct gt_js *j)
{
	if (!j)
		return;
	free(j->st);
	free(j->carry);
	free(j->sbuf);
	free(j);
}

size_t gt_js_consumed(const struct gt_js *j) { return j->consumed; }
const char *gt_js_error(const struct gt_js *j) { return j->err; }
int gt_js_stopped(const struct gt_js *j) { return j->stopped; }

static int fail(struct gt_js *j, const char *what)
{
	snprintf(j->err, sizeof(j->err), "%s", what);
	return -1;
}

static int fail_at(struct gt_js *j, const char *what, int c)
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(j->err, sizeof(j->err), "%s ('%c')", what, c);
	else
		snprintf(j->err, sizeof(j->err), "%s (byte 0x%02x)", what, c & 0xff);
	return -1;
}

static int grow(unsigned char **b, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 256;
	while (nc < need)
		nc *= 2;
	unsigned char *nb = realloc(*b, nc);
	if (!nb)
		return -1;
	*b = nb;
	*cap = nc;
	return 0;
}

#define CALL(f, ...)                                                                                             \
	do {                                                                                                     \
		if (j->cb.f && !j->cb.f(j->ctx, ##__VA_ARGS__)) {                                               \
			j->stopped = 1;                                                                          \
			return -1;                                                                               \
		}                                                                                                \
	} while (0)

static void after_value(struct gt_js *j) { j->expect = j->depth ? E_COMMA_OR_CLOSE : E_DONE; }

/* From p (inside a string): the closing quote, or NULL when the piece ends first.  *esc carries a
 * backslash across pieces, *bs says a backslash was seen, *bad a control byte (returned). */
static const unsigned char *str_end(const unsigned char *p, const unsigned char *end, int *esc, int *bs, int *bad)
{
	if (*esc) {
		if (p == end)
			return NULL;
		p++;
		*esc = 0;
	}
	for (;;) {
		while (end - p >= 4 && !sstop[p[0]] && !sstop[p[1]] && !sstop[p[2]] && !sstop[p[3]])
			p += 4;
		while (p < end && !sstop[*p])
			p++;
		if (p == end)
			return NULL;
		if (*p == '"')
			return p;
		if (*p == '\\') {
			*bs = 1;
			if (p + 1 == end) {
				*esc = 1;
				return NULL;
			}
			p += 2;
			continue;
		}
		*bad = 1;
		return p;
	}
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *v)
{
	if (end - p < 4)
		return -1;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		int c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
						      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v << 4 | (unsigned)d;
	}
	return 0;
}

static size_t utf8(unsigned cp, unsigned char *o)
{
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The text of a string [b, z) with its escapes decoded into j->sbuf; its length, -1 when an escape is
 * not JSON's. */
static long unescape(struct gt_js *j, const unsigned char *b, const unsigned char *z)
{
	if (grow(&j->sbuf, &j->capsbuf, (size_t)(z - b) + 4) < 0)
		return fail(j, "out of memory");
	unsigned char *o = j->sbuf;
	while (b < z) {
		const unsigned char *bs = memchr(b, '\\', (size_t)(z - b));
		if (!bs)
			bs = z;
		memcpy(o, b, (size_t)(bs - b));
		o += bs - b;
		if (bs == z)
			break;
		b = bs + 2; /* str_end made sure a byte follows the backslash */
		switch (bs[1]) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (hex4(b, z, &cp) < 0)
				return fail(j, "\\u not followed by 4 hex digits inside a string");
			b += 4;
			/* as yajl: a high surrogate takes the \\u that follows as its low half (for a valid pair, the
			 * character), alone it is '?'; a low surrogate alone is encoded as it is */
			if ((cp & 0xfc00) == 0xd800) {
				if (z - b >= 6 && b[0] == '\\' && b[1] == 'u' && hex4(b + 2, z, &lo) == 0) {
					cp = ((cp & 0x3f) << 10) | ((((cp >> 6) & 0xf) + 1) << 16) | (lo & 0x3ff);
					b += 6;
				} else {
					cp = '?';
				}
			}
			o += utf8(cp, o);
			break;
		}
		default: return fail_at(j, "invalid escape inside a string", bs[1]);
		}
	}
	return (long)(o - j->sbuf);
}

/* A whole string: its text [b, z) (between the quotes); `bs`: it has a backslash; `key`: a map key. */
static int emit_string(struct gt_js *j, const unsigned char *b, const unsigned char *z, int bs, int key)
{
	size_t n = (size_t)(z - b);
	if (bs) {
		long k = unescape(j, b, z);
		if (k < 0)
			return -1;
		b = j->sbuf;
		n = (size_t)k;
	}
	if (key) {
		CALL(yajl_map_key, b, n);
		j->expect = E_COLON;
	} else {
		CALL(yajl_string, b, n);
		after_value(j);
	}
	return 0;
}

static int number_ok(const unsigned char *s, size_t n)
{
	size_t i = 0;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		if (++i == n || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i == n || s[i] < '0' || s[i] > '9')
			return 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == n;
}

static int emit_number(struct gt_js *j, const unsigned char *s, size_t n)
{
	if (!number_ok(s, n))
		return fail(j, "invalid number");
	CALL(yajl_number, (const char *)s, n);
	after_value(j);
	return 0;
}

static int emit_literal(struct gt_js *j, const unsigned char *s, size_t n)
{
	if (n == 4 && memcmp(s, "true", 4) == 0)
		CALL(yajl_boolean, 1);
	else if (n == 5 && memcmp(s, "false", 5) == 0)
		CALL(yajl_boolean, 0);
	else if (n == 4 && memcmp(s, "null", 4) == 0)
		CALL(yajl_null);
	else
		return fail(j, "invalid literal (not true, false or null)");
	after_value(j);
	return 0;
}

static int save(struct gt_js *j, int part, const unsigned char *from, const unsigned char *end)
{
	if (grow(&j->carry, &j->capcarry, (size_t)(end - from)) < 0)
		return fail(j, "out of memory");
	memcpy(j->carry, from, (size_t)(end - from));
	j->ncarry = (size_t)(end - from);
	j->part = part;
	return 0;
}

static int append(struct gt_js *j, const unsigned char *from, const unsigned char *end)
{
	if (grow(&j->carry, &j->capcarry, j->ncarry + (size_t)(end - from)) < 0)
		return fail(j, "out of memory");
	memcpy(j->carry + j->ncarry, from, (size_t)(end - from));
	j->ncarry += (size_t)(end - from);
	return 0;
}

/* The cut token, continued in [*q, end): 1 when it is whole and handled, 0 when the piece ended again,
 * -1 an error. */
static int resume(struct gt_js *j, const unsigned char **q, const unsigned char *end)
{
	const unsigned char *p = *q;
	if (j->part == P_STRING || j->part == P_KEY) {
		int bad = 0;
		const unsigned char *e = str_end(p, end, &j->pesc, &j->pbs, &bad);
		if (bad) {
			*q = e;
			return fail_at(j, "a control byte inside a string", *e);
		}
		if (append(j, p, e ? e + 1 : end) < 0)
			return -1;
		*q = e ? e + 1 : end;
		if (!e)
			return 0;
		j->part = P_NONE;
		return emit_string(j, j->carry + 1, j->carry + j->ncarry - 1, j->pbs, j->expect != E_VALUE &&
							 j->expect != E_VALUE_OR_CLOSE) < 0 ? -1 : 1;
	}
	const uint8_t *cls = j->part == P_NUMBER ? numc : litc;
	while (p < end && cls[*p])
		p++;
	if (append(j, *q, p) < 0)
		return -1;
	*q = p;
	if (p == end)
		return 0;
	int part = j->part;
	j->part = P_NONE;
	if (part == P_NUMBER)
		return emit_number(j, j->carry, j->ncarry) < 0 ? -1 : 1;
	return emit_literal(j, j->carry, j->ncarry) < 0 ? -1 : 1;
}

static int push(struct gt_js *j, uint8_t c)
{
	if (j->depth == j->cap) {
		if (j->cap >= MAX_DEPTH)
			return fail(j, "nested deeper than 16777216 levels");
		size_t nc = j->cap ? j->cap * 2 : 64;
		uint8_t *n = realloc(j->st, nc);
		if (!n)
			return fail(j, "out of memory");
		j->st = n;
		j->cap = nc;
	}
	j->st[j->depth++] = c;
	return 0;
}

static int feed(struct gt_js *j, const unsigned char **qp, const unsigned char *end)
{
	const unsigned char *q = *qp;
	int r = 0;
#define DONE_AT(x)                                                                                               \
	do {                                                                                                     \
		*qp = (x);                                                                                       \
		return r;                                                                                        \
	} while (0)
	while (q < end) {
		int c = *q;
		switch (c) {
		case ' ':
		case '\t':
		case '\n':
		case '\v': /* yajl takes \v and \f for white space too */
		case '\f':
		case '\r': /* pretty-printed traces: runs of indentation */
			q++;
			while (q < end && (*q == ' ' || *q == '\n'))
				q++;
			continue;
		case '{':
		case '[':
			if (j->expect != E_VALUE && j->expect != E_VALUE_OR_CLOSE)
				r = fail_at(j, "unexpected", c);
			else if (push(j, c == '{' ? 'o' : 'a') < 0)
				r = -1;
			if (r < 0)
				DONE_AT(q);
			if (c == '{') {
				if (j->cb.yajl_start_map && !j->cb.yajl_start_map(j->ctx))
					r = -1;
				j->expect = E_KEY_OR_CLOSE;
			} else {
				if (j->cb.yajl_start_array && !j->cb.yajl_start_array(j->ctx))
					r = -1;
				j->expect = E_VALUE_OR_CLOSE;
			}
			if (r < 0) {
				j->stopped = 1;
				DONE_AT(q);
			}
			q++;
			continue;
		case '}':
		case ']': {
			uint8_t want = c == '}' ? 'o' : 'a';
			int open = c == '}' ? E_KEY_OR_CLOSE : E_VALUE_OR_CLOSE;
			if (!j->depth || j->st[j->depth - 1] != want || (j->expect != open && j->expect != E_COMMA_OR_CLOSE)) {
				r = fail_at(j, "unexpected", c);
				DONE_AT(q);
			}
			j->depth--;
			if (c == '}' ? (j->cb.yajl_end_map && !j->cb.yajl_end_map(j->ctx))
				     : (j->cb.yajl_end_array && !j->cb.yajl_end_array(j->ctx))) {
				j->stopped = 1;
				r = -1;
				DONE_AT(q);
			}
			after_value(j);
			q++;
			continue;
		}
		case ':':
			if (j->expect != E_COLON) {
				r = fail_at(j, "unexpected", c);
				DONE_AT(q);
			}
			j->expect = E_VALUE;
			q++;
			continue;
		case ',':
			if (j->expect != E_COMMA_OR_CLOSE) {
				r = fail_at(j, "unexpected", c);
				DONE_AT(q);
			}
			j->expect = j->st[j->depth - 1] == 'o' ? E_KEY : E_VALUE;
			q++;
			continue;
		case '"': {
			int key = j->expect == E_KEY || j->expect == E_KEY_OR_CLOSE;
			if (!key && j->expect != E_VALUE && j->expect != E_VALUE_OR_CLOSE) {
				r = fail(j, "unexpected string (a ',' or a ':' missing?)");
				DONE_AT(q);
			}
			int esc = 0, bs = 0, bad = 0;
			const unsigned char *e = str_end(q + 1, end, &esc, &bs, &bad);
			if (bad) {
				r = fail_at(j, "a control byte inside a string", *e);
				DONE_AT(e);
			}
			if (!e) {
				j->pesc = esc;
				j->pbs = bs;
				r = save(j, key ? P_KEY : P_STRING, q, end);
				DONE_AT(r < 0 ? q : end);
			}
			if (emit_string(j, q + 1, e, bs, key) < 0) {
				r = -1;
				DONE_AT(q);
			}
			q = e + 1;
			continue;
		}
		default: {
			int num = c == '-' || (c >= '0' && c <= '9');
			if (!num && !litc[c]) {
				r = fail_at(j, "invalid character", c);
				DONE_AT(q);
			}
			if (j->expect != E_VALUE && j->expect != E_VALUE_OR_CLOSE) {
				r = fail_at(j, "unexpected value (a ',' or a ':' missing?)", c);
				DONE_AT(q);
			}
			const uint8_t *cls = num ? numc : litc;
			const unsigned char *e = q + 1;
			while (e < end && cls[*e])
				e++;
			if (e == end) {
				r = save(j, num ? P_NUMBER : P_LITERAL, q, end);
				DONE_AT(r < 0 ? q : end);
			}
			if ((num ? emit_number(j, q, (size_t)(e - q)) : emit_literal(j, q, (size_t)(e - q))) < 0) {
				r = -1;
				DONE_AT(q);
			}
			q = e;
			continue;
		}
		}
	}
	DONE_AT(q);
#undef DONE_AT
}

int gt_js_feed(struct gt_js *j, const unsigned char *p, size_t n)
{
	const unsigned char *q = p, *end = p + n;
	j->consumed = 0;
	if (j->part) {
		int r = resume(j, &q, end);
		j->consumed = (size_t)(q - p);
		if (r <= 0)
			return r;
	}
	int r = feed(j, &q, end);
	j->consumed = (size_t)(q - p);
	return r;
}

int gt_js_finish(struct gt_js *j)
{
	if (j->part == P_NUMBER || j->part == P_LITERAL) { /* the input's end ends the token */
		int part = j->part;
		j->part = P_NONE;
		if ((part == P_NUMBER ? emit_number(j, j->carry, j->ncarry) : emit_literal(j, j->carry, j->ncarry)) < 0)
			return -1;
	}
	if (j->part)
		return fail(j, "the input ends inside a string");
	if (j->expect != E_DONE)
		return fail(j, j->depth || j->expect != E_VALUE ? "the input ends before the document does"
								: "no JSON value in the input");
	return 0;
}
