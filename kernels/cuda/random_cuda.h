// CUDA C of the random primitives random_uniform, random_normal and dropout
// on the CPU's Philox4x32-10 counter stream (kernels/philox.h and the
// element mapping documented in random_ops.cpp): one thread per counter
// computes Philox once and the 4 elements it feeds (2 for float64 uniform
// and normal), so a seeded tensor is the same on both devices.
//
//   random_uniform, random_normal:
//     NAME(long long counters, long long n, T* out, unsigned long long seed, unsigned long long offset)
//   dropout:
//     NAME(long long counters, long long n, T* y, T* mask, const T* x, unsigned long long seed,
//          unsigned long long offset, unsigned threshold, C scale)
//
// Exactness: Philox is integer arithmetic, uniform values and dropout are
// single roundings: bit for bit. The float32 Box-Muller transform
// (random_normal in float32, float16, bfloat16) uses the CPU's polynomial
// log, Newton square root and quarter-turn sin/cos with the products fused
// into FMAs exactly where GCC fuses them in the CPU loop's x86-64-v3/v4
// clones (read from their code; NVRTC runs with --fmad=false, so only the
// explicit fma() calls fuse): the CPU's bits on any CPU with AVX2. float64
// normals call log, sqrt, cos and sin in double: the CPU's bits under host
// emulation (the host's libm), within CUDA's documented 1-2 ulps of them on
// a GPU.
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

// "msl_random_normal_float16".
std::string random_kernel_name(Prim p, DType t);
std::string random_prelude();
std::string random_kernel_text(Prim p, DType t);
std::string random_source(Prim p, DType t);
std::vector<std::string> random_param_types(Prim p, DType t);

// The GPU kernels of the three primitives (random_launch.cpp, CUDA builds).
void register_random_kernels();

}  // namespace msl::kernels::cuda
