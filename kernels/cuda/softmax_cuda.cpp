// The softmax family's CUDA C (softmax_cuda.h).
#include "kernels/cuda/softmax_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"

namespace msl::kernels::cuda {

namespace {

// softmax.cpp's exp_f32: exp(x) = 2^k exp(r), k = round(x / ln2) by the
// 1.5 * 2^23 trick, r by Cody-Waite's split ln2, exp(r) by Cephes expf's
// polynomial, 2^k applied as two factors so subnormal results round once.
constexpr const char* kPrelude = R"(__device__ __forceinline__ float msl_exp_f32(float x) {
  const float hi = 88.72283935546875f, lo = -103.972076416f;
  float xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  xc = x != x ? 0.0f : xc;
  float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - k * 0.693359375f;
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int ki = (int)k, k1 = ki >> 1, k2 = ki - k1;
  y = y * __int_as_float((k1 + 127) << 23) * __int_as_float((k2 + 127) << 23);
  y = x > hi ? __int_as_float(0x7f800000) : y;
  y = x < lo ? 0.0f : y;
  return x != x ? x : y;
}
)";

// What a kernel's text needs of its dtype: the storage and compute types,
// a load, a store, exp, and the most negative finite value.
struct Types {
  std::string t, c, lowest;
  std::string load(const std::string& v) const {
    return t == "msl_half" ? "msl_h2f(" + v + ")" : t == "msl_bf16" ? "msl_b2f(" + v + ")" : v;
  }
  std::string store(const std::string& v) const {
    return t == "msl_half" ? "msl_f2h(" + v + ")" : t == "msl_bf16" ? "msl_f2b(" + v + ")" : v;
  }
  std::string exp(const std::string& v) const { return c == "float" ? "msl_exp_f32(" + v + ")" : "exp(" + v + ")"; }
};

Types types_of(DType d) {
  if (!is_floating(d)) throw std::invalid_argument("softmax: the values must be floating point");
  Types ty;
  ty.t = cuda_type_name(d);
  ty.c = d == DType::Float64 ? "double" : "float";
  ty.lowest = d == DType::Float64 ? "-1.7976931348623157e308" : "-3.40282347e38f";
  return ty;
}

const char* kLoop =
    "  for (msl_i64 r = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += (msl_i64)gridDim.x * "
    "blockDim.x) {\n";

// The row's maximum m (0 when it is -inf: exp(-inf - 0) = 0 everywhere)
// and s, the double sum of exp(x - m), over elements X(k) for k < n.
std::string max_and_sum(const Types& ty, const std::string& x_at) {
  std::string x0 = fmt::format(fmt::runtime(x_at), "0");
  std::string xk = fmt::format(fmt::runtime(x_at), "k");
  return fmt::format(
      "    {0} m = {1};\n"
      "    for (msl_i64 k = 1; k < n; ++k) {{\n"
      "      const {0} v = {2};\n"
      "      m = v > m ? v : m;\n"
      "    }}\n"
      "    if (m < {3}) m = 0;\n"
      "    double s = 0.0;\n"
      "    for (msl_i64 k = 0; k < n; ++k) s += (double){4};\n",
      ty.c, ty.load(x0), ty.load(xk), ty.lowest, ty.exp(ty.load(xk) + " - m"));
}

std::string softmax_text(const SoftmaxKernel& k, const Types& ty) {
  const std::string name = softmax_kernel_name(k);
  std::string s;
  switch (k.prim) {
    case Prim::softmax:
    case Prim::log_softmax: {
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 rows, {}* __restrict__ y, const {}* __restrict__ x, "
                      "msl_i64 n, msl_i64 b) {{\n",
                      name, ty.t, ty.t);
      s += kLoop;
      s += "    const msl_i64 base = r / b * n * b + r % b;\n";
      s += max_and_sum(ty, "x[base + {} * b]");
      if (k.prim == Prim::softmax)
        s += fmt::format("    const {0} inv = ({0})(1.0 / s);\n"
                         "    for (msl_i64 k = 0; k < n; ++k) y[base + k * b] = {1};\n",
                         ty.c, ty.store(ty.exp(ty.load("x[base + k * b]") + " - m") + " * inv"));
      else
        s += fmt::format("    const {0} c = ({0})((double)m + log(s));\n"
                         "    for (msl_i64 k = 0; k < n; ++k) y[base + k * b] = {1};\n",
                         ty.c, ty.store(ty.load("x[base + k * b]") + " - c"));
      break;
    }
    case Prim::softmax_grad:
    case Prim::log_softmax_grad: {
      // softmax_grad: dx = y (dy - sum(dy y)); log_softmax_grad: dx = dy - exp(y) sum(dy).
      const bool soft = k.prim == Prim::softmax_grad;
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 rows, {}* __restrict__ dx, const {}* __restrict__ y, "
                      "const {}* __restrict__ dy, msl_i64 n, msl_i64 b) {{\n",
                      name, ty.t, ty.t, ty.t);
      s += kLoop;
      s += "    const msl_i64 base = r / b * n * b + r % b;\n    double t = 0.0;\n";
      std::string yk = ty.load("y[base + k * b]"), dyk = ty.load("dy[base + k * b]");
      s += fmt::format("    for (msl_i64 k = 0; k < n; ++k) t += (double)({});\n",
                       soft ? dyk + " * " + yk : dyk);
      s += fmt::format("    const {0} d = ({0})t;\n", ty.c);
      s += fmt::format("    for (msl_i64 k = 0; k < n; ++k) dx[base + k * b] = {};\n",
                       ty.store(soft ? yk + " * (" + dyk + " - d)" : dyk + " - " + ty.exp(yk) + " * d"));
      break;
    }
    case Prim::softmax_cross_entropy:
    case Prim::sparse_softmax_cross_entropy: {
      // loss = sum(labels (lse - x)), dlogits = softmax(x) - labels; the
      // sparse labels are one_hot(label).
      const bool sparse = k.prim == Prim::sparse_softmax_cross_entropy;
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 rows, {}* __restrict__ loss, {}* __restrict__ dlogits, "
                      "const {}* __restrict__ x, const {}* __restrict__ labels, msl_i64 n{}) {{\n",
                      name, ty.t, ty.t, ty.t, sparse ? cuda_type_name(k.label_dtype) : ty.t,
                      sparse ? ", int* err" : "");
      s += kLoop;
      s += "    const msl_i64 base = r * n;\n";
      if (sparse)
        s += "    const msl_i64 label = (msl_i64)labels[r];\n"
             "    if (label < 0 || label >= n) {\n      *err = 1;\n      continue;\n    }\n";
      s += fmt::format("    if (n == 0) {{\n      loss[r] = {};\n      continue;\n    }}\n", ty.store("0"));
      s += max_and_sum(ty, "x[base + {}]");
      s += fmt::format("    const {0} lse = ({0})((double)m + log(s)), inv = ({0})(1.0 / s);\n", ty.c);
      std::string xk = ty.load("x[base + k]"), e = ty.exp(xk + " - m") + " * inv";
      if (sparse) {
        s += fmt::format("    for (msl_i64 k = 0; k < n; ++k) dlogits[base + k] = {};\n",
                         ty.store("k == label ? " + e + " - 1 : " + e));
        s += fmt::format("    loss[r] = {};\n", ty.store("lse - " + ty.load("x[base + label]")));
      } else {
        s += fmt::format("    double acc = 0.0;\n"
                         "    for (msl_i64 k = 0; k < n; ++k) {{\n"
                         "      const {0} l = {1}, v = {2};\n"
                         "      acc += (double)l * (double)(lse - v);\n"
                         "      dlogits[base + k] = {3};\n"
                         "    }}\n"
                         "    loss[r] = {4};\n",
                         ty.c, ty.load("labels[base + k]"), xk, ty.store(e + " - l"), ty.store("(" + ty.c + ")acc"));
      }
      break;
    }
    default: throw std::invalid_argument(fmt::format("softmax: {} is not of the softmax family", prim_name(k.prim)));
  }
  return s + "  }\n}\n";
}

}  // namespace

std::string softmax_kernel_name(const SoftmaxKernel& k) {
  std::string s = fmt::format("msl_{}_{}", prim_name(k.prim), dtype_name(k.dtype));
  if (k.prim == Prim::sparse_softmax_cross_entropy) s += fmt::format("_{}", dtype_name(k.label_dtype));
  return s;
}

std::string softmax_prelude() { return copy_kernel_prelude() + kPrelude; }

std::string softmax_kernel_text(const SoftmaxKernel& k) { return softmax_text(k, types_of(k.dtype)); }

std::string softmax_source(const SoftmaxKernel& k) { return softmax_prelude() + softmax_kernel_text(k); }

std::vector<std::string> softmax_param_types(const SoftmaxKernel& k) {
  const std::string t = cuda_type_name(k.dtype);
  switch (k.prim) {
    case Prim::softmax:
    case Prim::log_softmax: return {"msl_i64", t + "*", "const " + t + "*", "msl_i64", "msl_i64"};
    case Prim::softmax_grad:
    case Prim::log_softmax_grad:
      return {"msl_i64", t + "*", "const " + t + "*", "const " + t + "*", "msl_i64", "msl_i64"};
    case Prim::softmax_cross_entropy:
      return {"msl_i64", t + "*", t + "*", "const " + t + "*", "const " + t + "*", "msl_i64"};
    default:
      return {"msl_i64", t + "*", t + "*", "const " + t + "*",
              "const " + std::string(cuda_type_name(k.label_dtype)) + "*", "msl_i64", "int*"};
  }
}

}  // namespace msl::kernels::cuda
