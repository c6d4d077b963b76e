/*
 * run/tools.h — the tool stack of `gputap run` (madengine's semantics).
 *
 * Owns: the one table of tools and their defaults (name, aliases, kind,
 * wrapper command, environment), parsing of --tools LIST and of the
 * --context JSON ({"tools":[{"name":..,"cmd":..,"env_vars":{..}}]}), and the
 * plan: which wrappers go in front of the command, which environment the
 * command gets, and the order of set-up and tear-down actions.
 *
 * Invariants of a plan:
 *  - tools[0] is the innermost tool (closest to the command), as in madengine;
 *  - set-up runs from the outermost tool in, tear-down from the innermost out;
 *  - environment: table defaults, then each tool's env_vars, in list order,
 *    a later tool's value wins (GPUTAP_TRACE defaults of tap tools are
 *    joined instead, so kernel_trace + api_trace records both);
 *  - the same wrapper command twice (same words) runs once, at the position
 *    of its innermost occurrence;
 *  - sampler settings (DEVICE, SAMPLING_RATE, MODE, DUAL-GCD) configure the
 *    sampler and are not exported to the command.
 * Values in the table may contain "{out}" (the run directory) and "{libs}"
 * (DIR/libs), expanded by gt_plan_build.
 */
#ifndef GT_RUN_TOOLS_H
#define GT_RUN_TOOLS_H

#include <stddef.h>
#include <stdio.h>

enum gt_tool_kind { GT_TOOL_TAP = 1, GT_TOOL_SAMPLER = 2, GT_TOOL_LIBLOG = 3 };

#define GT_TOOL_MAX_ENV 8
struct gt_tool_def {
	const char *name;
	const char *alias; /* madengine's name, or NULL */
	enum gt_tool_kind kind;
	const char *summary;
	const char *cmd;                      /* default wrapper, NULL for none */
	const char *env[GT_TOOL_MAX_ENV + 1]; /* "KEY=VALUE", NULL-terminated */
};

/* What a kind of tool does around the command, for `gputap run` (run.c
 * implements them).  `setup` runs before the command, outermost tool first;
 * `teardown` after it, innermost first, `last_of_kind` set for the last
 * tear-down of that kind (the library tools collect their logs once).
 * Either may be NULL: nothing to do. */
struct gt_run;
struct gt_tool_ops {
	void (*setup)(struct gt_run *r, int tool);
	void (*teardown)(struct gt_run *r, int tool, int last_of_kind);
};
extern const struct gt_tool_ops gt_tool_ops_tap, gt_tool_ops_sampler, gt_tool_ops_liblog;
/* The set-up and tear-down of `d`'s kind; NULL for none. */
const struct gt_tool_ops *gt_tool_ops(const struct gt_tool_def *d);

/* The table (NULL-terminated by a zero entry) and lookup by name or alias. */
extern const struct gt_tool_def gt_tool_table[];
const struct gt_tool_def *gt_tool_find(const char *name);
/* One line per tool, for `gputap run --tools help`. */
void gt_tool_print_help(FILE *f);

struct gt_kv {
	char *key;
	char *val;
};

/* One tool as the user asked for it. */
struct gt_tool_req {
	const struct gt_tool_def *def;
	char *cmd; /* the user's "cmd", or NULL for the table default */
	int has_cmd;
	struct gt_kv *env; /* the user's env_vars, in order */
	size_t nenv;
};

struct gt_tool_list {
	struct gt_tool_req *t;
	size_t n;
};

/* Parse "kernel_trace,power,vram".  0, or -1 with err naming the bad part. */
int gt_tools_parse_list(const char *list, struct gt_tool_list *out, char *err, size_t errlen);
/* Parse a --context JSON text.  `what` names the source in messages
 * ("--context" or the file name).  A context without "tools" gives an empty
 * list.  0, or -1 with err like "--context: tools[2].env_vars.DEVICE: expected a string". */
int gt_tools_parse_context(const char *json, const char *what, struct gt_tool_list *out, char *err,
			   size_t errlen);
void gt_tools_free(struct gt_tool_list *l);

/* Settings of one sampler tool after merging. */
struct gt_sampler_cfg {
	int tool;          /* index in the tool list */
	int mode;          /* GT_SAMPLE_POWER or GT_SAMPLE_VRAM */
	char device[256];  /* "0", "0,1,2", "all" */
	char device_from[96]; /* "LOCAL_RANK=1" when the default followed the launcher's rank, else "" */
	double period_s;   /* SAMPLING_RATE */
};
#define GT_SAMPLE_POWER 1
#define GT_SAMPLE_VRAM 2

enum gt_action_kind { GT_ACT_SETUP = 1, GT_ACT_TEARDOWN = 2 };
struct gt_action {
	enum gt_action_kind kind;
	int tool; /* index in the tool list */
};

struct gt_plan {
	struct gt_tool_list tools;
	char **wrapper;  /* words of the wrappers, outermost first, then nothing */
	size_t nwrapper;
	struct gt_kv *env; /* what the command gets on top of gputap's environment */
	size_t nenv;
	struct gt_sampler_cfg *samplers;
	size_t nsamplers;
	int has_tap;
	int has_liblog;
	struct gt_action *actions; /* set-ups, then tear-downs; the command runs between */
	size_t nactions;
};

/* Build the plan from a parsed list (ownership of `tools` moves into the
 * plan).  `outdir` replaces {out}; `getenv_fn` reads gputap's own
 * environment for sampler defaults (DEVICE, SAMPLING_RATE; NULL = none).
 * 0, or -1 with err naming the tool and variable. */
int gt_plan_build(struct gt_plan *p, struct gt_tool_list *tools, const char *outdir,
		  const char *(*getenv_fn)(const char *), char *err, size_t errlen);
void gt_plan_free(struct gt_plan *p);
/* Value of `key` in the plan's environment, NULL if it sets none. */
const char *gt_plan_getenv(const struct gt_plan *p, const char *key);
/* Set `key` in the plan's environment (later wins).  0 or -ENOMEM. */
int gt_plan_setenv(struct gt_plan *p, const char *key, const char *val);
/* The actions as text, one "setup NAME" / "teardown NAME" per line. */
int gt_plan_describe(const struct gt_plan *p, char *buf, size_t len);

/* Split a wrapper command on blanks; '...' and "..." group, backslash
 * escapes.  Returns the number of words (malloc'd into *words) or -1 with err. */
int gt_split_words(const char *s, char ***words, char *err, size_t errlen);
void gt_free_words(char **words, size_t n);

#endif
