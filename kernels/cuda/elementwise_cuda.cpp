// Rendering elementwise programs as CUDA C (elementwise_cuda.h).
#include "kernels/cuda/elementwise_cuda.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <functional>

namespace msl::kernels::cuda {

namespace {

bool passed_by_value(uint64_t by_value, int k) { return k >= 0 && k < 64 && (by_value >> k & 1); }

// A float constant as a hex literal: exactly the float, whatever the
// compiler's decimal conversion.
std::string literal(float v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));
  if (v != v) return "__int_as_float(0x7fc00000)";
  if (v == __builtin_inff()) return "__int_as_float(0x7f800000)";
  if (v == -__builtin_inff()) return "__int_as_float(0xff800000)";
  return buf;
}

// The helpers a program's values call, each the CPU loop's operation
// (jit/codegen/elementwise_jit.cpp: gen_exp, gen_value).
constexpr const char* kHelpers = R"(typedef long long msl_i64;
// exp(x): x = n ln2 + r with n = rint(x log2 e), r by Cody-Waite's split
// ln2, e^r by Cephes expf's polynomial, 2^n built in the exponent bits.
__device__ __forceinline__ float msl_exp(float x) {
  if (x != x) return x;
  float xc = fminf(fmaxf(x, C_LO), C_HI);
  float n = rintf(xc * C_LOG2E);
  float r = xc - n * C_LN2_HI;
  r = r - n * C_LN2_LO;
  float p = C_P0;
  p = p * r + C_P1;
  p = p * r + C_P2;
  p = p * r + C_P3;
  p = p * r + C_P4;
  p = p * r + C_P5;
  p = ((p * r) * r + r) + 1.0f;
  int ni = (int)n;
  return p * __int_as_float((ni + 127) << 23);
}
// maximum/minimum: NaN propagates; -0 orders below +0.
__device__ __forceinline__ float msl_max(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return __float_as_int(a) < 0 ? b : a;
  return a > b ? a : b;
}
__device__ __forceinline__ float msl_min(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return __float_as_int(a) < 0 ? a : b;
  return a < b ? a : b;
}
// sum[k] += v. A full warp whose lanes all add into one element (a scalar
// sum, a bias or batch-norm sum over H*W) adds the lanes' total once: one
// atomic instead of 32 on the element every thread contends for.
__device__ __forceinline__ void msl_sum_add(float* sum, msl_i64 k, float v) {
  const unsigned mask = __activemask();
  if (mask == 0xffffffffu && __all_sync(mask, __shfl_sync(mask, k, 0) == k)) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(mask, v, offset);
    if ((threadIdx.x & 31u) == 0) atomicAdd(&sum[k], v);
  } else {
    atomicAdd(&sum[k], v);
  }
}
)";

}  // namespace

std::string cuda_elementwise_helpers() {
  // The constants as the CPU loop's: doubles rounded to float.
  std::string h = kHelpers;
  auto put = [&](const char* name, double v) {
    std::string lit = literal(static_cast<float>(v));
    for (size_t at; (at = h.find(name)) != std::string::npos;) h.replace(at, std::strlen(name), lit);
  };
  put("C_LOG2E", 1.44269504088896341);
  put("C_LN2_HI", 0.693359375);
  put("C_LN2_LO", -2.12194440e-4);
  put("C_LO", -87.3365447505531);
  put("C_HI", 88.7228391116729);
  put("C_P0", 1.9875691500e-4);
  put("C_P1", 1.3981999507e-3);
  put("C_P2", 8.3334519073e-3);
  put("C_P3", 4.1665795894e-2);
  put("C_P4", 1.6666665459e-1);
  put("C_P5", 5.0000001201e-1);
  return h;
}

namespace {

// The index an input or sum with pattern `how` reads at element i.
std::string index_of(const EwIndexing& how) {
  if (how.full()) return "i";
  if (how.scalar()) return "0";
  std::string row = how.inner == 1 ? fmt::format("(i % {}LL)", how.count)
                                   : fmt::format("((i / {}LL) % {}LL)", how.inner, how.count);
  if (how.lane == 1) return row;
  return fmt::format("({} * {}LL + i % {}LL)", row, how.lane, how.lane);
}

std::string value_expr(const EwProgram& p, const EwValue& v, uint64_t by_value) {
  auto a = [&] { return fmt::format("v{}", v.a); };
  auto b = [&] { return fmt::format("v{}", v.b); };
  switch (v.op) {
    case EwOp::Input:
      if (passed_by_value(by_value, v.input)) return fmt::format("in{}", v.input);
      return fmt::format("in{}[{}]", v.input, index_of(p.input_indexing(v.input)));
    case EwOp::Const: return literal(v.constant);
    case EwOp::Add: return a() + " + " + b();
    case EwOp::Sub: return a() + " - " + b();
    case EwOp::Mul: return a() + " * " + b();
    case EwOp::Div: return a() + " / " + b();
    case EwOp::Neg: return fmt::format("-{}", a());
    // relu(NaN) is NaN: x > 0 or unordered keeps x.
    case EwOp::Relu: return fmt::format("!({} <= 0.0f) ? {} : 0.0f", a(), a());
    // relu_grad(dy, y): dy where y > 0 (a NaN y selects 0).
    case EwOp::ReluGrad: return fmt::format("{} > 0.0f ? {} : 0.0f", b(), a());
    case EwOp::Max: return fmt::format("msl_max({}, {})", a(), b());
    case EwOp::Min: return fmt::format("msl_min({}, {})", a(), b());
    case EwOp::Exp: return fmt::format("msl_exp({})", a());
    case EwOp::Sigmoid: return fmt::format("1.0f / (1.0f + msl_exp(-{}))", a());
    // tanh(x) = 2 / (1 + e^(-2x)) - 1, as the CPU's.
    case EwOp::Tanh: return fmt::format("2.0f / (1.0f + msl_exp({} * -2.0f)) - 1.0f", a());
  }
  throw std::invalid_argument("render_cuda: unknown operation");
}

}  // namespace

std::string cuda_kernel_name(const EwProgram& p) {
  return fmt::format("msl_ew_{:016x}", static_cast<uint64_t>(std::hash<std::string>{}(p.text())));
}

std::string render_cuda(const EwProgram& p, const std::string& name, uint64_t by_value) {
  return cuda_elementwise_helpers() + render_cuda_kernel(p, name, by_value);
}

std::string render_cuda_kernel(const EwProgram& p, const std::string& name, uint64_t by_value) {
  validate_program(p);
  for (int k = 0; k < p.num_inputs; ++k)
    if (passed_by_value(by_value, k) && !p.input_indexing(k).scalar())
      throw std::invalid_argument(fmt::format("render_cuda: input {} is passed by value but is not read as a scalar", k));
  // The program's text above its kernel, as a comment.
  std::string s;
  std::string text = p.text();
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    s += "// " + text.substr(at, end - at) + "\n";
    at = end + 1;
  }
  s += fmt::format("extern \"C\" __global__ void {}(msl_i64 n", name);
  for (int k = 0; k < p.num_inputs; ++k)
    s += passed_by_value(by_value, k) ? fmt::format(", const float in{}", k) : fmt::format(", const float* in{}", k);
  for (size_t k = 0; k < p.outputs.size(); ++k) s += fmt::format(", float* out{}", k);
  for (size_t k = 0; k < p.reductions.size(); ++k) s += fmt::format(", float* sum{}", k);
  s += ") {\n";
  s += "  for (msl_i64 i = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (msl_i64)gridDim.x * "
       "blockDim.x) {\n";
  for (size_t k = 0; k < p.values.size(); ++k)
    s += fmt::format("    const float v{} = {};\n", k, value_expr(p, p.values[k], by_value));
  for (size_t k = 0; k < p.outputs.size(); ++k) s += fmt::format("    out{}[i] = v{};\n", k, p.outputs[k]);
  for (size_t k = 0; k < p.reductions.size(); ++k)
    s += fmt::format("    msl_sum_add(sum{}, {}, v{});\n", k, index_of(p.reductions[k].how), p.reductions[k].value);
  s += "  }\n}\n";
  return s;
}

}  // namespace msl::kernels::cuda
