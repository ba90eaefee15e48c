// Host tensors the GPU kernel tests feed the CPU's kernels and the GPU's
// (text under host emulation, or on a device): uniform random values and
// integer lists in any dtype, converted as the CPU converts.
#pragma once

#include <random>
#include <vector>

#include "kernels/tensor.h"

namespace msl::test {

// Every dtype, in kernels/dtype.h's order (derived from its list).
inline constexpr kernels::DType kAllDTypes[] = {
#define MSL_X(e, t, py, ms) kernels::DType::e,
    MSL_DTYPES(MSL_X)
#undef MSL_X
};

// `t` converted to `dt` (a new contiguous host tensor).
inline kernels::Tensor converted(const kernels::Tensor& t, kernels::DType dt) {
  kernels::Tensor out(dt, t.shape());
  kernels::copy_tensor(t, out);
  return out;
}

// Uniform values in [lo, hi), as dtype `t` (converted as the CPU converts).
inline kernels::Tensor values_of(kernels::DType t, const kernels::Dims& shape, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  kernels::Tensor d(kernels::DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<double>()[i] = u(rng);
  return converted(d, t);
}

// Uniform values in [-100, 100) (integers wrap, Bool is mostly true).
inline kernels::Tensor values_of(kernels::DType t, const kernels::Dims& shape, uint32_t seed) {
  return values_of(t, shape, seed, -100.0, 100.0);
}

// A 0-d float32 tensor holding v (a hyper-parameter input).
inline kernels::Tensor scalar(double v) {
  kernels::Tensor s(kernels::DType::Float32, kernels::Dims{});
  *s.data<float>() = static_cast<float>(v);
  return s;
}

// `v` repeated over `shape`, as dtype `t`.
inline kernels::Tensor int_tensor(kernels::DType t, const kernels::Dims& shape, const std::vector<int64_t>& v) {
  kernels::Tensor d(kernels::DType::Int64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<int64_t>()[i] = v[static_cast<size_t>(i) % v.size()];
  return converted(d, t);
}

}  // namespace msl::test
