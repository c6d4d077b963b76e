/*
 * The driver calls that release held launches first, and the ones that never
 * do.  A name that is not here releases (class OTHER): only calls known to
 * neither observe nor reorder GPU work may pass a held launch.
 *
 * Names are the ones cuGetProcAddress takes ("cuMemcpyHtoD"); the ABI
 * suffixes dlsym sees (_v2, _v3, _ptds, _ptsz) are dropped before the look-up.
 * A pattern ending in '*' matches every name it begins (an exact name wins
 * over a pattern, a longer pattern over a shorter one).
 */
#include <string.h>

#include "tap/hold.h"

#define R(name, cls) {name, GT_HOLD_##cls},
const struct gt_hold_rule gt_hold_rules[] = {
	/* ---- release first: copies and sets (stream order, implicit syncs) ---- */
	R("cuMemcpy*", COPY)
	R("cuMemsetD*", MEMSET)
	/* events and waits: an event captures the work issued before its record */
	R("cuEventRecord", EVENT)
	R("cuEventRecordWithFlags", EVENT)
	R("cuCtxRecordEvent", EVENT)
	R("cuGreenCtxRecordEvent", EVENT)
	R("cuStreamWaitEvent", WAIT)
	R("cuCtxWaitEvent", WAIT)
	R("cuGreenCtxWaitEvent", WAIT)
	/* completion observed */
	R("cuStreamSynchronize", SYNC)
	R("cuStreamQuery", SYNC)
	R("cuCtxSynchronize", SYNC)
	R("cuFlushGPUDirectRDMAWrites", SYNC)
	/* stream memory operations */
	R("cuStreamWaitValue32", MEMOP)
	R("cuStreamWaitValue64", MEMOP)
	R("cuStreamWriteValue32", MEMOP)
	R("cuStreamWriteValue64", MEMOP)
	R("cuStreamBatchMemOp", MEMOP)
	/* host code ordered after the stream's work */
	R("cuLaunchHostFunc", HOSTFN)
	R("cuStreamAddCallback", HOSTFN)
	/* graphs */
	R("cuGraphLaunch", GRAPH)
	R("cuGraphUpload", GRAPH)
	R("cuGraphInstantiateWithParams", GRAPH)
	/* stream-ordered memory */
	R("cuMemAllocAsync", ASYNC_ALLOC)
	R("cuMemAllocFromPoolAsync", ASYNC_ALLOC)
	R("cuMemFreeAsync", ASYNC_ALLOC)
	R("cuMemPoolTrimTo", ASYNC_ALLOC)
	/* unified memory placement */
	R("cuMemPrefetchAsync", UNIFIED)
	R("cuMemPrefetchBatchAsync", UNIFIED)
	R("cuMemDiscardBatchAsync", UNIFIED)
	R("cuMemDiscardAndPrefetchBatchAsync", UNIFIED)
	R("cuStreamAttachMemAsync", UNIFIED)
	R("cuMemAdvise", UNIFIED)
	/* resources a held kernel may use */
	R("cuMemFree", FREE)
	R("cuMemFreeHost", FREE)
	R("cuMemHostUnregister", FREE)
	R("cuMemUnmap", FREE)
	R("cuMemRelease", FREE)
	R("cuMemAddressFree", FREE)
	R("cuMemSetAccess", FREE)
	R("cuArrayDestroy", FREE)
	R("cuMipmappedArrayDestroy", FREE)
	R("cuTexObjectDestroy", FREE)
	R("cuSurfObjectDestroy", FREE)
	R("cuIpcCloseMemHandle", FREE)
	R("cuMemPoolDestroy", FREE)
	R("cuStreamDestroy", DESTROY)
	R("cuEventDestroy", DESTROY)
	/* handles held in the queue become invalid (and the layout cache stale) */
	R("cuModuleUnload", UNLOAD)
	R("cuLibraryUnload", UNLOAD)
	R("cuCtxDestroy", CONTEXT)
	R("cuDevicePrimaryCtxRelease", CONTEXT)
	R("cuDevicePrimaryCtxReset", CONTEXT)
	R("cuGreenCtxDestroy", CONTEXT)
	R("cuCtxDetach", CONTEXT)
	/* nothing held may cross a capture boundary */
	R("cuStreamBeginCapture", CAPTURE)
	R("cuStreamBeginCaptureToGraph", CAPTURE)
	R("cuStreamEndCapture", CAPTURE)
	/* state a launch reads when it is issued */
	R("cuStreamSetAttribute", STATE)
	R("cuStreamCopyAttributes", STATE)
	R("cuFuncSetAttribute", STATE)
	R("cuFuncSetCacheConfig", STATE)
	R("cuFuncSetSharedMemConfig", STATE)
	R("cuKernelSetAttribute", STATE)
	R("cuKernelSetCacheConfig", STATE)
	R("cuCtxSetLimit", STATE)
	R("cuCtxSetCacheConfig", STATE)
	R("cuCtxSetSharedMemConfig", STATE)
	R("cuCtxSetFlags", STATE)
	R("cuCtxResetPersistingL2Cache", STATE)
	R("cuCtxDisablePeerAccess", STATE)
	R("cuPointerSetAttribute", STATE)
	/* interop, stream-ordered */
	R("cuGraphicsMapResources", INTEROP)
	R("cuGraphicsUnmapResources", INTEROP)
	R("cuSignalExternalSemaphoresAsync", INTEROP)
	R("cuWaitExternalSemaphoresAsync", INTEROP)
	R("cuMemMapArrayAsync", INTEROP)
	R("cuMemBatchDecompressAsync", INTEROP)
	/* kernels land inside the window they were launched in */
	R("cuProfilerStart", PROFILER)
	R("cuProfilerStop", PROFILER)
	R("cuCheckpoint*", PROFILER)
	/* launches that are never held (persistent state, several devices) */
	R("cuLaunch", OLD_LAUNCH)
	R("cuLaunchGrid", OLD_LAUNCH)
	R("cuLaunchGridAsync", OLD_LAUNCH)
	R("cuLaunchCooperativeKernelMultiDevice", OLD_LAUNCH)

	/* ---- never release: queries, creators, loaders, context switches ---- */
	R("cuInit", PASS)
	R("cuDriverGetVersion", PASS)
	R("cuGetErrorString", PASS)
	R("cuGetErrorName", PASS)
	R("cuGetExportTable", PASS)
	R("cuGetProcAddress", PASS)
	R("cuDeviceGet*", PASS)
	R("cuDeviceGet", PASS)
	R("cuDeviceTotalMem", PASS)
	R("cuDeviceComputeCapability", PASS)
	R("cuDeviceCanAccessPeer", PASS)
	R("cuDevicePrimaryCtxRetain", PASS)
	R("cuDevicePrimaryCtxGetState", PASS)
	R("cuDevicePrimaryCtxSetFlags", PASS)
	R("cuDeviceRegisterAsyncNotification", PASS)
	R("cuDevResourceGenerateDesc", PASS)
	R("cuDevSmResourceSplitByCount", PASS)
	/* the context recorded with each held launch is made current for its
	 * release, so switching contexts needs no release */
	R("cuCtxGet*", PASS)
	R("cuCtxCreate", PASS)
	R("cuCtxSetCurrent", PASS)
	R("cuCtxPushCurrent", PASS)
	R("cuCtxPopCurrent", PASS)
	R("cuCtxEnablePeerAccess", PASS)
	R("cuCtxFromGreenCtx", PASS)
	R("cuGreenCtxCreate", PASS)
	R("cuGreenCtxGetDevResource", PASS)
	R("cuGreenCtxGetId", PASS)
	R("cuGreenCtxStreamCreate", PASS)
	R("cuModuleLoad*", PASS)
	R("cuModuleGet*", PASS)
	R("cuModuleEnumerateFunctions", PASS)
	R("cuLibraryLoad*", PASS)
	R("cuLibraryGet*", PASS)
	R("cuLibraryEnumerateKernels", PASS)
	R("cuKernelGet*", PASS)
	R("cuFuncGet*", PASS)
	R("cuFuncIsLoaded", PASS)
	R("cuFuncLoad", PASS)
	R("cuLink*", PASS)
	R("cuOccupancy*", PASS)
	R("cuMemAlloc", PASS)
	R("cuMemAllocPitch", PASS)
	R("cuMemAllocHost", PASS)
	R("cuMemAllocManaged", PASS)
	R("cuMemHostAlloc", PASS)
	R("cuMemHostRegister", PASS)
	R("cuMemHostGetDevicePointer", PASS)
	R("cuMemHostGetFlags", PASS)
	R("cuMemGetInfo", PASS)
	R("cuMemGetAddressRange", PASS)
	R("cuMemGetAllocationGranularity", PASS)
	R("cuMemGetAllocationPropertiesFromHandle", PASS)
	R("cuMemGetAccess", PASS)
	R("cuMemGetHandleForAddressRange", PASS)
	R("cuMemGetDefaultMemPool", PASS)
	R("cuMemGetMemPool", PASS)
	R("cuMemCreate", PASS)
	R("cuMemAddressReserve", PASS)
	R("cuMemMap", PASS)
	R("cuMemRetainAllocationHandle", PASS)
	R("cuMemExportToShareableHandle", PASS)
	R("cuMemImportFromShareableHandle", PASS)
	R("cuMemRangeGetAttribute", PASS)
	R("cuMemRangeGetAttributes", PASS)
	R("cuMemPoolCreate", PASS)
	R("cuMemPoolGetAttribute", PASS)
	R("cuMemPoolGetAccess", PASS)
	R("cuMemPoolExport*", PASS)
	R("cuMemPoolImport*", PASS)
	R("cuPointerGetAttribute", PASS)
	R("cuPointerGetAttributes", PASS)
	R("cuIpcGetMemHandle", PASS)
	R("cuIpcOpenMemHandle", PASS)
	R("cuIpcGetEventHandle", PASS)
	R("cuIpcOpenEventHandle", PASS)
	R("cuArrayCreate", PASS)
	R("cuArray3DCreate", PASS)
	R("cuArrayGet*", PASS)
	R("cuArray3DGetDescriptor", PASS)
	R("cuMipmappedArrayCreate", PASS)
	R("cuMipmappedArrayGet*", PASS)
	R("cuTexObjectCreate", PASS)
	R("cuTexObjectGet*", PASS)
	R("cuSurfObjectCreate", PASS)
	R("cuSurfObjectGetResourceDesc", PASS)
	R("cuTensorMapEncode*", PASS)
	R("cuTensorMapReplaceAddress", PASS)
	/* streams and events: creation and queries (a record already released,
	 * and launches that record an event at launch are not held) */
	R("cuStreamCreate", PASS)
	R("cuStreamCreateWithPriority", PASS)
	R("cuStreamGet*", PASS)
	R("cuStreamIsCapturing", PASS)
	R("cuStreamUpdateCaptureDependencies", PASS)
	R("cuThreadExchangeStreamCaptureMode", PASS)
	R("cuEventCreate", PASS)
	R("cuEventQuery", PASS)
	R("cuEventSynchronize", PASS)
	R("cuEventElapsedTime", PASS)
	/* graphs being built, not run */
	R("cuGraphCreate", PASS)
	R("cuGraphAdd*", PASS)
	R("cuGraphClone", PASS)
	R("cuGraphGet*", PASS)
	R("cuGraphNodeGet*", PASS)
	R("cuGraphKernelNodeGet*", PASS)
	R("cuGraphInstantiate", PASS)
	R("cuGraphInstantiateWithFlags", PASS)
	R("cuGraphExecGetFlags", PASS)
	R("cuGraphDestroy", PASS)
	R("cuGraphDestroyNode", PASS)
	R("cuGraphDebugDotPrint", PASS)
	R("cuGraphConditionalHandleCreate", PASS)
	R("cuUserObjectCreate", PASS)
	R("cuUserObjectRetain", PASS)
	R("cuGraphRetainUserObject", PASS)
	R("cuLogsRegisterCallback", PASS)
	R("cuLogsCurrent", PASS)
	R("cuCoredumpGet*", PASS)
};
#undef R
const size_t gt_hold_nrules = sizeof(gt_hold_rules) / sizeof(gt_hold_rules[0]);

/* "cuMemcpyHtoD_v2_ptds" -> "cuMemcpyHtoD" */
static size_t base_len(const char *name)
{
	size_t n = strlen(name);
	if (n > 5 && (strcmp(name + n - 5, "_ptds") == 0 || strcmp(name + n - 5, "_ptsz") == 0))
		n -= 5;
	size_t i = n;
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i < n && i >= 2 && name[i - 1] == 'v' && name[i - 2] == '_')
		n = i - 2;
	return n;
}

enum gt_hold_reason gt_hold_classify(const char *name)
{
	if (!name)
		return GT_HOLD_OTHER;
	size_t n = base_len(name);
	int best = -1;
	size_t best_len = 0;
	for (size_t i = 0; i < gt_hold_nrules; i++) {
		const char *p = gt_hold_rules[i].pattern;
		size_t pl = strlen(p);
		if (pl && p[pl - 1] == '*') {
			pl--;
			if (pl <= n && strncmp(p, name, pl) == 0 && pl >= best_len) {
				best = (int)i;
				best_len = pl;
			}
		} else if (pl == n && strncmp(p, name, n) == 0) {
			return (enum gt_hold_reason)gt_hold_rules[i].reason;
		}
	}
	return best >= 0 ? (enum gt_hold_reason)gt_hold_rules[best].reason : GT_HOLD_OTHER;
}
