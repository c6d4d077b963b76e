/*
 * core/number.h — an integer from a setting (an environment variable).
 *
 * Owns the one strict reading of such a value: decimal digits, an optional
 * leading '-', nothing before or after (no blank, no '+', no unit), inside
 * [lo, hi].  Pure: no allocation, no globals.
 */
#ifndef GT_CORE_NUMBER_H
#define GT_CORE_NUMBER_H

/* 0 and *out set when `s` is such an integer from lo to hi; -1 (and *out untouched) otherwise. */
int gt_parse_long(const char *s, long lo, long hi, long *out);

#endif
