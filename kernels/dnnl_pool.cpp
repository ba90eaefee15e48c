// max_pool2d, avg_pool2d and their gradients: oneDNN for float32 and
// bfloat16, float32 copies for float16, direct loops for float64 and for
// the float32 max gradient.
//
// Pooling is bound by memory bandwidth, so it runs on NCHW as is: oneDNN's
// JIT pooling takes plain NCHW without a layout reorder, but only dense
// (strided views get its reference kernel), so a strided input is made
// contiguous first. max_pool2d_grad finds the argmax of every window again
// and routes dy through it (a direct loop; oneDNN's backward needs its
// forward's workspace); oneDNN and the loops both keep the first maximum of
// a window in row-major order, and padding never wins (it counts as -inf). Padding must be smaller
// than the kernel, as in PyTorch and oneDNN, so every window holds at least
// one input element and averages never divide by zero.
//
// max_pool2d and max_pool2d_grad take a `layout` attribute (blocked_layout.h):
// x, dy and the results are then channel-blocked rank-5 tensors. float32
// runs oneDNN's forward on the nChw16c / nChw8c memory as it is, and the
// gradient by the same find-the-argmax-again design on the planes
// [H, W, b] of each (n, channel block): every window keeps, per lane, the
// first maximum in row-major window order, with the b lanes as the
// innermost, contiguous dimension so that the loop works on whole vectors
// (5-7x faster than unblocking, the plain loop and blocking again for a
// ResNet stem's pool). Other dtypes pool plain copies.
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "kernels/blocked_layout.h"
#include "kernels/dnnl_common.h"
#include "kernels/dnnl_window.h"
#include "kernels/errors.h"
#include "kernels/pool_geometry.h"
#include "kernels/parallel.h"
#include "kernels/pool_2x2.h"
#include "kernels/primitives.h"
#include "kernels/simd_clones.h"

namespace msl::kernels {

namespace {

using dnnl::memory;
using onednn::Key;

enum class PoolOp : int { MaxForward, AvgForward, MaxBackward, AvgBackward };

void check_float(const char* op, DType t) {
  if (!is_floating(t)) throw DTypeError(fmt::format("{}: unsupported dtype {}", op, dtype_display_name(t)));
}

// ------------------------------------------------------------------ oneDNN

struct PoolPlan {
  bool supported = false;
  dnnl::primitive fwd, bwd;
  memory src, dst, workspace, diff_dst, diff_src, fwd_scratchpad, bwd_scratchpad;
  size_t dst_offset = 0, ws_offset = 0, fwd_sp_offset = 0, bwd_sp_offset = 0, scratch_bytes = 0;
  std::mutex mu;
};

onednn::PrimitiveCache<PoolPlan>& pool_plans() {
  static auto* c = new onednn::PrimitiveCache<PoolPlan>(256);
  return *c;
}

// `block` > 0: x and y are blocked nChw{block}c (forward only).
std::shared_ptr<PoolPlan> make_plan(PoolOp op, const PoolGeom& g, DType dt, int64_t block) {
  auto plan = std::make_shared<PoolPlan>();
  auto ddt = onednn::dnnl_type(dt);
  memory::desc x_md = block ? onednn::blocked_md(g.x_shape(), block, ddt) : onednn::plain_md(g.x_shape(), ddt);
  memory::desc y_md = block ? onednn::blocked_md(g.y_shape(), block, ddt) : onednn::plain_md(g.y_shape(), ddt);
  bool max = op == PoolOp::MaxForward || op == PoolOp::MaxBackward;
  bool backward = op == PoolOp::MaxBackward || op == PoolOp::AvgBackward;
  auto alg = max             ? dnnl::algorithm::pooling_max
             : g.include_pad ? dnnl::algorithm::pooling_avg_include_padding
                             : dnnl::algorithm::pooling_avg_exclude_padding;
  memory::dims strides{g.win.sh, g.win.sw}, kernel{g.win.kh, g.win.kw};
  memory::dims pad_l{g.win.pt, g.win.pl}, pad_r{g.win.pb, g.win.pr};
  auto attr = onednn::user_scratchpad_attr();
  try {
    auto prop = backward ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;
    dnnl::pooling_forward::primitive_desc fpd(
        dnnl::pooling_forward::desc(prop, alg, x_md, y_md, strides, kernel, pad_l, pad_r), attr, onednn::engine());
    // A reference kernel on blocked memory: pooling plain copies is faster.
    if ((dt != DType::Float32 || block) && onednn::is_reference(fpd)) return plan;
    onednn::ScratchLayout layout;
    plan->src = onednn::unbound(x_md);
    plan->dst = onednn::unbound(y_md);
    plan->fwd_scratchpad = onednn::unbound(fpd.scratchpad_desc());
    if (!backward) {
      plan->fwd = dnnl::pooling_forward(fpd);
      plan->fwd_sp_offset = layout.add(fpd.scratchpad_desc().get_size());
    } else {
      dnnl::pooling_backward::primitive_desc bpd(
          dnnl::pooling_backward::desc(alg, x_md, y_md, strides, kernel, pad_l, pad_r), attr, onednn::engine(), fpd);
      if (dt != DType::Float32 && onednn::is_reference(bpd)) return plan;
      plan->bwd = dnnl::pooling_backward(bpd);
      plan->diff_dst = onednn::unbound(y_md);
      plan->diff_src = onednn::unbound(x_md);
      plan->bwd_scratchpad = onednn::unbound(bpd.scratchpad_desc());
      plan->bwd_sp_offset = layout.add(bpd.scratchpad_desc().get_size());
      if (max) {
        // The forward pass only to get the argmax workspace.
        plan->fwd = dnnl::pooling_forward(fpd);
        plan->workspace = onednn::unbound(fpd.workspace_desc());
        plan->ws_offset = layout.add(fpd.workspace_desc().get_size());
        plan->dst_offset = layout.add(y_md.get_size());
        plan->fwd_sp_offset = layout.add(fpd.scratchpad_desc().get_size());
      }
    }
    plan->scratch_bytes = layout.total;
    plan->supported = true;
  } catch (const dnnl::error&) {
    // Not implemented for this dtype here.
  }
  return plan;
}

// in: x for the forward ops and max backward, dy for avg backward;
// dy: the max backward's gradient; block > 0: in and out are blocked.
bool dnnl_pool(PoolOp op, const PoolGeom& g, const Tensor& in, const Tensor& dy, const Tensor& out, int64_t block = 0) {
  onednn::SerialScope serial(g.n * g.c * g.h * g.w < onednn::kSerialElements);
  Key key;
  key.add(int64_t(op)).add(int64_t(out.dtype())).add(onednn::thread_count());
  key.add(g.n).add(g.c).add(g.h).add(g.w).add(g.win.kh).add(g.win.kw).add(g.win.sh).add(g.win.sw);
  key.add(g.win.pt).add(g.win.pb).add(g.win.pl).add(g.win.pr).add(g.include_pad).add(block);
  auto plan = pool_plans().get(key, [&] { return make_plan(op, g, out.dtype(), block); });
  if (!plan->supported) return false;
  Tensor a = in.contiguous();
  onednn::Scratch scratch(plan->scratch_bytes);
  std::lock_guard<std::mutex> lock(plan->mu);
  switch (op) {
    case PoolOp::MaxForward:
    case PoolOp::AvgForward:
      onednn::bind(plan->src, a.raw());
      onednn::bind(plan->dst, out.raw());
      onednn::bind(plan->fwd_scratchpad, scratch.at(plan->fwd_sp_offset));
      onednn::execute(
          plan->fwd,
          {{DNNL_ARG_SRC, &plan->src}, {DNNL_ARG_DST, &plan->dst}, {DNNL_ARG_SCRATCHPAD, &plan->fwd_scratchpad}});
      break;
    case PoolOp::MaxBackward: {
      Tensor d = dy.contiguous();
      onednn::bind(plan->src, a.raw());
      onednn::bind(plan->dst, scratch.at(plan->dst_offset));
      onednn::bind(plan->workspace, scratch.at(plan->ws_offset));
      onednn::bind(plan->fwd_scratchpad, scratch.at(plan->fwd_sp_offset));
      onednn::execute(plan->fwd, {{DNNL_ARG_SRC, &plan->src},
                                  {DNNL_ARG_DST, &plan->dst},
                                  {DNNL_ARG_WORKSPACE, &plan->workspace},
                                  {DNNL_ARG_SCRATCHPAD, &plan->fwd_scratchpad}});
      onednn::bind(plan->diff_dst, d.raw());
      onednn::bind(plan->diff_src, out.raw());
      onednn::bind(plan->bwd_scratchpad, scratch.at(plan->bwd_sp_offset));
      onednn::execute(plan->bwd, {{DNNL_ARG_DIFF_DST, &plan->diff_dst},
                                  {DNNL_ARG_DIFF_SRC, &plan->diff_src},
                                  {DNNL_ARG_WORKSPACE, &plan->workspace},
                                  {DNNL_ARG_SCRATCHPAD, &plan->bwd_scratchpad}});
      break;
    }
    case PoolOp::AvgBackward:
      onednn::bind(plan->diff_dst, a.raw());
      onednn::bind(plan->diff_src, out.raw());
      onednn::bind(plan->bwd_scratchpad, scratch.at(plan->bwd_sp_offset));
      onednn::execute(plan->bwd, {{DNNL_ARG_DIFF_DST, &plan->diff_dst},
                                  {DNNL_ARG_DIFF_SRC, &plan->diff_src},
                                  {DNNL_ARG_SCRATCHPAD, &plan->bwd_scratchpad}});
      break;
  }
  return true;
}

// --------------------------------------------------------- float64 loops

// Calls f(plane, oh, ow, h0, h1, w0, w1): the in-bounds rows [h0, h1) and
// columns [w0, w1) of every window, planes (n * C + c) split across threads.
template <class F>
void each_window(const PoolGeom& g, F&& f) {
  const Window2d& v = g.win;
  parallel_for(g.n * g.c, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, g.h * g.w)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p)
      for (int64_t oh = 0; oh < v.ho; ++oh) {
        int64_t hs = oh * v.sh - v.pt;
        int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(hs + v.kh, g.h);
        for (int64_t ow = 0; ow < v.wo; ++ow) {
          int64_t ws = ow * v.sw - v.pl;
          f(p, oh, ow, h0, h1, std::max<int64_t>(ws, 0), std::min(ws + v.kw, g.w));
        }
      }
  });
}

// Offset of the first maximum of a window of the contiguous plane x.
template <class T>
int64_t argmax(const T* x, int64_t w, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
  int64_t best = h0 * w + w0;
  for (int64_t i = h0; i < h1; ++i)
    for (int64_t j = w0; j < w1; ++j)
      if (x[i * w + j] > x[best]) best = i * w + j;
  return best;
}

double divisor(const PoolGeom& g, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
  return g.include_pad ? double(g.win.kh * g.win.kw) : double((h1 - h0) * (w1 - w0));
}

// The max gradient routed through the argmax of each window, found again
// in x: one pass over x, dy and dx. Faster than oneDNN's forward-with-
// workspace plus backward (three passes and a reorder of the workspace)
// for the small planes of convolutional networks.
// Windows that tile the plane (stride = kernel, none reaching into padding)
// cover each row of dx once: the rows of a window row are cleared while
// they are in cache, then each window's maximum gets its dy; rows past the
// last window are zeroed. (float32 2x2/2 windows that tile the plane
// exactly, LeNet's and VGG's, take pool_2x2.h's vectorized loop instead.)
template <class T>
void max_backward_tiled(const PoolGeom& g, const T* xp, const T* d, T* o) {
  const Window2d& v = g.win;
  int64_t plane = g.h * g.w, oplane = v.ho * v.wo;
  parallel_for(g.n * g.c, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, plane)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* xs = xp + p * plane;
      const T* ds = d + p * oplane;
      T* os = o + p * plane;
      for (int64_t oh = 0; oh < v.ho; ++oh) {
        const T* xr = xs + oh * v.kh * g.w;
        T* orow = os + oh * v.kh * g.w;
        std::memset(orow, 0, static_cast<size_t>(v.kh * g.w) * sizeof(T));
        for (int64_t ow = 0; ow < v.wo; ++ow) {
          int64_t c0 = ow * v.kw, best = c0;
          T m = xr[c0];
          for (int64_t i = 0; i < v.kh; ++i)
            for (int64_t j = c0; j < c0 + v.kw; ++j)
              if (xr[i * g.w + j] > m) {
                m = xr[i * g.w + j];
                best = i * g.w + j;
              }
          orow[best] = ds[oh * v.wo + ow];
        }
      }
      std::fill(os + v.ho * v.kh * g.w, os + plane, T(0));
    }
  });
}

template <class T>
void max_backward(const PoolGeom& g, const Tensor& in, const Tensor& dy_t, const Tensor& out) {
  Tensor x = in.contiguous(), dy = dy_t.contiguous();
  const T* xp = x.data<T>();
  const T* d = dy.data<T>();
  T* o = out.data<T>();
  const Window2d& v = g.win;
  if (v.sh == v.kh && v.sw == v.kw && v.pt == 0 && v.pl == 0 && v.dh == 1 && v.dw == 1 && v.ho * v.kh <= g.h &&
      v.wo * v.kw <= g.w)
    return max_backward_tiled(g, xp, d, o);
  int64_t plane = g.h * g.w, oplane = g.win.ho * g.win.wo, wo = g.win.wo;
  parallel_for(g.n * g.c, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, plane)), [&](int64_t b, int64_t e) {
    std::memset(o + b * plane, 0, static_cast<size_t>((e - b) * plane) * sizeof(T));
  });
  each_window(g, [&](int64_t p, int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
    o[p * plane + argmax(xp + p * plane, g.w, h0, h1, w0, w1)] += d[p * oplane + oh * wo + ow];
  });
}

void pool_f64(PoolOp op, const PoolGeom& g, const Tensor& in, const Tensor& dy_t, const Tensor& out) {
  Tensor x = in.contiguous();
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  int64_t plane = g.h * g.w, oplane = g.win.ho * g.win.wo, wo = g.win.wo;
  switch (op) {
    case PoolOp::MaxForward:
      each_window(g, [&](int64_t p, int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        const double* xs = xp + p * plane;
        o[p * oplane + oh * wo + ow] = xs[argmax(xs, g.w, h0, h1, w0, w1)];
      });
      break;
    case PoolOp::AvgForward:
      each_window(g, [&](int64_t p, int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        const double* xs = xp + p * plane;
        double s = 0;
        for (int64_t i = h0; i < h1; ++i)
          for (int64_t j = w0; j < w1; ++j) s += xs[i * g.w + j];
        o[p * oplane + oh * wo + ow] = s / divisor(g, h0, h1, w0, w1);
      });
      break;
    case PoolOp::MaxBackward: max_backward<double>(g, x, dy_t, out); break;
    case PoolOp::AvgBackward: {
      // `in` is dy here.
      std::memset(o, 0, out.nbytes());
      each_window(g, [&](int64_t p, int64_t oh, int64_t ow, int64_t h0, int64_t h1, int64_t w0, int64_t w1) {
        double v = xp[p * oplane + oh * wo + ow] / divisor(g, h0, h1, w0, w1);
        for (int64_t i = h0; i < h1; ++i)
          for (int64_t j = w0; j < w1; ++j) o[p * plane + i * g.w + j] += v;
      });
      break;
    }
  }
}

// float32 max pooling 2x2/2 on planes it tiles (pool_2x2.h); false when
// the geometry is another.
bool run_pool_2x2(PoolOp op, const PoolGeom& g, const Tensor& in, const Tensor& dy, const Tensor& out) {
  const Window2d& v = g.win;
  if (!max_pool_2x2_applies(g.h, g.w, v)) return false;
  Tensor x = in.contiguous();
  int64_t pairs = g.n * g.c * v.ho;
  if (op == PoolOp::MaxForward) {
    max_pool_2x2_forward(x.data<float>(), out.data<float>(), pairs, v.wo);
  } else {
    Tensor d = dy.contiguous();
    max_pool_2x2_backward(x.data<float>(), d.data<float>(), out.data<float>(), pairs, v.wo);
  }
  return true;
}

void run_pool(PoolOp op, const PoolGeom& g, const Tensor& in, const Tensor& dy, const Tensor& out) {
  if (out.numel() == 0) return;
  DType dt = out.dtype();
  if (dt == DType::Float32 && (op == PoolOp::MaxForward || op == PoolOp::MaxBackward) &&
      run_pool_2x2(op, g, in, dy, out))
    return;
  if (dt == DType::Float64) return pool_f64(op, g, in, dy, out);
  if (dt == DType::Float32 && op == PoolOp::MaxBackward) return max_backward<float>(g, in, dy, out);
  if (dt != DType::Float16 && dnnl_pool(op, g, in, dy, out)) return;
  if (dt == DType::Float32) throw KernelError("pooling: oneDNN has no float32 kernel for this configuration");
  Tensor a = onednn::to_float32(in), d = dy.defined() ? onednn::to_float32(dy) : Tensor();
  Tensor o(DType::Float32, out.shape());
  if (!dnnl_pool(op, g, a, d, o)) throw KernelError("pooling: oneDNN has no float32 kernel for this configuration");
  onednn::convert_from_float32(o.data<float>(), out);
}

// ------------------------------------------------ channel-blocked operands

// The float32 max gradient on blocked planes [H, W, B], one per (n,
// channel block). A window's B lanes are one GCC vector: a compare and two
// blends per window element keep, per lane, the running maximum and its
// plane offset (a strict > keeps the earliest, as argmax does); a second
// pass over the window adds dy to the lanes whose maximum is there (adding
// 0 elsewhere changes nothing), which beats a per-lane scatter 1.5-2x. Each
// plane of dx is cleared just before its windows, while it is in cache.
// Offsets are int32 (the caller checks that H * W fits).
template <int64_t B>
struct Lanes {
  typedef float F __attribute__((vector_size(4 * B)));
  typedef int32_t I __attribute__((vector_size(4 * B)));
};

template <int64_t B>
[[gnu::always_inline]] inline void max_backward_planes(const PoolGeom& g, const float* x, const float* dy, float* dx,
                                                       int64_t begin, int64_t end) {
  using F = typename Lanes<B>::F;
  using I = typename Lanes<B>::I;
  const Window2d& v = g.win;
  int64_t plane = g.h * g.w * B, oplane = v.ho * v.wo * B;
  int32_t w = int32_t(g.w);
  for (int64_t p = begin; p < end; ++p) {
    const float* xs = x + p * plane;
    const float* ds = dy + p * oplane;
    float* os = dx + p * plane;
    std::memset(os, 0, static_cast<size_t>(plane) * sizeof(float));
    for (int64_t oh = 0; oh < v.ho; ++oh) {
      int64_t hs = oh * v.sh - v.pt;
      int32_t h0 = int32_t(std::max<int64_t>(hs, 0)), h1 = int32_t(std::min(hs + v.kh, g.h));
      for (int64_t ow = 0; ow < v.wo; ++ow) {
        int64_t ws = ow * v.sw - v.pl;
        int32_t w0 = int32_t(std::max<int64_t>(ws, 0)), w1 = int32_t(std::min(ws + v.kw, g.w));
        int32_t first = h0 * w + w0;
        F m;
        std::memcpy(&m, xs + int64_t(first) * B, sizeof m);
        I best = I{} + first;
        for (int32_t i = h0; i < h1; ++i)
          for (int32_t j = w0; j < w1; ++j) {
            int32_t at = i * w + j;
            F xv;
            std::memcpy(&xv, xs + int64_t(at) * B, sizeof xv);
            I greater = xv > m;
            m = greater ? xv : m;
            best = greater ? I{} + at : best;
          }
        F dv;
        std::memcpy(&dv, ds + (oh * v.wo + ow) * B, sizeof dv);
        for (int32_t i = h0; i < h1; ++i)
          for (int32_t j = w0; j < w1; ++j) {
            int32_t at = i * w + j;
            F o;
            std::memcpy(&o, os + int64_t(at) * B, sizeof o);
            o += best == I{} + at ? dv : F{};
            std::memcpy(os + int64_t(at) * B, &o, sizeof o);
          }
      }
    }
  }
}

MSL_SIMD_CLONES void max_backward_planes16(const PoolGeom& g, const float* x, const float* dy, float* dx, int64_t begin,
                                           int64_t end) {
  max_backward_planes<16>(g, x, dy, dx, begin, end);
}

MSL_SIMD_CLONES void max_backward_planes8(const PoolGeom& g, const float* x, const float* dy, float* dx, int64_t begin,
                                          int64_t end) {
  max_backward_planes<8>(g, x, dy, dx, begin, end);
}

// Splits the planes across threads like max_backward.
void max_backward_blocked(const PoolGeom& g, int64_t block, const float* x, const float* dy, float* dx) {
  int64_t plane = g.h * g.w * block;
  auto planes = block == 16 ? max_backward_planes16 : max_backward_planes8;
  parallel_for(g.n * (g.c / block), std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, plane)),
               [&](int64_t b, int64_t e) { planes(g, x, dy, dx, b, e); });
}

// max_pool2d (dy undefined) or max_pool2d_grad on blocked operands into
// the blocked `out`: float32 by oneDNN or max_backward_blocked, the rest
// (and the rare float32 cases those do not take) on plain copies.
void run_blocked_max(PoolOp op, const PoolGeom& g, int64_t block, const Tensor& x, const Tensor& dy,
                     const Tensor& out) {
  if (out.numel() == 0) return;
  if (out.dtype() == DType::Float32) {
    if (op == PoolOp::MaxForward && dnnl_pool(op, g, x, dy, out, block)) return;
    if (op == PoolOp::MaxBackward && g.h * g.w <= std::numeric_limits<int32_t>::max()) {
      Tensor xc = x.contiguous(), dyc = dy.contiguous();
      return max_backward_blocked(g, block, xc.data<float>(), dyc.data<float>(), out.data<float>());
    }
  }
  Tensor plain(out.dtype(), op == PoolOp::MaxForward ? g.y_shape() : g.x_shape());
  run_pool(op, g, unblock(x), dy.defined() ? unblock(dy) : Tensor(), plain);
  block_into(plain, out);
}

// A max pooling call's geometry from x's logical shape, and its block (0:
// plain); with a layout x must be blocked.
PoolGeom max_geometry(const char* op, const Dims& xs, const Attrs& attrs, int64_t& block) {
  block = layout_block(op, attrs);
  return pool_geometry(op, block ? logical_shape(op, "input", xs, block, false) : xs, attrs, false);
}

void check_dy(const char* op, const Dims& dy, const PoolGeom& g) {
  if (dy != g.y_shape())
    throw ShapeError(fmt::format("{}: dy has shape {} but pooling the input {} gives {}", op, dy.str(),
                                 g.x_shape().str(), g.y_shape().str()));
}

}  // namespace

void infer_max_pool2d(const InferArgs& args) {
  const char* op = "max_pool2d";
  check_float(op, args.in[0].dtype);
  int64_t block;
  PoolGeom g = max_geometry(op, args.in[0].shape, args.attrs, block);
  args.out[0] = TensorSpec{args.in[0].dtype, block ? blocked_shape(op, "output", g.y_shape(), block) : g.y_shape()};
}

void cpu_max_pool2d(const KernelArgs& args) {
  int64_t block;
  PoolGeom g = max_geometry("max_pool2d", args.in[0].shape(), args.attrs, block);
  if (block) return run_blocked_max(PoolOp::MaxForward, g, block, args.in[0], Tensor(), args.out[0]);
  run_pool(PoolOp::MaxForward, g, args.in[0], Tensor(), args.out[0]);
}

void infer_avg_pool2d(const InferArgs& args) {
  check_float("avg_pool2d", args.in[0].dtype);
  PoolGeom g = pool_geometry("avg_pool2d", args.in[0].shape, args.attrs, true);
  args.out[0] = TensorSpec{args.in[0].dtype, g.y_shape()};
}

void cpu_avg_pool2d(const KernelArgs& args) {
  PoolGeom g = pool_geometry("avg_pool2d", args.in[0].shape(), args.attrs, true);
  run_pool(PoolOp::AvgForward, g, args.in[0], Tensor(), args.out[0]);
}

void infer_max_pool2d_grad(const InferArgs& args) {
  const char* op = "max_pool2d_grad";
  check_float(op, args.in[0].dtype);
  if (args.in[1].dtype != args.in[0].dtype)
    throw DTypeError(fmt::format("{}: x and dy dtypes differ: {} and {}", op, dtype_display_name(args.in[0].dtype),
                                 dtype_display_name(args.in[1].dtype)));
  int64_t block;
  PoolGeom g = max_geometry(op, args.in[0].shape, args.attrs, block);
  check_dy(op, block ? logical_shape(op, "dy", args.in[1].shape, block, false) : args.in[1].shape, g);
  args.out[0] = args.in[0];
}

void cpu_max_pool2d_grad(const KernelArgs& args) {
  int64_t block;
  PoolGeom g = max_geometry("max_pool2d_grad", args.in[0].shape(), args.attrs, block);
  if (block) return run_blocked_max(PoolOp::MaxBackward, g, block, args.in[0], args.in[1], args.out[0]);
  run_pool(PoolOp::MaxBackward, g, args.in[0], args.in[1], args.out[0]);
}

void infer_avg_pool2d_grad(const InferArgs& args) {
  const char* op = "avg_pool2d_grad";
  check_float(op, args.in[0].dtype);
  PoolGeom g = pool_geometry(op, pool_input_shape_attr(op, args.attrs), args.attrs, true);
  check_dy(op, args.in[0].shape, g);
  args.out[0] = TensorSpec{args.in[0].dtype, g.x_shape()};
}

void cpu_avg_pool2d_grad(const KernelArgs& args) {
  const char* op = "avg_pool2d_grad";
  PoolGeom g = pool_geometry(op, pool_input_shape_attr(op, args.attrs), args.attrs, true);
  run_pool(PoolOp::AvgBackward, g, args.in[0], Tensor(), args.out[0]);
}

PoolGeom pool_geometry(const char* op, const Dims& xs, const Attrs& attrs, bool avg) {
  if (xs.size() != 4) throw ShapeError(fmt::format("{}: the input must be 4-D (N, C, H, W), got {}", op, xs.str()));
  if (!attrs.has("kernel_size")) throw ValueError(fmt::format("{}: kernel_size is required", op));
  auto [kh, kw] = window_pair(op, attrs, "kernel_size", 1, 1);
  PoolGeom g;
  g.n = xs[0], g.c = xs[1], g.h = xs[2], g.w = xs[3];
  if ((g.h == 0 || g.w == 0) && g.n * g.c != 0)
    throw ShapeError(fmt::format("{}: the input {} has an empty spatial dimension", op, xs.str()));
  g.win = make_window(op, attrs, g.h, g.w, kh, kw, false);
  const Window2d& v = g.win;
  if (v.pt >= kh || v.pb >= kh || v.pl >= kw || v.pr >= kw)
    throw ValueError(fmt::format("{}: padding ({}, {}, {}, {}) must be smaller than the kernel ({}, {})", op, v.pt,
                                 v.pb, v.pl, v.pr, kh, kw));
  g.include_pad = avg && attrs.get_bool("count_include_pad", false);
  return g;
}

Dims pool_input_shape_attr(const char* op, const Attrs& attrs) {
  std::vector<int64_t> v = attrs.get_ints("input_shape");
  if (v.size() != 4) throw ValueError(fmt::format("{}: input_shape must have 4 entries, got {}", op, ints_str(v)));
  for (int64_t d : v)
    if (d < 0) throw ValueError(fmt::format("{}: input_shape must not be negative, got {}", op, ints_str(v)));
  return Dims(v);
}

}  // namespace msl::kernels
