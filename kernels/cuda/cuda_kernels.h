// The GPU's kernels for the primitives (the CUDA slots of PrimDef::kernels).
//
// So far: the elementwise primitives of the program representation
// (elementwise_program.h's MSL_EW_OPS) in float32, rendered by
// elementwise_cuda.h; assign and cast (a strided, broadcasting, converting
// copy of every dtype); and the views, whose kernels only make geometry and
// are the CPU's; matmul and matmul_bias through cuBLASLt
// (matmul_launch.cpp); conv2d and its gradients through cuDNN
// (conv_launch.cpp); pooling (pool_cuda.h); batch norm
// (batch_norm_cuda.h). A primitive without a GPU kernel is an error naming it
// and the device (kernels/registry.cpp), never a silent host fallback.
#pragma once

namespace msl::kernels::cuda {

// Fills the CUDA kernel slots; called once, when the first GPU is opened.
void register_cuda_kernels();
// matmul and matmul_bias through cuBLASLt (matmul_launch.cpp).
void register_matmul_kernels();
// conv2d and its gradients through cuDNN (conv_launch.cpp).
void register_conv_kernels();
// max/avg pooling and their gradients (pool_cuda.h, pool_launch.cpp).
void register_pool_kernels();
// batch_norm and its gradient (batch_norm_cuda.h, batch_norm_launch.cpp).
void register_batch_norm_kernels();

}  // namespace msl::kernels::cuda
