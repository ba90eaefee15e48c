// Reductions: reduce_sum / reduce_max / reduce_min over any set of axes, and
// argmax / argmin along one axis.
//
// Design choices:
// - The input is made contiguous (a strided copy when it is a view) and
//   16-bit floats are widened to float32 once, so the loops below only see
//   bool, ints, float and double. The shape is then collapsed into
//   alternating groups of kept and reduced dimensions (size-1 dimensions
//   vanish, neighbours of the same kind merge).
// - The building block is one group reduction [A, R, B]: A outer kept, R
//   reduced, B inner kept. B == 1 is a row reduction (each output reduces a
//   contiguous run with many independent vector lanes); B > 1 is a column
//   reduction, where whole rows of B elements are accumulated elementwise
//   into an output tile, so the inner loop is always contiguous and
//   vectorized, never a strided gather. Several reduced groups are reduced
//   one at a time from the innermost, each pass shrinking the data.
// - Sums are blocked: a block (kRowBlock elements of a row, or kColBlock
//   rows of a column tile) is summed in the block type (float32 lanes for
//   float32, int64 for integers), and block partials are added in order in
//   the accumulator type (double for floats). A float32 sum of a million
//   elements is then accurate to a few float32 ulps, close to the double
//   result, at float32 vector speed.
// - Results never depend on the thread count: blocks have fixed boundaries
//   and partials are combined in block order whether a block was computed by
//   the sequential loop or by a parallel chunk.
// - NaN propagates through max/min (NumPy's maximum.reduce); argmax and
//   argmin return the first NaN when there is one (NumPy), else the first
//   index among ties.
#include <fmt/format.h>

#include <memory>
#include <vector>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

using namespace strided_iter;

constexpr int64_t kRowBlock = 4096;  // elements of a row summed in the block type
constexpr int64_t kColBlock = 64;    // rows of a column tile summed in the block type
constexpr int64_t kColTile = 1024;   // columns processed together by a column reduction

// ------------------------------------------------------------- inference

// Bit i set when axis i is reduced; empty or absent axes mean all axes.
uint32_t reduce_mask(const char* op, const Attrs& attrs, int ndim) {
  std::vector<int64_t> axes = attrs.get_ints("axes");
  if (axes.empty()) return (1u << ndim) - 1;
  uint32_t mask = 0;
  for (int64_t ax : axes) {
    int a = normalize_axis(op, ax, ndim);
    if (mask & (1u << a))
      throw ValueError(fmt::format("{}: duplicate axis {} in axes ({})", op, ax, fmt::join(axes, ", ")));
    mask |= 1u << a;
  }
  return ndim == 0 ? 0 : mask;
}

Dims reduced_shape(const Dims& shape, uint32_t mask, bool keep_dims) {
  Dims out;
  for (int i = 0; i < shape.size(); ++i) {
    if (!(mask & (1u << i)))
      out.push_back(shape[i]);
    else if (keep_dims)
      out.push_back(1);
  }
  return out;
}

int64_t reduced_count(const Dims& shape, uint32_t mask) {
  int64_t n = 1;
  for (int i = 0; i < shape.size(); ++i)
    if (mask & (1u << i)) n *= shape[i];
  return n;
}

void infer_reduce(const InferArgs& a) {
  const char* op = prim_name(a.prim);
  const TensorSpec& x = a.in[0];
  uint32_t mask = reduce_mask(op, a.attrs, x.shape.size());
  Dims shape = reduced_shape(x.shape, mask, a.attrs.get_bool("keep_dims"));
  if (a.prim != Prim::reduce_sum && reduced_count(x.shape, mask) == 0 && shape.product() != 0)
    throw ValueError(fmt::format("{}: zero-size reduction has no identity", op));
  DType dt = x.dtype;
  if (a.prim == Prim::reduce_sum && dt == DType::Bool) dt = DType::Int64;
  a.out[0] = {dt, shape};
}

// ------------------------------------------------------------ leaf loops

template <bool IsMax, class T>
inline T ext2(T a, T v) {  // the max/min of a and v; a NaN in either wins
  if constexpr (IsMax)
    return (v > a || v != v) ? v : a;
  else
    return (v < a || v != v) ? v : a;
}

// Sum of x[0, n) in the block type with 256 bytes of independent lanes.
template <class In, class Blk>
MSL_SIMD_CLONES Blk lane_sum(const In* __restrict x, int64_t n) {
  constexpr int L = 256 / sizeof(Blk);
  Blk acc[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int j = 0; j < L; ++j) acc[j] += static_cast<Blk>(x[i + j]);
  for (int j = 0; i < n; ++i, ++j) acc[j] += static_cast<Blk>(x[i]);
  for (int w = L / 2; w > 0; w /= 2)  // pairwise combination of the lanes
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}

// out[0, w) = sum of `rows` rows of x (row r at x + r * stride), in Blk.
template <class In, class Blk>
MSL_SIMD_CLONES void col_block_sum(const In* __restrict x, int64_t rows, int64_t stride, int64_t w,
                                   Blk* __restrict out) {
  for (int64_t j = 0; j < w; ++j) out[j] = static_cast<Blk>(x[j]);
  int64_t r = 1;
  for (; r + 4 <= rows; r += 4) {
    const In *p0 = x + r * stride, *p1 = p0 + stride, *p2 = p1 + stride, *p3 = p2 + stride;
    for (int64_t j = 0; j < w; ++j)
      out[j] +=
          (static_cast<Blk>(p0[j]) + static_cast<Blk>(p1[j])) + (static_cast<Blk>(p2[j]) + static_cast<Blk>(p3[j]));
  }
  for (; r < rows; ++r) {
    const In* p = x + r * stride;
    for (int64_t j = 0; j < w; ++j) out[j] += static_cast<Blk>(p[j]);
  }
}

template <class Blk, class Acc>
MSL_SIMD_CLONES void add_into(Acc* __restrict acc, const Blk* __restrict b, int64_t w) {
  for (int64_t j = 0; j < w; ++j) acc[j] += static_cast<Acc>(b[j]);
}

template <class T, bool IsMax>
MSL_SIMD_CLONES T lane_ext(const T* __restrict x, int64_t n) {
  constexpr int L = 256 / sizeof(T);
  T m = x[0];
  int64_t i = 1;
  if (n >= 2 * L) {
    T acc[L];
    for (int j = 0; j < L; ++j) acc[j] = x[j];
    for (i = L; i + L <= n; i += L)
      for (int j = 0; j < L; ++j) acc[j] = ext2<IsMax>(acc[j], x[i + j]);
    for (int j = 0; j < L; ++j) m = ext2<IsMax>(m, acc[j]);
  }
  for (; i < n; ++i) m = ext2<IsMax>(m, x[i]);
  return m;
}

// out[0, w) = elementwise max/min of `rows` rows (or folds them into out
// when `fold`).
template <class T, bool IsMax>
MSL_SIMD_CLONES void col_block_ext(const T* __restrict x, int64_t rows, int64_t stride, int64_t w, T* __restrict out,
                                   bool fold) {
  int64_t r = 0;
  if (!fold) {
    for (int64_t j = 0; j < w; ++j) out[j] = x[j];
    r = 1;
  }
  for (; r < rows; ++r) {
    const T* p = x + r * stride;
    for (int64_t j = 0; j < w; ++j) out[j] = ext2<IsMax>(out[j], p[j]);
  }
}

// ------------------------------------------------------- policies

template <class T>
inline T* alloc_array(int64_t n) {
  return new T[static_cast<size_t>(n > 0 ? n : 1)];
}

template <class Out, class V>
inline Out store_as(V v) {
  if constexpr (kIsHalfLike<Out>)
    return from_compute<Out>(static_cast<float>(v));
  else
    return static_cast<Out>(v);
}

// Sum: blocks in Blk, block partials added in order in Acc.
template <class In>
struct SumPolicy {
  static constexpr bool kFloat = std::is_floating_point_v<In>;
  using Blk = std::conditional_t<kFloat, In, int64_t>;
  using Acc = std::conditional_t<kFloat, double, int64_t>;
  static Blk row_block(const In* x, int64_t n) { return lane_sum<In, Blk>(x, n); }
  static void col_block(const In* x, int64_t rows, int64_t stride, int64_t w, Blk* out) {
    col_block_sum<In, Blk>(x, rows, stride, w, out);
  }
  static void fold(Acc& acc, Blk b) { acc += static_cast<Acc>(b); }
  static void fold_row(Acc* acc, const Blk* b, int64_t w) { add_into<Blk, Acc>(acc, b, w); }
};

template <class In, bool IsMax>
struct ExtPolicy {
  using Blk = In;
  using Acc = In;
  static Blk row_block(const In* x, int64_t n) { return lane_ext<In, IsMax>(x, n); }
  static void col_block(const In* x, int64_t rows, int64_t stride, int64_t w, Blk* out) {
    col_block_ext<In, IsMax>(x, rows, stride, w, out, false);
  }
  static void fold(Acc& acc, Blk b) { acc = ext2<IsMax>(acc, b); }
  static void fold_row(Acc* acc, const Blk* b, int64_t w) { col_block_ext<In, IsMax>(b, 1, 0, w, acc, true); }
};

// out[a] = reduction of row a of x ([A, R]).
template <class P, class In, class Out>
void reduce_rows(const In* x, int64_t A, int64_t R, Out* out) {
  using Blk = typename P::Blk;
  using Acc = typename P::Acc;
  int64_t nb = (R + kRowBlock - 1) / kRowBlock;
  auto block = [&](const In* row, int64_t k) {
    return P::row_block(row + k * kRowBlock, std::min(kRowBlock, R - k * kRowBlock));
  };
  if (A >= num_threads() || R < 2 * kParallelGrain) {
    parallel_for(A, std::max<int64_t>(1, kParallelGrain / R), [&](int64_t a0, int64_t a1) {
      for (int64_t a = a0; a < a1; ++a) {
        const In* row = x + a * R;
        Acc acc = static_cast<Acc>(block(row, 0));
        for (int64_t k = 1; k < nb; ++k) P::fold(acc, block(row, k));
        out[a] = store_as<Out>(acc);
      }
    });
    return;
  }
  // Few long rows: the blocks of each row in parallel, folded in order.
  std::unique_ptr<Blk[]> part(alloc_array<Blk>(nb));
  for (int64_t a = 0; a < A; ++a) {
    const In* row = x + a * R;
    parallel_for(nb, std::max<int64_t>(1, kParallelGrain / kRowBlock), [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) part[k] = block(row, k);
    });
    Acc acc = static_cast<Acc>(part[0]);
    for (int64_t k = 1; k < nb; ++k) P::fold(acc, part[k]);
    out[a] = store_as<Out>(acc);
  }
}

// out[a, b] = reduction over r of x[a, r, b] ([A, R, B], B > 1).
template <class P, class In, class Out>
void reduce_cols(const In* x, int64_t A, int64_t R, int64_t B, Out* out) {
  using Blk = typename P::Blk;
  using Acc = typename P::Acc;
  int64_t tiles = (B + kColTile - 1) / kColTile, items = A * tiles;
  int64_t nb = (R + kColBlock - 1) / kColBlock;
  auto geometry = [&](int64_t it, const In*& base, int64_t& b0, int64_t& w) {
    int64_t a = it / tiles;
    b0 = (it % tiles) * kColTile;
    w = std::min(kColTile, B - b0);
    base = x + a * R * B + b0;
    return a;
  };
  auto finish = [&](int64_t a, int64_t b0, int64_t w, const Acc* acc) {
    for (int64_t j = 0; j < w; ++j) out[a * B + b0 + j] = store_as<Out>(acc[j]);
  };
  auto block = [&](const In* base, int64_t k, int64_t w, Blk* dst) {
    P::col_block(base + k * kColBlock * B, std::min(kColBlock, R - k * kColBlock), B, w, dst);
  };
  auto fold_first = [&](Acc* acc, const Blk* b, int64_t w) {
    for (int64_t j = 0; j < w; ++j) acc[j] = static_cast<Acc>(b[j]);
  };
  if (items >= num_threads() || R * std::min(B, kColTile) < 2 * kParallelGrain) {
    parallel_for(items, std::max<int64_t>(1, kParallelGrain / (R * std::min(B, kColTile))),
                 [&](int64_t i0, int64_t i1) {
                   std::unique_ptr<Blk[]> blk(alloc_array<Blk>(kColTile));
                   std::unique_ptr<Acc[]> acc(alloc_array<Acc>(kColTile));
                   for (int64_t it = i0; it < i1; ++it) {
                     const In* base;
                     int64_t b0, w;
                     int64_t a = geometry(it, base, b0, w);
                     block(base, 0, w, blk.get());
                     fold_first(acc.get(), blk.get(), w);
                     for (int64_t k = 1; k < nb; ++k) {
                       block(base, k, w, blk.get());
                       P::fold_row(acc.get(), blk.get(), w);
                     }
                     finish(a, b0, w, acc.get());
                   }
                 });
    return;
  }
  // Few tiles with many rows: the row blocks of each tile in parallel.
  std::unique_ptr<Blk[]> part(alloc_array<Blk>(nb * kColTile));
  std::unique_ptr<Acc[]> acc(alloc_array<Acc>(kColTile));
  for (int64_t it = 0; it < items; ++it) {
    const In* base;
    int64_t b0, w;
    int64_t a = geometry(it, base, b0, w);
    parallel_for(nb, std::max<int64_t>(1, kParallelGrain / (kColBlock * w)), [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) block(base, k, w, part.get() + k * w);
    });
    fold_first(acc.get(), part.get(), w);
    for (int64_t k = 1; k < nb; ++k) P::fold_row(acc.get(), part.get() + k * w, w);
    finish(a, b0, w, acc.get());
  }
}

// ------------------------------------------------------------- driver

struct Group {
  int64_t size;
  bool reduced;
};

// Collapsed groups of a contiguous shape (size-1 dimensions dropped).
std::vector<Group> make_groups(const Dims& shape, uint32_t mask) {
  std::vector<Group> g;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool r = mask & (1u << i);
    if (!g.empty() && g.back().reduced == r)
      g.back().size *= shape[i];
    else
      g.push_back({shape[i], r});
  }
  return g;
}

template <template <class> class P, class In, class Out>
void reduce_groups(const In* x, std::vector<Group> g, Out* out) {
  int k = -1, nred = 0;
  for (int i = 0; i < static_cast<int>(g.size()); ++i)
    if (g[i].reduced) k = i, ++nred;
  int64_t A = 1, B = 1, R = g[k].size;
  for (int i = 0; i < k; ++i) A *= g[i].size;
  for (int i = k + 1; i < static_cast<int>(g.size()); ++i) B *= g[i].size;
  auto pass = [&](auto* dst) {
    using D = std::remove_pointer_t<decltype(dst)>;
    if (B == 1)
      reduce_rows<P<In>, In, D>(x, A, R, dst);
    else
      reduce_cols<P<In>, In, D>(x, A, R, B, dst);
  };
  if (nred == 1) {
    pass(out);
    return;
  }
  using Acc = typename P<In>::Acc;
  std::unique_ptr<Acc[]> tmp(alloc_array<Acc>(A * B));
  pass(tmp.get());
  // The reduced group disappears; the kept groups around it merge.
  if (k + 1 < static_cast<int>(g.size())) {
    g[k - 1].size *= g[k + 1].size;
    g.erase(g.begin() + k, g.begin() + k + 2);
  } else {
    g.erase(g.begin() + k);
  }
  reduce_groups<P, Acc, Out>(tmp.get(), std::move(g), out);
}

template <class In>
using MaxPolicy = ExtPolicy<In, true>;
template <class In>
using MinPolicy = ExtPolicy<In, false>;

template <template <class> class P>
void run_reduce(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  uint32_t mask = reduce_mask(prim_name(a.prim), a.attrs, x.ndim());
  if (reduced_count(x.shape(), mask) == 0) {  // a sum over nothing (max/min rejected this in inference)
    std::memset(out.raw(), 0, out.nbytes());
    return;
  }
  DType wide = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16 ? DType::Float32 : x.dtype();
  Tensor xc = contiguous_as(x, wide);
  std::vector<Group> g = make_groups(x.shape(), mask);
  bool any_reduced = false;
  for (auto& gr : g) any_reduced |= gr.reduced;
  if (!any_reduced) {  // only size-1 axes reduced: a copy with the output's shape
    copy_convert(Tensor::view(xc, out.shape(), contiguous_strides(out.shape()), xc.offset()), out);
    return;
  }
  visit_dtype(wide, [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    if constexpr (!kIsHalfLike<In>) {
      visit_dtype(out.dtype(), [&](auto out_tag) {
        using Out = typename decltype(out_tag)::type;
        constexpr bool ok = std::is_same_v<In, Out> || (std::is_same_v<In, float> && kIsHalfLike<Out>) ||
                            (std::is_same_v<P<In>, SumPolicy<In>> && std::is_integral_v<In> && std::is_integral_v<Out>);
        if constexpr (ok) reduce_groups<P, In, Out>(xc.data<In>(), g, out.data<Out>());
      });
    }
  });
}

// -------------------------------------------------------- argmax / argmin

template <bool IsMax, class T>
inline bool arg_better(T v, T best) {  // strictly better; the first NaN wins and stays
  if constexpr (IsMax)
    return v > best || (v != v && best == best);
  else
    return v < best || (v != v && best == best);
}

// First index of m in x[0, n) (of a NaN when m is NaN): blocks are scanned
// with a vectorizable any-test, then searched one by one.
template <class T>
MSL_SIMD_CLONES int64_t first_index(const T* __restrict x, int64_t n, T m) {
  constexpr int64_t L = 64;
  bool nan = m != m;
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    int hit = 0;
    for (int64_t j = 0; j < L; ++j) hit |= nan ? x[i + j] != x[i + j] : x[i + j] == m;
    if (hit) break;
  }
  for (; i < n; ++i)
    if (nan ? x[i] != x[i] : x[i] == m) return i;
  return 0;
}

template <class T, bool IsMax>
MSL_SIMD_CLONES void arg_cols(const T* __restrict x, int64_t R, int64_t stride, int64_t w, T* __restrict best,
                              int32_t* __restrict idx) {
  for (int64_t j = 0; j < w; ++j) {
    best[j] = x[j];
    idx[j] = 0;
  }
  for (int64_t r = 1; r < R; ++r) {
    const T* p = x + r * stride;
    int32_t rr = static_cast<int32_t>(r);
    for (int64_t j = 0; j < w; ++j) {
      bool b = arg_better<IsMax>(p[j], best[j]);
      best[j] = b ? p[j] : best[j];
      idx[j] = b ? rr : idx[j];
    }
  }
}

template <class T, bool IsMax>
void arg_reduce(const T* x, int64_t A, int64_t R, int64_t B, int32_t* out) {
  if (B == 1) {
    parallel_for(A, std::max<int64_t>(1, kParallelGrain / R), [&](int64_t a0, int64_t a1) {
      for (int64_t a = a0; a < a1; ++a) {
        const T* row = x + a * R;
        out[a] = static_cast<int32_t>(first_index(row, R, lane_ext<T, IsMax>(row, R)));
      }
    });
    return;
  }
  int64_t tiles = (B + kColTile - 1) / kColTile;
  parallel_for(A * tiles, std::max<int64_t>(1, kParallelGrain / (R * std::min(B, kColTile))),
               [&](int64_t i0, int64_t i1) {
                 std::unique_ptr<T[]> best(alloc_array<T>(kColTile));
                 for (int64_t it = i0; it < i1; ++it) {
                   int64_t a = it / tiles, b0 = (it % tiles) * kColTile, w = std::min(kColTile, B - b0);
                   arg_cols<T, IsMax>(x + a * R * B + b0, R, B, w, best.get(), out + a * B + b0);
                 }
               });
}

void infer_arg(const InferArgs& a) {
  const char* op = prim_name(a.prim);
  const TensorSpec& x = a.in[0];
  int nd = x.shape.size();
  int axis = normalize_axis(op, a.attrs.get_int("axis", -1), nd);
  bool keep = a.attrs.get_bool("keep_dims");
  Dims shape = nd == 0 ? Dims{} : reduced_shape(x.shape, 1u << axis, keep);
  int64_t len = nd == 0 ? 1 : x.shape[axis];
  if (len == 0 && shape.product() != 0)
    throw ValueError(fmt::format("{}: axis {} has size 0 (an empty sequence has no {})", op, axis,
                                 a.prim == Prim::argmax ? "maximum" : "minimum"));
  if (len > INT32_MAX)
    throw ValueError(fmt::format("{}: axis {} has {} elements, more than an int32 index can hold", op, axis, len));
  a.out[0] = {DType::Int32, shape};
}

template <bool IsMax>
void run_arg(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  int nd = x.ndim();
  if (nd == 0) {
    out.data<int32_t>()[0] = 0;
    return;
  }
  int axis = normalize_axis(prim_name(a.prim), a.attrs.get_int("axis", -1), nd);
  DType wide = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16 ? DType::Float32 : x.dtype();
  Tensor xc = contiguous_as(x, wide);
  int64_t A = 1, B = 1, R = x.dim(axis);
  for (int i = 0; i < axis; ++i) A *= x.dim(i);
  for (int i = axis + 1; i < nd; ++i) B *= x.dim(i);
  visit_dtype(wide, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsHalfLike<T>) arg_reduce<T, IsMax>(xc.data<T>(), A, R, B, out.data<int32_t>());
  });
}

}  // namespace

void infer_reduce_sum(const InferArgs& a) { infer_reduce(a); }
void infer_reduce_max(const InferArgs& a) { infer_reduce(a); }
void infer_reduce_min(const InferArgs& a) { infer_reduce(a); }
void cpu_reduce_sum(const KernelArgs& a) { run_reduce<SumPolicy>(a); }
void cpu_reduce_max(const KernelArgs& a) { run_reduce<MaxPolicy>(a); }
void cpu_reduce_min(const KernelArgs& a) { run_reduce<MinPolicy>(a); }

void infer_argmax(const InferArgs& a) { infer_arg(a); }
void infer_argmin(const InferArgs& a) { infer_arg(a); }
void cpu_argmax(const KernelArgs& a) { run_arg<true>(a); }
void cpu_argmin(const KernelArgs& a) { run_arg<false>(a); }

}  // namespace msl::kernels
