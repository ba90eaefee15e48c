// Helpers shared by the kernel tests: random inputs, conversion to float64
// vectors, and comparison with the independent float64 reference loops that
// each test writes for its primitive.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/primitives.h"

namespace msl::kernels::testing {

// A contiguous tensor of `shape` filled from `rng` with values in [lo, hi)
// (rounded for integer dtypes, thresholded at the midpoint for bool).
inline Tensor random_tensor(std::mt19937& rng, DType dt, const Dims& shape, double lo = -2, double hi = 2) {
  Tensor t(dt, shape);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = u(rng);
    if (dt == DType::Bool) v = v > (lo + hi) / 2;
    else if (is_integral(dt)) v = std::round(v);
    store_from_double(t.raw(), dt, i, v);
  }
  return t;
}

// The logical elements of `t` (any strides) in row-major order, as double.
inline std::vector<double> to_vector(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.item_at(i);
  return v;
}

inline Tensor from_vector(DType dt, const Dims& shape, const std::vector<double>& v) {
  Tensor t(dt, shape);
  REQUIRE(static_cast<int64_t>(v.size()) == t.numel());
  for (size_t i = 0; i < v.size(); ++i) store_from_double(t.raw(), dt, static_cast<int64_t>(i), v[i]);
  return t;
}

// A non-contiguous view with the same values as `t`: the transpose of a
// transposed copy (for rank >= 2) or every other element of a doubled buffer.
inline Tensor noncontiguous_copy(const Tensor& t) {
  int64_t n = t.numel();
  Tensor big(t.dtype(), Dims{n * 2 + 1});
  for (int64_t i = 0; i < n; ++i) store_from_double(big.raw(), t.dtype(), 1 + 2 * i, t.item_at(i));
  Dims strides = contiguous_strides(t.shape());
  for (int i = 0; i < strides.size(); ++i) strides[i] *= 2;
  return Tensor::view(big, t.shape(), strides, 1);
}

// Relative tolerance appropriate to a dtype's precision.
inline double tolerance(DType dt) {
  switch (dt) {
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    case DType::Float32: return 2e-6;
    default: return 1e-12;
  }
}

// Checks |got - want| <= atol + rtol * |want| for every element, reporting
// the first mismatch with its index.
inline void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                        double atol = 0) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    bool ok = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i] ||
              std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]);
    if (!ok) {
      INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
      CHECK(ok);
      return;
    }
  }
}

}  // namespace msl::kernels::testing
