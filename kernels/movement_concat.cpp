// concat and pad: copies that place whole rows of the input into a new
// tensor.
//
// Both reduce to "copy a run of contiguous elements to a position in the
// output row", so the contiguous (or last-axis-contiguous) cases are memcpy
// of rows, parallel over rows for large tensors. concat hands each input to
// the collapsing strided copy against a view of its slot in the output, which
// makes the whole input one run per output row when it is contiguous and
// still handles any view. Inputs of another dtype go through the converting
// copy (concat promotes to a common dtype, as NumPy does).
//
// pad writes each output row once: border rows are filled with the value,
// interior rows get the fill before, the input row, and the fill after, so
// no element is written twice.
#include <fmt/format.h>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

using namespace strided_iter;

// ----------------------------------------------------------------- concat

int concat_axis(std::span<const TensorSpec> in, const Attrs& attrs) {
  if (in.empty()) throw ValueError("concat: needs at least one input tensor");
  int nd = in[0].shape.size();
  if (nd == 0) throw ValueError("concat: zero-dimensional tensors cannot be concatenated");
  return normalize_axis("concat", attrs.get_int("axis", 0), nd);
}

}  // namespace

void infer_concat(const InferArgs& a) {
  int axis = concat_axis(a.in, a.attrs);
  const Dims& s0 = a.in[0].shape;
  Dims shape = s0;
  DType dt = a.in[0].dtype;
  for (size_t i = 1; i < a.in.size(); ++i) {
    const Dims& s = a.in[i].shape;
    bool ok = s.size() == s0.size();
    for (int d = 0; ok && d < s.size(); ++d) ok = d == axis || s[d] == s0[d];
    if (!ok)
      throw ShapeError(fmt::format("concat: cannot concatenate {} with {} along axis {}", s0.str(), s.str(), axis));
    if (__builtin_add_overflow(shape[axis], s[axis], &shape[axis]) || shape[axis] > (int64_t{1} << 40))
      throw ShapeError(fmt::format("concat: the result along axis {} is too large", axis));
    dt = promote_types(dt, a.in[i].dtype);
  }
  a.out[0] = {dt, shape};
}

void cpu_concat(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  int axis = normalize_axis("concat", a.attrs.get_int("axis", 0), out.ndim());
  int64_t pos = 0;
  for (const Tensor& t : a.in) {
    int64_t len = t.dim(axis);
    if (len > 0) copy_convert(t, Tensor::view(out, t.shape(), out.strides(), out.offset() + pos * out.strides()[axis]));
    pos += len;
  }
}

namespace {

// -------------------------------------------------------------------- pad

std::vector<int64_t> pad_amounts(const TensorSpec& x, const Attrs& attrs) {
  std::vector<int64_t> p = attrs.get_ints("paddings");
  int nd = x.shape.size();
  if (p.size() != static_cast<size_t>(2 * nd))
    throw ValueError(
        fmt::format("pad: paddings need 2 entries (before, after) per dimension of a tensor of rank {}, "
                    "got {}",
                    nd, p.size()));
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] < 0)
      throw ValueError(fmt::format("pad: negative padding {} {} axis {}", p[i], i % 2 ? "after" : "before", i / 2));
  return p;
}

}  // namespace

void infer_pad(const InferArgs& a) {
  std::vector<int64_t> p = pad_amounts(a.in[0], a.attrs);
  Dims shape = a.in[0].shape;
  for (int d = 0; d < shape.size(); ++d) {
    int64_t v;
    if (__builtin_add_overflow(shape[d], p[2 * d], &v) || __builtin_add_overflow(v, p[2 * d + 1], &v) ||
        v > (int64_t{1} << 40))
      throw ShapeError(fmt::format("pad: the padded size of axis {} is too large", d));
    shape[d] = v;
  }
  a.out[0] = {a.in[0].dtype, shape};
}

void cpu_pad(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  std::vector<int64_t> p = pad_amounts(x.spec(), a.attrs);
  int nd = x.ndim();
  if (nd == 0) {
    copy_same_dtype(x, out);
    return;
  }
  // The fill value as the output's bit pattern.
  uint64_t bits = 0;
  store_from_double(&bits, out.dtype(), 0, a.attrs.get_float("value", 0));
  int64_t W = out.dim(nd - 1), inW = x.dim(nd - 1), before = p[2 * nd - 2];
  int64_t xs = x.strides()[nd - 1];
  int64_t rows = out.numel() / W;
  visit_itemsize(out.itemsize(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U v;
    std::memcpy(&v, &bits, sizeof(U));
    U* o = out.data<U>();
    const U* s = x.data<U>();
    auto fill = [&](U* d, int64_t n) {
      for (int64_t i = 0; i < n; ++i) d[i] = v;
    };
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / W), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        U* d = o + r * W;
        // Is this row inside the input along every leading axis?
        int64_t rem = r, src = 0;
        bool inside = inW > 0;
        for (int k = nd - 2; k >= 0 && inside; --k) {
          int64_t i = rem % out.dim(k) - p[2 * k];
          rem /= out.dim(k);
          inside = i >= 0 && i < x.dim(k);
          src += i * x.strides()[k];
        }
        if (!inside) {
          fill(d, W);
          continue;
        }
        fill(d, before);
        U* mid = d + before;
        const U* sp = s + src;
        if (xs == 1)
          std::memcpy(mid, sp, static_cast<size_t>(inW) * sizeof(U));
        else
          for (int64_t i = 0; i < inW; ++i) mid[i] = sp[i * xs];
        fill(mid + inW, W - before - inW);
      }
    });
  });
}

}  // namespace msl::kernels
