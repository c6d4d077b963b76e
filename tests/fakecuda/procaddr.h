/*
 * tests/fakecuda/procaddr.h — cuGetProcAddress for stand-in drivers: hands out a table's entry
 * points as the real driver hands them to the CUDA runtime (the _ptsz variant when the
 * per-thread default stream is asked for).  Used by tests/fakecuda/libcuda.c and
 * bench/launch/nulldrv.c.
 */
#ifndef FAKECUDA_PROCADDR_H
#define FAKECUDA_PROCADDR_H

#include <cuda.h>
#include <stddef.h>
#include <string.h>

struct fake_entry {
	const char *name;
	void *fn, *ptsz;
};

static inline CUresult fake_proc_address(const struct fake_entry *e, size_t n, const char *sym, void **pfn,
					 cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(e[i].name, sym) == 0) {
			*pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && e[i].ptsz ? e[i].ptsz : e[i].fn;
			if (status)
				*status = CU_GET_PROC_ADDRESS_SUCCESS;
			return CUDA_SUCCESS;
		}
	*pfn = NULL;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}

/* Defines the driver's cuGetProcAddress_v2 over the stand-in's `table` (an array of fake_entry). */
#define FAKE_DEFINE_GET_PROC_ADDRESS(table)                                                                      \
	CUresult CUDAAPI cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,           \
					     CUdriverProcAddressQueryResult *status);                          \
	CUresult CUDAAPI cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,           \
					     CUdriverProcAddressQueryResult *status)                           \
	{                                                                                                      \
		(void)ver;                                                                                     \
		return fake_proc_address(table, sizeof(table) / sizeof(table[0]), sym, pfn, flags, status);    \
	}

#endif
