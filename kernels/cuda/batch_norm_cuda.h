// CUDA C of batch_norm and batch_norm_grad on [N, C, ...] tensors, as the
// CPU's float64 loops define them (kernels/dnnl_batch_norm.cpp): per
// channel, the batch mean and biased variance in double, in the CPU's
// order (two passes), y = x * a + b with a = gamma / sqrt(var + eps) and
// b = beta - mean * a; the gradient's sums of dy and dy * xhat in double,
// then dx = a * (dy - sum(dy) / m - xhat * sum(dy * xhat) / m), each
// operation as the CPU's, so float64 results are the CPU's bits.
//
// Two kernels each way, no barriers (so the tests run them under host
// emulation): a per-channel kernel (one thread per channel) computes the
// statistics or sums and writes five doubles per channel to a scratch
// array, then a per-element kernel applies them. One thread per channel is
// a first version: correct, but with C-way parallelism for the statistics.
//
//   struct msl_bn { long long n, c, s; int training; double eps; };
//   NAME_stats(long long C, const X* x, const P* gamma, const P* beta,
//              const P* mean, const P* var, P* mean_out, P* var_out,
//              double* coef, msl_bn g)
//   NAME_apply(long long count, const X* x, X* y, const double* coef, msl_bn g)
//   NAME_grad_sums(long long C, const X* dy, const X* x, const P* gamma,
//                  const P* mean, const P* var, P* dgamma, P* dbeta,
//                  double* coef, msl_bn g)
//   NAME_grad_apply(long long count, const X* dy, const X* x, X* dx,
//                   const double* coef, msl_bn g)
// X is the data's dtype, P the parameters' (float32 or float64 each).
#pragma once

#include <string>

#include "kernels/dtype.h"

namespace msl::kernels::cuda {

enum class BnKernel { Stats, Apply, GradSums, GradApply };

struct BnParams {
  int64_t n = 0, c = 0, s = 0;
  int32_t training = 0;
  double eps = 0;
};
// Doubles of scratch per channel.
constexpr int kBnCoefficients = 5;

std::string bn_kernel_name(BnKernel k, DType x, DType p);
std::string bn_kernel_prelude();
std::string bn_kernel(BnKernel k, DType x, DType p);
std::string bn_kernel_source(BnKernel k, DType x, DType p);

}  // namespace msl::kernels::cuda
