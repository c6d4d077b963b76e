/*
 * CUDA runtime copies, interposed by name: this catches programs whose
 * runtime is a shared library (PyTorch).  A statically linked runtime is
 * counted by the CUPTI runtime callback instead (cupti.c); in_runtime keeps
 * one call from being counted twice.  The driver copy the runtime makes is
 * not recorded (the guard is up), but its CUPTI callback still leaves its
 * correlation id in gt_tls.corr (cupti.c enables the copies' callbacks): the
 * id of the GPU copy, which the runtime call's record carries.
 */
#include <cuda_runtime_api.h>

#include "tap/tap.h"

typedef cudaError_t (*gt_pfn_rt_memcpy)(void *, const void *, size_t, enum cudaMemcpyKind);
typedef cudaError_t (*gt_pfn_rt_memcpy_async)(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t);

static void *_Atomic real_rt[4];
static const char *const rt_names[4] = {"cudaMemcpy", "cudaMemcpy_ptds", "cudaMemcpyAsync", "cudaMemcpyAsync_ptsz"};

static void *rt_real(int i, void *self)
{
	void *p = atomic_load_explicit(&real_rt[i], memory_order_acquire);
	if (p)
		return p;
	p = gt_real_runtime(rt_names[i]);
	if (p == self)
		p = NULL;
	if (p) {
		gt_tap_touch(); /* the program's first call of this runtime entry point */
		atomic_store(&real_rt[i], p);
	}
	return p;
}

static cudaError_t do_memcpy(int i, void *self, void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
	gt_pfn_rt_memcpy real = (gt_pfn_rt_memcpy)rt_real(i, self);
	if (!real)
		return cudaErrorInitializationError;
	GT_HOOK_ENTER(t);
	if (!t_active)
		return real(dst, src, n, k);
	t->in_runtime++;
	int st = gt_hot_stamped();
	uint64_t t0 = gt_hot_clock(st);
	t->corr = 0;
	cudaError_t r = real(dst, src, n, k);
	uint64_t t1 = gt_hot_clock(st);
	int saved_errno = errno;
	t->in_runtime--;
	gt_hot_api_end(st, GT_API_cudaMemcpy, t0, t1, (int)r, n, (int)k, 0, t->corr);
	t->guard--;
	errno = saved_errno;
	return r;
}

static cudaError_t do_memcpy_async(int i, void *self, void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
				   cudaStream_t s)
{
	gt_pfn_rt_memcpy_async real = (gt_pfn_rt_memcpy_async)rt_real(i, self);
	if (!real)
		return cudaErrorInitializationError;
	GT_HOOK_ENTER(t);
	if (!t_active)
		return real(dst, src, n, k, s);
	t->in_runtime++;
	int st = gt_hot_stamped();
	uint64_t t0 = gt_hot_clock(st);
	t->corr = 0;
	cudaError_t r = real(dst, src, n, k, s);
	uint64_t t1 = gt_hot_clock(st);
	int saved_errno = errno;
	t->in_runtime--;
	gt_hot_api_end(st, GT_API_cudaMemcpyAsync, t0, t1, (int)r, n, (int)k, 0, t->corr);
	t->guard--;
	errno = saved_errno;
	return r;
}

GT_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return do_memcpy(0, (void *)cudaMemcpy, dst, src, count, kind);
}

GT_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
GT_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return do_memcpy(1, (void *)cudaMemcpy_ptds, dst, src, count, kind);
}

GT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				      cudaStream_t stream)
{
	return do_memcpy_async(2, (void *)cudaMemcpyAsync, dst, src, count, kind, stream);
}

GT_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
					   cudaStream_t stream);
GT_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
					   cudaStream_t stream)
{
	return do_memcpy_async(3, (void *)cudaMemcpyAsync_ptsz, dst, src, count, kind, stream);
}
