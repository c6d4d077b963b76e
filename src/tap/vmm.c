/*
 * The virtual-memory calls (tap/api.h, gt_api_vmm): physical allocations in
 * mem_used, mappings as memory records.  Called by the driver hooks and by
 * the range feed's CUPTI callbacks.
 */
#include <cuda.h>
#include <cupti.h>
#include <string.h>

#include "tap/api.h"
#include "tap/tap.h"

#define VMM_HANDLE_TAG (1ull << 63) /* keys of physical allocations in the pointer table */
#define VMM_MAP_TAG (1ull << 62)    /* keys of mappings: value = device + 1 */

static uint32_t handle_device(uint64_t handle)
{
	typedef CUresult (*fn_t)(CUmemAllocationProp *, CUmemGenericAllocationHandle);
	static void *_Atomic fn;
	fn_t f = (fn_t)atomic_load(&fn);
	if (!f) {
		f = (fn_t)gt_real_driver("cuMemGetAllocationPropertiesFromHandle");
		atomic_store(&fn, (void *)f);
	}
	CUmemAllocationProp p;
	memset(&p, 0, sizeof(p));
	if (!f || f(&p, (CUmemGenericAllocationHandle)handle) != CUDA_SUCCESS || p.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return 0;
	return (uint32_t)p.location.id;
}

static void memory_record(int op, uint64_t addr, uint64_t bytes, uint32_t device)
{
	if (!(gt_tap.trace & GT_TR_MEMORY))
		return;
	struct gt_rec_memory r;
	memset(&r, 0, sizeof(r));
	r.h.type = GT_REC_MEMORY;
	r.h.size = sizeof(r);
	r.op = (uint8_t)op;
	r.mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r.device = device;
	r.ts_ns = gt_now_ns();
	r.address = addr;
	r.bytes = bytes;
	r.corr_id = gt_tls.corr;
	gt_tap_put(&r, sizeof(r));
}

void gt_api_vmm(int op, int result, uint64_t ptr, uint64_t bytes, uint64_t handle)
{
	if (result != CUDA_SUCCESS || !atomic_load_explicit(&gt_tap.on, memory_order_relaxed))
		return;
	switch (op) {
	case GT_VMM_CREATE:
		gt_tap_mem_alloc(handle | VMM_HANDLE_TAG, bytes);
		break;
	case GT_VMM_RELEASE:
		gt_tap_mem_free(handle | VMM_HANDLE_TAG);
		break;
	case GT_VMM_MAP: {
		uint32_t dev = handle_device(handle);
		gt_ptrtab_insert(&gt_tap.ptrs, ptr | VMM_MAP_TAG, (uint64_t)dev + 1);
		memory_record(GT_MEM_ALLOC, ptr, bytes, dev);
		break;
	}
	case GT_VMM_UNMAP: {
		uint64_t dev1 = gt_ptrtab_remove(&gt_tap.ptrs, ptr | VMM_MAP_TAG);
		memory_record(GT_MEM_FREE, ptr, bytes, dev1 ? (uint32_t)(dev1 - 1) : 0);
		break;
	}
	default:
		break;
	}
}
