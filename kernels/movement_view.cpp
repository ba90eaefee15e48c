// View primitives: reshape, transpose, broadcast_to and strided_slice make a
// new geometry (shape, strides, offset) over the input's storage instead of
// copying, as NumPy and PyTorch do; a write through the view is visible in
// the input and vice versa.
//
// reshape is the one that cannot always be a view: merging dimensions that
// are not contiguous with each other (a transposed matrix flattened) has no
// strides. It then copies the input to a contiguous tensor and views that,
// following PyTorch's `reshape` (view when possible, copy otherwise). The
// test for "possible" is PyTorch's computeStride: the new shape must split
// and merge only runs of dimensions that are contiguous among themselves.
#include <fmt/format.h>

#include <optional>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

std::string tuple_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

// ---------------------------------------------------------------- reshape

Dims reshape_target(const TensorSpec& x, const Attrs& attrs) {
  std::vector<int64_t> req = attrs.get_ints("shape");
  if (req.size() > static_cast<size_t>(kMaxDims))
    throw ShapeError(
        fmt::format("reshape: tensors have at most {} dimensions, got shape {}", kMaxDims, tuple_str(req)));
  int infer_at = -1;
  int64_t known = 1;
  bool overflow = false;
  for (size_t i = 0; i < req.size(); ++i) {
    if (req[i] == -1) {
      if (infer_at >= 0) throw ValueError(fmt::format("reshape: only one dimension can be -1, got {}", tuple_str(req)));
      infer_at = static_cast<int>(i);
    } else if (req[i] < 0) {
      throw ValueError(fmt::format("reshape: invalid dimension {} in shape {}", req[i], tuple_str(req)));
    } else {
      overflow |= __builtin_mul_overflow(known, req[i], &known);
    }
  }
  int64_t n = x.shape.product();
  auto fail = [&] {
    return ShapeError(
        fmt::format("reshape: cannot reshape a tensor of shape {} into {}", x.shape.str(), tuple_str(req)));
  };
  if (overflow) throw fail();
  Dims out(req);
  if (infer_at >= 0) {
    if (known == 0 || n % known != 0) throw fail();
    out[infer_at] = n / known;
  } else if (known != n) {
    throw fail();
  }
  return out;
}

// Strides that view a tensor of (shape, strides) as `target`, when its
// layout allows (PyTorch's computeStride).
std::optional<Dims> view_strides(const Dims& shape, const Dims& strides, const Dims& target) {
  Dims out;
  out.resize(target.size());
  if (shape.product() == 0 || shape.size() == 0) return contiguous_strides(target);
  int view_d = target.size() - 1;
  int64_t chunk_base = strides[shape.size() - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = shape.size() - 1; d >= 0; --d) {
    tensor_numel *= shape[d];
    if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || target[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= target[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = strides[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// -------------------------------------------------------------- transpose

Dims transpose_perm(const TensorSpec& x, const Attrs& attrs) {
  int nd = x.shape.size();
  Dims perm;
  if (!attrs.has("perm")) {  // NumPy's default: reverse the axes
    for (int i = nd - 1; i >= 0; --i) perm.push_back(i);
    return perm;
  }
  std::vector<int64_t> req = attrs.get_ints("perm");
  auto fail = [&] {
    return ValueError(
        fmt::format("transpose: perm {} is not a permutation of the axes of a tensor of rank {}", tuple_str(req), nd));
  };
  if (req.size() != static_cast<size_t>(nd)) throw fail();
  uint32_t seen = 0;
  for (int64_t p : req) {
    if (p < -nd || p >= nd) throw fail();
    int a = static_cast<int>(p < 0 ? p + nd : p);
    if (seen & (1u << a)) throw fail();
    seen |= 1u << a;
    perm.push_back(a);
  }
  return perm;
}

// ----------------------------------------------------------- broadcast_to

Dims broadcast_target(const TensorSpec& x, const Attrs& attrs) {
  std::vector<int64_t> req = attrs.get_ints("shape");
  int nd = x.shape.size(), n = static_cast<int>(req.size());
  auto fail = [&] {
    return ShapeError(fmt::format("broadcast_to: cannot broadcast {} to {}", x.shape.str(), tuple_str(req)));
  };
  if (n > kMaxDims)
    throw ShapeError(
        fmt::format("broadcast_to: tensors have at most {} dimensions, got shape {}", kMaxDims, tuple_str(req)));
  if (n < nd) throw fail();
  Dims out;
  for (int i = 0; i < n; ++i) {
    int j = i - (n - nd);
    int64_t t = req[static_cast<size_t>(i)];
    if (t == -1) {
      if (j < 0)
        throw ValueError(
            fmt::format("broadcast_to: -1 can only keep an existing dimension, got {} for a tensor of shape {}",
                        tuple_str(req), x.shape.str()));
      t = x.shape[j];
    } else if (t < 0) {
      throw ValueError(fmt::format("broadcast_to: invalid dimension {} in shape {}", t, tuple_str(req)));
    }
    if (j >= 0 && x.shape[j] != t && x.shape[j] != 1) throw fail();
    out.push_back(t);
  }
  int64_t count = 1;
  for (int64_t d : out)
    if (__builtin_mul_overflow(count, d, &count) || count > (int64_t{1} << 40)) throw fail();
  return out;
}

// ---------------------------------------------------------- strided_slice

struct AxisSlice {
  int64_t start, step, len;
};

// Python's slice.indices + length (PySlice_AdjustIndices) for one axis.
AxisSlice adjust_slice(int64_t start, int64_t stop, int64_t step, int64_t n) {
  auto clamp = [&](int64_t v) {
    if (v < 0) {
      v += n;  // no overflow: n >= 0 and v < 0
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= n) {
      v = step < 0 ? n - 1 : n;
    }
    return v;
  };
  start = clamp(start);
  stop = clamp(stop);
  int64_t len = 0;
  if (step < 0) {
    if (stop < start) len = step == INT64_MIN ? 1 : (start - stop - 1) / -step + 1;
  } else if (start < stop) {
    len = (stop - start - 1) / step + 1;
  }
  return {start, step, len};
}

std::vector<AxisSlice> slice_axes(const TensorSpec& x, const Attrs& attrs) {
  int nd = x.shape.size();
  std::vector<int64_t> begin = attrs.get_ints("begin", std::vector<int64_t>(static_cast<size_t>(nd), 0));
  std::vector<int64_t> end = attrs.get_ints("end", std::vector<int64_t>(static_cast<size_t>(nd), INT64_MAX));
  std::vector<int64_t> step = attrs.get_ints("strides", std::vector<int64_t>(static_cast<size_t>(nd), 1));
  auto check_len = [&](const char* name, const std::vector<int64_t>& v) {
    if (v.size() != static_cast<size_t>(nd))
      throw ValueError(fmt::format("strided_slice: {} {} needs one entry per dimension of a tensor of rank {}", name,
                                   tuple_str(v), nd));
  };
  check_len("begin", begin);
  check_len("end", end);
  check_len("strides", step);
  std::vector<AxisSlice> out;
  for (int i = 0; i < nd; ++i) {
    if (step[static_cast<size_t>(i)] == 0)
      throw ValueError(fmt::format("strided_slice: slice step cannot be zero (axis {})", i));
    out.push_back(adjust_slice(begin[static_cast<size_t>(i)], end[static_cast<size_t>(i)], step[static_cast<size_t>(i)],
                               x.shape[i]));
  }
  return out;
}

}  // namespace

void infer_reshape(const InferArgs& a) { a.out[0] = {a.in[0].dtype, reshape_target(a.in[0], a.attrs)}; }

void cpu_reshape(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  Dims target = reshape_target(x.spec(), a.attrs);
  if (x.is_contiguous()) {
    a.out[0] = Tensor::view(x, target, contiguous_strides(target), x.offset());
    return;
  }
  if (auto st = view_strides(x.shape(), x.strides(), target)) {
    a.out[0] = Tensor::view(x, target, *st, x.offset());
    return;
  }
  // A device whose memory the host cannot read copies on the device.
  Tensor c = x.device()->type() == DeviceType::CUDA ? x.contiguous() : strided_iter::contiguous_fast(x);
  a.out[0] = Tensor::view(c, target, contiguous_strides(target), c.offset());
}

void infer_transpose(const InferArgs& a) {
  Dims perm = transpose_perm(a.in[0], a.attrs);
  Dims shape;
  for (int64_t p : perm) shape.push_back(a.in[0].shape[static_cast<int>(p)]);
  a.out[0] = {a.in[0].dtype, shape};
}

void cpu_transpose(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  Dims perm = transpose_perm(x.spec(), a.attrs);
  Dims shape, strides;
  for (int64_t p : perm) {
    shape.push_back(x.dim(static_cast<int>(p)));
    strides.push_back(x.strides()[static_cast<int>(p)]);
  }
  a.out[0] = Tensor::view(x, shape, strides, x.offset());
}

void infer_broadcast_to(const InferArgs& a) { a.out[0] = {a.in[0].dtype, broadcast_target(a.in[0], a.attrs)}; }

void cpu_broadcast_to(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  Dims target = broadcast_target(x.spec(), a.attrs);
  a.out[0] = Tensor::view(x, target, broadcast_strides(x.shape(), x.strides(), target), x.offset());
}

void infer_strided_slice(const InferArgs& a) {
  Dims shape;
  for (const AxisSlice& s : slice_axes(a.in[0], a.attrs)) shape.push_back(s.len);
  a.out[0] = {a.in[0].dtype, shape};
}

void cpu_strided_slice(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  std::vector<AxisSlice> axes = slice_axes(x.spec(), a.attrs);
  Dims shape, strides;
  int64_t offset = x.offset();
  bool empty = false;
  for (size_t i = 0; i < axes.size(); ++i) empty |= axes[i].len == 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const AxisSlice& s = axes[i];
    int64_t st = x.strides()[static_cast<int>(i)];
    shape.push_back(s.len);
    // With one element the step never multiplies anything (and may be huge).
    strides.push_back(s.len > 1 ? st * s.step : st);
    if (!empty) offset += s.start * st;
  }
  a.out[0] = Tensor::view(x, shape, strides, offset);
}

}  // namespace msl::kernels
