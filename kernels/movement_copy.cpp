// The strided copies behind the movement kernels (and the reductions,
// softmax and random kernels, which make their inputs contiguous with them):
// the same-dtype copy and the converting copy declared in strided_iter.h.
//
// Both walk the collapsed geometry row by row (a row being the innermost
// remaining dimension), so a contiguous tensor is one memcpy and a slice is
// a memcpy per row; rows are split over threads for large tensors. When the
// destination is contiguous along its last dimension but the source along
// another one (making a transposed tensor contiguous), element-per-row
// copying would touch a new cache line per element; the copy then works on
// square tiles of the two dimensions instead.
//
// The converting copy instantiates one typed loop per (source, destination)
// dtype pair, with the conversion rules of store_from_double and
// load_as_double spelled out as templates, instead of two switch
// dispatches per element.
#include <limits>

#include "kernels/strided_iter.h"

namespace msl::kernels::strided_iter {

namespace {

// The copy of geometry g (stride set 0: dst, 1: src) where one side is
// contiguous along the last dimension and the other along dimension k: each
// [k, last] plane is copied in square tiles, so the strided side of every
// tile stays in L1 instead of touching a new cache line per element (a
// transposed matrix made contiguous, or assigned into a transposed view).
template <class U>
void copy_tiled(const Geom& g, int k, U* d, const U* s) {
  constexpr int64_t T = 64 / sizeof(U) > 16 ? 64 / sizeof(U) : 16;
  int last = g.nd - 1;
  Geom planes;  // the other dimensions, then k as the (ignored) row dimension
  for (int i = 0; i < g.nd; ++i) {
    if (i == k || i == last) continue;
    planes.shape[planes.nd] = g.shape[i];
    planes.st[0][planes.nd] = g.st[0][i];
    planes.st[1][planes.nd] = g.st[1][i];
    ++planes.nd;
  }
  planes.shape[planes.nd++] = g.shape[k];
  int64_t nk = g.shape[k], nl = g.shape[last];
  int64_t dk = g.st[0][k], sk = g.st[1][k], dl = g.st[0][last], sl = g.st[1][last];
  int64_t tiles = (nk + T - 1) / T, nplanes = 1;
  for (int i = 0; i < planes.nd - 1; ++i) nplanes *= planes.shape[i];
  parallel_for(nplanes * tiles, std::max<int64_t>(1, kParallelGrain / (T * nl)), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t od, os;
      row_offsets(planes, t / tiles, od, os);
      int64_t i0 = (t % tiles) * T, i1 = std::min(nk, i0 + T);
      for (int64_t j0 = 0; j0 < nl; j0 += T) {
        int64_t j1 = std::min(nl, j0 + T);
        for (int64_t i = i0; i < i1; ++i) {
          U* dp = d + od + i * dk;
          const U* sp = s + os + i * sk;
          for (int64_t j = j0; j < j1; ++j) dp[j * dl] = sp[j * sl];
        }
      }
    }
  });
}

}  // namespace

void copy_same_dtype(const Tensor& src, const Tensor& dst) {
  int64_t n = dst.numel();
  if (n == 0) return;
  size_t sz = dst.itemsize();
  Geom g = collapse(dst.shape(), dst.strides(), &src.strides());
  char* dbase = static_cast<char*>(dst.raw());
  const char* sbase = static_cast<const char*>(src.raw());
  if (g.nd == 0) {
    std::memcpy(dbase, sbase, sz);
    return;
  }
  int64_t len = g.shape[g.nd - 1], ds = g.st[0][g.nd - 1], ss = g.st[1][g.nd - 1];
  int64_t rows = n / len;
  visit_itemsize(sz, [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* d = reinterpret_cast<U*>(dbase);
    const U* s = reinterpret_cast<const U*>(sbase);
    if (len >= 8 && ss != 0 && (ds == 1) != (ss == 1)) {  // one side strided along the rows
      int other = ds == 1 ? 1 : 0;                        // the side to find a contiguous dimension for
      for (int k = g.nd - 2; k >= 0; --k)
        if (g.st[other][k] == 1 && g.shape[k] >= 8) return copy_tiled(g, k, d, s);
    }
    auto run = [&](U* dp, const U* sp, int64_t count) {
      if (ds == 1 && ss == 1) {
        std::memcpy(dp, sp, static_cast<size_t>(count) * sizeof(U));
      } else if (ss == 0) {
        U v = *sp;
        for (int64_t i = 0; i < count; ++i) dp[i * ds] = v;
      } else if (ds == 1) {
        for (int64_t i = 0; i < count; ++i) dp[i] = sp[i * ss];
      } else {
        for (int64_t i = 0; i < count; ++i) dp[i * ds] = sp[i * ss];
      }
    };
    if (rows == 1) {  // one long run: split it
      parallel_for(len, kParallelGrain, [&](int64_t b, int64_t e) { run(d + b * ds, s + b * ss, e - b); });
      return;
    }
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t r0, int64_t r1) {
      for_rows(g, r0, r1, [&](int64_t od, int64_t os) { run(d + od, s + os, len); });
    });
  });
}

namespace {

// half_to_float without a call or branches, so that widening loops
// vectorize: the exponent and mantissa shifted into float position and
// scaled by 2^112 rebias normal numbers and normalize subnormals exactly;
// Inf/NaN get the all-ones exponent back.
__attribute__((always_inline)) inline float half_to_float_inline(uint16_t h) {
  uint32_t em = h & 0x7fffu;
  uint32_t bits = em << 13;
  float f;
  std::memcpy(&f, &bits, 4);
  f *= 0x1p112f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u = em >= 0x7c00u ? (0x7f800000u | bits) : u;
  u |= static_cast<uint32_t>(h & 0x8000u) << 16;
  std::memcpy(&f, &u, 4);
  return f;
}

MSL_SIMD_CLONES void widen_half_row(const Half* __restrict s, float* __restrict d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = half_to_float_inline(s[i].bits);
}

template <class S>
inline double load_d(S v) {
  if constexpr (std::is_same_v<S, bool>)
    return v ? 1.0 : 0.0;
  else if constexpr (kIsHalfLike<S>)
    return to_compute(v);
  else
    return static_cast<double>(v);
}

// store_from_double's rules: integers truncate toward zero and saturate,
// NaN becomes 0; bool is v != 0; 16-bit floats round through float.
template <class D>
inline D store_d(double v) {
  if constexpr (std::is_same_v<D, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<D>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<D>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<D>::max());
    if (v != v) return 0;
    if (v <= lo) return std::numeric_limits<D>::min();
    if (v >= hi) return std::numeric_limits<D>::max();
    return static_cast<D>(v);
  } else if constexpr (kIsHalfLike<D>) {
    return from_compute<D>(static_cast<float>(v));
  } else {
    return static_cast<D>(v);
  }
}

template <class D, class S>
void convert_rows(const Geom& g, D* d, const S* s, int64_t n) {
  int64_t len = g.shape[g.nd - 1], ds = g.st[0][g.nd - 1], ss = g.st[1][g.nd - 1];
  auto run = [&](D* dp, const S* sp, int64_t count) {
    if constexpr (std::is_same_v<S, Half> && std::is_same_v<D, float>) {  // the widening of 16-bit reductions
      if (ds == 1 && ss == 1) {
        widen_half_row(sp, dp, count);
        return;
      }
    }
    if (ds == 1 && ss == 1)
      for (int64_t i = 0; i < count; ++i) dp[i] = store_d<D>(load_d(sp[i]));
    else
      for (int64_t i = 0; i < count; ++i) dp[i * ds] = store_d<D>(load_d(sp[i * ss]));
  };
  int64_t rows = n / len;
  if (rows == 1) {
    parallel_for(len, kParallelGrain, [&](int64_t b, int64_t e) { run(d + b * ds, s + b * ss, e - b); });
    return;
  }
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t r0, int64_t r1) {
    for_rows(g, r0, r1, [&](int64_t od, int64_t os) { run(d + od, s + os, len); });
  });
}

}  // namespace

void copy_convert(const Tensor& src, const Tensor& dst) {
  if (src.dtype() == dst.dtype()) return copy_same_dtype(src, dst);
  int64_t n = dst.numel();
  if (n == 0) return;
  Geom g = collapse(dst.shape(), dst.strides(), &src.strides());
  if (g.nd == 0) {  // one element: a 1-long row
    g.nd = 1;
    g.shape[0] = 1;
  }
  visit_dtype(dst.dtype(), [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    visit_dtype(src.dtype(), [&](auto stag) {
      using S = typename decltype(stag)::type;
      convert_rows(g, dst.data<D>(), src.data<S>(), n);
    });
  });
}

Tensor contiguous_fast(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor c(t.dtype(), t.shape(), t.device());
  copy_same_dtype(t, c);
  return c;
}

Tensor contiguous_as(const Tensor& t, DType dt) {
  if (t.dtype() == dt) return contiguous_fast(t);
  Tensor c(dt, t.shape(), t.device());
  copy_convert(t, c);
  return c;
}

}  // namespace msl::kernels::strided_iter
