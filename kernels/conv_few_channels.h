// Direct float32 forward convolution for inputs with at most a few
// channels (see conv_few_channels.cpp for why oneDNN is slow there).
#pragma once

#include "kernels/dnnl_window.h"
#include "kernels/tensor.h"

namespace msl::kernels {

// True when the direct kernels take this convolution: one group, at most 4
// input channels, at most 64 output channels, stride and dilation 1,
// kernel up to 7x7, output rows up to 512 wide (x: NCHW, wt: OIHW).
bool few_channel_conv_applies(const Dims& x, const Dims& wt, const Window2d& v, int64_t groups);
// y = conv2d(x, w) into the contiguous float32 `y`.
void few_channel_conv2d(const Tensor& x, const Tensor& w, const Window2d& v, const Tensor& y);

}  // namespace msl::kernels
