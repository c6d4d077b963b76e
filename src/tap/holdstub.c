/*
 * The stubs of holdstub.h: GT_HOLD_NSTUBS entries of 16 bytes each that load
 * their index and jump to one common body.
 */
#include "tap/holdstub.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

struct gt_hold_stub_ops gt_hold_stub_ops;

struct stub {
	void *_Atomic real;
	unsigned cls;
	uint32_t name_id;
};
static struct stub stubs[GT_HOLD_NSTUBS];
static _Atomic unsigned nstubs;
static pthread_mutex_t stub_mu = PTHREAD_MUTEX_INITIALIZER;

struct gt_stub_ret {
	void *fn;
	uintptr_t slow;
};

/* Called by the common body with the stub's index (rax:rdx = fn, slow). */
struct gt_stub_ret gt_hold_stub_enter(unsigned idx);
__attribute__((visibility("hidden"))) struct gt_stub_ret gt_hold_stub_enter(unsigned idx)
{
	int saved = errno;
	struct stub *s = &stubs[idx];
	struct gt_stub_ret r = {atomic_load_explicit(&s->real, memory_order_acquire), 0};
	int (*gate)(unsigned, uint32_t) = gt_hold_stub_ops.gate;
	if (gate)
		r.slow = (uintptr_t)gate(s->cls, s->name_id);
	errno = saved;
	return r;
}

int gt_hold_stub_after(int result);
__attribute__((visibility("hidden"))) int gt_hold_stub_after(int result)
{
	int saved = errno;
	int (*after)(int) = gt_hold_stub_ops.after;
	int r = after ? after(result) : result;
	errno = saved;
	return r;
}

#if defined(__x86_64__)
/* clang-format off */
__asm__(".text\n"
	".p2align 4\n"
	".globl gt_hold_stubs_base\n"
	".hidden gt_hold_stubs_base\n"
	"gt_hold_stubs_base:\n"
	".set gt_hold_si, 0\n"
	".rept 2048\n"
	"	.p2align 4\n"
	"	endbr64\n"
	"	movl $gt_hold_si, %r11d\n"
	"	jmp gt_hold_stub_common\n"
	"	.set gt_hold_si, gt_hold_si + 1\n"
	".endr\n"
	".p2align 4\n"
	"gt_hold_stubs_end:\n"
	"gt_hold_stub_common:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	subq $192, %rsp\n"
	"	movq %rdi, 0(%rsp)\n"
	"	movq %rsi, 8(%rsp)\n"
	"	movq %rdx, 16(%rsp)\n"
	"	movq %rcx, 24(%rsp)\n"
	"	movq %r8, 32(%rsp)\n"
	"	movq %r9, 40(%rsp)\n"
	"	movq %rax, 48(%rsp)\n"
	"	movaps %xmm0, 64(%rsp)\n"
	"	movaps %xmm1, 80(%rsp)\n"
	"	movaps %xmm2, 96(%rsp)\n"
	"	movaps %xmm3, 112(%rsp)\n"
	"	movaps %xmm4, 128(%rsp)\n"
	"	movaps %xmm5, 144(%rsp)\n"
	"	movaps %xmm6, 160(%rsp)\n"
	"	movaps %xmm7, 176(%rsp)\n"
	"	movl %r11d, %edi\n"
	"	call gt_hold_stub_enter\n"
	"	movq %rax, %r11\n"
	"	testq %rdx, %rdx\n"
	"	jnz 1f\n"
	"	movq 0(%rsp), %rdi\n"
	"	movq 8(%rsp), %rsi\n"
	"	movq 16(%rsp), %rdx\n"
	"	movq 24(%rsp), %rcx\n"
	"	movq 32(%rsp), %r8\n"
	"	movq 40(%rsp), %r9\n"
	"	movq 48(%rsp), %rax\n"
	"	movaps 64(%rsp), %xmm0\n"
	"	movaps 80(%rsp), %xmm1\n"
	"	movaps 96(%rsp), %xmm2\n"
	"	movaps 112(%rsp), %xmm3\n"
	"	movaps 128(%rsp), %xmm4\n"
	"	movaps 144(%rsp), %xmm5\n"
	"	movaps 160(%rsp), %xmm6\n"
	"	movaps 176(%rsp), %xmm7\n"
	"	leave\n"
	"	jmp *%r11\n"
	/* an error is pending: call the real function here, then hand its result to `after` */
	"1:	subq $64, %rsp\n"
	"	movq 16(%rbp), %r10\n"
	"	movq %r10, 0(%rsp)\n"
	"	movq 24(%rbp), %r10\n"
	"	movq %r10, 8(%rsp)\n"
	"	movq 32(%rbp), %r10\n"
	"	movq %r10, 16(%rsp)\n"
	"	movq 40(%rbp), %r10\n"
	"	movq %r10, 24(%rsp)\n"
	"	movq 48(%rbp), %r10\n"
	"	movq %r10, 32(%rsp)\n"
	"	movq 56(%rbp), %r10\n"
	"	movq %r10, 40(%rsp)\n"
	"	movq 64(%rbp), %r10\n"
	"	movq %r10, 48(%rsp)\n"
	"	movq 72(%rbp), %r10\n"
	"	movq %r10, 56(%rsp)\n"
	"	movq 64(%rsp), %rdi\n"
	"	movq 72(%rsp), %rsi\n"
	"	movq 80(%rsp), %rdx\n"
	"	movq 88(%rsp), %rcx\n"
	"	movq 96(%rsp), %r8\n"
	"	movq 104(%rsp), %r9\n"
	"	movq 112(%rsp), %rax\n"
	"	movaps 128(%rsp), %xmm0\n"
	"	movaps 144(%rsp), %xmm1\n"
	"	movaps 160(%rsp), %xmm2\n"
	"	movaps 176(%rsp), %xmm3\n"
	"	movaps 192(%rsp), %xmm4\n"
	"	movaps 208(%rsp), %xmm5\n"
	"	movaps 224(%rsp), %xmm6\n"
	"	movaps 240(%rsp), %xmm7\n"
	"	call *%r11\n"
	"	movl %eax, %edi\n"
	"	call gt_hold_stub_after\n"
	"	leave\n"
	"	ret\n");
/* clang-format on */
extern const char gt_hold_stubs_base[] __attribute__((visibility("hidden")));

int gt_hold_stubs_supported(void)
{
	return 1;
}

static void *stub_addr(unsigned i)
{
	return (void *)(uintptr_t)((uintptr_t)gt_hold_stubs_base + 16u * i);
}

int gt_hold_is_stub(const void *p)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)gt_hold_stubs_base;
	return a >= b && a < b + 16u * GT_HOLD_NSTUBS;
}

void *gt_hold_stub_for(void *real, unsigned cls, uint32_t name_id)
{
	if (!real)
		return NULL;
	if (gt_hold_is_stub(real))
		return real;
	pthread_mutex_lock(&stub_mu);
	unsigned n = atomic_load(&nstubs);
	void *r = NULL;
	for (unsigned i = 0; i < n; i++)
		if (atomic_load(&stubs[i].real) == real) {
			r = stub_addr(i);
			break;
		}
	if (!r && n < GT_HOLD_NSTUBS) {
		stubs[n].cls = cls;
		stubs[n].name_id = name_id;
		atomic_store_explicit(&stubs[n].real, real, memory_order_release);
		atomic_store(&nstubs, n + 1);
		r = stub_addr(n);
	}
	pthread_mutex_unlock(&stub_mu);
	return r;
}
#else
int gt_hold_stubs_supported(void)
{
	return 0;
}

int gt_hold_is_stub(const void *p)
{
	(void)p;
	return 0;
}

void *gt_hold_stub_for(void *real, unsigned cls, uint32_t name_id)
{
	(void)real;
	(void)cls;
	(void)name_id;
	(void)stubs;
	(void)stub_mu;
	return NULL;
}
#endif

unsigned gt_hold_stubs_used(void)
{
	return atomic_load(&nstubs);
}
