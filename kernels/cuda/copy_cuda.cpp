// The strided copy's CUDA C (copy_cuda.h).
#include "kernels/cuda/copy_cuda.h"

#include <fmt/format.h>

namespace msl::kernels::cuda {

namespace {

// Conversions through double as the CPU's copy_convert (movement_copy.cpp:
// load_d, store_d): integers saturate and NaN becomes 0; float16 and
// bfloat16 are bits converted through float with round-to-nearest-even,
// in software so that the text needs no CUDA header.
constexpr const char* kPrelude = R"(typedef long long msl_i64;
typedef unsigned short msl_half;
typedef unsigned short msl_bf16;
struct msl_geometry {
  int ndim;
  msl_i64 shape[8], dst[8], src[8];
};
__device__ __forceinline__ float msl_h2f(msl_half h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float f = (float)m * 5.9604644775390625e-8f;  // m * 2^-24
    return sign ? -f : f;
  }
  if (e == 31) return __uint_as_float(sign | 0x7f800000u | (m << 13));
  return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ msl_half msl_f2h(float f) {
  unsigned x = __float_as_uint(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (msl_half)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x47800000u) return (msl_half)(sign | 0x7c00u);
  if (ax < 0x38800000u) {  // a subnormal half or zero
    if (ax < 0x33000000u) return (msl_half)sign;
    unsigned e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
    unsigned r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (msl_half)(sign | r);
  }
  unsigned r = (ax >> 13) - (112u << 10), rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (msl_half)(sign | r);
}
__device__ __forceinline__ float msl_b2f(msl_bf16 b) { return __uint_as_float((unsigned)b << 16); }
__device__ __forceinline__ msl_bf16 msl_f2b(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (msl_bf16)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (msl_bf16)(u >> 16);
}
)";

// The expression that loads a source element `v` as double.
std::string load(DType t) {
  switch (t) {
    case DType::Bool: return "(v ? 1.0 : 0.0)";
    case DType::Float16: return "(double)msl_h2f(v)";
    case DType::BFloat16: return "(double)msl_b2f(v)";
    default: return "(double)v";
  }
}

// The statements that store double `d` as the destination element `*p`.
std::string store(DType t) {
  const char* c = cuda_type_name(t);
  switch (t) {
    case DType::Bool: return "*p = d != 0;";
    case DType::Float16: return "*p = msl_f2h((float)d);";
    case DType::BFloat16: return "*p = msl_f2b((float)d);";
    case DType::Float32: return "*p = (float)d;";
    case DType::Float64: return "*p = d;";
    default: {
      // Saturating, NaN to 0, as the CPU's store_d; the bounds as doubles.
      const char* lo = t == DType::Int8 ? "-128.0" : t == DType::UInt8 ? "0.0" : t == DType::Int32 ? "-2147483648.0"
                                                                                                      : "-9223372036854775808.0";
      const char* hi = t == DType::Int8 ? "127.0" : t == DType::UInt8 ? "255.0" : t == DType::Int32 ? "2147483647.0"
                                                                                                     : "9223372036854775807.0";
      const char* min = t == DType::Int8 ? "-128" : t == DType::UInt8 ? "0" : t == DType::Int32 ? "(-2147483647 - 1)"
                                                                                                 : "(-9223372036854775807LL - 1)";
      const char* max = t == DType::Int8 ? "127" : t == DType::UInt8 ? "255" : t == DType::Int32 ? "2147483647"
                                                                                                  : "9223372036854775807LL";
      return fmt::format("*p = d != d ? ({})0 : d <= {} ? ({}){} : d >= {} ? ({}){} : ({})d;", c, lo, c, min, hi, c,
                         max, c);
    }
  }
}

}  // namespace

const char* cuda_type_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "signed char";
    case DType::UInt8: return "unsigned char";
    case DType::Int32: return "int";
    case DType::Int64: return "msl_i64";
    case DType::Float16: return "msl_half";
    case DType::BFloat16: return "msl_bf16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "?";
}

std::string copy_kernel_name(DType dst, DType src) {
  return fmt::format("msl_copy_{}_{}", dtype_name(dst), dtype_name(src));
}

std::string copy_kernel_prelude() { return kPrelude; }

std::string copy_kernel_source(DType dst, DType src) { return kPrelude + copy_kernel(dst, src); }

std::string copy_kernel(DType dst, DType src) {
  std::string s;
  const char* d = cuda_type_name(dst);
  const char* c = cuda_type_name(src);
  s += fmt::format(
      "extern \"C\" __global__ void {}(msl_i64 n, {}* __restrict__ dst, const {}* __restrict__ src, msl_geometry g) "
      "{{\n"
      "  for (msl_i64 i = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (msl_i64)gridDim.x * "
      "blockDim.x) {{\n"
      "    msl_i64 rest = i, at_dst = 0, at_src = 0;\n"
      "    for (int k = g.ndim - 1; k >= 0; --k) {{\n"
      "      msl_i64 q = rest % g.shape[k];\n"
      "      rest /= g.shape[k];\n"
      "      at_dst += q * g.dst[k];\n"
      "      at_src += q * g.src[k];\n"
      "    }}\n",
      copy_kernel_name(dst, src), d, c);
  if (dst == src) {
    s += "    dst[at_dst] = src[at_src];\n";
  } else {
    s += fmt::format("    const {} v = src[at_src];\n    const double d = {};\n    {}* p = dst + at_dst;\n    {}\n", c,
                     load(src), d, store(dst));
  }
  s += "  }\n}\n";
  return s;
}

}  // namespace msl::kernels::cuda
