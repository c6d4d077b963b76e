#include "test.h"

#include <stdlib.h>

#include "core/demangle.h"

TEST(demangle_kernel_names_as_nsys_prints_them)
{
	ASSERT(gt_demangle_available());
	char *d = gt_demangle("_Z6vecAddPKfS0_Pfi");
	ASSERT(d);
	ASSERT_EQ_STR(d, "vecAdd(float const*, float const*, float*, int)");
	free(d);
	d = gt_demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_");
	ASSERT(d);
	ASSERT_EQ_STR(d, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
			 "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)");
	free(d);
}

TEST(demangle_leaves_plain_and_broken_names_alone)
{
	ASSERT(gt_demangle("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == NULL);
	ASSERT(gt_demangle("_Z") == NULL);
	ASSERT(gt_demangle("_Zgarbage!!") == NULL);
	ASSERT(gt_demangle(NULL) == NULL);
	ASSERT(!gt_is_mangled("main"));
	char buf[16];
	const char *plain = "sgemm_128x128";
	ASSERT(gt_demangle_to(plain, buf, sizeof buf) == plain);
	/* cut to the buffer, NUL-terminated */
	const char *cut = gt_demangle_to("_Z6vecAddPKfS0_Pfi", buf, sizeof buf);
	ASSERT(cut == buf);
	ASSERT_EQ_INT(strlen(buf), 15);
	ASSERT_EQ_STR(buf, "vecAdd(float co");
}
