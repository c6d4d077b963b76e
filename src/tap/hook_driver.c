/*
 * Driver API hooks.  Three ways in, one set of hooks:
 *  - dlsym(libcuda, "cuX") (the runtime's way of finding cuGetProcAddress),
 *  - the pointers cuGetProcAddress(_v2) hands out (every other entry point),
 *  - the exported cu* names themselves, for programs linked to libcuda.
 * Each hook exists twice: for the legacy-stream entry point and for its
 * per-thread-stream (_ptds/_ptsz) variant, which is a different real
 * function with its own real-pointer slot.
 */
#include <cuda.h>
#include <string.h>

#include "tap/api.h"
#include "tap/capture_tap.h"
#include "tap/hold.h"
#include "tap/tap.h"

#define GT_UNPAREN(...) __VA_ARGS__

static int copy_kind(CUmemorytype s, CUmemorytype d)
{
	int hs = s == CU_MEMORYTYPE_HOST, hd = d == CU_MEMORYTYPE_HOST;
	if (s == CU_MEMORYTYPE_UNIFIED || d == CU_MEMORYTYPE_UNIFIED)
		return GT_HCOPY_DEFAULT;
	return hs ? (hd ? GT_HCOPY_H2H : GT_HCOPY_H2D) : (hd ? GT_HCOPY_D2H : GT_HCOPY_D2D);
}

#define P_NONE
#define P_COPY(n, k)                                                                               \
	bytes = (n);                                                                               \
	kind = (k);
#define P_ALLOC(pp, n)                                                                             \
	bytes = (n);                                                                               \
	if (r == CUDA_SUCCESS) {                                                                   \
		ptr = (uint64_t)*(pp);                                                             \
		gt_tap_mem_alloc(ptr, bytes);                                                      \
	}
/* pinned and managed memory: launch hold does not hold launches whose arguments point there */
#define P_HOST(p, n)                                                                               \
	if (r == CUDA_SUCCESS)                                                                     \
		gt_hold_note_host(p, n);
#define P_UNHOST(p)                                                                                \
	if (r == CUDA_SUCCESS)                                                                     \
		gt_hold_forget_host(p);
#define P_FREE(p)                                                                                  \
	ptr = (uint64_t)(p);                                                                       \
	if (r == CUDA_SUCCESS)                                                                     \
		gt_tap_mem_free(ptr);
/* virtual memory (tap/api.h): physical handles in mem_used, mappings as memory records */
#define P_VMM(op, p, n, h)                                                                         \
	ptr = (uint64_t)(p);                                                                       \
	bytes = (n);                                                                               \
	gt_api_vmm(op, (int)r, ptr, bytes, (uint64_t)(h));

/* X(name, "base", minver, maxver, api, (params), (args), post, ptname) */
#define GT_DRIVER_HOOKS(X)                                                                                    \
	X(cuInit, "cuInit", 2000, 0, cuInit, (unsigned int f), (f),                                           \
	  if (r == CUDA_SUCCESS) gt_tap_after_cuinit();, gt_nopt_cuInit)                                      \
	X(cuMemAlloc_v2, "cuMemAlloc", 3020, 0, cuMemAlloc, (CUdeviceptr * d, size_t n), (d, n),              \
	  P_ALLOC(d, n), gt_nopt_cuMemAlloc_v2)                                                               \
	X(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, 0, cuMemAllocPitch,                                    \
	  (CUdeviceptr * d, size_t * p, size_t w, size_t h, unsigned int e), (d, p, w, h, e),                 \
	  P_ALLOC(d, r == CUDA_SUCCESS ? *p * h : 0), gt_nopt_cuMemAllocPitch_v2)                             \
	X(cuMemAllocAsync, "cuMemAllocAsync", 11020, 0, cuMemAllocAsync,                                      \
	  (CUdeviceptr * d, size_t n, CUstream s), (d, n, s), P_ALLOC(d, n), cuMemAllocAsync_ptsz)            \
	X(cuMemAllocManaged, "cuMemAllocManaged", 6000, 0, cuMemAllocManaged,                                 \
	  (CUdeviceptr * d, size_t n, unsigned int f), (d, n, f), P_ALLOC(d, n) P_HOST(ptr, n),               \
	  gt_nopt_cuMemAllocManaged)                                                                          \
	X(cuMemAllocHost_v2, "cuMemAllocHost", 3020, 0, cuMemAllocHost, (void **pp, size_t n), (pp, n),       \
	  bytes = n; if (r == CUDA_SUCCESS) ptr = (uint64_t)(uintptr_t)*pp; P_HOST(ptr, n),                   \
	  gt_nopt_cuMemAllocHost_v2)                                                                          \
	X(cuMemHostAlloc, "cuMemHostAlloc", 2020, 0, cuMemHostAlloc, (void **pp, size_t n, unsigned int f),   \
	  (pp, n, f), bytes = n; if (r == CUDA_SUCCESS) ptr = (uint64_t)(uintptr_t)*pp; P_HOST(ptr, n),       \
	  gt_nopt_cuMemHostAlloc)                                                                             \
	X(cuMemHostRegister_v2, "cuMemHostRegister", 6050, 0, cuMemHostRegister,                              \
	  (void *p, size_t n, unsigned int f), (p, n, f), bytes = n; ptr = (uint64_t)(uintptr_t)p;            \
	  P_HOST(ptr, n), gt_nopt_cuMemHostRegister_v2)                                                       \
	X(cuMemHostUnregister, "cuMemHostUnregister", 4000, 0, cuMemHostUnregister, (void *p), (p),           \
	  ptr = (uint64_t)(uintptr_t)p; P_UNHOST(ptr), gt_nopt_cuMemHostUnregister)                           \
	X(cuMemFree_v2, "cuMemFree", 3020, 0, cuMemFree, (CUdeviceptr p), (p), P_FREE(p) P_UNHOST(ptr),       \
	  gt_nopt_cuMemFree_v2)                                                                               \
	X(cuMemFreeAsync, "cuMemFreeAsync", 11020, 0, cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s),    \
	  P_FREE(p), cuMemFreeAsync_ptsz)                                                                     \
	X(cuMemFreeHost, "cuMemFreeHost", 2000, 0, cuMemFreeHost, (void *p), (p),                             \
	  ptr = (uint64_t)(uintptr_t)p; P_UNHOST(ptr), gt_nopt_cuMemFreeHost)                                 \
	X(cuGraphLaunch, "cuGraphLaunch", 10000, 0, cuGraphLaunch, (CUgraphExec g, CUstream s), (g, s),       \
	  P_NONE, cuGraphLaunch_ptsz)                                                                         \
	X(cuStreamSynchronize, "cuStreamSynchronize", 2000, 0, cuStreamSynchronize, (CUstream s), (s),        \
	  P_NONE, cuStreamSynchronize_ptsz)                                                                   \
	X(cuCtxSynchronize_v2, "cuCtxSynchronize", 13000, 0, cuCtxSynchronize, (CUcontext c), (c), P_NONE,    \
	  gt_nopt_cuCtxSynchronize_v2)                                                                        \
	X(cuEventSynchronize, "cuEventSynchronize", 2000, 0, cuEventSynchronize, (CUevent e), (e), P_NONE,    \
	  gt_nopt_cuEventSynchronize)                                                                         \
	X(cuModuleLoad, "cuModuleLoad", 2000, 0, cuModuleLoad, (CUmodule * m, const char *f), (m, f), P_NONE, \
	  gt_nopt_cuModuleLoad)                                                                               \
	X(cuModuleLoadData, "cuModuleLoadData", 2000, 0, cuModuleLoadData, (CUmodule * m, const void *i),     \
	  (m, i), P_NONE, gt_nopt_cuModuleLoadData)                                                           \
	X(cuModuleLoadDataEx, "cuModuleLoadDataEx", 2010, 0, cuModuleLoadDataEx,                              \
	  (CUmodule * m, const void *i, unsigned int n, CUjit_option *o, void **v), (m, i, n, o, v), P_NONE,  \
	  gt_nopt_cuModuleLoadDataEx)                                                                         \
	X(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 2000, 0, cuModuleLoadFatBinary,                     \
	  (CUmodule * m, const void *i), (m, i), P_NONE, gt_nopt_cuModuleLoadFatBinary)                       \
	X(cuLibraryLoadData, "cuLibraryLoadData", 12000, 0, cuLibraryLoadData,                                \
	  (CUlibrary * l, const void *c, CUjit_option *jo, void **jv, unsigned int nj, CUlibraryOption *lo,   \
	   void **lv, unsigned int nl),                                                                       \
	  (l, c, jo, jv, nj, lo, lv, nl), P_NONE, gt_nopt_cuLibraryLoadData)                                  \
	X(cuLibraryLoadFromFile, "cuLibraryLoadFromFile", 12000, 0, cuLibraryLoadFromFile,                    \
	  (CUlibrary * l, const char *c, CUjit_option *jo, void **jv, unsigned int nj, CUlibraryOption *lo,   \
	   void **lv, unsigned int nl),                                                                       \
	  (l, c, jo, jv, nj, lo, lv, nl), P_NONE, gt_nopt_cuLibraryLoadFromFile)                              \
	X(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 3020, 0, cuMemcpyH2D, (CUdeviceptr d, const void *s, size_t n),    \
	  (d, s, n), P_COPY(n, GT_HCOPY_H2D), cuMemcpyHtoD_v2_ptds)                                           \
	X(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 3020, 0, cuMemcpyD2H, (void *d, CUdeviceptr s, size_t n),          \
	  (d, s, n), P_COPY(n, GT_HCOPY_D2H), cuMemcpyDtoH_v2_ptds)                                           \
	X(cuMemcpyDtoD_v2, "cuMemcpyDtoD", 3020, 0, cuMemcpyD2D, (CUdeviceptr d, CUdeviceptr s, size_t n),    \
	  (d, s, n), P_COPY(n, GT_HCOPY_D2D), cuMemcpyDtoD_v2_ptds)                                           \
	X(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 3020, 0, cuMemcpyH2D_ASYNC,                              \
	  (CUdeviceptr d, const void *s, size_t n, CUstream st), (d, s, n, st), P_COPY(n, GT_HCOPY_H2D),      \
	  cuMemcpyHtoDAsync_v2_ptsz)                                                                          \
	X(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 3020, 0, cuMemcpyD2H_ASYNC,                              \
	  (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), P_COPY(n, GT_HCOPY_D2H),            \
	  cuMemcpyDtoHAsync_v2_ptsz)                                                                          \
	X(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 3020, 0, cuMemcpyD2D_ASYNC,                              \
	  (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), P_COPY(n, GT_HCOPY_D2D),      \
	  cuMemcpyDtoDAsync_v2_ptsz)                                                                          \
	X(cuMemcpy, "cuMemcpy", 4000, 0, cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n),       \
	  P_COPY(n, GT_HCOPY_DEFAULT), cuMemcpy_ptds)                                                         \
	X(cuMemcpyAsync, "cuMemcpyAsync", 4000, 0, cuMemcpyAsync,                                             \
	  (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), P_COPY(n, GT_HCOPY_DEFAULT),  \
	  cuMemcpyAsync_ptsz)                                                                                 \
	X(cuMemcpyPeer, "cuMemcpyPeer", 4000, 0, cuMemcpyPeer,                                                \
	  (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), (d, dc, s, sc, n),            \
	  P_COPY(n, GT_HCOPY_D2D), cuMemcpyPeer_ptds)                                                         \
	X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", 4000, 0, cuMemcpyPeerAsync,                                 \
	  (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st),                  \
	  (d, dc, s, sc, n, st), P_COPY(n, GT_HCOPY_D2D), cuMemcpyPeerAsync_ptsz)                             \
	X(cuMemcpy2D_v2, "cuMemcpy2D", 3020, 0, cuMemcpy2D, (const CUDA_MEMCPY2D *p), (p),                    \
	  P_COPY(p->WidthInBytes * p->Height, copy_kind(p->srcMemoryType, p->dstMemoryType)),                 \
	  cuMemcpy2D_v2_ptds)                                                                                 \
	X(cuMemcpy2DUnaligned_v2, "cuMemcpy2DUnaligned", 3020, 0, cuMemcpy2DUnaligned,                        \
	  (const CUDA_MEMCPY2D *p), (p),                                                                      \
	  P_COPY(p->WidthInBytes * p->Height, copy_kind(p->srcMemoryType, p->dstMemoryType)),                 \
	  cuMemcpy2DUnaligned_v2_ptds)                                                                        \
	X(cuMemcpy2DAsync_v2, "cuMemcpy2DAsync", 3020, 0, cuMemcpy2DAsync,                                    \
	  (const CUDA_MEMCPY2D *p, CUstream st), (p, st),                                                     \
	  P_COPY(p->WidthInBytes * p->Height, copy_kind(p->srcMemoryType, p->dstMemoryType)),                 \
	  cuMemcpy2DAsync_v2_ptsz)                                                                            \
	X(cuMemcpy3D_v2, "cuMemcpy3D", 3020, 0, cuMemcpy3D, (const CUDA_MEMCPY3D *p), (p),                    \
	  P_COPY(p->WidthInBytes * p->Height * p->Depth, copy_kind(p->srcMemoryType, p->dstMemoryType)),      \
	  cuMemcpy3D_v2_ptds)                                                                                 \
	X(cuMemcpy3DAsync_v2, "cuMemcpy3DAsync", 3020, 0, cuMemcpy3DAsync,                                    \
	  (const CUDA_MEMCPY3D *p, CUstream st), (p, st),                                                     \
	  P_COPY(p->WidthInBytes * p->Height * p->Depth, copy_kind(p->srcMemoryType, p->dstMemoryType)),      \
	  cuMemcpy3DAsync_v2_ptsz)                                                                            \
	X(cuMemcpy3DPeer, "cuMemcpy3DPeer", 4000, 0, cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *p), (p),      \
	  P_COPY(p->WidthInBytes * p->Height * p->Depth, copy_kind(p->srcMemoryType, p->dstMemoryType)),      \
	  cuMemcpy3DPeer_ptds)                                                                                \
	X(cuMemcpy3DPeerAsync, "cuMemcpy3DPeerAsync", 4000, 0, cuMemcpy3DPeerAsync,                           \
	  (const CUDA_MEMCPY3D_PEER *p, CUstream st), (p, st),                                                \
	  P_COPY(p->WidthInBytes * p->Height * p->Depth, copy_kind(p->srcMemoryType, p->dstMemoryType)),      \
	  cuMemcpy3DPeerAsync_ptsz)                                                                           \
	X(cuMemcpyHtoA_v2, "cuMemcpyHtoA", 3020, 0, cuMemcpyHtoA,                                             \
	  (CUarray a, size_t o, const void *s, size_t n), (a, o, s, n), P_COPY(n, GT_HCOPY_H2D),              \
	  cuMemcpyHtoA_v2_ptds)                                                                               \
	X(cuMemcpyAtoH_v2, "cuMemcpyAtoH", 3020, 0, cuMemcpyAtoH, (void *d, CUarray a, size_t o, size_t n),   \
	  (d, a, o, n), P_COPY(n, GT_HCOPY_D2H), cuMemcpyAtoH_v2_ptds)                                        \
	X(cuMemcpyDtoA_v2, "cuMemcpyDtoA", 3020, 0, cuMemcpyDtoA,                                             \
	  (CUarray a, size_t o, CUdeviceptr s, size_t n), (a, o, s, n), P_COPY(n, GT_HCOPY_D2D),              \
	  cuMemcpyDtoA_v2_ptds)                                                                               \
	X(cuMemcpyAtoD_v2, "cuMemcpyAtoD", 3020, 0, cuMemcpyAtoD,                                             \
	  (CUdeviceptr d, CUarray a, size_t o, size_t n), (d, a, o, n), P_COPY(n, GT_HCOPY_D2D),              \
	  cuMemcpyAtoD_v2_ptds)                                                                               \
	X(cuMemcpyAtoA_v2, "cuMemcpyAtoA", 3020, 0, cuMemcpyAtoA,                                             \
	  (CUarray d, size_t dof, CUarray s, size_t so, size_t n), (d, dof, s, so, n),                        \
	  P_COPY(n, GT_HCOPY_D2D), cuMemcpyAtoA_v2_ptds)                                                      \
	X(cuMemcpyHtoAAsync_v2, "cuMemcpyHtoAAsync", 3020, 0, cuMemcpyHtoAAsync,                              \
	  (CUarray a, size_t o, const void *s, size_t n, CUstream st), (a, o, s, n, st),                      \
	  P_COPY(n, GT_HCOPY_H2D), cuMemcpyHtoAAsync_v2_ptsz)                                                 \
	X(cuMemcpyAtoHAsync_v2, "cuMemcpyAtoHAsync", 3020, 0, cuMemcpyAtoHAsync,                              \
	  (void *d, CUarray a, size_t o, size_t n, CUstream st), (d, a, o, n, st), P_COPY(n, GT_HCOPY_D2H),   \
	  cuMemcpyAtoHAsync_v2_ptsz)                                                                          \
	X(cuMemsetD8_v2, "cuMemsetD8", 3020, 0, cuMemsetD8, (CUdeviceptr d, unsigned char v, size_t n),       \
	  (d, v, n), bytes = n;, cuMemsetD8_v2_ptds)                                                          \
	X(cuMemsetD16_v2, "cuMemsetD16", 3020, 0, cuMemsetD16, (CUdeviceptr d, unsigned short v, size_t n),   \
	  (d, v, n), bytes = 2 * n;, cuMemsetD16_v2_ptds)                                                     \
	X(cuMemsetD32_v2, "cuMemsetD32", 3020, 0, cuMemsetD32, (CUdeviceptr d, unsigned int v, size_t n),     \
	  (d, v, n), bytes = 4 * n;, cuMemsetD32_v2_ptds)                                                     \
	X(cuMemsetD2D8_v2, "cuMemsetD2D8", 3020, 0, cuMemsetD2D8,                                             \
	  (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h), (d, p, v, w, h), bytes = w * h;,    \
	  cuMemsetD2D8_v2_ptds)                                                                               \
	X(cuMemsetD2D16_v2, "cuMemsetD2D16", 3020, 0, cuMemsetD2D16,                                          \
	  (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h), (d, p, v, w, h),                   \
	  bytes = 2 * w * h;, cuMemsetD2D16_v2_ptds)                                                          \
	X(cuMemsetD2D32_v2, "cuMemsetD2D32", 3020, 0, cuMemsetD2D32,                                          \
	  (CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h), (d, p, v, w, h),                     \
	  bytes = 4 * w * h;, cuMemsetD2D32_v2_ptds)                                                          \
	X(cuMemsetD8Async, "cuMemsetD8Async", 3020, 0, cuMemsetD8Async,                                       \
	  (CUdeviceptr d, unsigned char v, size_t n, CUstream s), (d, v, n, s), bytes = n;,                   \
	  cuMemsetD8Async_ptsz)                                                                               \
	X(cuMemsetD16Async, "cuMemsetD16Async", 3020, 0, cuMemsetD16Async,                                    \
	  (CUdeviceptr d, unsigned short v, size_t n, CUstream s), (d, v, n, s), bytes = 2 * n;,              \
	  cuMemsetD16Async_ptsz)                                                                              \
	X(cuMemsetD32Async, "cuMemsetD32Async", 3020, 0, cuMemsetD32Async,                                    \
	  (CUdeviceptr d, unsigned int v, size_t n, CUstream s), (d, v, n, s), bytes = 4 * n;,                \
	  cuMemsetD32Async_ptsz)                                                                              \
	X(cuMemsetD2D8Async, "cuMemsetD2D8Async", 3020, 0, cuMemsetD2D8Async,                                 \
	  (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h, CUstream s), (d, p, v, w, h, s),     \
	  bytes = w * h;, cuMemsetD2D8Async_ptsz)                                                             \
	X(cuMemsetD2D16Async, "cuMemsetD2D16Async", 3020, 0, cuMemsetD2D16Async,                              \
	  (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h, CUstream s), (d, p, v, w, h, s),    \
	  bytes = 2 * w * h;, cuMemsetD2D16Async_ptsz)                                                        \
	X(cuMemsetD2D32Async, "cuMemsetD2D32Async", 3020, 0, cuMemsetD2D32Async,                              \
	  (CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h, CUstream s), (d, p, v, w, h, s),      \
	  bytes = 4 * w * h;, cuMemsetD2D32Async_ptsz) \
	X(cuMemCreate, "cuMemCreate", 10020, 0, cuMemCreate,                                                  \
	  (CUmemGenericAllocationHandle * h, size_t n, const CUmemAllocationProp *p, unsigned long long f),   \
	  (h, n, p, f), P_VMM(GT_VMM_CREATE, 0, n, r == CUDA_SUCCESS ? *h : 0), gt_nopt_cuMemCreate)          \
	X(cuMemRelease, "cuMemRelease", 10020, 0, cuMemRelease, (CUmemGenericAllocationHandle h), (h),        \
	  P_VMM(GT_VMM_RELEASE, 0, 0, h), gt_nopt_cuMemRelease)                                               \
	X(cuMemMap, "cuMemMap", 10020, 0, cuMemMap,                                                           \
	  (CUdeviceptr p, size_t n, size_t o, CUmemGenericAllocationHandle h, unsigned long long f),          \
	  (p, n, o, h, f), P_VMM(GT_VMM_MAP, p, n, h), gt_nopt_cuMemMap)                                      \
	X(cuMemUnmap, "cuMemUnmap", 10020, 0, cuMemUnmap, (CUdeviceptr p, size_t n), (p, n),                 \
	  P_VMM(GT_VMM_UNMAP, p, n, 0), gt_nopt_cuMemUnmap)                                                   \
	X(cuMemAddressReserve, "cuMemAddressReserve", 10020, 0, cuMemAddressReserve,                          \
	  (CUdeviceptr * p, size_t n, size_t al, CUdeviceptr a, unsigned long long f), (p, n, al, a, f),      \
	  bytes = n; if (r == CUDA_SUCCESS) ptr = (uint64_t)*p;, gt_nopt_cuMemAddressReserve)                  \
	X(cuMemAddressFree, "cuMemAddressFree", 10020, 0, cuMemAddressFree, (CUdeviceptr p, size_t n), (p, n), \
	  bytes = n; ptr = (uint64_t)p;, gt_nopt_cuMemAddressFree)

/* The launches: their body goes through launch hold (hold.h). */
#define GT_LAUNCH_HOOKS(X)                                                                                    \
	X(cuLaunchKernel, "cuLaunchKernel", 4000, 0, cuLaunchKernel,                                          \
	  (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, \
	   unsigned int bz, unsigned int sm, CUstream s, void **kp, void **ex),                               \
	  (f, gx, gy, gz, bx, by, bz, sm, s, kp, ex), P_NONE, cuLaunchKernel_ptsz)                            \
	X(cuLaunchKernelEx, "cuLaunchKernelEx", 11060, 0, cuLaunchKernelEx,                                   \
	  (const CUlaunchConfig *c, CUfunction f, void **kp, void **ex), (c, f, kp, ex), P_NONE,              \
	  cuLaunchKernelEx_ptsz)                                                                              \
	X(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 9000, 0, cuLaunchCooperativeKernel,         \
	  (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, \
	   unsigned int bz, unsigned int sm, CUstream s, void **kp),                                          \
	  (f, gx, gy, gz, bx, by, bz, sm, s, kp), P_NONE, cuLaunchCooperativeKernel_ptsz)

#define GT_HOOK_ENUM(name, base, minv, maxv, api, params, args, post, ptname) GT_HOOK_##name,
enum { GT_DRIVER_HOOKS(GT_HOOK_ENUM) GT_LAUNCH_HOOKS(GT_HOOK_ENUM) GT_HOOK_N };

static void *_Atomic real_fn[GT_HOOK_N][2];

struct gt_hook_desc {
	const char *base, *sym, *ptsym;
	int minv, maxv;
	void *hook[2]; /* the exported names */
	void *gpa[2];  /* what cuGetProcAddress and dlsym hand out (launches: a variant that knows it) */
};

/* Launch hold: the class of each hook's call (hold.h), and its interned name. */
static unsigned char hold_cls[GT_HOOK_N];
static uint32_t hold_name[GT_HOOK_N];
#define GT_HOLD_GATE(id)                                                                           \
	if (hold_cls[id] && atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed))             \
	gt_hold_gate_hook(hold_cls[id], hold_name[id])

static void *real_slot_find(int id, int var);
/* The real entry point of hook `id` (var 1: its per-thread one): one load once known. */
/* A hooked call's result, after launch hold saw it (when armed). */
static inline CUresult gt_hold_result(CUresult r)
{
	return atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed) ? gt_hold_after(&gt_hold_q, r) : r;
}

static inline __attribute__((always_inline)) void *real_slot(int id, int var)
{
	void *p = atomic_load_explicit(&real_fn[id][var], memory_order_acquire);
	return p ? p : real_slot_find(id, var);
}

#define GT_HOOK_DEFINE(name, base, minv, maxv, api, params, args, post, ptname)                    \
	typedef CUresult(CUDAAPI *gt_pfn_##name) params;                                           \
	static inline CUresult gt_body_##name(int var_, GT_UNPAREN params)                         \
	{                                                                                          \
		gt_pfn_##name real = (gt_pfn_##name)real_slot(GT_HOOK_##name, var_);               \
		if (!real)                                                                         \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		GT_HOLD_GATE(GT_HOOK_##name);                                                      \
		GT_HOOK_ENTER(t);                                                                  \
		if (!t_active)                                                                     \
			return gt_hold_result(real args);                                          \
		int st_ = gt_hot_stamped();                                                        \
		uint64_t t0 = gt_hot_clock(st_);                                                   \
		t->corr = 0;                                                                       \
		CUresult r = gt_hold_result(real args);                                            \
		uint64_t t1 = gt_hot_clock(st_);                                                   \
		int saved_errno = errno;                                                           \
		uint64_t bytes = 0, ptr = 0;                                                       \
		int kind = -1;                                                                     \
		post;                                                                              \
		gt_hot_api_end(st_, GT_API_##api, t0, t1, (int)r, bytes, kind, ptr, t->corr);     \
		t->guard--;                                                                        \
		errno = saved_errno;                                                               \
		return r;                                                                          \
	}                                                                                          \
	GT_EXPORT CUresult CUDAAPI name params;                                                    \
	GT_EXPORT CUresult CUDAAPI ptname params;                                                  \
	GT_EXPORT CUresult CUDAAPI name params                                                     \
	{                                                                                          \
		return gt_body_##name(0, GT_UNPAREN args);                                         \
	}                                                                                          \
	GT_EXPORT CUresult CUDAAPI ptname params                                                   \
	{                                                                                          \
		return gt_body_##name(1, GT_UNPAREN args);                                         \
	}

GT_DRIVER_HOOKS(GT_HOOK_DEFINE)

/* var_: bit 0 the per-thread entry point, bit 1 reached through a pointer
 * cuGetProcAddress or dlsym handed out (GT_HOLD_VIA_POINTER). */
#define GT_HOOK_DEFINE_LAUNCH(name, base, minv, maxv, api, params, args, post, ptname)             \
	typedef CUresult(CUDAAPI *gt_pfn_##name) params;                                           \
	static inline CUresult gt_body_##name(int var_, GT_UNPAREN params)                         \
	{                                                                                          \
		gt_pfn_##name real = (gt_pfn_##name)real_slot(GT_HOOK_##name, var_ & 1);           \
		if (!real)                                                                         \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		int held_ = 0;                                                                     \
		GT_HOOK_ENTER(t);                                                                  \
		if (!t_active)                                                                     \
			return gt_hold_##name((void *)real, var_, 0, 0, &held_, GT_UNPAREN args);  \
		int st_ = gt_hot_stamped();                                                        \
		if (!(st_ & GT_STAMP_NS)) { /* in ticks: launch hold is off (it stamps in ns) */   \
			uint64_t k0 = gt_hot_clock(st_);                                           \
			t->corr = 0;                                                               \
			CUresult r = real args;                                                    \
			uint64_t k1 = gt_hot_clock(st_);                                           \
			/* nothing here sets errno (the rare out-of-line paths keep it) */         \
			gt_hot_api_end(st_, GT_API_##api, k0, k1, (int)r, 0, -1, 0, t->corr);     \
			t->guard--;                                                                \
			return r;                                                                  \
		}                                                                                  \
		uint64_t t0 = gt_now_ns();                                                         \
		t->corr = 0;                                                                       \
		CUresult r = gt_hold_##name((void *)real, var_, 1, t0, &held_, GT_UNPAREN args);   \
		uint64_t t1 = gt_now_ns();                                                         \
		int saved_errno = errno;                                                           \
		if (held_) /* its record is written when it is issued */                           \
			gt_tap_api_count(GT_API_##api, t0, t1);                                    \
		else                                                                               \
			gt_hot_api_done(GT_API_##api, t0, t1, (int)r, 0, -1, 0, t->corr);          \
		t->guard--;                                                                        \
		errno = saved_errno;                                                               \
		return r;                                                                          \
	}                                                                                          \
	GT_EXPORT CUresult CUDAAPI name params;                                                    \
	GT_EXPORT CUresult CUDAAPI ptname params;                                                  \
	GT_EXPORT CUresult CUDAAPI name params                                                     \
	{                                                                                          \
		return gt_body_##name(0, GT_UNPAREN args);                                         \
	}                                                                                          \
	GT_EXPORT CUresult CUDAAPI ptname params                                                   \
	{                                                                                          \
		return gt_body_##name(1, GT_UNPAREN args);                                         \
	}                                                                                          \
	static CUresult CUDAAPI gt_gpa_##name params                                               \
	{                                                                                          \
		return gt_body_##name(GT_HOLD_VIA_POINTER, GT_UNPAREN args);                       \
	}                                                                                          \
	static CUresult CUDAAPI gt_gpa_##ptname params                                             \
	{                                                                                          \
		return gt_body_##name(GT_HOLD_VIA_POINTER | 1, GT_UNPAREN args);                   \
	}

GT_LAUNCH_HOOKS(GT_HOOK_DEFINE_LAUNCH)

#define GT_STR2(x) #x
#define GT_STR(x) GT_STR2(x)
#define GT_HOOK_DESC(name, base, minv, maxv, api, params, args, post, ptname)                      \
	{base, #name, GT_STR(ptname), minv, maxv, {(void *)name, (void *)ptname}, {(void *)name, (void *)ptname}},
#define GT_HOOK_DESC_LAUNCH(name, base, minv, maxv, api, params, args, post, ptname)               \
	{base,                                                                                     \
	 #name,                                                                                    \
	 GT_STR(ptname),                                                                           \
	 minv,                                                                                     \
	 maxv,                                                                                     \
	 {(void *)name, (void *)ptname},                                                           \
	 {(void *)gt_gpa_##name, (void *)gt_gpa_##ptname}},
static const struct gt_hook_desc hooks[GT_HOOK_N] = {GT_DRIVER_HOOKS(GT_HOOK_DESC)
							     GT_LAUNCH_HOOKS(GT_HOOK_DESC_LAUNCH)};

static int is_hook(int id, const void *p)
{
	return p == hooks[id].hook[0] || p == hooks[id].hook[1] || p == hooks[id].gpa[0] || p == hooks[id].gpa[1];
}

void gt_hook_driver_hold_setup(void)
{
	for (int i = 0; i < GT_HOOK_N; i++) {
		enum gt_hold_reason c = gt_hold_classify(hooks[i].base);
		/* launches go through the queue itself */
		if (i >= GT_HOOK_cuLaunchKernel || c == GT_HOLD_PASS)
			continue;
		hold_name[i] = gt_strtab_intern(&gt_tap.strs, hooks[i].base, strlen(hooks[i].base));
		hold_cls[i] = (unsigned char)c;
	}
}

static __attribute__((noinline)) void *real_slot_find(int id, int var)
{
	void *p = atomic_load_explicit(&real_fn[id][var], memory_order_acquire);
	if (p)
		return p;
	/* called by name (program linked to libcuda): find libcuda's own definition */
	const char *sym = var ? hooks[id].ptsym : hooks[id].sym;
	if (strncmp(sym, "gt_nopt_", 8) == 0)
		sym = hooks[id].sym;
	p = gt_real_driver(sym);
	if (is_hook(id, p))
		return NULL;
	if (p)
		gt_tap_touch(); /* the program calls the driver by name: its first CUDA call */
	void *expect = NULL;
	if (p && !atomic_compare_exchange_strong(&real_fn[id][var], &expect, p))
		p = expect;
	return p;
}

/* Remember `real` for (id, var) and hand out the hook, unless the slot holds another function. */
static void *install(int id, int var, void *real)
{
	if (is_hook(id, real))
		return real;
	void *expect = NULL;
	if (atomic_compare_exchange_strong(&real_fn[id][var], &expect, real) || expect == real)
		return hooks[id].gpa[var];
	/* a different function under the same name (another ABI): leave it alone, but launch hold must
	 * still see it */
	return gt_hold_wrap(hooks[id].base, real, 0);
}

/* ---- cuCtxSynchronize (no arguments: not expressible in the table) ---- */
typedef CUresult(CUDAAPI *gt_pfn_ctxsync)(void);
static void *_Atomic real_ctxsync;

/* The driver's own argument-less entry point `name` (cached in *slot), or NULL; never our hook `self`. */
static gt_pfn_ctxsync noarg_real(void *_Atomic *slot, const char *name, void *self)
{
	void *real = atomic_load(slot);
	if (!real) {
		real = gt_real_driver(name);
		if (!real || real == self)
			return NULL;
		gt_tap_touch();
		atomic_store(slot, real);
	}
	return (gt_pfn_ctxsync)real;
}

GT_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
	gt_pfn_ctxsync real = noarg_real(&real_ctxsync, "cuCtxSynchronize", (void *)cuCtxSynchronize);
	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed))
		gt_hold_gate_hook(GT_HOLD_SYNC, 0);
	GT_HOOK_ENTER(t);
	if (!t_active)
		return gt_hold_result(real());
	int st = gt_hot_stamped();
	uint64_t t0 = gt_hot_clock(st);
	CUresult r = gt_hold_result(real());
	uint64_t t1 = gt_hot_clock(st);
	int saved_errno = errno;
	gt_hot_api_end(st, GT_API_cuCtxSynchronize, t0, t1, (int)r, 0, -1, 0, 0);
	t->guard--;
	errno = saved_errno;
	return r;
}

/* ---- cuProfilerStart / cuProfilerStop: capture windows of kind cudaProfilerApi ---- */
static void *_Atomic real_prof[2]; /* [0] stop, [1] start */
GT_EXPORT CUresult CUDAAPI cuProfilerStart(void);
GT_EXPORT CUresult CUDAAPI cuProfilerStop(void);

static CUresult profiler_call(int start)
{
	gt_pfn_ctxsync real = noarg_real(&real_prof[start], start ? "cuProfilerStart" : "cuProfilerStop",
					 start ? (void *)cuProfilerStart : (void *)cuProfilerStop);
	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (atomic_load_explicit(&gt_tap.hold_armed, memory_order_relaxed))
		gt_hold_gate_hook(GT_HOLD_PROFILER, 0);
	GT_HOOK_ENTER(t);
	CUresult r = gt_hold_result(real());
	if (!t_active)
		return r;
	int saved_errno = errno;
	gt_capture_tap_profiler(start);
	t->guard--;
	errno = saved_errno;
	return r;
}

GT_EXPORT CUresult CUDAAPI cuProfilerStart(void) { return profiler_call(1); }
GT_EXPORT CUresult CUDAAPI cuProfilerStop(void) { return profiler_call(0); }

/* One hook per name for the argument-less entry points above. */
static void *noarg_hook(const char *name, void *real)
{
	static const struct {
		const char *name;
		void *hook;
		void *_Atomic *slot;
	} tab[] = {{"cuProfilerStart", (void *)cuProfilerStart, &real_prof[1]},
		   {"cuProfilerStop", (void *)cuProfilerStop, &real_prof[0]}};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(name, tab[i].name) != 0)
			continue;
		if (real == tab[i].hook)
			return real;
		void *expect = NULL;
		if (!atomic_compare_exchange_strong(tab[i].slot, &expect, real) && expect != real)
			return real;
		return tab[i].hook;
	}
	return NULL;
}

/* ---- cuGetProcAddress ---- */
#undef cuGetProcAddress
typedef CUresult(CUDAAPI *gt_pfn_gpa2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult(CUDAAPI *gt_pfn_gpa1)(const char *, void **, int, cuuint64_t);
static void *_Atomic real_gpa[2]; /* [0] v1, [1] _v2 */
GT_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

static void *lookup_hook(const char *symbol, int ver, cuuint64_t flags, void *real)
{
	if (!real || !symbol || symbol[0] != 'c' || symbol[1] != 'u')
		return real;
	if (strcmp(symbol, "cuGetProcAddress") == 0) {
		int v2 = ver >= 12000;
		void *expect = NULL;
		if (!atomic_compare_exchange_strong(&real_gpa[v2], &expect, real) && expect != real)
			return real;
		return v2 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
	}
	if (strcmp(symbol, "cuCtxSynchronize") == 0 && ver < 13000) {
		void *expect = NULL;
		if (!atomic_compare_exchange_strong(&real_ctxsync, &expect, real) && expect != real)
			return real;
		return (void *)cuCtxSynchronize;
	}
	void *na = noarg_hook(symbol, real);
	if (na)
		return na;
	for (int i = 0; i < GT_HOOK_N; i++) {
		if (strcmp(hooks[i].base, symbol) != 0)
			continue;
		if (ver < hooks[i].minv || (hooks[i].maxv && ver >= hooks[i].maxv))
			continue;
		int var = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
			  strncmp(hooks[i].ptsym, "gt_nopt_", 8) != 0;
		return install(i, var, real);
	}
	return gt_hold_wrap(symbol, real, 0);
}

static int tap_wanted(void)
{
	gt_tap_init();
	return gt_tap.cfg.out_dir || gt_tap.cfg.pflog_dir;
}

/* The driver hands out its entry points: the process uses CUDA from now on. */
static int tap_wanted_touch(void)
{
	if (!tap_wanted())
		return 0;
	gt_tap_touch();
	return 1;
}

GT_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
					       CUdriverProcAddressQueryResult *status)
{
	gt_pfn_gpa2 real = (gt_pfn_gpa2)atomic_load(&real_gpa[1]);
	if (!real) {
		real = (gt_pfn_gpa2)gt_real_driver("cuGetProcAddress_v2");
		if (!real || (void *)real == (void *)cuGetProcAddress_v2)
			return CUDA_ERROR_NOT_INITIALIZED;
		atomic_store(&real_gpa[1], (void *)real);
	}
	GT_HOOK_ENTER(t);
	uint64_t t0 = t_active ? gt_now_ns() : 0;
	CUresult r = real(symbol, pfn, cudaVersion, flags, status);
	if (r == CUDA_SUCCESS && pfn && *pfn && tap_wanted_touch())
		*pfn = lookup_hook(symbol, cudaVersion, flags, *pfn);
	if (t_active) {
		int saved_errno = errno;
		gt_hot_api_done(GT_API_cuGetProcAddress, t0, gt_now_ns(), (int)r, 0, -1, 0, 0);
		t->guard--;
		errno = saved_errno;
	}
	return r;
}

GT_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	gt_pfn_gpa1 real = (gt_pfn_gpa1)atomic_load(&real_gpa[0]);
	if (!real) {
		real = (gt_pfn_gpa1)gt_real_driver("cuGetProcAddress");
		if (!real || (void *)real == (void *)cuGetProcAddress)
			return CUDA_ERROR_NOT_INITIALIZED;
		atomic_store(&real_gpa[0], (void *)real);
	}
	GT_HOOK_ENTER(t);
	uint64_t t0 = t_active ? gt_now_ns() : 0;
	CUresult r = real(symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS && pfn && *pfn && tap_wanted_touch())
		*pfn = lookup_hook(symbol, cudaVersion, flags, *pfn);
	if (t_active) {
		int saved_errno = errno;
		gt_hot_api_done(GT_API_cuGetProcAddress, t0, gt_now_ns(), (int)r, 0, -1, 0, 0);
		t->guard--;
		errno = saved_errno;
	}
	return r;
}

void *gt_hook_for_dlsym(const char *name, void *real)
{
	if (!tap_wanted())
		return real;
	if (strcmp(name, "cuGetProcAddress_v2") == 0 || strcmp(name, "cuGetProcAddress") == 0) {
		gt_tap_touch(); /* the runtime finds the driver: this process uses CUDA */
		int v2 = name[16] == '_';
		void *mine = v2 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
		if (real == mine)
			return real;
		void *expect = NULL;
		if (!atomic_compare_exchange_strong(&real_gpa[v2], &expect, real) && expect != real)
			return real;
		return mine;
	}
	if (strcmp(name, "cuCtxSynchronize") == 0) {
		if (real == (void *)cuCtxSynchronize)
			return real;
		void *expect = NULL;
		if (!atomic_compare_exchange_strong(&real_ctxsync, &expect, real) && expect != real)
			return real;
		return (void *)cuCtxSynchronize;
	}
	void *na = noarg_hook(name, real);
	if (na)
		return na;
	for (int i = 0; i < GT_HOOK_N; i++) {
		int var = strcmp(hooks[i].sym, name) == 0 ? 0 : strcmp(hooks[i].ptsym, name) == 0 ? 1 : -1;
		if (var >= 0) {
			gt_tap_touch(); /* a driver entry point looked up by name */
			return install(i, var, real);
		}
	}
	return gt_hold_wrap(name, real, 1);
}
