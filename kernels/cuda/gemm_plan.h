// How a row-major matrix product is asked of cuBLASLt, which is
// column-major: a row-major R x C matrix is, read column-major, its
// transpose (C x R, leading dimension C). So C = op(A) . op(B), row-major,
// is computed as C^T = op(B)^T . op(A)^T in column-major terms: B's storage
// is cuBLAS's first operand X, A's the second Y, and C's storage is D.
// Kept apart from the library calls (matmul_launch.cpp) so that the
// mapping, where a mistake would go unnoticed until a GPU runs it, is
// tested on any machine against a plain product (tests/unit/cuda).
#pragma once

#include <cstdint>

namespace msl::kernels::cuda {

// D (rows x cols, column-major, leading dimension ldd) = op(X) . op(Y) for
// each of `batch` matrices, X at stride_x elements from one to the next
// (0: the same X for every batch), likewise Y and D.
struct GemmPlan {
  bool trans_x = false, trans_y = false;
  int64_t rows = 0, cols = 0, depth = 0;  // D is rows x cols; op(X) rows x depth; op(Y) depth x cols
  int64_t x_rows = 0, x_cols = 0, ldx = 0;  // X as stored (before op)
  int64_t y_rows = 0, y_cols = 0, ldy = 0;
  int64_t ldd = 0;
  int64_t batch = 1, stride_x = 0, stride_y = 0, stride_d = 0;
};

// C[i] (m x n, row-major, contiguous, stride m * n) = op(A[i]) . op(B[i]),
// A[i] stored row-major and contiguous as (ta ? k x m : m x k) at stride_a
// elements apart (0: broadcast), B[i] as (tb ? n x k : k x n) at stride_b.
GemmPlan plan_gemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, int64_t batch, int64_t stride_a,
                   int64_t stride_b);

}  // namespace msl::kernels::cuda
