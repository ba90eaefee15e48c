// The batch-norm kernels' CUDA C (batch_norm_cuda.h).
#include "kernels/cuda/batch_norm_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

namespace msl::kernels::cuda {

namespace {

constexpr const char* kPrelude = R"(typedef long long msl_i64;
struct msl_bn {
  msl_i64 n, c, s;
  int training;
  double eps;
};
)";

const char* type_of(DType t) {
  switch (t) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    default: throw std::invalid_argument(fmt::format("batch-norm kernels: no text for {}", dtype_name(t)));
  }
}

const char* kLoop(const char* bound) {
  return bound[0] == 'C'
             ? "  for (msl_i64 c = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; c < C; c += (msl_i64)gridDim.x * "
               "blockDim.x) {\n"
             : "  for (msl_i64 e = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; e < count; e += "
               "(msl_i64)gridDim.x * blockDim.x) {\n";
}

}  // namespace

std::string bn_kernel_name(BnKernel k, DType x, DType p) {
  const char* what = k == BnKernel::Stats ? "stats" : k == BnKernel::Apply ? "apply" : k == BnKernel::GradSums ? "grad_sums" : "grad_apply";
  return fmt::format("msl_bn_{}_{}_{}", what, dtype_name(x), dtype_name(p));
}

std::string bn_kernel_prelude() { return kPrelude; }

std::string bn_kernel_source(BnKernel k, DType x, DType p) { return kPrelude + bn_kernel(k, x, p); }

std::string bn_kernel(BnKernel k, DType xt, DType pt) {
  const char* X = type_of(xt);
  const char* P = type_of(pt);
  std::string name = bn_kernel_name(k, xt, pt);
  std::string s;
  switch (k) {
    case BnKernel::Stats:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 C, const {X}* __restrict__ x, const {P}* gamma, const "
                      "{P}* beta, const {P}* mean, const {P}* var, {P}* mean_out, {P}* var_out, double* coef, msl_bn g) "
                      "{{\n",
                      name, fmt::arg("X", X), fmt::arg("P", P));
      s += kLoop("C");
      s += R"(    double mu = (double)mean[c], v = (double)var[c], m = (double)(g.n * g.s);
    if (g.training) {
      double sum = 0, q = 0;
      for (msl_i64 n = 0; n < g.n; ++n)
        for (msl_i64 i = 0; i < g.s; ++i) sum += (double)x[(n * g.c + c) * g.s + i];
      mu = sum / m;
      for (msl_i64 n = 0; n < g.n; ++n)
        for (msl_i64 i = 0; i < g.s; ++i) {
          double d = (double)x[(n * g.c + c) * g.s + i] - mu;
          q += d * d;
        }
      v = q / m;
    }
)";
      s += fmt::format("    mean_out[c] = ({P})mu;\n    var_out[c] = ({P})v;\n", fmt::arg("P", P));
      s += R"(    double inv = 1.0 / sqrt(v + g.eps), a = (double)gamma[c] * inv;
    coef[5 * c] = a;
    coef[5 * c + 1] = (double)beta[c] - mu * a;
  }
}
)";
      return s;
    case BnKernel::Apply:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 count, const {X}* __restrict__ x, {X}* __restrict__ y, "
                      "const double* __restrict__ coef, msl_bn g) {{\n",
                      name, fmt::arg("X", X));
      s += kLoop("count");
      s += fmt::format("    msl_i64 c = e / g.s % g.c;\n    y[e] = ({})((double)x[e] * coef[5 * c] + coef[5 * c + 1]);\n  }}\n}}\n",
                       X);
      return s;
    case BnKernel::GradSums:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 C, const {X}* __restrict__ dy, const {X}* __restrict__ x, "
                      "const {P}* gamma, const {P}* mean, const {P}* var, {P}* dgamma, {P}* dbeta, double* coef, msl_bn g) "
                      "{{\n",
                      name, fmt::arg("X", X), fmt::arg("P", P));
      s += kLoop("C");
      s += R"(    double mu = (double)mean[c], inv = 1.0 / sqrt((double)var[c] + g.eps), db = 0, dg = 0;
    for (msl_i64 n = 0; n < g.n; ++n)
      for (msl_i64 i = 0; i < g.s; ++i) {
        msl_i64 k = (n * g.c + c) * g.s + i;
        db += (double)dy[k];
        dg += (double)dy[k] * ((double)x[k] - mu) * inv;
      }
)";
      s += fmt::format("    dbeta[c] = ({P})db;\n    dgamma[c] = ({P})dg;\n", fmt::arg("P", P));
      s += R"(    coef[5 * c] = (double)gamma[c] * inv;
    coef[5 * c + 1] = mu;
    coef[5 * c + 2] = inv;
    coef[5 * c + 3] = db;
    coef[5 * c + 4] = dg;
  }
}
)";
      return s;
    case BnKernel::GradApply:
      s = fmt::format("extern \"C\" __global__ void {}(msl_i64 count, const {X}* __restrict__ dy, const {X}* __restrict__ "
                      "x, {X}* __restrict__ dx, const double* __restrict__ coef, msl_bn g) {{\n",
                      name, fmt::arg("X", X));
      s += kLoop("count");
      s += "    msl_i64 c = e / g.s % g.c;\n    const double* k = coef + 5 * c;\n    double m = (double)(g.n * g.s);\n";
      s += "    double xhat = ((double)x[e] - k[1]) * k[2];\n";
      s += fmt::format("    dx[e] = ({})(k[0] * ((double)dy[e] - k[3] / m - xhat * k[4] / m));\n  }}\n}}\n", X);
      return s;
  }
  return s;
}

}  // namespace msl::kernels::cuda
