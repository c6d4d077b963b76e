/* run/runjson.c — DIR/run.json.  See run.h. */
#include "run/run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "core/version.h"
#include "gpu/probe.h"
#include "trace/rundir.h"

void gt_iso8601(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&t, &tm);
	char base[32];
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", base, (unsigned)((ns / 1000000ull) % 1000ull));
}

static void str(yajl_gen g, const char *s)
{
	if (!s)
		yajl_gen_null(g);
	else
		yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void key(yajl_gen g, const char *k)
{
	str(g, k);
}

static void kstr(yajl_gen g, const char *k, const char *v)
{
	key(g, k);
	str(g, v);
}

static void kint(yajl_gen g, const char *k, long long v)
{
	key(g, k);
	yajl_gen_integer(g, v);
}

/* A number with `prec` decimals (-1: shortest form). */
static void knum(yajl_gen g, const char *k, int prec, double v)
{
	char b[64];
	if (prec < 0)
		snprintf(b, sizeof(b), "%g", v);
	else
		snprintf(b, sizeof(b), "%.*f", prec, v);
	key(g, k);
	yajl_gen_number(g, b, strlen(b));
}

static void ku64(yajl_gen g, const char *k, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
	key(g, k);
	yajl_gen_number(g, b, strlen(b));
}

static void kbool(yajl_gen g, const char *k, int v)
{
	key(g, k);
	yajl_gen_bool(g, v);
}

/* The command as a shell would read it back. */
static void shell_join(char **argv, int argc, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < argc && k + 4 < len; i++) {
		const char *a = argv[i];
		int plain = *a != '\0';
		for (const char *p = a; *p; p++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *p))
				plain = 0;
		if (i && k + 1 < len)
			buf[k++] = ' ';
		if (plain) {
			k += (size_t)snprintf(buf + k, len - k, "%s", a);
		} else {
			if (k + 1 < len)
				buf[k++] = '\'';
			for (const char *p = a; *p && k + 6 < len; p++) {
				if (*p == '\'') {
					memcpy(buf + k, "'\\''", 4);
					k += 4;
				} else {
					buf[k++] = *p;
				}
			}
			if (k + 1 < len)
				buf[k++] = '\'';
		}
		if (k >= len)
			k = len - 1;
		buf[k] = '\0';
	}
}

static const char *kind_str(enum gt_tool_kind k)
{
	return k == GT_TOOL_TAP ? "tap" : k == GT_TOOL_SAMPLER ? "sampler" : "library_log";
}

static void write_tool(yajl_gen g, const struct gt_run *r, size_t i)
{
	const struct gt_tool_req *t = &r->plan.tools.t[i];
	yajl_gen_map_open(g);
	kstr(g, "name", t->def->name);
	kstr(g, "kind", kind_str(t->def->kind));
	key(g, "cmd");
	str(g, t->has_cmd ? t->cmd : t->def->cmd);
	key(g, "defaults");
	yajl_gen_map_open(g);
	for (int k = 0; t->def->env[k]; k++) {
		const char *eq = strchr(t->def->env[k], '=');
		char kk[128];
		snprintf(kk, sizeof(kk), "%.*s", (int)(eq - t->def->env[k]), t->def->env[k]);
		kstr(g, kk, eq + 1);
	}
	yajl_gen_map_close(g);
	key(g, "env_vars");
	yajl_gen_map_open(g);
	for (size_t k = 0; k < t->nenv; k++)
		kstr(g, t->env[k].key, t->env[k].val);
	yajl_gen_map_close(g);
	for (size_t k = 0; k < r->plan.nsamplers; k++) {
		const struct gt_sampler_cfg *c = &r->plan.samplers[k];
		if (c->tool != (int)i)
			continue;
		key(g, "settings");
		yajl_gen_map_open(g);
		kstr(g, "DEVICE", c->device);
		if (c->device_from[0])
			kstr(g, "DEVICE_from", c->device_from); /* the launcher's rank chose it (run/tools.c) */
		knum(g, "SAMPLING_RATE", -1, c->period_s);
		kstr(g, "MODE", c->mode == GT_SAMPLE_POWER ? "power" : "vram");
		yajl_gen_map_close(g);
	}
	for (size_t k = 0; k < r->nsamplers; k++) {
		const struct gt_run_sampler *rs = &r->samplers[k];
		for (int j = 0; j < rs->ntools; j++) {
			if (rs->tools[j] != (int)i)
				continue;
			kstr(g, "status", rs->status);
			/* its counts are the threads' until they are joined: the run.json written
			 * then (after the command, before the tear-down) has them */
			if (rs->started)
				continue;
			ku64(g, "samples", rs->s.samples);
			ku64(g, "missed_deadlines", rs->s.missed);
			knum(g, "period_s", 6, (double)rs->s.period_ns / 1e9);
			if (rs->s.samples > 1)
				knum(g, "measured_period_s", 6,
				     (double)(rs->s.last_ns - rs->s.first_ns) / 1e9 / (double)(rs->s.samples - 1));
			key(g, "devices");
			yajl_gen_array_open(g);
			for (int d = 0; d < rs->s.ndev; d++)
				yajl_gen_integer(g, rs->s.dev[d]);
			yajl_gen_array_close(g);
			/* the sampler's threads together (ticks + energy reader), then each */
			double cpu = rs->s.cpu_s + rs->s.energy_cpu_s;
			knum(g, "thread_cpu_s", 6, cpu);
			if (rs->s.wall_s > 0)
				knum(g, "thread_cpu_pct", 4, 100.0 * cpu / rs->s.wall_s);
			knum(g, "tick_thread_cpu_s", 6, rs->s.cpu_s);
			knum(g, "energy_thread_cpu_s", 6, rs->s.energy_cpu_s);
			if (rs->s.wall_s > 0)
				knum(g, "energy_thread_cpu_pct", 4, 100.0 * rs->s.energy_cpu_s / rs->s.wall_s);
			ku64(g, "energy_reads", rs->s.energy_reads);
			ku64(g, "reads_cut_for_energy", rs->s.busy_skips);
			ku64(g, "slow_reads_put_off", rs->s.slow_backoffs);
			if (rs->s.outputs & GT_SO_VRAM) { /* the vram tool's memory reads (run/sampler.h) */
				ku64(g, "memory_reads", rs->s.mem_reads);
				ku64(g, "memory_reads_after_alloc", rs->s.mem_reads_alloc);
				ku64(g, "memory_cells_held", rs->s.mem_rows_held);
				kstr(g, "memory_reads_when", !rs->s.mem_follow ? "every tick"
								: rs->s.memgen ? "10 Hz, on change, after allocations"
									       : "10 Hz, on change");
			}
			if (rs->s.outputs & GT_SO_POWER) { /* the power tool's reads (run/sampler.h) */
				ku64(g, "power_reads", rs->s.pw_follow ? rs->s.pw_reads : rs->s.samples * (uint64_t)rs->s.ndev);
				ku64(g, "power_cells_held", rs->s.pw_rows_held);
				kstr(g, "power_reads_when", rs->s.pw_follow ? "around the driver's refresh" : "every tick");
			}
			if (rs->s.verify) { /* GPUTAP_SAMPLE_VERIFY=1: what the rules would have shown otherwise */
				key(g, "verify");
				yajl_gen_map_open(g);
				ku64(g, "power_cells_skipped", rs->s.vf_pw_skipped);
				ku64(g, "power_cells_differ", rs->s.vf_pw_differ);
				knum(g, "power_max_diff_W", 3, rs->s.vf_pw_maxdiff_w);
				ku64(g, "memory_cells_skipped", rs->s.vf_mem_skipped);
				ku64(g, "memory_cells_differ", rs->s.vf_mem_differ);
				knum(g, "memory_max_diff_MiB", 1, rs->s.vf_mem_maxdiff_mib);
				yajl_gen_map_close(g);
			}
		}
	}
	yajl_gen_map_close(g);
}

static void sig_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);
	snprintf(buf, len, "SIG%s", abbrev ? abbrev : "?");
}

static int build(yajl_gen g, const struct gt_run *r)
{
	char buf[8192];
	yajl_gen_map_open(g);
	kstr(g, "gputap_version", GT_VERSION);
	kint(g, "run_json_version", 1);
	shell_join(r->argv, r->argc, buf, sizeof(buf));
	kstr(g, "command", buf);
	key(g, "argv");
	yajl_gen_array_open(g);
	for (int i = 0; i < r->argc; i++)
		str(g, r->argv[i]);
	yajl_gen_array_close(g);
	key(g, "exec_argv");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->exec_argc; i++)
		str(g, r->exec_argv[i]);
	yajl_gen_array_close(g);
	kstr(g, "cwd", r->cwd);
	kstr(g, "output_dir", r->outdir);
	kstr(g, "host", r->host);
	kstr(g, "user", r->user);
	gt_iso8601(r->start_ns, buf, sizeof(buf));
	kstr(g, "start", buf);
	ku64(g, "start_ns", r->start_ns);
	if (r->finished) {
		gt_iso8601(r->end_ns, buf, sizeof(buf));
		kstr(g, "end", buf);
		ku64(g, "end_ns", r->end_ns);
		knum(g, "wall_s", 6, (double)(r->end_ns - r->start_ns) / 1e9);
	} else {
		kstr(g, "end", NULL);
		kstr(g, "end_ns", NULL);
		kstr(g, "wall_s", NULL);
	}
	kbool(g, "finished", r->finished);
	if (r->finished) {
		kint(g, "exit_status", r->exit_code);
		if (r->exec_errno) {
			kstr(g, "exec_error", strerror(r->exec_errno));
			kstr(g, "signal", NULL);
		} else if (WIFSIGNALED(r->wstatus)) {
			sig_name(WTERMSIG(r->wstatus), buf, sizeof(buf));
			kstr(g, "signal", buf);
			kint(g, "signal_number", WTERMSIG(r->wstatus));
			kbool(g, "core_dumped", WCOREDUMP(r->wstatus));
		} else {
			kstr(g, "signal", NULL);
		}
		if (r->forwarded_signal) {
			sig_name(r->forwarded_signal, buf, sizeof(buf));
			kstr(g, "last_forwarded_signal", buf);
		}
		if (!r->exec_errno) {
			const struct rusage *u = &r->child_ru;
			knum(g, "child_user_s", 6, (double)u->ru_utime.tv_sec + (double)u->ru_utime.tv_usec / 1e6);
			knum(g, "child_sys_s", 6, (double)u->ru_stime.tv_sec + (double)u->ru_stime.tv_usec / 1e6);
			kint(g, "child_max_rss_kB", u->ru_maxrss);
		}
	} else {
		kstr(g, "exit_status", NULL);
	}
	key(g, "gpus");
	yajl_gen_array_open(g);
	for (int i = 0; i < r->ngpu; i++) {
		const struct gt_gpu_static *s = &r->gpu[i];
		yajl_gen_map_open(g);
		kint(g, "index", i);
		kstr(g, "name", s->name);
		kstr(g, "uuid", s->uuid);
		ku64(g, "memory_total_bytes", s->mem_total);
		if (s->cc_major >= 0) {
			snprintf(buf, 64, "%d.%d", s->cc_major, s->cc_minor);
			kstr(g, "compute_capability", buf);
		}
		if (s->power_limit_mw)
			knum(g, "power_limit_W", 1, s->power_limit_mw / 1000.0);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	kstr(g, "nvml", r->nvml_error[0] ? r->nvml_error : "ok");
	kstr(g, "driver_version", r->driver_version[0] ? r->driver_version : NULL);
	kstr(g, "nvml_version", r->nvml_version[0] ? r->nvml_version : NULL);
	gt_cuda_version_str(r->cuda_driver_version, buf, 64);
	kstr(g, "cuda_driver_version", buf[0] ? buf : NULL);
	kstr(g, "tap_library", r->tap_lib[0] ? r->tap_lib : NULL);
	key(g, "tools");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->plan.tools.n; i++)
		write_tool(g, r, i);
	yajl_gen_array_close(g);
	key(g, "wrappers");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->plan.nwrapper; i++)
		str(g, r->plan.wrapper[i]);
	yajl_gen_array_close(g);
	key(g, "actions");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->nactions_done; i++)
		str(g, r->actions_done[i]);
	yajl_gen_array_close(g);
	key(g, "environment");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < r->plan.nenv; i++)
		kstr(g, r->plan.env[i].key, r->plan.env[i].val);
	yajl_gen_map_close(g);
	key(g, "processes");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct gt_run_proc *p = &r->procs[i];
		yajl_gen_map_open(g);
		kstr(g, "proc", p->name);
		if (p->has_trace) {
			snprintf(buf, sizeof(buf), "%s/" GT_PROC_TRACE, p->name);
			kstr(g, "trace", buf);
			ku64(g, "records", p->records);
		} else {
			kstr(g, "trace", NULL);
		}
		kbool(g, "partial", p->partial);
		kbool(g, "capture_windows_only", p->capture);
		kbool(g, "lost", p->lost_records > 0 || p->cupti_dropped > 0);
		ku64(g, "lost_records", p->lost_records);
		ku64(g, "cupti_dropped", p->cupti_dropped);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "warnings");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->nwarnings; i++)
		str(g, r->warnings[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return 0;
}

int gt_runjson_write(const struct gt_run *r, char *err, size_t errlen)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (!g) {
		snprintf(err, errlen, "run.json: out of memory");
		return -1;
	}
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	build(g, r);
	const unsigned char *out;
	size_t len;
	int rc = -1;
	char path[4200], tmp[4300];
	snprintf(path, sizeof(path), "%s/run.json", r->outdir);
	snprintf(tmp, sizeof(tmp), "%s/run.json.tmp", r->outdir);
	if (yajl_gen_get_buf(g, &out, &len) != yajl_gen_status_ok) {
		snprintf(err, errlen, "%s: could not build the JSON", path);
		goto done;
	}
	FILE *f = fopen(tmp, "we");
	if (!f) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		goto done;
	}
	int bad = fwrite(out, 1, len, f) != len;
	bad |= fputc('\n', f) == EOF;
	bad |= fflush(f) != 0;
	bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path) < 0) {
		snprintf(err, errlen, "%s: %s", bad ? tmp : path, strerror(errno));
		unlink(tmp);
		goto done;
	}
	rc = 0;
done:
	yajl_gen_free(g);
	return rc;
}
