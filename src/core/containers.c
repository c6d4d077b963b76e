/* core/containers.c — growable array and u64 map.  See containers.h. */
#include "core/containers.h"

#include <stdlib.h>
#include <string.h>

void gt_vec_init(struct gt_vec *a, size_t elsize)
{
	memset(a, 0, sizeof(*a));
	a->elsize = elsize;
}

void *gt_vec_push(struct gt_vec *a)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		void *nv = realloc(a->v, nc * a->elsize);
		if (!nv)
			return NULL;
		a->v = nv;
		a->cap = nc;
	}
	void *e = (char *)a->v + a->n * a->elsize;
	memset(e, 0, a->elsize);
	a->n++;
	return e;
}

void gt_vec_free(struct gt_vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t *gt_map_get(const struct gt_map *m, uint64_t key)
{
	if (!m->cap || key == 0)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == 0)
			return NULL;
	}
}

static int map_grow(struct gt_map *m)
{
	size_t nc = m->cap ? m->cap * 2 : 256;
	uint64_t *k = calloc(nc, sizeof(*k)), *v = calloc(nc, sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = mix64(m->keys[i]) & (nc - 1);
		while (k[j])
			j = (j + 1) & (nc - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = nc;
	return 0;
}

uint64_t *gt_map_put(struct gt_map *m, uint64_t key, int *is_new)
{
	if (key == 0)
		return NULL;
	if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
		return NULL;
	size_t mask = m->cap - 1;
	size_t i = mix64(key) & mask;
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	if (is_new)
		*is_new = m->keys[i] == 0;
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->vals[i] = 0;
		m->n++;
	}
	return &m->vals[i];
}

void gt_map_free(struct gt_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
