// The fused convolutions of graph mode's epilogue fusion (the CPU's
// dnnl_fused.cpp) on the GPU: conv2d_bias, conv2d_bn and conv2d_bn_add.
//
// Each runs as the plain cuDNN convolution (conv2d's GPU kernel) followed
// by its epilogue as the pointwise kernels, in the order of the CPU's
// oneDNN post-ops: y * scale (conv2d_bn), + bias or shift, + residual, relu
// (pointwise relu keeps NaN, as oneDNN's). Not one fused cuDNN call: the
// legacy cudnnConvolutionBiasActivationForward has no per-channel scale
// (conv2d_bn) and runs ReLU on one algorithm only, and the graph API's
// runtime-fused engines depend on the GPU generation. Composed, the results
// are conv2d's with the CPU's epilogue on every GPU, at the cost of a round
// trip of the output through memory per epilogue step; one fused call is
// a later speed-up, not a change of results.
// conv2d_bn's per-channel scale and shift are computed on the host from
// the statistics, in double as the CPU's.
//
// Float32 and NCHW only, as inference (and conv2d on the GPU) allow.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "kernels/blocked_layout.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pointwise_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

namespace {

// One epilogue step: `prim` of the running result and `operand` (none for relu).
struct Step {
  Prim prim;
  Tensor operand;
};

// A per-channel tensor of `channels` values as [1, C, 1, 1] on `dev`.
Tensor channel_operand(const Tensor& t, int64_t channels, CudaDevice& dev) {
  Tensor c = dense_on(t, DType::Float32, dev);
  Dims shape{1, channels, 1, 1};
  return Tensor::view(c, shape, contiguous_strides(shape), c.offset());
}

// act(conv2d(x, w) <steps>) into the output.
void run_fused(const KernelArgs& a, const char* op, std::vector<Step> steps) {
  if (layout_block(op, a.attrs))
    throw ValueError(fmt::format("{}: the channel-blocked layout is the CPU's; the GPU convolves NCHW tensors", op));
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  if (a.attrs.get_str("activation", "none") == "relu") steps.push_back({Prim::relu, Tensor()});
  Attrs conv_attrs;
  for (const char* name : {"stride", "padding", "dilation", "groups", "pad_mode"})
    if (const AttrValue* v = a.attrs.find(name)) conv_attrs.set(name, *v);
  Tensor conv_in[2] = {a.in[0], a.in[1]};
  Tensor y = execute1(Prim::conv2d, conv_in, conv_attrs);
  // Each step reads one buffer and writes another (the pointwise kernels
  // take no output that is also an input); the last writes the output.
  Tensor spare;
  Attrs none;
  for (size_t i = 0; i < steps.size(); ++i) {
    Tensor dst = out;
    if (i + 1 < steps.size()) dst = spare.defined() ? spare : Tensor(DType::Float32, out.shape(), out.device());
    std::vector<Tensor> in{y};
    if (steps[i].operand.defined()) in.push_back(steps[i].operand);
    cuda_pointwise(KernelArgs{steps[i].prim, in, none, std::span<Tensor>(&dst, 1)});
    spare = y;
    y = dst;
  }
}

void cuda_conv2d_bias(const KernelArgs& a) {
  const int64_t channels = a.in[1].dim(0);
  run_fused(a, "conv2d_bias", {{Prim::add, channel_operand(a.in[2], channels, device_of(a.out[0]))}});
}

void cuda_conv2d_bn(const KernelArgs& a) {
  const bool add = a.prim == Prim::conv2d_bn_add;
  const char* op = add ? "conv2d_bn_add" : "conv2d_bn";
  const double eps = a.attrs.get_float("epsilon", 1e-5);
  const int64_t channels = a.in[1].dim(0);
  Tensor gamma = a.in[2].to_host().contiguous(), beta = a.in[3].to_host().contiguous(),
         mean = a.in[4].to_host().contiguous(), var = a.in[5].to_host().contiguous();
  // Per output channel: the scale s and the shift beta - mean * s (the CPU's).
  Tensor scale(DType::Float32, Dims{channels}), shift(DType::Float32, Dims{channels});
  const float *gp = gamma.data<float>(), *bp = beta.data<float>(), *mp = mean.data<float>(), *vp = var.data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    double s = double(gp[c]) / std::sqrt(double(vp[c]) + eps);
    scale.data<float>()[c] = static_cast<float>(s);
    shift.data<float>()[c] = static_cast<float>(double(bp[c]) - double(mp[c]) * s);
  }
  CudaDevice& dev = device_of(a.out[0]);
  std::vector<Step> steps{{Prim::mul, channel_operand(scale, channels, dev)},
                          {Prim::add, channel_operand(shift, channels, dev)}};
  if (add) steps.push_back({Prim::add, a.in[6]});
  run_fused(a, op, std::move(steps));
}

}  // namespace

void register_fused_conv_kernels() {
  set_device_kernel(Prim::conv2d_bias, DeviceType::CUDA, &cuda_conv2d_bias);
  set_device_kernel(Prim::conv2d_bn, DeviceType::CUDA, &cuda_conv2d_bn);
  set_device_kernel(Prim::conv2d_bn_add, DeviceType::CUDA, &cuda_conv2d_bn);
}

}  // namespace msl::kernels::cuda
