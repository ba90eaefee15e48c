// The primitives NumPy-style indexing is made of (interp/tensor/tensor_index.cpp):
// gather_nd, tensor_scatter_update, tensor_scatter_add, nonzero,
// masked_fill and strided_slice_update, with MindSpore's names and
// semantics. The scatters and updates are functional: they return a new
// tensor and leave x alone (an eager `x[i] = v` assigns the result back).
//
// N-d index geometry: indices has shape [..., K]; each of its rows names one
// position in the first K dimensions of x, and that position's trailing
// block of x.shape[K:] elements (`inner`, contiguous in a contiguous x) is
// what is read or written. Indices may be negative and count from the end,
// as in NumPy's x[idx] (MindSpore's GatherNd takes only [0, n)). Every row is
// checked before anything is written: a bad index raises IndexOutOfRange
// (errors.h), naming the index dimension so the binding can name the axis
// of x that the user indexed.
//
// Repeated positions: tensor_scatter_update writes rows in order, so the
// last one wins (NumPy's x[idx] = v); tensor_scatter_add sums them, in row
// order (deterministic, no atomics).
//
// nonzero's output length depends on the data: inference gives the upper
// bound x.numel() and the kernel returns a view of its first nnz rows. The
// tracer refuses it (a graph would hold the bound as the shape), so graph
// mode runs what needs it eagerly; see interp/tensor/tensor_index.cpp.
#include <fmt/format.h>

#include <cstring>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

using namespace strided_iter;

// Where the rows of an [..., K] index tensor point in x.
struct NdGeom {
  int K = 0;
  int64_t rows = 0;   // indices.numel() / K
  int64_t inner = 1;  // elements of x.shape[K:]
};

NdGeom nd_geom(const char* op, const TensorSpec& x, const TensorSpec& ind) {
  if (ind.dtype != DType::Int32 && ind.dtype != DType::Int64)
    throw DTypeError(fmt::format("{}: indices must be Int32 or Int64, got {}", op, dtype_display_name(ind.dtype)));
  if (ind.shape.size() == 0)
    throw ShapeError(fmt::format("{}: indices must have at least one dimension (the last one indexes x)", op));
  NdGeom g;
  g.K = static_cast<int>(ind.shape[ind.shape.size() - 1]);
  if (g.K < 1 || g.K > x.shape.size())
    throw ShapeError(fmt::format("{}: the last dimension of indices {} must be between 1 and the rank {} of x", op,
                                 ind.shape.str(), x.shape.size()));
  g.rows = 1;
  for (int i = 0; i + 1 < ind.shape.size(); ++i) g.rows *= ind.shape[i];
  for (int i = g.K; i < x.shape.size(); ++i) g.inner *= x.shape[i];
  return g;
}

// indices.shape[:-1] + x.shape[K:]: the shape gather_nd makes and the
// scatters take as updates.
Dims nd_result_shape(const char* op, const TensorSpec& x, const TensorSpec& ind, const NdGeom& g) {
  int nd = ind.shape.size() - 1 + x.shape.size() - g.K;
  if (nd > kMaxDims)
    throw ShapeError(fmt::format("{}: the result would have {} dimensions, more than {}", op, nd, kMaxDims));
  Dims out;
  for (int i = 0; i + 1 < ind.shape.size(); ++i) out.push_back(ind.shape[i]);
  for (int i = g.K; i < x.shape.size(); ++i) out.push_back(x.shape[i]);
  return out;
}

// The block offset (in units of `inner`) of every index row, all checked
// before the caller writes anything.
std::vector<int64_t> row_offsets(const char* op, const Tensor& indices, const Dims& xshape, const NdGeom& g) {
  Tensor ind = contiguous_fast(indices);
  std::vector<int64_t> offs(static_cast<size_t>(g.rows));
  auto run = [&](auto* idx) {
    for (int64_t r = 0; r < g.rows; ++r) {
      int64_t off = 0;
      for (int j = 0; j < g.K; ++j) {
        int64_t n = xshape[j];
        int64_t v = static_cast<int64_t>(idx[r * g.K + j]);
        if (v < -n || v >= n) throw IndexOutOfRange(op, v, j, n);
        off = off * n + (v < 0 ? v + n : v);
      }
      offs[static_cast<size_t>(r)] = off;
    }
  };
  if (ind.dtype() == DType::Int32)
    run(ind.data<int32_t>());
  else
    run(ind.data<int64_t>());
  return offs;
}

void check_updates(const char* op, const TensorSpec& x, const TensorSpec& ind, const TensorSpec& upd) {
  NdGeom g = nd_geom(op, x, ind);
  if (upd.dtype != x.dtype)
    throw DTypeError(fmt::format("{}: updates dtype {} does not match x dtype {}", op, dtype_display_name(upd.dtype),
                                 dtype_display_name(x.dtype)));
  Dims want = nd_result_shape(op, x, ind, g);
  if (upd.shape != want)
    throw ShapeError(fmt::format("{}: updates has shape {} but x of shape {} with indices of shape {} needs {}", op,
                                 upd.shape.str(), x.shape.str(), ind.shape.str(), want.str()));
}

}  // namespace

IndexOutOfRange::IndexOutOfRange(const char* op, int64_t index_, int dim_, int64_t size_)
    : IndexError(fmt::format("{}: index {} is out of bounds for axis {} with size {}", op, index_, dim_, size_)),
      index(index_),
      dim(dim_),
      size(size_) {}

// --------------------------------------------------------------- gather_nd

void infer_gather_nd(const InferArgs& a) {
  NdGeom g = nd_geom("gather_nd", a.in[0], a.in[1]);
  a.out[0] = {a.in[0].dtype, nd_result_shape("gather_nd", a.in[0], a.in[1], g)};
}

void cpu_gather_nd(const KernelArgs& a) {
  NdGeom g = nd_geom("gather_nd", a.in[0].spec(), a.in[1].spec());
  std::vector<int64_t> offs = row_offsets("gather_nd", a.in[1], a.in[0].shape(), g);
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  Tensor x = contiguous_fast(a.in[0]);
  size_t block = static_cast<size_t>(g.inner) * x.itemsize();
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(out.raw());
  parallel_for(g.rows, std::max<int64_t>(1, kParallelGrain / g.inner), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      std::memcpy(dst + r * block, src + offs[static_cast<size_t>(r)] * block, block);
  });
}

// --------------------------------------------------- tensor_scatter_update

void infer_tensor_scatter_update(const InferArgs& a) {
  check_updates("tensor_scatter_update", a.in[0], a.in[1], a.in[2]);
  a.out[0] = {a.in[0].dtype, a.in[0].shape};
}

void cpu_tensor_scatter_update(const KernelArgs& a) {
  NdGeom g = nd_geom("tensor_scatter_update", a.in[0].spec(), a.in[1].spec());
  std::vector<int64_t> offs = row_offsets("tensor_scatter_update", a.in[1], a.in[0].shape(), g);
  const Tensor& out = a.out[0];
  copy_same_dtype(a.in[0], out);
  if (out.numel() == 0 || g.rows == 0) return;
  Tensor upd = contiguous_fast(a.in[2]);
  size_t block = static_cast<size_t>(g.inner) * out.itemsize();
  const char* src = static_cast<const char*>(upd.raw());
  char* dst = static_cast<char*>(out.raw());
  // In row order: a repeated position keeps the last row's values.
  for (int64_t r = 0; r < g.rows; ++r) std::memcpy(dst + offs[static_cast<size_t>(r)] * block, src + r * block, block);
}

// ------------------------------------------------------ tensor_scatter_add

void infer_tensor_scatter_add(const InferArgs& a) {
  if (a.in[0].dtype == DType::Bool) throw DTypeError("tensor_scatter_add: unsupported dtype Bool");
  check_updates("tensor_scatter_add", a.in[0], a.in[1], a.in[2]);
  a.out[0] = {a.in[0].dtype, a.in[0].shape};
}

void cpu_tensor_scatter_add(const KernelArgs& a) {
  NdGeom g = nd_geom("tensor_scatter_add", a.in[0].spec(), a.in[1].spec());
  std::vector<int64_t> offs = row_offsets("tensor_scatter_add", a.in[1], a.in[0].shape(), g);
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  // 16-bit floats accumulate in float32 and round once, as scatter_add.
  DType dt = out.dtype();
  bool half = dt == DType::Float16 || dt == DType::BFloat16;
  DType acc_dt = half ? DType::Float32 : dt;
  Tensor acc = half ? Tensor(DType::Float32, out.shape(), out.device()) : out;
  copy_convert(a.in[0], acc);
  Tensor upd = contiguous_as(a.in[2], acc_dt);
  int64_t inner = g.inner;
  visit_dtype(acc_dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsHalfLike<T> && !std::is_same_v<T, bool>) {
      T* o = acc.data<T>();
      const T* u = upd.data<T>();
      // Split over the columns of a block: no two threads add into one element.
      parallel_for(inner, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.rows)),
                   [&](int64_t c0, int64_t c1) {
                     for (int64_t r = 0; r < g.rows; ++r) {
                       T* d = o + offs[static_cast<size_t>(r)] * inner;
                       const T* s = u + r * inner;
                       for (int64_t c = c0; c < c1; ++c) d[c] = static_cast<T>(d[c] + s[c]);
                     }
                   });
    }
  });
  if (half) copy_convert(acc, out);
}

// ----------------------------------------------------------------- nonzero

void infer_nonzero(const InferArgs& a) {
  const TensorSpec& x = a.in[0];
  if (x.shape.size() == 0) throw ValueError("nonzero: x must have at least one dimension");
  // The length is data-dependent: numel() is its upper bound (see above).
  a.out[0] = {DType::Int64, Dims{x.shape.product(), static_cast<int64_t>(x.shape.size())}};
}

void cpu_nonzero(const KernelArgs& a) {
  Tensor x = contiguous_as(a.in[0], DType::Bool);
  const Tensor& out = a.out[0];
  int nd = x.ndim();
  int64_t n = x.numel(), nnz = 0;
  const bool* m = x.data<bool>();
  int64_t* o = out.data<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    if (!m[k]) continue;
    int64_t rest = k;
    for (int j = nd - 1; j >= 0; --j) {
      o[nnz * nd + j] = rest % x.dim(j);
      rest /= x.dim(j);
    }
    ++nnz;
  }
  Dims shape{nnz, static_cast<int64_t>(nd)};
  a.out[0] = Tensor::view(out, shape, contiguous_strides(shape), out.offset());
}

// ------------------------------------------------------------- masked_fill

void infer_masked_fill(const InferArgs& a) {
  const TensorSpec &x = a.in[0], &mask = a.in[1], &value = a.in[2];
  if (mask.dtype != DType::Bool)
    throw DTypeError(fmt::format("masked_fill: mask must be Bool, got {}", dtype_display_name(mask.dtype)));
  if (value.dtype != x.dtype)
    throw DTypeError(fmt::format("masked_fill: value dtype {} does not match x dtype {}",
                                 dtype_display_name(value.dtype), dtype_display_name(x.dtype)));
  Dims b = broadcast_shapes("masked_fill", x.shape, broadcast_shapes("masked_fill", mask.shape, value.shape));
  if (b != x.shape)
    throw ShapeError(fmt::format("masked_fill: mask of shape {} and value of shape {} must broadcast to x's shape {}",
                                 mask.shape.str(), value.shape.str(), x.shape.str()));
  a.out[0] = {x.dtype, x.shape};
}

void cpu_masked_fill(const KernelArgs& a) {
  // select(mask, value, x) with the output shape x's: the select kernel's
  // broadcasting loops, called directly (not through the registry, so the
  // profile and the dump see one masked_fill).
  const Tensor in[3] = {a.in[1], a.in[2], a.in[0]};
  cpu_select(KernelArgs{Prim::select, std::span<const Tensor>(in, 3), a.attrs, a.out});
}

// ---------------------------------------------------- strided_slice_update

void infer_strided_slice_update(const InferArgs& a) {
  const TensorSpec &x = a.in[0], &v = a.in[1];
  TensorSpec slice;
  infer_strided_slice(InferArgs{Prim::strided_slice, std::span<const TensorSpec>(&x, 1), a.attrs,
                                std::span<TensorSpec>(&slice, 1)});
  if (v.dtype != x.dtype)
    throw DTypeError(fmt::format("strided_slice_update: value dtype {} does not match x dtype {}",
                                 dtype_display_name(v.dtype), dtype_display_name(x.dtype)));
  if (v.shape != slice.shape)
    throw ShapeError(fmt::format("strided_slice_update: value has shape {} but the slice of x has shape {}",
                                 v.shape.str(), slice.shape.str()));
  a.out[0] = {x.dtype, x.shape};
}

void cpu_strided_slice_update(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  copy_same_dtype(a.in[0], out);
  // The slice as a view of the output, by strided_slice's own rules.
  Tensor window;
  cpu_strided_slice(KernelArgs{Prim::strided_slice, std::span<const Tensor>(&out, 1), a.attrs,
                               std::span<Tensor>(&window, 1)});
  if (window.numel() > 0) copy_same_dtype(a.in[1], window);
}

}  // namespace msl::kernels
