// CUDA C of softmax, log_softmax, their gradients and the two softmax
// cross-entropy losses.
//
// First version: one thread per row (a row: the N elements along the
// softmax axis, stride B in the contiguous [A, N, B] view of the input;
// the losses' rows are the logits' [N, C] rows), looping over the row a few
// times, with no barriers or shared memory, so the text runs under host
// emulation. Fast for many short rows, slow for a few long ones.
//
//   softmax, log_softmax:           NAME(long long rows, T* y, const T* x, long long n, long long b)
//   softmax_grad, log_softmax_grad: NAME(long long rows, T* dx, const T* y, const T* dy, long long n, long long b)
//   softmax_cross_entropy:          NAME(long long rows, T* loss, T* dlogits, const T* logits, const T* labels,
//                                        long long c)
//   sparse_softmax_cross_entropy:   NAME(long long rows, T* loss, T* dlogits, const T* logits, const I* labels,
//                                        long long c, int* err)
//
// The math is the CPU's (softmax.cpp) operation for operation: the row's
// maximum subtracted (0 for an all -inf row), float32 exp by the same
// Cody-Waite reduction and Cephes polynomial, 1/sum and m + log(sum) in
// double, 16-bit floats computed in float32 and rounded once. Only the sums
// differ: the CPU adds float32 lanes in blocks and the blocks in double,
// the kernel adds every term in double, so results agree to a few float32
// ulps, not bit for bit. A label outside [0, C) of the sparse loss stores 1
// in *err and leaves its row unwritten; the launch then raises the CPU's
// IndexError.
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

struct SoftmaxKernel {
  Prim prim = Prim::softmax;
  DType dtype = DType::Float32;        // of the values (float16, bfloat16, float32, float64)
  DType label_dtype = DType::Int64;    // sparse_softmax_cross_entropy's labels (int32, int64)
};

// "msl_softmax_float32", "msl_sparse_softmax_cross_entropy_float16_int32".
std::string softmax_kernel_name(const SoftmaxKernel& k);
std::string softmax_prelude();
std::string softmax_kernel_text(const SoftmaxKernel& k);
std::string softmax_source(const SoftmaxKernel& k);
// The kernel's parameter types in order, as C.
std::vector<std::string> softmax_param_types(const SoftmaxKernel& k);

// The GPU kernels of the six primitives (softmax_launch.cpp, CUDA builds).
void register_softmax_kernels();

}  // namespace msl::kernels::cuda
