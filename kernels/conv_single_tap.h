// Convolutions whose input and output are single pixels (a 3x3 layer on a
// 1x1 feature map, as CIFAR-sized ResNets reach in their last stage): every
// kernel tap but one reads padding, so the convolution and its gradients
// are matrix products with that tap's [O, C] slice of the weight.
//
// Why: oneDNN runs them as full convolutions. Its backward-weights kernel
// computes all nine taps of a 512x512x3x3 weight from a 1x1 batch of 32
// (2 ms per call here, three calls per ResNet-18 step); the product is 17
// MFLOP (0.1 ms through dnnl_matmul), and the other taps' gradient is zero.
#pragma once

#include "kernels/dnnl_conv_plan.h"
#include "kernels/tensor.h"

namespace msl::kernels {

// Runs `op` as a matrix product when `g` is a floating-point (float32,
// bfloat16, float16 where oneDNN's matmul takes it), ungrouped
// convolution of a 1x1 input to a 1x1 output (in0/in1/out as run_conv
// takes them: x, w -> y; dy, w -> dx; dy, x -> dw); false, doing nothing,
// for anything else.
bool single_tap_conv(ConvOp op, const ConvGeom& g, const Tensor& in0, const Tensor& in1, const Tensor& out);

}  // namespace msl::kernels
