/*
 * analyze/jscan.h — a streaming JSON reader for the Kineto reader, with yajl's callback interface
 * (yajl_callbacks: null, boolean, number as text, string, map key, start/end of maps and arrays).
 *
 * Owns: tokenizing JSON fed in pieces of any size, checking it against the JSON grammar (RFC 8259:
 * no trailing commas, numbers as the grammar writes them, no control bytes in strings, one value),
 * decoding string escapes (\uXXXX to UTF-8, surrogates as yajl decodes them), and calling back.
 *
 * Why: yajl's lexer was two thirds of the parser thread's time on real PyTorch traces; this one
 * finds the end of a string with a table scan, hands strings without escapes to the callback where
 * they lie, and copies only a token cut by the end of a piece.
 *
 * Invariants: memory is the nesting depth (a byte per level) plus the longest token cut by a piece's
 * end (a string is scanned once, however many pieces it spans); callbacks see exactly what yajl
 * would give them (tests/unit/test_jscan.c and the differential fuzz target tests/fuzz/fuzz_jscan.c
 * check the events of both on the same inputs).  One difference: yajl accepts a token left
 * unfinished after the document ("1\"}"), jscan refuses it.
 */
#ifndef GT_AN_JSCAN_H
#define GT_AN_JSCAN_H

#include <stddef.h>

#include <yajl/yajl_parse.h>

struct gt_js;

/* NULL: out of memory.  Only the callbacks null, boolean, number, string, map key, start/end map and
 * array are used (integer and double are not: numbers are handed as text). */
struct gt_js *gt_js_new(const yajl_callbacks *cb, void *ctx);
void gt_js_free(struct gt_js *j);
/* The next piece.  0, or -1: a syntax error (gt_js_error) or a callback returned 0 (gt_js_stopped);
 * gt_js_consumed then says where in this piece. */
int gt_js_feed(struct gt_js *j, const unsigned char *p, size_t n);
/* The end of the input: 0, or -1 (the document is cut short, or empty). */
int gt_js_finish(struct gt_js *j);
size_t gt_js_consumed(const struct gt_js *j);
const char *gt_js_error(const struct gt_js *j);
int gt_js_stopped(const struct gt_js *j);

#endif
