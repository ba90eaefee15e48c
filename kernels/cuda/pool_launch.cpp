// max_pool2d, avg_pool2d and their gradients on the GPU: the texts of
// pool_cuda.h, on contiguous NCHW tensors.
#include <fmt/format.h>

#include "kernels/blocked_layout.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/pool_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

namespace {

CUfunction pool_function(CudaDevice& dev, PoolKernel k, DType t, const char* what) {
  if (t != DType::Float32 && t != DType::Float64)
    throw DTypeError(fmt::format("{}: the GPU pools float32 and float64 so far, got {}", what, dtype_name(t)));
  std::string name = pool_kernel_name(k, t);
  return text_kernel(dev, name, name, what, [&] { return pool_kernel_source(k, t); });
}

void reject_blocked(const char* op, const Attrs& attrs) {
  if (layout_block(op, attrs))
    throw ValueError(fmt::format("{}: the channel-blocked layout is the CPU's; the GPU pools NCHW tensors", op));
}

void cuda_max_pool2d(const KernelArgs& a) {
  const char* what = "max_pool2d";
  reject_blocked(what, a.attrs);
  Tensor x = a.in[0].contiguous();
  PoolParams g = pool_params(pool_geometry(what, x.shape(), a.attrs, false));
  CudaDevice& dev = device_of(a.out[0]);
  CUfunction f = pool_function(dev, PoolKernel::MaxForward, x.dtype(), what);
  long long count = a.out[0].numel();
  void* xp = x.raw();
  void* yp = a.out[0].raw();
  void* args[] = {&count, &xp, &yp, &g};
  launch_over(dev, f, count, args, what);
}

void cuda_max_pool2d_grad(const KernelArgs& a) {
  const char* what = "max_pool2d_grad";
  reject_blocked(what, a.attrs);
  Tensor x = a.in[0].contiguous(), dy = a.in[1].contiguous();
  PoolParams g = pool_params(pool_geometry(what, x.shape(), a.attrs, false));
  CudaDevice& dev = device_of(a.out[0]);
  CUfunction f = pool_function(dev, PoolKernel::MaxBackward, x.dtype(), what);
  long long count = a.out[0].numel();
  void* xp = x.raw();
  void* dyp = dy.raw();
  void* dxp = a.out[0].raw();
  void* args[] = {&count, &xp, &dyp, &dxp, &g};
  launch_over(dev, f, count, args, what);
}

void cuda_avg_pool2d(const KernelArgs& a) {
  const char* what = "avg_pool2d";
  Tensor x = a.in[0].contiguous();
  PoolParams g = pool_params(pool_geometry(what, x.shape(), a.attrs, true));
  CudaDevice& dev = device_of(a.out[0]);
  CUfunction f = pool_function(dev, PoolKernel::AvgForward, x.dtype(), what);
  long long count = a.out[0].numel();
  void* xp = x.raw();
  void* yp = a.out[0].raw();
  void* args[] = {&count, &xp, &yp, &g};
  launch_over(dev, f, count, args, what);
}

void cuda_avg_pool2d_grad(const KernelArgs& a) {
  const char* what = "avg_pool2d_grad";
  Tensor dy = a.in[0].contiguous();
  PoolParams g = pool_params(pool_geometry(what, pool_input_shape_attr(what, a.attrs), a.attrs, true));
  CudaDevice& dev = device_of(a.out[0]);
  CUfunction f = pool_function(dev, PoolKernel::AvgBackward, dy.dtype(), what);
  long long count = a.out[0].numel();
  void* dyp = dy.raw();
  void* dxp = a.out[0].raw();
  void* args[] = {&count, &dyp, &dxp, &g};
  launch_over(dev, f, count, args, what);
}

}  // namespace

void register_pool_kernels() {
  set_device_kernel(Prim::max_pool2d, DeviceType::CUDA, &cuda_max_pool2d);
  set_device_kernel(Prim::max_pool2d_grad, DeviceType::CUDA, &cuda_max_pool2d_grad);
  set_device_kernel(Prim::avg_pool2d, DeviceType::CUDA, &cuda_avg_pool2d);
  set_device_kernel(Prim::avg_pool2d_grad, DeviceType::CUDA, &cuda_avg_pool2d_grad);
}

}  // namespace msl::kernels::cuda
