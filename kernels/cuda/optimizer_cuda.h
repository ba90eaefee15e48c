// CUDA C of the fused optimizer updates apply_momentum and apply_adam
// (optimizer_apply.cpp explains the formulas): one grid-stride pass over the
// parameter and its state, with the hyperparameters passed by value.
//
//   apply_momentum: NAME(long long n, T* var, T* accum, const T* grad,
//                        T lr, T momentum, T scale, T decay, int nesterov)
//   apply_adam:     NAME(long long n, T* var, T* m, T* v, const T* grad,
//                        T lr, T beta1, T beta2, T eps, T scale,
//                        T gradient_decay, T update_decay)
//
// The operations are the CPU loop's, in its order, in T (float32 or
// float64), with the products fused into FMAs exactly where GCC fuses them
// in the CPU loop's x86-64-v3 and v4 clones (read from their code: NVRTC
// itself runs with --fmad=false, so only the explicit fma() calls fuse).
// Those clones are what the CPU runs on any machine with AVX2, so the
// results are the CPU's bits there (the test checks it); the CPU's default
// clone, for older machines, does not fuse and differs by a rounding.
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

// "msl_apply_adam_float32".
std::string optimizer_kernel_name(Prim p, DType t);
// The translation unit of one kernel (it needs no prelude).
std::string optimizer_kernel_text(Prim p, DType t);
std::vector<std::string> optimizer_param_types(Prim p, DType t);

// The GPU kernels of both updates (optimizer_launch.cpp, CUDA builds).
void register_optimizer_kernels();

}  // namespace msl::kernels::cuda
