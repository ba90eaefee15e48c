// The weight gradient of a convolution with few output pixels (a 3x3 layer
// on the 2x2 maps of a CIFAR-sized ResNet's last stage, or its strided
// entry to 1x1) as one matrix product over an im2col of the input.
//
// Why: dW[o, (c, kh, kw)] = sum over (n, oh, ow) of dy[n, o, oh, ow] *
// x[n, c, oh*sh + kh*dh - pt, ow*sw + kw*dw - pl] is a product whose inner
// dimension is batch x output pixels, only 32-128 here; oneDNN's
// backward-weights kernels parallelize over output pixels and blocks and
// run such layers at a fraction of their speed (bfloat16 512x256x3x3 from
// 2x2 to 1x1 at batch 32: 3.0 ms a call; 75 MFLOP, 0.3 ms as a matmul).
// The im2col is N*OH*OW rows of C*KH*KW values, at most 4 rows a sample.
#pragma once

#include "kernels/dnnl_conv_plan.h"
#include "kernels/tensor.h"

namespace msl::kernels {

// Writes dw (contiguous [O, C, KH, KW]) from dy and x when `g` is an
// ungrouped convolution with at most kMaxPixels output pixels and all three
// tensors have one floating dtype oneDNN's matmul takes; dy and x may be
// channel-blocked ([N, C/b, H, W, b], block dy_block / x_block, else 0).
// False, writing nothing, otherwise.
inline constexpr int64_t kSmallOutputMaxPixels = 4;
bool small_output_filter_grad(const ConvGeom& g, const Tensor& dy, int64_t dy_block, const Tensor& x,
                              int64_t x_block, const Tensor& dw);

}  // namespace msl::kernels
