// CUDA C of max_pool2d, avg_pool2d and their gradients on NCHW tensors, as
// the CPU's loops define them (kernels/dnnl_pool.cpp): a window is clipped
// to the input (padding never wins a maximum), a maximum is the first in
// row-major window order, an average divides by the clipped window's size
// or, with count_include_pad, by kh * kw.
//
// One thread per element and no barriers, so the tests run the texts under
// host emulation (tests/unit/cuda/host_emulation.h):
//   forward:  one thread per output element, looping over its window;
//   backward: one thread per INPUT element, summing over the windows that
//             contain it (for max, the windows whose maximum it is, found
//             again; for avg, dy / divisor) in row-major window order, the
//             order the CPU adds them in: a max gradient is the CPU's bits,
//             and nothing needs atomics.
//
//   struct msl_pool { long long n, c, h, w, ho, wo, kh, kw, sh, sw, pt, pl;
//                     int include_pad; };
//   max/avg forward: NAME(long long count, const T* x, T* y, msl_pool g)
//   max backward:    NAME(long long count, const T* x, const T* dy, T* dx, msl_pool g)
//   avg backward:    NAME(long long count, const T* dy, T* dx, msl_pool g)
#pragma once

#include <string>

#include "kernels/dtype.h"
#include "kernels/pool_geometry.h"

namespace msl::kernels::cuda {

enum class PoolKernel { MaxForward, MaxBackward, AvgForward, AvgBackward };

// The host's msl_pool (the same layout).
struct PoolParams {
  int64_t n = 0, c = 0, h = 0, w = 0, ho = 0, wo = 0, kh = 0, kw = 0, sh = 0, sw = 0, pt = 0, pl = 0;
  int32_t include_pad = 0;
};
PoolParams pool_params(const PoolGeom& g);

// float32 and float64 (others: std::invalid_argument).
std::string pool_kernel_name(PoolKernel k, DType t);
std::string pool_kernel_source(PoolKernel k, DType t);
// The definitions every pool kernel uses, once per translation unit, and
// one kernel (pool_kernel_source is the two together).
std::string pool_kernel_prelude();
std::string pool_kernel(PoolKernel k, DType t);

}  // namespace msl::kernels::cuda
