/*
 * A stand-in for NCCL's side of the profiler plugin interface, to test the tap's plugin without
 * NCCL or a GPU: loads NCCL_PROFILER_PLUGIN as NCCL does (dlopen, then the newest ncclProfiler_v<N>
 * symbol, or the version given as argv[1]), opens two communicators and reports collectives on
 * them, plus events of other types that the plugin must ignore; with "p2p", sends and receives too
 * (rank 3: on the first communicator two sends to 4 and a receive from 2, on the second a send to 4).
 * Usage: fake_nccl [VERSION] [COLLECTIVES_PER_COMM] [p2p]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* collective descriptors, as NCCL's ext-profiler headers lay them out per version */
struct c1 { const char *name; uint64_t hash, seq; uint8_t func; const void *s; void *r; size_t count; int root;
	    uint8_t dtype; uint32_t op; size_t traffic; uint8_t nch, nw, algo, proto; int collnet, nvls; };
struct c2 { const char *name; uint64_t hash, seq; const char *func; const void *s; void *r; size_t count; int root;
	    const char *dtype; size_t traffic; uint8_t nch, nw; const char *algo, *proto; };
struct c3 { const char *name; uint64_t hash, seq; const char *func; const void *s; void *r; size_t count; int root;
	    const char *dtype; uint8_t nch, nw; const char *algo, *proto; };
struct c4 { uint64_t seq; const char *func; const void *s; void *r; size_t count; int root; const char *dtype;
	    uint8_t nch, nw; const char *algo, *proto; void *parent_group; };
struct p4 { const char *func; void *buff; const char *dtype; size_t count; int peer; uint8_t nch; void *parent_group; };
union cu { struct c1 a; struct c2 b; struct c3 c; struct c4 d; struct p4 e; char big[160]; };
struct d8 { uint8_t type; void *parent; int rank; union cu u; };
struct d64 { uint64_t type; void *parent; int rank; union cu u; };

typedef int (*init_old_t)(void **, int *);
typedef int (*init4_t)(void **, int *, const char *, uint64_t, int, int, int, void *);
typedef int (*init5_t)(void **, uint64_t, int *, const char *, int, int, int, void *);
struct plugin { const char *name; void *init; int (*start)(void *, void **, void *); int (*stop)(void *);
		int (*state)(void *, int, void *); int (*fin)(void *); };

/* Start an event as NCCL of interface v hands it over: v5 with a 64-bit type, older ones the 8-bit layout. */
static int start(const struct plugin *p, int v, void *ctx, void **ev, const struct d64 *d)
{
	if (v == 5)
		return p->start(ctx, ev, (void *)(uintptr_t)d);
	struct d8 e;
	memset(&e, 0, sizeof(e));
	e.type = (uint8_t)d->type;
	e.rank = d->rank;
	e.u = d->u;
	return p->start(ctx, ev, &e);
}

int main(int argc, char **argv)
{
	const char *lib = getenv("NCCL_PROFILER_PLUGIN");
	int want = argc > 1 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 3;
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!h) {
		fprintf(stderr, "fake nccl: cannot load the plugin: %s\n", lib ? dlerror() : "NCCL_PROFILER_PLUGIN unset");
		return 2;
	}
	struct plugin *p = NULL;
	int v;
	for (v = 5; v >= 1 && !p; v--) {
		char sym[32];
		snprintf(sym, sizeof(sym), "ncclProfiler_v%d", v);
		if (!want || want == v)
			p = dlsym(h, sym);
	}
	v++;
	if (!p)
		return 3;
	printf("version %d name %s\n", v, p->name);
	int events = 0;
	uint64_t hashes[2] = {0x1111222233334444ull, 0xabcdef0012345678ull};
	void *ctx[2];
	for (int c = 0; c < 2; c++) {
		int mask = 0;
		int rc = v <= 3 ? ((init_old_t)p->init)(&ctx[c], &mask)
			 : v == 4 ? ((init4_t)p->init)(&ctx[c], &mask, "comm", hashes[c], 1, 8, 3, NULL)
				  : ((init5_t)p->init)(&ctx[c], hashes[c], &mask, "comm", 1, 8, 3, NULL);
		if (rc != 0 || !(mask & (1 << 1)))
			return 4;
	}
	for (int i = 0; i < n; i++)
		for (int c = 0; c < 2; c++) {
			struct d64 d;
			memset(&d, 0, sizeof(d));
			d.rank = 3;
			union cu *u = &d.u;
			switch (v) {
			case 1: u->a = (struct c1){"AllReduce", hashes[c], (uint64_t)i, 4, 0, 0, 1024, -1, 7, 0, 4096, 16, 8, 1, 2, 0, 0}; break;
			case 2: u->b = (struct c2){"AllReduce", hashes[c], (uint64_t)i, "AllReduce", 0, 0, 1024, -1, "ncclFloat32", 4096, 16, 8, "RING", "SIMPLE"}; break;
			case 3: u->c = (struct c3){"AllReduce", hashes[c], (uint64_t)i, "AllReduce", 0, 0, 1024, -1, "ncclFloat32", 16, 8, "RING", "SIMPLE"}; break;
			default: u->d = (struct c4){(uint64_t)i, "AllReduce", 0, 0, 1024, -1, "ncclFloat32", 16, 8, "RING", "SIMPLE", 0}; break;
			}
			void *ev = (void *)1, *other = (void *)1;
			d.type = 1 << 1;
			start(p, v, ctx[c], &ev, &d);
			d.type = 1 << 3; /* a proxy operation: not recorded */
			start(p, v, ctx[c], &other, &d);
			if (other != NULL)
				return 5;
			if (ev) { /* NCCL skips a NULL handle */
				events++;
				p->state(ev, 0, NULL);
				p->stop(ev);
			}
		}
	int p2p = argc > 3 && strcmp(argv[3], "p2p") == 0, sends = 0;
	static const struct { int comm; const char *func; int peer; } ops[] = {
		{0, "Send", 4}, {0, "Recv", 2}, {1, "Send", 4}, {0, "Send", 4}};
	for (size_t i = 0; p2p && i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct d64 d;
		memset(&d, 0, sizeof(d));
		d.type = 1 << 2;
		d.rank = 3;
		d.u.e = (struct p4){ops[i].func, 0, "ncclBfloat16", 4096 + i, ops[i].peer, 8, 0};
		void *ev = (void *)1;
		start(p, v, ctx[ops[i].comm], &ev, &d);
		if (ev == (void *)1)
			return 6;
		if (ev) {
			sends++;
			p->stop(ev);
		}
	}
	for (int c = 0; c < 2; c++)
		p->fin(ctx[c]);
	printf("events %d\n", events);
	if (p2p)
		printf("p2p events %d\n", sends);
	return 0;
}
