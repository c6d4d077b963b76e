/* PC sampling after the run: SASS, per-kernel summary, pc_kernels.csv, pc_sampling.json.  See pcsamp.h. */
#include "export/pcsamp.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/csvio.h"
#include "core/demangle.h"
#include "core/sort.h"
#include "export/ofile.h"
#include "export/writers.h"
#include "trace/rundir.h"

#ifndef GT_CUDA_HOME
#define GT_CUDA_HOME "/usr/local/cuda"
#endif

#define PREFIX "smsp__pcsamp_warps_issue_stalled_"
#define NOT_ISSUED "_not_issued"
#define SASS_BUDGET_S 30 /* nvdisasm for at most this long after a run (GPUTAP_PCSAMP_SASS_S) */
#define SASS_SOFT_S 5    /* after this long, stop once the modules left hold under 2 % of the samples */
#define SASS_SOFT_PCT 2  /* (unless GPUTAP_PCSAMP_SASS_S is set: then only its budget) */
#define FIXED 9 /* kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass */

/* CUPTI's reason (after PREFIX) -> the name Nsight Compute's WarpStateStats section prints. */
static const struct {
	const char *cupti, *ncu;
} groups[] = {
	{"long_scoreboard", "Long Scoreboard"},
	{"barrier", "Barrier"},
	{"math_pipe_throttle", "Math Pipe Throttle"},
	{"wait", "Wait"},
	{"short_scoreboard", "Short Scoreboard"},
	{"mio_throttle", "MIO Throttle"},
	{"lg_throttle", "LG Throttle"},
	{"not_selected", "Not Selected"},
	{"selected", "Selected"},
	{"no_instructions", "No Instruction"},
	{"no_instruction", "No Instruction"},
	{"dispatch_stall", "Dispatch Stall"},
	{"branch_resolving", "Branch Resolving"},
	{"drain", "Drain"},
	{"imc_miss", "IMC Miss"},
	{"membar", "Membar"},
	{"sleeping", "Sleeping"},
	{"tex_throttle", "Tex Throttle"},
	{"misc", "Misc"},
	{"gmma", "GMMA"},
	{"math", "Math"},
	{"warpgroup_arrive", "Warpgroup Arrive"},
	{"tmem", "TMEM"},
};
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))
#define G_OTHER NGROUPS /* a reason not in the table */

size_t gt_pcs_ngroups(void)
{
	return NGROUPS + 1;
}

const char *gt_pcs_group_name(size_t g)
{
	return g < NGROUPS ? groups[g].ncu : "Other";
}

static int is_not_issued(const char *s)
{
	size_t n = strlen(s), k = sizeof(NOT_ISSUED) - 1;
	return n > k && strcmp(s + n - k, NOT_ISSUED) == 0;
}

static int group_index(const char *cupti_name)
{
	if (is_not_issued(cupti_name))
		return -1;
	const char *s = strncmp(cupti_name, PREFIX, sizeof(PREFIX) - 1) == 0 ? cupti_name + sizeof(PREFIX) - 1 : cupti_name;
	for (size_t i = 0; i < NGROUPS; i++)
		if (strcmp(s, groups[i].cupti) == 0)
			return (int)i;
	return (int)G_OTHER;
}

const char *gt_pcs_group_label(const char *cupti_name)
{
	int g = group_index(cupti_name);
	return g < 0 ? NULL : gt_pcs_group_name((size_t)g);
}

void gt_pcs_free(struct gt_pcs_data *d)
{
	for (size_t i = 0; i < d->nreason; i++)
		free(d->reason[i]);
	for (size_t i = 0; i < d->nrow; i++) {
		free(d->row[i].kernel);
		free(d->row[i].file);
		free(d->row[i].sass);
		free(d->row[i].cnt);
	}
	for (size_t i = 0; i < d->nk; i++) {
		free(d->k[i].reason);
		free(d->k[i].group);
	}
	for (size_t i = 0; i < d->nrr; i++)
		free(d->rr[i].range);
	free(d->rr);
	free(d->reason);
	free(d->group_of);
	free(d->row);
	free(d->tot);
	free(d->k);
	memset(d, 0, sizeof(*d));
}

const char *gt_pcs_total(const struct gt_pcs_data *d, const char *key)
{
	for (size_t i = 0; i < d->ntot; i++)
		if (strcmp(d->tot[i].key, key) == 0)
			return d->tot[i].val;
	return NULL;
}

static int parse_u64(const char *s, uint64_t *v)
{
	if (!s || !*s)
		return -1;
	char *end = NULL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end || s[0] == '-')
		return -1;
	*v = x;
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

static int load_totals(const char *procdir, struct gt_pcs_data *d)
{
	char p[4400];
	snprintf(p, sizeof(p), "%s/" GT_PCS_FILE_TOTALS, procdir);
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *c = strchr(line, ',');
		if (!c || strcmp(line, "key,value") == 0)
			continue;
		*c = '\0';
		struct gt_pcs_kv *t = realloc(d->tot, (d->ntot + 1) * sizeof(*t));
		if (!t)
			break;
		d->tot = t;
		snprintf(t[d->ntot].key, sizeof(t[0].key), "%s", line);
		snprintf(t[d->ntot].val, sizeof(t[0].val), "%s", c + 1);
		d->ntot++;
	}
	fclose(f);
	return 0;
}

/* pc_ranges.csv written after the run, when there: for the tables (a bad row is skipped). */
static void load_ranges(const char *procdir, struct gt_pcs_data *d)
{
	char p[4400], err[256];
	snprintf(p, sizeof(p), "%s/" GT_PCS_FILE_RANGES, procdir);
	struct gt_csv c;
	if (access(p, R_OK) != 0 || gt_csv_open(&c, p, err, sizeof(err)) < 0)
		return;
	int first = 1;
	while (gt_csv_next(&c, err, sizeof(err)) > 0) {
		if (first || c.nfields != 5) {
			first = 0;
			continue;
		}
		const char *kernel = NULL;
		for (size_t i = 0; i < d->nrow && !kernel; i++)
			if (strcmp(d->row[i].kernel, c.fields[1]) == 0)
				kernel = d->row[i].kernel;
		uint64_t launches = 0, ns = 0;
		if (!kernel || parse_u64(c.fields[2], &launches) < 0 || parse_u64(c.fields[3], &ns) < 0)
			continue;
		struct gt_pcs_range_row *t = realloc(d->rr, (d->nrr + 1) * sizeof(*t));
		if (!t)
			break;
		d->rr = t;
		d->caprr = d->nrr + 1;
		if (!(t[d->nrr].range = strdup(c.fields[0])))
			break;
		t[d->nrr].kernel = kernel;
		t[d->nrr].launches = launches;
		t[d->nrr].gpu_ns = ns;
		t[d->nrr].samples = strtod(c.fields[4], NULL);
		d->nrr++;
	}
	gt_csv_close(&c);
}

int gt_pcs_load(const char *procdir, struct gt_pcs_data *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	char p[4400];
	snprintf(p, sizeof(p), "%s/" GT_PCS_FILE_SAMPLES, procdir);
	struct stat st;
	if (stat(p, &st) != 0)
		return 1;
	struct gt_csv c;
	if (gt_csv_open(&c, p, err, errlen) < 0)
		return -1;
	int rc = 0, r;
	int first = 1;
	while ((r = gt_csv_next(&c, err, errlen)) > 0) {
		if (first) {
			first = 0;
			if (c.nfields < FIXED || strcmp(c.fields[0], "kernel") != 0 || strcmp(c.fields[8], "sass") != 0) {
				snprintf(err, errlen, "%s:%ld: not a pc_samples.csv header", p, c.line);
				rc = -1;
				break;
			}
			d->nreason = c.nfields - FIXED;
			d->reason = calloc(d->nreason + 1, sizeof(*d->reason));
			d->group_of = calloc(d->nreason + 1, sizeof(*d->group_of));
			if (!d->reason || !d->group_of)
				goto oom;
			for (size_t i = 0; i < d->nreason; i++) {
				if (!(d->reason[i] = strdup(c.fields[FIXED + i])))
					goto oom;
				d->group_of[i] = group_index(d->reason[i]);
			}
			continue;
		}
		if (c.nfields != FIXED + d->nreason) {
			snprintf(err, errlen, "%s:%ld: %zu fields, the header has %zu", p, c.line, c.nfields,
				 FIXED + d->nreason);
			rc = -1;
			break;
		}
		if (d->nrow == d->caprow) {
			size_t nc = d->caprow ? d->caprow * 2 : 256;
			struct gt_pcs_row *t = realloc(d->row, nc * sizeof(*t));
			if (!t)
				goto oom;
			d->row = t;
			d->caprow = nc;
		}
		struct gt_pcs_row *w = &d->row[d->nrow];
		memset(w, 0, sizeof(*w));
		uint64_t fi = 0, line = 0;
		if (parse_u64(c.fields[1], &fi) < 0 || parse_u64(c.fields[2], &w->crc) < 0 ||
		    parse_u64(c.fields[3], &w->off) < 0 || parse_u64(c.fields[4], &w->samples) < 0 ||
		    parse_u64(c.fields[5], &w->not_issued) < 0 || (c.fields[7][0] && parse_u64(c.fields[7], &line) < 0)) {
			snprintf(err, errlen, "%s:%ld: a number field is not a number", p, c.line);
			rc = -1;
			break;
		}
		w->findex = (uint32_t)fi;
		w->line = (uint32_t)line;
		w->kernel = strdup(c.fields[0]);
		w->file = dup_or_null(c.fields[6]);
		w->sass = dup_or_null(c.fields[8]);
		w->cnt = calloc(d->nreason + 1, sizeof(*w->cnt));
		d->nrow++; /* freed with the rest from here on */
		if (!w->kernel || !w->cnt)
			goto oom;
		for (size_t i = 0; i < d->nreason; i++)
			if (parse_u64(c.fields[FIXED + i], &w->cnt[i]) < 0) {
				snprintf(err, errlen, "%s:%ld: column %s is not a number", p, c.line, d->reason[i]);
				rc = -1;
				goto out;
			}
		d->samples += w->samples;
	}
	if (r < 0)
		rc = -1;
	if (first && rc == 0) {
		snprintf(err, errlen, "%s: empty", p);
		rc = -1;
	}
out:
	gt_csv_close(&c);
	if (rc == 0) {
		load_totals(procdir, d);
		load_ranges(procdir, d);
	} else {
		gt_pcs_free(d);
	}
	return rc;
oom:
	snprintf(err, errlen, "%s: out of memory", p);
	rc = -1;
	goto out;
}

/* ---- SASS ---- */

/* Rows of one module, sorted by (function, offset), for the lookups of one disassembly. */
struct sass_key {
	const char *fn;
	uint64_t off;
	struct gt_pcs_row *row;
};
static int by_fn_off(const void *x, const void *y)
{
	const struct sass_key *a = x, *b = y;
	int c = strcmp(a->fn, b->fn);
	if (c)
		return c;
	return a->off < b->off ? -1 : a->off > b->off;
}

int gt_pcs_sass_parse(struct gt_pcs_data *d, uint64_t crc, FILE *in)
{
	struct sass_key *keys = malloc((d->nrow ? d->nrow : 1) * sizeof(*keys));
	if (!keys)
		return -1;
	size_t nk = 0;
	for (size_t i = 0; i < d->nrow; i++)
		if (d->row[i].crc == crc && !d->row[i].sass)
			keys[nk++] = (struct sass_key){d->row[i].kernel, d->row[i].off, &d->row[i]};
	gt_sort(keys, nk, sizeof(*keys), by_fn_off);
	char line[4096], fn[1024] = "";
	int filled = 0;
	while (nk && fgets(line, sizeof(line), in)) {
		char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		/* a function's code: ".section .text.NAME,..." or the label ".text.NAME:" */
		if (strncmp(s, ".section", 8) == 0 || strncmp(s, ".text.", 6) == 0) {
			char *t = strstr(s, ".text.");
			fn[0] = '\0'; /* a data section (.debug_frame, .nv.info): no instructions */
			if (t) {
				t += 6;
				size_t n = strcspn(t, ",: \t\r\n");
				snprintf(fn, sizeof(fn), "%.*s", (int)n, t);
			}
			continue;
		}
		if (strncmp(s, "/*", 2) != 0 || !fn[0])
			continue;
		char *end = NULL;
		unsigned long long off = strtoull(s + 2, &end, 16);
		if (!end || end == s + 2 || strncmp(end, "*/", 2) != 0)
			continue;
		struct sass_key k = {fn, off, NULL};
		struct sass_key *hit = bsearch(&k, keys, nk, sizeof(*keys), by_fn_off);
		if (!hit)
			continue;
		while (hit > keys && by_fn_off(hit - 1, &k) == 0)
			hit--;
		char *ins = end + 2;
		while (*ins == ' ' || *ins == '\t')
			ins++;
		char *semi = strchr(ins, ';');
		if (!semi || ins == semi)
			continue;
		while (semi > ins && (semi[-1] == ' ' || semi[-1] == '\t'))
			semi--;
		for (; hit < keys + nk && by_fn_off(hit, &k) == 0; hit++)
			if (!hit->row->sass && (hit->row->sass = strndup(ins, (size_t)(semi - ins))))
				filled++;
	}
	free(keys);
	return filled;
}

static int find_nvdisasm(char *out, size_t cap)
{
	const char *env = getenv("GPUTAP_NVDISASM");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return access(out, X_OK) == 0 ? 0 : -1;
	}
	const char *homes[] = {getenv("CUDA_HOME"), GT_CUDA_HOME, "/usr/local/cuda"};
	for (size_t i = 0; i < sizeof(homes) / sizeof(homes[0]); i++) {
		if (!homes[i] || !*homes[i])
			continue;
		snprintf(out, cap, "%s/bin/nvdisasm", homes[i]);
		if (access(out, X_OK) == 0)
			return 0;
	}
	const char *path = getenv("PATH");
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(out, cap, "%.*s/nvdisasm", (int)n, path);
		if (n && access(out, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -1;
}

/* Start nvdisasm [-fun F1,F2,...] CUBIN with its output into `out` (no shell: argv as given).
 * The child's pid, or -1. */
static pid_t disasm_start(const char *tool, const char *cubin, const char *funs, const char *out)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		if (funs)
			execl(tool, tool, "-c", "-fun", funs, cubin, (char *)NULL);
		else
			execl(tool, tool, "-c", cubin, (char *)NULL);
		_exit(127);
	}
	close(fd);
	return pid;
}

static int by_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void sass_path(char *buf, size_t cap, const char *procdir, uint64_t crc, int out)
{
	if (out)
		snprintf(buf, cap, "%s/pcsamp/.%016" PRIx64 ".sass.%d", procdir, crc, (int)getpid());
	else
		snprintf(buf, cap, "%s/pcsamp/%016" PRIx64 ".cubin", procdir, crc);
}

static int by_cstr(const void *key, const void *elem)
{
	return strcmp((const char *)key, *(const char *const *)elem);
}

char *gt_pcs_cubin_fun_index(const unsigned char *img, size_t n, const char *const *names, size_t nnames)
{
	Elf64_Ehdr eh;
	if (!img || n < sizeof(eh) || !nnames)
		return NULL;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > n || eh.e_shnum > (n - eh.e_shoff) / sizeof(Elf64_Shdr))
		return NULL;
	size_t cap = 64, len = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh, st;
		memcpy(&sh, img + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh.e_shnum ||
		    sh.sh_offset > n || sh.sh_size > n - sh.sh_offset)
			continue;
		memcpy(&st, img + eh.e_shoff + sh.sh_link * sizeof(st), sizeof(st));
		if (st.sh_type != SHT_STRTAB || st.sh_offset > n || st.sh_size > n - st.sh_offset)
			continue;
		const char *str = (const char *)img + st.sh_offset;
		for (size_t k = 1; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
			Elf64_Sym sym;
			memcpy(&sym, img + sh.sh_offset + k * sizeof(sym), sizeof(sym));
			if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= st.sh_size ||
			    !memchr(str + sym.st_name, '\0', st.sh_size - sym.st_name) ||
			    !bsearch(str + sym.st_name, names, nnames, sizeof(*names), by_cstr))
				continue;
			if (len + 24 > cap) {
				char *t = realloc(out, cap *= 2);
				if (!t) {
					free(out);
					return NULL;
				}
				out = t;
			}
			len += (size_t)snprintf(out + len, cap - len, "%s%zu", len ? "," : "", k);
		}
	}
	if (!len) {
		free(out);
		return NULL;
	}
	return out;
}

/* nvdisasm's -fun list for module `crc`: the symbol indices of its sampled functions in
 * <procdir>/pcsamp/<crc>.cubin (malloc'd); NULL when none is found there (the whole module then). */
static char *module_funs(const struct gt_pcs_data *d, const char *procdir, uint64_t crc)
{
	const char **v = malloc((d->nrow ? d->nrow : 1) * sizeof(*v));
	if (!v)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < d->nrow; i++)
		if (d->row[i].crc == crc && d->row[i].kernel && d->row[i].kernel[0])
			v[n++] = d->row[i].kernel;
	gt_sort(v, n, sizeof(*v), by_str);
	char path[4400];
	sass_path(path, sizeof(path), procdir, crc, 0);
	char *s = NULL;
	int fd = n ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	struct stat sb;
	if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 0) {
		void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			s = gt_pcs_cubin_fun_index(m, (size_t)sb.st_size, v, n);
			munmap(m, (size_t)sb.st_size);
		}
	}
	if (fd >= 0)
		close(fd);
	free(v);
	return s;
}

/* One module to disassemble: with -fun first, then (when that filled nothing) whole. */
struct sjob {
	uint64_t crc;
	uint64_t samples; /* of its PCs */
	char *funs;
	int tries; /* runs started */
	pid_t pid;
	int done;
};

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A finished run of job j: parse its output; 1 when it is to run again without -fun. */
static int sass_collect(struct gt_pcs_data *d, const char *procdir, struct sjob *j, int *filled)
{
	char out[4400];
	sass_path(out, sizeof(out), procdir, j->crc, 1);
	FILE *f = fopen(out, "r");
	int n = f ? gt_pcs_sass_parse(d, j->crc, f) : 0;
	if (f)
		fclose(f);
	unlink(out);
	if (n > 0)
		*filled += n;
	return n <= 0 && j->funs && j->tries == 1;
}

int gt_pcs_sass_enough(double elapsed_s, double budget_s, int soft, uint64_t left, uint64_t total)
{
	if (elapsed_s > budget_s)
		return 2;
	/* left < SASS_SOFT_PCT % of total, without overflow for any count */
	return soft && elapsed_s > SASS_SOFT_S && (total >= 100 ? left / SASS_SOFT_PCT < total / 100 : left == 0) ? 1 : 0;
}

double gt_pcs_sass_budget(int *soft)
{
	const char *e = getenv("GPUTAP_PCSAMP_SASS_S");
	char *end = NULL;
	double v = e && *e ? strtod(e, &end) : SASS_BUDGET_S;
	int ok = e && *e && end && !*end && v >= 0 && v <= 86400;
	if (soft)
		*soft = !ok;
	return ok ? v : SASS_BUDGET_S;
}

static int by_job_samples(const void *x, const void *y)
{
	const struct sjob *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->crc < b->crc ? -1 : a->crc > b->crc;
}

int gt_pcs_sass(struct gt_pcs_data *d, const char *procdir, const char *nvdisasm)
{
	char tool[4096];
	int soft = 1;
	double budget = gt_pcs_sass_budget(&soft);
	d->sass_budget_s = budget;
	if (budget <= 0)
		return 0; /* GPUTAP_PCSAMP_SASS_S=0: no SASS */
	if (nvdisasm)
		snprintf(tool, sizeof(tool), "%s", nvdisasm);
	else if (find_nvdisasm(tool, sizeof(tool)) < 0)
		return -1;
	uint64_t *crcs = malloc((d->nrow ? d->nrow : 1) * sizeof(*crcs));
	struct sjob *jobs = calloc(d->nrow ? d->nrow : 1, sizeof(*jobs));
	if (!crcs || !jobs) {
		free(crcs);
		free(jobs);
		return -1;
	}
	size_t nc = 0, nj = 0;
	for (size_t i = 0; i < d->nrow; i++)
		crcs[nc++] = d->row[i].crc;
	gt_sort(crcs, nc, sizeof(*crcs), gt_cmp_u64);
	for (size_t i = 0; i < nc; i++) {
		char cubin[4400];
		sass_path(cubin, sizeof(cubin), procdir, crcs[i], 0);
		if ((i && crcs[i] == crcs[i - 1]) || access(cubin, R_OK) != 0)
			continue;
		/* only the sampled functions (a framework's module holds thousands) */
		jobs[nj].crc = crcs[i];
		jobs[nj].funs = module_funs(d, procdir, crcs[i]);
		jobs[nj].pid = -1;
		nj++;
	}
	/* the modules with most samples first; what is left when the step stops early is the least */
	uint64_t total = 0, left = 0;
	for (size_t i = 0; i < d->nrow; i++)
		for (size_t j = 0; j < nj; j++)
			if (jobs[j].crc == d->row[i].crc) {
				jobs[j].samples += d->row[i].samples;
				break;
			}
	for (size_t j = 0; j < nj; j++)
		total += jobs[j].samples;
	left = total;
	gt_sort(jobs, nj, sizeof(*jobs), by_job_samples);
	/* several at once (one a core, at most 8), for at most the budget; after SASS_SOFT_S, only while
	 * the modules not done hold SASS_SOFT_PCT % of the samples or more (on an H100 a PyTorch loop's
	 * SASS step took 30 s, most of it for modules holding under 1 % of the samples) */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int par = cpus > 8 ? 8 : cpus < 1 ? 1 : (int)cpus, running = 0, filled = 0;
	double t0 = mono_s();
	size_t next = 0;
	for (;;) {
		int over = gt_pcs_sass_enough(mono_s() - t0, budget, soft, left, total);
		for (; !over && running < par && next < nj; next++) {
			struct sjob *j = &jobs[next];
			if (j->done || j->pid > 0)
				continue;
			char cubin[4400], out[4400];
			sass_path(cubin, sizeof(cubin), procdir, j->crc, 0);
			sass_path(out, sizeof(out), procdir, j->crc, 1);
			j->pid = disasm_start(tool, cubin, j->tries == 0 ? j->funs : NULL, out);
			j->tries++;
			if (j->pid > 0) {
				running++;
			} else {
				j->done = 1;
				left -= j->samples;
			}
		}
		if (!running)
			break;
		if (over) { /* over the budget, or enough: stop the rest, their modules keep no SASS */
			d->sass_over_budget = over;
			for (size_t i = 0; i < nj; i++) {
				if (jobs[i].pid <= 0)
					continue;
				kill(jobs[i].pid, SIGKILL);
				while (waitpid(jobs[i].pid, NULL, 0) < 0 && errno == EINTR) {
				}
				char out[4400];
				sass_path(out, sizeof(out), procdir, jobs[i].crc, 1);
				unlink(out);
				jobs[i].pid = -1;
			}
			break;
		}
		/* our children only (gputap may have others): each polled, a short sleep when none ended */
		int ended = 0;
		for (size_t i = 0; i < nj; i++) {
			struct sjob *j = &jobs[i];
			if (j->pid <= 0)
				continue;
			int st = 0;
			pid_t r = waitpid(j->pid, &st, WNOHANG);
			if (r == 0 || (r < 0 && errno == EINTR))
				continue;
			ended++;
			j->pid = -1;
			running--;
			if (r > 0 && sass_collect(d, procdir, j, &filled)) {
				if (next > i)
					next = i; /* again, whole (an nvdisasm without -fun) */
			} else {
				j->done = 1;
				left -= j->samples;
			}
		}
		if (!ended) {
			struct timespec q = {0, 5000000};
			nanosleep(&q, NULL);
		}
		if (!running && next < nj && (over = gt_pcs_sass_enough(mono_s() - t0, budget, soft, left, total)) != 0)
			d->sass_over_budget = over;
	}
	d->sass_s = mono_s() - t0;
	for (size_t i = 0; i < nj; i++)
		free(jobs[i].funs);
	free(jobs);
	free(crcs);
	d->sass_found = 0;
	for (size_t i = 0; i < d->nrow; i++)
		d->sass_found += d->row[i].sass != NULL;
	d->sass_missing = d->nrow - d->sass_found;
	return filled;
}

/* ---- per kernel ---- */

static int by_kernel_samples(const void *x, const void *y)
{
	const struct gt_pcs_kernel *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void top_insert(struct gt_pcs_kernel *k, const struct gt_pcs_data *d, size_t row)
{
	uint64_t s = d->row[row].samples;
	size_t n = k->ntop_pc, at = n;
	while (at > 0 && d->row[k->top_pc[at - 1]].samples < s)
		at--;
	if (at >= GT_PCS_TOP)
		return;
	if (n < GT_PCS_TOP)
		n++;
	memmove(&k->top_pc[at + 1], &k->top_pc[at], (n - 1 - at) * sizeof(k->top_pc[0]));
	k->top_pc[at] = row;
	k->ntop_pc = n;
}

struct line_sum {
	const char *kernel, *file;
	uint32_t line;
	uint64_t samples;
};
static int by_line(const void *x, const void *y)
{
	const struct line_sum *a = x, *b = y;
	int c = strcmp(a->kernel, b->kernel);
	if (c)
		return c;
	c = strcmp(a->file, b->file);
	if (c)
		return c;
	return a->line < b->line ? -1 : a->line > b->line;
}

int gt_pcs_summarize(struct gt_pcs_data *d)
{
	size_t ng = gt_pcs_ngroups();
	for (size_t i = 0; i < d->nrow; i++) {
		struct gt_pcs_row *w = &d->row[i];
		struct gt_pcs_kernel *k = NULL;
		for (size_t j = d->nk; j-- > 0 && !k;) /* few kernels; rows of one kernel often come together */
			if (strcmp(d->k[j].name, w->kernel) == 0)
				k = &d->k[j];
		if (!k) {
			struct gt_pcs_kernel *t = realloc(d->k, (d->nk + 1) * sizeof(*t));
			if (!t)
				return -ENOMEM;
			d->k = t;
			k = &d->k[d->nk];
			memset(k, 0, sizeof(*k));
			k->name = w->kernel;
			k->reason = calloc(d->nreason + 1, sizeof(*k->reason));
			k->group = calloc(ng, sizeof(*k->group));
			d->nk++;
			if (!k->reason || !k->group)
				return -ENOMEM;
		}
		k->samples += w->samples;
		k->not_issued += w->not_issued;
		for (size_t r = 0; r < d->nreason; r++) {
			k->reason[r] += w->cnt[r];
			if (d->group_of[r] >= 0)
				k->group[d->group_of[r]] += w->cnt[r];
		}
		top_insert(k, d, i);
	}
	/* hottest source lines: rows with a line, summed per (kernel, file, line) */
	struct line_sum *ls = malloc((d->nrow ? d->nrow : 1) * sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	size_t nl = 0;
	for (size_t i = 0; i < d->nrow; i++)
		if (d->row[i].file && d->row[i].line)
			ls[nl++] = (struct line_sum){d->row[i].kernel, d->row[i].file, d->row[i].line, d->row[i].samples};
	gt_sort(ls, nl, sizeof(*ls), by_line);
	size_t m = 0;
	for (size_t i = 0; i < nl; i++) {
		if (m && by_line(&ls[m - 1], &ls[i]) == 0)
			ls[m - 1].samples += ls[i].samples;
		else
			ls[m++] = ls[i];
	}
	for (size_t i = 0; i < m; i++) {
		struct gt_pcs_kernel *k = NULL;
		for (size_t j = 0; j < d->nk && !k; j++)
			if (strcmp(d->k[j].name, ls[i].kernel) == 0)
				k = &d->k[j];
		if (!k)
			continue;
		size_t n = k->ntop_line, at = n;
		while (at > 0 && k->top_line[at - 1].samples < ls[i].samples)
			at--;
		if (at >= GT_PCS_TOP)
			continue;
		if (n < GT_PCS_TOP)
			n++;
		memmove(&k->top_line[at + 1], &k->top_line[at], (n - 1 - at) * sizeof(k->top_line[0]));
		k->top_line[at].file = ls[i].file;
		k->top_line[at].line = ls[i].line;
		k->top_line[at].samples = ls[i].samples;
		k->ntop_line = n;
	}
	free(ls);
	gt_sort(d->k, d->nk, sizeof(*d->k), by_kernel_samples);
	return 0;
}

/* ---- writers ---- */

static void put_hex(FILE *f, uint64_t v, int width)
{
	if (width)
		fprintf(f, "0x%016" PRIx64, v);
	else
		fprintf(f, "0x%" PRIx64, v);
}

int gt_pcs_write_samples(const struct gt_pcs_data *d, FILE *f)
{
	fputs("kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass", f);
	for (size_t r = 0; r < d->nreason; r++) {
		fputc(',', f);
		gt_csv_put(f, d->reason[r]);
	}
	fputc('\n', f);
	for (size_t i = 0; i < d->nrow; i++) {
		const struct gt_pcs_row *w = &d->row[i];
		gt_csv_put(f, w->kernel);
		fprintf(f, ",%" PRIu32 ",", w->findex);
		put_hex(f, w->crc, 1);
		fputc(',', f);
		put_hex(f, w->off, 0);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",", w->samples, w->not_issued);
		gt_csv_put(f, w->file);
		if (w->line)
			fprintf(f, ",%" PRIu32 ",", w->line);
		else
			fputs(",,", f);
		gt_csv_put(f, w->sass);
		for (size_t r = 0; r < d->nreason; r++)
			fprintf(f, ",%" PRIu64, w->cnt[r]);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* The group with the most samples of kernel k, -1 when none. */
static int top_group(const struct gt_pcs_kernel *k, int skip)
{
	int best = -1;
	for (size_t g = 0; g < gt_pcs_ngroups(); g++)
		if ((int)g != skip && k->group[g] && (best < 0 || k->group[g] > k->group[best]))
			best = (int)g;
	return best;
}

int gt_pcs_write_kernels(const struct gt_pcs_data *d, FILE *f)
{
	size_t ng = gt_pcs_ngroups();
	uint8_t *used = calloc(ng, 1);
	if (!used)
		return -1;
	for (size_t i = 0; i < d->nk; i++)
		for (size_t g = 0; g < ng; g++)
			if (d->k[i].group[g])
				used[g] = 1;
	fputs("kernel,function,samples,share,not_issued,top_stall,top_stall_share,hottest_pc_offset,hottest_sass,"
	      "hottest_file,hottest_line",
	      f);
	for (size_t g = 0; g < ng; g++)
		if (used[g]) {
			fputc(',', f);
			gt_csv_put(f, gt_pcs_group_name(g));
		}
	fputc('\n', f);
	for (size_t i = 0; i < d->nk; i++) {
		const struct gt_pcs_kernel *k = &d->k[i];
		char dm[2048];
		gt_csv_put(f, gt_demangle_to(k->name, dm, sizeof(dm)));
		fputc(',', f);
		gt_csv_put(f, k->name);
		int tg = top_group(k, -1);
		fprintf(f, ",%" PRIu64 ",%.4f,%" PRIu64 ",", k->samples, share(k->samples, d->samples), k->not_issued);
		gt_csv_put(f, tg >= 0 ? gt_pcs_group_name((size_t)tg) : NULL);
		fprintf(f, ",%.4f,", tg >= 0 ? share(k->group[tg], k->samples) : 0.0);
		if (k->ntop_pc) {
			const struct gt_pcs_row *w = &d->row[k->top_pc[0]];
			put_hex(f, w->off, 0);
			fputc(',', f);
			gt_csv_put(f, w->sass);
		} else {
			fputc(',', f);
		}
		fputc(',', f);
		if (k->ntop_line) {
			gt_csv_put(f, k->top_line[0].file);
			fprintf(f, ",%" PRIu32, k->top_line[0].line);
		} else {
			fputc(',', f);
		}
		for (size_t g = 0; g < ng; g++)
			if (used[g])
				fprintf(f, ",%" PRIu64, k->group[g]);
		fputc('\n', f);
	}
	free(used);
	return ferror(f) ? -1 : 0;
}

static void json_totals(const struct gt_pcs_data *d, FILE *f)
{
	fputs("\"totals\":{", f);
	for (size_t i = 0; i < d->ntot; i++) {
		if (i)
			fputc(',', f);
		gt_json_str(f, d->tot[i].key);
		fputc(':', f);
		/* numbers as numbers, anything else as a string */
		char *end = NULL;
		strtod(d->tot[i].val, &end);
		if (d->tot[i].val[0] && end && !*end && d->tot[i].val[0] != '+' && d->tot[i].val[0] != '.')
			fputs(d->tot[i].val, f);
		else
			gt_json_str(f, d->tot[i].val);
	}
	fputc('}', f);
}

int gt_pcs_write_json(const struct gt_pcs_data *d, FILE *f)
{
	fprintf(f, "{\"format\":\"gputap-pc-sampling\",\"version\":1,\"samples\":%" PRIu64 ",", d->samples);
	json_totals(d, f);
	fputs(",\"stall_reasons\":[", f);
	for (size_t r = 0; r < d->nreason; r++) {
		fputs(r ? ",{\"name\":" : "{\"name\":", f);
		gt_json_str(f, d->reason[r]);
		fputs(",\"group\":", f);
		if (d->group_of[r] >= 0)
			gt_json_str(f, gt_pcs_group_name((size_t)d->group_of[r]));
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("],\"kernels\":[", f);
	for (size_t i = 0; i < d->nk; i++) {
		const struct gt_pcs_kernel *k = &d->k[i];
		char dm[2048];
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		gt_json_str(f, gt_demangle_to(k->name, dm, sizeof(dm)));
		fputs(",\"function\":", f);
		gt_json_str(f, k->name);
		fprintf(f, ",\"samples\":%" PRIu64 ",\"share\":%.6f,\"not_issued\":%" PRIu64 ",\"groups\":{", k->samples,
			share(k->samples, d->samples), k->not_issued);
		int first = 1;
		for (size_t g = 0; g < gt_pcs_ngroups(); g++) {
			if (!k->group[g])
				continue;
			if (!first)
				fputc(',', f);
			first = 0;
			gt_json_str(f, gt_pcs_group_name(g));
			fprintf(f, ":%" PRIu64, k->group[g]);
		}
		fputs("},\"stall_reasons\":{", f);
		first = 1;
		for (size_t r = 0; r < d->nreason; r++) {
			if (!k->reason[r])
				continue;
			if (!first)
				fputc(',', f);
			first = 0;
			gt_json_str(f, d->reason[r]);
			fprintf(f, ":%" PRIu64, k->reason[r]);
		}
		fputs("},\"top_pcs\":[", f);
		for (size_t t = 0; t < k->ntop_pc; t++) {
			const struct gt_pcs_row *w = &d->row[k->top_pc[t]];
			fprintf(f, "%s{\"pc_offset\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"sass\":", t ? "," : "", w->off,
				w->samples);
			if (w->sass)
				gt_json_str(f, w->sass);
			else
				fputs("null", f);
			fputs(",\"file\":", f);
			if (w->file)
				gt_json_str(f, w->file);
			else
				fputs("null", f);
			fprintf(f, ",\"line\":%" PRIu32 "}", w->line);
		}
		fputs("],\"top_lines\":[", f);
		for (size_t t = 0; t < k->ntop_line; t++) {
			fputs(t ? ",{\"file\":" : "{\"file\":", f);
			gt_json_str(f, k->top_line[t].file);
			fprintf(f, ",\"line\":%" PRIu32 ",\"samples\":%" PRIu64 "}", k->top_line[t].line, k->top_line[t].samples);
		}
		fputs("]}", f);
	}
	fputs("],\"ranges\":[", f);
	for (size_t i = 0; i < d->nrr; i++) {
		const struct gt_pcs_range_row *w = &d->rr[i];
		char dm[2048];
		fputs(i ? ",\n{\"range\":" : "\n{\"range\":", f);
		gt_json_str(f, w->range);
		fputs(",\"kernel\":", f);
		gt_json_str(f, gt_demangle_to(w->kernel, dm, sizeof(dm)));
		fprintf(f, ",\"launches\":%" PRIu64 ",\"gpu_time_ns\":%" PRIu64 ",\"samples\":%.1f}", w->launches, w->gpu_ns,
			w->samples);
	}
	fputs("]}\n", f);
	return ferror(f) ? -1 : 0;
}

/* ---- after the run ---- */

static int write_out(const char *dir, const char *name, int (*fn)(const struct gt_pcs_data *, FILE *),
		     const struct gt_pcs_data *d, char *err, size_t errlen)
{
	struct gt_ofile o;
	if (gt_ofile_open(&o, dir, name, err, errlen) < 0)
		return -1;
	if (fn(d, o.f) < 0) {
		gt_ofile_abort(&o);
		snprintf(err, errlen, "%s/%s: write failed", dir, name);
		return -1;
	}
	return gt_ofile_commit(&o, err, errlen);
}

int gt_pcs_postrun(const char *rundir, void (*warn)(void *arg, const char *msg), void *arg)
{
	struct gt_rundir_proc *procs = NULL;
	int np = gt_rundir_procs(rundir, &procs), done = 0;
	for (int i = 0; i < np; i++) {
		char dir[4400], err[1024] = "", msg[1200];
		snprintf(dir, sizeof(dir), "%s/%s", rundir, procs[i].name);
		struct gt_pcs_data d;
		int rc = gt_pcs_load(dir, &d, err, sizeof(err));
		if (rc == 1)
			continue;
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "PC sampling: %s", err);
			if (warn)
				warn(arg, msg);
			continue;
		}
		int need_sass = 0;
		for (size_t r = 0; r < d.nrow && !need_sass; r++)
			need_sass = d.row[r].sass == NULL;
		if (need_sass && d.nrow) {
			if (gt_pcs_sass(&d, dir, NULL) < 0 && warn) {
				snprintf(msg, sizeof(msg), "PC sampling: nvdisasm not found (CUDA_HOME/bin, PATH): %s/%s has "
							   "no SASS; the modules are in %s/pcsamp/",
					 procs[i].name, GT_PCS_FILE_SAMPLES, procs[i].name);
				warn(arg, msg);
			} else {
				if (d.sass_over_budget && warn) {
					snprintf(msg, sizeof(msg),
						 "PC sampling: nvdisasm stopped after %.0f s (%s): %llu PCs of %s have no SASS "
						 "(GPUTAP_PCSAMP_SASS_S=N: up to N s, for all)",
						 d.sass_s,
						 d.sass_over_budget == 1 ? "the modules left hold under 2% of the samples"
									 : "its time budget",
						 (unsigned long long)d.sass_missing, procs[i].name);
					warn(arg, msg);
				}
				if (write_out(dir, GT_PCS_FILE_SAMPLES, gt_pcs_write_samples, &d, err, sizeof(err)) < 0 && warn)
					warn(arg, err);
			}
		}
		for (size_t r = 0; r < d.nrr; r++) /* made again from the trace */
			free(d.rr[r].range);
		free(d.rr);
		d.rr = NULL;
		d.nrr = d.caprr = 0;
		int sum = gt_pcs_summarize(&d);
		if (sum == 0 && procs[i].trace[0] && gt_pcs_ranges(&d, procs[i].trace, err, sizeof(err)) < 0 && warn) {
			snprintf(msg, sizeof(msg), "PC sampling: samples per range of %s: %s", procs[i].name,
				 err[0] ? err : "out of memory");
			warn(arg, msg);
		}
		err[0] = '\0';
		if (sum == 0 && d.nrr && write_out(dir, GT_PCS_FILE_RANGES, gt_pcs_write_ranges, &d, err, sizeof(err)) < 0 && warn)
			warn(arg, err);
		err[0] = '\0';
		if (sum < 0 ||
		    write_out(dir, GT_PCS_FILE_KERNELS, gt_pcs_write_kernels, &d, err, sizeof(err)) < 0 ||
		    write_out(dir, GT_PCS_FILE_JSON, gt_pcs_write_json, &d, err, sizeof(err)) < 0) {
			if (warn)
				warn(arg, err[0] ? err : "PC sampling: out of memory");
		} else {
			done++;
		}
		gt_pcs_free(&d);
	}
	free(procs);
	return done;
}
