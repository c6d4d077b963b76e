/*
 * analyze/output_detail.c — the per-op analyses in the three formats: idle time by cause and the
 * launch queue per stream, top kernels per kind and rank with their launch statistics, memory
 * bandwidth per kind, and what HTA's default view would leave out.  Definitions: docs/analyze.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "analyze/an_internal.h"
#include "analyze/emit.h"
#include "core/log.h"

#define MS(ns) ((ns) / 1e6)
#define US(ns) ((ns) / 1e3)

static const char *const idle_names[GT_IDLE_N] = {"host_wait", "kernel_wait", "other"};


static double pct(double a, double b) { return b > 0 ? a / b * 100.0 : 0.0; }

/* A number of a text table, "-" when it is unknown (NAN). */
static void tnum(FILE *f, int w, int prec, double v)
{
	if (isfinite(v))
		fprintf(f, "%*.*f", w, prec, v);
	else
		fprintf(f, "%*s", w, "-");
}

double gt_an_kind_time(const struct gt_an_result *r, int source, int cat)
{
	double t = 0;
	for (size_t i = 0; i < r->nkernels; i++)
		if (r->kernels[i].source == source && r->kernels[i].cat == cat)
			t += r->kernels[i].time_ns;
	return t;
}

int gt_an_next_rank_launches(const struct gt_an_result *r, size_t *i, struct gt_an_launches *o)
{
	memset(o, 0, sizeof(*o));
	if (*i >= r->nkernels)
		return -1;
	int s = r->kernels[*i].source;
	for (; *i < r->nkernels && r->kernels[*i].source == s; (*i)++) {
		const struct gt_an_kernel *k = &r->kernels[*i];
		o->ops += k->count;
		o->launched += k->launched;
		o->short_n += k->short_n;
		o->delay_outliers += k->delay_outliers;
		o->runtime_outliers += k->runtime_outliers;
		o->delay_ns += k->delay_ns;
		o->cpu_ns += k->cpu_ns;
	}
	return s;
}

static void hta_lines(const struct gt_an_result *r, FILE *f)
{
	const struct gt_an_hta *h = &r->hta;
	if (h->left_out_ops)
		fprintf(f, "Left out here (%s%s%s): %llu GPU ops, %.3f ms\n", r->launched_only ? "--launched-only" : "",
			r->launched_only && r->without_last_step ? ", " : "",
			r->without_last_step ? "--without-last-step" : "", (unsigned long long)h->left_out_ops,
			MS(h->left_out_ns));
	int any = (!r->launched_only && h->nolaunch_ops) || (!r->without_last_step && h->last_step_ops) ||
		  h->sync_events || h->cpu_stream_events;
	if (!any)
		return;
	fprintf(f, "\nWhat HTA's default view would count differently:\n");
	if (!r->launched_only && h->nolaunch_ops)
		fprintf(f, "  %llu GPU ops launched before the trace began (no launch event), %.3f ms: counted here, "
			   "left out by HTA (--launched-only leaves them out)\n",
			(unsigned long long)h->nolaunch_ops, MS(h->nolaunch_ns));
	if (!r->without_last_step && h->last_step_ops)
		fprintf(f, "  %llu GPU ops launched in the last ProfilerStep, %.3f ms: counted here, left out by HTA's "
			   "default (--without-last-step leaves them out)\n",
			(unsigned long long)h->last_step_ops, MS(h->last_step_ns));
	if (h->sync_events)
		fprintf(f, "  %llu cuda_sync events: not GPU work here, counted as GPU work by HTA\n",
			(unsigned long long)h->sync_events);
	if (h->cpu_stream_events)
		fprintf(f, "  %llu CPU-side events that carry args.stream: not GPU work here, counted as GPU work by HTA\n",
			(unsigned long long)h->cpu_stream_events);
}

void gt_an_text_detail(const struct gt_an_result *r, FILE *f)
{
	if (r->nstreams) {
		fprintf(f, "\nIdle time per stream by cause (host wait: the launch call started after the previous op "
			   "ended; kernel wait: a gap under %.0f us; queue: ops launched, not yet started):\n",
			US(r->kernel_wait_ns));
		fprintf(f, "%-20s%10s%10s%14s%14s%14s%14s%10s%10s\n", "GPU", "Stream", "Ops", "Idle(ms)",
			"HostWait(ms)", "KernWait(ms)", "Other(ms)", "QueueMax", "QueueAvg");
		for (size_t i = 0; i < r->nstreams; i++) {
			const struct gt_an_stream *s = &r->streams[i];
			double tot = s->idle_ns[0] + s->idle_ns[1] + s->idle_ns[2];
			char lb[256];
			fprintf(f, "%-20s%10u%10llu%14.3f%14.3f%14.3f%14.3f",
				s->gpu < r->ngpu ? gt_term_str(r->gpu[s->gpu].label, lb, sizeof(lb)) : "?", s->stream,
				(unsigned long long)s->ops, MS(tot), MS(s->idle_ns[0]), MS(s->idle_ns[1]), MS(s->idle_ns[2]));
			/* no launch call of the stream's ops in the trace: its queue is unknown, not empty */
			tnum(f, 10, 0, s->queued ? (double)s->queue_max : NAN);
			tnum(f, 10, 2, s->queued ? s->queue_time_mean : NAN);
			fputc('\n', f);
		}
	}
	if (r->nkernels) {
		fprintf(f, "\nTop %d kernels per kind and rank (share of the kind's time on the rank; launch delay = GPU "
			   "start - end of the launch call, in us):\n",
			r->top);
		fprintf(f, "%-16s%-15s%12s%9s%9s%10s%10s%10s%8s  %s\n", "Rank", "Kind", "Time(ms)", "Share(%)", "Count",
			"Delay50", "Delay90", "DelayMax", "Short", "Kernel");
		int src = -1, cat = -1, n = 0;
		for (size_t i = 0; i < r->nkernels; i++) {
			const struct gt_an_kernel *k = &r->kernels[i];
			if (k->source != src || k->cat != cat) {
				src = k->source;
				cat = k->cat;
				n = 0;
			}
			if (n++ >= r->top)
				continue;
			char rl[64], nb[512], rb[256], sn[96];
			gt_an_source_label(r, k->source, rl, sizeof(rl));
			gt_an_short_name(k->name, 70, sn, sizeof(sn));
			fprintf(f, "%-16.16s%-15s%12.3f%9.2f%9llu", gt_term_str(rl, rb, sizeof(rb)), gt_an_kind_name(k->cat),
				MS(k->time_ns), pct(k->time_ns, gt_an_kind_time(r, k->source, k->cat)),
				(unsigned long long)k->count);
			tnum(f, 10, 1, US(k->delay_p50_ns));
			tnum(f, 10, 1, US(k->delay_p90_ns));
			tnum(f, 10, 1, US(k->delay_max_ns));
			fprintf(f, "%8llu  %s\n", (unsigned long long)k->short_n, gt_term_str(sn, nb, sizeof(nb)));
		}
		/* per rank: the launches together */
		fprintf(f, "\nKernel launches per rank (short: launch call <= %.0f us and the op shorter than it; "
			   "outliers: delay > %.0f us, launch call > %.0f us):\n",
			US(r->runtime_cutoff_ns), US(r->delay_cutoff_ns), US(r->runtime_cutoff_ns));
		fprintf(f, "%-16s%10s%10s%14s%14s%10s%14s%14s\n", "Rank", "Ops", "Launched", "DelayAvg(us)",
			"LaunchAvg(us)", "Short", "DelayOutliers", "CallOutliers");
		struct gt_an_launches a;
		int s, unknown = 0;
		for (size_t i = 0; (s = gt_an_next_rank_launches(r, &i, &a)) >= 0;) {
			unknown |= !a.launched;
			char rl[64], rb[256];
			gt_an_source_label(r, s, rl, sizeof(rl));
			fprintf(f, "%-16.16s%10llu%10llu", gt_term_str(rl, rb, sizeof(rb)), (unsigned long long)a.ops,
				(unsigned long long)a.launched);
			/* no launch call in the trace: the delays are unknown, not 0 */
			tnum(f, 14, 2, a.launched ? US(a.delay_ns) / (double)a.launched : NAN);
			tnum(f, 14, 2, a.launched ? US(a.cpu_ns) / (double)a.launched : NAN);
			fprintf(f, "%10llu%14llu%14llu\n", (unsigned long long)a.short_n, (unsigned long long)a.delay_outliers,
				(unsigned long long)a.runtime_outliers);
		}
		if (unknown)
			fprintf(f, "-: no launch call of the rank's ops is in the trace (no CUDA runtime or driver events): "
				   "their launch delays are unknown (null in JSON)\n");
	}
	if (r->nmembw) {
		fprintf(f, "\nMemory bandwidth per kind (peak: the ops running at once, together):\n");
		fprintf(f, "%-20s%-16s%10s%14s%12s%12s%12s\n", "GPU", "Kind", "Count", "Bytes(MB)", "Time(ms)", "Avg(GB/s)",
			"Peak(GB/s)");
		for (size_t i = 0; i < r->nmembw; i++) {
			const struct gt_an_membw *m = &r->membw[i];
			fprintf(f, "%-20s%-16s%10llu%14.3f%12.3f%12.3f%12.3f\n",
				m->gpu < r->ngpu ? r->gpu[m->gpu].label : "?", m->kind, (unsigned long long)m->count,
				(double)m->bytes / 1e6, MS(m->time_ns), m->avg_gbps, m->peak_gbps);
		}
	}
	hta_lines(r, f);
}

#define GS(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

void gt_an_json_detail(void *gen, const struct gt_an_result *r)
{
	yajl_gen g = gen;
	if (!r->has_timeline)
		return;
	GS(g, "iteration_assignment_detail");
	yajl_gen_map_open(g);
	gt_an_jint(g, "by_launch_event", r->by_launch_event);
	gt_an_jint(g, "by_launch_range", r->by_launch_range);
	yajl_gen_map_close(g);
	GS(g, "hta_view");
	yajl_gen_map_open(g);
	const struct gt_an_hta *h = &r->hta;
	gt_an_jint(g, "launched_only", (unsigned)r->launched_only);
	gt_an_jint(g, "without_last_step", (unsigned)r->without_last_step);
	gt_an_jint(g, "left_out_ops", h->left_out_ops);
	gt_an_jnum(g, "left_out_ms", MS(h->left_out_ns));
	gt_an_jint(g, "no_launch_event_ops", h->nolaunch_ops);
	gt_an_jnum(g, "no_launch_event_ms", MS(h->nolaunch_ns));
	gt_an_jint(g, "last_step_ops", h->last_step_ops);
	gt_an_jnum(g, "last_step_ms", MS(h->last_step_ns));
	gt_an_jint(g, "cuda_sync_events", h->sync_events);
	gt_an_jint(g, "cpu_events_with_stream", h->cpu_stream_events);
	yajl_gen_map_close(g);
	gt_an_jint(g, "buckets", r->nbuckets);
	GS(g, "bucket_ns");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->ngpu; i++) {
		yajl_gen_map_open(g);
		GS(g, "gpu");
		GS(g, r->gpu[i].label);
		gt_an_jint(g, "start_ns", r->gpu[i].bucket0_ns);
		gt_an_jint(g, "width_ns", r->gpu[i].bucket_ns);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "streams");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->nstreams; i++) {
		const struct gt_an_stream *s = &r->streams[i];
		yajl_gen_map_open(g);
		GS(g, "gpu");
		GS(g, s->gpu < r->ngpu ? r->gpu[s->gpu].label : "?");
		gt_an_jint(g, "stream", s->stream);
		gt_an_jint(g, "ops", s->ops);
		gt_an_jnum(g, "kernel_wait_threshold_us", US(r->kernel_wait_ns));
		for (int c = 0; c < GT_IDLE_N; c++) {
			char k[64];
			snprintf(k, sizeof(k), "idle_%s_ms", idle_names[c]);
			gt_an_jnum(g, k, MS(s->idle_ns[c]));
			snprintf(k, sizeof(k), "idle_%s_gaps", idle_names[c]);
			gt_an_jint(g, k, s->idle_n[c]);
		}
		gt_an_jint(g, "queued_ops", s->queued);
		if (s->queued) {
			gt_an_jint(g, "queue_max", s->queue_max);
		} else { /* unknown: no launch call of the stream's ops in the trace */
			GS(g, "queue_max");
			yajl_gen_null(g);
		}
		gt_an_jnum(g, "queue_mean", s->queued ? s->queue_mean : NAN);
		gt_an_jnum(g, "queue_time_mean", s->queued ? s->queue_time_mean : NAN);
		GS(g, "queue_max_per_bucket");
		if (!s->queued) { /* unknown, as queue_max */
			yajl_gen_null(g);
		} else {
			yajl_gen_array_open(g);
			for (size_t b = 0; b < r->nbuckets && s->queue_series; b++)
				yajl_gen_integer(g, s->queue_series[b]);
			yajl_gen_array_close(g);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	GS(g, "kernels_per_rank");
	yajl_gen_map_open(g);
	gt_an_jnum(g, "runtime_cutoff_us", US(r->runtime_cutoff_ns));
	gt_an_jnum(g, "delay_cutoff_us", US(r->delay_cutoff_ns));
	GS(g, "rows");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct gt_an_kernel *k = &r->kernels[i];
		char rl[64];
		gt_an_source_label(r, k->source, rl, sizeof(rl));
		yajl_gen_map_open(g);
		GS(g, "rank");
		GS(g, rl);
		GS(g, "kind");
		GS(g, gt_an_kind_name(k->cat));
		GS(g, "name");
		GS(g, k->name);
		gt_an_jnum(g, "time_ms", MS(k->time_ns));
		gt_an_jnum(g, "share_pct", pct(k->time_ns, gt_an_kind_time(r, k->source, k->cat)));
		gt_an_jint(g, "count", k->count);
		gt_an_jnum(g, "min_us", US(k->min_ns));
		gt_an_jnum(g, "max_us", US(k->max_ns));
		gt_an_jint(g, "launched", k->launched);
		gt_an_jnum(g, "launch_call_us", US(k->cpu_ns));
		gt_an_jnum(g, "delay_sum_us", US(k->delay_ns));
		gt_an_jnum(g, "delay_p50_us", US(k->delay_p50_ns));
		gt_an_jnum(g, "delay_p90_us", US(k->delay_p90_ns));
		gt_an_jnum(g, "delay_p99_us", US(k->delay_p99_ns));
		gt_an_jnum(g, "delay_max_us", US(k->delay_max_ns));
		gt_an_jint(g, "short", k->short_n);
		gt_an_jint(g, "delay_outliers", k->delay_outliers);
		gt_an_jint(g, "runtime_outliers", k->runtime_outliers);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	GS(g, "memory_bandwidth");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->nmembw; i++) {
		const struct gt_an_membw *m = &r->membw[i];
		yajl_gen_map_open(g);
		GS(g, "gpu");
		GS(g, m->gpu < r->ngpu ? r->gpu[m->gpu].label : "?");
		GS(g, "kind");
		GS(g, m->kind);
		gt_an_jint(g, "count", m->count);
		gt_an_jint(g, "bytes", m->bytes);
		gt_an_jnum(g, "time_ms", MS(m->time_ns));
		gt_an_jnum(g, "avg_gbps", m->avg_gbps);
		gt_an_jnum(g, "peak_gbps", m->peak_gbps);
		gt_an_jnum(g, "mean_gbps", m->mean_gbps);
		GS(g, "gbps_per_bucket");
		yajl_gen_array_open(g);
		for (size_t b = 0; b < r->nbuckets && m->series; b++) {
			char nb[32];
			int n = snprintf(nb, sizeof(nb), "%.6f", m->series[b]);
			yajl_gen_number(g, nb, (size_t)n);
		}
		yajl_gen_array_close(g);
		GS(g, "peak_gbps_per_bucket"); /* the largest bandwidth at once in each bucket */
		yajl_gen_array_open(g);
		for (size_t b = 0; b < r->nbuckets && m->peak_series; b++) {
			char nb[32];
			int n = snprintf(nb, sizeof(nb), "%.6f", m->peak_series[b]);
			yajl_gen_number(g, nb, (size_t)n);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	if (r->niterk) {
		GS(g, "kernels_per_iteration");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < r->niterk; i++) {
			yajl_gen_map_open(g);
			GS(g, "name");
			GS(g, r->iterk[i].name);
			GS(g, "iteration");
			yajl_gen_integer(g, r->iterk[i].iter);
			gt_an_jint(g, "count", r->iterk[i].count);
			gt_an_jnum(g, "time_ms", MS(r->iterk[i].time_ns));
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
	}
}

void gt_an_csv_detail(const struct gt_an_result *r, FILE *f)
{
	const char *t = r->title;
	for (size_t i = 0; i < r->nstreams; i++) {
		const struct gt_an_stream *s = &r->streams[i];
		const char *gl = s->gpu < r->ngpu ? r->gpu[s->gpu].label : "?";
		char sn[32];
		snprintf(sn, sizeof(sn), "stream %u", s->stream);
		gt_an_csv_row(f, t, "stream", gl, -1, sn, "ops", (double)s->ops);
		for (int c = 0; c < GT_IDLE_N; c++) {
			char m[64];
			snprintf(m, sizeof(m), "idle_%s_ms", idle_names[c]);
			gt_an_csv_row(f, t, "stream", gl, -1, sn, m, MS(s->idle_ns[c]));
		}
		gt_an_csv_row(f, t, "stream", gl, -1, sn, "queue_max", s->queued ? (double)s->queue_max : NAN);
		gt_an_csv_row(f, t, "stream", gl, -1, sn, "queue_mean", s->queued ? s->queue_mean : NAN);
		gt_an_csv_row(f, t, "stream", gl, -1, sn, "queue_time_mean", s->queued ? s->queue_time_mean : NAN);
		for (size_t b = 0; b < r->nbuckets && s->queue_series && s->queued; b++)
			gt_an_csv_row(f, t, "queue_series", gl, (long)b, sn, "queue_max", s->queue_series[b]);
	}
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct gt_an_kernel *k = &r->kernels[i];
		char rl[64], sec[64];
		gt_an_source_label(r, k->source, rl, sizeof(rl));
		snprintf(sec, sizeof(sec), "kernel_%s", gt_an_kind_name(k->cat));
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "time_ms", MS(k->time_ns));
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "share_pct",
			      pct(k->time_ns, gt_an_kind_time(r, k->source, k->cat)));
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "count", (double)k->count);
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "launched", (double)k->launched);
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "delay_p50_us", US(k->delay_p50_ns));
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "delay_p90_us", US(k->delay_p90_ns));
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "delay_max_us", US(k->delay_max_ns));
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "short", (double)k->short_n);
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "delay_outliers", (double)k->delay_outliers);
		gt_an_csv_row(f, t, sec, rl, -1, k->name, "runtime_outliers", (double)k->runtime_outliers);
	}
	for (size_t i = 0; i < r->nmembw; i++) {
		const struct gt_an_membw *m = &r->membw[i];
		const char *gl = m->gpu < r->ngpu ? r->gpu[m->gpu].label : "?";
		gt_an_csv_row(f, t, "membw", gl, -1, m->kind, "count", (double)m->count);
		gt_an_csv_row(f, t, "membw", gl, -1, m->kind, "bytes", (double)m->bytes);
		gt_an_csv_row(f, t, "membw", gl, -1, m->kind, "time_ms", MS(m->time_ns));
		gt_an_csv_row(f, t, "membw", gl, -1, m->kind, "avg_gbps", m->avg_gbps);
		gt_an_csv_row(f, t, "membw", gl, -1, m->kind, "peak_gbps", m->peak_gbps);
		for (size_t b = 0; b < r->nbuckets && m->series; b++)
			gt_an_csv_row(f, t, "membw_series", gl, (long)b, m->kind, "gbps", m->series[b]);
		for (size_t b = 0; b < r->nbuckets && m->peak_series; b++)
			gt_an_csv_row(f, t, "membw_series", gl, (long)b, m->kind, "peak_gbps", m->peak_series[b]);
	}
	for (size_t i = 0; i < r->niterk; i++)
		gt_an_csv_row(f, t, "kernel_iteration", "", r->iterk[i].iter, r->iterk[i].name, "time_ms",
			      MS(r->iterk[i].time_ns));
	const struct gt_an_hta *h = &r->hta;
	gt_an_csv_row(f, t, "hta_view", "", -1, "", "no_launch_event_ops", (double)h->nolaunch_ops);
	gt_an_csv_row(f, t, "hta_view", "", -1, "", "last_step_ops", (double)h->last_step_ops);
	gt_an_csv_row(f, t, "hta_view", "", -1, "", "cuda_sync_events", (double)h->sync_events);
	gt_an_csv_row(f, t, "hta_view", "", -1, "", "cpu_events_with_stream", (double)h->cpu_stream_events);
	gt_an_csv_row(f, t, "hta_view", "", -1, "", "left_out_ops", (double)h->left_out_ops);
	gt_an_csv_row(f, t, "iteration_assignment", "", -1, "", "by_launch_event", (double)r->by_launch_event);
	gt_an_csv_row(f, t, "iteration_assignment", "", -1, "", "by_launch_range", (double)r->by_launch_range);
}
