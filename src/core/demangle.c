#include "core/demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
	/* Already in the process (every CUDA program, PyTorch) or loadable. */
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		h = dlopen("libc++abi.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		demangler = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
	/* the handle stays open: the function must outlive this call */
}

int gt_demangle_available(void)
{
	pthread_once(&once, find_demangler);
	return demangler != NULL;
}

int gt_is_mangled(const char *s) { return s && s[0] == '_' && s[1] == 'Z' && s[2]; }

char *gt_demangle(const char *s)
{
	if (!gt_is_mangled(s) || !gt_demangle_available())
		return NULL;
	int status = -1;
	char *out = demangler(s, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	/* cppcheck-suppress returnDanglingLifetime ; `out` is heap memory, status only an out-parameter */
	return out;
}

const char *gt_demangle_to(const char *s, char *buf, size_t cap)
{
	char *d = gt_demangle(s);
	if (!d || cap == 0) {
		free(d);
		return s;
	}
	size_t n = strlen(d);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, d, n);
	buf[n] = 0;
	free(d);
	return buf;
}
