/*
 * tap/apis.h — the host API calls the tap counts: one id per metric name.
 *
 * Owns: the metric names of metrics.log and timeline.log and the name_id of
 * GT_REC_API records.  The alnair interposer's names come first, in its order
 * (trace/alnair_log.h); several driver entry points map to one name (cuMemAlloc
 * and cuMemAlloc_v2, the _ptds/_ptsz variants, cuCtxSynchronize and its
 * CUDA 13 _v2), and copies are named by direction as the interposer does
 * (cuMemcpyH2D, cuMemcpyD2H_ASYNC, ...).
 */
#ifndef GT_TAP_APIS_H
#define GT_TAP_APIS_H

#include "trace/alnair_log.h"

#define GT_TAP_EXTRA_APIS(X)                                                                       \
	X(cuMemcpyD2H_ASYNC)                                                                       \
	X(cuMemcpyD2D)                                                                             \
	X(cuMemcpyD2D_ASYNC)                                                                       \
	X(cuMemcpy)                                                                                \
	X(cuMemcpyAsync)                                                                           \
	X(cuMemcpyPeer)                                                                            \
	X(cuMemcpyPeerAsync)                                                                       \
	X(cuMemcpy2D)                                                                              \
	X(cuMemcpy2DUnaligned)                                                                     \
	X(cuMemcpy2DAsync)                                                                         \
	X(cuMemcpy3D)                                                                              \
	X(cuMemcpy3DAsync)                                                                         \
	X(cuMemcpy3DPeer)                                                                          \
	X(cuMemcpy3DPeerAsync)                                                                     \
	X(cuMemcpyHtoA)                                                                            \
	X(cuMemcpyAtoH)                                                                            \
	X(cuMemcpyDtoA)                                                                            \
	X(cuMemcpyAtoD)                                                                            \
	X(cuMemcpyAtoA)                                                                            \
	X(cuMemcpyHtoAAsync)                                                                       \
	X(cuMemcpyAtoHAsync)                                                                       \
	X(cuMemsetD8)                                                                              \
	X(cuMemsetD16)                                                                             \
	X(cuMemsetD32)                                                                             \
	X(cuMemsetD2D8)                                                                            \
	X(cuMemsetD2D16)                                                                           \
	X(cuMemsetD2D32)                                                                           \
	X(cuMemsetD8Async)                                                                         \
	X(cuMemsetD16Async)                                                                        \
	X(cuMemsetD32Async)                                                                        \
	X(cuMemsetD2D8Async)                                                                       \
	X(cuMemsetD2D16Async)                                                                      \
	X(cuMemsetD2D32Async)                                                                      \
	X(cuMemAllocPitch)                                                                         \
	X(cuMemAllocAsync)                                                                         \
	X(cuMemAllocManaged)                                                                       \
	X(cuMemAllocHost)                                                                          \
	X(cuMemFreeAsync)                                                                          \
	X(cuMemFreeHost)                                                                           \
	X(cuMemHostAlloc)                                                                          \
	X(cuMemHostRegister)                                                                       \
	X(cuMemHostUnregister)                                                                     \
	X(cuLaunchKernelEx)                                                                        \
	X(cuLaunchCooperativeKernel)                                                               \
	X(cuGraphLaunch)                                                                           \
	X(cuStreamSynchronize)                                                                     \
	X(cuCtxSynchronize)                                                                        \
	X(cuEventSynchronize)                                                                      \
	X(cuModuleLoad)                                                                            \
	X(cuModuleLoadData)                                                                        \
	X(cuModuleLoadDataEx)                                                                      \
	X(cuModuleLoadFatBinary)                                                                   \
	X(cuLibraryLoadData)                                                                       \
	X(cuLibraryLoadFromFile)                                                                   \
	X(cuMemCreate)                                                                             \
	X(cuMemRelease)                                                                            \
	X(cuMemMap)                                                                                \
	X(cuMemUnmap)                                                                              \
	X(cuMemAddressReserve)                                                                     \
	X(cuMemAddressFree)

#define GT_TAP_API_ENUM(n) GT_API_##n,
enum gt_api_id { GT_ALNAIR_NAMES(GT_TAP_API_ENUM) GT_TAP_EXTRA_APIS(GT_TAP_API_ENUM) GT_API_N };
#undef GT_TAP_API_ENUM

extern const char *const gt_api_names[GT_API_N];

/* 1 for the CUDA runtime calls (GT_DOM_RUNTIME), 0 for driver calls. */
static inline int gt_api_is_runtime(int api)
{
	return api == GT_API_cudaMemcpy || api == GT_API_cudaMemcpyAsync;
}

#endif
