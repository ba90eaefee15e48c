// oneDNN matmul, shared by the matmul primitive (dnnl_matmul.cpp) and the
// fused matmul_bias (dnnl_fused.cpp).
#pragma once

#include "kernels/tensor.h"

namespace msl::kernels {

// out = op(a) @ op(b) [+ bias] [then ReLU] through oneDNN (float32 or
// bfloat16 operands of one dtype, contiguous out of theirs or float32; the
// bias float32, broadcast over all
// but out's last dim, added and the ReLU applied by oneDNN as it writes
// out). False when oneDNN has no fast kernel for the dtype on this CPU.
bool dnnl_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb, const Tensor& out, const Tensor* bias = nullptr,
                 bool relu = false);

}  // namespace msl::kernels
