// A cache-blocked GEMM for float64 and wrapping int32/int64, and the batched
// matmul built on it.
//
// The structure is the classic Goto/BLIS one, kept small: C is cut into
// independent kMC x kNC tiles (the unit of parallel work, so no thread ever
// writes another's C); per tile, K is walked in kKC slices whose A and B
// blocks are packed into contiguous micro-panels, and a kMR x kNR register
// tile accumulates one micro-panel pair. Packing makes any input strides
// (transposes, broadcasts, views) cost the same as row-major. The micro
// kernel is plain C++ that GCC unrolls and vectorizes; it is compiled twice,
// for baseline x86-64 and for AVX-512 (with FMA for double), and picked at
// run time, since the library is not built with -march=native.
#include "kernels/contraction_fallback.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "kernels/errors.h"
#include "kernels/parallel.h"

namespace msl::kernels::fallback {

namespace {

constexpr int kMR = 6;
constexpr int kNR = 16;
constexpr int64_t kMC = 96;  // multiple of kMR
constexpr int64_t kKC = 192;
constexpr int64_t kNC = 512;  // multiple of kNR

template <class T>
struct GemmArgs {
  int64_t m, n, k;
  const T* a;
  int64_t a_rs, a_cs;
  const T* b;
  int64_t b_rs, b_cs;
  T* c;
  int64_t ldc;
  bool accumulate;
  int64_t tiles_n;  // tiles along n
};

template <class T>
inline __attribute__((always_inline)) void pack_a(const T* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, T* pa) {
  for (int64_t i0 = 0; i0 < mc; i0 += kMR, pa += kMR * kc) {
    int64_t mr = std::min<int64_t>(kMR, mc - i0);
    for (int64_t p = 0; p < kc; ++p) {
      const T* src = a + i0 * rs + p * cs;
      T* dst = pa + p * kMR;
      for (int64_t i = 0; i < mr; ++i) dst[i] = src[i * rs];
      for (int64_t i = mr; i < kMR; ++i) dst[i] = T(0);
    }
  }
}

template <class T>
inline __attribute__((always_inline)) void pack_b(const T* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, T* pb) {
  for (int64_t j0 = 0; j0 < nc; j0 += kNR, pb += kNR * kc) {
    int64_t nr = std::min<int64_t>(kNR, nc - j0);
    for (int64_t p = 0; p < kc; ++p) {
      const T* src = b + p * rs + j0 * cs;
      T* dst = pb + p * kNR;
      if (cs == 1 && nr == kNR) {
        std::memcpy(dst, src, sizeof(T) * kNR);
      } else {
        for (int64_t j = 0; j < nr; ++j) dst[j] = src[j * cs];
        for (int64_t j = nr; j < kNR; ++j) dst[j] = T(0);
      }
    }
  }
}

template <class T, bool kFma>
inline __attribute__((always_inline)) void micro(int64_t kc, const T* __restrict pa, const T* __restrict pb, T* c,
                                                 int64_t ldc, int64_t mr, int64_t nr, bool acc) {
  T r[kMR][kNR];
#pragma GCC unroll 16
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < kNR; ++j) r[i][j] = T(0);
  for (int64_t p = 0; p < kc; ++p) {
    const T* bp = pb + p * kNR;
#pragma GCC unroll 16
    for (int i = 0; i < kMR; ++i) {
      T av = pa[p * kMR + i];
#pragma GCC unroll 16
      for (int j = 0; j < kNR; ++j) {
        if constexpr (kFma && std::is_floating_point_v<T>)
          r[i][j] = __builtin_fma(av, bp[j], r[i][j]);
        else
          r[i][j] += av * bp[j];
      }
    }
  }
  for (int64_t i = 0; i < mr; ++i) {
    T* ci = c + i * ldc;
    if (acc) {
      for (int64_t j = 0; j < nr; ++j) ci[j] += r[i][j];
    } else {
      for (int64_t j = 0; j < nr; ++j) ci[j] = r[i][j];
    }
  }
}

// Computes C tiles [begin, end) of the tile grid, packing into pa/pb.
template <class T, bool kFma>
inline __attribute__((always_inline)) void run_tiles(const GemmArgs<T>& g, int64_t begin, int64_t end) {
  int64_t mc_max = std::min<int64_t>(kMC, (g.m + kMR - 1) / kMR * kMR);
  int64_t nc_max = std::min<int64_t>(kNC, (g.n + kNR - 1) / kNR * kNR);
  int64_t kc_max = std::min<int64_t>(kKC, g.k);
  std::unique_ptr<T[]> pa(new T[static_cast<size_t>(mc_max * kc_max)]);
  std::unique_ptr<T[]> pb(new T[static_cast<size_t>(kc_max * nc_max)]);
  for (int64_t t = begin; t < end; ++t) {
    int64_t ic = (t / g.tiles_n) * kMC, jc = (t % g.tiles_n) * kNC;
    int64_t mc = std::min(kMC, g.m - ic), nc = std::min(kNC, g.n - jc);
    for (int64_t pc = 0; pc < g.k; pc += kKC) {
      int64_t kc = std::min(kKC, g.k - pc);
      bool acc = g.accumulate || pc > 0;
      pack_b(g.b + pc * g.b_rs + jc * g.b_cs, g.b_rs, g.b_cs, kc, nc, pb.get());
      pack_a(g.a + ic * g.a_rs + pc * g.a_cs, g.a_rs, g.a_cs, mc, kc, pa.get());
      for (int64_t jr = 0; jr < nc; jr += kNR)
        for (int64_t ir = 0; ir < mc; ir += kMR)
          micro<T, kFma>(kc, pa.get() + ir * kc, pb.get() + jr * kc, g.c + (ic + ir) * g.ldc + jc + jr, g.ldc,
                         std::min<int64_t>(kMR, mc - ir), std::min<int64_t>(kNR, nc - jr), acc);
    }
  }
}

template <class T>
void tiles_baseline(const GemmArgs<T>& g, int64_t b, int64_t e) {
  run_tiles<T, false>(g, b, e);
}

template <class T>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))) void tiles_avx512(const GemmArgs<T>& g,
                                                                                         int64_t b, int64_t e) {
  run_tiles<T, true>(g, b, e);
}

bool has_avx512() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                         __builtin_cpu_supports("fma");
  return ok;
}

// Below this many multiply-adds a GEMM stays on one thread.
constexpr int64_t kParallelMacs = int64_t(1) << 18;

}  // namespace

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, T* c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  GemmArgs<T> g{m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, accumulate, (n + kNC - 1) / kNC};
  int64_t tiles = ((m + kMC - 1) / kMC) * g.tiles_n;
  void (*fn)(const GemmArgs<T>&, int64_t, int64_t) = has_avx512() ? tiles_avx512<T> : tiles_baseline<T>;
  int64_t grain = m * n * k >= kParallelMacs ? 1 : tiles + 1;
  parallel_for(tiles, grain, [&](int64_t b0, int64_t e0) { fn(g, b0, e0); });
}

template void gemm<double>(int64_t, int64_t, int64_t, const double*, int64_t, int64_t, const double*, int64_t, int64_t,
                           double*, int64_t, bool);
template void gemm<uint32_t>(int64_t, int64_t, int64_t, const uint32_t*, int64_t, int64_t, const uint32_t*, int64_t,
                             int64_t, uint32_t*, int64_t, bool);
template void gemm<uint64_t>(int64_t, int64_t, int64_t, const uint64_t*, int64_t, int64_t, const uint64_t*, int64_t,
                             int64_t, uint64_t*, int64_t, bool);

namespace {

template <class T>
void batched(const Tensor& a, const Tensor& b, bool ta, bool tb, const Tensor& out) {
  int ra = a.ndim(), rb = b.ndim(), r = out.ndim();
  int64_t m = out.dim(r - 2), n = out.dim(r - 1);
  int64_t k = ta ? a.dim(ra - 2) : a.dim(ra - 1);
  int64_t a_rs = ta ? a.strides()[ra - 1] : a.strides()[ra - 2];
  int64_t a_cs = ta ? a.strides()[ra - 2] : a.strides()[ra - 1];
  int64_t b_rs = tb ? b.strides()[rb - 1] : b.strides()[rb - 2];
  int64_t b_cs = tb ? b.strides()[rb - 2] : b.strides()[rb - 1];
  // Batch strides aligned to the output's batch dims; 0 where broadcast.
  int nb_dims = r - 2;
  int64_t bshape[kMaxDims], sa[kMaxDims], sb[kMaxDims];
  int64_t batches = 1;
  for (int i = 0; i < nb_dims; ++i) {
    bshape[i] = out.dim(i);
    batches *= bshape[i];
    int ia = i - (r - ra), ib = i - (r - rb);
    sa[i] = ia >= 0 && a.dim(ia) != 1 ? a.strides()[ia] : 0;
    sb[i] = ib >= 0 && b.dim(ib) != 1 ? b.strides()[ib] : 0;
  }
  const T* pa = static_cast<const T*>(a.raw());
  const T* pb = static_cast<const T*>(b.raw());
  T* pc = static_cast<T*>(out.raw());
  auto one = [&](int64_t bi) {
    int64_t oa = 0, ob = 0, rem = bi;
    for (int i = nb_dims - 1; i >= 0; --i) {
      int64_t idx = rem % bshape[i];
      rem /= bshape[i];
      oa += idx * sa[i];
      ob += idx * sb[i];
    }
    gemm<T>(m, n, k, pa + oa, a_rs, a_cs, pb + ob, b_rs, b_cs, pc + bi * m * n, n, false);
  };
  if (batches > 1 && m * n * k < kParallelMacs) {
    // Many small products: one per task; gemm stays single-threaded inside.
    parallel_for(batches, std::max<int64_t>(1, kParallelMacs / std::max<int64_t>(1, m * n * k)),
                 [&](int64_t b0, int64_t e0) {
                   for (int64_t bi = b0; bi < e0; ++bi) one(bi);
                 });
  } else {
    for (int64_t bi = 0; bi < batches; ++bi) one(bi);
  }
}

}  // namespace

void matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, const Tensor& out) {
  if (out.numel() == 0) return;
  switch (out.dtype()) {
    case DType::Float64: batched<double>(a, b, transpose_a, transpose_b, out); break;
    case DType::Int32: batched<uint32_t>(a, b, transpose_a, transpose_b, out); break;
    case DType::Int64: batched<uint64_t>(a, b, transpose_a, transpose_b, out); break;
    default: throw DTypeError(fmt::format("matmul: unsupported dtype {}", dtype_display_name(out.dtype())));
  }
}

}  // namespace msl::kernels::fallback
