/* PC sampling samples per PC and pc_samples.csv (see pcsamp_agg.h). */
#include "tap/pcsamp_agg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/csvio.h"
#include "core/sort.h"

#define NOT_ISSUED "_not_issued"

void gt_pcs_agg_init(struct gt_pcs_agg *a)
{
	memset(a, 0, sizeof(*a));
	a->reason[0] = strdup("unknown");
	a->nreason = a->reason[0] ? 1 : 0;
}

void gt_pcs_agg_free(struct gt_pcs_agg *a)
{
	for (uint32_t i = 0; i < a->nreason; i++)
		free(a->reason[i]);
	for (size_t i = 0; i < a->npc; i++)
		free(a->pc[i].cnt);
	for (size_t i = 0; i < a->nfn; i++)
		free(a->fn[i]);
	for (size_t i = 0; i < a->nfiles; i++)
		free(a->files[i]);
	free(a->pc);
	free(a->slot);
	free(a->fn);
	free(a->files);
	memset(a, 0, sizeof(*a));
}

static int is_not_issued(const char *name)
{
	size_t n = strlen(name), k = sizeof(NOT_ISSUED) - 1;
	return n > k && strcmp(name + n - k, NOT_ISSUED) == 0;
}

/* Grow every PC's counters to `n` columns. */
static int widen(struct gt_pcs_agg *a, uint32_t n)
{
	for (size_t i = 0; i < a->npc; i++) {
		uint64_t *c = realloc(a->pc[i].cnt, n * sizeof(*c));
		if (!c)
			return -ENOMEM;
		memset(c + a->nreason, 0, (n - a->nreason) * sizeof(*c));
		a->pc[i].cnt = c;
	}
	return 0;
}

int gt_pcs_agg_reasons(struct gt_pcs_agg *a, size_t n, const uint32_t *index, char *const *names)
{
	for (size_t i = 0; i < n; i++) {
		if (index[i] >= GT_PCS_MAX_INDEX || !names[i] || a->col_of[index[i]])
			continue;
		uint32_t col = 0;
		for (uint32_t c = 1; c < a->nreason && !col; c++)
			if (strcmp(a->reason[c], names[i]) == 0)
				col = c;
		if (!col) {
			if (a->nreason >= GT_PCS_MAX_REASONS)
				continue; /* counted as unknown */
			char *s = strdup(names[i]);
			if (!s || widen(a, a->nreason + 1) < 0) {
				free(s);
				return -ENOMEM;
			}
			col = a->nreason;
			a->reason[a->nreason++] = s;
		}
		a->col_of[index[i]] = (uint16_t)(col + 1);
	}
	return 0;
}

static uint64_t hash3(uint64_t crc, uint64_t off, uint32_t findex)
{
	uint64_t h = crc * 0x9E3779B97F4A7C15ull ^ (off + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull ^ findex;
	h ^= h >> 31;
	return h * 0x94D049BB133111EBull;
}

static int rehash(struct gt_pcs_agg *a, size_t nslot)
{
	uint32_t *s = calloc(nslot, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < a->npc; i++) {
		size_t j = hash3(a->pc[i].crc, a->pc[i].off, a->pc[i].findex) & (nslot - 1);
		while (s[j])
			j = (j + 1) & (nslot - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(a->slot);
	a->slot = s;
	a->nslot = nslot;
	return 0;
}

static uint32_t intern(char ***tab, size_t *n, size_t *cap, const char *s)
{
	for (size_t i = *n; i-- > 0;) /* few names: a kernel's PCs come together */
		if (strcmp((*tab)[i], s) == 0)
			return (uint32_t)i;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		char **t = realloc(*tab, nc * sizeof(*t));
		if (!t)
			return UINT32_MAX;
		*tab = t;
		*cap = nc;
	}
	char *c = strdup(s);
	if (!c)
		return UINT32_MAX;
	(*tab)[*n] = c;
	return (uint32_t)(*n)++;
}

/* The PC's entry, made when new; NULL without memory. */
static struct gt_pcs_pc *find(struct gt_pcs_agg *a, const CUpti_PCSamplingPCData *d)
{
	if ((a->npc + 1) * 2 > a->nslot && rehash(a, a->nslot ? a->nslot * 2 : 1024) < 0)
		return NULL;
	size_t j = hash3(d->cubinCrc, d->pcOffset, d->functionIndex) & (a->nslot - 1);
	for (; a->slot[j]; j = (j + 1) & (a->nslot - 1)) {
		struct gt_pcs_pc *p = &a->pc[a->slot[j] - 1];
		if (p->crc == d->cubinCrc && p->off == d->pcOffset && p->findex == d->functionIndex)
			return p;
	}
	if (a->npc == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 512;
		struct gt_pcs_pc *t = realloc(a->pc, nc * sizeof(*t));
		if (!t)
			return NULL;
		a->pc = t;
		a->cap = nc;
	}
	uint32_t fn = intern(&a->fn, &a->nfn, &a->fncap, d->functionName ? d->functionName : "(unknown)");
	uint64_t *cnt = calloc(a->nreason ? a->nreason : 1, sizeof(*cnt));
	if (fn == UINT32_MAX || !cnt) {
		free(cnt);
		return NULL;
	}
	struct gt_pcs_pc *p = &a->pc[a->npc];
	memset(p, 0, sizeof(*p));
	p->crc = d->cubinCrc;
	p->off = d->pcOffset;
	p->findex = d->functionIndex;
	p->fn = fn;
	p->cnt = cnt;
	a->slot[j] = (uint32_t)(++a->npc);
	return p;
}

int gt_pcs_agg_add(struct gt_pcs_agg *a, const CUpti_PCSamplingData *d)
{
	int rc = 0;
	a->buffers++;
	a->total += d->totalSamples;
	a->dropped += d->droppedSamples;
	a->nonuser += d->nonUsrKernelsTotalSamples;
	if (d->hardwareBufferFull)
		a->hw_full++;
	for (size_t i = 0; d->pPcData && i < d->totalNumPcs && i < d->collectNumPcs; i++) {
		const CUpti_PCSamplingPCData *r = &d->pPcData[i];
		a->records++;
		struct gt_pcs_pc *p = find(a, r);
		for (size_t k = 0; r->stallReason && k < r->stallReasonCount; k++) {
			uint32_t idx = r->stallReason[k].pcSamplingStallReasonIndex, n = r->stallReason[k].samples;
			uint32_t col = idx < GT_PCS_MAX_INDEX ? a->col_of[idx] : 0;
			int ni = col && is_not_issued(a->reason[col - 1]);
			if (!p) {
				if (!ni)
					a->lost_samples += n;
				rc = -ENOMEM;
				continue;
			}
			if (!col) {
				a->unknown_reason += n;
				p->cnt[0] += n;
				p->samples += n;
				continue;
			}
			p->cnt[col - 1] += n;
			if (ni)
				p->not_issued += n;
			else
				p->samples += n;
		}
	}
	return rc;
}

uint64_t gt_pcs_agg_samples(const struct gt_pcs_agg *a)
{
	uint64_t s = 0;
	for (size_t i = 0; i < a->npc; i++)
		s += a->pc[i].samples;
	return s;
}

int gt_pcs_agg_set_source(struct gt_pcs_agg *a, struct gt_pcs_pc *p, const char *file, uint32_t line)
{
	uint32_t f = intern(&a->files, &a->nfiles, &a->filecap, file);
	if (f == UINT32_MAX)
		return -ENOMEM;
	p->file = f + 1;
	p->line = line;
	return 0;
}

/* Rows: most samples first, then by kernel and offset (a stable order for equal counts). */
static const struct gt_pcs_agg *sort_agg;
static int by_samples(const void *x, const void *y)
{
	const struct gt_pcs_pc *p = &sort_agg->pc[*(const uint32_t *)x], *q = &sort_agg->pc[*(const uint32_t *)y];
	if (p->samples != q->samples)
		return p->samples > q->samples ? -1 : 1;
	int c = strcmp(sort_agg->fn[p->fn], sort_agg->fn[q->fn]);
	if (c)
		return c;
	return p->off < q->off ? -1 : p->off > q->off;
}

static void put_u64(FILE *f, uint64_t v, const char *pre, char sep)
{
	char b[48];
	snprintf(b, sizeof(b), "%s%" PRIu64 "%c", pre, v, sep);
	fputs(b, f);
}

int gt_pcs_agg_write_csv(const struct gt_pcs_agg *a, FILE *f)
{
	uint32_t *order = malloc((a->npc ? a->npc : 1) * sizeof(*order));
	uint8_t used[GT_PCS_MAX_REASONS] = {0};
	if (!order)
		return -1;
	for (size_t i = 0; i < a->npc; i++) {
		order[i] = (uint32_t)i;
		for (uint32_t c = 0; c < a->nreason; c++)
			if (a->pc[i].cnt[c])
				used[c] = 1;
	}
	sort_agg = a;
	gt_sort(order, a->npc, sizeof(*order), by_samples);
	fputs("kernel,function_index,module_crc,pc_offset,samples,not_issued,file,line,sass", f);
	for (uint32_t c = 0; c < a->nreason; c++)
		if (used[c]) {
			fputc(',', f);
			gt_csv_put(f, a->reason[c]);
		}
	fputc('\n', f);
	for (size_t i = 0; i < a->npc; i++) {
		const struct gt_pcs_pc *p = &a->pc[order[i]];
		char b[96];
		gt_csv_put(f, a->fn[p->fn]);
		snprintf(b, sizeof(b), ",%" PRIu32 ",0x%016" PRIx64 ",0x%" PRIx64 ",", p->findex, p->crc, p->off);
		fputs(b, f);
		put_u64(f, p->samples, "", ',');
		put_u64(f, p->not_issued, "", ',');
		if (p->file) {
			gt_csv_put(f, a->files[p->file - 1]);
			put_u64(f, p->line, ",", ',');
		} else {
			fputs(",,", f);
		}
		/* sass: empty */
		for (uint32_t c = 0; c < a->nreason; c++)
			if (used[c])
				put_u64(f, p->cnt[c], ",", '\0');
		fputc('\n', f);
	}
	free(order);
	return ferror(f) ? -1 : 0;
}

int gt_pcs_agg_write_totals(const struct gt_pcs_agg *a, const char *extra, FILE *f)
{
	fputs("key,value\n", f);
	if (extra)
		fputs(extra, f);
	const struct {
		const char *k;
		uint64_t v;
	} rows[] = {
		{"samples", gt_pcs_agg_samples(a)},
		{"cupti_total_samples", a->total},
		{"dropped_samples", a->dropped},
		{"non_user_kernel_samples", a->nonuser},
		{"hardware_buffer_full", a->hw_full},
		{"buffers", a->buffers},
		{"pc_records", a->records},
		{"pcs", a->npc},
		{"unknown_reason_samples", a->unknown_reason},
		{"lost_samples", a->lost_samples},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fputs(rows[i].k, f);
		put_u64(f, rows[i].v, ",", '\n');
	}
	return ferror(f) ? -1 : 0;
}
