// The GPU's kernels for the primitives (the CUDA slots of PrimDef::kernels).
//
// Each group of kernels is CUDA C text (a *_cuda.h generator, built and
// tested without a GPU) with its launch code (*_launch.cpp): pointwise
// (every elementwise primitive, any dtype and strides), reductions,
// softmax and losses, movement (gather, scatter_add, one_hot, concat,
// pad), NumPy-style indexing (gather_nd, the tensor scatters, nonzero,
// masked_fill, strided_slice_update: indexing_cuda.h), sort (a stable
// merge sort per row: sort_cuda.h), optimizer updates,
// random (the CPU's Philox stream), pooling and batch norm, the
// collectives (NCCL); assign, cast,
// to_blocked and from_blocked are the strided copy (copy_cuda.h); the
// views are the CPU's kernels, which only make geometry; matmul and
// matmul_bias go through cuBLASLt, conv2d and its gradients through cuDNN,
// and the fused convolutions are cuDNN's conv2d followed by the pointwise
// epilogue (conv_fused_launch.cpp). Every primitive has a GPU kernel
// (unit.cuda_text.kernel_coverage fails naming any that has none); a
// primitive without one would be an error naming it and the device
// (kernels/registry.cpp), never a silent host fallback.
#pragma once

namespace msl::kernels::cuda {

// Fills the CUDA kernel slots; called once, when the first GPU is opened.
void register_cuda_kernels();
// matmul and matmul_bias through cuBLASLt (matmul_launch.cpp).
void register_matmul_kernels();
// conv2d and its gradients through cuDNN (conv_launch.cpp), with the fused
// convolutions (register_fused_conv_kernels, conv_fused_launch.cpp).
void register_conv_kernels();
void register_fused_conv_kernels();
// max/avg pooling and their gradients (pool_cuda.h, pool_launch.cpp).
void register_pool_kernels();
// batch_norm and its gradient (batch_norm_cuda.h, batch_norm_launch.cpp).
void register_batch_norm_kernels();
// all_reduce, all_gather, reduce_scatter, broadcast through NCCL
// (collective_launch.cpp).
void register_collective_kernels();

}  // namespace msl::kernels::cuda
