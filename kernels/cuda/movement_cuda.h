// CUDA C of the indexing kernels gather, scatter_add and one_hot. (concat and pad need
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
//   scatter_add: NAME(long long n, T* acc, const T* updates, const I* indices,
//                     long long k, long long size, long long inner, int* err)
//     gather's adjoint: acc [outer, size, inner] (x, already copied there)
//     += updates [outer, k, inner] at the indexed rows; an index outside
//     [0, size) sets *err as gather's. T is the accumulator: every integer
//     dtype but Bool, float32 and float64 (16-bit floats accumulate in a
//     float32 copy and round once, as the CPU's). The additions are
//     atomicAdd (8-bit integers: a compare-and-swap of the aligned 32-bit
//     word holding the byte), so integer results are the CPU's exactly,
//     while float ones add a repeated row's updates in whatever order the
//     threads reach them: the CPU adds them in index order, so sums of
//     three or more terms may differ in the last bits.
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/tensor.h"

namespace msl::kernels::cuda {

// "msl_gather_u4_int64"; item_size is the element's bytes.
std::string gather_kernel_name(size_t item_size, DType index);
std::string gather_kernel_text(size_t item_size, DType index);
std::vector<std::string> gather_param_types(size_t item_size, DType index);
// "msl_one_hot_u2_int32".
std::string one_hot_kernel_name(size_t item_size, DType index);
std::string one_hot_kernel_text(size_t item_size, DType index);
std::vector<std::string> one_hot_param_types(size_t item_size, DType index);
// "msl_scatter_add_float32_int64": T is the accumulator dtype.
std::string scatter_add_kernel_name(DType acc, DType index);
std::string scatter_add_kernel_text(DType acc, DType index);
std::vector<std::string> scatter_add_param_types(DType acc, DType index);
// The accumulator dtype of a scatter-add into `t` (Float32 for 16-bit floats).
DType scatter_accumulator(DType t);
// The C type that moves an element of item_size bytes (1, 2, 4, 8) as an
// unsigned integer: "unsigned short".
const char* element_type(size_t item_size);
// The definitions the kernels use, once per translation unit (msl_i64 and
// the msl_atomic_add overloads of scatter_add).
std::string movement_prelude();

// out ([outer, k, inner], contiguous) = the rows `indices` (k of them) of
// params ([outer, size, inner]), both contiguous device tensors: gather's
// kernel, which gather_nd shares (indexing_cuda.h). True when an index was
// outside [0, size). CUDA builds only, as scatter_add_rows.
bool gather_rows(const Tensor& out, const Tensor& params, const Tensor& indices, int64_t size, int64_t inner,
                 const char* what);
// out = x (any device, strides, dtype) with `updates` ([outer, k, inner],
// any) added at the rows `indices` (k of them: a contiguous device tensor)
// of out viewed as [outer, size, inner]: scatter_add's kernel, which
// tensor_scatter_add shares (indexing_cuda.h). True when an index was
// outside [0, size) (out is then partly written). CUDA builds only.
bool scatter_add_rows(const Tensor& out, const Tensor& x, const Tensor& updates, const Tensor& indices, int64_t size,
                      int64_t inner, const char* what);

// The GPU kernels of gather, scatter_add, one_hot, concat and pad
// (movement_launch.cpp, CUDA builds).
void register_movement_kernels();

}  // namespace msl::kernels::cuda
