// Plain C++ contractions for the dtypes oneDNN does not take: float64 and
// (wrapping) int32/int64 matmul, and float64 convolutions.
//
// One cache-blocked GEMM (contraction_fallback.cpp) serves them all; the
// convolutions (conv_fallback.cpp) lower to it through im2col/col2im. The
// float64 paths exist for exactness (gradient checks, reference runs), so
// they sum in plain double without reassociation tricks beyond blocking.
#pragma once

#include <cstdint>

#include "kernels/dnnl_window.h"
#include "kernels/tensor.h"

namespace msl::kernels::fallback {

// C[m, n] = A[m, k] * B[k, n], or C += A * B when `accumulate`. A and B are
// read through element strides (row, column), so transposed views cost
// nothing; C is row-major with leading dimension ldc. T is double, or
// uint32_t/uint64_t for int32/int64 (unsigned arithmetic wraps, as integer
// matmul does in NumPy, without signed-overflow UB). Splits the work across
// threads unless it is small or already inside a parallel region.
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, T* c, int64_t ldc, bool accumulate);

// out[..., M, N] = op(a) @ op(b) with NumPy batch broadcasting, for float64,
// int32 and int64 tensors of any strides; out is contiguous.
void matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, const Tensor& out);

// float64 convolutions (NCHW, weight [O, C/groups, kh, kw]); outputs are
// contiguous and fully overwritten.
void conv2d_f64(const Tensor& x, const Tensor& w, const Window2d& g, int64_t groups, const Tensor& y);
void conv2d_backprop_input_f64(const Tensor& dy, const Tensor& w, const Window2d& g, int64_t groups, const Tensor& dx);
void conv2d_backprop_filter_f64(const Tensor& dy, const Tensor& x, const Window2d& g, int64_t groups, const Tensor& dw);

}  // namespace msl::kernels::fallback
