/* Inline SVG plots for report.html. */
#include "report/svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sort.h"

const char *const gt_palette[GT_PALETTE_N] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
					      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

void gt_html_esc(FILE *f, const char *s)
{
	if (!s)
		return;
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

void gt_html_absent(FILE *f, const char *why)
{
	fputs("<p class=\"absent\">No data: ", f);
	gt_html_esc(f, why);
	fputs("</p>\n", f);
}

/* `sig` significant digits (%g's), but never an exponent: "286500", not "2.865e+05" */
static void fmt_sig(char *buf, size_t len, double v, int sig, const char *unit)
{
	double a = fabs(v), big = pow(10, sig) - 0.5;
	const char *sp = unit[0] ? " " : "";
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (a >= big)
		snprintf(buf, len, "%.0f%s%s", v, sp, unit);
	else if (a == 0 || a >= 1e-4)
		snprintf(buf, len, "%.*g%s%s", sig, v, sp, unit);
	else
		snprintf(buf, len, "%.6f%s%s", v, sp, unit);
}

void gt_fmt_num(char *buf, size_t len, double v) { fmt_sig(buf, len, v, 4, ""); }

void gt_fmt_ns(char *buf, size_t len, double ns)
{
	double a = fabs(ns);
	if (!isfinite(ns))
		snprintf(buf, len, "-");
	else if (a >= 1e9)
		fmt_sig(buf, len, ns / 1e9, 3, "s");
	else if (a >= 1e6)
		fmt_sig(buf, len, ns / 1e6, 3, "ms");
	else if (a >= 1e3)
		fmt_sig(buf, len, ns / 1e3, 3, "us");
	else
		snprintf(buf, len, "%.0f ns", ns);
}

void gt_fmt_bytes(char *buf, size_t len, double b)
{
	const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int i = 0;
	while (fabs(b) >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	if (i)
		fmt_sig(buf, len, b, 3, u[i]);
	else
		snprintf(buf, len, "%.0f %s", b, u[i]);
}

/* A "nice" tick step covering `range` in about `n` steps. */
static double nice_step(double range, int n)
{
	if (!(range > 0))
		return 1;
	double raw = range / n, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

/* Make [*lo, *hi] a range a plot can divide by: finite, and wider than the rounding step of a
 * double at that magnitude (a flat series at -1e20 has hi - lo = 0). */
static void plot_range(double *lo, double *hi)
{
	if (!isfinite(*lo) || !isfinite(*hi) || !isfinite(*hi - *lo)) {
		*lo = 0;
		*hi = 1;
		return;
	}
	double mag = fmax(fabs(*lo), fabs(*hi));
	if (!(*hi - *lo > mag * 4e-16)) {
		double pad = fmax(mag * 1e-12, 0.5);
		*lo -= pad;
		*hi += pad;
	}
}

/* Ticks of `step` in [lo, hi]: how many (at most MAX_TICKS) and the first.  Counted, so a step
 * too small to move the value can never loop. */
#define MAX_TICKS 64
static int ticks(double lo, double hi, double step, double *first)
{
	if (!(step > 0) || !isfinite(step) || !(hi >= lo))
		return 0;
	*first = ceil(lo / step) * step;
	double n = floor((hi - *first) / step * (1 + 1e-9)) + 1;
	return !(n > 0) ? 0 : n > MAX_TICKS ? MAX_TICKS : (int)n;
}

static void fmt_tick(char *b, size_t n, double v)
{
	if (fabs(v) < 1e-12)
		v = 0; /* no "-0" from accumulated steps */
	if (fabs(v) >= 1e6) /* no exponent on an axis either */
		snprintf(b, n, "%.0f", v);
	else if (fabs(v) < 1e-3 && v != 0)
		snprintf(b, n, "%.6f", v);
	else
		snprintf(b, n, "%.6g", v);
}

#define W 1100
#define ML 70 /* left margin */
#define MR 170
#define MT 30
#define MB 40

static void svg_open(FILE *f, int h, const char *title)
{
	fprintf(f, "<svg class=\"plot\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" role=\"img\"><title>",
		W, h, W, h);
	gt_html_esc(f, title);
	fputs("</title>\n", f);
	fprintf(f, "<text x=\"%d\" y=\"18\" class=\"pt\">", ML);
	gt_html_esc(f, title);
	fputs("</text>\n", f);
}

static void axes(FILE *f, int h, double x0, double x1, double y0, double y1, const char *xlabel,
		 const char *ylabel)
{
	int pw = W - ML - MR, ph = h - MT - MB;
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", ML, MT, pw, ph);
	double sy = nice_step(y1 - y0, 5), v0 = 0;
	char b[32];
	for (int i = 0, nt = ticks(y0, y1, sy, &v0); i < nt; i++) {
		double v = v0 + i * sy;
		double py = MT + ph - (v - y0) / (y1 - y0) * ph;
		fmt_tick(b, sizeof(b), v);
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", ML, ML + pw, py, py);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"yt\">%s</text>\n", ML - 6, py + 4, b);
	}
	double sx = nice_step(x1 - x0, 8);
	for (int i = 0, nt = ticks(x0, x1, sx, &v0); i < nt; i++) {
		double v = v0 + i * sx;
		double px = ML + (v - x0) / (x1 - x0) * pw;
		fmt_tick(b, sizeof(b), v);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xt\">%s</text>\n", px, MT + ph + 16, b);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"xl\">", ML + pw / 2, h - 6);
	gt_html_esc(f, xlabel);
	fprintf(f, "</text><text x=\"14\" y=\"%d\" class=\"yl\" transform=\"rotate(-90 14 %d)\">", MT + ph / 2,
		MT + ph / 2);
	gt_html_esc(f, ylabel);
	fputs("</text>\n", f);
}

void gt_svg_lines(FILE *f, const char *title, const char *ylabel, const struct gt_series *s, size_t ns)
{
	gt_svg_lines_opt(f, title, ylabel, s, ns, NULL);
}

void gt_svg_lines_opt(FILE *f, const char *title, const char *ylabel, const struct gt_series *s, size_t ns,
		      const struct gt_line_opts *o)
{
	int h = 300;
	double x0 = INFINITY, x1 = -INFINITY, y0 = 0, y1 = -INFINITY;
	size_t pk_s = 0, pk_j = 0;
	int has_pk = 0;
	for (size_t i = 0; i < ns; i++)
		for (size_t j = 0; j < s[i].n; j++) {
			if (!isfinite(s[i].x[j]) || !isfinite(s[i].y[j]))
				continue;
			x0 = fmin(x0, s[i].x[j]);
			x1 = fmax(x1, s[i].x[j]);
			y0 = fmin(y0, s[i].y[j]);
			if (!has_pk || s[i].y[j] > s[pk_s].y[pk_j]) {
				pk_s = i;
				pk_j = j;
				has_pk = 1;
			}
			y1 = fmax(y1, s[i].y[j]);
		}
	if (!isfinite(x0)) {
		x0 = 0;
		x1 = 1;
		y1 = 1;
	}
	plot_range(&x0, &x1);
	plot_range(&y0, &y1);
	y1 += (y1 - y0) * (o && o->mark_peak ? 0.12 : 0.05); /* room for the peak's label */
	if (o && isfinite(o->ymin) && isfinite(o->ymax) && o->ymax > o->ymin) { /* a fixed scale (0-100 %) */
		y0 = fmin(o->ymin, y0);
		y1 = fmax(o->ymax, y1 > o->ymax * 1.05 ? y1 : o->ymax);
	}
	svg_open(f, h, title);
	axes(f, h, x0, x1, y0, y1, "time since start (s)", ylabel);
	int pw = W - ML - MR, ph = h - MT - MB;
	if (o && o->mark_peak && has_pk) { /* the largest value, marked and labelled as the tables write it */
		double v = s[pk_s].y[pk_j];
		double px = ML + (s[pk_s].x[pk_j] - x0) / (x1 - x0) * pw, py = MT + ph - (v - y0) / (y1 - y0) * ph;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" class=\"pk\"/><text x=\"%.1f\" y=\"%.1f\" "
			   "class=\"peak\" text-anchor=\"%s\" data-series=\"",
			px, py, px + (px > ML + pw * 0.7 ? -6 : 6), py - 5, px > ML + pw * 0.7 ? "end" : "start");
		gt_html_esc(f, s[pk_s].name);
		fprintf(f, "\">peak %.3f %s (", v, o->unit ? o->unit : "");
		gt_html_esc(f, s[pk_s].name);
		fputs(")</text>\n", f);
	}
	for (size_t i = 0; i < ns; i++) {
		const char *col = gt_palette[i % GT_PALETTE_N];
		fprintf(f, "<polyline class=\"ln\" stroke=\"%s\" points=\"", col);
		for (size_t j = 0; j < s[i].n; j++) {
			if (!isfinite(s[i].x[j]) || !isfinite(s[i].y[j]))
				continue;
			fprintf(f, "%.1f,%.1f ", ML + (s[i].x[j] - x0) / (x1 - x0) * pw,
				MT + ph - (s[i].y[j] - y0) / (y1 - y0) * ph);
		}
		fputs("\"/>\n", f);
		fprintf(f, "<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%zu\" "
			   "class=\"lg\">",
			W - MR + 12, MT + i * 18, col, W - MR + 30, MT + i * 18 + 10);
		gt_html_esc(f, s[i].name);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

void gt_svg_hbars(FILE *f, const char *title, const struct gt_bar *b, size_t n, const char *unit)
{
	int row = 22, lw = 260;
	int h = MT + (int)n * row + 20;
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(b[i].value))
			mx = fmax(mx, b[i].value);
	if (mx <= 0)
		mx = 1;
	svg_open(f, h, title);
	/* room for the longest text after a bar (about 6.6 px a character at 11 px), so that it stays in */
	size_t nl = 12;
	for (size_t i = 0; i < n; i++)
		if (b[i].note && strlen(b[i].note) > nl)
			nl = strlen(b[i].note);
	double room = fmin(560, fmax(120, (double)nl * 6.6 + 16));
	int pw = W - lw - (int)room;
	for (size_t i = 0; i < n; i++) {
		int y = MT + (int)i * row;
		double bw = isfinite(b[i].value) && b[i].value > 0 ? b[i].value / mx * pw : 0;
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"bl\">", lw - 8, y + 15);
		char lab[64];
		snprintf(lab, sizeof(lab), "%.60s", b[i].label ? b[i].label : "");
		gt_html_esc(f, lab);
		fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", lw, y + 3,
			bw < 1 && b[i].value > 0 ? 1 : bw, row - 6, gt_palette[i % GT_PALETTE_N]);
		gt_html_esc(f, b[i].title ? b[i].title : b[i].label);
		fprintf(f, "</title></rect><text x=\"%.1f\" y=\"%d\" class=\"bv\">", lw + bw + 6, y + 15);
		gt_html_esc(f, b[i].note ? b[i].note : "");
		if (!b[i].note) {
			char v[48];
			gt_fmt_num(v, sizeof(v), b[i].value);
			fprintf(f, "%s %s", v, unit);
		}
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

/* The categories' colour key at the right of a chart, and the chart's end. */
static void legend(FILE *f, const char *const *cat_names, const char *const *cat_colors, size_t ncats)
{
	for (size_t c = 0; c < ncats; c++) {
		fprintf(f, "<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%zu\" "
			   "class=\"lg\">",
			W - MR + 12, MT + c * 18, cat_colors[c], W - MR + 30, MT + c * 18 + 10);
		gt_html_esc(f, cat_names[c]);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The scale of stacked bars: the largest total, or — when a few bars (a warm-up iteration) are more
 * than 3 times the median — 1.25 times the largest of the others, so that one bar does not flatten
 * the rest; the bars above it are drawn cut, with their value. */
static double stacked_scale(const double *tot, size_t n)
{
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		mx = fmax(mx, tot[i]);
	if (n < 3 || !(mx > 0))
		return mx;
	double *v = malloc(n * sizeof(*v));
	if (!v)
		return mx;
	memcpy(v, tot, n * sizeof(*v));
	gt_sort(v, n, sizeof(*v), dbl_cmp);
	double med = v[n / 2], rest = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] <= 3 * med)
			rest = fmax(rest, v[i]);
	free(v);
	return med > 0 && mx > 3 * med && rest > 0 ? rest * 1.25 : mx;
}

size_t gt_svg_stacked(FILE *f, const char *title, const char *const *bar_labels, size_t nbars,
		      const char *const *cat_names, const char *const *cat_colors, size_t ncats, const double *values,
		      const char *unit)
{
	int h = 320;
	double *tot = calloc(nbars ? nbars : 1, sizeof(*tot));
	if (!tot)
		return 0;
	for (size_t i = 0; i < nbars; i++)
		for (size_t c = 0; c < ncats; c++)
			tot[i] += fmax(0, values[i * ncats + c]);
	double mx = stacked_scale(tot, nbars);
	size_t clipped = 0;
	if (!(mx > 0) || !isfinite(mx))
		mx = 1;
	svg_open(f, h, title);
	int pw = W - ML - MR, ph = h - MT - MB;
	char yl[64];
	snprintf(yl, sizeof(yl), "%s", unit);
	double sy = nice_step(mx, 5), v0 = 0;
	char b[32];
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", ML, MT, pw, ph);
	for (int i = 0, nt = ticks(0, mx * 1.0001, sy, &v0); i < nt; i++) {
		double v = v0 + i * sy;
		double py = MT + ph - v / mx * ph;
		fmt_tick(b, sizeof(b), v);
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/><text x=\"%d\" "
			   "y=\"%.1f\" class=\"yt\">%s</text>\n",
			ML, ML + pw, py, py, ML - 6, py + 4, b);
	}
	fprintf(f, "<text x=\"14\" y=\"%d\" class=\"yl\" transform=\"rotate(-90 14 %d)\">", MT + ph / 2, MT + ph / 2);
	gt_html_esc(f, yl);
	fputs("</text>\n", f);
	double slot = (double)pw / (double)(nbars ? nbars : 1);
	double bw = fmax(1, slot * 0.7);
	size_t label_every = nbars > 40 ? (nbars + 39) / 40 : 1;
	for (size_t i = 0; i < nbars; i++) {
		double x = ML + slot * (double)i + (slot - bw) / 2, y = MT + ph;
		for (size_t c = 0; c < ncats; c++) {
			double v = fmax(0, values[i * ncats + c]), hh = v / mx * ph;
			if (hh <= 0)
				continue;
			if (y - hh < MT) /* a bar above the scale: cut at the top */
				hh = y - MT;
			if (hh <= 0)
				continue;
			y -= hh;
			char vb[48];
			gt_fmt_num(vb, sizeof(vb), v);
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>", x, y, bw,
				hh, cat_colors[c]);
			gt_html_esc(f, bar_labels[i]);
			fputs(": ", f);
			gt_html_esc(f, cat_names[c]);
			fprintf(f, " %s %s</title></rect>", vb, unit);
		}
		if (tot[i] > mx) { /* cut: a break mark across the top and the bar's whole value */
			char vb[48];
			gt_fmt_num(vb, sizeof(vb), tot[i]);
			fprintf(f, "<path d=\"M%.1f %d l%.1f -4 l%.1f 8 l%.1f -4\" class=\"cut\"/><text x=\"%.1f\" y=\"%d\" "
				   "class=\"clipped\" text-anchor=\"middle\" data-bar=\"",
				x, MT + 8, bw / 3, bw / 3, bw / 3, x + bw / 2, MT - 3);
			gt_html_esc(f, bar_labels[i]);
			fprintf(f, "\">%s %s (cut)</text>", vb, unit);
			clipped++;
		}
		if (i % label_every == 0) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xt\">", x + bw / 2, MT + ph + 16);
			gt_html_esc(f, bar_labels[i]);
			fputs("</text>", f);
		}
		fputc('\n', f);
	}
	legend(f, cat_names, cat_colors, ncats);
	free(tot);
	return clipped;
}

void gt_svg_hstacked(FILE *f, const char *title, const char *const *bar_labels, size_t nbars,
		     const char *const *cat_names, const char *const *cat_colors, size_t ncats, const double *values,
		     const char *unit)
{
	int row = 20, lw = 230;
	int h = MT + (int)nbars * row + 50;
	double mx = 0;
	for (size_t i = 0; i < nbars; i++) {
		double s = 0;
		for (size_t c = 0; c < ncats; c++)
			s += fmax(0, values[i * ncats + c]);
		mx = fmax(mx, s);
	}
	if (mx <= 0)
		mx = 1;
	svg_open(f, h, title);
	int pw = W - lw - MR;
	int ya = MT + (int)nbars * row;
	double sx = nice_step(mx, 6), v0 = 0;
	char b[32];
	for (int t = 0, nt = ticks(0, mx * 1.0001, sx, &v0); t < nt; t++) {
		double v = v0 + t * sx;
		double px = lw + v / mx * pw;
		fmt_tick(b, sizeof(b), v);
		fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"grid\"/><text x=\"%.1f\" "
			   "y=\"%d\" class=\"xt\">%s</text>\n",
			px, px, MT, ya, px, ya + 14, b);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"xl\">", lw + pw / 2, ya + 32);
	gt_html_esc(f, unit);
	fputs("</text>\n", f);
	for (size_t i = 0; i < nbars; i++) {
		int y = MT + (int)i * row;
		double x = lw;
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"bl\">", lw - 8, y + 14);
		gt_html_esc(f, bar_labels[i]);
		fputs("</text>", f);
		for (size_t c = 0; c < ncats; c++) {
			double v = fmax(0, values[i * ncats + c]), w = v / mx * pw;
			if (w <= 0)
				continue;
			char vb[48];
			gt_fmt_num(vb, sizeof(vb), v);
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>", x,
				y + 3, w, row - 6, cat_colors[c]);
			gt_html_esc(f, bar_labels[i]);
			fputs(": ", f);
			gt_html_esc(f, cat_names[c]);
			fprintf(f, " %s %s</title></rect>", vb, unit);
			x += w;
		}
		fputc('\n', f);
	}
	legend(f, cat_names, cat_colors, ncats);
}

void gt_svg_timeline(FILE *f, const char *title, const struct gt_tl_lane *lanes, size_t nlanes, double t0, double t1,
		     const char *xlabel)
{
	int lh = 18, lw = 230;
	int h = MT + (int)nlanes * lh + 50;
	plot_range(&t0, &t1);
	svg_open(f, h, title);
	int pw = W - lw - 30;
	static const char *const kind_col[3] = {"#4e79a7", "#e15759", "#59a14f"};
	static const char *const kind_name[3] = {"kernel", "copy", "memset"};
	for (size_t i = 0; i < nlanes; i++) {
		int y = MT + (int)i * lh;
		fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"bl\">", lw - 8, y + 13);
		gt_html_esc(f, lanes[i].label);
		fprintf(f, "</text><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"lane\"/>\n", lw, y + 2, pw,
			lh - 4);
		for (size_t j = 0; j < lanes[i].n; j++) {
			const struct gt_tl_span *s = &lanes[i].spans[j];
			double x = lw + (s->start - t0) / (t1 - t0) * pw, w = (s->end - s->start) / (t1 - t0) * pw;
			unsigned k = s->kind < 3 ? s->kind : 0;
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", x, y + 3,
				w < 0.5 ? 0.5 : w, lh - 6, kind_col[k]);
		}
		fputc('\n', f);
	}
	/* time axis in seconds from t0 */
	double span_s = (t1 - t0) / 1e9, st = nice_step(span_s, 8), v0 = 0;
	int ya = MT + (int)nlanes * lh + 14;
	char b[32];
	for (int i = 0, nt = ticks(0, span_s * 1.0001, st, &v0); i < nt; i++) {
		double v = v0 + i * st;
		double x = lw + v / span_s * pw;
		fmt_tick(b, sizeof(b), v);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xt\">%s</text>", x, ya, b);
	}
	fprintf(f, "\n<text x=\"%d\" y=\"%d\" class=\"xl\">", lw + pw / 2, ya + 18);
	gt_html_esc(f, xlabel);
	fputs("</text>\n", f);
	for (int k = 0; k < 3; k++)
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
			   "class=\"lg\">%s</text>\n",
			10 + k * 90, ya + 8, kind_col[k], 26 + k * 90, ya + 18, kind_name[k]);
	fputs("</svg>\n", f);
}
