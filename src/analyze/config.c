/*
 * analyze/config.c — the GPU Performance Analyzer's JSON config, unchanged: `inputs[]` (format csv | nsys-rep, title,
 * nsys_csv_file_path, nsys_report, analysis_args) and a top-level `kernel_to_class_map`.
 * `//` and block comments and trailing commas (as that tool's own documentation writes them) are
 * accepted; relative paths are resolved against the config file's folder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "analyze/an_internal.h"
#include "core/log.h"

yajl_val gt_an_load_json(const char *path, char *err, size_t errlen);
int gt_an_map_from_json(struct gt_an_map **out, yajl_val obj, const char *origin, char *err, size_t errlen);

static yajl_val get(yajl_val obj, const char *k)
{
	const char *path[] = {k, NULL};
	return obj && YAJL_IS_OBJECT(obj) ? yajl_tree_get(obj, path, yajl_t_any) : NULL;
}

static const char *get_str(yajl_val obj, const char *k)
{
	yajl_val v = get(obj, k);
	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

/* "a number", "an object", ...: what a value is, for messages */
static const char *jtype(yajl_val v)
{
	if (!v || YAJL_IS_NULL(v))
		return "null";
	if (YAJL_IS_STRING(v))
		return "a string";
	if (YAJL_IS_NUMBER(v))
		return "a number";
	if (YAJL_IS_OBJECT(v))
		return "an object";
	if (YAJL_IS_ARRAY(v))
		return "a list";
	return "true or false";
}

/* A string member `k` of `obj` (NULL when absent or null): -1 with a message when it is there but not a
 * string.  `where` is "inputs[3].nsys_csv_file_path" and the like. */
static int opt_str(const char *cfg, const char *where, yajl_val obj, const char *k, const char **out)
{
	yajl_val v = get(obj, k);
	*out = NULL;
	if (!v || YAJL_IS_NULL(v)) /* null is "not given", as that tool's documentation says */
		return 0;
	if (!YAJL_IS_STRING(v)) {
		gt_error("%s: %s.%s must be a string%s, not %s", cfg, where, k,
			 strcmp(k, "title") && strcmp(k, "nvtx_tag_of_iter") ? " (a file path)" : "", jtype(v));
		return -1;
	}
	*out = YAJL_GET_STRING(v);
	return 0;
}

/* analysis_args.num_of_iters / num_of_gpus: an integer from 1 to GT_AN_MAX_COUNT. */
static int count_arg(const char *cfg, size_t i, yajl_val args, const char *k, int *out)
{
	yajl_val v = get(args, k);
	if (!v) {
		gt_error("%s: inputs[%zu].analysis_args.%s must be given", cfg, i, k);
		return -1;
	}
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 1 || YAJL_GET_INTEGER(v) > GT_AN_MAX_COUNT) {
		gt_error("%s: inputs[%zu].analysis_args.%s must be an integer from 1 to %d, not %s", cfg, i, k,
			 GT_AN_MAX_COUNT, YAJL_IS_NUMBER(v) && v->u.number.r ? v->u.number.r : jtype(v));
		return -1;
	}
	*out = (int)YAJL_GET_INTEGER(v);
	return 0;
}

static char *resolve(const char *dir, const char *p)
{
	if (!p)
		return NULL;
	if (p[0] == '/' || !dir[0])
		return strdup(p);
	size_t n = strlen(dir) + strlen(p) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s/%s", dir, p);
	return s;
}

int gt_an_config_run(const char *config_path, const char *format, FILE *f)
{
	char err[1024] = "";
	int status = 0;
	yajl_val root = gt_an_load_json(config_path, err, sizeof(err));
	if (!root) {
		gt_error("%s", err);
		return 1;
	}
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", config_path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';

	struct gt_an_map *map = NULL;
	yajl_val inputs = get(root, "inputs");
	yajl_val jm = get(root, "kernel_to_class_map");
	if (!inputs || !YAJL_IS_ARRAY(inputs) || inputs->u.array.len == 0) {
		if (!YAJL_IS_OBJECT(root))
			gt_error("%s: the config must be a JSON object with \"inputs\", not %s", config_path, jtype(root));
		else if (!inputs)
			gt_error("%s: no \"inputs\" list: nothing to analyze", config_path);
		else if (!YAJL_IS_ARRAY(inputs))
			gt_error("%s: \"inputs\" must be a list of inputs, not %s", config_path, jtype(inputs));
		else
			gt_error("%s: \"inputs\" is empty: nothing to analyze", config_path);
		yajl_tree_free(root);
		return 1;
	}
	if (jm && YAJL_IS_NULL(jm))
		jm = NULL;
	if (jm && gt_an_map_from_json(&map, jm, config_path, err, sizeof(err)) < 0) {
		gt_error("%s", err);
		yajl_tree_free(root);
		return 1;
	}
	size_t n = inputs->u.array.len;
	struct gt_an_result **res = calloc(n + 1, sizeof(*res));
	size_t nres = 0;
	for (size_t i = 0; i < n && res; i++) {
		yajl_val in = inputs->u.array.values[i];
		char where[64];
		snprintf(where, sizeof(where), "inputs[%zu]", i);
		if (!YAJL_IS_OBJECT(in)) {
			gt_error("%s: %s is not an object (format, title, nsys_csv_file_path, analysis_args), but %s",
				 config_path, where, jtype(in));
			status = 1;
			continue;
		}
		const char *fmt = get_str(in, "format");
		yajl_val args = get(in, "analysis_args");
		struct gt_an_opts o;
		memset(&o, 0, sizeof(o));
		o.map = map;
		yajl_val v;
		if (!args || !YAJL_IS_OBJECT(args)) {
			gt_error("%s: %s.analysis_args must be an object with num_of_iters and num_of_gpus, not %s",
				 config_path, where, jtype(args));
			status = 1;
			continue;
		}
		if (opt_str(config_path, where, in, "title", &o.title) < 0 ||
		    count_arg(config_path, i, args, "num_of_iters", &o.iters) < 0 ||
		    count_arg(config_path, i, args, "num_of_gpus", &o.gpus) < 0) {
			status = 1;
			continue;
		}
		snprintf(where, sizeof(where), "inputs[%zu].analysis_args", i);
		if (opt_str(config_path, where, args, "nvtx_tag_of_iter", &o.nvtx_tag) < 0) {
			status = 1;
			continue;
		}
		o.progress = isatty(2);
		char *p1 = NULL, *p2 = NULL, *p3 = NULL;
		const char *input = NULL;
		int nin = 0, with_mem = 1;
		if (fmt && strcmp(fmt, "csv") == 0) {
			yajl_val cp = get(in, "nsys_csv_file_path");
			const char *k1, *k2, *k3;
			snprintf(where, sizeof(where), "inputs[%zu].nsys_csv_file_path", i);
			if (opt_str(config_path, where, cp, "kernel_sum", &k1) < 0 ||
			    opt_str(config_path, where, cp, "nvtx_proj_trace", &k2) < 0 ||
			    opt_str(config_path, where, cp, "mem_time_sum", &k3) < 0) {
				status = 1;
				goto next;
			}
			p1 = resolve(dir, k1);
			p2 = resolve(dir, k2);
			p3 = resolve(dir, k3);
			if (!p1) {
				gt_error("%s: %s.kernel_sum must be given", config_path, where);
				status = 1;
				goto next;
			}
			o.csv_kern = p1;
			o.csv_nvtx = p2;
			o.csv_mem = p3;
			if (!o.title)
				o.title = get_str(cp, "kernel_sum");
		} else if (fmt && strcmp(fmt, "nsys-rep") == 0) {
			yajl_val rp = get(in, "nsys_report");
			const char *rpath;
			snprintf(where, sizeof(where), "inputs[%zu].nsys_report", i);
			if (opt_str(config_path, where, rp, "path", &rpath) < 0) {
				status = 1;
				goto next;
			}
			p1 = resolve(dir, rpath);
			if (!p1) {
				gt_error("%s: inputs[%zu].nsys_report.path must be given", config_path, i);
				status = 1;
				goto next;
			}
			if ((v = get(rp, "with_nvtx")) && YAJL_IS_FALSE(v))
				o.nvtx_tag = "\x01"; /* matches no range */
			if ((v = get(rp, "with_mem")) && YAJL_IS_FALSE(v))
				with_mem = 0;
			input = p1;
			nin = 1;
		} else {
			gt_error("%s: inputs[%zu].format must be \"csv\" or \"nsys-rep\"", config_path, i);
			status = 1;
			goto next;
		}
		struct gt_an_result *r = NULL;
		if (gt_an_run(&input, nin, &o, &r, err, sizeof(err)) < 0) {
			gt_error("%s", err);
			status = 1;
		} else {
			if (!with_mem)
				r->has_mem = 0;
			if (o.nvtx_tag && o.nvtx_tag[0] == '\x01') {
				r->nvtx_count = 0;
				r->has_nvtx = 0;
			}
			for (size_t k = 0; k < r->nnotes; k++)
				gt_warn("%s", r->notes[k]);
			res[nres++] = r;
		}
	next:
		free(p1);
		free(p2);
		free(p3);
	}
	int werr = 0;
	if (format && strcmp(format, "json") == 0) {
		werr = gt_an_print_json((const struct gt_an_result *const *)res, nres, f);
	} else {
		for (size_t i = 0; i < nres; i++) {
			if (format && strcmp(format, "csv") == 0) {
				werr |= gt_an_print_csv(res[i], f);
			} else {
				werr |= gt_an_print_text(res[i], f);
				fputs("\n\n", f);
			}
		}
	}
	for (size_t i = 0; i < nres; i++)
		gt_an_free(res[i]);
	free(res);
	gt_an_map_free(map);
	yajl_tree_free(root);
	if (werr)
		status = 1;
	return status;
}
