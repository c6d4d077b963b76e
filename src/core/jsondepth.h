/*
 * core/jsondepth.h — how deep a JSON text nests, checked before a tree parser sees it.
 *
 * Owns: one linear pass over a whole JSON text in memory (strings and their escapes skipped) that
 * finds the first place where arrays and objects nest deeper than a limit.  yajl_tree builds and
 * frees its tree recursively, one stack frame per level, so every yajl_tree_parse of a file a user
 * gives (run.json, --map, --config, run --context-file) is preceded by this check; the streaming
 * readers (Kineto) keep no recursion and need none.
 */
#ifndef GT_JSONDEPTH_H
#define GT_JSONDEPTH_H

#include <stddef.h>

/* Deeper than any configuration or run.json gputap reads; far below what a stack can hold. */
#define GT_JSON_MAX_DEPTH 512

/* 0 when text[0..len) nests at most `max` levels; else the 1-based line where it goes deeper.
 * Not a validator: what is not a string or a bracket is left to the parser. */
long gt_json_too_deep(const char *text, size_t len, int max);

#endif
