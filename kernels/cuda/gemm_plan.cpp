// The row-major to column-major mapping of matrix products (gemm_plan.h).
#include "kernels/cuda/gemm_plan.h"

namespace msl::kernels::cuda {

GemmPlan plan_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, int64_t batch, int64_t stride_a,
                   int64_t stride_b) {
  GemmPlan p;
  // D = C^T: n x m, leading dimension n.
  p.rows = n;
  p.cols = m;
  p.depth = k;
  p.ldd = n;
  // X = B's storage read column-major: B^T when B is k x n (op(X) = X,
  // n x k), else B (stored n x k, read k x n: op(X) = X^T).
  p.trans_x = tb;
  p.x_rows = tb ? k : n;
  p.x_cols = tb ? n : k;
  p.ldx = p.x_rows;
  // Y = A's storage read column-major: A^T (k x m) when A is m x k, else
  // A (stored k x m, read m x k: op(Y) = Y^T).
  p.trans_y = ta;
  p.y_rows = ta ? m : k;
  p.y_cols = ta ? k : m;
  p.ldy = p.y_rows;
  p.batch = batch;
  p.stride_x = stride_b;
  p.stride_y = stride_a;
  p.stride_d = m * n;
  return p;
}

}  // namespace msl::kernels::cuda
