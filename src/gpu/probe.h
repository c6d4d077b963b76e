/*
 * gpu/probe.h — where the CUDA driver, its runtime and CUPTI are found: one
 * list, used by the tap's loader (libgputap.so), the range-metrics engine
 * (gpu/cuprof.c) and `gputap info`, so that `info` names the CUPTI the tap
 * loads.
 *
 * Owns: the search order of libcuda (GPUTAP_CUDA_LIB, then libcuda.so.1) and
 * of libcupti (GPUTAP_CUPTI_LIB; libcupti.so.13, .12, unversioned on the
 * loader's path; $CUDA_HOME and the build's CUDA home; next to the loaded
 * CUDA runtime, where pip wheels put it), version probes that create no
 * context, and the "13.0" spelling of a CUDA version.
 *
 * Compiled into both the CLI and the library: no stdio, no allocation that
 * outlives a call, nothing that exits.
 */
#ifndef GT_GPU_PROBE_H
#define GT_GPU_PROBE_H

#include <stddef.h>

/* dlopen the CUDA driver (RTLD_NOW | RTLD_LOCAL); NULL if it cannot be loaded. */
void *gt_libcuda_open(void);
/* The copy of the CUDA driver already loaded in this process (the runtime dlopens it privately), or
 * NULL: loads nothing. */
void *gt_libcuda_loaded(void);
/* The path of the CUDA runtime (libcudart.so*) loaded in this process: 1 and `path` set, or 0 when
 * none is (a program with a static runtime, or none). */
int gt_cudart_loaded(char *path, size_t len);
/* cuDriverGetVersion without creating a context; 0 if libcuda cannot be loaded. */
int gt_cuda_driver_version(void);
/* dlopen the first CUPTI of the search order; `path` (may be NULL) receives
 * what was loaded.  NULL if none loads. */
void *gt_cupti_open(char *path, size_t len);
/* cuptiGetVersion of the CUPTI gt_cupti_open finds; 0 if none.  `path`
 * receives what was loaded. */
unsigned gt_cupti_version(char *path, size_t len);
/* Format a CUDA version number (13000 -> "13.0"; "" when v <= 0). */
void gt_cuda_version_str(int v, char *buf, size_t len);

#endif
