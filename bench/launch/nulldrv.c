/*
 * bench/launch/nulldrv.c — a libcuda.so.1 whose launches do nothing, for timing the tap's own
 * cost per launch on a CPU (bench/launch/run.sh).  Entry points are handed out through
 * cuGetProcAddress_v2, as the real driver hands them to the CUDA runtime; each launch only
 * counts itself, so the loop measures the call path and nothing else.
 */
#include <cuda.h>
#include "../../tests/fakecuda/procaddr.h"
#include <string.h>

static unsigned long long launched;

unsigned long long nulldrv_launched(void);
unsigned long long nulldrv_launched(void)
{
	return launched;
}
CUresult CUDAAPI cuInit(unsigned int f)
{
	(void)f;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *c)
{
	*c = (CUcontext)(uintptr_t)0xC0;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				unsigned bz, unsigned sm, CUstream s, void **kp, void **ex)
{
	(void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sm, (void)s, (void)kp, (void)ex;
	launched++;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
				     unsigned by, unsigned bz, unsigned sm, CUstream s, void **kp, void **ex)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sm, s, kp, ex);
}
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **kp, void **ex)
{
	(void)c, (void)f, (void)kp, (void)ex;
	launched++;
	return CUDA_SUCCESS;
}
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **kp, void **ex)
{
	return cuLaunchKernelEx(c, f, kp, ex);
}
CUresult CUDAAPI cuStreamSynchronize(CUstream s)
{
	(void)s;
	return CUDA_SUCCESS;
}

static const struct fake_entry entries[] = {
	{"cuInit", (void *)cuInit, NULL},
	{"cuDriverGetVersion", (void *)cuDriverGetVersion, NULL},
	{"cuCtxGetCurrent", (void *)cuCtxGetCurrent, NULL},
	{"cuLaunchKernel", (void *)cuLaunchKernel, (void *)cuLaunchKernel_ptsz},
	{"cuLaunchKernelEx", (void *)cuLaunchKernelEx, (void *)cuLaunchKernelEx_ptsz},
	{"cuStreamSynchronize", (void *)cuStreamSynchronize, NULL},
};

FAKE_DEFINE_GET_PROC_ADDRESS(entries)
