// CUDA C of the reductions: reduce_sum, reduce_max, reduce_min over any
// axes and argmax, argmin along one, on inputs of any strides.
//
// First version: one thread per output element, looping over its reduced
// elements in row-major order (an odometer over the reduced dimensions),
// with no barriers or shared memory, so the text runs under host emulation.
// It is fast when there are many outputs and slow for a full reduction to
// one value (one thread does it all); a tree reduction is the next step.
//
//   struct msl_reduce_geometry { int nkept, nred;
//       long long kept_shape[8], kept_stride[8], red_shape[8], red_stride[8]; };
//   extern "C" __global__ void NAME(long long n, OUT* out, const IN* x,
//                                   msl_reduce_geometry g, long long count)
//
// Semantics are the CPU's (reduce.cpp): 16-bit floats are read as float32;
// float sums accumulate in double and round once to the output (the CPU
// sums blocks of float32 lanes and adds the blocks in double, so a float32
// sum differs from the CPU's by the CPU's own rounding, a few float32 ulps
// of the sum of magnitudes); integer sums wrap in 64 bits and truncate to
// the output dtype, Bool sums count in int64, bit for bit; max/min let a
// NaN win; argmax/argmin give the first index of the extreme (of the first
// NaN when there is one), bit for bit. A max or min over both zeros may
// keep the other zero's sign than the CPU, whose lanes visit elements in a
// different order.
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

namespace msl::kernels::cuda {

struct ReduceKernel {
  Prim prim = Prim::reduce_sum;  // reduce_sum/max/min, argmax, argmin
  DType in = DType::Float32;
  DType out = DType::Float32;
};

// "msl_reduce_sum_float16_to_float16".
std::string reduce_kernel_name(const ReduceKernel& k);
// The translation unit of one kernel; the same in parts for a unit of many.
std::string reduce_source(const ReduceKernel& k);
std::string reduce_prelude();
std::string reduce_kernel_text(const ReduceKernel& k);
// The kernel's parameter types in order, as C ("msl_i64", "float*", ...).
std::vector<std::string> reduce_param_types(const ReduceKernel& k);

// The kernel's msl_reduce_geometry as the host passes it.
struct ReduceGeometry {
  int32_t nkept = 0, nred = 0;
  int64_t kept_shape[8] = {}, kept_stride[8] = {}, red_shape[8] = {}, red_stride[8] = {};
};
static_assert(kMaxDims == 8, "msl_reduce_geometry's arrays hold kMaxDims dimensions");

// The geometry of reducing the axes in `mask` (bit i: axis i) of a tensor
// of `shape` and element `strides`; size-1 dimensions are dropped. `count`
// receives the number of elements each output reduces.
ReduceGeometry reduce_geometry(const Dims& shape, const Dims& strides, uint32_t mask, int64_t& count);

// The GPU kernels of the five primitives (reduce_launch.cpp, CUDA builds).
void register_reduce_kernels();

}  // namespace msl::kernels::cuda
