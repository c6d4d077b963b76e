/*
 * The real functions behind the names the library interposes: dlsym itself
 * (the application's dlsym calls land in ours), libcuda's entry points and
 * the CUDA runtime's cudaMemcpy*, wherever they were loaded from.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "core/log.h"
#include "gpu/probe.h"
#include "tap/dlsym_find.h"
#include "tap/tap.h"

void *(*gt_real_dlsym)(void *, const char *);

void gt_resolve_init(void)
{
	if (gt_real_dlsym)
		return;
	void *p = gt_find_real_dlsym(dlvsym);
	__atomic_store_n(&gt_real_dlsym, (void *(*)(void *, const char *))p, __ATOMIC_RELEASE);
}

/* Called from the dlsym entry stub when a lookup comes before the constructor ran. */
void gt_resolve_dlsym_early(void);
__attribute__((visibility("hidden"))) void gt_resolve_dlsym_early(void)
{
	gt_resolve_init();
}

/* `sym` as the program would find it, else in the loaded copy of a library (found once, by `find`:
 * the CUDA libraries are usually dlopen'ed privately, so their symbols are not global). */
static void *real_in(const char *sym, void *_Atomic *cache, void *(*find)(void))
{
	if (!gt_real_dlsym)
		gt_resolve_init();
	if (!gt_real_dlsym)
		return NULL;
	void *p = gt_real_dlsym(RTLD_NEXT, sym);
	if (p)
		return p;
	void *h = atomic_load_explicit(cache, memory_order_acquire);
	if (!h) {
		h = find();
		if (!h)
			return NULL;
		atomic_store_explicit(cache, h, memory_order_release);
	}
	return gt_real_dlsym(h, sym);
}

static void *loaded_cudart(void)
{
	char path[4096];
	return gt_cudart_loaded(path, sizeof(path)) ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
}

static void *_Atomic libcuda, *_Atomic libcudart;

void *gt_real_driver(const char *sym)
{
	return real_in(sym, &libcuda, gt_libcuda_loaded);
}

void *gt_real_runtime(const char *sym)
{
	return real_in(sym, &libcudart, loaded_cudart);
}

/*
 * dlsym: lookups relative to the caller (RTLD_NEXT) must reach the real dlsym
 * with the caller's return address, so that stub jumps to it without a frame
 * of ours; every other lookup goes through gt_dlsym_hook.
 */
void *gt_dlsym_hook(void *handle, const char *name);
__attribute__((visibility("hidden"))) void *gt_dlsym_hook(void *handle, const char *name)
{
	if (!gt_real_dlsym)
		gt_resolve_init();
	if (!gt_real_dlsym)
		return NULL; /* no C library dlsym found: nothing can be looked up */
	void *r = gt_real_dlsym(handle, name);
	if (!r || !name || name[0] != 'c' || name[1] != 'u')
		return r;
	return gt_hook_for_dlsym(name, r);
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym,@function\n"
	"dlsym:\n"
	"	cmpq $-1, %rdi\n"
	"	jne gt_dlsym_hook\n"
	"	movq gt_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	call gt_resolve_dlsym_early\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	movq gt_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	jmp *%rax\n"
	"2:	ret\n"
	".size dlsym, .-dlsym\n");
#else
GT_EXPORT void *dlsym(void *handle, const char *name)
{
	/* without the stub, RTLD_NEXT lookups resolve relative to this library */
	return gt_dlsym_hook(handle, name);
}
#endif
