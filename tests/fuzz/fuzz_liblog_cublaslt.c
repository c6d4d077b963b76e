/* Fuzz target: the cublaslt log parser (see fuzz_liblog.h for what is checked). */
#include "fuzz_liblog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return gt_fuzz_liblog(GT_LIB_CUBLASLT, data, size);
}
