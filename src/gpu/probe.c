/* gpu/probe.c — the CUDA driver and CUPTI, found by one list.  See probe.h. */
#include "gpu/probe.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *libcuda_name(void)
{
	const char *path = getenv("GPUTAP_CUDA_LIB");
	return path && *path ? path : "libcuda.so.1";
}

void *gt_libcuda_open(void)
{
	return dlopen(libcuda_name(), RTLD_NOW | RTLD_LOCAL);
}

void *gt_libcuda_loaded(void)
{
	void *h = dlopen(libcuda_name(), RTLD_LAZY | RTLD_NOLOAD);
	return h ? h : dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
}

int gt_cuda_driver_version(void)
{
	void *lib = gt_libcuda_open();
	if (!lib)
		return 0;
	int (*fn)(int *) = NULL;
	*(void **)&fn = dlsym(lib, "cuDriverGetVersion");
	int v = 0;
	if (!fn || fn(&v) != 0)
		v = 0;
	dlclose(lib);
	return v;
}

struct path_buf {
	char *p;
	size_t len;
};

static int find_cudart(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct path_buf *out = arg;
	const char *n = info->dlpi_name;
	const char *base = n ? strrchr(n, '/') : NULL;
	base = base ? base + 1 : n;
	if (base && strncmp(base, "libcudart.so", 12) == 0) {
		snprintf(out->p, out->len, "%s", n);
		return 1;
	}
	return 0;
}

int gt_cudart_loaded(char *path, size_t len)
{
	char tmp[8];
	struct path_buf b = {path && len ? path : tmp, path && len ? len : sizeof(tmp)};
	b.p[0] = '\0';
	return dl_iterate_phdr(find_cudart, &b) != 0;
}

static void *try_open(const char *p, char *path, size_t len)
{
	void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
	if (h && path && len)
		snprintf(path, len, "%s", p);
	return h;
}

void *gt_cupti_open(char *path, size_t len)
{
	static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
	static const char *const subs[] = {"/extras/CUPTI/lib64/libcupti.so", "/lib64/libcupti.so",
					   "/targets/x86_64-linux/lib/libcupti.so"};
	/* pip wheels: .../nvidia/cuda_runtime/lib next to .../nvidia/cuda_cupti/lib, or one lib dir */
	static const char *const rel[] = {"/libcupti.so.13", "/libcupti.so.12", "/../../cuda_cupti/lib/libcupti.so.13",
					  "/../../cuda_cupti/lib/libcupti.so.12"};
	char p[4300];
	void *h;
	if (path && len)
		path[0] = '\0';
	const char *env = getenv("GPUTAP_CUPTI_LIB");
	if (env && *env && (h = try_open(env, path, len)))
		return h;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((h = try_open(names[i], path, len)))
			return h;
	const char *homes[2] = {getenv("CUDA_HOME"), GT_CUDA_HOME};
	for (int k = 0; k < 2; k++) {
		if (!homes[k] || !*homes[k])
			continue;
		for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
			snprintf(p, sizeof(p), "%s%s", homes[k], subs[i]);
			if ((h = try_open(p, path, len)))
				return h;
		}
	}
	char dir[4096];
	char *slash;
	if (gt_cudart_loaded(dir, sizeof(dir)) && (slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(p, sizeof(p), "%s%s", dir, rel[i]);
			if ((h = try_open(p, path, len)))
				return h;
		}
	}
	return NULL;
}

unsigned gt_cupti_version(char *path, size_t len)
{
	void *lib = gt_cupti_open(path, len);
	if (!lib)
		return 0;
	int (*fn)(uint32_t *) = NULL;
	*(void **)&fn = dlsym(lib, "cuptiGetVersion");
	uint32_t v = 0;
	if (!fn || fn(&v) != 0) {
		v = 0;
		if (len)
			path[0] = '\0';
	}
	dlclose(lib);
	return v;
}

void gt_cuda_version_str(int v, char *buf, size_t len)
{
	if (v <= 0)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}
