// The optimizer updates' CUDA C (optimizer_cuda.h).
#include "kernels/cuda/optimizer_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

namespace msl::kernels::cuda {

namespace {

const char* type_of(DType t) {
  if (t == DType::Float32) return "float";
  if (t == DType::Float64) return "double";
  throw std::invalid_argument("optimizer: the parameter must be float32 or float64");
}

const char* kLoop =
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * "
    "blockDim.x) {\n";

}  // namespace

std::string optimizer_kernel_name(Prim p, DType t) { return fmt::format("msl_{}_{}", prim_name(p), dtype_name(t)); }

std::vector<std::string> optimizer_param_types(Prim p, DType t) {
  std::string c = type_of(t);
  if (p == Prim::apply_momentum) return {"long long", c + "*", c + "*", "const " + c + "*", c, c, c, c, "int"};
  return {"long long", c + "*", c + "*", c + "*", "const " + c + "*", c, c, c, c, c, c, c};
}

std::string optimizer_kernel_text(Prim p, DType t) {
  const char* c = type_of(t);
  const std::string name = optimizer_kernel_name(p, t);
  std::string s;
  if (p == Prim::apply_momentum) {
    s = fmt::format("extern \"C\" __global__ void {0}(long long n, {1}* __restrict__ var, {1}* __restrict__ accum, "
                    "const {1}* __restrict__ grad, {1} lr, {1} mom, {1} scale, {1} decay, int nesterov) {{\n",
                    name, c);
    s += kLoop;
    // The two forms contract differently: with Nesterov, g = u * scale
    // feeds two additions and is fused into both.
    s += fmt::format("    const {0} u = fma(decay, var[i], grad[i]);\n"
                     "    if (nesterov) {{\n"
                     "      const {0} a = fma(u, scale, mom * accum[i]);\n"
                     "      accum[i] = a;\n"
                     "      var[i] = fma(-lr, fma(u, scale, mom * a), var[i]);\n"
                     "    }} else {{\n"
                     "      const {0} a = fma(mom, accum[i], u * scale);\n"
                     "      accum[i] = a;\n"
                     "      var[i] = fma(-lr, a, var[i]);\n"
                     "    }}\n",
                     c);
  } else if (p == Prim::apply_adam) {
    s = fmt::format("extern \"C\" __global__ void {0}(long long n, {1}* __restrict__ var, {1}* __restrict__ m, "
                    "{1}* __restrict__ v, const {1}* __restrict__ grad, {1} lr, {1} b1, {1} b2, {1} eps, {1} scale, "
                    "{1} gdecay, {1} udecay) {{\n",
                    name, c);
    s += kLoop;
    s += fmt::format("    const {0} g = fma(gdecay, var[i], grad[i]) * scale;\n"
                     "    const {0} mi = fma(b1, m[i], (({0})1 - b1) * g);\n"
                     "    const {0} vi = fma(b2, v[i], (({0})1 - b2) * g * g);\n"
                     "    m[i] = mi;\n"
                     "    v[i] = vi;\n"
                     "    var[i] = fma(-lr, fma(udecay, var[i], mi / (sqrt(vi) + eps)), var[i]);\n",
                     c);
  } else {
    throw std::invalid_argument(fmt::format("optimizer: {} is not an optimizer update", prim_name(p)));
  }
  return s + "  }\n}\n";
}

}  // namespace msl::kernels::cuda
