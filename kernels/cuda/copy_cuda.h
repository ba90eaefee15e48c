// CUDA C of the strided copy: assign and cast on the GPU, and whatever
// makes a device tensor contiguous (Tensor::contiguous through assign).
//
// Element i of a geometry of up to kMaxDims dimensions is located by its
// row-major index over the shape, read at its source offset (strides of 0
// broadcast), converted as the CPU's copy_convert converts (C casts;
// float16 and bfloat16 through float32; to bool: nonzero) and stored at its
// destination offset:
//
//   struct msl_geometry { int ndim; long long shape[8], dst[8], src[8]; };
//   extern "C" __global__ void NAME(long long n, DST* dst, const SRC* src,
//                                   msl_geometry g)
//
// Like elementwise_cuda.h, the text needs no CUDA to be built; the tests
// compile every dtype pair with NVRTC.
#pragma once

#include <string>

#include "kernels/dtype.h"
#include "kernels/tensor.h"

namespace msl::kernels::cuda {

// The kernel's msl_geometry as the host passes it (the same layout).
struct CopyGeometry {
  int32_t ndim = 0;
  int64_t shape[8] = {}, dst[8] = {}, src[8] = {};
};
static_assert(kMaxDims == 8, "msl_geometry's arrays hold kMaxDims dimensions");

// The translation unit of the copy from `src` to `dst` elements, and its
// kernel's name ("msl_copy_float32_int64").
std::string copy_kernel_source(DType dst, DType src);
// The same in two parts, for a unit of several copies: the definitions
// every copy kernel uses, once per unit, and one kernel.
std::string copy_kernel_prelude();
std::string copy_kernel(DType dst, DType src);
std::string copy_kernel_name(DType dst, DType src);

// The C type of a dtype's element in kernel sources ("float", "__half").
const char* cuda_type_name(DType t);

}  // namespace msl::kernels::cuda
