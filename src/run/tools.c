/* run/tools.c — the tool table, --tools / --context parsing and the plan.  See tools.h. */
#include "run/tools.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "core/jsondepth.h"
#include "metrics/rmagg.h"

/* The defaults of every tool: the one place they live (madengine's tools.json). */
const struct gt_tool_def gt_tool_table[] = {
	{"kernel_trace", NULL, GT_TOOL_TAP, "full GPU trace: API calls, kernels, copies, memory, NVTX ranges", NULL,
	 {"GPUTAP_TRACE=api,kernel,memcpy,memset,memory,nvtx"}},
	{"api_trace", NULL, GT_TOOL_TAP, "CUDA driver/runtime API records only", NULL, {"GPUTAP_TRACE=api"}},
	{"metrics", NULL, GT_TOOL_TAP, "counters only (the alnair interposer's metrics.log, timeline.log), lowest overhead", NULL,
	 {"GPUTAP_TRACE=metrics"}},
	{"range_metrics", NULL, GT_TOOL_TAP,
	 "GPU counters per kernel and NVTX range -> range_metrics.csv (GPUTAP_METRICS)",
	 NULL,
	 {"GPUTAP_TRACE=api,nvtx", "GPUTAP_METRICS=" GT_RM_DEFAULT_METRICS, "GPUTAP_METRICS_MODE=auto"}},
	{"pc_sampling", NULL, GT_TOOL_TAP,
	 "full trace + PC samples and stall reasons per kernel and source line -> pc_samples.csv (GPUTAP_PCSAMP)", NULL,
	 {"GPUTAP_TRACE=api,kernel,memcpy,memset,memory,nvtx", "GPUTAP_PCSAMP=default"}},
	{"power", "gpu_info_power_profiler", GT_TOOL_SAMPLER,
	 "GPU power samples -> gpu_info_power_profiler_output.csv (DEVICE, SAMPLING_RATE)", NULL,
	 {"DEVICE=0", "SAMPLING_RATE=0.1", "MODE=power", "DUAL-GCD=false"}},
	{"vram", "gpu_info_vram_profiler", GT_TOOL_SAMPLER,
	 "GPU memory use samples -> gpu_info_vram_profiler_output.csv (DEVICE, SAMPLING_RATE)", NULL,
	 {"DEVICE=0", "SAMPLING_RATE=0.1", "MODE=vram", "DUAL-GCD=false"}},
	{"cublas_trace", NULL, GT_TOOL_LIBLOG, "cuBLAS call log -> libs/, library_trace.csv", NULL,
	 {"CUBLAS_LOGINFO_DBG=1", "CUBLAS_LOGDEST_DBG={libs}/cublas.log"}},
	{"cublaslt_trace", NULL, GT_TOOL_LIBLOG, "cuBLASLt call log (PyTorch matmuls) -> libs/, library_trace.csv",
	 NULL, {"CUBLASLT_LOG_LEVEL=5", "CUBLASLT_LOG_FILE={libs}/cublaslt.%i.log"}},
	{"cudnn_trace", NULL, GT_TOOL_LIBLOG, "cuDNN call log -> libs/, library_trace.csv", NULL,
	 {"CUDNN_LOGLEVEL_DBG=3", "CUDNN_LOGDEST_DBG={libs}/cudnn.log"}},
	{"nccl_trace", NULL, GT_TOOL_LIBLOG, "NCCL collectives log (one file per host and process) -> libs/",
	 NULL, {"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=COLL", "NCCL_DEBUG_FILE={libs}/nccl.%h.%p.log"}},
	{NULL, NULL, 0, NULL, NULL, {NULL}},
};

const struct gt_tool_ops *gt_tool_ops(const struct gt_tool_def *d)
{
	static const struct gt_tool_ops *const by_kind[] = {
		[GT_TOOL_TAP] = &gt_tool_ops_tap,
		[GT_TOOL_SAMPLER] = &gt_tool_ops_sampler,
		[GT_TOOL_LIBLOG] = &gt_tool_ops_liblog,
	};
	return d && (size_t)d->kind < sizeof(by_kind) / sizeof(by_kind[0]) ? by_kind[d->kind] : NULL;
}

/* Keys a sampler tool reads itself and does not hand to the command. */
static const char *const sampler_keys[] = {"DEVICE", "SAMPLING_RATE", "MODE", "DUAL-GCD", NULL};

static int is_sampler_key(const char *k)
{
	for (int i = 0; sampler_keys[i]; i++)
		if (strcmp(k, sampler_keys[i]) == 0)
			return 1;
	return 0;
}

const struct gt_tool_def *gt_tool_find(const char *name)
{
	for (const struct gt_tool_def *d = gt_tool_table; d->name; d++)
		if (strcmp(d->name, name) == 0 || (d->alias && strcmp(d->alias, name) == 0))
			return d;
	return NULL;
}

static const char *kind_name(enum gt_tool_kind k)
{
	return k == GT_TOOL_TAP ? "tap" : k == GT_TOOL_SAMPLER ? "sampler" : "library log";
}

void gt_tool_print_help(FILE *f)
{
	fprintf(f, "tools (first = innermost; --tools a,b,c or --context '{\"tools\":[{\"name\":\"a\"},...]}'):\n");
	for (const struct gt_tool_def *d = gt_tool_table; d->name; d++) {
		fprintf(f, "  %-15s %-11s %s\n", d->name, kind_name(d->kind), d->summary);
		if (d->alias)
			fprintf(f, "  %-15s             (madengine name: %s)\n", "", d->alias);
	}
}

static void seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int push_req(struct gt_tool_list *l, const struct gt_tool_def *d)
{
	struct gt_tool_req *t = realloc(l->t, (l->n + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	l->t = t;
	memset(&t[l->n], 0, sizeof(t[0]));
	t[l->n].def = d;
	l->n++;
	return 0;
}

static void unknown_tool(char *err, size_t errlen, const char *where, const char *name)
{
	seterr(err, errlen, "%s: unknown tool '%s' (see 'gputap run --tools help')", where, name);
}

int gt_tools_parse_list(const char *list, struct gt_tool_list *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	char *copy = strdup(list ? list : "");
	if (!copy)
		return -ENOMEM;
	int rc = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		const struct gt_tool_def *d = gt_tool_find(tok);
		if (!d) {
			unknown_tool(err, errlen, "--tools", tok);
			rc = -1;
			break;
		}
		if (push_req(out, d) < 0) {
			seterr(err, errlen, "--tools: out of memory");
			rc = -1;
			break;
		}
	}
	if (rc == 0 && out->n == 0) {
		seterr(err, errlen, "--tools: empty list (see 'gputap run --tools help')");
		rc = -1;
	}
	free(copy);
	if (rc < 0)
		gt_tools_free(out);
	return rc;
}

static const char *type_name(const yajl_val v)
{
	if (!v)
		return "null";
	switch (v->type) {
	case yajl_t_string: return "a string";
	case yajl_t_number: return "a number";
	case yajl_t_object: return "an object";
	case yajl_t_array: return "an array";
	case yajl_t_true:
	case yajl_t_false: return "a boolean";
	default: return "null";
	}
}

static int parse_tool(const char *what, size_t i, yajl_val o, struct gt_tool_list *out, char *err, size_t errlen)
{
	if (!YAJL_IS_OBJECT(o)) {
		seterr(err, errlen, "%s: tools[%zu]: expected an object like {\"name\": \"power\"}, got %s", what, i,
		       type_name(o));
		return -1;
	}
	yajl_val name = NULL, cmd = NULL, env = NULL;
	for (size_t k = 0; k < o->u.object.len; k++) {
		const char *key = o->u.object.keys[k];
		yajl_val v = o->u.object.values[k];
		if (strcmp(key, "name") == 0)
			name = v;
		else if (strcmp(key, "cmd") == 0)
			cmd = v;
		else if (strcmp(key, "env_vars") == 0)
			env = v;
		else {
			seterr(err, errlen, "%s: tools[%zu].%s: unknown key (a tool has name, cmd, env_vars)", what, i,
			       key);
			return -1;
		}
	}
	if (!name) {
		seterr(err, errlen, "%s: tools[%zu]: missing \"name\"", what, i);
		return -1;
	}
	if (!YAJL_IS_STRING(name)) {
		seterr(err, errlen, "%s: tools[%zu].name: expected a string, got %s", what, i, type_name(name));
		return -1;
	}
	const struct gt_tool_def *d = gt_tool_find(name->u.string);
	if (!d) {
		char where[256];
		snprintf(where, sizeof(where), "%s: tools[%zu].name", what, i);
		unknown_tool(err, errlen, where, name->u.string);
		return -1;
	}
	if (push_req(out, d) < 0)
		goto oom;
	struct gt_tool_req *t = &out->t[out->n - 1];
	if (cmd) {
		if (!YAJL_IS_STRING(cmd)) {
			seterr(err, errlen, "%s: tools[%zu].cmd: expected a string, got %s", what, i, type_name(cmd));
			return -1;
		}
		t->has_cmd = 1;
		t->cmd = strdup(cmd->u.string);
		if (!t->cmd)
			goto oom;
	}
	if (env) {
		if (!YAJL_IS_OBJECT(env)) {
			seterr(err, errlen, "%s: tools[%zu].env_vars: expected an object of strings, got %s", what,
			       i, type_name(env));
			return -1;
		}
		size_t n = env->u.object.len;
		t->env = calloc(n ? n : 1, sizeof(*t->env));
		if (!t->env)
			goto oom;
		for (size_t k = 0; k < n; k++) {
			const char *key = env->u.object.keys[k];
			yajl_val v = env->u.object.values[k];
			if (!*key || strchr(key, '=')) {
				seterr(err, errlen, "%s: tools[%zu].env_vars.%s: not a valid variable name", what, i,
				       key);
				return -1;
			}
			if (!YAJL_IS_STRING(v)) {
				seterr(err, errlen, "%s: tools[%zu].env_vars.%s: expected a string, got %s", what, i,
				       key, type_name(v));
				return -1;
			}
			t->env[k].key = strdup(key);
			t->env[k].val = strdup(v->u.string);
			t->nenv = k + 1;
			if (!t->env[k].key || !t->env[k].val)
				goto oom;
		}
	}
	return 0;
oom:
	seterr(err, errlen, "%s: out of memory", what);
	return -1;
}

int gt_tools_parse_context(const char *json, const char *what, struct gt_tool_list *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	char perr[512];
	long deep = gt_json_too_deep(json, strlen(json), GT_JSON_MAX_DEPTH);
	if (deep) {
		seterr(err, errlen, "%s:%ld: JSON nested deeper than %d levels: refused", what, deep, GT_JSON_MAX_DEPTH);
		return -1;
	}
	yajl_val root = yajl_tree_parse(json, perr, sizeof(perr));
	if (!root) {
		/* yajl's message spans lines; keep the first line */
		char *nl = strchr(perr, '\n');
		if (nl)
			*nl = '\0';
		seterr(err, errlen, "%s: not valid JSON: %s", what, perr[0] ? perr : "parse error");
		return -1;
	}
	int rc = 0;
	if (!YAJL_IS_OBJECT(root)) {
		seterr(err, errlen, "%s: expected a JSON object like {\"tools\": [...]}, got %s", what,
		       type_name(root));
		rc = -1;
		goto done;
	}
	/* Other keys of a madengine context (gpu_vendor, guest_os, docker_gpus ...) are not ours. */
	for (size_t k = 0; k < root->u.object.len; k++) {
		if (strcmp(root->u.object.keys[k], "tools") != 0)
			continue;
		yajl_val arr = root->u.object.values[k];
		if (!YAJL_IS_ARRAY(arr)) {
			seterr(err, errlen, "%s: tools: expected an array, got %s", what, type_name(arr));
			rc = -1;
			goto done;
		}
		for (size_t i = 0; i < arr->u.array.len; i++) {
			if (parse_tool(what, i, arr->u.array.values[i], out, err, errlen) < 0) {
				rc = -1;
				goto done;
			}
		}
	}
done:
	yajl_tree_free(root);
	if (rc < 0)
		gt_tools_free(out);
	return rc;
}

static void free_kv(struct gt_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].val);
	}
	free(kv);
}

void gt_tools_free(struct gt_tool_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->t[i].cmd);
		free_kv(l->t[i].env, l->t[i].nenv);
	}
	free(l->t);
	l->t = NULL;
	l->n = 0;
}

void gt_free_words(char **words, size_t n)
{
	if (!words)
		return;
	for (size_t i = 0; i < n; i++)
		free(words[i]);
	free(words);
}

int gt_split_words(const char *s, char ***words, char *err, size_t errlen)
{
	size_t n = 0, len = strlen(s);
	char **w = NULL;
	char *cur = malloc(len + 1);
	if (!cur)
		return -1;
	const char *p = s;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		size_t k = 0;
		char q = 0;
		for (; *p; p++) {
			if (q) {
				if (*p == q)
					q = 0;
				else if (*p == '\\' && q == '"' && (p[1] == '"' || p[1] == '\\'))
					cur[k++] = *++p;
				else
					cur[k++] = *p;
			} else if (*p == '\'' || *p == '"') {
				q = *p;
			} else if (*p == '\\' && p[1]) {
				cur[k++] = *++p;
			} else if (*p == ' ' || *p == '\t' || *p == '\n') {
				break;
			} else {
				cur[k++] = *p;
			}
		}
		if (q) {
			seterr(err, errlen, "unterminated %c quote in \"%s\"", q, s);
			gt_free_words(w, n);
			free(cur);
			return -1;
		}
		cur[k] = '\0';
		char **nw = realloc(w, (n + 2) * sizeof(*w));
		if (!nw || !(nw[n] = strdup(cur))) {
			gt_free_words(nw ? nw : w, n);
			free(cur);
			seterr(err, errlen, "out of memory");
			return -1;
		}
		w = nw;
		w[++n] = NULL;
	}
	free(cur);
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w)
			return -1;
	}
	*words = w;
	return (int)n;
}

static int kv_set(struct gt_kv **kv, size_t *n, const char *key, const char *val)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*kv)[i].key, key) == 0) {
			char *v = strdup(val);
			if (!v)
				return -ENOMEM;
			free((*kv)[i].val);
			(*kv)[i].val = v;
			return 0;
		}
	struct gt_kv *nk = realloc(*kv, (*n + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	*kv = nk;
	nk[*n].key = strdup(key);
	nk[*n].val = strdup(val);
	if (!nk[*n].key || !nk[*n].val) {
		free(nk[*n].key);
		free(nk[*n].val);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

static const char *kv_get(const struct gt_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].val;
	return NULL;
}

const char *gt_plan_getenv(const struct gt_plan *p, const char *key)
{
	return kv_get(p->env, p->nenv, key);
}

int gt_plan_setenv(struct gt_plan *p, const char *key, const char *val)
{
	return kv_set(&p->env, &p->nenv, key, val);
}

/* Replace {out} and {libs} in a table value. */
static char *expand(const char *v, const char *outdir)
{
	size_t cap = strlen(v) + 2 * strlen(outdir) + 16, k = 0;
	char *r = malloc(cap);
	if (!r)
		return NULL;
	while (*v) {
		const char *ins = NULL, *extra = "";
		size_t skip = 0;
		if (strncmp(v, "{out}", 5) == 0)
			ins = outdir, skip = 5;
		else if (strncmp(v, "{libs}", 6) == 0)
			ins = outdir, extra = "/libs", skip = 6;
		if (ins) {
			k += (size_t)snprintf(r + k, cap - k, "%s%s", ins, extra);
			v += skip;
		} else {
			r[k++] = *v++;
		}
	}
	r[k] = '\0';
	return r;
}

/* Add the comma-separated items of `add` that `cur` lacks. */
static char *join_lists(const char *cur, const char *add)
{
	size_t cap = strlen(cur) + strlen(add) + 2;
	char *r = malloc(cap);
	char *copy = strdup(add);
	if (!r || !copy) {
		free(r);
		free(copy);
		return NULL;
	}
	snprintf(r, cap, "%s", cur);
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int have = 0;
		size_t tl = strlen(tok);
		for (const char *q = r; *q;) {
			const char *e = strchr(q, ',');
			size_t ql = e ? (size_t)(e - q) : strlen(q);
			if (ql == tl && strncmp(q, tok, tl) == 0)
				have = 1;
			q = e ? e + 1 : q + ql;
		}
		if (!have) {
			size_t l = strlen(r);
			snprintf(r + l, cap - l, "%s%s", l ? "," : "", tok);
		}
	}
	free(copy);
	return r;
}

static int parse_rate(const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.001) || !(v <= 3600.0))
		return -1;
	*out = v;
	return 0;
}

static int check_device(const char *s)
{
	if (strcmp(s, "all") == 0)
		return 0;
	if (!*s)
		return -1;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == ',' || *p == ' '))
			return -1;
	return 0;
}

/* The launchers' names for a process's rank on its machine, first found wins. */
static const char *const local_rank_vars[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
					      "SLURM_LOCALID", NULL};

/* The GPU the command uses when that is clear without asking it: the one GPU a numeric
 * CUDA_VISIBLE_DEVICES lets it see; else, under a launcher that gives each process its rank on the
 * machine (torchrun's LOCAL_RANK, Open MPI's, MVAPICH's, srun's SLURM_LOCALID), the rank-th GPU the
 * rank sees: the rank-th entry of a numeric CUDA_VISIBLE_DEVICES, else GPU <rank>.  0 with buf and
 * why filled; -1 when neither says (or the GPUs are named by UUID or MIG name, not NVML indexes):
 * the default stays. */
static int local_rank_device(const char *(*getenv_fn)(const char *), char *buf, size_t len, char *why,
			     size_t wlen)
{
	const char *cvd = getenv_fn("CUDA_VISIBLE_DEVICES"), *var = NULL, *lr = NULL;
	long vis[64];
	int nvis = 0;
	char *end;
	if (cvd && *cvd) {
		for (const char *p = cvd;; p = end + 1) {
			errno = 0;
			long v = strtol(p, &end, 10);
			if (end == p || errno || v < 0 || (*end && *end != ',') || nvis == 64)
				return -1; /* a UUID or MIG name: not an NVML index */
			vis[nvis++] = v;
			if (!*end)
				break;
		}
		if (nvis == 1) {
			snprintf(why, wlen, "CUDA_VISIBLE_DEVICES=%s", cvd);
			snprintf(buf, len, "%ld", vis[0]);
			return 0;
		}
	}
	for (int i = 0; local_rank_vars[i] && !lr; i++)
		if ((lr = getenv_fn(local_rank_vars[i])) && *lr)
			var = local_rank_vars[i];
		else
			lr = NULL;
	if (!lr)
		return -1;
	errno = 0;
	long r = strtol(lr, &end, 10);
	if (errno || *end || r < 0 || r > 4095 || (nvis && r >= nvis))
		return -1;
	if (nvis)
		snprintf(why, wlen, "%s=%ld, CUDA_VISIBLE_DEVICES=%s", var, r, cvd);
	else
		snprintf(why, wlen, "%s=%ld", var, r);
	snprintf(buf, len, "%ld", nvis ? vis[r] : r);
	return 0;
}

/* Merge one sampler tool's settings: table < gputap's environment < env_vars.  With none of
 * them saying DEVICE, the GPU the command uses when that is clear (local_rank_device: the one GPU
 * CUDA_VISIBLE_DEVICES shows, or the rank's own under torchrun … gputap run …) rather than GPU 0:
 * each rank's run samples the GPU it uses. */
static int sampler_cfg(struct gt_sampler_cfg *c, const struct gt_tool_req *t, int idx,
		       const char *(*getenv_fn)(const char *), char *err, size_t errlen)
{
	const char *dev = "0", *rate = "0.1", *mode = "power";
	const char *src_dev = "default", *src_rate = "default", *src_mode = "default";
	for (int i = 0; t->def->env[i]; i++) {
		const char *kv = t->def->env[i];
		if (strncmp(kv, "DEVICE=", 7) == 0)
			dev = kv + 7;
		else if (strncmp(kv, "SAMPLING_RATE=", 14) == 0)
			rate = kv + 14;
		else if (strncmp(kv, "MODE=", 5) == 0)
			mode = kv + 5;
	}
	if (getenv_fn) {
		const char *v;
		if ((v = getenv_fn("DEVICE")) && *v)
			dev = v, src_dev = "environment variable DEVICE";
		if ((v = getenv_fn("SAMPLING_RATE")) && *v)
			rate = v, src_rate = "environment variable SAMPLING_RATE";
	}
	const char *v;
	static char where[3][160];
	if ((v = kv_get(t->env, t->nenv, "DEVICE"))) {
		dev = v;
		snprintf(where[0], sizeof(where[0]), "tools[%d] (%s).env_vars.DEVICE", idx, t->def->name);
		src_dev = where[0];
	}
	if ((v = kv_get(t->env, t->nenv, "SAMPLING_RATE"))) {
		rate = v;
		snprintf(where[1], sizeof(where[1]), "tools[%d] (%s).env_vars.SAMPLING_RATE", idx, t->def->name);
		src_rate = where[1];
	}
	if ((v = kv_get(t->env, t->nenv, "MODE"))) {
		mode = v;
		snprintf(where[2], sizeof(where[2]), "tools[%d] (%s).env_vars.MODE", idx, t->def->name);
		src_mode = where[2];
	}
	memset(c, 0, sizeof(*c));
	c->tool = idx;
	char lrdev[24];
	if (strcmp(src_dev, "default") == 0 && getenv_fn &&
	    local_rank_device(getenv_fn, lrdev, sizeof(lrdev), c->device_from, sizeof(c->device_from)) == 0)
		dev = lrdev;
	if (check_device(dev) < 0 || strlen(dev) >= sizeof(c->device)) {
		seterr(err, errlen, "%s '%s': expected 0, 0,1,2 or all", src_dev, dev);
		return -1;
	}
	snprintf(c->device, sizeof(c->device), "%s", dev);
	if (parse_rate(rate, &c->period_s) < 0) {
		seterr(err, errlen, "%s '%s': expected seconds between samples, 0.001 to 3600",
		       src_rate, rate);
		return -1;
	}
	if (strcmp(mode, "power") == 0)
		c->mode = GT_SAMPLE_POWER;
	else if (strcmp(mode, "vram") == 0)
		c->mode = GT_SAMPLE_VRAM;
	else {
		seterr(err, errlen, "%s '%s': expected power or vram", src_mode, mode);
		return -1;
	}
	return 0;
}

static int same_words(char **a, int na, char **b, int nb)
{
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return 1;
}

int gt_plan_build(struct gt_plan *p, struct gt_tool_list *tools, const char *outdir,
		  const char *(*getenv_fn)(const char *), char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->tools = *tools;
	memset(tools, 0, sizeof(*tools));
	size_t n = p->tools.n;
	int rc = -1;
	char ***words = calloc(n ? n : 1, sizeof(*words));
	int *nwords = calloc(n ? n : 1, sizeof(*nwords));
	p->actions = calloc(2 * n + 1, sizeof(*p->actions));
	p->samplers = calloc(n ? n : 1, sizeof(*p->samplers));
	if (!words || !nwords || !p->actions || !p->samplers) {
		seterr(err, errlen, "out of memory");
		goto out;
	}
	/* Environment, in list order: a later tool wins. */
	for (size_t i = 0; i < n; i++) {
		const struct gt_tool_req *t = &p->tools.t[i];
		const struct gt_tool_def *d = t->def;
		if (d->kind == GT_TOOL_TAP)
			p->has_tap = 1;
		if (d->kind == GT_TOOL_LIBLOG)
			p->has_liblog = 1;
		for (int k = 0; d->env[k]; k++) {
			const char *eq = strchr(d->env[k], '=');
			char key[128];
			snprintf(key, sizeof(key), "%.*s", (int)(eq - d->env[k]), d->env[k]);
			if (d->kind == GT_TOOL_SAMPLER && is_sampler_key(key))
				continue;
			char *val = expand(eq + 1, outdir);
			if (!val) {
				seterr(err, errlen, "out of memory");
				goto out;
			}
			const char *cur = kv_get(p->env, p->nenv, key);
			if (d->kind == GT_TOOL_TAP && strcmp(key, "GPUTAP_TRACE") == 0 && cur) {
				char *j = join_lists(cur, val);
				free(val);
				val = j;
				if (!val) {
					seterr(err, errlen, "out of memory");
					goto out;
				}
			}
			int r = kv_set(&p->env, &p->nenv, key, val);
			free(val);
			if (r < 0) {
				seterr(err, errlen, "out of memory");
				goto out;
			}
		}
		for (size_t k = 0; k < t->nenv; k++) {
			if (d->kind == GT_TOOL_SAMPLER && is_sampler_key(t->env[k].key))
				continue;
			if (kv_set(&p->env, &p->nenv, t->env[k].key, t->env[k].val) < 0) {
				seterr(err, errlen, "out of memory");
				goto out;
			}
		}
		if (d->kind == GT_TOOL_SAMPLER) {
			if (sampler_cfg(&p->samplers[p->nsamplers], t, (int)i, getenv_fn, err, errlen) < 0)
				goto out;
			p->nsamplers++;
		}
		const char *cmd = t->has_cmd ? t->cmd : d->cmd;
		if (cmd) {
			char e2[256];
			int nw = gt_split_words(cmd, &words[i], e2, sizeof(e2));
			if (nw < 0) {
				seterr(err, errlen, "tools[%zu].cmd: %s", i, e2);
				goto out;
			}
			nwords[i] = nw;
		}
	}
	/* Wrappers, outermost (last tool) first; a wrapper already placed further in is skipped. */
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += (size_t)nwords[i];
	p->wrapper = calloc(total + 1, sizeof(*p->wrapper));
	if (!p->wrapper) {
		seterr(err, errlen, "out of memory");
		goto out;
	}
	for (size_t ii = n; ii-- > 0;) {
		if (nwords[ii] == 0)
			continue;
		int dup = 0;
		for (size_t j = 0; j < ii; j++)
			if (same_words(words[ii], nwords[ii], words[j], nwords[j]))
				dup = 1;
		if (dup)
			continue;
		for (int k = 0; k < nwords[ii]; k++) {
			p->wrapper[p->nwrapper++] = words[ii][k];
			words[ii][k] = NULL;
		}
	}
	/* Set-up from the outermost in, tear-down from the innermost out. */
	for (size_t ii = n; ii-- > 0;)
		p->actions[p->nactions++] = (struct gt_action){GT_ACT_SETUP, (int)ii};
	for (size_t i = 0; i < n; i++)
		p->actions[p->nactions++] = (struct gt_action){GT_ACT_TEARDOWN, (int)i};
	rc = 0;
out:
	if (words)
		for (size_t i = 0; i < n; i++)
			gt_free_words(words[i], (size_t)nwords[i]);
	free(words);
	free(nwords);
	if (rc < 0)
		gt_plan_free(p);
	return rc;
}

void gt_plan_free(struct gt_plan *p)
{
	gt_tools_free(&p->tools);
	gt_free_words(p->wrapper, p->nwrapper);
	free_kv(p->env, p->nenv);
	free(p->samplers);
	free(p->actions);
	memset(p, 0, sizeof(*p));
}

int gt_plan_describe(const struct gt_plan *p, char *buf, size_t len)
{
	size_t k = 0;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < p->nactions; i++) {
		const struct gt_action *a = &p->actions[i];
		int w = snprintf(buf + k, len > k ? len - k : 0, "%s %s\n",
				 a->kind == GT_ACT_SETUP ? "setup" : "teardown", p->tools.t[a->tool].def->name);
		if (w < 0)
			return -1;
		k += (size_t)w;
	}
	return k < len ? 0 : -ENOSPC;
}
