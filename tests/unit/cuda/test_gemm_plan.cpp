// The row-major product as cuBLASLt is asked for it (gemm_plan.h): a
// column-major GEMM written here as cuBLAS defines it (op, leading
// dimensions, strided batches), run on the plan, must give the row-major
// product computed directly in float64, for every transpose combination,
// batched and broadcast.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cuda/gemm_plan.h"

using msl::kernels::cuda::GemmPlan;
using msl::kernels::cuda::plan_gemm;

namespace {

// cuBLAS's definition: D[r + c * ldd] = sum_k op(X)[r, k] * op(Y)[k, c],
// op(M)[i, j] = trans ? M[j + i * ld] : M[i + j * ld].
void column_major_gemm(const GemmPlan& p, const double* x, const double* y, double* d) {
  for (int64_t b = 0; b < p.batch; ++b) {
    const double* xb = x + b * p.stride_x;
    const double* yb = y + b * p.stride_y;
    double* db = d + b * p.stride_d;
    for (int64_t c = 0; c < p.cols; ++c)
      for (int64_t r = 0; r < p.rows; ++r) {
        double s = 0;
        for (int64_t k = 0; k < p.depth; ++k) {
          double xv = p.trans_x ? xb[k + r * p.ldx] : xb[r + k * p.ldx];
          double yv = p.trans_y ? yb[c + k * p.ldy] : yb[k + c * p.ldy];
          s += xv * yv;
        }
        db[r + c * p.ldd] = s;
      }
  }
}

}  // namespace

TEST_CASE("the cuBLASLt plan of a row-major product computes it, every transpose, batched and broadcast") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t m = 5, n = 3, k = 4, batch = 2;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t stride_b_mode : {0, 1}) {  // B broadcast over the batch, or one per batch
        CAPTURE(ta);
        CAPTURE(tb);
        CAPTURE(stride_b_mode);
        std::vector<double> a(static_cast<size_t>(batch * m * k)), b(static_cast<size_t>(batch * k * n));
        for (double& v : a) v = u(rng);
        for (double& v : b) v = u(rng);
        int64_t stride_b = stride_b_mode ? k * n : 0;
        GemmPlan p = plan_gemm(m, n, k, ta, tb, batch, m * k, stride_b);
        CHECK(p.x_rows * p.x_cols == k * n);
        CHECK(p.y_rows * p.y_cols == m * k);
        std::vector<double> got(static_cast<size_t>(batch * m * n), NAN);
        column_major_gemm(p, b.data(), a.data(), got.data());
        for (int64_t i = 0; i < batch; ++i)
          for (int64_t r = 0; r < m; ++r)
            for (int64_t c = 0; c < n; ++c) {
              double want = 0;
              for (int64_t j = 0; j < k; ++j) {
                double av = ta ? a[static_cast<size_t>(i * m * k + j * m + r)] : a[static_cast<size_t>(i * m * k + r * k + j)];
                const double* bb = b.data() + i * stride_b;
                double bv = tb ? bb[c * k + j] : bb[j * n + c];
                want += av * bv;
              }
              CHECK(std::fabs(got[static_cast<size_t>(i * m * n + r * n + c)] - want) < 1e-12);
            }
      }
}
