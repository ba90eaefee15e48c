// batch_norm and batch_norm_grad on the GPU: the texts of batch_norm_cuda.h
// on contiguous [N, C, ...] tensors (the channel-blocked layout is the
// CPU's), with a [C, 5] float64 scratch array between the two kernels.
#include <fmt/format.h>

#include "kernels/blocked_layout.h"
#include "kernels/cuda/batch_norm_cuda.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

namespace {

CUfunction bn_function(CudaDevice& dev, BnKernel k, DType x, DType p, const char* what) {
  auto ok = [](DType t) { return t == DType::Float32 || t == DType::Float64; };
  if (!ok(x) || !ok(p))
    throw DTypeError(fmt::format("{}: the GPU normalizes float32 and float64 so far, got {} data and {} parameters",
                                 what, dtype_name(x), dtype_name(p)));
  std::string name = bn_kernel_name(k, x, p);
  return text_kernel(dev, name, name, what, [&] { return bn_kernel_source(k, x, p); });
}

BnParams params_of(const Tensor& x, const Attrs& attrs, bool training, const char* what) {
  if (layout_block(what, attrs))
    throw ValueError(fmt::format("{}: the channel-blocked layout is the CPU's; the GPU normalizes plain tensors", what));
  BnParams g;
  g.n = x.dim(0);
  g.c = x.dim(1);
  g.s = 1;
  for (int i = 2; i < x.ndim(); ++i) g.s *= x.dim(i);
  g.training = training ? 1 : 0;
  g.eps = attrs.get_float("epsilon", 1e-5);
  return g;
}

void cuda_batch_norm(const KernelArgs& a) {
  const char* what = "batch_norm";
  Tensor x = a.in[0].contiguous();
  Tensor gamma = a.in[1].contiguous(), beta = a.in[2].contiguous(), mean = a.in[3].contiguous(),
         var = a.in[4].contiguous();
  if (gamma.dtype() != mean.dtype() || beta.dtype() != mean.dtype() || var.dtype() != mean.dtype())
    throw DTypeError(fmt::format("{}: the GPU wants gamma, beta, mean and var of one dtype", what));
  BnParams g = params_of(x, a.attrs, a.attrs.get_bool("training"), what);
  CudaDevice& dev = device_of(a.out[0]);
  if (a.out[0].numel() == 0) {
    // Nothing to normalize: the statistics outputs are the inputs' (inference).
    Tensor m_in[] = {a.out[1], mean};
    Tensor v_in[] = {a.out[2], var};
    execute1(Prim::assign, m_in);
    execute1(Prim::assign, v_in);
    return;
  }
  Tensor coef(DType::Float64, Dims{g.c, kBnCoefficients}, &dev);
  CUfunction stats = bn_function(dev, BnKernel::Stats, x.dtype(), mean.dtype(), what);
  long long C = g.c;
  void *xp = x.raw(), *gp = gamma.raw(), *bp = beta.raw(), *mp = mean.raw(), *vp = var.raw();
  void *mo = a.out[1].raw(), *vo = a.out[2].raw(), *cp = coef.raw();
  void* sargs[] = {&C, &xp, &gp, &bp, &mp, &vp, &mo, &vo, &cp, &g};
  launch_over(dev, stats, C, sargs, what);
  CUfunction apply = bn_function(dev, BnKernel::Apply, x.dtype(), mean.dtype(), what);
  long long count = x.numel();
  void* yp = a.out[0].raw();
  void* aargs[] = {&count, &xp, &yp, &cp, &g};
  launch_over(dev, apply, count, aargs, what);
}

void cuda_batch_norm_grad(const KernelArgs& a) {
  const char* what = "batch_norm_grad";
  Tensor dy = a.in[0].contiguous(), x = a.in[1].contiguous();
  Tensor gamma = a.in[2].contiguous(), mean = a.in[3].contiguous(), var = a.in[4].contiguous();
  if (gamma.dtype() != mean.dtype() || var.dtype() != mean.dtype())
    throw DTypeError(fmt::format("{}: the GPU wants gamma, saved_mean and saved_var of one dtype", what));
  BnParams g = params_of(x, a.attrs, true, what);
  CudaDevice& dev = device_of(a.out[0]);
  Tensor coef(DType::Float64, Dims{std::max<int64_t>(g.c, 1), kBnCoefficients}, &dev);
  CUfunction sums = bn_function(dev, BnKernel::GradSums, x.dtype(), mean.dtype(), what);
  long long C = g.c;
  void *dyp = dy.raw(), *xp = x.raw(), *gp = gamma.raw(), *mp = mean.raw(), *vp = var.raw();
  void *dgp = a.out[1].raw(), *dbp = a.out[2].raw(), *cp = coef.raw();
  void* sargs[] = {&C, &dyp, &xp, &gp, &mp, &vp, &dgp, &dbp, &cp, &g};
  launch_over(dev, sums, C, sargs, what);
  CUfunction apply = bn_function(dev, BnKernel::GradApply, x.dtype(), mean.dtype(), what);
  long long count = x.numel();
  void* dxp = a.out[0].raw();
  void* aargs[] = {&count, &dyp, &xp, &dxp, &cp, &g};
  launch_over(dev, apply, count, aargs, what);
}

}  // namespace

void register_batch_norm_kernels() {
  set_device_kernel(Prim::batch_norm, DeviceType::CUDA, &cuda_batch_norm);
  set_device_kernel(Prim::batch_norm_grad, DeviceType::CUDA, &cuda_batch_norm_grad);
}

}  // namespace msl::kernels::cuda
