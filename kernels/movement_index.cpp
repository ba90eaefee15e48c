// Indexing primitives: gather, scatter_add (its adjoint) and one_hot.
//
// Geometry: params is viewed as [outer, N, inner] around the indexed axis
// and the output of gather as [outer, K, inner] with K = indices.numel(), so
// each (outer, k) pair copies one contiguous run of `inner` elements: a
// memcpy for embedding-like lookups (large inner) and a typed element copy
// when inner == 1 (taking along the last axis).
//
// Indices are validated in full before anything is written, so a bad index
// raises IndexError with nothing half-done. Negative indices are errors, as
// in MindSpore's Gather and torch.index_select (NumPy's wrap-around would
// hide off-by-one bugs in index arithmetic).
//
// scatter_add is deterministic: every output element receives its updates in
// index order, and the parallel split (over `outer`, or over columns of
// `inner`) never makes two threads add into the same element, so no atomics
// are needed and results do not depend on the thread count. 16-bit floats
// accumulate in float32 and are rounded once at the end.
#include <fmt/format.h>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

using namespace strided_iter;

void check_index_dtype(const char* op, const char* what, DType dt) {
  if (dt != DType::Int32 && dt != DType::Int64)
    throw DTypeError(fmt::format("{}: {} must be Int32 or Int64, got {}", op, what, dtype_display_name(dt)));
}

// params.shape[:axis] + indices.shape + params.shape[axis+1:].
Dims indexed_shape(const char* op, const Dims& params, const Dims& indices, int axis) {
  int nd = params.size() - 1 + indices.size();
  if (nd > kMaxDims)
    throw ShapeError(fmt::format("{}: the result would have {} dimensions, more than {}", op, nd, kMaxDims));
  Dims out;
  for (int i = 0; i < axis; ++i) out.push_back(params[i]);
  for (int64_t d : indices) out.push_back(d);
  for (int i = axis + 1; i < params.size(); ++i) out.push_back(params[i]);
  return out;
}

int indexed_axis(const char* op, const TensorSpec& params, const Attrs& attrs) {
  if (params.shape.size() == 0) throw ValueError(fmt::format("{}: cannot index a zero-dimensional tensor", op));
  return normalize_axis(op, attrs.get_int("axis", 0), params.shape.size());
}

struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};

Split split_at(const Dims& shape, int axis) {
  Split s;
  s.n = shape[axis];
  for (int i = 0; i < axis; ++i) s.outer *= shape[i];
  for (int i = axis + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

// IndexError for the first index outside [0, n).
template <class I>
void check_indices(const char* op, const I* idx, int64_t k, int64_t n, int axis) {
  bool bad = false;
  for (int64_t i = 0; i < k; ++i) bad |= idx[i] < 0 || idx[i] >= n;
  if (!bad) return;
  for (int64_t i = 0; i < k; ++i)
    if (idx[i] < 0 || idx[i] >= n)
      throw IndexError(fmt::format("{}: index {} is out of range for axis {} with size {}", op,
                                   static_cast<int64_t>(idx[i]), axis, n));
}

template <class F>
decltype(auto) visit_index(DType dt, F&& f) {
  if (dt == DType::Int32) return f(Tag<int32_t>{});
  return f(Tag<int64_t>{});
}

// -------------------------------------------------------------- scatter_add

template <class T, class I>
void scatter_rows(T* out, const T* upd, const I* idx, const Split& s, int64_t K) {
  auto run = [&](int64_t o0, int64_t o1, int64_t c0, int64_t c1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t k = 0; k < K; ++k) {
        T* d = out + (o * s.n + idx[k]) * s.inner;
        const T* u = upd + (o * K + k) * s.inner;
        for (int64_t j = c0; j < c1; ++j) d[j] = static_cast<T>(d[j] + u[j]);
      }
  };
  int64_t work = s.outer * K * s.inner;
  if (s.outer >= num_threads() || s.inner < 256) {
    parallel_for(s.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, K * s.inner)),
                 [&](int64_t o0, int64_t o1) { run(o0, o1, 0, s.inner); });
  } else if (work >= kParallelGrain) {
    parallel_for(s.inner, 64, [&](int64_t c0, int64_t c1) { run(0, s.outer, c0, c1); });
  } else {
    run(0, s.outer, 0, s.inner);
  }
}

}  // namespace

// ------------------------------------------------------------------ gather

void infer_gather(const InferArgs& a) {
  check_index_dtype("gather", "indices", a.in[1].dtype);
  int axis = indexed_axis("gather", a.in[0], a.attrs);
  a.out[0] = {a.in[0].dtype, indexed_shape("gather", a.in[0].shape, a.in[1].shape, axis)};
}

void cpu_gather(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  int axis = indexed_axis("gather", a.in[0].spec(), a.attrs);
  Tensor params = contiguous_fast(a.in[0]);
  Tensor indices = contiguous_fast(a.in[1]);
  Split s = split_at(params.shape(), axis);
  int64_t K = indices.numel();
  visit_index(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = indices.data<I>();
    check_indices("gather", idx, K, s.n, axis);
    if (out.numel() == 0) return;
    visit_itemsize(params.itemsize(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U* src = params.data<U>();
      U* dst = out.data<U>();
      int64_t inner = s.inner;
      parallel_for(s.outer * K, std::max<int64_t>(1, kParallelGrain / inner), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          int64_t o = r / K, k = r % K;
          const U* sp = src + (o * s.n + idx[k]) * inner;
          if (inner == 1)
            dst[r] = *sp;
          else
            std::memcpy(dst + r * inner, sp, static_cast<size_t>(inner) * sizeof(U));
        }
      });
    });
  });
}

// ------------------------------------------------------------- scatter_add

void infer_scatter_add(const InferArgs& a) {
  const TensorSpec &x = a.in[0], &ind = a.in[1], &upd = a.in[2];
  check_index_dtype("scatter_add", "indices", ind.dtype);
  if (x.dtype == DType::Bool) throw DTypeError("scatter_add: unsupported dtype Bool");
  if (upd.dtype != x.dtype)
    throw DTypeError(fmt::format("scatter_add: updates dtype {} does not match x dtype {}",
                                 dtype_display_name(upd.dtype), dtype_display_name(x.dtype)));
  int axis = indexed_axis("scatter_add", x, a.attrs);
  Dims want = indexed_shape("scatter_add", x.shape, ind.shape, axis);
  if (upd.shape != want)
    throw ShapeError(
        fmt::format("scatter_add: updates has shape {} but x of shape {} with indices of shape {} along "
                    "axis {} needs {}",
                    upd.shape.str(), x.shape.str(), ind.shape.str(), axis, want.str()));
  a.out[0] = x;
}

void cpu_scatter_add(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  int axis = indexed_axis("scatter_add", a.in[0].spec(), a.attrs);
  Tensor indices = contiguous_fast(a.in[1]);
  Split s = split_at(a.in[0].shape(), axis);
  int64_t K = indices.numel();
  visit_index(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = indices.data<I>();
    check_indices("scatter_add", idx, K, s.n, axis);
    if (out.numel() == 0) return;
    DType dt = out.dtype();
    bool half = dt == DType::Float16 || dt == DType::BFloat16;
    DType acc_dt = half ? DType::Float32 : dt;
    Tensor acc = half ? Tensor(DType::Float32, out.shape()) : out;
    copy_convert(a.in[0], acc);
    Tensor upd = contiguous_as(a.in[2], acc_dt);
    visit_dtype(acc_dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!kIsHalfLike<T> && !std::is_same_v<T, bool>)
        scatter_rows<T, I>(acc.data<T>(), upd.data<T>(), idx, s, K);
    });
    if (half) copy_convert(acc, out);
  });
}

// ----------------------------------------------------------------- one_hot

namespace {

struct OneHotGeom {
  int64_t depth;
  int axis;
};

OneHotGeom one_hot_geom(const TensorSpec& ind, const Attrs& attrs) {
  if (!is_integral(ind.dtype))
    throw DTypeError(fmt::format("one_hot: indices must be an integer tensor, got {}", dtype_display_name(ind.dtype)));
  if (!attrs.has("depth")) throw ValueError("one_hot: the depth attribute is required");
  int64_t depth = attrs.get_int("depth");
  if (depth < 0) throw ValueError(fmt::format("one_hot: depth must be >= 0, got {}", depth));
  int nd = ind.shape.size() + 1;
  if (nd > kMaxDims)
    throw ShapeError(fmt::format("one_hot: the result would have {} dimensions, more than {}", nd, kMaxDims));
  return {depth, normalize_axis("one_hot", attrs.get_int("axis", -1), nd)};
}

}  // namespace

void infer_one_hot(const InferArgs& a) {
  OneHotGeom g = one_hot_geom(a.in[0], a.attrs);
  const Dims& s = a.in[0].shape;
  Dims shape;
  for (int i = 0; i <= s.size(); ++i) {
    if (i == g.axis) shape.push_back(g.depth);
    if (i < s.size()) shape.push_back(s[i]);
  }
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 40))
      throw ShapeError(fmt::format("one_hot: a result of {} x depth {} elements is too large", s.str(), g.depth));
  a.out[0] = {a.attrs.get_dtype("dtype", DType::Float32), shape};
}

void cpu_one_hot(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  OneHotGeom g = one_hot_geom(a.in[0].spec(), a.attrs);
  Tensor ind = contiguous_fast(a.in[0]);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < ind.ndim(); ++i) (i < g.axis ? outer : inner) *= ind.dim(i);
  uint64_t on_bits = 0, off_bits = 0;
  store_from_double(&on_bits, out.dtype(), 0, a.attrs.get_float("on_value", 1));
  store_from_double(&off_bits, out.dtype(), 0, a.attrs.get_float("off_value", 0));
  visit_dtype(ind.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* idx = ind.data<I>();
      visit_itemsize(out.itemsize(), [&](auto tag) {
        using U = typename decltype(tag)::type;
        U on, off;
        std::memcpy(&on, &on_bits, sizeof(U));
        std::memcpy(&off, &off_bits, sizeof(U));
        U* o = out.data<U>();
        int64_t depth = g.depth;
        parallel_for(outer, std::max<int64_t>(1, kParallelGrain / (depth * inner)), [&](int64_t o0, int64_t o1) {
          for (int64_t r = o0; r < o1; ++r) {
            U* block = o + r * depth * inner;
            for (int64_t j = 0; j < depth * inner; ++j) block[j] = off;
            for (int64_t i = 0; i < inner; ++i) {
              int64_t v = static_cast<int64_t>(idx[r * inner + i]);
              if (v >= 0 && v < depth) block[v * inner + i] = on;  // outside [0, depth): an all-off row
            }
          }
        });
      });
    }
  });
}

}  // namespace msl::kernels
