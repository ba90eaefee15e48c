// Private helpers of the reduction, movement, softmax and random kernels:
// dtype dispatch to C++ element types, collapsing of dimensions, and a
// strided copy that is much faster than the generic copy_strided fallback.
//
// Design choices:
// - Dispatch hands the callee a std::type_identity<T> tag, so one generic
//   lambda is instantiated per dtype and the loops inside it are plain typed
//   loops the compiler vectorizes. Half and BFloat16 are their bit-pattern
//   structs; to_compute/from_compute convert them through float.
// - Pure data movement never needs the element's meaning, only its size, so
//   copies dispatch on the item size (1, 2, 4 or 8 bytes) instead of the
//   dtype: 4 instantiations instead of 9.
// - Geometry is collapsed before looping: size-1 dimensions are dropped and
//   neighbours that are contiguous with each other in every operand are
//   merged. A contiguous tensor then becomes one flat loop, and a sliced or
//   transposed one the fewest nested loops its layout allows.
// - Everything lives in namespace strided_iter so that helpers other kernel
//   groups write for themselves can never collide with these (ODR). The
//   copies are defined once, in movement_copy.cpp, so that their 81
//   dtype-pair loops are compiled in one file only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/parallel.h"
#include "kernels/simd_clones.h"
#include "kernels/tensor.h"

namespace msl::kernels::strided_iter {

template <class T>
using Tag = std::type_identity<T>;

// Calls f(Tag<T>{}) with T the storage type of dtype t.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(Tag<bool>{});
    case DType::Int8: return f(Tag<int8_t>{});
    case DType::UInt8: return f(Tag<uint8_t>{});
    case DType::Int32: return f(Tag<int32_t>{});
    case DType::Int64: return f(Tag<int64_t>{});
    case DType::Float16: return f(Tag<Half>{});
    case DType::BFloat16: return f(Tag<BFloat16>{});
    case DType::Float32: return f(Tag<float>{});
    case DType::Float64: break;
  }
  return f(Tag<double>{});
}

// Calls f(Tag<U>{}) with U an unsigned integer of the given byte size.
template <class F>
decltype(auto) visit_itemsize(size_t size, F&& f) {
  switch (size) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    default: break;
  }
  return f(Tag<uint64_t>{});
}

template <class T>
constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The arithmetic type a storage type computes in (float for 16-bit floats).
template <class T>
using Compute = std::conditional_t<kIsHalfLike<T>, float, T>;

template <class T>
inline Compute<T> to_compute(T v) {
  if constexpr (std::is_same_v<T, Half>)
    return half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return bf16_to_float(v.bits);
  else
    return v;
}

template <class T>
inline T from_compute(Compute<T> v) {
  if constexpr (std::is_same_v<T, Half>)
    return Half{float_to_half(v)};
  else if constexpr (std::is_same_v<T, BFloat16>)
    return BFloat16{float_to_bf16(v)};
  else
    return v;
}

// A shape with up to two stride sets, dimensions collapsed (see above).
// nd == 0 means a single element.
struct Geom {
  int nd = 0;
  int64_t shape[kMaxDims] = {};
  int64_t st[2][kMaxDims] = {};
};

// Collapses `shape` read through strides s0 (and s1 when given).
inline Geom collapse(const Dims& shape, const Dims& s0, const Dims* s1 = nullptr) {
  Geom g;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    int64_t a = s0[i], b = s1 ? (*s1)[i] : 0;
    if (g.nd > 0) {
      int k = g.nd - 1;
      if (g.st[0][k] == a * shape[i] && g.st[1][k] == b * shape[i]) {
        g.shape[k] *= shape[i];
        g.st[0][k] = a;
        g.st[1][k] = b;
        continue;
      }
    }
    g.shape[g.nd] = shape[i];
    g.st[0][g.nd] = a;
    g.st[1][g.nd] = b;
    ++g.nd;
  }
  return g;
}

// Storage offsets (for both stride sets) of row `row` of a geometry whose
// last dimension is the row: the odometer's starting point for a chunk.
inline void row_offsets(const Geom& g, int64_t row, int64_t& o0, int64_t& o1) {
  o0 = o1 = 0;
  for (int i = g.nd - 2; i >= 0; --i) {
    int64_t d = g.shape[i];
    int64_t k = row % d;
    row /= d;
    o0 += k * g.st[0][i];
    o1 += k * g.st[1][i];
  }
}

// Calls f(off0, off1) for rows [r0, r1) of a geometry with nd >= 1, where
// the offsets are the storage positions of the rows' first elements.
template <class F>
inline void for_rows(const Geom& g, int64_t r0, int64_t r1, F&& f) {
  int64_t o0, o1;
  row_offsets(g, r0, o0, o1);
  int64_t idx[kMaxDims] = {};
  int64_t rem = r0;
  for (int i = g.nd - 2; i >= 0; --i) {
    idx[i] = rem % g.shape[i];
    rem /= g.shape[i];
  }
  for (int64_t r = r0; r < r1; ++r) {
    f(o0, o1);
    for (int i = g.nd - 2; i >= 0; --i) {
      if (++idx[i] < g.shape[i]) {
        o0 += g.st[0][i];
        o1 += g.st[1][i];
        break;
      }
      o0 -= g.st[0][i] * (g.shape[i] - 1);
      o1 -= g.st[1][i] * (g.shape[i] - 1);
      idx[i] = 0;
    }
  }
}

// Copies src into dst, both of the same dtype and shape, any strides (src
// may have zero strides: a broadcast view). Parallel over rows when large;
// a transposed layout is copied in tiles. dst must not overlap src unless
// they are the same elements. (movement_copy.cpp)
void copy_same_dtype(const Tensor& src, const Tensor& dst);

// Copies src into dst converting the dtype (same shape, any strides), with
// exactly the rules of store_from_double(load_as_double(...)): integers
// saturate, NaN becomes 0 in integers, 16-bit floats round to nearest even.
void copy_convert(const Tensor& src, const Tensor& dst);

// `t` itself when contiguous, otherwise a contiguous copy made by
// copy_same_dtype (Tensor::contiguous goes element by element).
Tensor contiguous_fast(const Tensor& t);

// A contiguous tensor of dtype `dt` with t's values (t itself when it
// already is one).
Tensor contiguous_as(const Tensor& t, DType dt);

}  // namespace msl::kernels::strided_iter
