/* analyze/jscan against yajl: the same events for the same valid JSON, fed whole and cut into pieces
 * at every size (tokens cut anywhere), the same verdict on invalid JSON; the Kineto corpora too. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "analyze/jscan.h"
#include "test.h"

struct rec {
	char *s;
	size_t n, cap;
};

static void put(struct rec *r, const char *tag, const void *p, size_t n)
{
	size_t t = strlen(tag);
	if (r->n + t + n + 2 > r->cap) {
		r->cap = (r->n + t + n + 2) * 2;
		r->s = realloc(r->s, r->cap);
	}
	memcpy(r->s + r->n, tag, t);
	memcpy(r->s + r->n + t, p, n);
	r->n += t + n;
	r->s[r->n++] = '\n';
}

static int c_null(void *c) { return put(c, "Z", "", 0), 1; }
static int c_bool(void *c, int b) { return put(c, b ? "T" : "F", "", 0), 1; }
static int c_num(void *c, const char *s, size_t n) { return put(c, "N:", s, n), 1; }
static int c_str(void *c, const unsigned char *s, size_t n) { return put(c, "S:", s, n), 1; }
static int c_key(void *c, const unsigned char *s, size_t n) { return put(c, "K:", s, n), 1; }
static int c_sm(void *c) { return put(c, "{", "", 0), 1; }
static int c_em(void *c) { return put(c, "}", "", 0), 1; }
static int c_sa(void *c) { return put(c, "[", "", 0), 1; }
static int c_ea(void *c) { return put(c, "]", "", 0), 1; }
static const yajl_callbacks cbs = {c_null, c_bool, NULL, NULL, c_num, c_str, c_sm, c_key, c_em, c_sa, c_ea};

/* yajl's events, 1 if it accepts */
static int by_yajl(const char *in, size_t n, struct rec *r)
{
	yajl_handle h = yajl_alloc(&cbs, NULL, r);
	yajl_config(h, yajl_dont_validate_strings, 1);
	int ok = yajl_parse(h, (const unsigned char *)in, n) == yajl_status_ok && yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	return ok;
}

/* jscan's events, fed in pieces of `piece` bytes (0: whole), 1 if it accepts */
static int by_jscan(const char *in, size_t n, size_t piece, struct rec *r)
{
	struct gt_js *j = gt_js_new(&cbs, r);
	int ok = 1;
	for (size_t o = 0; ok && (o < n || (n == 0 && o == 0)); o += piece ? piece : n + 1) {
		size_t k = piece && n - o > piece ? piece : n - o;
		ok = gt_js_feed(j, (const unsigned char *)in + o, k) == 0;
		if (n == 0)
			break;
	}
	ok = ok && gt_js_finish(j) == 0;
	gt_js_free(j);
	return ok;
}

/* 0 when jscan agrees with yajl on `in` for every piece size; else prints what differs */
static int agree(const char *what, const char *in, size_t n)
{
	struct rec y = {0};
	int yok = by_yajl(in, n, &y);
	static const size_t pieces[] = {0, 1, 2, 3, 5, 7, 16, 64, 4096};
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		struct rec s = {0};
		int sok = by_jscan(in, n, pieces[i], &s);
		int same = sok == yok && (!yok || (s.n == y.n && memcmp(s.s, y.s, s.n) == 0));
		if (!same) {
			fprintf(stderr, "%s (pieces of %zu): yajl %s, jscan %s\n--- yajl\n%.*s--- jscan\n%.*s", what, pieces[i],
				yok ? "accepts" : "refuses", sok ? "accepts" : "refuses", (int)(y.n < 600 ? y.n : 600), y.s ? y.s : "",
				(int)(s.n < 600 ? s.n : 600), s.s ? s.s : "");
			free(s.s);
			free(y.s);
			return -1;
		}
		free(s.s);
	}
	free(y.s);
	return 0;
}

TEST(jscan_events_equal_yajl)
{
	static const char *const valid[] = {
	    "{}", "[]", "0", "-0", "1.5e-3", "-12.25E+7", "123456789012345678901234567890", "true", "false", "null", "\"\"",
	    "  {\"a\" : [1, 2.0, -3e2, true, false, null, \"x\", {}, []] , \"b\":{\"c\":{\"d\":[[[]]]}}}  \n",
	    "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k<1, 2>\", \"ts\": 1764000000000000.001, "
	    "\"dur\": 10, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 42}}]}",
	    "[\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t end\"]", "[\"\\u0041\\u00e9\\u20ac\\ud83d\\ude00 \\udc00 x\"]",
	    "[\"nul \\u0000 inside\"]", "{\"k\\u00e9y\": \"v\"}", "[\"caf\xc3\xa9 \xe2\x82\xac raw UTF-8\"]",
	    "[\"bad UTF-8 kept: \xff\xfe\"]", "\r\n\t[1]\r\n",
	    "\v[1]\f", /* yajl's white space includes \v and \f */
	};
	static const char *const invalid[] = {
	    "", "   ", "{", "[", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{1:2}", "[1 2]", "01", "[01]", "1.", ".5", "-", "1e",
	    "1e+", "+1", "tru", "truex", "nul", "[nan]", "[\"open", "[\"a\\x\"]", "[\"\\u12\"]", "[\"\\u12g4\"]",
	    "[\"tab\there\"]", "{} {}", "[] x", "{\"a\"}", "{\"a\":}", "[,1]", "]", "}", "{]", "[}", "\"a\" \"b\"",
	};
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		ASSERT(agree(valid[i], valid[i], strlen(valid[i])) == 0);
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		ASSERT(agree(invalid[i], invalid[i], strlen(invalid[i])) == 0);
		struct rec r = {0};
		ASSERT(!by_jscan(invalid[i], strlen(invalid[i]), 0, &r)); /* and it is refused */
		free(r.s);
	}
	/* control bytes inside a string, deep nesting */
	const char ctl[] = {'[', '"', 'a', 1, 'b', '"', ']'};
	ASSERT(agree("control byte", ctl, sizeof(ctl)) == 0);
	size_t d = 100000;
	char *deep = malloc(2 * d);
	memset(deep, '[', d);
	memset(deep + d, ']', d);
	struct rec r = {0};
	ASSERT(by_jscan(deep, 2 * d, 4096, &r));
	free(r.s);
	free(deep);
}

/* the Kineto traces the tests and the fuzz target read (plain JSON ones) */
TEST(jscan_kineto_corpora_equal_yajl)
{
	const char *dirs[] = {"bad-input/kineto", "fuzz/corpus/kineto", "analyze-data"};
	int files = 0;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char dp[4096];
		snprintf(dp, sizeof(dp), "%s/%s", gt_test_srcdir(), dirs[i]);
		DIR *dir = opendir(dp);
		ASSERT(dir);
		struct dirent *e;
		while ((e = readdir(dir))) {
			size_t l = strlen(e->d_name);
			if (l < 5 || strcmp(e->d_name + l - 5, ".json") != 0)
				continue;
			char p[8192];
			snprintf(p, sizeof(p), "%s/%s", dp, e->d_name);
			size_t n = 0;
			char *t = gt_test_read_file(p, &n);
			ASSERT(t);
			ASSERT(agree(p, t, n) == 0);
			free(t);
			files++;
		}
		closedir(dir);
	}
	ASSERT(files >= 20);
}
