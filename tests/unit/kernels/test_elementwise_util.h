// Reference machinery of the elementwise tests: naive broadcasting over the
// output's index space, values read one by one as double (Tensor::item_at),
// integer wrap-around and rounding to the output dtype done in the test, never
// through the kernels under test.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

namespace msl::kernels::testing {

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                                       DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  return v;
}

inline std::string dt_name(DType t) { return dtype_display_name(t); }

// NumPy broadcasting, written out again so the tests do not trust shape_util.
inline Dims ref_broadcast(const Dims& a, const Dims& b) {
  int n = a.size() > b.size() ? a.size() : b.size();
  Dims out;
  for (int i = 0; i < n; ++i) {
    int ia = i - (n - a.size()), ib = i - (n - b.size());
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

// Row-major index into `t` of output element `flat` of shape `out`, with
// broadcasting (dimensions of size 1 and missing leading ones repeat).
inline int64_t ref_source_index(const Dims& out, const Dims& src, int64_t flat) {
  int64_t idx = 0, mul = 1;
  for (int i = out.size() - 1, j = src.size() - 1; i >= 0; --i, --j) {
    int64_t c = flat % out[i];
    flat /= out[i];
    if (j >= 0) {
      if (src[j] != 1) idx += c * mul;
      mul *= src[j];
    }
  }
  return idx;
}

inline std::vector<double> ref_map(const std::vector<const Tensor*>& in, const Dims& out,
                                   const std::function<double(const std::vector<double>&)>& f) {
  int64_t n = out.product();
  std::vector<double> r(static_cast<size_t>(n));
  std::vector<std::vector<double>> vals;
  for (const Tensor* t : in) vals.push_back(to_vector(*t));
  std::vector<double> args(in.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < in.size(); ++k)
      args[k] = vals[k][static_cast<size_t>(ref_source_index(out, in[k]->shape(), i))];
    r[static_cast<size_t>(i)] = f(args);
  }
  return r;
}

// An exact integer result wrapped to the dtype's width (two's complement).
inline double wrap_to(DType dt, double v) {
  int64_t i = static_cast<int64_t>(v);
  switch (dt) {
    case DType::Int8: return static_cast<int8_t>(static_cast<uint8_t>(i));
    case DType::UInt8: return static_cast<uint8_t>(i);
    case DType::Int32: return static_cast<int32_t>(static_cast<uint32_t>(i));
    case DType::Bool: return v != 0;
    default: return v;
  }
}

// The double `v` rounded to dtype `dt` (via a one-element buffer).
inline double round_to(DType dt, double v) {
  alignas(8) unsigned char buf[8];
  store_from_double(buf, dt, 0, v);
  return load_as_double(buf, dt, 0);
}

// Compares a kernel result with reference values (exact doubles, rounded to
// the output dtype here): integers and Bool exactly, floats to `ulps` units
// of the dtype's tolerance.
inline void expect_matches(const Tensor& got, const std::vector<double>& want, double rtol_scale = 1, double atol = 0) {
  std::vector<double> w(want.size());
  for (size_t i = 0; i < want.size(); ++i) w[i] = round_to(got.dtype(), want[i]);
  if (is_floating(got.dtype()))
    check_close(to_vector(got), w, tolerance(got.dtype()) * rtol_scale, atol);
  else
    CHECK(to_vector(got) == w);
}

inline Tensor transposed_copy(const Tensor& t2d) {
  // A [c, r] view of a fresh [r, c] buffer holding the transpose of t2d's values.
  int64_t r = t2d.dim(0), c = t2d.dim(1);
  Tensor base(t2d.dtype(), Dims{c, r});
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) store_from_double(base.raw(), t2d.dtype(), j * r + i, t2d.item_at(i * c + j));
  return Tensor::view(base, Dims{r, c}, Dims{1, r}, 0);
}

// Random values suited to a dtype: small integers, {0, 1} for Bool.
inline Tensor rand_for(std::mt19937& rng, DType dt, const Dims& shape, double lo = -4, double hi = 4) {
  if (dt == DType::UInt8 && lo < 0) {
    lo = 0;
    hi = hi * 8 > 255 ? 255 : hi * 8;
  }
  if (is_integral(dt) && hi - lo < 20) {
    lo *= 8;
    hi *= 8;
    if (dt == DType::Int8 && hi > 127) hi = 127;
    if (dt == DType::Int8 && lo < -128) lo = -128;
  }
  return random_tensor(rng, dt, shape, lo, hi);
}

// Caps the vector level for one scope.
struct SimdScope {
  explicit SimdScope(ew::SimdLevel l) : saved(ew::simd_level()) { ew::set_simd_level(l); }
  ~SimdScope() { ew::set_simd_level(saved); }
  ew::SimdLevel saved;
};

inline std::vector<ew::SimdLevel> simd_levels() {
  std::vector<ew::SimdLevel> v = {ew::SimdLevel::Generic};
  if (ew::max_simd_level() >= ew::SimdLevel::AVX2) v.push_back(ew::SimdLevel::AVX2);
  if (ew::max_simd_level() >= ew::SimdLevel::AVX512) v.push_back(ew::SimdLevel::AVX512);
  return v;
}

inline const char* level_name(ew::SimdLevel l) {
  return l == ew::SimdLevel::Generic ? "generic" : l == ew::SimdLevel::AVX2 ? "avx2" : "avx512";
}

inline Tensor run(Prim p, std::vector<Tensor> in, const Attrs& attrs = {}) { return execute1(p, in, attrs); }

}  // namespace msl::kernels::testing
