// CUDA C of NumPy-style indexing on the GPU (the CPU's
// movement_scatter.cpp): the row offsets of an [..., K] index tensor, the
// last-row-wins writes of tensor_scatter_update, and nonzero's count and
// fill. gather_nd and tensor_scatter_add need no kernel of their own: with
// x viewed as [positions, inner], they are gather and scatter_add
// (movement_cuda.h) with the row offsets as int64 indices along axis 0.
//
//   nd_offsets: NAME(long long rows, long long* offs, const I* indices,
//                    msl_nd_dims dims, int* err)
//     offs[r] = the row-major position in dims.d[0..K) (K = dims.ndim) that
//     index row r names, negative indices counting from the end as the
//     CPU's; an index outside [-n, n) stores 1 in *err and offset 0 (so
//     that a kernel queued after it stays in bounds; the launch raises the
//     CPU's IndexOutOfRange).
//   nd_last_row: NAME(long long rows, const long long* offs,
//                     unsigned long long* last)
//     last[offs[r]] = max(r + 1) over the rows naming it (atomicMax; last
//     starts zeroed).
//   nd_update: NAME(long long n, U* out, const U* updates,
//                   const long long* offs, const unsigned long long* last,
//                   long long inner)
//     block row r of updates [rows, inner] into block offs[r] of out, by
//     the last row naming it only: a repeated position keeps the last
//     row's values, as the CPU's in-order writes (and NumPy's x[idx] = v).
//
//   nonzero_count: NAME(long long chunks, const T* x, long long n,
//                       long long chunk, long long* counts)
//     counts[c] = the nonzeros of x[c*chunk, (c+1)*chunk) (x contiguous).
//   nonzero_scan: NAME(long long one, long long chunks, long long* counts)
//     one thread: counts[0..chunks) become their exclusive prefix sums and
//     counts[chunks] the total (the one number the host reads back).
//   nonzero_fill: NAME(long long chunks, const T* x, long long n,
//                      long long chunk, const long long* starts,
//                      long long* out, msl_nd_dims shape)
//     each chunk writes the coordinates of its nonzeros, in order, from
//     row starts[c] of out [nnz, ndim]: the CPU's row-major order.
// "Nonzero" is the CPU's conversion to Bool: v != 0 (NaN counts, -0.0
// does not; 16-bit floats by their bits without the sign).
//
// U is an unsigned integer of the element's size; I is int32 or int64.
#pragma once

#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/tensor.h"

namespace msl::kernels::cuda {

// The kernels' msl_nd_dims as the host passes it (the same layout).
struct NdDims {
  int32_t ndim = 0;
  int64_t d[8] = {};
};
static_assert(kMaxDims == 8, "msl_nd_dims holds kMaxDims dimensions");

// The definitions the kernels use, once per translation unit.
std::string indexing_prelude();

// "msl_nd_offsets_int32".
std::string nd_offsets_kernel_name(DType index);
std::string nd_offsets_kernel_text(DType index);
std::vector<std::string> nd_offsets_param_types(DType index);

std::string nd_last_row_kernel_name();
std::string nd_last_row_kernel_text();
std::vector<std::string> nd_last_row_param_types();

// "msl_nd_update_u4"; item_size is the element's bytes.
std::string nd_update_kernel_name(size_t item_size);
std::string nd_update_kernel_text(size_t item_size);
std::vector<std::string> nd_update_param_types(size_t item_size);

// "msl_nonzero_count_float16", "msl_nonzero_fill_float16".
std::string nonzero_count_kernel_name(DType t);
std::string nonzero_count_kernel_text(DType t);
std::vector<std::string> nonzero_count_param_types(DType t);
std::string nonzero_scan_kernel_name();
std::string nonzero_scan_kernel_text();
std::vector<std::string> nonzero_scan_param_types();
std::string nonzero_fill_kernel_name(DType t);
std::string nonzero_fill_kernel_text(DType t);
std::vector<std::string> nonzero_fill_param_types(DType t);
// The elements one thread of nonzero's count and fill walks for n elements.
int64_t nonzero_chunk(int64_t n);

// The GPU kernels of gather_nd, tensor_scatter_update, tensor_scatter_add,
// nonzero, masked_fill and strided_slice_update (indexing_launch.cpp, CUDA
// builds).
void register_indexing_kernels();

}  // namespace msl::kernels::cuda
