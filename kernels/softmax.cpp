// softmax, log_softmax, their gradients, and the two softmax cross-entropy
// losses.
//
// Design choices:
// - Numerically stable: every row subtracts its maximum before exp, and the
//   losses use log-sum-exp, so large logits never overflow.
// - The input is viewed as [A, N, B] around the softmax axis. B == 1 (the
//   last axis of a contiguous tensor, the common case) runs row loops; B > 1
//   runs the same math on tiles of B columns so the inner loops still walk
//   contiguous memory, never a strided gather.
// - float32 uses an inlinable exp (Cody-Waite range reduction and a degree-6
//   polynomial, ~1 ulp) that the compiler vectorizes inside the AVX-512 /
//   AVX2 clones; libm's expf cannot be vectorized without -ffast-math.
//   float64 calls std::exp. float16/bfloat16 are widened to float32 and the
//   results rounded once.
// - Row sums use float lanes within blocks and double across blocks (as the
//   reductions do), so long rows stay accurate.
// - Rows are independent, so the work splits over rows (or row x tile) with
//   parallel_for; results do not depend on the thread count.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

using namespace strided_iter;

// exp(x) = 2^k exp(r), k = round(x / ln2), |r| <= ln2 / 2; exp(r) from the
// Cephes expf polynomial. 2^k is applied as two factors so results down to
// the subnormal range are right. Branch-free so it vectorizes.
__attribute__((always_inline)) inline float exp_f32(float x) {
  constexpr float kHi = 88.72283935546875f, kLo = -103.972076416f;
  float xc = x > kHi ? kHi : x;
  xc = xc < kLo ? kLo : xc;
  xc = x != x ? 0.0f : xc;
  float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  float r = xc - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t ki = static_cast<int32_t>(k);
  int32_t k1 = ki >> 1, k2 = ki - k1;
  float s1, s2;
  int32_t b1 = (k1 + 127) << 23, b2 = (k2 + 127) << 23;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  y = y * s1 * s2;
  y = x > kHi ? std::numeric_limits<float>::infinity() : y;
  y = x < kLo ? 0.0f : y;
  return x != x ? x : y;
}

template <class T>
__attribute__((always_inline)) inline T vexp(T x) {
  if constexpr (std::is_same_v<T, float>)
    return exp_f32(x);
  else
    return std::exp(x);
}

constexpr int64_t kBlock = 1024;  // elements per float partial sum
constexpr int64_t kTile = 256;    // columns per tile when B > 1

// ------------------------------------------------------------- row loops

template <class T>
MSL_SIMD_CLONES T row_max(const T* __restrict x, int64_t n) {
  constexpr int L = 64 / sizeof(T);
  T m = x[0];
  int64_t i = 0;
  if (n >= L) {
    T acc[L];
    for (int j = 0; j < L; ++j) acc[j] = x[j];
    for (i = L; i + L <= n; i += L)
      for (int j = 0; j < L; ++j) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
    for (int j = 0; j < L; ++j) m = acc[j] > m ? acc[j] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// e[i] = exp(x[i] - m); returns the sum of e.
template <class T>
MSL_SIMD_CLONES double row_exp_sum(const T* __restrict x, T m, T* __restrict e, int64_t n) {
  constexpr int L = 64 / sizeof(T);
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t end = std::min(n, b + kBlock), i = b;
    T acc[L] = {};
    for (; i + L <= end; i += L)
      for (int j = 0; j < L; ++j) {
        T v = vexp<T>(x[i + j] - m);
        e[i + j] = v;
        acc[j] += v;
      }
    for (; i < end; ++i) {
      e[i] = vexp<T>(x[i] - m);
      acc[0] += e[i];
    }
    for (int j = 0; j < L; ++j) total += acc[j];
  }
  return total;
}

// The sum of a[i] * b[i] (b == nullptr: of a[i]).
template <class T>
MSL_SIMD_CLONES double row_dot(const T* __restrict a, const T* __restrict b, int64_t n) {
  constexpr int L = 64 / sizeof(T);
  double total = 0;
  for (int64_t s = 0; s < n; s += kBlock) {
    int64_t end = std::min(n, s + kBlock), i = s;
    T acc[L] = {};
    if (b) {
      for (; i + L <= end; i += L)
        for (int j = 0; j < L; ++j) acc[j] += a[i + j] * b[i + j];
      for (; i < end; ++i) acc[0] += a[i] * b[i];
    } else {
      for (; i + L <= end; i += L)
        for (int j = 0; j < L; ++j) acc[j] += a[i + j];
      for (; i < end; ++i) acc[0] += a[i];
    }
    for (int j = 0; j < L; ++j) total += acc[j];
  }
  return total;
}

template <class T>
MSL_SIMD_CLONES void row_scale(T* __restrict y, int64_t n, T s) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

template <class T>
MSL_SIMD_CLONES void row_sub(const T* __restrict x, T* __restrict y, int64_t n, T c) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - c;
}

enum class Mode { Softmax, LogSoftmax };

template <class T, Mode M>
void softmax_row(const T* x, T* y, int64_t n) {
  T m = row_max(x, n);
  if (m == -std::numeric_limits<T>::infinity()) m = 0;  // an all -inf row: exp(-inf) = 0 everywhere
  double s = row_exp_sum(x, m, y, n);
  if constexpr (M == Mode::Softmax)
    row_scale(y, n, static_cast<T>(1.0 / s));
  else
    row_sub(x, y, n, static_cast<T>(m + std::log(s)));
}

// The same on a [N, w] tile with row stride `stride`, vectorized along w.
template <class T, Mode M>
MSL_SIMD_CLONES void softmax_tile(const T* __restrict x, T* __restrict y, int64_t N, int64_t stride, int64_t w) {
  T m[kTile], s[kTile];
  for (int64_t j = 0; j < w; ++j) m[j] = x[j];
  for (int64_t r = 1; r < N; ++r)
    for (int64_t j = 0; j < w; ++j) m[j] = x[r * stride + j] > m[j] ? x[r * stride + j] : m[j];
  for (int64_t j = 0; j < w; ++j) {
    m[j] = m[j] == -std::numeric_limits<T>::infinity() ? 0 : m[j];
    s[j] = 0;
  }
  for (int64_t r = 0; r < N; ++r)
    for (int64_t j = 0; j < w; ++j) {
      T e = vexp<T>(x[r * stride + j] - m[j]);
      y[r * stride + j] = e;
      s[j] += e;
    }
  if constexpr (M == Mode::Softmax) {
    for (int64_t j = 0; j < w; ++j) s[j] = 1 / s[j];
    for (int64_t r = 0; r < N; ++r)
      for (int64_t j = 0; j < w; ++j) y[r * stride + j] *= s[j];
  } else {
    for (int64_t j = 0; j < w; ++j) s[j] = m[j] + std::log(s[j]);
    for (int64_t r = 0; r < N; ++r)
      for (int64_t j = 0; j < w; ++j) y[r * stride + j] = x[r * stride + j] - s[j];
  }
}

// softmax_grad: dx = y * (dy - sum(dy * y)); log_softmax_grad: dx = dy -
// exp(y) * sum(dy). Rows (B == 1) or tiles.
template <class T, Mode M>
MSL_SIMD_CLONES void grad_row(const T* __restrict y, const T* __restrict dy, T* __restrict dx, int64_t n) {
  if constexpr (M == Mode::Softmax) {
    T d = static_cast<T>(row_dot(dy, y, n));
    for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * (dy[i] - d);
  } else {
    T s = static_cast<T>(row_dot<T>(dy, nullptr, n));
    for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] - vexp<T>(y[i]) * s;
  }
}

template <class T, Mode M>
MSL_SIMD_CLONES void grad_tile(const T* __restrict y, const T* __restrict dy, T* __restrict dx, int64_t N,
                               int64_t stride, int64_t w) {
  T s[kTile];
  for (int64_t j = 0; j < w; ++j) s[j] = 0;
  for (int64_t r = 0; r < N; ++r)
    for (int64_t j = 0; j < w; ++j)
      s[j] += M == Mode::Softmax ? dy[r * stride + j] * y[r * stride + j] : dy[r * stride + j];
  for (int64_t r = 0; r < N; ++r)
    for (int64_t j = 0; j < w; ++j) {
      int64_t k = r * stride + j;
      dx[k] = M == Mode::Softmax ? y[k] * (dy[k] - s[j]) : dy[k] - vexp<T>(y[k]) * s[j];
    }
}

// ----------------------------------------------------------- plumbing

void check_float(const char* op, DType dt) {
  if (!is_floating(dt)) throw DTypeError(fmt::format("{}: unsupported dtype {}", op, dtype_display_name(dt)));
}

DType compute_dtype(DType dt) { return dt == DType::Float64 ? DType::Float64 : DType::Float32; }

struct Axis3 {
  int64_t A = 1, N = 1, B = 1;
};

Axis3 around_axis(const Dims& shape, int axis) {
  Axis3 g;
  if (shape.size() == 0) return g;
  g.N = shape[axis];
  for (int i = 0; i < axis; ++i) g.A *= shape[i];
  for (int i = axis + 1; i < shape.size(); ++i) g.B *= shape[i];
  return g;
}

// Runs f(Tag<T>, inputs..., output) on contiguous compute-dtype copies of the
// inputs and writes the result to `out` (rounding 16-bit floats once).
template <class F>
void with_compute(std::initializer_list<Tensor> in, const Tensor& out, F&& f) {
  DType cdt = compute_dtype(out.dtype());
  std::vector<Tensor> c;
  for (const Tensor& t : in) c.push_back(contiguous_as(t, cdt));
  Tensor res = cdt == out.dtype() ? out : Tensor(cdt, out.shape());
  if (cdt == DType::Float64)
    f(Tag<double>{}, c, res);
  else
    f(Tag<float>{}, c, res);
  if (res.raw() != out.raw()) copy_convert(res, out);
}

// Schedules the work around the reduced axis: with nothing after it (B == 1)
// each of the A rows of N contiguous values is one unit (row(offset)); else
// columns are processed in tiles of up to kTile (tile(offset, width)).
// `per_element` scales the parallel grain to the pass's cost per element.
template <class Row, class Tile>
void for_rows_or_tiles(const Axis3& g, int64_t per_element, Row&& row, Tile&& tile) {
  if (g.B == 1) {
    parallel_for(g.A, std::max<int64_t>(1, kParallelGrain / per_element / g.N), [&](int64_t a0, int64_t a1) {
      for (int64_t r = a0; r < a1; ++r) row(r * g.N);
    });
    return;
  }
  int64_t tiles = (g.B + kTile - 1) / kTile;
  parallel_for(g.A * tiles, std::max<int64_t>(1, kParallelGrain / per_element / (g.N * kTile)),
               [&](int64_t i0, int64_t i1) {
                 for (int64_t it = i0; it < i1; ++it) {
                   int64_t r = it / tiles, b0 = (it % tiles) * kTile;
                   tile(r * g.N * g.B + b0, std::min(kTile, g.B - b0));
                 }
               });
}

void infer_softmax_like(const InferArgs& a) {
  const char* op = prim_name(a.prim);
  check_float(op, a.in[0].dtype);
  normalize_axis(op, a.attrs.get_int("axis", -1), a.in[0].shape.size());
  a.out[0] = a.in[0];
}

template <Mode M>
void run_softmax(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  int axis = normalize_axis(prim_name(a.prim), a.attrs.get_int("axis", -1), out.ndim());
  Axis3 g = around_axis(out.shape(), axis);
  with_compute({a.in[0]}, out, [&](auto tag, std::vector<Tensor>& c, const Tensor& res) {
    using T = typename decltype(tag)::type;
    const T* x = c[0].data<T>();
    T* y = res.data<T>();
    for_rows_or_tiles(
        g, 8, [&](int64_t off) { softmax_row<T, M>(x + off, y + off, g.N); },
        [&](int64_t off, int64_t width) { softmax_tile<T, M>(x + off, y + off, g.N, g.B, width); });
  });
}

void infer_grad(const InferArgs& a) {
  const char* op = prim_name(a.prim);
  const TensorSpec &y = a.in[0], &dy = a.in[1];
  check_float(op, y.dtype);
  if (dy.dtype != y.dtype)
    throw DTypeError(fmt::format("{}: dy has dtype {} but y has dtype {}", op, dtype_display_name(dy.dtype),
                                 dtype_display_name(y.dtype)));
  if (dy.shape != y.shape)
    throw ShapeError(fmt::format("{}: dy has shape {} but y has shape {}", op, dy.shape.str(), y.shape.str()));
  normalize_axis(op, a.attrs.get_int("axis", -1), y.shape.size());
  a.out[0] = y;
}

template <Mode M>
void run_grad(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  int axis = normalize_axis(prim_name(a.prim), a.attrs.get_int("axis", -1), out.ndim());
  Axis3 g = around_axis(out.shape(), axis);
  with_compute({a.in[0], a.in[1]}, out, [&](auto tag, std::vector<Tensor>& c, const Tensor& res) {
    using T = typename decltype(tag)::type;
    const T *y = c[0].data<T>(), *dy = c[1].data<T>();
    T* dx = res.data<T>();
    for_rows_or_tiles(
        g, 4, [&](int64_t off) { grad_row<T, M>(y + off, dy + off, dx + off, g.N); },
        [&](int64_t off, int64_t width) { grad_tile<T, M>(y + off, dy + off, dx + off, g.N, g.B, width); });
  });
}

// ------------------------------------------------------- cross entropy

void check_logits(const char* op, const TensorSpec& logits) {
  check_float(op, logits.dtype);
  if (logits.shape.size() != 2)
    throw ShapeError(fmt::format("{}: logits must have shape (N, C), got {}", op, logits.shape.str()));
}

// loss = logsumexp(x) - sum(labels * x) for dense labels that sum to 1 in
// general: sum(labels * (lse - x)); dlogits = softmax(x) - labels. The
// sparse form has labels = one_hot(label).
template <class T, class Label>
void cross_entropy_rows(const T* x, const Label& label, T* loss, T* dx, int64_t N, int64_t C) {
  parallel_for(N, std::max<int64_t>(1, kParallelGrain / 8 / std::max<int64_t>(C, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * C;
      T* dr = dx + r * C;
      if (C == 0) {
        loss[r] = 0;
        continue;
      }
      T m = row_max(xr, C);
      if (m == -std::numeric_limits<T>::infinity()) m = 0;
      double s = row_exp_sum(xr, m, dr, C);
      T lse = static_cast<T>(m + std::log(s));
      row_scale(dr, C, static_cast<T>(1.0 / s));
      loss[r] = label(r, xr, lse, dr);
    }
  });
}

}  // namespace

void infer_softmax(const InferArgs& a) { infer_softmax_like(a); }
void infer_log_softmax(const InferArgs& a) { infer_softmax_like(a); }
void cpu_softmax(const KernelArgs& a) { run_softmax<Mode::Softmax>(a); }
void cpu_log_softmax(const KernelArgs& a) { run_softmax<Mode::LogSoftmax>(a); }
void infer_softmax_grad(const InferArgs& a) { infer_grad(a); }
void infer_log_softmax_grad(const InferArgs& a) { infer_grad(a); }
void cpu_softmax_grad(const KernelArgs& a) { run_grad<Mode::Softmax>(a); }
void cpu_log_softmax_grad(const KernelArgs& a) { run_grad<Mode::LogSoftmax>(a); }

void infer_softmax_cross_entropy(const InferArgs& a) {
  const char* op = "softmax_cross_entropy";
  const TensorSpec &logits = a.in[0], &labels = a.in[1];
  check_logits(op, logits);
  if (labels.dtype != logits.dtype)
    throw DTypeError(fmt::format("{}: labels have dtype {} but logits have dtype {}", op,
                                 dtype_display_name(labels.dtype), dtype_display_name(logits.dtype)));
  if (labels.shape != logits.shape)
    throw ShapeError(
        fmt::format("{}: labels have shape {} but logits have shape {}", op, labels.shape.str(), logits.shape.str()));
  a.out[0] = {logits.dtype, Dims{logits.shape[0]}};
  a.out[1] = logits;
}

void cpu_softmax_cross_entropy(const KernelArgs& a) {
  const Tensor &loss = a.out[0], &dlogits = a.out[1];
  int64_t N = dlogits.dim(0), C = dlogits.dim(1);
  if (N == 0) return;
  DType cdt = compute_dtype(loss.dtype());
  Tensor x = contiguous_as(a.in[0], cdt), lab = contiguous_as(a.in[1], cdt);
  Tensor l = cdt == loss.dtype() ? loss : Tensor(cdt, loss.shape());
  Tensor d = cdt == dlogits.dtype() ? dlogits : Tensor(cdt, dlogits.shape());
  visit_dtype(cdt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* lb = lab.data<T>();
      auto label = [&](int64_t r, const T* xr, T lse, T* dr) {
        const T* lr = lb + r * C;
        double acc = 0;
        for (int64_t i = 0; i < C; ++i) {
          acc += static_cast<double>(lr[i]) * (lse - xr[i]);
          dr[i] -= lr[i];
        }
        return static_cast<T>(acc);
      };
      cross_entropy_rows(x.data<T>(), label, l.data<T>(), d.data<T>(), N, C);
    }
  });
  if (l.raw() != loss.raw()) copy_convert(l, loss);
  if (d.raw() != dlogits.raw()) copy_convert(d, dlogits);
}

void infer_sparse_softmax_cross_entropy(const InferArgs& a) {
  const char* op = "sparse_softmax_cross_entropy";
  const TensorSpec &logits = a.in[0], &labels = a.in[1];
  check_logits(op, logits);
  if (labels.dtype != DType::Int32 && labels.dtype != DType::Int64)
    throw DTypeError(fmt::format("{}: labels must be Int32 or Int64, got {}", op, dtype_display_name(labels.dtype)));
  if (labels.shape != Dims{logits.shape[0]})
    throw ShapeError(fmt::format("{}: labels have shape {} but logits of shape {} need ({},)", op, labels.shape.str(),
                                 logits.shape.str(), logits.shape[0]));
  a.out[0] = {logits.dtype, Dims{logits.shape[0]}};
  a.out[1] = logits;
}

void cpu_sparse_softmax_cross_entropy(const KernelArgs& a) {
  const Tensor &loss = a.out[0], &dlogits = a.out[1];
  int64_t N = dlogits.dim(0), C = dlogits.dim(1);
  Tensor lab = contiguous_as(a.in[1], DType::Int64);
  const int64_t* lb = lab.data<int64_t>();
  for (int64_t r = 0; r < N; ++r)
    if (lb[r] < 0 || lb[r] >= C)
      throw IndexError(fmt::format("sparse_softmax_cross_entropy: label {} is out of range for {} classes", lb[r], C));
  if (N == 0) return;
  DType cdt = compute_dtype(loss.dtype());
  Tensor x = contiguous_as(a.in[0], cdt);
  Tensor l = cdt == loss.dtype() ? loss : Tensor(cdt, loss.shape());
  Tensor d = cdt == dlogits.dtype() ? dlogits : Tensor(cdt, dlogits.shape());
  visit_dtype(cdt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      auto label = [&](int64_t r, const T* xr, T lse, T* dr) {
        dr[lb[r]] -= 1;
        return lse - xr[lb[r]];
      };
      cross_entropy_rows(x.data<T>(), label, l.data<T>(), d.data<T>(), N, C);
    }
  });
  if (l.raw() != loss.raw()) copy_convert(l, loss);
  if (d.raw() != dlogits.raw()) copy_convert(d, dlogits);
}

}  // namespace msl::kernels
