/*
 * report/svg.h — the plots of report.html, drawn as inline SVG (internal).
 *
 * Owns: HTML escaping, axis ticks, and four plot kinds: line charts (time
 * series), horizontal bars, stacked bars and the stream timeline.  Every
 * text that comes from data goes through gt_html_esc.  Sizes are bounded by
 * the callers (downsampled series, capped rectangles), so a page stays small
 * whatever the trace size.
 */
#ifndef GT_REPORT_SVG_H
#define GT_REPORT_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Write `s` with & < > " ' escaped. */
void gt_html_esc(FILE *f, const char *s);
/* A section's "No data: why" paragraph. */
void gt_html_absent(FILE *f, const char *why);

/* "1.23 ms", "456 us", "2.1 s", "2865 s": never an exponent; "-" for NAN */
void gt_fmt_ns(char *buf, size_t len, double ns);
/* 4 significant digits, never an exponent ("286500", "0.1234"); "-" for NAN */
void gt_fmt_num(char *buf, size_t len, double v);
/* "1.5 GiB", "12 MiB", "300 B" */
void gt_fmt_bytes(char *buf, size_t len, double bytes);

#define GT_PALETTE_N 10
extern const char *const gt_palette[GT_PALETTE_N];

struct gt_series {
	const char *name;
	const double *x, *y; /* x in seconds from the run start */
	size_t n;
};
/* A line chart of several series over time; y axis labelled `ylabel`. */
void gt_svg_lines(FILE *f, const char *title, const char *ylabel, const struct gt_series *s, size_t ns);
struct gt_line_opts {
	double ymin, ymax; /* a fixed y range (a percentage: 0, 100) when both are finite; else from the data */
	int mark_peak;     /* mark the largest value: <text class="peak" data-series=NAME>peak V UNIT (NAME)</text>,
			    * V with 3 decimals as the tables write it */
	const char *unit;
};
void gt_svg_lines_opt(FILE *f, const char *title, const char *ylabel, const struct gt_series *s, size_t ns,
		      const struct gt_line_opts *o);

struct gt_bar {
	const char *label;
	double value;
	const char *note;  /* text after the bar (may be NULL: the value) */
	const char *title; /* the bar's hover text (may be NULL: the label), e.g. a kernel's whole name */
};
/* Horizontal bars, largest first as given. */
void gt_svg_hbars(FILE *f, const char *title, const struct gt_bar *b, size_t n, const char *unit);

/* Stacked vertical bars: ncats values per bar (values[bar * ncats + cat]).  A bar more than 3 times
 * the median (a warm-up iteration) is drawn cut at the top of a scale set by the others, with a break
 * mark and its value (<text class="clipped">); returns the number of bars cut. */
size_t gt_svg_stacked(FILE *f, const char *title, const char *const *bar_labels, size_t nbars,
		    const char *const *cat_names, const char *const *cat_colors, size_t ncats, const double *values,
		    const char *unit);

/* Stacked horizontal bars, one row per label (for many rows with long labels). */
void gt_svg_hstacked(FILE *f, const char *title, const char *const *bar_labels, size_t nbars,
		     const char *const *cat_names, const char *const *cat_colors, size_t ncats, const double *values,
		     const char *unit);

/* Timeline: lanes of [start, end) spans of a kind (0 kernel, 1 copy, 2 memset)
 * drawn on [t0, t1] (ns). */
struct gt_tl_span {
	double start, end;
	uint8_t kind;
};
struct gt_tl_lane {
	char label[96];
	struct gt_tl_span *spans;
	size_t n, cap;
	uint64_t events; /* events before downsampling */
};
void gt_svg_timeline(FILE *f, const char *title, const struct gt_tl_lane *lanes, size_t nlanes, double t0, double t1,
		     const char *xlabel);

#endif
