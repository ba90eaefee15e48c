// The pooling kernels' CUDA C (pool_cuda.h).
#include "kernels/cuda/pool_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

namespace msl::kernels::cuda {

namespace {

constexpr const char* kPrelude = R"(typedef long long msl_i64;
struct msl_pool {
  msl_i64 n, c, h, w, ho, wo, kh, kw, sh, sw, pt, pl;
  int include_pad;
};
// The in-bounds rows [*h0, *h1) and columns [*w0, *w1) of window (oh, ow).
__device__ __forceinline__ void msl_window(const msl_pool& g, msl_i64 oh, msl_i64 ow, msl_i64* h0, msl_i64* h1,
                                           msl_i64* w0, msl_i64* w1) {
  msl_i64 hs = oh * g.sh - g.pt, ws = ow * g.sw - g.pl;
  *h0 = hs > 0 ? hs : 0;
  *h1 = hs + g.kh < g.h ? hs + g.kh : g.h;
  *w0 = ws > 0 ? ws : 0;
  *w1 = ws + g.kw < g.w ? ws + g.kw : g.w;
}
// The windows (rows [*lo_h, *hi_h], columns [*lo_w, *hi_w]) that contain input (ih, iw).
__device__ __forceinline__ void msl_covering(const msl_pool& g, msl_i64 ih, msl_i64 iw, msl_i64* lo_h, msl_i64* hi_h,
                                             msl_i64* lo_w, msl_i64* hi_w) {
  msl_i64 a = ih + g.pt, b = iw + g.pl;
  *lo_h = a - g.kh < 0 ? 0 : (a - g.kh) / g.sh + 1;
  *hi_h = a / g.sh < g.ho - 1 ? a / g.sh : g.ho - 1;
  *lo_w = b - g.kw < 0 ? 0 : (b - g.kw) / g.sw + 1;
  *hi_w = b / g.sw < g.wo - 1 ? b / g.sw : g.wo - 1;
}
)";

const char* type_of(DType t) {
  switch (t) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    default: throw std::invalid_argument(fmt::format("pooling kernels: no text for {}", dtype_name(t)));
  }
}

// The statements finding `best`, the offset of the first maximum of window
// (oh, ow) in the plane xs.
constexpr const char* kArgmax = R"(msl_i64 h0, h1, w0, w1;
      msl_window(g, oh, ow, &h0, &h1, &w0, &w1);
      msl_i64 best = h0 * g.w + w0;
      for (msl_i64 i = h0; i < h1; ++i)
        for (msl_i64 j = w0; j < w1; ++j)
          if (xs[i * g.w + j] > xs[best]) best = i * g.w + j;)";

constexpr const char* kLoop =
    "  for (msl_i64 e = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; e < count; e += (msl_i64)gridDim.x * "
    "blockDim.x) {\n";

}  // namespace

PoolParams pool_params(const PoolGeom& g) {
  PoolParams p;
  p.n = g.n, p.c = g.c, p.h = g.h, p.w = g.w, p.ho = g.win.ho, p.wo = g.win.wo;
  p.kh = g.win.kh, p.kw = g.win.kw, p.sh = g.win.sh, p.sw = g.win.sw, p.pt = g.win.pt, p.pl = g.win.pl;
  p.include_pad = g.include_pad ? 1 : 0;
  return p;
}

std::string pool_kernel_name(PoolKernel k, DType t) {
  const char* what = k == PoolKernel::MaxForward    ? "max_fwd"
                     : k == PoolKernel::MaxBackward ? "max_bwd"
                     : k == PoolKernel::AvgForward  ? "avg_fwd"
                                                    : "avg_bwd";
  return fmt::format("msl_pool_{}_{}", what, dtype_name(t));
}

std::string pool_kernel_prelude() { return kPrelude; }

std::string pool_kernel_source(PoolKernel k, DType t) { return kPrelude + pool_kernel(k, t); }

std::string pool_kernel(PoolKernel k, DType t) {
  const char* T = type_of(t);
  std::string name = pool_kernel_name(k, t);
  std::string s;
  switch (k) {
    case PoolKernel::MaxForward:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 count, const {}* __restrict__ x, {}* __restrict__ y, "
                      "msl_pool g) {{\n{}",
                      name, T, T, kLoop);
      s += "    msl_i64 ow = e % g.wo, oh = e / g.wo % g.ho, p = e / (g.wo * g.ho);\n";
      s += fmt::format("    const {}* xs = x + p * g.h * g.w;\n    {{\n      {}\n      y[e] = xs[best];\n    }}\n", T,
                       kArgmax);
      break;
    case PoolKernel::MaxBackward:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 count, const {}* __restrict__ x, const {}* __restrict__ "
                      "dy, {}* __restrict__ dx, msl_pool g) {{\n{}",
                      name, T, T, T, kLoop);
      s += "    msl_i64 iw = e % g.w, ih = e / g.w % g.h, p = e / (g.w * g.h), lo_h, hi_h, lo_w, hi_w;\n";
      s += fmt::format("    const {}* xs = x + p * g.h * g.w;\n    const {}* ds = dy + p * g.ho * g.wo;\n    {} acc = 0;\n",
                       T, T, T);
      s += "    msl_covering(g, ih, iw, &lo_h, &hi_h, &lo_w, &hi_w);\n";
      s += fmt::format("    for (msl_i64 oh = lo_h; oh <= hi_h; ++oh)\n      for (msl_i64 ow = lo_w; ow <= hi_w; ++ow) {{\n"
                       "      {}\n      if (best == ih * g.w + iw) acc += ds[oh * g.wo + ow];\n    }}\n",
                       kArgmax);
      s += "    dx[e] = acc;\n";
      break;
    case PoolKernel::AvgForward:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 count, const {}* __restrict__ x, {}* __restrict__ y, "
                      "msl_pool g) {{\n{}",
                      name, T, T, kLoop);
      s += "    msl_i64 ow = e % g.wo, oh = e / g.wo % g.ho, p = e / (g.wo * g.ho), h0, h1, w0, w1;\n";
      s += fmt::format("    const {}* xs = x + p * g.h * g.w;\n    {} sum = 0;\n", T, T);
      s += "    msl_window(g, oh, ow, &h0, &h1, &w0, &w1);\n";
      s += "    for (msl_i64 i = h0; i < h1; ++i)\n      for (msl_i64 j = w0; j < w1; ++j) sum += xs[i * g.w + j];\n";
      s += fmt::format("    y[e] = sum / ({})(g.include_pad ? g.kh * g.kw : (h1 - h0) * (w1 - w0));\n", T);
      break;
    case PoolKernel::AvgBackward:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 count, const {}* __restrict__ dy, {}* __restrict__ dx, "
                      "msl_pool g) {{\n{}",
                      name, T, T, kLoop);
      s += "    msl_i64 iw = e % g.w, ih = e / g.w % g.h, p = e / (g.w * g.h), lo_h, hi_h, lo_w, hi_w;\n";
      s += fmt::format("    const {}* ds = dy + p * g.ho * g.wo;\n    {} acc = 0;\n", T, T);
      s += "    msl_covering(g, ih, iw, &lo_h, &hi_h, &lo_w, &hi_w);\n";
      s += "    for (msl_i64 oh = lo_h; oh <= hi_h; ++oh)\n      for (msl_i64 ow = lo_w; ow <= hi_w; ++ow) {\n";
      s += "        msl_i64 h0, h1, w0, w1;\n        msl_window(g, oh, ow, &h0, &h1, &w0, &w1);\n";
      s += fmt::format("        acc += ds[oh * g.wo + ow] / ({})(g.include_pad ? g.kh * g.kw : (h1 - h0) * (w1 - w0));\n",
                       T);
      s += "      }\n    dx[e] = acc;\n";
      break;
  }
  s += "  }\n}\n";
  return s;
}

}  // namespace msl::kernels::cuda
