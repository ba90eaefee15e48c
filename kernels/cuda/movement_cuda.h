// CUDA C of the indexing kernels gather and one_hot. (concat and pad need
// no kernel of their own: they are strided copies, copy_cuda.h, into views
// of their output, and pad a broadcast fill first; movement_launch.cpp.)
//
// Both move elements without reading their meaning, so a kernel is per
// element size (1, 2, 4, 8 bytes, as unsigned integers) and index dtype:
//
//   gather:  NAME(long long n, U* out, const U* params, const I* indices,
//                 long long k, long long size, long long inner, int* err)
//     out is [outer, k, inner] from params [outer, size, inner] (both
//     contiguous); an index outside [0, size) stores 1 in *err and leaves
//     its elements unwritten (the launch raises the CPU's IndexError).
//   one_hot: NAME(long long n, U* out, const I* indices, long long depth,
//                 long long inner, U on, U off)
//     out is [outer, depth, inner]; element (r, v, j) is `on` where
//     indices[r, j] == v, else `off` (an index outside [0, depth) gives an
//     all-off row, as the CPU's).
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace msl::kernels::cuda {

// "msl_gather_u4_int64"; item_size is the element's bytes.
std::string gather_kernel_name(size_t item_size, DType index);
std::string gather_kernel_text(size_t item_size, DType index);
std::vector<std::string> gather_param_types(size_t item_size, DType index);
// "msl_one_hot_u2_int32".
std::string one_hot_kernel_name(size_t item_size, DType index);
std::string one_hot_kernel_text(size_t item_size, DType index);
std::vector<std::string> one_hot_param_types(size_t item_size, DType index);
// The definitions the kernels use, once per translation unit.
std::string movement_prelude();

// The GPU kernels of gather, one_hot, concat and pad (movement_launch.cpp,
// CUDA builds).
void register_movement_kernels();

}  // namespace msl::kernels::cuda
