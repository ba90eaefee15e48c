// The random primitives' CUDA C (random_cuda.h).
#include "kernels/cuda/random_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"

namespace msl::kernels::cuda {

namespace {

// philox.h's generator and unit conversions, and random_ops.cpp's float32
// Box-Muller helpers with GCC's contractions made explicit (fmaf where the
// CPU's FMA clones fuse; every other product and sum rounds on its own).
constexpr const char* kPrelude = R"(typedef unsigned long long msl_u64;
__device__ __forceinline__ void msl_philox(msl_u64 counter, msl_u64 key, unsigned* out) {
  unsigned c0 = (unsigned)counter, c1 = (unsigned)(counter >> 32), c2 = 0, c3 = 0;
  unsigned k0 = (unsigned)key, k1 = (unsigned)(key >> 32);
  for (int r = 0; r < 10; ++r) {
    const msl_u64 p0 = (msl_u64)0xD2511F53u * c0, p1 = (msl_u64)0xCD9E8D57u * c2;
    const unsigned n0 = (unsigned)(p1 >> 32) ^ c1 ^ k0, n2 = (unsigned)(p0 >> 32) ^ c3 ^ k1;
    c1 = (unsigned)p1;
    c3 = (unsigned)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}
__device__ __forceinline__ float msl_unit_float(unsigned x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }
__device__ __forceinline__ double msl_unit_double(unsigned hi, unsigned lo) {
  return (double)((((msl_u64)hi << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}
// Cephes logf on m in [sqrt(1/2), sqrt(2)) and the exponent.
__device__ __forceinline__ float msl_log_f32(float x) {
  const int ix = __float_as_int(x);
  int mi = (ix & 0x007fffff) | 0x3f800000;
  const int big = mi > 0x3fb504f3;
  mi -= big << 23;
  const float m = __int_as_float(mi);
  const float fe = (float)(((ix >> 23) & 0xff) - 127 + big);
  const float f = m - 1.0f, z = f * f;
  float y = fmaf(7.0376836292e-2f, f, -1.1514610310e-1f);
  y = fmaf(y, f, 1.1676998740e-1f);
  y = fmaf(y, f, -1.2420140846e-1f);
  y = fmaf(y, f, 1.4249322787e-1f);
  y = fmaf(y, f, -1.6668057665e-1f);
  y = fmaf(y, f, 2.0000714765e-1f);
  y = fmaf(y, f, -2.4999993993e-1f);
  y = fmaf(y, f, 3.3333331174e-1f);
  y = fmaf(y * f, z, -2.12194440e-4f * fe);
  y = fmaf(-0.5f, z, y);
  return fmaf(0.693359375f, fe, f + y);
}
// sqrt(x) = x / sqrt(x) from the reciprocal-square-root estimate and three
// Newton steps.
__device__ __forceinline__ float msl_sqrt_f32(float x) {
  float y = __int_as_float((int)(0x5f3759dfu - (unsigned)(__float_as_int(x) >> 1)));
  const float hx = 0.5f * x;
  for (int k = 0; k < 3; ++k) y = y * fmaf(-(hx * y), y, 1.5f);
  return x * y;
}
// sin and cos of 2 pi t, t in [0, 1): quarter turns, then Cephes' polynomials.
__device__ __forceinline__ void msl_sincos_turns(float t, float* s, float* c) {
  const int q = (int)fmaf(4.0f, t, 0.5f);
  const float x = fmaf(-(float)q, 0.25f, t) * 6.28318530717958647f;
  const float z = x * x;
  const float sn = fmaf(fmaf(fmaf(-1.9515295891e-4f, z, 8.3321608736e-3f), z, -1.6666654611e-1f) * z, x, x);
  const float cs =
      fmaf(fmaf(fmaf(2.443315711809948e-5f, z, -1.388731625493765e-3f), z, 4.166664568298827e-2f) * z, z,
           -(0.5f * z)) + 1.0f;
  const unsigned k = (unsigned)q & 3u, sb = __float_as_uint(sn), cb = __float_as_uint(cs);
  const unsigned swap = 0u - (k & 1u);
  *s = __uint_as_float(((sb & ~swap) | (cb & swap)) ^ ((k & 2u) << 30));
  *c = __uint_as_float(((cb & ~swap) | (sb & swap)) ^ (((k + 1u) & 2u) << 30));
}
// Elements 0 and 1 of the Box-Muller pair of lanes a, b.
__device__ __forceinline__ void msl_box_muller(unsigned a, unsigned b, float* z) {
  const float u1 = 1.0f - msl_unit_float(a), u2 = msl_unit_float(b);
  const float r = msl_sqrt_f32(-2.0f * msl_log_f32(u1));
  float s, c;
  msl_sincos_turns(u2, &s, &c);
  z[0] = r * c;
  z[1] = r * s;
}
)";

struct Types {
  std::string t;  // storage
  std::string c;  // compute
  std::string store(const std::string& v) const {
    return t == "msl_half" ? "msl_f2h(" + v + ")" : t == "msl_bf16" ? "msl_f2b(" + v + ")" : v;
  }
  std::string load(const std::string& v) const {
    return t == "msl_half" ? "msl_h2f(" + v + ")" : t == "msl_bf16" ? "msl_b2f(" + v + ")" : v;
  }
};

Types types_of(DType d) {
  if (!is_floating(d)) throw std::invalid_argument("random: the dtype must be floating point");
  return {cuda_type_name(d), d == DType::Float64 ? "double" : "float"};
}

const char* kLoop =
    "  for (msl_i64 c = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; c < counters; c += (msl_i64)gridDim.x * "
    "blockDim.x) {\n"
    "    unsigned l[4];\n"
    "    msl_philox(offset + (msl_u64)c, seed, l);\n";

// A uniform 16-bit float: u rounded to nearest, the largest value below 1
// where that gives 1.
std::string unit_half(DType d, const std::string& u) {
  if (d == DType::Float16) return fmt::format("msl_h2f(msl_f2h({0})) >= 1.0f ? (msl_half)0x3bff : msl_f2h({0})", u);
  return fmt::format("msl_b2f(msl_f2b({0})) >= 1.0f ? (msl_bf16)0x3f7f : msl_f2b({0})", u);
}

}  // namespace

std::string random_kernel_name(Prim p, DType t) { return fmt::format("msl_{}_{}", prim_name(p), dtype_name(t)); }

std::string random_prelude() { return copy_kernel_prelude() + kPrelude; }

std::string random_source(Prim p, DType t) { return random_prelude() + random_kernel_text(p, t); }

std::vector<std::string> random_param_types(Prim p, DType t) {
  const Types ty = types_of(t);
  if (p == Prim::dropout)
    return {"msl_i64", "msl_i64", ty.t + "*", ty.t + "*", "const " + ty.t + "*", "msl_u64", "msl_u64", "unsigned",
            ty.c};
  return {"msl_i64", "msl_i64", ty.t + "*", "msl_u64", "msl_u64"};
}

std::string random_kernel_text(Prim p, DType t) {
  const Types ty = types_of(t);
  const std::string name = random_kernel_name(p, t);
  const bool f64 = t == DType::Float64, half = t == DType::Float16 || t == DType::BFloat16;
  std::string s;
  switch (p) {
    case Prim::random_uniform:
    case Prim::random_normal:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 counters, msl_i64 n, {}* __restrict__ out, "
                      "msl_u64 seed, msl_u64 offset) {{\n",
                      name, ty.t);
      s += kLoop;
      if (f64 && p == Prim::random_uniform) {
        // Element 2c from lanes (0, 1), 2c + 1 from lanes (2, 3).
        s += "    out[2 * c] = msl_unit_double(l[0], l[1]);\n"
             "    if (2 * c + 1 < n) out[2 * c + 1] = msl_unit_double(l[2], l[3]);\n";
      } else if (f64) {
        s += "    const double u1 = 1.0 - msl_unit_double(l[0], l[1]), u2 = msl_unit_double(l[2], l[3]);\n"
             "    const double r = sqrt(-2.0 * log(u1)), t = 0x1.921fb54442d18p+2 * u2;\n"
             "    out[2 * c] = r * cos(t);\n"
             "    if (2 * c + 1 < n) out[2 * c + 1] = r * sin(t);\n";
      } else if (p == Prim::random_uniform) {
        s += fmt::format("    for (int j = 0; j < 4 && 4 * c + j < n; ++j) out[4 * c + j] = {};\n",
                         half ? unit_half(t, "msl_unit_float(l[j])") : "msl_unit_float(l[j])");
      } else {
        s += fmt::format("    float z[4];\n"
                         "    msl_box_muller(l[0], l[1], z);\n"
                         "    msl_box_muller(l[2], l[3], z + 2);\n"
                         "    for (int j = 0; j < 4 && 4 * c + j < n; ++j) out[4 * c + j] = {};\n",
                         ty.store("z[j]"));
      }
      break;
    case Prim::dropout: {
      const std::string one = t == DType::Float16 ? "(msl_half)0x3c00" : t == DType::BFloat16 ? "(msl_bf16)0x3f80"
                                                                                            : "(" + ty.t + ")1";
      s = fmt::format("extern \"C\" __global__ void {0}(msl_i64 counters, msl_i64 n, {1}* __restrict__ y, "
                      "{1}* __restrict__ mask, const {1}* __restrict__ x, msl_u64 seed, msl_u64 offset, "
                      "unsigned threshold, {2} scale) {{\n",
                      name, ty.t, ty.c);
      s += kLoop;
      s += fmt::format("    for (int j = 0; j < 4 && 4 * c + j < n; ++j) {{\n"
                       "      const msl_i64 i = 4 * c + j;\n"
                       "      const bool kept = (l[j] >> 8) < threshold;\n"
                       "      mask[i] = kept ? {0} : ({1})0;\n"
                       "      y[i] = {2};\n"
                       "    }}\n",
                       one, ty.t, ty.store(ty.load("x[i]") + " * (kept ? scale : (" + ty.c + ")0)"));
      break;
    }
    default: throw std::invalid_argument(fmt::format("random: {} is not a random primitive", prim_name(p)));
  }
  return s + "  }\n}\n";
}

}  // namespace msl::kernels::cuda
