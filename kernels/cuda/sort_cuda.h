// CUDA C of the sort primitive (kernels/sort.cpp): each row of the last
// axis sorted stably, NaN above every number, so the order is the CPU's
// exactly. The launch (sort_launch.cpp) first converts the input to its
// key type (float32 for 16-bit floats and float32, float64, int64 for
// every integer dtype and Bool) with the strided copy, then runs
//
//   NAME(long long rows, long long n, const KEY* keys, const U* x,
//        U* values, int* indices, int* scratch)
//
// one thread per row (a grid-stride loop over rows): a bottom-up merge sort
// of the row's positions by key, ping-ponging between indices and scratch
// (each [rows, n]), taking the left run's element on ties (stable); then
// values = x at the sorted positions, moved as U, the unsigned integer of
// x's element size. One thread per row is correct for any row, and fast
// only when there are many rows: long single rows want a parallel sort.
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"

namespace msl::kernels::cuda {

// The key dtype the launch converts `t` to.
DType sort_key_dtype(DType t);
// "msl_sort_float32_u2_desc": the kernel for keys `key`, elements of
// item_size bytes, and the direction.
std::string sort_kernel_name(DType key, size_t item_size, bool descending);
// The kernel's translation unit (msl_i64 defined in it).
std::string sort_kernel_text(DType key, size_t item_size, bool descending);
std::vector<std::string> sort_param_types(DType key, size_t item_size);

// sort's GPU kernel (sort_launch.cpp, CUDA builds).
void register_sort_kernels();

}  // namespace msl::kernels::cuda
